// Masked cumsum along the last axis, CPU reference: y[b, n] = sum over k <= n of x[b, k] where mask[b, k], summed in
// double and rounded once. Single-threaded and deliberately plain.
#include <cstdint>

extern "C" void khive_launch(const float* x, const bool* mask, float* y, int64_t B, int64_t N) {
  for (int64_t b = 0; b < B; ++b) {
    double acc = 0.0;
    for (int64_t n = 0; n < N; ++n) {
      if (mask[b * N + n]) acc += x[b * N + n];
      y[b * N + n] = static_cast<float>(acc);
    }
  }
}
