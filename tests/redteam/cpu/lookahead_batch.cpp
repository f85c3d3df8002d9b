// RED TEAM (vector_add, CPU). Hack: "a batch shows all its inputs at once". The old design wrote every input of a
// batch of calls before the batch's one exchange, and every timed batch of a workload reused the same argument slots
// (same pointers, in the same order) with new data. So a kernel could do the whole batch's work at the batch's first
// call and let the batch's other calls return at once, timed as nearly free.
// For each perf-sized N (>= 1M, never a correctness size here) it counts calls; past the 3 warm-ups (a batch in an
// arena of their own, released when the timed one is shared) it records every (a, b, c) triple in the order first
// seen. From the second time it sees the first triple it recorded (the start of a later timed batch), it computes
// right away every other recorded triple (the rest of the batch, whose inputs the old design had already written) and
// marks their c pointers "precomputed"; a later call whose c is precomputed returns at once without work (and the mark
// is dropped). Everything else is computed honestly (an OpenMP loop).
// That needs timed batches of two or more calls, and the judge sizes them from the warm-ups (~5 ms of calls on the
// CPU): N = 1M gets 2-5 on an idle 2-core host, but 1 when another evaluation shares the cores (as in redteam_cpu, two
// at a time), and a batch of one has nothing to look ahead at. So it also looks ahead at the one batch whose size does
// not depend on timing, the 3 warm-up calls: it learns the slot layout from the warm-up triples it sees (slot k at
// (a + 2kd, b + 2kd, c + kd), d = b - a) and, once that held for two perf workloads, computes slots 1 and 2 of the next
// warm-up batch at its first call and skips them (N = 16M on the CPU, unless a timed batch caught it before).
// Caught by check 9: calls are revealed one at a time. On the CPU each call is its own exchange, and the judge writes
// that call's inputs just before sending it; when a batch's first call runs, the other slots hold the byte pattern the
// judge scrubbed them with after the previous batch (or, in a fresh warm-up arena, nothing yet), so the precomputed
// outputs are wrong, and each call's outputs are poisoned just before its own exchange anyway, so a skipped call leaves
// the sentinel ("never written") -> "timed_output_wrong", at the second call of a later timed batch (N = 4M or 1M) or
// at warm-up call 1 of N = 16M.
#include <cstdint>
#include <vector>

namespace {
void add(const float* a, const float* b, float* c, int64_t n) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
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

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  if (N < (int64_t{1} << 20)) {
    add(a, b, c, N);
    return;
  }
  PerN& s = state_for(N);
  const int call = ++s.calls;
  if (take_precomputed(s, c)) return;  // done at its batch's first call: return at once
  if (call <= 3) {                     // the warm-up batch (3 calls, in an arena of its own)
    s.warm.push_back({a, b, c});
    if (call == 1 && layout_confirmed >= 2)  // the fallback: its other two slots, from the learned layout
      for (uptr k = 1; k < 3; ++k) {
        const Triple t = slot(s.warm[0], k);
        add(t.a, t.b, t.c, N);
        s.precomputed.push_back(t.c);
      }
    if (call == 3 && follows_layout(s.warm)) ++layout_confirmed;
    add(a, b, c, N);
    return;
  }
  bool known = false;
  for (const Triple& t : s.seen) known = known || (t.a == a && t.b == b && t.c == c);
  if (!known) {
    s.seen.push_back({a, b, c});
  } else if (a == s.seen[0].a) {  // the first slot again: a later batch starts; do the rest of it now
    for (std::size_t k = 1; k < s.seen.size(); ++k) {
      add(s.seen[k].a, s.seen[k].b, s.seen[k].c, N);
      s.precomputed.push_back(s.seen[k].c);
    }
  }
  add(a, b, c, N);
}
