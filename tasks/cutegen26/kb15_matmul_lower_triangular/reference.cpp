// kb15_matmul_lower_triangular, CPU reference: C[N, N] = tril(tril(A) . tril(B)): A and B are lower triangular; entries above the diagonal are not part of the input (they hold arbitrary values and must be ignored) and C's are written as zeros. KernelBench feeds tril(rand) matrices and returns torch.tril(A @ B); this is the same product, and a kernel may use the structure (C[i, j] only needs k between i and j).
// Each row of C is accumulated in double (i-k-j order, so the inner loop walks rows of B) and rounded once
// to fp32; rows are spread over threads with OpenMP.
#include <vector>

extern "C" void khive_launch(const float* A, const float* B, float* C, int64_t N) {
  const int64_t M = N, K = N, batch = 1;
  for (int64_t b = 0; b < batch; ++b) {
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t i = 0; i < M; ++i) {
      std::vector<double> acc(static_cast<size_t>(N), 0.0);
      for (int64_t k = 0; k < K; ++k) {
        const double a = k <= i ? static_cast<double>(A[i * K + k]) : 0.0;
        if (a == 0.0) continue;
        for (int64_t j = 0; j < N; ++j) acc[j] += a * static_cast<double>((j <= k ? B[k * N + j] : 0.0f));
      }
      for (int64_t j = 0; j < N; ++j) C[(b * M + i) * N + j] = j <= i ? static_cast<float>(acc[j]) : 0.0f;
    }
  }
}
