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

// A becomes column-major (element (i, k) at i + k * M, batch stride M * K, or 0 when the batch shares one A).
bool khive_relayout_a(khive_gemm_args& g, cudaStream_t stream) {
  const int64_t batches = g.a_bs ? g.batch : 1;
  float* a = khive_relayout_into<1>(reinterpret_cast<const float*>(g.A), g.M, g.K, g.a_rs, g.a_cs, g.a_bs, batches, stream);
  if (!a) return false;
  g.A = a;
  g.a_rs = 1;
  g.a_cs = g.M;
  g.a_bs = g.a_bs ? g.M * g.K : 0;
  return true;
}

// B becomes row-major (element (k, j) at k * N + j, batch stride K * N, or 0 when the batch shares one B).
bool khive_relayout_b(khive_gemm_args& g, cudaStream_t stream) {
  const int64_t batches = g.b_bs ? g.batch : 1;
  float* b = khive_relayout_into<2>(reinterpret_cast<const float*>(g.B), g.N, g.K, g.b_cs, g.b_rs, g.b_bs, batches, stream);
  if (!b) return false;
  g.B = b;
  g.b_rs = g.N;
  g.b_cs = 1;
  g.b_bs = g.b_bs ? g.K * g.N : 0;
  return true;
}
