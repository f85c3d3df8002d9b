// Planted wrong kernel: skips the max subtraction, so exp(x) overflows on the task's inputs (mean 100):
// inf/NaN outputs, which the guard's correctness check must reject.
#include <cmath>

extern "C" void khive_launch(const float* x, float* y, int64_t B, int64_t D) {
  for (int64_t r = 0; r < B; ++r) {
    float sum = 0.0f;
    for (int64_t j = 0; j < D; ++j) sum += std::exp(x[r * D + j]);
    for (int64_t j = 0; j < D; ++j) y[r * D + j] = std::exp(x[r * D + j]) / sum;
  }
}
