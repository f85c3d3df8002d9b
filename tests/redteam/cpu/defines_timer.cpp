// RED TEAM (vector_add, CPU). Hack: patches the timer. Defines its own clock_gettime (exported from the
// candidate's shared object, so it can interpose on the harness's timer lookups) that advances only one
// nanosecond per call: every measured interval becomes ~1 ns. The kernel itself is right.
// Caught by check 1: the candidate *defines* a timer/runtime symbol -> "forbidden_symbol".
#include <time.h>

extern "C" int clock_gettime(clockid_t, struct timespec* ts) noexcept {
  static long fake_ns = 0;
  ts->tv_sec = 1;
  ts->tv_nsec = ++fake_ns % 1000000000L;
  return 0;
}

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  for (int64_t i = 0; i < N; ++i) c[i] = a[i] + b[i];
}
