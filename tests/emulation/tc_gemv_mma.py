#!/usr/bin/env python3
"""gemm.cuda_tc_gemv: a lane-level model of the kernel's loads, its mma.sync m16n8k16 fragments and its combines.

Models kernels/gemm/cuda_tc_gemv.cu.in as written: grid (row blocks of 16 x ROW_BLOCKS rows of B, K partitions),
WARPS warps taking interleaved 32-element chunks, UNROLL chunks per step; lane (g = lane / 4, c = lane % 4) loads 8
elements at k + 8c of B rows n0 + 16j + g (+ 8) and A rows g (+ 8); the two k16 steps take registers (x, y) and
(z, w) of each 16-byte vector. The MMA is the PTX ISA's m16n8k16 definition (.row.col, fp32 accumulators), its
fragments placed by the ISA's tables, not by the kernel's reading of them:
  A (16 x 16): a0,a1 (g, 2c..2c+1)  a2,a3 (g+8, 2c..)  a4,a5 (g, 2c+8..)  a6,a7 (g+8, 2c+8..)
  B (16 x 8):  b0,b1 (2c..2c+1, g)  b2,b3 (2c+8.., g)
  D (16 x 8):  d0,d1 (g, 2c..2c+1)  d2,d3 (g+8, 2c..)
Then the warps' sums through shared memory in warp order, the split partials [z][M][N] and the last CTA's sum in split
order, the epilogue's residual. Integer inputs keep every sum exact, so the model must equal X @ W^T (+ R) exactly;
it also checks that every element of B inside the matrix is loaded exactly once and nothing outside it, over
shapes with partial row blocks, partial chunks, M = 1..16 (one and two n8 tiles), several passes for M > 16, and
every parameter combination the rules allow. Run: python3 tests/emulation/tc_gemv_mma.py
"""
import itertools
import random
import sys


