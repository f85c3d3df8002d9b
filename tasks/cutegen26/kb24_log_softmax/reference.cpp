// kb24_log_softmax, CPU reference: log_softmax(x)[j] = x[j] - max - log(sum_k exp(x[k] - max)) of every row of x[B, D]: max, then the sum of exp(x - max), both in
// double, each output rounded once to fp32. Rows are spread over threads with OpenMP.
#include <cmath>

extern "C" void khive_launch(const float* x, float* y, int64_t B, int64_t D) {
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t r = 0; r < B; ++r) {
    const float* xr = x + r * D;
    float* yr = y + r * D;
    double m = -INFINITY;
    for (int64_t j = 0; j < D; ++j) m = std::fmax(m, static_cast<double>(xr[j]));
    double s = 0.0;
    for (int64_t j = 0; j < D; ++j) s += std::exp(static_cast<double>(xr[j]) - m);
    const double lse = m + std::log(s);
    for (int64_t j = 0; j < D; ++j) yr[j] = static_cast<float>(static_cast<double>(xr[j]) - lse);
  }
}
