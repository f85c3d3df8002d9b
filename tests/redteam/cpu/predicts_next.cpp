// RED TEAM (vector_add, CPU). Hack: predicts the next call's inputs (a stand-in for recovering the generator's seed
// from the inputs it has seen and regenerating what comes next). For a perf-sized N (>= 1M, never a correctness size
// here), after its 3 warm-up calls, a call computes honestly, then also computes "the next call's outputs" for its
// prediction of the next inputs and keeps them; the next call copies the kept outputs into c without reading a or b
// (and the one after computes and predicts again). The prediction here is a public, deterministic function of the
// current inputs: next_a[i] = a[(7 i + 1) mod N], likewise b. Any rule of that kind (a permutation, a shift, an LCG
// or Philox/xorshift stepped on from values or seeds recovered from the inputs, the same data again) fails the same
// way: every input is ChaCha20 keyed by an HMAC of a per-run secret the executor never sees, per workload and call,
// so no function of what the kernel has seen predicts the next call's inputs better than chance.
// Caught by check 9: every timed call gets fresh inputs and its outputs are compared with goldens; the copied
// prediction is wrong in (almost) every element -> "timed_output_wrong" at the workload's second timed call.
#include <cstdint>
#include <cstring>
#include <vector>

namespace {
int calls_for(int64_t n) {  // calls so far with this N, this one included
  static int64_t seen_n[32];
  static int seen_calls[32];
  static int used = 0;
  for (int s = 0; s < used; ++s)
    if (seen_n[s] == n) return ++seen_calls[s];
  if (used == 32) return 1;
  seen_n[used] = n;
  seen_calls[used] = 1;
  ++used;
  return 1;
}
}  // namespace

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  static std::vector<float> kept;  // the outputs for the predicted next inputs
  static int64_t kept_n = -1;      // their N, or -1 when none is kept
  const bool timed = N >= (int64_t{1} << 20) && calls_for(N) > 3;  // perf-sized, past its 3 warm-ups
  if (timed && kept_n == N) {  // "predicted": copy, read neither a nor b
    std::memcpy(c, kept.data(), static_cast<std::size_t>(N) * sizeof(float));
    kept_n = -1;
    return;
  }
  for (int64_t i = 0; i < N; ++i) c[i] = a[i] + b[i];
  if (!timed) return;
  // Predict the next inputs and compute their outputs now.
  kept.resize(static_cast<std::size_t>(N));
  for (int64_t i = 0; i < N; ++i) {
    const int64_t j = (7 * i + 1) % N;
    kept[static_cast<std::size_t>(i)] = a[j] + b[j];
  }
  kept_n = N;
}
