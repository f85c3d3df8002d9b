// gemm candidate (CUDA): classic shared-memory tiling. A 32 x 32 block of threads computes a 32 x 32
// tile of C; the K loop walks 32-wide tiles of A and B staged in shared memory (zero-filled past the
// matrix edges, so M, N, K need not be multiples of 32). fp32 accumulation with FMA.
namespace {
constexpr int kT = 32;

__global__ void gemm_smem_tile(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                               int64_t M, int64_t N, int64_t K) {
  __shared__ float As[kT][kT];
  __shared__ float Bs[kT][kT + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t row = static_cast<int64_t>(blockIdx.y) * kT + ty;
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kT + tx;
  float acc = 0.0f;
  for (int64_t k0 = 0; k0 < K; k0 += kT) {
    As[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
    Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * N + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kT; ++k) acc = fmaf(As[ty][k], Bs[k][tx], acc);
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}
}  // namespace

extern "C" void khive_launch(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K,
                             cudaStream_t stream) {
  if (M <= 0 || N <= 0) return;
  const dim3 threads(kT, kT);
  const dim3 blocks(static_cast<unsigned>((N + kT - 1) / kT), static_cast<unsigned>((M + kT - 1) / kT));
  gemm_smem_tile<<<blocks, threads, 0, stream>>>(A, B, C, M, N, K);
}
