// A correct vector_add that spins ~1 s per call (plain arithmetic: sleeping or reading a clock would be rejected
// by the symbol policy): its runner stays alive long enough for the reliability test to stop khive around it
// (tests/integration/reliability_cpu.py).
#include <cstdint>

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  volatile double spin = 0;
  for (int64_t i = 0; i < 400000000; ++i) spin = spin + 1e-9;
  for (int64_t i = 0; i < N; ++i) c[i] = a[i] + b[i];
}
