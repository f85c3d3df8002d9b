"""gemm.cuda_smallk_3xtf32's EPILOGUE lines, lane by lane: each warp's m16 row block goes through a 16-row staging
(rows of W_N + 8 floats): lane (g, q) = (lane / 4, lane % 4) writes its m16n8 accumulator pairs (c0, c1) at row g and
(c2, c3) at row g + 8, columns ni * 8 + 2q; then 128 / W_N rows per store are read back as float4 (lane / (W_N / 4)
the row, 4 * (lane % (W_N / 4)) the column) and stored to C. Checks that every element of the block is stored once,
at its own place, and that a half-warp's 8-byte staging writes hit 32 distinct banks. Run: python3 tests/emulation/smallk_lines.py
"""
import sys


def check(wn):
    lr, lpr = wn + 8, wn // 4
    rps, ni_count = 32 // lpr, wn // 8
    stage = {}
    for lane in range(32):
        g, q = lane // 4, lane % 4
        for ni in range(ni_count):
            for u in range(2):
                stage[g * lr + ni * 8 + 2 * q + u] = (g, ni * 8 + 2 * q + u)
                stage[(g + 8) * lr + ni * 8 + 2 * q + u] = (g + 8, ni * 8 + 2 * q + u)
    stored = {}
    for r0 in range(0, 16, rps):
        for lane in range(32):
            r, col = r0 + lane // lpr, 4 * (lane % lpr)
            for u in range(4):
                where = (r, col + u)
                if where in stored:
                    return f"W_N {wn}: C{where} stored twice"
                stored[where] = stage.get(r * lr + col + u)
    if len(stored) != 16 * wn or any(k != v for k, v in stored.items()):
        return f"W_N {wn}: some element stored at another element's place or not at all"
    for half in (0, 1):
        banks = set()
        for lane in range(16 * half, 16 * half + 16):
            a = (lane // 4) * lr + 2 * (lane % 4)
            banks |= {a % 32, (a + 1) % 32}
        if len(banks) != 32:
            return f"W_N {wn}: half-warp {half}'s staging writes share banks"
    return None


errors = [e for e in (check(32), check(64)) if e]
print("\n".join(errors) or "W_N 32 and 64: every element stored once at its place; conflict-free staging writes")
sys.exit(1 if errors else 0)
