// gemm_bf16, CPU reference: Y[m, n] = bf16(sum_k X[m, k]·W[n, k]); each dot product summed in double (both
// operands K-contiguous) and rounded once. Rows in parallel.
extern "C" void khive_launch(const khive_bf16* X, const khive_bf16* W, khive_bf16* Y, int64_t M, int64_t N, int64_t K) {
#pragma omp parallel for schedule(static)
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0.0;
      for (int64_t k = 0; k < K; ++k)
        acc += static_cast<double>(khive_bf16_to_float(X[m * K + k])) * khive_bf16_to_float(W[n * K + k]);
      Y[m * N + n] = khive_float_to_bf16(static_cast<float>(acc));
    }
}
