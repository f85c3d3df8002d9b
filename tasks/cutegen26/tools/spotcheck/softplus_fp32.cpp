// kb29_softplus, honest fp32 (must be ACCEPTED): torch's rule, x above the threshold 20, else log1p(exp(x)).
#include <cmath>
extern "C" void khive_launch(const float* x, float* y, int64_t B, int64_t D) {
  for (int64_t e = 0; e < B * D; ++e) y[e] = x[e] > 20.0f ? x[e] : std::log1p(std::exp(x[e]));
}
