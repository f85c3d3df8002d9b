// gemm, CPU reference: C[i, j] = sum_k A[i, k]·B[k, j], row-major, each dot product accumulated in
// double and rounded once to fp32. Plain i-j-k loops, single-threaded.
extern "C" void khive_launch(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0.0;
      for (int64_t k = 0; k < K; ++k) acc += static_cast<double>(A[i * K + k]) * static_cast<double>(B[k * N + j]);
      C[i * N + j] = static_cast<float>(acc);
    }
}
