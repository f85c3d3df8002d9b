// gemm candidate: transpose B once per call into Bt[N, K], then every C[i, j] is a unit-stride dot
// product of row i of A and row j of Bt, vectorized as an `omp simd` + reduction; (i, j) pairs in
// parallel. Different memory pattern and summation order from the i-k-j kernels.
#include <vector>

extern "C" void khive_launch(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  std::vector<float> bt(static_cast<std::size_t>(N * K));
#pragma omp parallel for schedule(static)
  for (int64_t j = 0; j < N; ++j)
    for (int64_t k = 0; k < K; ++k) bt[j * K + k] = B[k * N + j];
  const float* __restrict__ Bt = bt.data();
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      const float* __restrict__ a = A + i * K;
      const float* __restrict__ b = Bt + j * K;
      float s = 0.0f;
#pragma omp simd reduction(+ : s)
      for (int64_t k = 0; k < K; ++k) s += a[k] * b[k];
      C[i * N + j] = s;
    }
}
