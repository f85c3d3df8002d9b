// y = leaky_relu((x @ weight^T + bias) * 2, 0.1) - 0.25 * bias, CPU reference: a double-precision dot product per
// element, then the epilogue in float as the task states it. Single-threaded and deliberately plain.
#include <cstdint>

extern "C" void khive_launch(const float* x, const float* weight, const float* bias, float* y, int64_t M, int64_t N,
                             int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0.0;
      for (int64_t k = 0; k < K; ++k) acc += double(x[i * K + k]) * double(weight[j * K + k]);
      const float v = (float(acc) + bias[j]) * 2.0f;
      y[i * N + j] = (v > 0.0f ? v : 0.1f * v) - 0.25f * bias[j];
    }
}
