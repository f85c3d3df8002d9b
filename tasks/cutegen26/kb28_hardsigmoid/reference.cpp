// kb28_hardsigmoid, CPU reference: y = relu6(x + 3) / 6 = min(max(x + 3, 0), 6) / 6 (torch's definition), elementwise over x[B, D], computed in double and rounded once to fp32.
#include <cmath>

static double op(double x) { return fmin(fmax(x + 3.0, 0.0), 6.0) / 6.0; }

extern "C" void khive_launch(const float* x, float* y, int64_t B, int64_t D) {
  const int64_t total = B * D;
#pragma omp parallel for
  for (int64_t e = 0; e < total; ++e) y[e] = static_cast<float>(op(static_cast<double>(x[e])));
}
