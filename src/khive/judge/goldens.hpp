// Goldens: what each output must be for one input set (InputSpec). Read from the cache when an earlier evaluation
// of the run made them, else made now by the task's reference (in its own executor, on that set's inputs in the
// arena's ref_inputs, into its golden region) and written to the cache. The cache is the judge's alone: no executor
// can see it (sandbox.hpp). Files are named by the set's label and the input secret's fingerprint, so sets of two
// secrets never meet. Large outputs are kept as a sample of positions drawn from a secret key.
//
//   GoldenStore g(dev, task, job, keys, run_reference);
//   auto gold = g.ensure(arena, set, w, spec, /*timed=*/true);   // one Golden per output
//   CompareStats st = g.compare(arena, set, o, gold[o], tol, Poison::a);
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "khive/job/protocol.hpp"
#include "khive/judge/arena.hpp"
#include "khive/judge/device.hpp"
#include "khive/numerics/compare.hpp"
#include "khive/task/task.hpp"

namespace khive {

struct Golden {
  enum class Kind { device, host_full, host_sampled };
  Kind kind = Kind::host_full;
  int set = -1;       // device: the arena's golden slot (valid until that set's goldens are made again)
  std::string data;   // host kinds
  int64_t count = 0;  // host_sampled: positions sample_index(key, j, count, n)
  uint64_t key = 0;
};

// Where a golden came from, for the phases and the result.
struct GoldenStats {
  int cached = 0, made = 0;
  int corrupt = 0;         // cached files whose content hash did not match: made again (never blamed on a kernel)
  double reference_s = 0;  // the reference's calls
};

class GoldenStore {
 public:
  // run_reference(arena, set, w, spec): fills set's ref_inputs with spec's inputs and runs the reference on them, its
  // outputs into arena.golden(set, o) (the session starts the reference's executor the first time). Throws on failure.
  using RunReference = std::function<void(Arena&, int set, const Workload&, const InputSpec&)>;
  GoldenStore(JudgeDevice& dev, const Task& task, const Job& job, const InputKeys& keys, RunReference run_reference);

  // keep_on_host: the golden must outlive the set's golden slot (correctness checks reuse it later).
  std::vector<Golden> ensure(Arena& a, int set, const Workload& w, const InputSpec& s, bool timed, bool keep_on_host);
  CompareStats compare(const Arena& a, int set, std::size_t o, const Golden& g, const Tolerance& tol, Poison p) const;
  // Elements compared when g is a sample (0: the whole output).
  static int64_t sample_of(const Arena& a, std::size_t o, const Golden& g) {
    return g.kind == Golden::Kind::host_sampled ? a.n_out(o) : 0;
  }
  const GoldenStats& stats() const { return stats_; }

 private:
  int64_t sample_count(int64_t n, DType t, bool timed) const;
  std::string path(const Workload& w, const InputSpec& s, std::size_t o) const;

  JudgeDevice& dev_;
  const Task& task_;
  const Job& job_;
  const InputKeys& keys_;
  RunReference run_reference_;
  GoldenStats stats_;
};

}  // namespace khive
