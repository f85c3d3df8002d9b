// RED TEAM (vector_add, CPU). Fault: writes through a null pointer (read from a volatile, so the
// compiler cannot prove it null and emits the real store).
// Caught by check 2: the runner process dies of SIGSEGV, the orchestrator sees the signal -> "crash".
extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  static float* volatile nowhere = nullptr;
  for (int64_t i = 0; i < N; ++i) c[i] = a[i] + b[i];
  *nowhere = 1.0f;
}
