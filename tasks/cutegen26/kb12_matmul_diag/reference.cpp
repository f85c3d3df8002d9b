// kb12_matmul_diag, CPU reference: C[i, j] = A[i] * B[i, j] (diag(A) . B without forming the diagonal matrix).
extern "C" void khive_launch(const float* A, const float* B, float* C, int64_t N, int64_t M) {
#pragma omp parallel for
  for (int64_t i = 0; i < N; ++i)
    for (int64_t j = 0; j < M; ++j) C[i * M + j] = A[i] * B[i * M + j];
}
