// gemm_residual, honest CPU candidate: fp32 sequential dot products, the GEMM result rounded to bf16 and
// then the residual added and rounded again (the unfused order the tolerance's atol = 0.0625 is sized for;
// accepted with 10 seeds on 2026-11-30); the reference rounds once.
extern "C" void khive_launch(const khive_bf16* X, const khive_bf16* W, const khive_bf16* R, khive_bf16* Y, int64_t M,
                             int64_t N, int64_t K) {
#pragma omp parallel for schedule(static)
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      float acc = 0.0f;
      for (int64_t k = 0; k < K; ++k)
        acc += khive_bf16_to_float(X[m * K + k]) * khive_bf16_to_float(W[n * K + k]);
      const float p = khive_bf16_to_float(khive_float_to_bf16(acc));   // unfused: GEMM output rounded to bf16 first
      Y[m * N + n] = khive_float_to_bf16(p + khive_bf16_to_float(R[m * N + n]));
    }
}
