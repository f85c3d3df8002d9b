// A correct vector_add that sleeps 2 s per call: its runner stays alive long enough for the reliability test
// to kill khive around it (tests/integration/reliability_cpu.py).
#include <chrono>
#include <cstdint>
#include <thread>

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  std::this_thread::sleep_for(std::chrono::seconds(2));
  for (int64_t i = 0; i < N; ++i) c[i] = a[i] + b[i];
}
