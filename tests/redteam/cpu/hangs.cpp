// RED TEAM (vector_add, CPU). Fault: never returns (spins on a volatile flag that nothing sets).
// Caught by check 2: the watchdog kills the runner when its time limit passes -> "timeout".
extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  static volatile bool done = false;
  for (int64_t i = 0; i < N; ++i) c[i] = a[i] + b[i];
  while (!done) {
  }
}
