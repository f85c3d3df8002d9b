// kb02_matmul_standard, precision shortcut (must be REJECTED): inputs rounded to TF32 (10 mantissa bits, round
// to nearest even) and accumulated in fp32, as a TF32 tensor-core GEMM does.
#include <cmath>
#include <cstdint>
#include <cstring>
static float tf32(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  u = (u + 0xfffu + ((u >> 13) & 1u)) & ~0x1fffu;
  std::memcpy(&x, &u, 4);
  return x;
}
extern "C" void khive_launch(const float* A, const float* B, float* C, int64_t M, int64_t K, int64_t N) {
#pragma omp parallel for
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float acc = 0.0f;
      for (int64_t k = 0; k < K; ++k) acc = std::fma(tf32(A[i * K + k]), tf32(B[k * N + j]), acc);
      C[i * N + j] = acc;
    }
}
