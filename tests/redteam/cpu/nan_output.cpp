// RED TEAM (vector_add, CPU). Fault: every element is right except one (the middle), which is a computed
// quiet NaN (not the harness's sentinel payload). A comparison written as `!(err > tol)` would pass it.
// Caught by check 5: NaN/Inf where the reference is finite -> "nonfinite_output".
#include <limits>

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  for (int64_t i = 0; i < N; ++i) c[i] = a[i] + b[i];
  c[N / 2] = std::numeric_limits<float>::quiet_NaN();
}
