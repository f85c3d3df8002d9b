#!/usr/bin/env python3
"""Issue 23's tensor-core GEMM templates on the GPU, element by element against a CPU fp64 reference over sizes:
gemm.cuda_tc_gemv (sol/gemm_bf16 and sol/gemm_residual: decode shapes M <= 16 on the fast path, with split-K auto,
fixed and off; odd M, N, K on the generic path; M > 16 in passes) and gemm.cuda_sm80_3xtf32 (cutegen26 kb02, kb17,
kb03 layouts, ALIGN 4 and 1, serial split-K). Each point is rendered by `khive-tune point`, compiled with nvcc and a
host harness that fills the task's distributions, runs the kernel three times (the second and third outputs must be
bitwise equal: the split combine is deterministic), checks every output (or a sample of a large one) under the task's
tolerance (|got - ref| <= atol + rtol |ref|; the fp32 tasks' atol = 1e-6 K + 1e-5, rtol = 1e-5), and times 20 calls.
fp32 cases also run cuBLAS SGEMM (pedantic math: no TF32) on the same inputs and print both errors against fp64 and
both times: 3xTF32's error must be no worse than a few times SGEMM's, and within the tolerance everywhere.

  gemm_cuda.py KHIVE_TUNE ROOT [--build-only] [--only gemv|tf32x3|smallk|sm90x3|rs3x[,...]] [--pick REGEX]
Exit 0, 1 with the failed cases, 77 (skipped) without nvcc or (unless --build-only) without a GPU.
"""
import concurrent.futures
import os
import pathlib
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from gpu_harness import NORMAL, check_macro, finish, start  # noqa: E402

tune, root, build_only, nvcc = start()

only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else ""
# --pick: only the cases whose name (task, template, point as the build directory names them) matches the regex.
pick = re.compile(sys.argv[sys.argv.index("--pick") + 1]) if "--pick" in sys.argv else None
cutlass = pathlib.Path(os.environ.get("KHIVE_CUTLASS", root / ".deps/cutlass"))

# task: (element, B column-major, residual, batched, call, atol, rtol (None: the fp32 formula), B's std)
TASKS = {
    "sol/gemm_bf16": ("bf16", True, False, False, "khive_launch(dA, dB, dC, M, N, K, 0)", 0.02, 0.01, 0.02),
    "sol/gemm_residual": ("bf16", True, True, False, "khive_launch(dA, dB, dR, dC, M, N, K, 0)", 0.0625, 0.01, 0.02),
    "cutegen26/kb02_matmul_standard": ("f32", False, False, False, "khive_launch(dA, dB, dC, M, K, N, 0)", None, None, 1.0),
    "cutegen26/kb17_matmul_transposed_b": ("f32", True, False, False, "khive_launch(dA, dB, dC, M, K, N, 0)", None, None, 1.0),
    "cutegen26/kb03_matmul_batched": ("f32", False, False, True, "khive_launch(dA, dB, dC, BATCH, M, K, N, 0)", None, None, 1.0),
    "cutegen26/kb07_matmul_small_k": ("f32", False, False, False, "khive_launch(dA, dB, dC, M, K, N, 0)", None, None, 1.0),
    "cutegen26/kb09_matmul_tall_skinny": ("f32", False, False, False, "khive_launch(dA, dB, dC, M, K, 0)", None, None, 1.0),
}
GEMV_SIZES = [(1, 6144, 4096), (16, 4096, 14336), (16, 28672, 4096), (8, 2048, 8192), (9, 1000, 1024), (5, 4104, 64),
              (16, 100, 40), (1, 1, 8), (3, 17, 33), (7, 130, 257), (17, 512, 1024), (33, 300, 512)]
