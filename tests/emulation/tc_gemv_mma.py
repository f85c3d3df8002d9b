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


def chunk_mma(acc, wb, xa, RB, NT):
    """acc[lane][j][t][i] += the m16n8k16 products of one 32-element chunk: wb[lane][j][h] (8 elements of B rows
    16j + g (+ 8)), xa[lane][t] (8 elements of A row g + 8t); the kernel's khive_chunk_mma."""
    for j in range(RB):
        for t in range(NT):
            for step in range(2):  # registers (x, y) then (z, w): elements 0-3, then 4-7
                A = [[None] * 16 for _ in range(16)]
                B = [[None] * 8 for _ in range(16)]
                for lane in range(32):
                    g, c = lane >> 2, lane & 3
                    lo, hi, x = wb[lane][j][0], wb[lane][j][1], xa[lane][t]
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


def kernel_pass(X, W, R, M, N, K, RB, WARPS, UNROLL, split_req, loads, bulk=None):
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
            if bulk:
                accs = bulk_cta(X, W, M, N, K, n0, kb, ke, RB, WARPS, NT, bulk, loads)
            for warp in range(WARPS if not bulk else 0):
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
                        chunk_mma(acc, [wb[lane][u] for lane in range(32)], [xa[lane][u] for lane in range(32)], RB, NT)
                    q0 += WARPS * UNROLL
                red_write(red, warp, acc, RB, NT)
            for warp in range(WARPS if bulk else 0):
                red_write(red, warp, accs[warp], RB, NT)
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


def red_write(red, warp, acc, RB, NT):
    """Accumulator i of tile (j, t): B row 16j + g + 8 (i / 2), A row 8t + 2c + i % 2 (khive_gemv_finish)."""
    for lane in range(32):
        g, c = lane >> 2, lane & 3
        for j in range(RB):
            for t in range(NT):
                for i in range(4):
                    red[warp][16 * j + g + 8 * (i >> 1)][8 * t + 2 * c + (i & 1)] = acc[lane][j][t][i]


class MBarrier:
    """PTX mbarrier: a phase completes when its arrivals reach the count and its transaction bytes reach zero;
    try_wait.parity(p) succeeds once the phase of parity p has completed, i.e. while the current phase's parity is
    not p (a fresh barrier counts the phase 'before' phase 0, of parity 1, as completed)."""

    def __init__(self, count):
        self.count, self.arrived, self.tx, self.phase = count, 0, 0, 0

    def _check(self):
        if self.arrived == self.count and self.tx == 0:
            self.arrived, self.phase = 0, self.phase + 1

    def arrive(self, expect_tx=0):
        assert self.arrived < self.count, "more arrivals than the barrier's count in one phase"
        self.arrived += 1
        self.tx += expect_tx
        self._check()

    def complete_tx(self, n):
        self.tx -= n
        assert self.tx >= 0, "more bytes completed than expected"
        self._check()

    def ready(self, parity):
        return (self.phase & 1) != parity


