// group_norm (4 groups, eps 1e-5) CPU reference: each (n, group)'s mean and biased variance over its C / 4 channels
// and H x W positions, in double, two passes; then (x - mean) / sqrt(var + eps) * weight[c] + bias[c]. Single-threaded
// and deliberately plain.
#include <cmath>
#include <cstdint>

extern "C" void khive_launch(const float* x, const float* weight, const float* bias, float* y, int64_t N, int64_t C,
                             int64_t H, int64_t W) {
  const int64_t G = 4, per = C / G * H * W;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < G; ++g) {
      const int64_t start = (n * C + g * (C / G)) * H * W;
      double mean = 0, var = 0;
      for (int64_t j = 0; j < per; ++j) mean += x[start + j];
      mean /= double(per);
      for (int64_t j = 0; j < per; ++j) var += (x[start + j] - mean) * (x[start + j] - mean);
      var /= double(per);
      const double rstd = 1.0 / std::sqrt(var + 1e-5);
      for (int64_t j = 0; j < per; ++j) {
        const int64_t c = g * (C / G) + j / (H * W);
        y[start + j] = float((x[start + j] - mean) * rstd * weight[c] + bias[c]);
      }
    }
}