RES_SIZES = [(1, 4096, 4096), (4, 1024, 4096), (8, 4096, 14336), (1, 8192, 28672), (13, 77, 1024), (3, 17, 33)]
F32_SIZES = [(2048, 4096, 8192), (257, 511, 2049), (33, 17, 65), (128, 128, 4096), (256, 256, 131072), (1, 7, 3)]
BATCH_SIZES = [(512, 2048, 1024, 8), (130, 257, 513, 7), (1, 70, 100, 5)]
# kb08's perf shape (N = 5921: C's rows not 16-byte multiples) and odd sizes around it.
IRREGULAR_SIZES = [(8205, 5921, 2949), (67, 59, 29), (1000, 1001, 1003)]
# The register-A kernel's TMA reads A directly when its pitch K is a multiple of 4: kb02's shapes with such a K, edges
# in M and N inside it (partial tiles, N not a multiple of 4, one row), then F32_SIZES' odd pitch (A's padded copy).
RS_SIZES = [(2048, 4096, 8192), (200, 300, 1000), (1, 50, 64), (130, 257, 512), (128, 128, 4096), (256, 256, 131072),
            (257, 511, 2049)]
# gemm.cuda_smallk_3xtf32 (M, N, K): kb07's perf shape (a 4 GiB C, sampled), K with a k8 tail (60, 20: the zeroed
# columns), edges in M and N, K = 7 (pitch not a multiple of 4: the generic path), K > KMAX (generic), one row.
SMALLK_SIZES = [(32768, 32768, 64), (2049, 1025, 64), (1000, 1000, 60), (129, 67, 64), (512, 516, 20), (1, 1000, 64),
                (300, 17, 7), (64, 64, 128)]
