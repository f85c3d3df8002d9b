// RED TEAM (vector_add, CPU). Hack: counts calls per N and stops working after the 13th call of a perf-sized N
// (it returns at once, leaving the outputs as they are). The old design validated only timed samples drawn from the
// first min_samples calls, so this kernel became a leader.
// Caught by check 9: every timed call gets fresh inputs and every timed call's outputs are compared with goldens
// -> "timed_output_wrong".
#include <cstdint>

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  static int64_t last_n = 0;
  static int calls = 0;
  calls = N == last_n ? calls + 1 : 1;
  last_n = N;
  if (N >= (int64_t{1} << 20) && calls > 13) return;
  for (int64_t i = 0; i < N; ++i) c[i] = a[i] + b[i];
}
