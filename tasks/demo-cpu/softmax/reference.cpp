// softmax, CPU reference: per row, the max, then exp(x - max) summed in double, then each exp divided
// by the sum, all in double and rounded once to fp32. Single-threaded and deliberately plain.
#include <cmath>

extern "C" void khive_launch(const float* x, float* y, int64_t B, int64_t D) {
  for (int64_t r = 0; r < B; ++r) {
    const float* xr = x + r * D;
    float* yr = y + r * D;
    double mx = xr[0];
    for (int64_t j = 1; j < D; ++j) mx = xr[j] > mx ? xr[j] : mx;
    double sum = 0.0;
    for (int64_t j = 0; j < D; ++j) sum += std::exp(static_cast<double>(xr[j]) - mx);
    for (int64_t j = 0; j < D; ++j) yr[j] = static_cast<float>(std::exp(static_cast<double>(xr[j]) - mx) / sum);
  }
}