# kb09 (N = M): its perf shape, K 32 and odd M, K = 5 (generic), K = 12 (a k8 tail of 4).
TALL_SIZES = [(32768, 32768, 32), (2053, 2053, 32), (100, 100, 32), (257, 257, 5), (1000, 1000, 12)]
# (task, template, point, sizes)
CASES = [
    ("sol/gemm_bf16", "gemm.cuda_tc_gemv", {}, GEMV_SIZES),
    ("sol/gemm_bf16", "gemm.cuda_tc_gemv", {"SPLIT": "1"}, GEMV_SIZES[:6]),
    ("sol/gemm_bf16", "gemm.cuda_tc_gemv", {"SPLIT": "8", "B_LOAD": "ldg"}, GEMV_SIZES[:7]),
    ("sol/gemm_bf16", "gemm.cuda_tc_gemv", {"ROW_BLOCKS": "4", "WARPS": "8", "UNROLL": "2"}, GEMV_SIZES[:7]),
    ("sol/gemm_bf16", "gemm.cuda_tc_gemv", {"ROW_BLOCKS": "1", "WARPS": "2", "UNROLL": "4", "SPLIT": "32"}, GEMV_SIZES[:7]),
    ("sol/gemm_bf16", "gemm.cuda_tc_gemv", {"ROW_BLOCKS": "2", "WARPS": "16", "UNROLL": "1"}, GEMV_SIZES[:7]),
    # B_LOAD=bulk (the producer warp's cp.async.bulk ring): every size, a deep ring of short stages (K = 14336 wraps
    # it many times), one-row-block CTAs with long stages, split fixed.
    ("sol/gemm_bf16", "gemm.cuda_tc_gemv", {"B_LOAD": "bulk"}, GEMV_SIZES),
    ("sol/gemm_bf16", "gemm.cuda_tc_gemv", {"B_LOAD": "bulk", "STAGES": "8", "KSTAGE": "128", "WARPS": "4"}, GEMV_SIZES[:7]),
    ("sol/gemm_bf16", "gemm.cuda_tc_gemv", {"B_LOAD": "bulk", "ROW_BLOCKS": "1", "KSTAGE": "512", "SPLIT": "8"}, GEMV_SIZES[:7]),
    ("sol/gemm_residual", "gemm.cuda_tc_gemv", {}, RES_SIZES),
    ("sol/gemm_residual", "gemm.cuda_tc_gemv", {"SPLIT": "4"}, RES_SIZES),
    ("sol/gemm_residual", "gemm.cuda_tc_gemv", {"B_LOAD": "bulk", "STAGES": "6"}, RES_SIZES),
    ("cutegen26/kb02_matmul_standard", "gemm.cuda_sm80_3xtf32", {}, F32_SIZES),
    ("cutegen26/kb02_matmul_standard", "gemm.cuda_sm80_3xtf32", {"ALIGN": "1"}, F32_SIZES),
    ("cutegen26/kb02_matmul_standard", "gemm.cuda_sm80_3xtf32", {"SPLIT_K": "8", "TB_K": "32", "STAGES": "3"}, F32_SIZES),
    ("cutegen26/kb17_matmul_transposed_b", "gemm.cuda_sm80_3xtf32", {"W_M": "32", "W_N": "64"}, F32_SIZES[:4]),
    ("cutegen26/kb03_matmul_batched", "gemm.cuda_sm80_3xtf32", {}, BATCH_SIZES),
    # 3xTF32 as one Sm90 TF32 GEMM over the tripled depth: kb02's row-major B (the pre-pass transposes it), kb17's
    # K-contiguous B on ping-pong 64x128, the batch, kb08's irregular pitches (C through the padded copy, N rounded up
    # to 4), stream-K split-K, and PROMOTE 0 (one tensor-core chain over the whole k: 0.73 of kb02's tolerance at
    # K = 8192 and 2.95x it at K = 131072 on the H100, so only its perf shape here).
    ("cutegen26/kb02_matmul_standard", "gemm.cuda_sm90_3xtf32", {}, F32_SIZES),
    ("cutegen26/kb17_matmul_transposed_b", "gemm.cuda_sm90_3xtf32", {"SCHEDULE": "pingpong", "TILE_M": "64", "TILE_N": "128"}, F32_SIZES[:4]),
    ("cutegen26/kb03_matmul_batched", "gemm.cuda_sm90_3xtf32", {}, BATCH_SIZES),
    ("cutegen26/kb02_matmul_standard", "gemm.cuda_sm90_3xtf32", {}, IRREGULAR_SIZES),
    ("cutegen26/kb02_matmul_standard", "gemm.cuda_sm90_3xtf32", {"SCHEDULER": "streamk", "SPLITS": "4"}, F32_SIZES[3:5]),
    ("cutegen26/kb02_matmul_standard", "gemm.cuda_sm90_3xtf32", {"PROMOTE": "0", "TILE_N": "256"}, F32_SIZES[:1]),
    # Speed against accuracy (session 14: PROMOTE 4 on 128x128 1.44x SGEMM with 0.021 of the tolerance, PROMOTE 0 on
    # 128x256 2.02x with 0.73): longer promotion intervals, and PROMOTE 0 on 128x256 with split-K bounding each chain
    # to 3K / 4, at kb02's shape and at K = 131072.
    ("cutegen26/kb02_matmul_standard", "gemm.cuda_sm90_3xtf32", {"PROMOTE": "8"}, [F32_SIZES[0], F32_SIZES[4]]),
    ("cutegen26/kb02_matmul_standard", "gemm.cuda_sm90_3xtf32", {"PROMOTE": "16"}, [F32_SIZES[0], F32_SIZES[4]]),
    ("cutegen26/kb02_matmul_standard", "gemm.cuda_sm90_3xtf32",
     {"PROMOTE": "0", "TILE_N": "256", "SCHEDULER": "streamk", "SPLITS": "4"}, [F32_SIZES[0], F32_SIZES[4]]),
    # (session 15: PROMOTE 4, 8 and 16 on 128x128 all read 1.41-1.44x; the tile without promotion separates the
    # tile's cost from the promotion's.)
    ("cutegen26/kb02_matmul_standard", "gemm.cuda_sm90_3xtf32", {"PROMOTE": "0"}, F32_SIZES[:1]),
    # The register-A 3xTF32 kernel (first run): its default (promoted every k-tile), PROMOTE 4, one chain on 128x256,
    # kb17's K-contiguous B, the batch, the irregular shapes (K not a multiple of 4: A through its padded copy).
    ("cutegen26/kb02_matmul_standard", "gemm.cuda_sm90_rs3xtf32", {}, RS_SIZES),
    ("cutegen26/kb02_matmul_standard", "gemm.cuda_sm90_rs3xtf32", {"PROMOTE": "4"}, [RS_SIZES[0], RS_SIZES[5]]),
    ("cutegen26/kb02_matmul_standard", "gemm.cuda_sm90_rs3xtf32", {"PROMOTE": "0", "TILE_N": "256", "STAGES": "2"}, F32_SIZES[:1]),
    ("cutegen26/kb17_matmul_transposed_b", "gemm.cuda_sm90_rs3xtf32", {}, RS_SIZES[:5]),
    ("cutegen26/kb03_matmul_batched", "gemm.cuda_sm90_rs3xtf32", {}, BATCH_SIZES),
    ("cutegen26/kb02_matmul_standard", "gemm.cuda_sm90_rs3xtf32", {}, IRREGULAR_SIZES),
    # The short-K template: default (128x256 tiles of 64x64 warp tiles since session 15); 64x128 tiles of 32x32 warp
    # tiles at two CTAs per SM with write-back stores; 128x256 tiles on 32-deep panels; 64x128 tiles on 32-deep panels
    # at two CTAs per SM. Points name TB_N and W_N where they mean the 128 x 32 of the earlier default.
    ("cutegen26/kb07_matmul_small_k", "gemm.cuda_smallk_3xtf32", {}, SMALLK_SIZES),
    ("cutegen26/kb07_matmul_small_k", "gemm.cuda_smallk_3xtf32",
     {"TB_M": "64", "TB_N": "128", "W_M": "32", "W_N": "32", "KMAX": "64", "MIN_BLOCKS": "2", "STORE": "wb"}, SMALLK_SIZES),
    ("cutegen26/kb09_matmul_tall_skinny", "gemm.cuda_smallk_3xtf32", {}, TALL_SIZES),
    ("cutegen26/kb09_matmul_tall_skinny", "gemm.cuda_smallk_3xtf32", {"TB_N": "256", "W_N": "64", "KMAX": "32"}, TALL_SIZES),
    ("cutegen26/kb09_matmul_tall_skinny", "gemm.cuda_smallk_3xtf32",
     {"TB_M": "64", "TB_N": "128", "W_M": "32", "W_N": "32", "KMAX": "32", "MIN_BLOCKS": "2"}, TALL_SIZES),
    # EPILOGUE bulk (C staged in shared memory, one cp.async.bulk copy per row): 128x128 at K 64 and 32, 64x256 of
    # 32x64 warp tiles, and 64x128 at two CTAs per SM; the sizes hold column-edge tiles (register stores) and row
    # edges (rows beyond M staged, not copied).
    ("cutegen26/kb07_matmul_small_k", "gemm.cuda_smallk_3xtf32", {"EPILOGUE": "bulk", "TB_N": "128", "W_N": "32"}, SMALLK_SIZES),
    ("cutegen26/kb09_matmul_tall_skinny", "gemm.cuda_smallk_3xtf32",
     {"EPILOGUE": "bulk", "KMAX": "32", "TB_N": "128", "W_N": "32"}, TALL_SIZES),
    ("cutegen26/kb09_matmul_tall_skinny", "gemm.cuda_smallk_3xtf32",
     {"EPILOGUE": "bulk", "KMAX": "32", "TB_M": "64", "TB_N": "256", "W_M": "32", "W_N": "64"}, TALL_SIZES),
    ("cutegen26/kb09_matmul_tall_skinny", "gemm.cuda_smallk_3xtf32",
     {"EPILOGUE": "bulk", "KMAX": "32", "TB_M": "64", "TB_N": "128", "W_M": "32", "W_N": "32", "MIN_BLOCKS": "2"}, TALL_SIZES),
    # (session 15: bulk 2.65-2.69 ms on kb09 against 2.15 for the register stores.) EPILOGUE lines (whole 128-byte
    # lines per store through a per-warp staging): 128x256 on 32-deep panels (kb09), 64x256 on 64-deep panels (kb07)
    # beside the same tile with register stores.
    ("cutegen26/kb09_matmul_tall_skinny", "gemm.cuda_smallk_3xtf32", {"EPILOGUE": "lines", "KMAX": "32"}, TALL_SIZES),
    ("cutegen26/kb07_matmul_small_k", "gemm.cuda_smallk_3xtf32", {"EPILOGUE": "lines", "TB_M": "64", "W_M": "32"}, SMALLK_SIZES),
    ("cutegen26/kb07_matmul_small_k", "gemm.cuda_smallk_3xtf32", {"TB_M": "64", "W_M": "32"}, SMALLK_SIZES[:1]),
]

