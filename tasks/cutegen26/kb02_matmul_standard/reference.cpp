// kb02_matmul_standard, CPU reference: C[M, N] = A[M, K] . B[K, N], row-major fp32.
// Each row of C is accumulated in double (i-k-j order, so the inner loop walks rows of B) and rounded once
// to fp32; rows are spread over threads with OpenMP.
#include <vector>

extern "C" void khive_launch(const float* A, const float* B, float* C, int64_t M, int64_t K, int64_t N) {
  const int64_t batch = 1;
  for (int64_t b = 0; b < batch; ++b) {
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t i = 0; i < M; ++i) {
      std::vector<double> acc(static_cast<size_t>(N), 0.0);
      for (int64_t k = 0; k < K; ++k) {
        const double a = static_cast<double>(A[i * K + k]);
        if (a == 0.0) continue;
        for (int64_t j = 0; j < N; ++j) acc[j] += a * static_cast<double>(B[k * N + j]);
      }
      for (int64_t j = 0; j < N; ++j) C[(b * M + i) * N + j] = static_cast<float>(acc[j]);
    }
  }
}
