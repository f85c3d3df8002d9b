// max_pool3d (kernel 3, stride 2, padding 1, dilation 2, ceil_mode) CPU reference: each output the largest of its
// window's real elements, a NaN winning (torch's rule). Single-threaded and deliberately plain.
#include <cmath>
#include <cstdint>
#include <limits>

extern "C" void khive_launch(const float* x, float* y, int64_t N, int64_t C, int64_t D, int64_t H, int64_t W) {
  const int64_t OD = (D - 2) / 2 + 1, OH = (H - 2) / 2 + 1, OW = (W - 2) / 2 + 1;
  for (int64_t p = 0; p < N * C; ++p)
    for (int64_t od = 0; od < OD; ++od)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          float m = -std::numeric_limits<float>::infinity();
          for (int64_t kd = 0; kd < 3; ++kd)
            for (int64_t kh = 0; kh < 3; ++kh)
              for (int64_t kw = 0; kw < 3; ++kw) {
                const int64_t id = od * 2 - 1 + 2 * kd, ih = oh * 2 - 1 + 2 * kh, iw = ow * 2 - 1 + 2 * kw;
                if (id < 0 || id >= D || ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                const float v = x[((p * D + id) * H + ih) * W + iw];
                if (v > m || std::isnan(v)) m = v;
                if (std::isnan(m)) break;
              }
          y[((p * OD + od) * OH + oh) * OW + ow] = m;
        }
}
