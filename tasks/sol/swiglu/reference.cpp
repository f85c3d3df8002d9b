// swiglu, CPU reference: y[t, i] = silu(x[t, i]) * x[t, I + i] in double, rounded once to bf16.
#include <cmath>

extern "C" void khive_launch(const khive_bf16* x, khive_bf16* y, int64_t T, int64_t I) {
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < I; ++i) {
      const double g = khive_bf16_to_float(x[t * 2 * I + i]);
      const double u = khive_bf16_to_float(x[t * 2 * I + I + i]);
      y[t * I + i] = khive_float_to_bf16(static_cast<float>(g / (1.0 + std::exp(-g)) * u));
    }
}
