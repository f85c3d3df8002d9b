// kb26_gelu, CPU reference: y = 0.5 * x * (1 + erf(x / sqrt(2))) (torch.nn.functional.gelu's default, not the tanh approximation), elementwise over x[B, D], computed in double and rounded once to fp32.
#include <cmath>

static double op(double x) { return 0.5 * x * (1.0 + erf(x * 0.70710678118654752440)); }

extern "C" void khive_launch(const float* x, float* y, int64_t B, int64_t D) {
  const int64_t total = B * D;
#pragma omp parallel for
  for (int64_t e = 0; e < total; ++e) y[e] = static_cast<float>(op(static_cast<double>(x[e])));
}
