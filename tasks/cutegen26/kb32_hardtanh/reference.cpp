// kb32_hardtanh, CPU reference: y = min(max(x, -1), 1), elementwise over x[B, D], computed in double and rounded once to fp32.
#include <cmath>

static double op(double x) { return fmin(fmax(x, -1.0), 1.0); }

extern "C" void khive_launch(const float* x, float* y, int64_t B, int64_t D) {
  const int64_t total = B * D;
#pragma omp parallel for
  for (int64_t e = 0; e < total; ++e) y[e] = static_cast<float>(op(static_cast<double>(x[e])));
}
