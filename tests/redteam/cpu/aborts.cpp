// RED TEAM (vector_add, CPU). Fault: calls abort() after computing the result (e.g. a failed assert).
// abort is not a forbidden import (any libc assert would hit it); the process dies of SIGABRT.
// Caught by check 2 -> "abort".
#include <cstdlib>

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  for (int64_t i = 0; i < N; ++i) c[i] = a[i] + b[i];
  std::abort();
}
