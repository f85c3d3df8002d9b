// HONEST CONTROL (vector_add, CPU): an OpenMP parallel loop, the CPU backend's way to use every core (threads of
// OpenMP's own pool, which the sandbox allows). Expected: accepted.
#include <cstdint>

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < N; ++i) c[i] = a[i] + b[i];
}
