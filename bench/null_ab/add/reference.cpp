// vector_add, CPU reference: c[i] = a[i] + b[i]. One fp32 addition per element (correctly rounded, so
// this is the exact answer every honest kernel reproduces). Single-threaded and deliberately plain.
extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  for (int64_t i = 0; i < N; ++i) c[i] = a[i] + b[i];
}
