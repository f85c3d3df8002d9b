// argmax over the middle axis, CPU reference: for each (b, d) the first n with the largest x[b, n, d] (a NaN counts
// as the largest, as in torch). Single-threaded and deliberately plain.
#include <cmath>
#include <cstdint>

extern "C" void khive_launch(const float* x, int64_t* idx, int64_t B, int64_t N, int64_t D) {
  for (int64_t b = 0; b < B; ++b)
    for (int64_t d = 0; d < D; ++d) {
      int64_t best = 0;
      float v = x[(b * N) * D + d];
      for (int64_t n = 1; n < N && !std::isnan(v); ++n) {
        const float u = x[(b * N + n) * D + d];
        if (u > v || std::isnan(u)) v = u, best = n;
      }
      idx[b * D + d] = best;
    }
}