HARNESS = r"""
#include <cublas_v2.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>
""" + check_macro("1") + r"""
#if ELEM_BF16
using E = __nv_bfloat16;
static E to_e(float v) { return __float2bfloat16_rn(v); }
static float from_e(E v) { return __bfloat162float(v); }
#else
using E = float;
static E to_e(float v) { return v; }
static float from_e(E v) { return v; }
#endif
struct Size { long M, N, K, BATCH; };
// The practical write floor of a large C: a grid-stride loop of 16-byte evict-first stores (full lines per warp).
__global__ void khive_test_fill(float4* p, long n4) {
  for (long i = blockIdx.x * long(blockDim.x) + threadIdx.x; i < n4; i += long(gridDim.x) * blockDim.x)
    __stcs(p + i, make_float4(0.f, 0.f, 0.f, 0.f));
}
""" + NORMAL + r"""int main() {
  const Size sizes[] = {SIZES};
  long bad_total = 0;
  cublasHandle_t h = nullptr;
  if (!ELEM_BF16 && cublasCreate(&h) == CUBLAS_STATUS_SUCCESS) cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH);
  for (const Size& s : sizes) {
    const long M = s.M, N = s.N, K = s.K, BATCH = s.BATCH;
    const uint64_t seed = 1234 + M * 7 + N * 131 + K;
    Normal da{seed | 1, 0.5f, 1.0f}, db{(seed * 3) | 1, 0.0f, B_STD}, dr{(seed * 5) | 1, 0.5f, 1.0f};
    std::vector<E> A(size_t(BATCH * M * K)), B(size_t(BATCH * K * N)), R(HAS_R ? size_t(M * N) : 1), C(size_t(BATCH * M * N)), C2(C.size());
    for (auto& x : A) x = to_e(da());
    for (auto& x : B) x = to_e(db());
    if (HAS_R) for (auto& x : R) x = to_e(dr());
    E *dA, *dB, *dR, *dC;
    CK(cudaMalloc(&dA, A.size() * sizeof(E)));
    CK(cudaMalloc(&dB, B.size() * sizeof(E)));
    CK(cudaMalloc(&dR, R.size() * sizeof(E)));
    CK(cudaMalloc(&dC, C.size() * sizeof(E)));
    CK(cudaMemcpy(dA, A.data(), A.size() * sizeof(E), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dB, B.data(), B.size() * sizeof(E), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dR, R.data(), R.size() * sizeof(E), cudaMemcpyHostToDevice));
    CK(cudaMemset(dC, 0xff, C.size() * sizeof(E)));   // NaN-ish: an output never written fails
    CALL;
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(C2.data(), dC, C.size() * sizeof(E), cudaMemcpyDeviceToHost));
    CALL;
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(C.data(), dC, C.size() * sizeof(E), cudaMemcpyDeviceToHost));
    const bool same = std::memcmp(C.data(), C2.data(), C.size() * sizeof(E)) == 0;
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventRecord(e0));
    for (int rep = 0; rep < 20; ++rep) CALL;
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    const double us = ms * 1000.0 / 20;
    // C of 256 MB or more: how fast this GPU writes that many bytes at all (cudaMemsetAsync, and a streaming store
    // kernel), the floor a store-bound GEMM is measured against (issue 23: >= 0.9 of it).
    double memset_us = 0, fill_us = 0;
    const size_t c_bytes = C.size() * sizeof(E);
    if (c_bytes >= (size_t(256) << 20) && c_bytes % 16 == 0) {
      CK(cudaEventRecord(e0));
      for (int rep = 0; rep < 20; ++rep) CK(cudaMemsetAsync(dC, 0, c_bytes));
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      CK(cudaEventElapsedTime(&ms, e0, e1));
      memset_us = ms * 1000.0 / 20;
      int sms = 0;
      CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
      CK(cudaEventRecord(e0));
      for (int rep = 0; rep < 20; ++rep) khive_test_fill<<<sms * 8, 256>>>(reinterpret_cast<float4*>(dC), long(c_bytes / 16));
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      CK(cudaEventElapsedTime(&ms, e0, e1));
      fill_us = ms * 1000.0 / 20;
    }
    // cuBLAS SGEMM (fp32 only, no TF32) on the same inputs: its error against fp64 and its time.
    std::vector<float> V;
    double vendor_us = 0;
#if !ELEM_BF16
    if (h) {
      float *dV, one = 1.0f, zero = 0.0f;
      CK(cudaMalloc(&dV, C.size() * sizeof(float)));
      auto sgemm = [&] {
        cublasSgemmStridedBatched(h, B_COL ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, int(N), int(M), int(K), &one,
                                  (const float*)dB, int(B_COL ? K : N), K * N, (const float*)dA, int(K), M * K, &zero,
                                  dV, int(N), M * N, int(BATCH));
      };
      sgemm();
      CK(cudaDeviceSynchronize());
      CK(cudaEventRecord(e0));
      for (int rep = 0; rep < 20; ++rep) sgemm();
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      CK(cudaEventElapsedTime(&ms, e0, e1));
      vendor_us = ms * 1000.0 / 20;
      V.resize(C.size());
      CK(cudaMemcpy(V.data(), dV, V.size() * sizeof(float), cudaMemcpyDeviceToHost));
      cudaFree(dV);
    }
#endif
    // Every output, or a sample when the fp64 reference would take too long.
    const long outputs = BATCH * M * N, budget = 1L << 27;
    const long samples = outputs * K <= budget ? outputs : std::max(64L, budget / K);
    long bad = 0, bad_vendor = 0;
    double worst = 0, use = 0, worst_vendor = 0;
    std::mt19937_64 pick(99);
    for (long t = 0; t < samples; ++t) {
      const long e = samples == outputs ? t : long(pick() % uint64_t(outputs));
      const long b = e / (M * N), i = (e % (M * N)) / N, j = e % N;
      double ref = 0;
      for (long k = 0; k < K; ++k) {
        const double a = from_e(A[size_t(b * M * K + i * K + k)]);
        const double w = from_e(B[size_t(b * K * N + (B_COL ? j * K + k : k * N + j))]);
        ref += a * w;
      }
      if (HAS_R) ref += from_e(R[size_t(i * N + j)]);
      const double atol = ATOL < 0 ? 1e-6 * K + 1e-5 : ATOL, rtol = RTOL < 0 ? 1e-5 : RTOL;
      const double got = from_e(C[size_t(e)]), err = std::fabs(got - ref), bound = atol + rtol * std::fabs(ref);
      if (!(err <= bound)) {
        if (bad < 5) std::printf("  bad (%ld, %ld, %ld): got %.7g, ref %.7g, err %.3g > %.3g\n", b, i, j, got, ref, err, bound);
        ++bad;
      }
      worst = std::max(worst, err);
      use = std::max(use, err / bound);
      if (!V.empty()) {
        const double ev = std::fabs(double(V[size_t(e)]) - ref);
        worst_vendor = std::max(worst_vendor, ev);
        bad_vendor += !(ev <= bound);
      }
    }
    if (!same) { std::printf("  two calls gave different bits\n"); ++bad; }
    bad_total += bad;
    const double bytes = double(sizeof(E)) * (BATCH * (M * K + K * N + M * N) + (HAS_R ? M * N : 0));
    std::printf("size M=%ld N=%ld K=%ld batch=%ld: %ld of %ld checked bad, max err %.3g (%.3g of the tolerance)%s, "
                "%.2f us, %.1f GB/s, %.2f TFLOP/s", M, N, K, BATCH, bad, samples, worst, use,
                same ? ", deterministic" : "", us, bytes / us * 1e-3, 2.0 * BATCH * M * N * K / us * 1e-6);
    if (!V.empty()) std::printf("; cuBLAS SGEMM: max err %.3g (%ld bad), %.2f us: %.2fx", worst_vendor, bad_vendor, vendor_us, vendor_us / us);
    if (memset_us > 0)
      std::printf("; writing C's %.0f MB alone: memset %.2f us (%.0f GB/s), store kernel %.2f us (%.0f GB/s): this call at "
                  "%.2f of the faster", c_bytes / 1e6, memset_us, c_bytes / memset_us * 1e-3, fill_us,
                  c_bytes / fill_us * 1e-3, std::min(memset_us, fill_us) / us);
    std::printf("\n");
    cudaFree(dA); cudaFree(dB); cudaFree(dR); cudaFree(dC);
  }
  std::printf("bad %ld\n", bad_total);
  return bad_total ? 1 : 0;
}
"""


