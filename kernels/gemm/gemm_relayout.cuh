// Operand relayout for the fp32 SIMT GEMMs (`// khive:include gemm_relayout.cuh`): a K-contiguous operand (row-major
// A, column-major B) is copied into a workspace buffer contiguous along M (A) or N (B) before the mainloop. The
// SIMT mainloop multiplies a column of A by a row of B (an outer product per k), so it wants both M- and
// N-contiguous; a K-contiguous operand is transposed into shared memory by 4-byte stores instead (CUTLASS's
// transposing thread maps, with padding that restricts the tile depth). The copy moves the operand twice through
// DRAM (read, write; the GEMM then reads the copy): kb17's B (N x K = 4096 x 8192 fp32, 128 MB) costs ~256 MB of
// traffic, ~2-3 % of that GEMM, against a mainloop with no transposition at all. Whether it pays is the tuner's
// to measure (RELAYOUT_A / RELAYOUT_B).
//
// Needs: khive_gemm_args, khive_workspace (common/workspace.cuh) and khive_sm_count (common/device.cuh).

// dst[b * U * V + v * U + u] = src[b * sb + u * su + v * sv] for u < U, v < V, b < batch: a [U x V] operand,
// contiguous (usually) along v, written dense and contiguous along u. 32x32 tiles through shared memory (33
// columns: the column reads of the write phase hit 32 different banks), so the reads go along v and the writes
// along u, both coalesced. A grid-stride loop over the tiles: any size and batch fit one launch.
__global__ void __launch_bounds__(256) khive_relayout(const float* __restrict__ src, float* __restrict__ dst, int64_t U, int64_t V,
                                                      int64_t su, int64_t sv, int64_t sb, int64_t batch) {
  __shared__ float tile[32][33];
  const int64_t tiles_u = (U + 31) / 32, tiles_v = (V + 31) / 32, per_matrix = tiles_u * tiles_v;
  for (int64_t t = blockIdx.x; t < per_matrix * batch; t += gridDim.x) {
    const int64_t b = t / per_matrix, r = t % per_matrix, u0 = (r / tiles_v) * 32, v0 = (r % tiles_v) * 32;
    const float* s = src + b * sb;
#pragma unroll
    for (int i = threadIdx.y; i < 32; i += 8) {
      const int64_t u = u0 + i, v = v0 + threadIdx.x;
      if (u < U && v < V) tile[i][threadIdx.x] = s[u * su + v * sv];
    }
    __syncthreads();
    float* d = dst + b * U * V;
#pragma unroll
    for (int i = threadIdx.y; i < 32; i += 8) {
      const int64_t v = v0 + i, u = u0 + threadIdx.x;
      if (u < U && v < V) d[v * U + u] = tile[threadIdx.x][i];
    }
    __syncthreads();   // the next tile overwrites this one
  }
}

// Launches the copy of one operand ([U x V] per matrix, `batches` matrices) into workspace slot Slot; nullptr when
// the workspace cannot be had.
template <int Slot>
float* khive_relayout_into(const float* src, int64_t U, int64_t V, int64_t su, int64_t sv, int64_t sb, int64_t batches, cudaStream_t stream) {
  float* dst = static_cast<float*>(khive_workspace<Slot>(size_t(batches * U * V) * sizeof(float)));
  if (!dst) return nullptr;
  const int64_t tiles = ((U + 31) / 32) * ((V + 31) / 32) * batches, blocks_max = int64_t(khive_sm_count()) * 8;
  khive_relayout<<<unsigned(tiles < blocks_max ? tiles : blocks_max), dim3(32, 8), 0, stream>>>(src, dst, U, V, su, sv, sb, batches);
  return dst;
}

// Copies one operand, [U x V] per matrix with strides (u_stride, v_stride, batch_stride), into slot Slot and points
// the arguments at the copy: element (u, v) at u + v * U, batch stride U * V (or 0 when the batch shares one matrix).
template <int Slot>
bool khive_relayout_operand(const khive_t*& ptr, int64_t& u_stride, int64_t& v_stride, int64_t& batch_stride, int64_t U, int64_t V, int64_t batch,
                            cudaStream_t stream) {
  const int64_t batches = batch_stride ? batch : 1;
  float* copy = khive_relayout_into<Slot>(reinterpret_cast<const float*>(ptr), U, V, u_stride, v_stride, batch_stride, batches, stream);
  if (!copy) return false;
  ptr = copy;
  u_stride = 1;
  v_stride = U;
  batch_stride = batch_stride ? U * V : 0;
  return true;
}

// A becomes column-major: u = i (M, a_rs), v = k (K, a_cs); element (i, k) at i + k * M.
bool khive_relayout_a(khive_gemm_args& g, cudaStream_t stream) { return khive_relayout_operand<1>(g.A, g.a_rs, g.a_cs, g.a_bs, g.M, g.K, g.batch, stream); }

// B becomes row-major: u = j (N, b_cs), v = k (K, b_rs); element (k, j) at k * N + j.
bool khive_relayout_b(khive_gemm_args& g, cudaStream_t stream) { return khive_relayout_operand<2>(g.B, g.b_cs, g.b_rs, g.b_bs, g.N, g.K, g.batch, stream); }
