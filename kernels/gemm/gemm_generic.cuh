// Shared by the CUTLASS GEMM templates (`// khive:include gemm_generic.cuh`): the CUTLASS workspace, the K = 0 kernel
// and the generic path.

// The CUTLASS workspace (split-K semaphores, stream-K partials and locks).
// khive:include common/workspace.cuh

// khive:include gemm_fill_k0.cuh

// C's value at (i, j) of the batch entry at `bo` from the product's sum there: the residual added, then the binding's
// epilogue (bias, activation). Every template's own stores go through it.
__device__ __forceinline__ float khive_c_of(const khive_gemm_args& g, const khive_boffs& bo, int64_t i, int64_t j, float acc) {
  if constexpr (KHIVE_HAS_RESIDUAL) acc += khive_to_float_t(g.R[bo.r + i * g.N + j]);
  return khive_epi_at(acc, g, j);
}

// Generic path: a 64x64 output tile per block, 256 threads with a 4x4 micro-tile each, K in steps of 16 through
// shared memory, bounds-checked loads through the argument strides; the grid loops over what exceeds CUDA's limits.
constexpr int kGenT = 64, kGenK = 16;
__global__ void __launch_bounds__(256) khive_gemm_generic(khive_gemm_args g) {
  __shared__ float As[kGenK][kGenT];   // As[k][i]
  __shared__ float Bs[kGenK][kGenT];   // Bs[k][j]
  const int tr = threadIdx.x / 16, tc = threadIdx.x % 16;
  const int64_t mt = (g.M + kGenT - 1) / kGenT;
  for (int64_t bz = blockIdx.z; bz < g.batch; bz += gridDim.z)
    for (int64_t ty = blockIdx.y; ty < mt; ty += gridDim.y) {
      const int64_t m0 = ty * kGenT, n0 = int64_t(blockIdx.x) * kGenT;
      const khive_boffs bo = khive_batch_at(g, bz);   // batch entry bz's matrices
      const khive_t* A = g.A + bo.a;
      const khive_t* B = g.B + bo.b;
      float acc[4][4] = {};
      for (int64_t k0 = 0; k0 < g.K; k0 += kGenK) {
        for (int e = threadIdx.x; e < kGenK * kGenT; e += 256) {
          const int kk = e / kGenT, x = e % kGenT;
          const int64_t gk = k0 + kk, gi = m0 + x, gj = n0 + x;
          As[kk][x] = gk < g.K && gi < g.M ? khive_to_float_t(A[gi * g.a_rs + gk * g.a_cs]) : 0.0f;
          Bs[kk][x] = gk < g.K && gj < g.N ? khive_to_float_t(B[gk * g.b_rs + gj * g.b_cs]) : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < kGenK; ++kk)
#pragma unroll
          for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(As[kk][tr * 4 + i], Bs[kk][tc * 4 + j], acc[i][j]);
        __syncthreads();
      }
      for (int i = 0; i < 4; ++i) {
        const int64_t gi = m0 + tr * 4 + i;
        if (gi >= g.M) continue;
        for (int j = 0; j < 4; ++j) {
          const int64_t gj = n0 + tc * 4 + j;
          if (gj >= g.N) continue;
          g.C[bo.c + gi * g.ldc + gj] = khive_from_float_t(khive_c_of(g, bo, gi, gj, acc[i][j]));
        }
      }
    }
}

void khive_run_generic(const khive_gemm_args& g, cudaStream_t stream) {
  const int64_t gy = (g.M + kGenT - 1) / kGenT, gz = g.batch;
  const dim3 grid(unsigned((g.N + kGenT - 1) / kGenT), unsigned(gy < 65535 ? gy : 65535), unsigned(gz < 65535 ? gz : 65535));
  khive_gemm_generic<<<grid, 256, 0, stream>>>(g);
}
