// gemm, CUDA reference: one thread per C element (2-D grid, x over columns), the dot product over K
// accumulated in double and rounded once to fp32. Row-major A[M, K], B[K, N], C[M, N].
namespace {
__global__ void ref_gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  const int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t i = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
  if (i >= M || j >= N) return;
  double acc = 0.0;
  for (int64_t k = 0; k < K; ++k) acc += static_cast<double>(A[i * K + k]) * static_cast<double>(B[k * N + j]);
  C[i * N + j] = static_cast<float>(acc);
}
}  // namespace

extern "C" void khive_launch(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K,
                             cudaStream_t stream) {
  if (M <= 0 || N <= 0) return;
  const dim3 threads(16, 16);
  const dim3 blocks(static_cast<unsigned>((N + 15) / 16), static_cast<unsigned>((M + 15) / 16));
  ref_gemm<<<blocks, threads, 0, stream>>>(A, B, C, M, N, K);
}
