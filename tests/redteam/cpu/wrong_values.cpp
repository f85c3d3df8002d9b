// RED TEAM (vector_add, CPU). Fault: computes a - b instead of a + b (every element written, all finite).
// Caught by check 5: off by 2·b[i], far outside atol/rtol = 1e-6 -> "wrong_output".
extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  for (int64_t i = 0; i < N; ++i) c[i] = a[i] - b[i];
}
