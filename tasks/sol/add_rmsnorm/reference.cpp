// add_rmsnorm, CPU reference: per row, residual_out = bf16(x + residual) (exact fp32 sum, one rounding),
// the mean of squares of the stored bf16 values in double, y = r * rstd * weight in double, rounded once.
#include <cmath>

extern "C" void khive_launch(const khive_bf16* x, const khive_bf16* residual, const khive_bf16* weight,
                             khive_bf16* residual_out, khive_bf16* y, int64_t T, int64_t H) {
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < T; ++t) {
    const int64_t off = t * H;
    double s = 0.0;
    for (int64_t i = 0; i < H; ++i) {
      const khive_bf16 r = khive_float_to_bf16(khive_bf16_to_float(x[off + i]) + khive_bf16_to_float(residual[off + i]));
      residual_out[off + i] = r;
      const double v = khive_bf16_to_float(r);
      s += v * v;
    }
    const double rstd = 1.0 / std::sqrt(s / static_cast<double>(H) + 1e-5);
    for (int64_t i = 0; i < H; ++i)
      y[off + i] = khive_float_to_bf16(
          static_cast<float>(khive_bf16_to_float(residual_out[off + i]) * rstd * khive_bf16_to_float(weight[i])));
  }
}
