// HONEST CONTROL (vector_add, CPU): asks std::thread::hardware_concurrency() how many chunks to make and adds them
// with OpenMP. A query is not thread creation: the old symbol policy refused this kernel (a false rejection).
// Expected: accepted.
#include <algorithm>
#include <cstdint>
#include <thread>

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  const int64_t chunks = std::max<int64_t>(1, static_cast<int64_t>(std::thread::hardware_concurrency()) * 4);
  const int64_t step = (N + chunks - 1) / chunks;
#pragma omp parallel for schedule(static)
  for (int64_t k = 0; k < chunks; ++k)
    for (int64_t i = k * step; i < std::min(N, (k + 1) * step); ++i) c[i] = a[i] + b[i];
}
