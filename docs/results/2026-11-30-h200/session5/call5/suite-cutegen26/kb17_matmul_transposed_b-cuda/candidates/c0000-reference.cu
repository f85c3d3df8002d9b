// kb17_matmul_transposed_b, CUDA reference: C[M, N] = A[M, K] . B[N, K]^T, row-major fp32 (B is stored N x K, as linear-layer weights are).
// Plain shared-memory tiling, accumulated in double (the fp64 units make a 4096^3 product take tens of
// milliseconds on an H200), each output rounded once to fp32. Bounds are checked everywhere, so any shape works.
namespace {
constexpr int TM = 64, TN = 64, TK = 16;   // output tile and K slice; 256 threads, 4x4 outputs each

// Element (i, k) of the left operand and (k, j) of the right one for batch b; zero outside the matrix.
__device__ __forceinline__ float load_a(const float* A, int64_t b, int64_t i, int64_t k, int64_t M, int64_t K) {
  if (i >= M || k >= K) return 0.0f;
  return A[(b * M + i) * K + k];
}
__device__ __forceinline__ float load_b(const float* B, int64_t b, int64_t k, int64_t j, int64_t K, int64_t N) {
  if (k >= K || j >= N) return 0.0f;
  return B[j * K + k];
}

__global__ void __launch_bounds__(256) ref_gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  __shared__ float As[TK][TM];
  __shared__ float Bs[TK][TN];
  const int64_t b = blockIdx.z;
  const int64_t i0 = static_cast<int64_t>(blockIdx.y) * TM, j0 = static_cast<int64_t>(blockIdx.x) * TN;
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  double acc[4][4] = {};
  for (int64_t k0 = 0; k0 < K; k0 += TK) {
    for (int e = threadIdx.x; e < TK * TM; e += 256) {   // e -> (kk, r): consecutive threads take consecutive k
      const int kk = e % TK, r = e / TK;
      As[kk][r] = load_a(A, b, i0 + r, k0 + kk, M, K);
    }
    for (int e = threadIdx.x; e < TK * TN; e += 256) {   // e -> (kk, c): consecutive threads take consecutive j
      const int c = e % TN, kk = e / TN;
      Bs[kk][c] = load_b(B, b, k0 + kk, j0 + c, K, N);
    }
    __syncthreads();
    for (int kk = 0; kk < TK; ++kk)
      for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c)
          acc[r][c] += static_cast<double>(As[kk][ty + 16 * r]) * static_cast<double>(Bs[kk][tx + 16 * c]);
    __syncthreads();
  }
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) {
      const int64_t i = i0 + ty + 16 * r, j = j0 + tx + 16 * c;
      if (i < M && j < N) C[(b * M + i) * N + j] = static_cast<float>(acc[r][c]);
    }
}
}  // namespace

extern "C" void khive_launch(const float* A, const float* B, float* C, int64_t M, int64_t K, int64_t N, cudaStream_t stream) {
  const int64_t batch = 1;
  if (M <= 0 || N <= 0 || batch <= 0) return;
  const dim3 grid(static_cast<unsigned>((N + TN - 1) / TN), static_cast<unsigned>((M + TM - 1) / TM), static_cast<unsigned>(batch));
  ref_gemm<<<grid, 256, 0, stream>>>(A, B, C, M, N, K);
}
