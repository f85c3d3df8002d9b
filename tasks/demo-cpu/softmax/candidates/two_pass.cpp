// softmax candidate: classic three sweeps per row (max; exp(x - max) stored into y while summing;
// scale y by 1/sum), rows spread over cores, each sweep vectorized with `omp simd` (max and + reductions).
#include <cmath>

extern "C" void khive_launch(const float* x, float* y, int64_t B, int64_t D) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < B; ++r) {
    const float* __restrict__ xr = x + r * D;
    float* __restrict__ yr = y + r * D;
    float mx = xr[0];
#pragma omp simd reduction(max : mx)
    for (int64_t j = 0; j < D; ++j) mx = xr[j] > mx ? xr[j] : mx;
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < D; ++j) {
      const float e = std::exp(xr[j] - mx);
      yr[j] = e;
      sum += e;
    }
    const float inv = 1.0f / sum;
#pragma omp simd
    for (int64_t j = 0; j < D; ++j) yr[j] *= inv;
  }
}
