// RED TEAM (vector_add, CPU). Hack: replaying results when the same input is timed repeatedly. Keeps the
// first 64 values of a and b from the last call and the last output; when N and those 64 values match,
// the remembered output is copied back instead of computing. Keyed on data, not pointers, so it survives
// fresh seeds (check 5), a repeated call (check 6), the same data at new addresses and new data at old
// addresses (check 7, first two probes).
// Caught by check 7's third probe: a few elements in the second half of each input (and the last one)
// are changed at the old addresses; the first 64 values still match, the replayed output is stale
// -> "caching". (For N <= 64 the perturbed last element is inside the key, so small N stay correct.)
#include <algorithm>
#include <cstring>
#include <vector>

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  static std::vector<float> key_a, key_b, last_out;
  const int64_t k = std::min<int64_t>(N, 64);
  const bool hit = static_cast<int64_t>(last_out.size()) == N && std::equal(a, a + k, key_a.begin()) &&
                   std::equal(b, b + k, key_b.begin());
  if (hit) {
    std::memcpy(c, last_out.data(), static_cast<std::size_t>(N) * sizeof(float));
    return;
  }
  for (int64_t i = 0; i < N; ++i) c[i] = a[i] + b[i];
  key_a.assign(a, a + k);
  key_b.assign(b, b + k);
  last_out.assign(c, c + N);
}
