// RED TEAM (vector_add, CPU). Hack: on perf-sized N, every other call copies the first input instead of adding
// (half the work, all outputs written): moves the median if only some calls are checked.
// Caught by check 9: every timed call is validated -> "timed_output_wrong".
#include <cstdint>

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  static unsigned calls = 0;
  const bool skip = N >= (int64_t{1} << 20) && (++calls % 2 == 0);
  for (int64_t i = 0; i < N; ++i) c[i] = skip ? a[i] : a[i] + b[i];
}