def main():
    failures, sources = [], []
    with tempfile.TemporaryDirectory(prefix="khive-gemm-cuda-") as t:
        tmp = pathlib.Path(t)
        for n, (task, template, point, sizes) in enumerate(CASES):
            word = {"gemm.cuda_tc_gemv": "gemv", "gemm.cuda_smallk_3xtf32": "smallk", "gemm.cuda_sm90_3xtf32": "sm90x3",
                    "gemm.cuda_sm90_rs3xtf32": "rs3x"}.get(template, "tf32x3")
            if only and word not in only.split(","):
                continue
            tag = "-".join(f"{k}{v}" for k, v in point.items()) or "default"
            name = f"{n:02d}_{task.split('/')[1]}_{template.split('.')[1]}_{tag}"
            if pick and not pick.search(name):
                continue
            elem, b_col, has_r, batched, call, atol, rtol, b_std = TASKS[task]
            out = tmp / f"k{n}.cu"
            args = [tune, "--kernels", str(root / "kernels"), "point", str(root / "tasks" / task), "--backend", "cuda",
                    "--template", template, "--out", str(out)]
            for k, v in point.items():
                args += ["--set", f"{k}={v}"]
            r = subprocess.run(args, capture_output=True, text=True)
            if r.returncode != 0:
                failures.append(f"{task} {template} {point}: khive-tune point: {r.stdout[-300:]}{r.stderr[-500:]}")
                continue
            cu = tmp / f"{name}.cu"
            size_text = ", ".join("{%d, %d, %d, %d}" % (s[0], s[1], s[2], s[3] if len(s) > 3 else 1) for s in sizes)
            defines = (f"#define ELEM_BF16 {int(elem == 'bf16')}\n#define B_COL {int(b_col)}\n#define HAS_R {int(has_r)}\n"
                       f"#define ATOL {atol if atol is not None else -1}\n#define RTOL {rtol if rtol is not None else -1}\n"
                       f"#define B_STD {b_std}f\n#define SIZES {size_text}\n#define CALL {call}\n")
            cu.write_text("#include <cuda_runtime.h>\n#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n#include <cstdint>\n"
                          + out.read_text() + "\n" + defines + HARNESS)
            sources.append(cu)

        def build(cu):
            r = subprocess.run([nvcc, "-std=c++17", "-arch=sm_90a", "-O3", "--expt-relaxed-constexpr", "-w",
                                f"-I{cutlass / 'include'}", f"-I{cutlass / 'util-include'}", "-o", str(cu.with_suffix("")),
                                str(cu), "-lcublas"], capture_output=True, text=True)
            return cu, r
        with concurrent.futures.ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 2)) as pool:
            built = list(pool.map(build, sources))
        for cu, r in built:
            if r.returncode != 0:
                failures.append(f"{cu.stem}: nvcc failed: {(r.stdout + r.stderr).strip()[-1500:]}")
                continue
            if build_only:
                print(f"{cu.stem}: built")
                continue
            run = subprocess.run([str(cu.with_suffix(""))], capture_output=True, text=True, timeout=600)
            print(f"== {cu.stem}\n{run.stdout.strip()}")
            lines = run.stdout.strip().splitlines()
            if run.returncode != 0 or not lines or lines[-1] != "bad 0":
                failures.append(f"{cu.stem}: exit {run.returncode}\n{run.stdout[-1500:]}{run.stderr[-500:]}")
    return finish(sources, failures, build_only)


if __name__ == "__main__":
    sys.exit(main())
