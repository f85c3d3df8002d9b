// kb12_matmul_diag, CUDA reference: C[i, j] = A[i] * B[i, j] (diag(A) . B without forming the diagonal matrix).
// One thread per output element (grid-stride, 64-bit indices); a single fp32 multiply is exact-rounded, as
// the GEMM PyTorch runs (all other terms are 0 * b = 0) is.
namespace {
__global__ void ref_diag(const float* A, const float* B, float* C, int64_t N, int64_t M) {
  const int64_t total = N * M;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x)
    C[e] = A[e / M] * B[e];
}
}  // namespace

extern "C" void khive_launch(const float* A, const float* B, float* C, int64_t N, int64_t M, cudaStream_t stream) {
  if (N <= 0 || M <= 0) return;
  const int64_t blocks = (N * M + 255) / 256;
  ref_diag<<<static_cast<unsigned>(blocks < 65536 ? blocks : 65536), 256, 0, stream>>>(A, B, C, N, M);
}
