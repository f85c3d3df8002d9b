// attn_o_proj_residual, CUDA reference: out = bf16(O·Wo^T + residual), the GEMM of gemm_residual with
// M = T, N = hidden, K = H·D: a plain shared-memory tiled kernel with fp32 accumulation. A 256-thread block
// computes a 64x64 output tile, each thread a 4x4 patch; K is walked in slices of 16 staged through shared
// memory (O rows and Wo rows, both K-contiguous). Bounds are checked on every load and store. The residual
// is added in fp32 and the sum rounded once.
namespace {
constexpr int kTile = 64, kSlice = 16, kThreads = 256;

__global__ void __launch_bounds__(kThreads) ref_gemm_residual(const __nv_bfloat16* X, const __nv_bfloat16* W,
                                                              const __nv_bfloat16* R, __nv_bfloat16* Y, int64_t M,
                                                              int64_t N, int64_t K) {
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
      if (r < M && c < N) Y[r * N + c] = __float2bfloat16(acc[i][j] + __bfloat162float(R[r * N + c]));
    }
}
}  // namespace

extern "C" void khive_launch(const __nv_bfloat16* O, const __nv_bfloat16* Wo, const __nv_bfloat16* residual,
                             __nv_bfloat16* out, int64_t T, int64_t H, int64_t D, int64_t hidden, cudaStream_t stream) {
  const int64_t M = T, N = hidden, K = H * D;
  if (M <= 0 || N <= 0) return;
  const dim3 blocks(static_cast<unsigned>((N + kTile - 1) / kTile), static_cast<unsigned>((M + kTile - 1) / kTile));
  ref_gemm_residual<<<blocks, kThreads, 0, stream>>>(O, Wo, residual, out, M, N, K);
}
