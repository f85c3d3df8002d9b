#!/usr/bin/env python3
"""gemm.cuda_sm80_simt, SPLIT_MODE parallel: a model of the partition layout and the reduction kernel.

Models, as kernels/gemm/cuda_sm80_simt.cu.in and CUTLASS 2.x (kernel/params_universal_base.h, gemm_universal.h)
read them:
  - CUTLASS's kGemmSplitKParallel partitions: gemm_k_size = round_up(ceil(K / splits), kAlignK), kAlignK 4 (fp32),
    32 when K % 32 == 0 and K is contiguous in A (row-major) or B (column-major); parts = ceil(K / gemm_k_size);
    partition z covers [z * gemm_k_size, min(K, (z + 1) * gemm_k_size)) and writes its [M, N] partial (row stride N)
    at workspace + z * M * N;
  - khive_splitk_reduce<VEC>: a grid-stride loop over M * N / VEC vectors, element e = v * VEC at (e / N, e % N),
    acc = R (or 0), acc += p_z for z = 0..parts-1, C[i * ldc + j] = act(acc), float4 when N % 4 == 0 and ldc % 4 == 0;
  - CUTLASS's serial split-K epilogue order: D_0 = p_0 + R, D_z = p_z + D_{z-1}, act after the last;
  - the auto partition count (khive_splits_parallel).
Checks: every output element written exactly once, nothing outside C touched (ldc > N leaves the gaps alone), the
workspace reads stay inside parts * M * N and are 16-byte aligned in the float4 path, the result equals the serial
split-K order bitwise (fp32 rounding after every add) and a double-precision reference within fp32 tolerance.
Run: python3 tests/emulation/sm80_splitk_parallel.py
"""
import math
import random
import struct
import sys


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def cutlass_partitions(K, splits, a_row, b_row):
    align = 4
    if (a_row and K % 32 == 0) or ((not b_row) and K % 32 == 0):
        align = 32
    gk = -(-(-(-K // splits)) // align) * align
    parts = -(-K // gk) if gk else 1
    return gk, parts


def auto_splits(M, N, K, tb_m, tb_n, sms, occupancy, cap=256 << 20):
    """khive_splits_parallel with SPLIT_K = 0 (batch 1)."""
    tiles = (-(-M // tb_m)) * (-(-N // tb_n))
    target = sms * (occupancy if occupancy > 0 else 2)
    if tiles >= target:
        return 1
    s = target // tiles
    s = min(s, K // 1024)
    s = min(s, cap // (M * N * 4), 65535)
    return s if s > 1 else 1


def act(v, kind):
    if kind == "relu":
        return v if v > 0 else 0.0
    return v


def run_case(M, N, K, ldc, splits, a_row, b_row, residual, kind, blocks, threads, rng):
    A = [[f32(rng.gauss(0.5, 1.0)) for _ in range(K)] for _ in range(M)]
    B = [[f32(rng.gauss(0.0, 1.0)) for _ in range(N)] for _ in range(K)]
    R = [f32(rng.gauss(0.0, 1.0)) for _ in range(M * N)] if residual else None
    gk, parts = cutlass_partitions(K, splits, a_row, b_row)
    assert parts <= splits, (K, splits, gk, parts)
    # Partials as the mainloop leaves them (each an fp32 sum over its K range; the order inside a partition does
    # not matter here, both modes share it).
    mn = M * N
    ws = [None] * (parts * mn)
    for z in range(parts):
        k0, k1 = z * gk, min(K, (z + 1) * gk)
        assert k0 < k1, "a partition without work"
        for i in range(M):
            for j in range(N):
                acc = 0.0
                for k in range(k0, k1):
                    acc = f32(acc + f32(A[i][k] * B[k][j]))
                ws[z * mn + i * N + j] = acc
    # Serial split-K's result: partition z adds its accumulators to the running D, R first.
    serial = [0.0] * mn
    for e in range(mn):
        d = R[e] if residual else 0.0
        for z in range(parts):
            d = f32(ws[z * mn + e] + d)
        serial[e] = act(d, kind)
    # The reduction kernel, thread by thread.
    vec = 4 if N % 4 == 0 and ldc % 4 == 0 else 1
    C = [None] * (M * ldc)
    writes = [0] * (M * ldc)
    nvec = mn // vec
    stride = blocks * threads
    for b in range(blocks):
        for t in range(threads):
            v = b * threads + t
            while v < nvec:
                e = v * vec
                i, j = e // N, e % N
                assert j + vec <= N, "a vector crosses a row"
                acc = [R[i * N + j + u] if residual else 0.0 for u in range(vec)]
                for z in range(parts):
                    off = z * mn + e
                    assert 0 <= off and off + vec <= parts * mn
                    if vec == 4:
                        assert (off * 4) % 16 == 0, "unaligned float4 read of the workspace"
                    for u in range(vec):
                        acc[u] = f32(acc[u] + ws[off + u])
                for u in range(vec):
                    idx = i * ldc + j + u
                    C[idx] = act(acc[u], kind)
                    writes[idx] += 1
                v += stride
    for i in range(M):
        for j in range(ldc):
            idx = i * ldc + j
            if j < N:
                assert writes[idx] == 1, f"C[{i},{j}] written {writes[idx]} times"
                assert C[idx] == serial[i * N + j], f"C[{i},{j}] {C[idx]} != serial {serial[i * N + j]}"
                ref = sum(A[i][k] * B[k][j] for k in range(K)) + (R[i * N + j] if residual else 0.0)
                ref = act(ref, kind)
                assert abs(C[idx] - ref) <= 1e-5 * K + 1e-5 * abs(ref), (i, j, C[idx], ref)
            else:
                assert writes[idx] == 0, f"C[{i},{j}] beyond N written"
    return vec, parts


def main():
    rng = random.Random(7)
    cases = [
        # M, N, K, ldc, splits, a_row, b_row, residual, act, blocks, threads
        (5, 8, 257, 8, 4, True, True, False, "none", 1, 8),       # float4, K not a multiple of 32: depth rounded to 4
        (6, 12, 256, 12, 3, True, True, True, "relu", 2, 4),      # float4, K % 32 == 0: depth rounded to 32
        (7, 9, 130, 9, 5, True, True, True, "none", 3, 5),        # scalar (N odd), grid-stride with several rounds
        (4, 8, 100, 10, 7, False, True, False, "relu", 1, 3),     # ldc 10: scalar, gaps between rows untouched
        (3, 16, 64, 16, 64, True, False, True, "none", 2, 2),     # more splits asked than 4-deep partitions allow
    ]
    for c in cases:
        vec, parts = run_case(*c, rng)
        print(f"ok: M={c[0]} N={c[1]} K={c[2]} ldc={c[3]} splits={c[4]} -> {parts} partitions, VEC {vec}")
    # The partition math at kb06's shape and the auto count on an H200 (132 SMs).
    gk, parts = cutlass_partitions(524288, 66, True, True)
    assert (gk, parts) == (7968, 66), (gk, parts)
    assert auto_splits(256, 256, 524288, 128, 128, 132, 2) == 66
    assert auto_splits(256, 256, 524288, 128, 128, 132, 0) == 66   # occupancy query failed: 2 per SM assumed
    assert auto_splits(256, 256, 524288, 64, 128, 132, 4) == 66
    assert auto_splits(256, 256, 4096, 128, 128, 132, 2) == 4       # partitions at least 1024 deep
    assert auto_splits(4096, 4096, 1 << 20, 128, 128, 132, 2) == 1  # 1024 tiles: a full wave already
    assert auto_splits(2048, 64, 1 << 20, 128, 128, 132, 2) == 16   # 16 tiles: 256 CTAs, not a 2nd wave of 8
    assert auto_splits(8192, 8192, 1 << 20, 8192, 8192, 132, 2) == 1  # partials over 256 MB: no split
    print("ok: kb06 partitions (66 x 7968) and the auto count")
    return 0


if __name__ == "__main__":
    sys.exit(main())