def bulk_cta(X, W, M, N, K, n0, kb, ke, RB, WARPS, NT, cfg, loads):
    """One CTA of khive_gemv_bulk under a random interleaving of its producer, its WARPS consumer warps and the
    copies' completions (the scheduler rng in cfg): the mbarrier protocol as written in the kernel, the ring's slots
    tagged with the stage they hold, so a read of a stage before its copy landed or after the next round's copy
    overwrote it fails. Returns the consumers' accumulators [warp][lane][j][t][i]."""
    STAGES, KSTAGE, rng = cfg["STAGES"], cfg["KSTAGE"], cfg["rng"]
    rows, CH = 16 * RB, 32
    nst = -(-(ke - kb) // KSTAGE)
    rows_here = min(rows, N - n0)
    full = [MBarrier(rows_here) for _ in range(STAGES)]
    empty = [MBarrier(WARPS) for _ in range(STAGES)]
    ring = [[None] * rows for _ in range(STAGES)]   # ring[s][r] = (stage i, the row's KSTAGE-element slice)
    pending = []                                     # copies in flight: (s, r, i, data)
    accs = [[[[[0] * 4 for _ in range(NT)] for _ in range(RB)] for _ in range(32)] for _ in range(WARPS)]

    def producer():
        for i in range(nst):
            s, rnd = i % STAGES, i // STAGES
            if rnd > 0:
                while not empty[s].ready((rnd - 1) & 1):
                    yield "blocked"
            k = kb + i * KSTAGE
            nbytes = min(ke - k, KSTAGE) * 2
            assert nbytes % 16 == 0 and (k * 2) % 16 == 0, "a bulk copy that is not whole 16-byte units"
            for r in range(rows_here):
                full[s].arrive(expect_tx=nbytes)
                data = W[n0 + r][k:k + nbytes // 2]
                for e in range(nbytes // 2):
                    loads[(n0 + r, k + e)] = loads.get((n0 + r, k + e), 0) + 1
                pending.append((s, r, i, data, nbytes))
                yield

    def consumer(warp):
        for i in range(nst):
            s = i % STAGES
            while not full[s].ready((i // STAGES) & 1):
                yield "blocked"
            k = kb + i * KSTAGE
            ln = min(KSTAGE, ke - k)
            q = warp
            while q * CH < ln:
                wb = [[[None, None] for _ in range(RB)] for _ in range(32)]
                xa = [[None] * NT for _ in range(32)]
                for lane in range(32):
                    g, c = lane >> 2, lane & 3
                    kk = q * CH + c * 8
                    kok = kk < ln
                    for j in range(RB):
                        for h in range(2):
                            r = 16 * j + g + 8 * h
                            if not kok:
                                wb[lane][j][h] = [0] * 8
                            elif r < rows_here:
                                assert ring[s][r] is not None, f"stage {i} read slot {s} before any copy landed"
                                tag, data = ring[s][r]
                                assert tag == i, f"stage {i} read slot {s} holding stage {tag}"
                                wb[lane][j][h] = data[kk:kk + 8]
                            else:
                                wb[lane][j][h] = [7] * 8   # never copied: stale bytes, only in rows never stored
                    for t in range(NT):
                        m = g + 8 * t
                        xa[lane][t] = [X[m][k + q * CH + c * 8 + e] for e in range(8)] if kok and m < M else [0] * 8
                chunk_mma(accs[warp], wb, xa, RB, NT)
                q += WARPS
                yield
            empty[s].arrive()
            yield

    actors = [producer()] + [consumer(w) for w in range(WARPS)]
    blocked = set()   # actors that found their barrier closed since the last step that changed anything
    while actors or pending:
        options = len(actors) + (1 if pending else 0)
        pick = rng.randrange(options)
        if pick == len(actors):   # a copy lands (any of those in flight)
            s, r, i, data, nbytes = pending.pop(rng.randrange(len(pending)))
            ring[s][r] = (i, data)
            full[s].complete_tx(nbytes)
            blocked.clear()
            continue
        try:
            if next(actors[pick]) == "blocked":
                blocked.add(id(actors[pick]))
                assert pending or len(blocked) < len(actors), "deadlock: every warp waits on a barrier that cannot open"
            else:
                blocked.clear()
        except StopIteration:
            actors.pop(pick)
            blocked.clear()
    return accs


def run(M, N, K, RB, WARPS, UNROLL, split, residual, rng, bulk=None):
    X = [[rng.randint(-3, 3) for _ in range(K)] for _ in range(M)]
    W = [[rng.randint(-3, 3) for _ in range(K)] for _ in range(N)]
    R = [[rng.randint(-5, 5) for _ in range(N)] for _ in range(M)] if residual else None
    C = [[None] * N for _ in range(M)]
    loads = {}
    for m0 in range(0, M, 16):  # khive_run's passes
        pm = min(16, M - m0)
        Cp = kernel_pass(X[m0:m0 + pm], W, R[m0:m0 + pm] if R else None, pm, N, K, RB, WARPS, UNROLL, split, loads, bulk)
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
    # B_LOAD=bulk: the ring and its barriers under random interleavings (small KSTAGE so that a row spans several
    # stages and the ring wraps: the kernel's 128-512 take the same arithmetic), partial last stages, splits.
    nb = 0
    for (RB, WARPS, STAGES, KSTAGE), (M, N, K) in zip(itertools.product([1, 2], [2, 4], [2, 3], [32, 64]),
                                                       itertools.cycle(shapes + [(4, 40, 296), (16, 20, 520)])):
        for split in (1, 3):
            run(M, N, K, RB, WARPS, 1, split, residual=(nb % 2 == 0), rng=rng,
                bulk={"STAGES": STAGES, "KSTAGE": KSTAGE, "rng": random.Random(nb)})
        nb += 1
    print(f"tc_gemv_mma: {n} valid parameter points x 3 split counts and {len(shapes)} shapes: exact, every B element "
          f"loaded once per pass; B_LOAD=bulk: {nb} points x 2 split counts under random schedules: exact, every "
          "stage read only while it holds that stage")
    return 0


if __name__ == "__main__":
    sys.exit(main())
