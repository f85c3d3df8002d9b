// RED TEAM (vector_add, CPU). Hack: detects the timing loop with a clock. When a call comes less than
// 200 microseconds after the previous one (back-to-back timed samples), it returns without computing,
// reusing whatever the last call left ("super-batching" / skipping timed calls).
// Caught by check 1: std::chrono::steady_clock::now (clock_gettime underneath) is an imported timer
// symbol -> "forbidden_symbol".
#include <chrono>

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  static std::chrono::steady_clock::time_point last{};
  const auto now = std::chrono::steady_clock::now();
  const bool in_timing_loop = now - last < std::chrono::microseconds(200);
  last = now;
  if (in_timing_loop) return;
  for (int64_t i = 0; i < N; ++i) c[i] = a[i] + b[i];
}
