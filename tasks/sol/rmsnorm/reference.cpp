// rmsnorm, CPU reference: per row, the mean of squares in double, then y = x * rstd * weight in double,
// rounded once to bf16. Rows in parallel (OpenMP).
#include <cmath>

extern "C" void khive_launch(const khive_bf16* x, const khive_bf16* weight, khive_bf16* y, int64_t T, int64_t H) {
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < T; ++t) {
    const khive_bf16* xr = x + t * H;
    khive_bf16* yr = y + t * H;
    double s = 0.0;
    for (int64_t i = 0; i < H; ++i) {
      const double v = khive_bf16_to_float(xr[i]);
      s += v * v;
    }
    const double rstd = 1.0 / std::sqrt(s / static_cast<double>(H) + 1e-5);
    for (int64_t i = 0; i < H; ++i)
      yr[i] = khive_float_to_bf16(static_cast<float>(khive_bf16_to_float(xr[i]) * rstd * khive_bf16_to_float(weight[i])));
  }
}
