// conv2d (stride 2, 1; padding 1, 2; dilation 1, 2; groups 2) + bias, relu, times a per-channel scale; CUDA
// reference: one thread per output, plain loops, double accumulation.
#include <cstdint>

__global__ void ref_conv(const float* x, const float* weight, const float* bias, const float* scale, float* y,
                         int64_t N, int64_t H, int64_t W) {
  const int64_t C = 8, CO = 12, G = 2, CIG = C / G, COG = CO / G, K = 3, OH = (H - 1) / 2 + 1, OW = W;
  const int64_t total = N * CO * OH * OW;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t ow = i % OW, oh = i / OW % OH, oc = i / (OW * OH) % CO, n = i / (OW * OH * CO);
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
    y[i] = float(r * scale[oc]);
  }
}

extern "C" void khive_launch(const float* x, const float* weight, const float* bias, const float* scale, float* y,
                             int64_t N, int64_t H, int64_t W, cudaStream_t stream) {
  const int64_t total = N * 12 * ((H - 1) / 2 + 1) * W;
  const int blocks = int((total + 255) / 256 < 4096 ? (total + 255) / 256 : 4096);
  ref_conv<<<blocks > 0 ? blocks : 1, 256, 0, stream>>>(x, weight, bias, scale, y, N, H, W);
}
