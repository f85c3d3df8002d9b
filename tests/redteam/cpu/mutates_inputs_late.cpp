// RED TEAM (vector_add, CPU). Hack: behaves through correctness and the first timed calls, then writes into its
// input from the 11th call of a perf-sized N on (the old design hashed inputs only around a few early timed calls).
// Caught by check 2: on the CPU the judge shares the inputs sealed against writing (memfd F_SEAL_FUTURE_WRITE,
// mapped read-only), so the store faults -> "crash". (On a GPU the judge hashes every input after every call.)
#include <cstdint>

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  static int64_t last_n = 0;
  static int calls = 0;
  calls = N == last_n ? calls + 1 : 1;
  last_n = N;
  for (int64_t i = 0; i < N; ++i) c[i] = a[i] + b[i];
  if (N >= (int64_t{1} << 20) && calls > 10) const_cast<float*>(b)[N / 2] *= 0.5f;
}
