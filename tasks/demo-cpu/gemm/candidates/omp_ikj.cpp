// gemm candidate: rows of C in parallel; each row built in i-k-j order, C[i, :] += A[i, k]·B[k, :],
// so the inner loop streams a row of B and a row of C with unit stride and vectorizes. fp32 accumulation.
extern "C" void khive_launch(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < M; ++i) {
    float* __restrict__ c = C + i * N;
    for (int64_t j = 0; j < N; ++j) c[j] = 0.0f;
    for (int64_t k = 0; k < K; ++k) {
      const float a = A[i * K + k];
      const float* __restrict__ b = B + k * N;
#pragma omp simd
      for (int64_t j = 0; j < N; ++j) c[j] += a * b[j];
    }
  }
}
