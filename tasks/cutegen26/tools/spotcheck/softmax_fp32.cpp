// kb23_softmax, honest fp32 (must be ACCEPTED): max, sequential fp32 sum of exp(x - max), multiply by the
// reciprocal.
#include <cmath>
extern "C" void khive_launch(const float* x, float* y, int64_t B, int64_t D) {
  for (int64_t r = 0; r < B; ++r) {
    const float* xr = x + r * D;
    float m = xr[0];
    for (int64_t j = 1; j < D; ++j) m = std::fmax(m, xr[j]);
    float s = 0.0f;
    for (int64_t j = 0; j < D; ++j) s += std::exp(xr[j] - m);
    const float inv = 1.0f / s;
    for (int64_t j = 0; j < D; ++j) y[r * D + j] = std::exp(xr[j] - m) * inv;
  }
}
