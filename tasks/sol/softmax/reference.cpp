// softmax, CPU reference: per row, the max, sum exp(x - max) in double, each exp divided by the sum in
// double and rounded once to bf16. Rows in parallel.
#include <cmath>

extern "C" void khive_launch(const khive_bf16* x, khive_bf16* y, int64_t R, int64_t C) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < R; ++r) {
    const khive_bf16* xr = x + r * C;
    khive_bf16* yr = y + r * C;
    double m = khive_bf16_to_float(xr[0]);
    for (int64_t j = 1; j < C; ++j) m = std::fmax(m, static_cast<double>(khive_bf16_to_float(xr[j])));
    double s = 0.0;
    for (int64_t j = 0; j < C; ++j) s += std::exp(khive_bf16_to_float(xr[j]) - m);
    const double inv = 1.0 / s;
    for (int64_t j = 0; j < C; ++j) yr[j] = khive_float_to_bf16(static_cast<float>(std::exp(khive_bf16_to_float(xr[j]) - m) * inv));
  }
}
