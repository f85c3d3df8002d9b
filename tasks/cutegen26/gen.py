#!/usr/bin/env python3
"""Writes the CuTeGen-26 task directories (KernelBench level 1, problems 1-32 as CuTeGen picked them).

Run from anywhere: `python3 tasks/cutegen26/gen.py`. The task files are generated so that the 26 tasks share
one reviewed set of kernels, workloads and tolerance rules; edit this file, not the generated ones, and rerun.
Tolerance figures come from tools/probe.cpp (see README.md).
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

# ------------------------------------------------------------------------------------------------ GEMMs
# GEMM tolerance, fitted with tools/probe.cpp on A ~ N(0.5, 1), B ~ N(0, 1): the worst honest fp32 order (one
# sequential fma chain) is off by at most ~1.2e-7*K (K = reduction length), a 32-term tiled sum by ~2.5e-8*K;
# TF32-rounded inputs are off by ~1.4e-3*sqrt(K) at worst (rms about a third of that), bf16 by ~1e-2*sqrt(K).
# atol = 1e-6*K + 1e-5 leaves the sequential order a margin of ~8x and rejects TF32 up to K of a few million
# (0.53 at K = 524288, where TF32 elements reach 0.8 and ~5% of them exceed the bound).
def gemm_tol(k):
    return {"atol": float("%.3g" % (1e-6 * k + 1e-5)), "rtol": 1e-5}

GEMM_TOL_TEXT = ("Tolerance per workload: atol = 1e-6*K + 1e-5, rtol = 1e-5 (K = the reduction length; reference "
                 "accumulated in double). Measured with tools/probe.cpp on these input distributions: the worst honest "
                 "fp32 order (one sequential fma chain over K) is off by at most about 1.2e-7*K, a tiled sum by less, so "
                 "the margin is about 8x; TF32-rounded inputs are off by up to ~1.4e-3*sqrt(K) and bf16 by ~1e-2*sqrt(K), "
                 "so a TF32 or bf16 tensor-core shortcut fails on many elements at every workload size.")

GEMM_DIST = {"A": {"dist": "normal", "mean": 0.5, "std": 1.0}, "B": {"dist": "normal", "mean": 0.0, "std": 1.0}}
GEMM_DIST_TEXT = ("Inputs: A ~ N(0.5, 1) (non-zero mean), B ~ N(0, 1): C is about N(0, 1.25*K) per element, never all "
                  "zero, and a zero-mean B keeps precision shortcuts visible at large K (with both means non-zero, "
                  "C ~ 0.25*K would hide them behind the rounding of the large sum).")

# The reference GEMM: one 64x64 output tile per 256-thread block, 16-deep K slices staged in shared memory,
# each thread owning a 4x4 patch of C with double accumulators. OPERAND_A / OPERAND_B say how element (i, k)
# of A and (k, j) of B are read (layout and structure); OUTPUT_MASK which C elements are structurally zero.
GEMM_CU = r'''// {name}, CUDA reference: {math}
// Plain shared-memory tiling, accumulated in double (the fp64 units make a 4096^3 product take tens of
// milliseconds on an H200), each output rounded once to fp32. Bounds are checked everywhere, so any shape works.
namespace {{
constexpr int TM = 64, TN = 64, TK = 16;   // output tile and K slice; 256 threads, 4x4 outputs each

// Element (i, k) of the left operand and (k, j) of the right one for batch b; zero outside the matrix.
__device__ __forceinline__ float load_a(const float* A, int64_t b, int64_t i, int64_t k, int64_t M, int64_t K) {{
  if (i >= M || k >= K) return 0.0f;
  {load_a}
}}
__device__ __forceinline__ float load_b(const float* B, int64_t b, int64_t k, int64_t j, int64_t K, int64_t N) {{
  if (k >= K || j >= N) return 0.0f;
  {load_b}
}}

__global__ void __launch_bounds__(256) ref_gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {{
  __shared__ float As[TK][TM];
  __shared__ float Bs[TK][TN];
  const int64_t b = blockIdx.z;
  const int64_t i0 = static_cast<int64_t>(blockIdx.y) * TM, j0 = static_cast<int64_t>(blockIdx.x) * TN;
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  double acc[4][4] = {{}};
  for (int64_t k0 = 0; k0 < K; k0 += TK) {{
    for (int e = threadIdx.x; e < TK * TM; e += 256) {{   // e -> (kk, r): consecutive threads take consecutive k
      const int kk = e % TK, r = e / TK;
      As[kk][r] = load_a(A, b, i0 + r, k0 + kk, M, K);
    }}
    for (int e = threadIdx.x; e < TK * TN; e += 256) {{   // e -> (kk, c): consecutive threads take consecutive j
      const int c = e % TN, kk = e / TN;
      Bs[kk][c] = load_b(B, b, k0 + kk, j0 + c, K, N);
    }}
    __syncthreads();
    for (int kk = 0; kk < TK; ++kk)
      for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c)
          acc[r][c] += static_cast<double>(As[kk][ty + 16 * r]) * static_cast<double>(Bs[kk][tx + 16 * c]);
    __syncthreads();
  }}
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) {{
      const int64_t i = i0 + ty + 16 * r, j = j0 + tx + 16 * c;
      if (i < M && j < N) C[(b * M + i) * N + j] = {store};
    }}
}}
}}  // namespace

extern "C" void khive_launch({params}, cudaStream_t stream) {{
  {prologue}
  if (M <= 0 || N <= 0 || batch <= 0) return;
  const dim3 grid(static_cast<unsigned>((N + TN - 1) / TN), static_cast<unsigned>((M + TM - 1) / TM), static_cast<unsigned>(batch));
  ref_gemm<<<grid, 256, 0, stream>>>(A, B, C, M, N, K);
}}
'''

GEMM_CPP = r'''// {name}, CPU reference: {math}
// Each row of C is accumulated in double (i-k-j order, so the inner loop walks rows of B) and rounded once
// to fp32; rows are spread over threads with OpenMP.
#include <vector>

extern "C" void khive_launch({params}) {{
  {prologue}
  for (int64_t b = 0; b < batch; ++b) {{
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t i = 0; i < M; ++i) {{
      std::vector<double> acc(static_cast<size_t>(N), 0.0);
      for (int64_t k = 0; k < K; ++k) {{
        const double a = {cpu_a};
        if (a == 0.0) continue;
        for (int64_t j = 0; j < N; ++j) acc[j] += a * static_cast<double>({cpu_b});
      }}
      for (int64_t j = 0; j < N; ++j) C[(b * M + i) * N + j] = {cpu_store};
    }}
  }}
}}
'''

CUBLAS_HEAD = r'''// {name}, vendor baseline: {what}
// fp32 all the way: CUBLAS_DEFAULT_MATH never uses TF32 (that needs CUBLAS_TF32_TENSOR_OP_MATH or a
// *_FAST_TF32 compute type), and the task's tolerance would reject TF32 results anyway. Row-major operands
// are passed as their column-major transposes: C = A.B row-major is C^T = B^T.A^T column-major.
#include <cstdlib>
#include <cublas_v2.h>

namespace {{
// A failed cuBLAS call ends the baseline with abort(), which the runner reports as a crash of this kernel
// (file I/O is off limits inside a kernel library, so there is no message of our own).
void check(cublasStatus_t s, const char*) {{
  if (s != CUBLAS_STATUS_SUCCESS) std::abort();
}}
cublasHandle_t handle() {{   // one handle per process, created on the first call (a warm-up call)
  static cublasHandle_t h = [] {{
    cublasHandle_t x = nullptr;
    check(cublasCreate(&x), "cublasCreate");
    check(cublasSetMathMode(x, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    check(cublasSetPointerMode(x, CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");
    return x;
  }}();
  return h;
}}
{extra}}}  // namespace

'''

def gemm_task(d):
    return d

GEMMS = []

def add_gemm(**kw):
    GEMMS.append(kw)

# Element access snippets. Row-major layouts; b is the batch index.
A_MK = "return A[(b * M + i) * K + k];"
B_KN = "return B[(b * K + k) * N + j];"
STORE = "static_cast<float>(acc[r][c])"

add_gemm(
    dir="kb01_matmul_square", kb=1, title="Square matrix multiplication",
    math="C[N, N] = A[N, N] . B[N, N], row-major fp32.",
    axes={"N": {"type": "var"}},
    inputs={"A": ["N", "N"], "B": ["N", "N"]}, output=["N", "N"],
    sig_cu="const float* A, const float* B, float* C, int64_t N", sig_cpu="const float* A, const float* B, float* C, int64_t N",
    prologue="const int64_t M = N, K = N, batch = 1;",
    load_a=A_MK, load_b=B_KN, store=STORE,
    cpu_a="static_cast<double>(A[i * K + k])", cpu_b="B[k * N + j]", cpu_store="static_cast<float>(acc[j])",
    flops="2 * N * N * N", bytes="4 * 3 * N * N",
    cost_text="flops: 2*N^3 (one multiply and one add per term, N^2 outputs of N terms); bytes: read A and B once and "
              "write C once = 4*3*N^2.",
    torch="def run(A, B):\n    return torch.matmul(A, B)\n",
    K="N",
    work_corr=[{"N": 1}, {"N": 33}, {"N": 127}, {"N": 200}], work_cuda_corr=[{"N": 1000}],
    work_cpu_perf=[{"N": 256}], work_cuda_perf=[{"N": 4096}],
    cublas="gemm", cublas_args=dict(M="N", N="N", K="N", ta="CUBLAS_OP_N", tb="CUBLAS_OP_N", lda="N", ldb="N"),
)
add_gemm(
    dir="kb02_matmul_standard", kb=2, title="Standard matrix multiplication",
    math="C[M, N] = A[M, K] . B[K, N], row-major fp32.",
    axes={"M": {"type": "var"}, "K": {"type": "var"}, "N": {"type": "var"}},
    inputs={"A": ["M", "K"], "B": ["K", "N"]}, output=["M", "N"],
    sig_cu="const float* A, const float* B, float* C, int64_t M, int64_t K, int64_t N",
    sig_cpu="const float* A, const float* B, float* C, int64_t M, int64_t K, int64_t N",
    prologue="const int64_t batch = 1;",
    load_a=A_MK, load_b=B_KN, store=STORE,
    cpu_a="static_cast<double>(A[i * K + k])", cpu_b="B[k * N + j]", cpu_store="static_cast<float>(acc[j])",
    flops="2 * M * N * K", bytes="4 * (M * K + K * N + M * N)",
    cost_text="flops: 2*M*N*K (one multiply and one add per term); bytes: read A and B once, write C once = "
              "4*(M*K + K*N + M*N).",
    torch="def run(A, B):\n    return torch.matmul(A, B)\n",
    K="K",
    work_corr=[{"M": 1, "K": 1, "N": 1}, {"M": 33, "K": 65, "N": 17}, {"M": 127, "K": 31, "N": 129}, {"M": 5, "K": 300, "N": 64}],
    work_cuda_corr=[{"M": 257, "K": 2049, "N": 511}],
    work_cpu_perf=[{"M": 192, "K": 512, "N": 256}], work_cuda_perf=[{"M": 2048, "K": 8192, "N": 4096}],
    cublas="gemm", cublas_args=dict(M="M", N="N", K="K", ta="CUBLAS_OP_N", tb="CUBLAS_OP_N", lda="K", ldb="N"),
)
add_gemm(
    dir="kb03_matmul_batched", kb=3, title="Batched matrix multiplication",
    math="C[batch, M, N] = A[batch, M, K] . B[batch, K, N] for every batch index, row-major fp32.",
    axes={"batch": {"type": "var"}, "M": {"type": "var"}, "K": {"type": "var"}, "N": {"type": "var"}},
    inputs={"A": ["batch", "M", "K"], "B": ["batch", "K", "N"]}, output=["batch", "M", "N"],
    sig_cu="const float* A, const float* B, float* C, int64_t batch, int64_t M, int64_t K, int64_t N",
    sig_cpu="const float* A, const float* B, float* C, int64_t batch, int64_t M, int64_t K, int64_t N",
    prologue="",
    load_a=A_MK, load_b=B_KN, store=STORE,
    cpu_a="static_cast<double>(A[(b * M + i) * K + k])", cpu_b="B[(b * K + k) * N + j]", cpu_store="static_cast<float>(acc[j])",
    flops="2 * batch * M * N * K", bytes="4 * batch * (M * K + K * N + M * N)",
    cost_text="flops: 2*batch*M*N*K (one multiply and one add per term); bytes: read A and B once, write C once = "
              "4*batch*(M*K + K*N + M*N).",
    torch="def run(A, B):\n    return torch.bmm(A, B)\n",
    K="K",
    work_corr=[{"batch": 1, "M": 1, "K": 1, "N": 1}, {"batch": 3, "M": 17, "K": 33, "N": 9}, {"batch": 2, "M": 64, "K": 129, "N": 31},
               {"batch": 5, "M": 1, "K": 100, "N": 70}],
    work_cuda_corr=[{"batch": 7, "M": 130, "K": 513, "N": 257}],
    work_cpu_perf=[{"batch": 4, "M": 96, "K": 128, "N": 80}], work_cuda_perf=[{"batch": 128, "M": 512, "K": 1024, "N": 2048}],
    cublas="batched", cublas_args=dict(M="M", N="N", K="K", ta="CUBLAS_OP_N", tb="CUBLAS_OP_N", lda="K", ldb="N"),
)
add_gemm(
    dir="kb06_matmul_large_k", kb=6, title="Matmul with large K dimension",
    math="C[M, N] = A[M, K] . B[K, N] with K much larger than M and N (KernelBench: 256 x 256, K = 524288), row-major fp32.",
    axes={"M": {"type": "var"}, "K": {"type": "var"}, "N": {"type": "var"}},
    inputs={"A": ["M", "K"], "B": ["K", "N"]}, output=["M", "N"],
    sig_cu="const float* A, const float* B, float* C, int64_t M, int64_t K, int64_t N",
    sig_cpu="const float* A, const float* B, float* C, int64_t M, int64_t K, int64_t N",
    prologue="const int64_t batch = 1;",
    load_a=A_MK, load_b=B_KN, store=STORE,
    cpu_a="static_cast<double>(A[i * K + k])", cpu_b="B[k * N + j]", cpu_store="static_cast<float>(acc[j])",
    flops="2 * M * N * K", bytes="4 * (M * K + K * N + M * N)",
    cost_text="flops: 2*M*N*K (one multiply and one add per term); bytes: read A and B once, write C once = "
              "4*(M*K + K*N + M*N) (dominated by the 2*K*256 inputs: 1 GiB at the KernelBench shape).",
    torch="def run(A, B):\n    return torch.matmul(A, B)\n",
    K="K",
    work_corr=[{"M": 1, "K": 4099, "N": 1}, {"M": 5, "K": 70001, "N": 3}, {"M": 17, "K": 20000, "N": 9}, {"M": 32, "K": 65536, "N": 33}],
    work_cuda_corr=[{"M": 64, "K": 262147, "N": 65}],
    work_cpu_perf=[{"M": 16, "K": 65536, "N": 16}], work_cuda_perf=[{"M": 256, "K": 524288, "N": 256}],
    cublas="gemm", cublas_args=dict(M="M", N="N", K="K", ta="CUBLAS_OP_N", tb="CUBLAS_OP_N", lda="K", ldb="N"),
)
add_gemm(
    dir="kb07_matmul_small_k", kb=7, title="Matmul with small K dimension",
    math="C[M, N] = A[M, K] . B[K, N] with K small (KernelBench: 32768 x 32768, K = 64), row-major fp32.",
    axes={"M": {"type": "var"}, "K": {"type": "var"}, "N": {"type": "var"}},
    inputs={"A": ["M", "K"], "B": ["K", "N"]}, output=["M", "N"],
    sig_cu="const float* A, const float* B, float* C, int64_t M, int64_t K, int64_t N",
    sig_cpu="const float* A, const float* B, float* C, int64_t M, int64_t K, int64_t N",
    prologue="const int64_t batch = 1;",
    load_a=A_MK, load_b=B_KN, store=STORE,
    cpu_a="static_cast<double>(A[i * K + k])", cpu_b="B[k * N + j]", cpu_store="static_cast<float>(acc[j])",
    flops="2 * M * N * K", bytes="4 * (M * K + K * N + M * N)",
    cost_text="flops: 2*M*N*K (one multiply and one add per term); bytes: read A and B once, write C once = "
              "4*(M*K + K*N + M*N) (dominated by writing the 4 GiB C at the KernelBench shape).",
    torch="def run(A, B):\n    return torch.matmul(A, B)\n",
    K="K",
    work_corr=[{"M": 1, "K": 1, "N": 1}, {"M": 129, "K": 64, "N": 67}, {"M": 300, "K": 7, "N": 17}, {"M": 1, "K": 64, "N": 1000}],
    work_cuda_corr=[{"M": 2049, "K": 64, "N": 1025}],
    work_cpu_perf=[{"M": 512, "K": 64, "N": 512}], work_cuda_perf=[{"M": 32768, "K": 64, "N": 32768}],
    cublas="gemm", cublas_args=dict(M="M", N="N", K="K", ta="CUBLAS_OP_N", tb="CUBLAS_OP_N", lda="K", ldb="N"),
)
add_gemm(
    dir="kb08_matmul_irregular", kb=8, title="Matmul with irregular shapes",
    math="C[M, N] = A[M, K] . B[K, N] with sizes that are no multiple of any tile (KernelBench: M = 8205, K = 2949, N = 5921), row-major fp32.",
    axes={"M": {"type": "var"}, "K": {"type": "var"}, "N": {"type": "var"}},
    inputs={"A": ["M", "K"], "B": ["K", "N"]}, output=["M", "N"],
    sig_cu="const float* A, const float* B, float* C, int64_t M, int64_t K, int64_t N",
    sig_cpu="const float* A, const float* B, float* C, int64_t M, int64_t K, int64_t N",
    prologue="const int64_t batch = 1;",
    load_a=A_MK, load_b=B_KN, store=STORE,
    cpu_a="static_cast<double>(A[i * K + k])", cpu_b="B[k * N + j]", cpu_store="static_cast<float>(acc[j])",
    flops="2 * M * N * K", bytes="4 * (M * K + K * N + M * N)",
    cost_text="flops: 2*M*N*K (one multiply and one add per term); bytes: read A and B once, write C once = "
              "4*(M*K + K*N + M*N).",
    torch="def run(A, B):\n    return torch.matmul(A, B)\n",
    K="K",
    work_corr=[{"M": 1, "K": 3, "N": 2}, {"M": 67, "K": 29, "N": 59}, {"M": 131, "K": 97, "N": 113}, {"M": 13, "K": 257, "N": 3}],
    work_cuda_corr=[{"M": 821, "K": 295, "N": 593}],
    work_cpu_perf=[{"M": 205, "K": 295, "N": 193}], work_cuda_perf=[{"M": 8205, "K": 2949, "N": 5921}],
    cublas="gemm", cublas_args=dict(M="M", N="N", K="K", ta="CUBLAS_OP_N", tb="CUBLAS_OP_N", lda="K", ldb="N"),
)
add_gemm(
    dir="kb09_matmul_tall_skinny", kb=9, title="Tall-skinny matrix multiplication",
    math="C[M, M] = A[M, K] . B[K, M] with a short inner dimension (KernelBench: M = 32768, K = 32: a tall A "
         "times a wide B gives a large square C), row-major fp32.",
    axes={"M": {"type": "var"}, "K": {"type": "var"}},
    inputs={"A": ["M", "K"], "B": ["K", "M"]}, output=["M", "M"],
    sig_cu="const float* A, const float* B, float* C, int64_t M, int64_t K",
    sig_cpu="const float* A, const float* B, float* C, int64_t M, int64_t K",
    prologue="const int64_t N = M, batch = 1;",
    load_a=A_MK, load_b=B_KN, store=STORE,
    cpu_a="static_cast<double>(A[i * K + k])", cpu_b="B[k * N + j]", cpu_store="static_cast<float>(acc[j])",
    flops="2 * M * M * K", bytes="4 * (2 * M * K + M * M)",
    cost_text="flops: 2*M^2*K (one multiply and one add per term); bytes: read A and B once, write C once = "
              "4*(2*M*K + M^2) (writing the 4 GiB C dominates at the KernelBench shape: memory-bound).",
    torch="def run(A, B):\n    return torch.matmul(A, B)\n",
    K="K",
    work_corr=[{"M": 1, "K": 1}, {"M": 100, "K": 32}, {"M": 257, "K": 5}, {"M": 33, "K": 64}],
    work_cuda_corr=[{"M": 2053, "K": 32}],
    work_cpu_perf=[{"M": 1024, "K": 32}], work_cuda_perf=[{"M": 32768, "K": 32}],
    cublas="gemm", cublas_args=dict(M="M", N="M", K="K", ta="CUBLAS_OP_N", tb="CUBLAS_OP_N", lda="K", ldb="M"),
)
add_gemm(
    dir="kb12_matmul_diag", kb=12, title="Matmul with a diagonal matrix",
    math="C[N, M] = diag(A[N]) . B[N, M], that is C[i, j] = A[i] * B[i, j], row-major fp32 (KernelBench computes it "
         "as torch.diag(A) @ B, a full N x N GEMM; the least work is one multiply per element).",
    axes={"N": {"type": "var"}, "M": {"type": "var"}},
    inputs={"A": ["N"], "B": ["N", "M"]}, output=["N", "M"],
    sig_cu="const float* A, const float* B, float* C, int64_t N, int64_t M",
    sig_cpu="const float* A, const float* B, float* C, int64_t N, int64_t M",
    special="diag",
    flops="N * M", bytes="4 * (N + 2 * N * M)",
    cost_text="flops: N*M (one multiply per output element: the diagonal matrix is never formed); bytes: read A and B "
              "once, write C once = 4*(N + 2*N*M). Memory-bound.",
    torch="def run(A, B):\n    return torch.diag(A) @ B\n",
    K=None,
    work_corr=[{"N": 1, "M": 1}, {"N": 7, "M": 33}, {"N": 129, "M": 1000}, {"N": 1000, "M": 3}],
    work_cuda_corr=[{"N": 1031, "M": 4099}],
    work_cpu_perf=[{"N": 1024, "M": 1024}], work_cuda_perf=[{"N": 4096, "M": 4096}],
    cublas="dgmm",
)
add_gemm(
    dir="kb13_matmul_symmetric", kb=13, title="Matmul of symmetric matrices",
    math="C[N, N] = S(A) . S(B), where the symmetric operands are stored as their upper triangles, BLAS style: "
         "S(X)[i, k] = X[min(i, k), max(i, k)]. Entries of A and B below the diagonal are not part of the input "
         "(they hold arbitrary values and must not be read as data). KernelBench feeds symmetric matrices "
         "((R + R^T) / 2) to a plain matmul; this is the same product, and a kernel may use the symmetry (read "
         "either triangle of the stored data through S).",
    axes={"N": {"type": "var"}},
    inputs={"A": ["N", "N"], "B": ["N", "N"]}, output=["N", "N"],
    sig_cu="const float* A, const float* B, float* C, int64_t N", sig_cpu="const float* A, const float* B, float* C, int64_t N",
    prologue="const int64_t M = N, K = N, batch = 1;",
    load_a="return i <= k ? A[i * K + k] : A[k * K + i];", load_b="return k <= j ? B[k * N + j] : B[j * N + k];", store=STORE,
    cpu_a="static_cast<double>(i <= k ? A[i * K + k] : A[k * K + i])", cpu_b="(k <= j ? B[k * N + j] : B[j * N + k])",
    cpu_store="static_cast<float>(acc[j])",
    flops="2 * N * N * N", bytes="4 * (N * (N + 1) + N * N)",
    cost_text="flops: 2*N^3 (one multiply and one add per term; symmetric inputs do not make the product cheaper); "
              "bytes: read the two stored triangles once (N*(N+1)/2 elements each) and write C once = 4*(N*(N+1) + N^2).",
    torch="def run(A, B):\n    A = torch.triu(A) + torch.triu(A, 1).T\n    B = torch.triu(B) + torch.triu(B, 1).T\n"
          "    return torch.matmul(A, B)\n",
    K="N",
    work_corr=[{"N": 1}, {"N": 2}, {"N": 33}, {"N": 127}, {"N": 200}], work_cuda_corr=[{"N": 1000}],
    work_cpu_perf=[{"N": 256}], work_cuda_perf=[{"N": 4096}],
    cublas="symm",
)
for uplo, kb, lo in (("upper", 14, False), ("lower", 15, True)):
    keep_a = "k >= i" if not lo else "k <= i"
    keep_b = "j >= k" if not lo else "j <= k"
    keep_c = "j >= i" if not lo else "j <= i"
    fn = "triu" if not lo else "tril"
    add_gemm(
        dir=f"kb{kb}_matmul_{uplo}_triangular", kb=kb, title=f"Matmul of {uplo} triangular matrices",
        math=f"C[N, N] = {fn}({fn}(A) . {fn}(B)): A and B are {uplo} triangular; entries "
             f"{'below' if not lo else 'above'} the diagonal are not part of the input (they hold arbitrary values "
             f"and must be ignored) and C's are written as zeros. KernelBench feeds {fn}(rand) matrices and returns "
             f"torch.{fn}(A @ B); this is the same product, and a kernel may use the structure (C[i, j] only needs "
             f"k between i and j).",
        axes={"N": {"type": "var"}},
        inputs={"A": ["N", "N"], "B": ["N", "N"]}, output=["N", "N"],
        sig_cu="const float* A, const float* B, float* C, int64_t N", sig_cpu="const float* A, const float* B, float* C, int64_t N",
        prologue="const int64_t M = N, K = N, batch = 1;",
        load_a=f"return {keep_a} ? A[i * K + k] : 0.0f;", load_b=f"return {keep_b} ? B[k * N + j] : 0.0f;",
        store=f"{keep_c} ? static_cast<float>(acc[r][c]) : 0.0f",
        cpu_a=f"{keep_a} ? static_cast<double>(A[i * K + k]) : 0.0", cpu_b=f"({keep_b} ? B[k * N + j] : 0.0f)",
        cpu_store=f"{keep_c} ? static_cast<float>(acc[j]) : 0.0f",
        flops="N * (N + 1) * (N + 2) // 3", bytes="4 * (N * (N + 1) + N * N)",
        cost_text="flops: 2 * sum over the N*(N+1)/2 non-zero outputs of their (|j - i| + 1) terms = N*(N+1)*(N+2)/3 "
                  "(about N^3/3: the zero triangles are skipped); bytes: read the two stored triangles once "
                  "(N*(N+1)/2 elements each) and write all of C once, zeros included = 4*(N*(N+1) + N^2).",
        torch=f"def run(A, B):\n    return torch.{fn}(torch.matmul(torch.{fn}(A), torch.{fn}(B)))\n",
        K="N",
        work_corr=[{"N": 1}, {"N": 2}, {"N": 33}, {"N": 127}, {"N": 200}], work_cuda_corr=[{"N": 1000}],
        work_cpu_perf=[{"N": 256}], work_cuda_perf=[{"N": 4096}],
        cublas="trmm", lower=lo,
    )
add_gemm(
    dir="kb17_matmul_transposed_b", kb=17, title="Matmul with transposed B",
    math="C[M, N] = A[M, K] . B[N, K]^T, row-major fp32 (B is stored N x K, as linear-layer weights are).",
    axes={"M": {"type": "var"}, "K": {"type": "var"}, "N": {"type": "var"}},
    inputs={"A": ["M", "K"], "B": ["N", "K"]}, output=["M", "N"],
    sig_cu="const float* A, const float* B, float* C, int64_t M, int64_t K, int64_t N",
    sig_cpu="const float* A, const float* B, float* C, int64_t M, int64_t K, int64_t N",
    prologue="const int64_t batch = 1;",
    load_a=A_MK, load_b="return B[j * K + k];", store=STORE,
    cpu_a="static_cast<double>(A[i * K + k])", cpu_b="B[j * K + k]", cpu_store="static_cast<float>(acc[j])",
    flops="2 * M * N * K", bytes="4 * (M * K + K * N + M * N)",
    cost_text="flops: 2*M*N*K (one multiply and one add per term); bytes: read A and B once, write C once = "
              "4*(M*K + K*N + M*N).",
    torch="def run(A, B):\n    return torch.matmul(A, B.T)\n",
    K="K",
    work_corr=[{"M": 1, "K": 1, "N": 1}, {"M": 33, "K": 65, "N": 17}, {"M": 127, "K": 31, "N": 129}, {"M": 5, "K": 300, "N": 64}],
    work_cuda_corr=[{"M": 257, "K": 2049, "N": 511}],
    work_cpu_perf=[{"M": 192, "K": 512, "N": 256}], work_cuda_perf=[{"M": 2048, "K": 8192, "N": 4096}],
    cublas="gemm", cublas_args=dict(M="M", N="N", K="K", ta="CUBLAS_OP_N", tb="CUBLAS_OP_T", lda="K", ldb="K"),
)

DIAG_CU = r'''// {name}, CUDA reference: C[i, j] = A[i] * B[i, j] (diag(A) . B without forming the diagonal matrix).
// One thread per output element (grid-stride, 64-bit indices); a single fp32 multiply is exact-rounded, as
// the GEMM PyTorch runs (all other terms are 0 * b = 0) is.
namespace {{
__global__ void ref_diag(const float* A, const float* B, float* C, int64_t N, int64_t M) {{
  const int64_t total = N * M;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x)
    C[e] = A[e / M] * B[e];
}}
}}  // namespace

extern "C" void khive_launch(const float* A, const float* B, float* C, int64_t N, int64_t M, cudaStream_t stream) {{
  if (N <= 0 || M <= 0) return;
  const int64_t blocks = (N * M + 255) / 256;
  ref_diag<<<static_cast<unsigned>(blocks < 65536 ? blocks : 65536), 256, 0, stream>>>(A, B, C, N, M);
}}
'''
DIAG_CPP = r'''// {name}, CPU reference: C[i, j] = A[i] * B[i, j] (diag(A) . B without forming the diagonal matrix).
extern "C" void khive_launch(const float* A, const float* B, float* C, int64_t N, int64_t M) {{
#pragma omp parallel for
  for (int64_t i = 0; i < N; ++i)
    for (int64_t j = 0; j < M; ++j) C[i * M + j] = A[i] * B[i * M + j];
}}
'''

def cublas_source(g):
    name, kind = g["dir"], g["cublas"]
    if kind in ("gemm", "batched"):
        a = g["cublas_args"]
        head = CUBLAS_HEAD.format(name=name, what=("cublasSgemmStridedBatched" if kind == "batched" else "cublasSgemm") +
                                  ", fp32 inputs, fp32 compute, fp32 output.", extra="")
        sig = g["sig_cu"]
        call_args = f"{a['tb']}, {a['ta']}, {a['N']}, {a['M']}, {a['K']}, &one, B, {a['ldb']}"
        if kind == "gemm":
            body = (f"  check(cublasSgemm(h, {call_args}, A, {a['lda']}, &zero, C, {a['N']}), \"cublasSgemm\");\n")
        else:
            body = (f"  check(cublasSgemmStridedBatched(h, {call_args}, {a['K']} * {a['N']}, A, {a['lda']}, {a['M']} * {a['K']}, "
                    f"&zero, C, {a['N']}, {a['M']} * {a['N']}, static_cast<int>(batch)), \"cublasSgemmStridedBatched\");\n")
        guard = "batch <= 0 || " if kind == "batched" else ""
        return head + (f'extern "C" void khive_launch({sig}, cudaStream_t stream) {{\n'
                       f"  if ({guard}{a['M']} <= 0 || {a['N']} <= 0) return;\n"
                       "  cublasHandle_t h = handle();\n"
                       "  check(cublasSetStream(h, stream), \"cublasSetStream\");   // the entry's stream, every call\n"
                       "  const float one = 1.0f, zero = 0.0f;\n" + body + "}\n")
    if kind == "dgmm":
        head = CUBLAS_HEAD.format(name=name, what="cublasSdgmm (C = B . diag(x) on the column-major view).", extra="")
        return head + ('extern "C" void khive_launch(const float* A, const float* B, float* C, int64_t N, int64_t M, cudaStream_t stream) {\n'
                       "  if (N <= 0 || M <= 0) return;\n"
                       "  cublasHandle_t h = handle();\n"
                       "  check(cublasSetStream(h, stream), \"cublasSetStream\");\n"
                       "  // Column-major, B is the M x N matrix B^T; scaling its column i by A[i] scales row i of B.\n"
                       "  check(cublasSdgmm(h, CUBLAS_SIDE_RIGHT, static_cast<int>(M), static_cast<int>(N), B, static_cast<int>(M), A, 1, C,\n"
                       "                    static_cast<int>(M)), \"cublasSdgmm\");\n}\n")
    if kind == "symm":
        extra = r'''// Mirrors the stored upper triangle of the row-major B into a full matrix (cublasSsymm takes one symmetric
// operand; the other must be general).
__global__ void mirror_upper(const float* B, float* full, int64_t N) {
  const int64_t total = N * N;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = e / N, c = e % N;
    full[e] = r <= c ? B[e] : B[c * N + r];
  }
}
float* workspace(size_t floats) {   // grown on demand, kept for the process (first growth happens in a warm-up)
  static float* p = nullptr;
  static size_t have = 0;
  if (floats > have) {
    if (p) cudaFree(p);
    if (cudaMalloc(&p, floats * sizeof(float)) != cudaSuccess) std::abort();
    have = floats;
  }
  return p;
}
'''
        head = CUBLAS_HEAD.format(name=name, what="a mirror of B's stored triangle, then cublasSsymm.", extra=extra)
        return head + ('extern "C" void khive_launch(const float* A, const float* B, float* C, int64_t N, cudaStream_t stream) {\n'
                       "  if (N <= 0) return;\n"
                       "  cublasHandle_t h = handle();\n"
                       "  check(cublasSetStream(h, stream), \"cublasSetStream\");\n"
                       "  float* full = workspace(static_cast<size_t>(N) * N);\n"
                       "  const int64_t blocks = (N * N + 255) / 256;\n"
                       "  mirror_upper<<<static_cast<unsigned>(blocks < 65536 ? blocks : 65536), 256, 0, stream>>>(B, full, N);\n"
                       "  // Column-major: C^T = S(B) . S(A); A's stored upper triangle (row-major) is the lower one column-major.\n"
                       "  const float one = 1.0f, zero = 0.0f;\n"
                       "  const int n = static_cast<int>(N);\n"
                       "  check(cublasSsymm(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, n, n, &one, A, n, full, n, &zero, C, n), \"cublasSsymm\");\n}\n")
    if kind == "trmm":
        lo = g["lower"]
        keep = "r >= c" if lo else "r <= c"
        extra = f'''// Copies the stored triangle of the row-major B into C, zeros elsewhere: the right operand of the
// in-place cublasStrmm below.
__global__ void copy_triangle(const float* B, float* C, int64_t N) {{
  const int64_t total = N * N;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {{
    const int64_t r = e / N, c = e % N;
    C[e] = {keep} ? B[e] : 0.0f;
  }}
}}
'''
        fill_cm = "CUBLAS_FILL_MODE_UPPER" if lo else "CUBLAS_FILL_MODE_LOWER"
        head = CUBLAS_HEAD.format(name=name, what="the stored triangle of B copied into C, then an in-place cublasStrmm.", extra=extra)
        return head + ('extern "C" void khive_launch(const float* A, const float* B, float* C, int64_t N, cudaStream_t stream) {\n'
                       "  if (N <= 0) return;\n"
                       "  cublasHandle_t h = handle();\n"
                       "  check(cublasSetStream(h, stream), \"cublasSetStream\");\n"
                       "  const int64_t blocks = (N * N + 255) / 256;\n"
                       "  copy_triangle<<<static_cast<unsigned>(blocks < 65536 ? blocks : 65536), 256, 0, stream>>>(B, C, N);\n"
                       f"  // Column-major: C^T = T(B)^T . T(A)^T, and the row-major {'lower' if lo else 'upper'} A is {'upper' if lo else 'lower'} column-major.\n"
                       "  // The product of two such triangles keeps the structure, so the other triangle of C stays zero.\n"
                       "  const float one = 1.0f;\n"
                       "  const int n = static_cast<int>(N);\n"
                       f"  check(cublasStrmm(h, CUBLAS_SIDE_RIGHT, {fill_cm}, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n, n, &one, A, n, C, n, C, n),\n"
                       "        \"cublasStrmm\");\n}\n")
    raise ValueError(kind)

# ------------------------------------------------------------------------------------------ activations
# Elementwise tolerance. Exact-class ops (a select, a clamp, one or two roundings) are within 1-2 ulp of the
# double reference in any honest fp32 form; transcendental ones within a few ulp with libm or the CUDA
# intrinsics (__expf stays under ~1e-6 relative on these inputs), except where the formula cancels near zero
# output (GELU and ELU/SELU at negative x), which atol covers. bf16 (4e-3) and fp16 (5e-4) outputs, and 11-bit
# approximations such as tanh.approx.f32 (~5e-4), are rejected.
TOL_EXACT = {"atol": 1e-7, "rtol": 1e-6}
TOL_TRANS = {"atol": 1e-6, "rtol": 1e-5}
TOL_TEXT_EXACT = ("Tolerance atol = 1e-7, rtol = 1e-6: an honest fp32 form is within 1-2 ulp (6e-8 relative each) of "
                  "the double reference; bf16 or fp16 output (4e-3, 5e-4 relative) is rejected.")
TOL_TEXT_TRANS = ("Tolerance atol = 1e-6, rtol = 1e-5: fp32 libm or CUDA intrinsics (including __expf, a few ulp on "
                  "these inputs) stay under 1e-6 relative, and the cancellations of the formula near zero output stay "
                  "under atol; bf16 or fp16 output and 11-bit approximations (tanh.approx.f32, ~5e-4) are rejected.")

ACTS = [
    dict(kb=19, dir="kb19_relu", title="ReLU", expr="x > 0.0 ? x : 0.0", torch="torch.relu(x)", tol="exact",
         flops=1, what="y = max(x, 0)", ops="one compare/select per element"),
    dict(kb=20, dir="kb20_leaky_relu", title="LeakyReLU (negative slope 0.01)", expr="x > 0.0 ? x : 0.01 * x",
         torch="torch.nn.functional.leaky_relu(x, negative_slope=0.01)", tol="exact", flops=2,
         what="y = x if x > 0 else 0.01 * x", ops="a compare and a multiply per element"),
    dict(kb=21, dir="kb21_sigmoid", title="Sigmoid", expr="1.0 / (1.0 + exp(-x))", torch="torch.sigmoid(x)", tol="trans",
         flops=4, what="y = 1 / (1 + exp(-x))", ops="negate, exp, add, divide (a transcendental counted as one op)"),
    dict(kb=22, dir="kb22_tanh", title="Tanh", expr="tanh(x)", torch="torch.tanh(x)", tol="trans", flops=1,
         what="y = tanh(x)", ops="one transcendental per element, counted as one op"),
    dict(kb=25, dir="kb25_swish", title="Swish (SiLU)", expr="x / (1.0 + exp(-x))", torch="x * torch.sigmoid(x)", tol="trans",
         flops=5, what="y = x * sigmoid(x)", ops="negate, exp, add, divide, multiply"),
    dict(kb=26, dir="kb26_gelu", title="GELU (exact, erf form)", expr="0.5 * x * (1.0 + erf(x * 0.70710678118654752440))",
         torch="torch.nn.functional.gelu(x)", tol="trans", flops=5,
         what="y = 0.5 * x * (1 + erf(x / sqrt(2))) (torch.nn.functional.gelu's default, not the tanh approximation)",
         ops="multiply, erf, add, two multiplies"),
    dict(kb=27, dir="kb27_selu", title="SELU",
         expr="1.0507009873554804934193349852946 * (x > 0.0 ? x : 1.6732632423543772848170429916717 * expm1(x))",
         torch="torch.selu(x)", tol="trans", flops=4,
         what="y = scale * (x if x > 0 else alpha * (exp(x) - 1)), alpha = 1.6732632423543772848, scale = 1.0507009873554804934",
         ops="compare, exp, subtract, multiply (the second multiply folds into the constants)"),
    dict(kb=28, dir="kb28_hardsigmoid", title="HardSigmoid", expr="fmin(fmax(x + 3.0, 0.0), 6.0) / 6.0",
         torch="torch.nn.functional.hardsigmoid(x)", tol="exact", flops=4,
         what="y = relu6(x + 3) / 6 = min(max(x + 3, 0), 6) / 6 (torch's definition)", ops="add, max, min, divide",
         dist={"dist": "normal", "mean": 0.5, "std": 3.0},
         dist_text="Inputs x ~ N(0.5, 3) rather than N(0.5, 1), so that both clamps (x < -3, x > 3) are hit often, "
                   "even in small correctness workloads."),
    dict(kb=29, dir="kb29_softplus", title="Softplus (beta 1, threshold 20)", expr="x > 20.0 ? x : log1p(exp(x))",
         torch="torch.nn.functional.softplus(x)", tol="trans", flops=3,
         what="y = log(1 + exp(x)), and y = x where x > 20 (torch's beta = 1, threshold = 20)",
         ops="compare, exp, log1p",
         dist={"dist": "normal", "mean": 0.5, "std": 30.0},
         dist_text="Inputs x ~ N(0.5, 30) rather than N(0.5, 1): the threshold branch (x > 20) and inputs where a "
                   "plain fp32 exp overflows (x > 88.7) occur in every workload, while ~8% of inputs stay in the "
                   "curved region |x| < 3."),
    dict(kb=30, dir="kb30_softsign", title="Softsign", expr="x / (1.0 + fabs(x))", torch="torch.nn.functional.softsign(x)",
         tol="exact", flops=3, what="y = x / (1 + |x|)", ops="abs, add, divide"),
    dict(kb=31, dir="kb31_elu", title="ELU (alpha 1.0)", expr="x > 0.0 ? x : expm1(x)",
         torch="torch.nn.functional.elu(x, alpha=1.0)", tol="trans", flops=3,
         what="y = x if x > 0 else exp(x) - 1", ops="compare, exp, subtract"),
    dict(kb=32, dir="kb32_hardtanh", title="HardTanh [-1, 1]", expr="fmin(fmax(x, -1.0), 1.0)",
         torch="torch.nn.functional.hardtanh(x, min_val=-1.0, max_val=1.0)", tol="exact", flops=2,
         what="y = min(max(x, -1), 1)", ops="max and min"),
]
ROWS = [
    dict(kb=23, dir="kb23_softmax", title="Softmax over dim 1", torch="torch.softmax(x, dim=1)", log=False),
    dict(kb=24, dir="kb24_log_softmax", title="LogSoftmax over dim 1", torch="torch.log_softmax(x, dim=1)", log=True),
]

ELEM_CU = r'''// {name}, CUDA reference: {what}, elementwise over x[B, D].
// Computed in double and rounded once to fp32; grid-stride loop with 64-bit indices (B*D reaches 1.6e9).
namespace {{
__device__ __forceinline__ double op(double x) {{ return {expr}; }}

__global__ void ref_act(const float* x, float* y, int64_t total) {{
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[e] = static_cast<float>(op(static_cast<double>(x[e])));
}}
}}  // namespace

extern "C" void khive_launch(const float* x, float* y, int64_t B, int64_t D, cudaStream_t stream) {{
  const int64_t total = B * D;
  if (total <= 0) return;
  const int64_t blocks = (total + 255) / 256;
  ref_act<<<static_cast<unsigned>(blocks < 1048576 ? blocks : 1048576), 256, 0, stream>>>(x, y, total);
}}
'''
ELEM_CPP = r'''// {name}, CPU reference: {what}, elementwise over x[B, D], computed in double and rounded once to fp32.
#include <cmath>

static double op(double x) {{ return {expr}; }}

extern "C" void khive_launch(const float* x, float* y, int64_t B, int64_t D) {{
  const int64_t total = B * D;
#pragma omp parallel for
  for (int64_t e = 0; e < total; ++e) y[e] = static_cast<float>(op(static_cast<double>(x[e])));
}}
'''
ROW_CU = r'''// {name}, CUDA reference: {what} of every row of x[B, D].
// One 256-thread block per row: the row maximum, then the sum of exp(x - max) in double with a shared-memory
// tree, then each output from double and rounded once to fp32. Three passes over the row; simple on purpose.
namespace {{
__device__ __forceinline__ double block_reduce(double v, bool is_max, double* sh) {{
  sh[threadIdx.x] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {{
    if (threadIdx.x < s) sh[threadIdx.x] = is_max ? fmax(sh[threadIdx.x], sh[threadIdx.x + s]) : sh[threadIdx.x] + sh[threadIdx.x + s];
    __syncthreads();
  }}
  const double r = sh[0];
  __syncthreads();   // sh is reused by the next reduction
  return r;
}}

__global__ void __launch_bounds__(256) ref_rows(const float* x, float* y, int64_t D) {{
  __shared__ double sh[256];
  const float* xr = x + static_cast<int64_t>(blockIdx.x) * D;
  float* yr = y + static_cast<int64_t>(blockIdx.x) * D;
  double m = -INFINITY;
  for (int64_t j = threadIdx.x; j < D; j += blockDim.x) m = fmax(m, static_cast<double>(xr[j]));
  m = block_reduce(m, true, sh);
  double s = 0.0;
  for (int64_t j = threadIdx.x; j < D; j += blockDim.x) s += exp(static_cast<double>(xr[j]) - m);
  s = block_reduce(s, false, sh);
  {out_setup}
  for (int64_t j = threadIdx.x; j < D; j += blockDim.x) yr[j] = static_cast<float>({out_expr});
}}
}}  // namespace

extern "C" void khive_launch(const float* x, float* y, int64_t B, int64_t D, cudaStream_t stream) {{
  if (B <= 0 || D <= 0) return;
  ref_rows<<<static_cast<unsigned>(B), 256, 0, stream>>>(x, y, D);   // B <= 2^31 - 1 (a constraint)
}}
'''
ROW_CPP = r'''// {name}, CPU reference: {what} of every row of x[B, D]: max, then the sum of exp(x - max), both in
// double, each output rounded once to fp32. Rows are spread over threads with OpenMP.
#include <cmath>

extern "C" void khive_launch(const float* x, float* y, int64_t B, int64_t D) {{
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t r = 0; r < B; ++r) {{
    const float* xr = x + r * D;
    float* yr = y + r * D;
    double m = -INFINITY;
    for (int64_t j = 0; j < D; ++j) m = std::fmax(m, static_cast<double>(xr[j]));
    double s = 0.0;
    for (int64_t j = 0; j < D; ++j) s += std::exp(static_cast<double>(xr[j]) - m);
    {out_setup}
    for (int64_t j = 0; j < D; ++j) yr[j] = static_cast<float>({out_expr});
  }}
}}
'''

ACT_WORK_CORR = [{"B": 1, "D": 1}, {"B": 1, "D": 4097}, {"B": 3, "D": 1001}, {"B": 17, "D": 131}, {"B": 7, "D": 128}, {"B": 33, "D": 3}]
ACT_WORK_CUDA_CORR = [{"B": 129, "D": 65537}]
ACT_WORK_CPU_PERF = [{"B": 64, "D": 16384}]
ACT_WORK_CUDA_PERF = [{"B": 4096, "D": 393216}]
ROW_WORK_CORR = ACT_WORK_CORR + [{"B": 2, "D": 393216}]   # full-length rows, cheap on both backends

# ------------------------------------------------------------------------------------------------ writers

def uuid(axes):
    return "x".join(str(v) for v in axes.values())

def workload_lines(corr, cuda_corr, cpu_perf, cuda_perf, tol_for=None):
    lines = []
    def line(axes, role, backends, tag):
        w = {"uuid": f"{tag}-{uuid(axes)}", "axes": axes, "khive": {"role": role}}
        if backends:
            w["khive"]["backends"] = backends
        if tol_for:
            w["tolerance"] = tol_for(axes)
        lines.append(json.dumps(w))
    for a in corr: line(a, "correctness", None, "check")
    for a in cuda_corr: line(a, "correctness", ["cuda"], "check")
    for a in cpu_perf: line(a, "perf", ["cpu"], "perf-cpu")
    for a in cuda_perf: line(a, "perf", ["cuda"], "perf")
    return "\n".join(lines) + "\n"

def write(d, rel, text):
    p = os.path.join(HERE, d, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as f:
        f.write(text)

def definition(name, description, op_type, tags, axes, inputs, outputs, constraints, torch_src, khive):
    return json.dumps({
        "name": name, "description": description, "op_type": op_type, "tags": tags, "axes": axes,
        "inputs": {k: {"shape": v, "dtype": "float32"} for k, v in inputs.items()},
        "outputs": {k: {"shape": v, "dtype": "float32"} for k, v in outputs.items()},
        "constraints": constraints, "reference": "import torch\n\n\n" + torch_src, "khive": khive,
    }, indent=2) + "\n"

def gen_gemm(g):
    d = g["dir"]
    kaxis = g["K"]
    def tol_for(axes):
        if kaxis is None:
            return None
        return gemm_tol(axes[kaxis])
    if g.get("special") == "diag":
        tol = {"C": {"atol": 1e-7, "rtol": 1e-6}}
        tol_text = ("Tolerance atol = 1e-7, rtol = 1e-6: every output is one fp32 multiply, exact-rounded (PyTorch's "
                    "GEMM adds only exact zeros to it); bf16 or fp16 arithmetic is rejected.")
        dist, dist_text = None, "Inputs: the default N(0.5, 1) for A and B."
        wl = workload_lines(g["work_corr"], g["work_cuda_corr"], g["work_cpu_perf"], g["work_cuda_perf"])
        write(d, "reference.cu", DIAG_CU.format(name=d))
        write(d, "reference.cpp", DIAG_CPP.format(name=d))
    else:
        tol = {"C": gemm_tol(64)}
        tol_text = GEMM_TOL_TEXT
        dist, dist_text = GEMM_DIST, GEMM_DIST_TEXT
        wl = workload_lines(g["work_corr"], g["work_cuda_corr"], g["work_cpu_perf"], g["work_cuda_perf"], tol_for)
        write(d, "reference.cu", GEMM_CU.format(name=d, math=g["math"], load_a=g["load_a"], load_b=g["load_b"], store=g["store"],
                                                params=g["sig_cu"], prologue=g["prologue"]))
        write(d, "reference.cpp", GEMM_CPP.format(name=d, math=g["math"], params=g["sig_cpu"], prologue=g["prologue"],
                                                  cpu_a=g["cpu_a"], cpu_b=g["cpu_b"], cpu_store=g["cpu_store"]))
    write(d, "baselines/cublas.cu", cublas_source(g))
    desc = (f"KernelBench level 1 problem {g['kb']}: {g['title']}. {g['math']} fp32 inputs, outputs and arithmetic "
            f"(no TF32, no lower precision). Cost (least work, reviewed by hand): {g['cost_text']} {dist_text} {tol_text} "
            f"Workloads: small odd shapes checked on both backends, one mid-size shape checked on CUDA only, a small "
            f"perf shape for the CPU and KernelBench's shape for CUDA.")
    khive = {"cost": {"flops": g["flops"], "bytes": g["bytes"], "unit": "fp32"}, "tolerance": tol}
    if dist:
        khive["inputs"] = dist
    khive["policy"] = {"libraries": []}
    constraints = [f"{a} >= 1" for a in g["axes"]]
    write(d, "definition.json", definition(d, desc, "gemm", ["kernelbench:level1", f"kernelbench:{g['kb']}", "cutegen26", "fp32", "gemm"],
                                           g["axes"], g["inputs"], {"C": g["output"]}, constraints, g["torch"], khive))
    write(d, "workload.jsonl", wl)

def gen_act(a):
    d = a["dir"]
    tol = TOL_EXACT if a["tol"] == "exact" else TOL_TRANS
    tol_text = TOL_TEXT_EXACT if a["tol"] == "exact" else TOL_TEXT_TRANS
    dist_text = a.get("dist_text", "Inputs x ~ N(0.5, 1) (the non-zero-mean default): both signs, mostly |x| < 4.")
    write(d, "reference.cu", ELEM_CU.format(name=d, what=a["what"], expr=a["expr"]))
    write(d, "reference.cpp", ELEM_CPP.format(name=d, what=a["what"], expr=a["expr"]))
    desc = (f"KernelBench level 1 problem {a['kb']}: {a['title']}. {a['what']}, elementwise over x[B, D], fp32 in and out "
            f"(KernelBench: B = 4096, D = 393216, 6.4 GB per tensor). Cost (least work, reviewed by hand): flops: "
            f"{a['flops']}*B*D ({a['ops']}); bytes: read x once, write y once = 8*B*D. Memory-bound. {dist_text} {tol_text}")
    khive = {"cost": {"flops": f"{a['flops']} * B * D", "bytes": "8 * B * D", "unit": "fp32"}, "tolerance": {"y": tol}}
    if "dist" in a:
        khive["inputs"] = {"x": a["dist"]}
    khive["policy"] = {"libraries": []}
    write(d, "definition.json", definition(d, desc, "activation", ["kernelbench:level1", f"kernelbench:{a['kb']}", "cutegen26", "fp32", "elementwise"],
                                           {"B": {"type": "var"}, "D": {"type": "var"}}, {"x": ["B", "D"]}, {"y": ["B", "D"]},
                                           ["B >= 1", "D >= 1"], f"def run(x):\n    return {a['torch']}\n", khive))
    write(d, "workload.jsonl", workload_lines(ACT_WORK_CORR, ACT_WORK_CUDA_CORR, ACT_WORK_CPU_PERF, ACT_WORK_CUDA_PERF))

def gen_rows(r):
    d = r["dir"]
    if r["log"]:
        what = "log_softmax(x)[j] = x[j] - max - log(sum_k exp(x[k] - max))"
        out_setup, out_expr = "const double lse = m + log(s);", "static_cast<double>(xr[j]) - lse"
        out_setup_cpp = "const double lse = m + std::log(s);"
        tol = {"atol": 5e-5, "rtol": 1e-5}
        tol_text = ("Tolerance atol = 5e-5, rtol = 1e-5: outputs are about -log(D) - x spread (around -14 at D = 393216); "
                    "measured with tools/probe.cpp, an fp32 log-sum-exp with one sequential sum over a 393216-long row is "
                    "off by 1.5e-5 (tree sums by far less), so the margin is over 3x; bf16/fp16 output is rejected.")
        flops = "5 * B * D"
        ops = "max compare, subtract, exp, add into the sum, subtract the log-sum-exp; the per-row log is negligible"
    else:
        what = "softmax(x)[j] = exp(x[j] - max) / sum_k exp(x[k] - max)"
        out_setup, out_expr = "const double inv = 1.0 / s;", "exp(static_cast<double>(xr[j]) - m) * inv"
        out_setup_cpp = "const double inv = 1.0 / s;"
        tol = {"atol": 1e-10, "rtol": 5e-5}
        tol_text = ("Tolerance atol = 1e-10, rtol = 5e-5: outputs reach down to ~1e-8 at D = 393216, so the check is "
                    "relative (a near-uniform or zeroed output fails); measured with tools/probe.cpp, an fp32 softmax "
                    "with one sequential sum over a 393216-long row is off by 1.4e-5 relative (256-way partial sums by "
                    "3e-7), and __expf adds under 1e-6; bf16/fp16 output is rejected.")
        flops = "5 * B * D"
        ops = "max compare, subtract, exp, add into the sum, multiply by the reciprocal"
    cu_out = out_expr if r["log"] else out_expr
    write(d, "reference.cu", ROW_CU.format(name=d, what=what, out_setup=out_setup, out_expr=cu_out))
    write(d, "reference.cpp", ROW_CPP.format(name=d, what=what, out_setup=out_setup_cpp,
                                             out_expr=out_expr.replace("exp(", "std::exp(")))
    desc = (f"KernelBench level 1 problem {r['kb']}: {r['title']}. {what}, for each row of x[B, D], fp32 in and out "
            f"(KernelBench: B = 4096, D = 393216, 6.4 GB per tensor). Cost (least work, reviewed by hand): flops: "
            f"5*B*D ({ops}); bytes: read x once and write y once = 8*B*D (an online softmax can make one pass over "
            f"x; the reference makes three). Memory-bound. Inputs x ~ N(100, 1): a non-zero mean large enough that "
            f"exp(x) overflows fp32, so a kernel that skips the max subtraction fails (the result is shift-invariant, "
            f"so the values are those of N(0, 1) rows). {tol_text}")
    khive = {"cost": {"flops": flops, "bytes": "8 * B * D", "unit": "fp32"}, "tolerance": {"y": tol},
             "inputs": {"x": {"dist": "normal", "mean": 100.0, "std": 1.0}}, "policy": {"libraries": []}}
    write(d, "definition.json", definition(d, desc, "softmax", ["kernelbench:level1", f"kernelbench:{r['kb']}", "cutegen26", "fp32", "row-reduction"],
                                           {"B": {"type": "var"}, "D": {"type": "var"}}, {"x": ["B", "D"]}, {"y": ["B", "D"]},
                                           ["B >= 1", "D >= 1", "B <= 2147483647"], f"def run(x):\n    return {r['torch']}\n", khive))
    write(d, "workload.jsonl", workload_lines(ROW_WORK_CORR, ACT_WORK_CUDA_CORR, ACT_WORK_CPU_PERF, ACT_WORK_CUDA_PERF))

if __name__ == "__main__":
    for g in GEMMS:
        gen_gemm(g)
    for a in ACTS:
        gen_act(a)
    for r in ROWS:
        gen_rows(r)
    print(f"wrote {len(GEMMS)} GEMM and {len(ACTS) + len(ROWS)} activation tasks under {HERE}")
