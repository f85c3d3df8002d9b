// conv2d (stride 2, 1; padding 1, 2; dilation 1, 2; groups 2) + bias, relu, times a per-channel scale; CPU
// reference, single-threaded and deliberately plain: one output at a time, double accumulation.
#include <cstdint>

extern "C" void khive_launch(const float* x, const float* weight, const float* bias, const float* scale, float* y,
                             int64_t N, int64_t H, int64_t W) {
  const int64_t C = 8, CO = 12, G = 2, CIG = C / G, COG = CO / G, K = 3, OH = (H - 1) / 2 + 1, OW = W;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oc = 0; oc < CO; ++oc)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = bias[oc];
          const int64_t g = oc / COG;
          for (int64_t icg = 0; icg < CIG; ++icg)
            for (int64_t kh = 0; kh < K; ++kh)
              for (int64_t kw = 0; kw < K; ++kw) {
                const int64_t ih = oh * 2 - 1 + kh, iw = ow - 2 + 2 * kw;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc += double(x[((n * C + g * CIG + icg) * H + ih) * W + iw]) *
                       double(weight[((oc * CIG + icg) * K + kh) * K + kw]);
              }
          const double r = acc > 0 ? acc : 0;
          y[((n * CO + oc) * OH + oh) * OW + ow] = float(r * scale[oc]);
        }
}
