// RED TEAM (vector_add, CPU). Hack: memset the output to 0 (writes every element, so it passes the
// "written" check; a test on zero-mean data with loose tolerance might pass it).
// Caught by check 5: the reference is not all zero (inputs have non-zero means), the output is
// -> "all_zero_output".
#include <cstring>

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  (void)a; (void)b;
  std::memset(c, 0, static_cast<std::size_t>(N) * sizeof(float));
}
