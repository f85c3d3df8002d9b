// kb13_matmul_symmetric, CPU reference: C[N, N] = S(A) . S(B), where the symmetric operands are stored as their upper triangles, BLAS style: S(X)[i, k] = X[min(i, k), max(i, k)]. Entries of A and B below the diagonal are not part of the input (they hold arbitrary values and must not be read as data). KernelBench feeds symmetric matrices ((R + R^T) / 2) to a plain matmul; this is the same product, and a kernel may use the symmetry (read either triangle of the stored data through S).
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
        const double a = static_cast<double>(i <= k ? A[i * K + k] : A[k * K + i]);
        if (a == 0.0) continue;
        for (int64_t j = 0; j < N; ++j) acc[j] += a * static_cast<double>((k <= j ? B[k * N + j] : B[j * N + k]));
      }
      for (int64_t j = 0; j < N; ++j) C[(b * M + i) * N + j] = static_cast<float>(acc[j]);
    }
  }
}
