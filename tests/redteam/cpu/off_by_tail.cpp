// RED TEAM (vector_add, CPU). Fault: processes elements in pairs and forgets the tail, so the last
// element is never written when N is odd (right on every power-of-two perf shape).
// Caught by check 4 on the odd correctness shapes (N = 1, 7, 65537): that element still holds the
// sentinel -> "unwritten_output".
extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  for (int64_t i = 0; i + 1 < N; i += 2) {
    c[i] = a[i] + b[i];
    c[i + 1] = a[i + 1] + b[i + 1];
  }
}
