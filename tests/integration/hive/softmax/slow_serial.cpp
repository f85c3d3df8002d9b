// Planted correct but slow kernel: one thread, the max and the sum recomputed in plain scalar loops,
// and the exponentials computed twice. Correct (a backup at best), never the leader.
#include <cmath>

extern "C" void khive_launch(const float* x, float* y, int64_t B, int64_t D) {
  for (int64_t r = 0; r < B; ++r) {
    const float* xr = x + r * D;
    double mx = xr[0];
    for (int64_t j = 1; j < D; ++j) mx = xr[j] > mx ? xr[j] : mx;
    double sum = 0.0;
    for (int64_t j = 0; j < D; ++j) sum += std::exp(static_cast<double>(xr[j]) - mx);
    for (int64_t j = 0; j < D; ++j) y[r * D + j] = static_cast<float>(std::exp(static_cast<double>(xr[j]) - mx) / sum);
  }
}
