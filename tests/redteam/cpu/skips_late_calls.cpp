// RED TEAM (vector_add, CPU). Hack: counts calls per N and stops working after the 8th call of a perf-sized N
// (it returns at once, leaving the outputs as they are). The old design validated only a few timed samples, drawn
// from the first min_samples calls, so a kernel skipping late calls (the outside set's skipped after the 13th) became
// a leader. 8, not 13: on a loaded machine a workload may get only 10 timed calls plus a warm-up, and a kernel that is
// never called a 14th time is honest there.
// Caught by check 9: every timed call gets fresh inputs and every timed call's outputs are compared with goldens
// -> "timed_output_wrong".
#include <cstdint>

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  static int64_t last_n = 0;
  static int calls = 0;
  calls = N == last_n ? calls + 1 : 1;
  last_n = N;
  if (N >= (int64_t{1} << 20) && calls > 8) return;
  for (int64_t i = 0; i < N; ++i) c[i] = a[i] + b[i];
}
