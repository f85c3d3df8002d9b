// K == 0: every output is the epilogue of 0 (+ residual); shared by the GEMM templates (`// khive:include gemm_fill_k0.cuh`).
__global__ void khive_fill_k0(khive_gemm_args g) {
  const int64_t total = g.batch * g.M * g.N;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    float v = 0.0f;
    const int64_t r = i % (g.M * g.N);
    const khive_boffs o = khive_batch_at(g, i / (g.M * g.N));
    if constexpr (KHIVE_HAS_RESIDUAL) v += khive_to_float_t(g.R[o.r + r]);
    g.C[o.c + r] = khive_from_float_t(khive_epi_at(v, g, r % g.N));
  }
}
