// PLANTED WRONG KERNEL (issue 17, item 10): softmax that subtracts a constant 100 instead of each row's max.
// On inputs drawn around 100 (the old demo data, N(100, 4)) it is indistinguishable from an honest kernel; on
// realistic logits or negative values every exp(x - 100) underflows to 0 and the row becomes 0/0 = NaN, and
// on values above ~189 exp overflows. The guard must reject it on the task's own data.
#include <cmath>
#include <cstdint>

extern "C" void khive_launch(const float* x, float* y, int64_t B, int64_t D) {
  for (int64_t r = 0; r < B; ++r) {
    const float* xr = x + r * D;
    float* yr = y + r * D;
    float sum = 0.f;
    for (int64_t j = 0; j < D; ++j) sum += std::exp(xr[j] - 100.f);
    for (int64_t j = 0; j < D; ++j) yr[j] = std::exp(xr[j] - 100.f) / sum;
  }
}
