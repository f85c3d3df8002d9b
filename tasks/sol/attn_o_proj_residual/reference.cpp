// attn_o_proj_residual, CPU reference: out[t, n] = bf16(sum_c O[t, c]·Wo[n, c] + residual[t, n]), c < H·D;
// each dot product summed in double, the residual added in double, rounded once. Rows in parallel.
extern "C" void khive_launch(const khive_bf16* O, const khive_bf16* Wo, const khive_bf16* residual, khive_bf16* out,
                             int64_t T, int64_t H, int64_t D, int64_t hidden) {
  const int64_t K = H * D;
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < T; ++t)
    for (int64_t n = 0; n < hidden; ++n) {
      double acc = 0.0;
      for (int64_t c = 0; c < K; ++c)
        acc += static_cast<double>(khive_bf16_to_float(O[t * K + c])) * khive_bf16_to_float(Wo[n * K + c]);
      out[t * hidden + n] = khive_float_to_bf16(static_cast<float>(acc + khive_bf16_to_float(residual[t * hidden + n])));
    }
}
