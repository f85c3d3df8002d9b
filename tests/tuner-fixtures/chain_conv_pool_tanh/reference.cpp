// y = 2 * tanh(max_pool2d(relu(conv2d(x, weight) + bias), 2)) CPU reference: the convolution in double per output,
// the pool over the 2 x 2 windows of the rounded float values (torch's stages each store float), single-threaded
// and deliberately plain.
#include <cmath>
#include <cstdint>
#include <vector>

extern "C" void khive_launch(const float* x, const float* weight, const float* bias, float* y, int64_t N, int64_t H,
                             int64_t W) {
  const int64_t CH = H - 2, CW = W - 2, OH = CH / 2, OW = CW / 2;
  std::vector<float> c(static_cast<size_t>(N * 8 * CH * CW));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < 8; ++o)
      for (int64_t i = 0; i < CH; ++i)
        for (int64_t j = 0; j < CW; ++j) {
          double s = bias[o];
          for (int64_t ci = 0; ci < 4; ++ci)
            for (int64_t a = 0; a < 3; ++a)
              for (int64_t b = 0; b < 3; ++b)
                s += double(x[((n * 4 + ci) * H + i + a) * W + j + b]) * weight[((o * 4 + ci) * 3 + a) * 3 + b];
          const float v = float(s);
          c[((n * 8 + o) * CH + i) * CW + j] = v > 0.0f ? v : 0.0f;
        }
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < 8; ++o)
      for (int64_t i = 0; i < OH; ++i)
        for (int64_t j = 0; j < OW; ++j) {
          float m = -INFINITY;
          for (int64_t a = 0; a < 2; ++a)
            for (int64_t b = 0; b < 2; ++b) m = std::fmax(m, c[((n * 8 + o) * CH + 2 * i + a) * CW + 2 * j + b]);
          y[((n * 8 + o) * OH + i) * OW + j] = 2.0f * std::tanh(m);
        }
}
