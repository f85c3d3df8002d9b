// kb23_softmax, numerically unstable (must be REJECTED): exp(x) without subtracting the row maximum
// overflows fp32 for x > 88.7, which the task's N(100, 1) inputs always exceed.
#include <cmath>
extern "C" void khive_launch(const float* x, float* y, int64_t B, int64_t D) {
  for (int64_t r = 0; r < B; ++r) {
    float s = 0.0f;
    for (int64_t j = 0; j < D; ++j) s += std::exp(x[r * D + j]);
    for (int64_t j = 0; j < D; ++j) y[r * D + j] = std::exp(x[r * D + j]) / s;
  }
}
