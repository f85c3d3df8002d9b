// kb02_matmul_standard, honest fp32 (must be ACCEPTED): one sequential fp32 fma chain per output, the worst
// honest summation order the tolerance was sized for.
#include <cmath>
extern "C" void khive_launch(const float* A, const float* B, float* C, int64_t M, int64_t K, int64_t N) {
#pragma omp parallel for
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float acc = 0.0f;
      for (int64_t k = 0; k < K; ++k) acc = std::fma(A[i * K + k], B[k * N + j], acc);
      C[i * N + j] = acc;
    }
}
