// Shared by the GEMM templates whose CUTLASS epilogue has no bias (`// khive:include gemm_bias_pass.cuh`): one pass
// over C after the kernel, C = the binding's epilogue of (C, bias[column]) in place (the activation too, which the
// fused epilogue then leaves out).
__global__ void khive_bias_pass(khive_gemm_args g) {
  const int64_t mn = g.M * g.N, total = g.batch * mn;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t b = e / mn, i = (e % mn) / g.N, j = e % g.N;
    khive_t* c = g.C + khive_batch_at(g, b).c + i * g.ldc + j;
    *c = khive_from_float_t(khive_epi_at(khive_to_float_t(*c), g, j));
  }
}
