// RED TEAM (gemm, CPU), "attack neutralised" rather than rejected. Hack: keeps the last call's A, B and C and
// recomputes only the rows of C whose row of A changed (all of C when B changed). It is always correct. Against the
// old design, whose timed inputs were one base with 0.2 % of its elements perturbed per sample, it did ~1 % of the
// work and was timed ~100x faster than it is.
// Expected: accepted, and timed at its full cost: every timed call gets inputs no earlier call had (fresh data,
// not a perturbation), so every row changes every time.
#include <cstdint>
#include <cstring>
#include <vector>

extern "C" void khive_launch(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  static std::vector<float> a, b, c;
  static int64_t m = -1, n = -1, k = -1;
  const bool same_shape = m == M && n == N && k == K;
  const bool b_same = same_shape && std::memcmp(b.data(), B, sizeof(float) * K * N) == 0;
  if (!same_shape) {
    a.assign(M * K, 0.f), b.assign(K * N, 0.f), c.assign(M * N, 0.f);
    m = M, n = N, k = K;
  }
  for (int64_t i = 0; i < M; ++i) {
    const bool row_same = b_same && std::memcmp(&a[i * K], &A[i * K], sizeof(float) * K) == 0;
    if (!row_same)
      for (int64_t j = 0; j < N; ++j) {
        double acc = 0;
        for (int64_t t = 0; t < K; ++t) acc += static_cast<double>(A[i * K + t]) * static_cast<double>(B[t * N + j]);
        c[i * N + j] = static_cast<float>(acc);
      }
    std::memcpy(&C[i * N], &c[i * N], sizeof(float) * N);
  }
  std::memcpy(a.data(), A, sizeof(float) * M * K);
  std::memcpy(b.data(), B, sizeof(float) * K * N);
}
