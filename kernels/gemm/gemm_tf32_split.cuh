// Shared by the 3xTF32 templates written here (`// khive:include gemm_tf32_split.cuh`): an fp32 value as the sum of
// two TF32 values, big = tf32_rn(x) and small = tf32_rn(x - big) (x - big is exact in fp32), as the bits an MMA reads.
// small*big + big*small + big*big then keeps fp32-level accuracy (small*small, < 2^-22 of a product, dropped).
__device__ __forceinline__ uint32_t khive_tf32_rn(float x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ void khive_tf32_split(float x, uint32_t& big, uint32_t& small) {
  big = khive_tf32_rn(x);
  small = khive_tf32_rn(x - __uint_as_float(big));
}

// The Sm90 templates' pre-pass: an operand of rows x K (element (r, k) at src[z * s_batch + r * s_row + k * s_k]) as
// TF32 pieces, K-contiguous, piece p of row r of batch entry z at dst[z * z_pitch + r * r_pitch + p * piece_pitch + k]
// (k in [K, KP) and rows in [rows, rows_out) zero). kOrder 0: small | big | big (gemm.cuda_sm90_3xtf32's A'),
// 1: big | small | big (its B'), 2: big | small (gemm.cuda_sm90_rs3xtf32's two planes of B). 32 x 32 tiles through
// shared memory, read along whichever of r and k is contiguous and written along k, so both a K-contiguous and a
// transposed operand stream at full width.
template <int kOrder>
__global__ void __launch_bounds__(256) khive_split_pieces(const float* __restrict__ src, int64_t rows, int64_t rows_out, int64_t K,
                                                          int64_t s_row, int64_t s_k, int64_t s_batch, int64_t batch, int64_t KP,
                                                          int64_t z_pitch, int64_t r_pitch, int64_t piece_pitch, float* __restrict__ dst) {
  __shared__ float tile[32][33];
  const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;
  const int64_t row_tiles = (rows_out + 31) / 32, k_tiles = (KP + 31) / 32;
  const bool k_contig = s_k == 1;
  for (int64_t z = blockIdx.z; z < batch; z += gridDim.z)
    for (int64_t rt = blockIdx.y; rt < row_tiles; rt += gridDim.y)
      for (int64_t kt = blockIdx.x; kt < k_tiles; kt += gridDim.x) {
        const int64_t r0 = rt * 32, k0 = kt * 32;
        const float* s = src + z * s_batch;
        for (int i = ty; i < 32; i += 8) {
          // k-contiguous: lanes along k; otherwise lanes along r (the stored direction), transposed in shared memory.
          const int64_t r = r0 + (k_contig ? i : tx), k = k0 + (k_contig ? tx : i);
          const float v = r < rows && k < K ? s[r * s_row + k * s_k] : 0.0f;
          if (k_contig) tile[i][tx] = v;
          else tile[tx][i] = v;
        }
        __syncthreads();
        for (int i = ty; i < 32; i += 8) {
          const int64_t r = r0 + i, k = k0 + tx;
          if (r < rows_out && k < KP) {   // rows in [rows, rows_out) were loaded as zeros: the padding rows
            uint32_t bb, sb;
            khive_tf32_split(tile[i][tx], bb, sb);
            const float big = __uint_as_float(bb), small = __uint_as_float(sb);
            float* d = dst + z * z_pitch + r * r_pitch + k;
            d[0] = kOrder == 0 ? small : big;
            d[piece_pitch] = kOrder == 0 ? big : small;
            if constexpr (kOrder != 2) d[2 * piece_pitch] = big;
          }
        }
        __syncthreads();
      }
}

template <int kOrder>
void khive_split_pieces_launch(const float* src, int64_t rows, int64_t rows_out, int64_t K, int64_t s_row, int64_t s_k,
                               int64_t s_batch, int64_t batch, int64_t KP, int64_t z_pitch, int64_t r_pitch, int64_t piece_pitch,
                               float* dst, cudaStream_t stream) {
  const int64_t kt = (KP + 31) / 32, rt = (rows_out + 31) / 32;
  const dim3 grid(unsigned(kt < 0x7fffffff ? kt : 0x7fffffff), unsigned(rt < 65535 ? rt : 65535), unsigned(batch < 65535 ? batch : 65535));
  khive_split_pieces<kOrder><<<grid, 256, 0, stream>>>(src, rows, rows_out, K, s_row, s_k, s_batch, batch, KP, z_pitch, r_pitch,
                                                       piece_pitch, dst);
}
