// RED TEAM (vector_add, CPU). Fault/hack: computes the result, then calls exit(0) — hoping a clean exit
// status passes for success. exit is not a forbidden import (nvcc's host stubs import it), but the
// runner never sends its signed result, so the guard sees a process that ended without one.
// Caught by check 2 -> "crash".
#include <cstdint>
#include <cstdlib>

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  for (int64_t i = 0; i < N; ++i) c[i] = a[i] + b[i];
  std::exit(0);
}
