// kb29_softplus, CPU reference: y = log(1 + exp(x)), and y = x where x > 20 (torch's beta = 1, threshold = 20), elementwise over x[B, D], computed in double and rounded once to fp32.
#include <cmath>

static double op(double x) { return x > 20.0 ? x : log1p(exp(x)); }

extern "C" void khive_launch(const float* x, float* y, int64_t B, int64_t D) {
  const int64_t total = B * D;
#pragma omp parallel for
  for (int64_t e = 0; e < total; ++e) y[e] = static_cast<float>(op(static_cast<double>(x[e])));
}