def kernel_pass(X, W, R, M, N, K, RB, WARPS, UNROLL, split_req, loads):
    """One pass (M <= 16) of khive_gemv<NT>; returns C [M][N]."""
    NT = 1 if M <= 8 else 2
    rows, CH = 16 * RB, 32
    blocks = -(-N // rows)
    chunks_all = -(-K // CH)
    splits = min(split_req, chunks_all) if split_req > 1 else 1
    kps = K
    if splits > 1:
        kps = -(-chunks_all // splits) * CH
        splits = -(-K // kps)
        if splits == 1:
            kps = K
    part = [[[None] * N for _ in range(M)] for _ in range(splits)]
    C = [[None] * N for _ in range(M)]
    for bx in range(blocks):
        for by in range(splits):
            n0, kb = bx * rows, by * kps
            ke = min(K, kb + kps)
            chunks = -(-(ke - kb) // CH)
            red = [[[0] * (8 * NT) for _ in range(rows)] for _ in range(WARPS)]
            for warp in range(WARPS):
                acc = [[[[0] * 4 for _ in range(NT)] for _ in range(RB)] for _ in range(32)]
                q0 = warp * UNROLL
                while q0 < chunks:
                    wb = [[[[None, None] for _ in range(RB)] for _ in range(UNROLL)] for _ in range(32)]
                    xa = [[[None] * NT for _ in range(UNROLL)] for _ in range(32)]
                    for lane in range(32):
                        g, c = lane >> 2, lane & 3
                        for u in range(UNROLL):
                            k = kb + (q0 + u) * CH
                            kok = q0 + u < chunks and k + c * 8 < ke
                            for j in range(RB):
                                for h in range(2):
                                    n = n0 + 16 * j + g + 8 * h
                                    if kok and n < N:
                                        assert k + c * 8 + 8 <= K, "a vector crosses K"
                                        for e in range(8):
                                            loads[(n, k + c * 8 + e)] = loads.get((n, k + c * 8 + e), 0) + 1
                                        wb[lane][u][j][h] = [W[n][k + c * 8 + e] for e in range(8)]
                                    else:
                                        wb[lane][u][j][h] = [0] * 8
                            for t in range(NT):
                                m = g + 8 * t
                                xa[lane][u][t] = [X[m][k + c * 8 + e] for e in range(8)] if kok and m < M else [0] * 8
                    for u in range(UNROLL):
                        for j in range(RB):
                            for t in range(NT):
                                for step in range(2):  # registers (x, y) then (z, w): elements 0-3, then 4-7
                                    A = [[None] * 16 for _ in range(16)]
                                    B = [[None] * 8 for _ in range(16)]
                                    for lane in range(32):
                                        g, c = lane >> 2, lane & 3
                                        lo, hi, x = wb[lane][u][j][0], wb[lane][u][j][1], xa[lane][u][t]
                                        r0, r1 = 4 * step, 4 * step + 2  # the two registers' first elements
                                        a = [lo[r0], lo[r0 + 1], hi[r0], hi[r0 + 1], lo[r1], lo[r1 + 1], hi[r1], hi[r1 + 1]]
                                        b = [x[r0], x[r0 + 1], x[r1], x[r1 + 1]]
                                        A[g][2 * c], A[g][2 * c + 1] = a[0], a[1]
                                        A[g + 8][2 * c], A[g + 8][2 * c + 1] = a[2], a[3]
                                        A[g][2 * c + 8], A[g][2 * c + 9] = a[4], a[5]
                                        A[g + 8][2 * c + 8], A[g + 8][2 * c + 9] = a[6], a[7]
                                        B[2 * c][g], B[2 * c + 1][g] = b[0], b[1]
                                        B[2 * c + 8][g], B[2 * c + 9][g] = b[2], b[3]
                                    D = [[sum(A[r][kk] * B[kk][col] for kk in range(16)) for col in range(8)] for r in range(16)]
                                    for lane in range(32):
                                        g, c = lane >> 2, lane & 3
                                        for i in range(4):
                                            acc[lane][j][t][i] += D[g + 8 * (i >> 1)][2 * c + (i & 1)]
                    q0 += WARPS * UNROLL
                for lane in range(32):
                    g, c = lane >> 2, lane & 3
                    for j in range(RB):
                        for t in range(NT):
                            for i in range(4):
                                red[warp][16 * j + g + 8 * (i >> 1)][8 * t + 2 * c + (i & 1)] = acc[lane][j][t][i]
            for e in range(M * rows):
                m, r = e // rows, e % rows
                n = n0 + r
                if n >= N:
                    continue
                v = sum(red[w][r][m] for w in range(WARPS))
                if splits == 1:
                    assert C[m][n] is None, "written twice"
                    C[m][n] = v + (R[m][n] if R else 0)
                else:
                    assert part[by][m][n] is None
                    part[by][m][n] = v
        if splits > 1:  # the last CTA of row block bx
            for m in range(M):
                for n in range(bx * rows, min(N, bx * rows + rows)):
                    v = 0
                    for z in range(splits):
                        assert part[z][m][n] is not None, "a partial was never written"
                        v += part[z][m][n]
                    assert C[m][n] is None
                    C[m][n] = v + (R[m][n] if R else 0)
    return C


def run(M, N, K, RB, WARPS, UNROLL, split, residual, rng):
    X = [[rng.randint(-3, 3) for _ in range(K)] for _ in range(M)]
    W = [[rng.randint(-3, 3) for _ in range(K)] for _ in range(N)]
    R = [[rng.randint(-5, 5) for _ in range(N)] for _ in range(M)] if residual else None
    C = [[None] * N for _ in range(M)]
    loads = {}
    for m0 in range(0, M, 16):  # khive_run's passes
        pm = min(16, M - m0)
        Cp = kernel_pass(X[m0:m0 + pm], W, R[m0:m0 + pm] if R else None, pm, N, K, RB, WARPS, UNROLL, split, loads)
        for i in range(pm):
            C[m0 + i] = Cp[i]
    passes = -(-M // 16)
    for n in range(N):
        for k in range(K):
            assert loads.get((n, k), 0) == passes, f"B[{n}][{k}] loaded {loads.get((n, k), 0)} times"
    assert all(0 <= n < N and 0 <= k < K for n, k in loads), "a load outside B"
    for m in range(M):
        for n in range(N):
            ref = sum(X[m][k] * W[n][k] for k in range(K)) + (R[m][n] if R else 0)
            assert C[m][n] == ref, f"C[{m}][{n}] = {C[m][n]}, want {ref}"


def valid(RB, WARPS, UNROLL):  # kernels/gemm/cuda_tc_gemv.json's rules
    regs = 8 * RB * UNROLL + 8 * UNROLL + 8 * RB + 48
    return regs <= 232 and 32 * WARPS * regs <= 65536 and WARPS * 16 * RB * 17 * 4 <= 49152


def main():
    rng = random.Random(23)
    shapes = [(1, 40, 64), (16, 33, 96), (9, 50, 40), (8, 17, 256), (3, 70, 200), (17, 20, 64), (5, 1, 8)]
    n = 0
    for RB, WARPS, UNROLL in itertools.product([1, 2, 4], [2, 4, 8, 16], [1, 2, 4]):
        if not valid(RB, WARPS, UNROLL):
            continue
        M, N, K = shapes[n % len(shapes)]
        for split in (1, 3, 8):
            run(M, N, K, RB, WARPS, UNROLL, split, residual=(n % 2 == 0), rng=rng)
        n += 1
    for (M, N, K) in shapes:
        run(M, N, K, 2, 4, 2, 2, residual=True, rng=rng)
    print(f"tc_gemv_mma: {n} valid parameter points x 3 split counts and {len(shapes)} shapes: exact, every B element "
          "loaded once per pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
