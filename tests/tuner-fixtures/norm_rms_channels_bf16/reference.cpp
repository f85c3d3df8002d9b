// RMSNorm over the channels (dim 1 of [N, C, H, W], eps 1e-5) CPU reference: per (n, h, w), the mean of the stored
// bf16 values' squares over c in double, then x / sqrt(mean + eps) rounded once. Single-threaded and deliberately plain.
#include <cmath>

extern "C" void khive_launch(const khive_bf16* x, khive_bf16* y, int64_t N, int64_t C, int64_t H, int64_t W) {
  const int64_t S = H * W;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t s = 0; s < S; ++s) {
      double sum = 0;
      for (int64_t c = 0; c < C; ++c) {
        const double v = khive_bf16_to_float(x[(n * C + c) * S + s]);
        sum += v * v;
      }
      const double inv = 1.0 / std::sqrt(sum / double(C) + 1e-5);
      for (int64_t c = 0; c < C; ++c)
        y[(n * C + c) * S + s] = khive_float_to_bf16(float(khive_bf16_to_float(x[(n * C + c) * S + s]) * inv));
    }
}
