// gemm_bf16, CUDA reference: Y = bf16(X·W^T) with a plain shared-memory tiled kernel, fp32 accumulation.
// A 256-thread block computes a 64x64 tile of Y, each thread a 4x4 patch; K is walked in slices of 16 staged
// through shared memory (X rows and W rows, both K-contiguous). Every load and store is bounds-checked, so any
// M, N, K works; the fp32 sum is rounded to bf16 once.
namespace {
constexpr int kTile = 64, kSlice = 16, kThreads = 256;

__global__ void __launch_bounds__(kThreads) ref_gemm_bf16(const __nv_bfloat16* X, const __nv_bfloat16* W,
                                                          __nv_bfloat16* Y, int64_t M, int64_t N, int64_t K) {
  __shared__ float xs[kSlice][kTile + 1];   // xs[k][row]; +1 avoids bank conflicts on the transposed store
  __shared__ float ws[kSlice][kTile + 1];   // ws[k][col]
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * kTile, col0 = static_cast<int64_t>(blockIdx.x) * kTile;
  float acc[4][4] = {};
  for (int64_t k0 = 0; k0 < K; k0 += kSlice) {
    for (int e = threadIdx.x; e < kTile * kSlice; e += kThreads) {
      const int r = e / kSlice, kk = e % kSlice;   // consecutive threads read consecutive k of one row
      const int64_t gr = row0 + r, gc = col0 + r, gk = k0 + kk;
      xs[kk][r] = (gr < M && gk < K) ? __bfloat162float(X[gr * K + gk]) : 0.0f;
      ws[kk][r] = (gc < N && gk < K) ? __bfloat162float(W[gc * K + gk]) : 0.0f;
    }
    __syncthreads();
    for (int kk = 0; kk < kSlice; ++kk) {
      float a[4], b[4];
      for (int i = 0; i < 4; ++i) a[i] = xs[kk][ty * 4 + i];
      for (int j = 0; j < 4; ++j) b[j] = ws[kk][tx * 4 + j];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int64_t r = row0 + ty * 4 + i, c = col0 + tx * 4 + j;
      if (r < M && c < N) Y[r * N + c] = __float2bfloat16(acc[i][j]);
    }
}
}  // namespace

extern "C" void khive_launch(const __nv_bfloat16* X, const __nv_bfloat16* W, __nv_bfloat16* Y, int64_t M, int64_t N,
                             int64_t K, cudaStream_t stream) {
  if (M <= 0 || N <= 0) return;
  const dim3 blocks(static_cast<unsigned>((N + kTile - 1) / kTile), static_cast<unsigned>((M + kTile - 1) / kTile));
  ref_gemm_bf16<<<blocks, kThreads, 0, stream>>>(X, W, Y, M, N, K);
}
