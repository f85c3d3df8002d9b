// PLANTED WRONG KERNEL (issue 17, item 10): GELU from a lookup table over [-8, 8] (linear interpolation,
// accurate to ~1e-8 inside) whose index is clamped at the ends, so every x > 8 returns gelu(8) = 8 instead of
// x. Inputs that never reach |x| = 8 (the old demo data, N(0.5, 1.5)) cannot tell it from an honest kernel;
// the guard must reject it on the task's own data.
#include <cmath>
#include <cstdint>
#include <vector>

namespace {
constexpr int kPoints = 1 << 16;
constexpr double kLo = -8.0, kHi = 8.0;

const std::vector<float>& table() {
  static const std::vector<float> t = [] {
    std::vector<float> v(kPoints + 1);
    for (int i = 0; i <= kPoints; ++i) {
      const double x = kLo + (kHi - kLo) * i / kPoints;
      v[static_cast<std::size_t>(i)] = static_cast<float>(0.5 * x * (1.0 + std::erf(x * 0.70710678118654752440)));
    }
    return v;
  }();
  return t;
}
}  // namespace

extern "C" void khive_launch(const float* x, float* y, int64_t B, int64_t D) {
  const auto& t = table();
  const int64_t n = B * D;
  for (int64_t i = 0; i < n; ++i) {
    double pos = (static_cast<double>(x[i]) - kLo) / (kHi - kLo) * kPoints;
    pos = pos < 0 ? 0 : pos > kPoints ? kPoints : pos;   // the clamp that makes it wrong beyond +-8
    const int k = pos >= kPoints ? kPoints - 1 : static_cast<int>(pos);
    const double f = pos - k;
    y[i] = static_cast<float>(t[static_cast<std::size_t>(k)] * (1 - f) + t[static_cast<std::size_t>(k) + 1] * f);
  }
}
