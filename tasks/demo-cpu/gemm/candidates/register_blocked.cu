// gemm candidate (CUDA): 64 x 64 C tile per block of 256 threads, each thread holding a 4 x 4 register
// tile (rows ty + 16·r, columns tx + 16·c, so shared-memory reads are conflict-free). K advances in
// steps of 16: the block stages A[64 x 16] and B[16 x 64] in shared memory, zero-filled past the
// edges; only in-range elements of C are stored. fp32 accumulation with FMA.
namespace {
constexpr int kBM = 64, kBN = 64, kBK = 16;

__global__ void __launch_bounds__(256) gemm_register_tile(const float* __restrict__ A, const float* __restrict__ B,
                                                          float* __restrict__ C, int64_t M, int64_t N, int64_t K) {
  __shared__ float As[kBK][kBM + 4];   // stored transposed: As[k][m]
  __shared__ float Bs[kBK][kBN + 4];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16, tid = threadIdx.x;
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * kBM, n0 = static_cast<int64_t>(blockIdx.x) * kBN;
  float acc[4][4] = {};
  for (int64_t k0 = 0; k0 < K; k0 += kBK) {
    for (int e = tid; e < kBM * kBK; e += 256) {   // A tile: 64 rows x 16 k
      const int m = e / kBK, k = e % kBK;
      const int64_t gm = m0 + m, gk = k0 + k;
      As[k][m] = (gm < M && gk < K) ? A[gm * K + gk] : 0.0f;
    }
    for (int e = tid; e < kBK * kBN; e += 256) {   // B tile: 16 k x 64 columns
      const int k = e / kBN, n = e % kBN;
      const int64_t gk = k0 + k, gn = n0 + n;
      Bs[k][n] = (gk < K && gn < N) ? B[gk * N + gn] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kBK; ++k) {
      float a[4], b[4];
#pragma unroll
      for (int r = 0; r < 4; ++r) a[r] = As[k][ty + 16 * r];
#pragma unroll
      for (int c = 0; c < 4; ++c) b[c] = Bs[k][tx + 16 * c];
#pragma unroll
      for (int r = 0; r < 4; ++r)
#pragma unroll
        for (int c = 0; c < 4; ++c) acc[r][c] = fmaf(a[r], b[c], acc[r][c]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int r = 0; r < 4; ++r)
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const int64_t gm = m0 + ty + 16 * r, gn = n0 + tx + 16 * c;
      if (gm < M && gn < N) C[gm * N + gn] = acc[r][c];
    }
}
}  // namespace

extern "C" void khive_launch(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K,
                             cudaStream_t stream) {
  if (M <= 0 || N <= 0) return;
  const dim3 blocks(static_cast<unsigned>((N + kBN - 1) / kBN), static_cast<unsigned>((M + kBM - 1) / kBM));
  gemm_register_tile<<<blocks, 256, 0, stream>>>(A, B, C, M, N, K);
}
