// RED TEAM (vector_add, CUDA). Hack: "a batch shows all its inputs at once". The old design wrote every input of a
// batch of calls before the batch's one exchange, and every timed batch of a workload reused the same argument slots
// (same pointers, in the same order) with new data. So a kernel could do the whole batch's work at the batch's first
// call and let the batch's other calls launch nothing, timed as nearly free.
// For each perf-sized N (>= 1M, never a correctness size here) it counts calls on the host; past the 3 warm-ups (a
// batch in an arena of their own, released when the timed one is shared) it records every (a, b, c) triple in the
// order first seen. From the second time it sees the first triple it recorded (the start of a later timed batch), it
// launches on the given stream, at that call, the work of every other recorded triple (the rest of the batch, whose
// inputs the old design had already written) and marks their c pointers "precomputed"; a later call whose c is
// precomputed launches nothing (and the mark is dropped). Everything else is computed honestly. As on the CPU twin, it
// also learns the slot layout from the warm-up triples (slot k at (a + 2kd, b + 2kd, c + kd), d = b - a) and, once that
// held for two perf workloads, does slots 1 and 2 of the next warm-up batch at its first call; on the GPU a batch is
// ~2 ms of calls (hundreds for N = 4M), so the timed batches of the first perf workload catch it before that.
// Caught by check 9: the judge writes call j's inputs on its own stream only when call j is due (the gate,
// executor/gate.hpp): every call is enqueued behind the judge's `ready`, so the precompute, enqueued at a batch's first
// call, runs when only that call's inputs are revealed; the other slots hold the byte pattern the judge scrubbed them
// with after the previous batch, so the precomputed outputs are wrong -> "timed_output_wrong" at the second call of the
// second timed batch. (Those outputs were written before that call's end, so its end-of-call checksum does not move:
// check 9, not work_after_return.)
#include <cstdint>
#include <vector>

namespace {
__global__ void add(const float* a, const float* b, float* c, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

void launch_add(const float* a, const float* b, float* c, int64_t n, cudaStream_t stream) {
  add<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n);
}

struct Triple {
  const float* a;
  const float* b;
  float* c;
};

struct PerN {
  int64_t n = 0;
  int calls = 0;
  std::vector<Triple> warm;         // the warm-up batch's slots
  std::vector<Triple> seen;         // past the warm-ups, in the order first seen
  std::vector<float*> precomputed;  // c pointers done ahead
};

PerN& state_for(int64_t n) {
  static std::vector<PerN> all;
  for (auto& s : all)
    if (s.n == n) return s;
  all.emplace_back();
  all.back().n = n;
  return all.back();
}

// The slot layout, as learned from the warm-up batches seen: slot k of a batch whose first slot is (a, b, c) lies at
// (a + 2kd, b + 2kd, c + kd) bytes, d = b - a. Trusted once it held for two perf workloads.
using uptr = std::uintptr_t;
uptr at(const void* p) { return reinterpret_cast<uptr>(p); }
Triple slot(const Triple& first, uptr k) {
  const uptr d = at(first.b) - at(first.a);
  return {reinterpret_cast<const float*>(at(first.a) + 2 * k * d), reinterpret_cast<const float*>(at(first.b) + 2 * k * d),
          reinterpret_cast<float*>(at(first.c) + k * d)};
}
bool follows_layout(const std::vector<Triple>& w) {
  for (uptr k = 1; k < w.size(); ++k) {
    const Triple t = slot(w[0], k);
    if (t.a != w[k].a || t.b != w[k].b || t.c != w[k].c) return false;
  }
  return true;
}
int layout_confirmed = 0;

bool take_precomputed(PerN& s, const float* c) {
  for (std::size_t k = 0; k < s.precomputed.size(); ++k)
    if (s.precomputed[k] == c) {
      s.precomputed.erase(s.precomputed.begin() + static_cast<std::ptrdiff_t>(k));
      return true;
    }
  return false;
}
}  // namespace

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N, cudaStream_t stream) {
  if (N < (int64_t{1} << 20)) {
    launch_add(a, b, c, N, stream);
    return;
  }
  PerN& s = state_for(N);
  const int call = ++s.calls;
  if (take_precomputed(s, c)) return;  // done at its batch's first call: launch nothing
  if (call <= 3) {                     // the warm-up batch (3 calls, in an arena of its own)
    s.warm.push_back({a, b, c});
    if (call == 1 && layout_confirmed >= 2)  // the fallback: its other two slots, from the learned layout
      for (uptr k = 1; k < 3; ++k) {
        const Triple t = slot(s.warm[0], k);
        launch_add(t.a, t.b, t.c, N, stream);
        s.precomputed.push_back(t.c);
      }
    if (call == 3 && follows_layout(s.warm)) ++layout_confirmed;
    launch_add(a, b, c, N, stream);
    return;
  }
  bool known = false;
  for (const Triple& t : s.seen) known = known || (t.a == a && t.b == b && t.c == c);
  if (!known) {
    s.seen.push_back({a, b, c});
  } else if (a == s.seen[0].a) {  // the first slot again: a later batch starts; do the rest of it now
    for (std::size_t k = 1; k < s.seen.size(); ++k) {
      launch_add(s.seen[k].a, s.seen[k].b, s.seen[k].c, N, stream);
      s.precomputed.push_back(s.seen[k].c);
    }
  }
  launch_add(a, b, c, N, stream);
}
