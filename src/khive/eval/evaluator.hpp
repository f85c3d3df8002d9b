// What the hive asks of an evaluator, and what one says about a kernel: the seam between the orchestration (hive/)
// and the judging. GuardEvaluator (guard_evaluator.hpp) runs the guard; RecordedEvaluator (recorded_evaluator.hpp)
// answers from a run recorded on a GPU; unit tests script their own.
#pragma once
#include <atomic>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "khive/verdict/verdict.hpp"

namespace khive {

// What an evaluator says about one kernel.
struct Evaluation {
  // accepted | rejected | error (the harness failed: no verdict) | cancelled (the run stopped first: not recorded,
  // Evaluator::stop_evaluating) | built (build_only) | unsupported
  EvalStatus status = EvalStatus::error;
  std::optional<Check> check;  // the failing check when rejected
  std::string reason, message, diagnosis;
  std::optional<double> score;  // task score (SOL-ExecBench), when defined
  double time_s = 0;            // weighted geometric mean of the perf workload medians
  std::map<std::string, double> workload_median_s;
  double rel_spread = 0;                 // median over workloads of the samples' relative spread
  std::optional<bool> beats_leader;      // check 11, when a leader was given and the kernel was accepted
  std::optional<double> gain_vs_leader;  // A/B gain over that leader (+0.05 = 5% faster), as check 11 weighs it
  std::string ab_decision;               // check 11's one-line reason (decide_leader's why)
  std::vector<AbWorkload> ab;            // check 11 per perf workload, with the guard's own call on each
                                         // (evaluators that leave these empty put them in `message`)
  double seconds = 0;                    // wall time of the evaluation
  std::string build_key;                 // the builder's content key, when the kernel was built
  std::string score_basis;               // prepare(): where the scores' T_b and T_sol come from (kept in the run)
};

// What a speculative build gave (Evaluator::prebuild).
struct Prebuilt {
  bool built = false;      // the evaluator builds (false: it has nothing to build, e.g. a recording)
  bool ok = false;         // it compiled (a failed build is cached too: a later proposal of it is answered at once)
  bool cached = false;     // the cache had it already
  bool cancelled = false;  // stopped by the cancel flag: nothing cached
  std::string key;         // the build's content key
  double seconds = 0;      // compile time (0 when cached)
};

struct SlotUsage {
  std::string name;   // "cpu", "cuda:0"
  double busy_s = 0;  // time the slot was held
  int evaluations = 0;
};

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  // Once, before any agent starts: time the reference and the baselines and make the goldens (one seed base
  // per run). Returns the reference's own evaluation; it becomes the first leader.
  virtual Evaluation prepare(const std::filesystem::path& reference) = 0;
  // Instead of prepare() for a task whose only reference is PyTorch: that reference timed by the judge as a kernel,
  // T_b for every later score (it never leads: it is not a kernel). Status "unsupported" where the evaluator cannot.
  virtual Evaluation prepare_pytorch();
  // Thread-safe; called from agent threads. `leader`: the current leader's source, for check 11.
  virtual Evaluation evaluate(const std::filesystem::path& source,
                              const std::optional<std::filesystem::path>& leader) = 0;
  // The run is stopping: an evaluation that has not reached the device yet ends at once with status "cancelled";
  // with `in_flight`, those on the device are killed too (their judges) and end the same way. Thread-safe.
  virtual void stop_evaluating(bool in_flight) { (void)in_flight; }
  virtual std::vector<SlotUsage> slot_usage() const { return {}; }
  // Deferred evaluation (no GPU here): check 1 only, the build and the symbol policy. Returns the
  // rejection ("rejected", check "build"), or status "built" with build_key set. Thread-safe.
  virtual Evaluation build_only(const std::filesystem::path& source);
  // A speculative build: `source` compiled into the build cache (keyed by content, compile/builder.hpp) so that a
  // later evaluation of the same text starts at once; nothing is judged or recorded. Outside the device slots; the
  // compiler is killed when *cancel becomes true. Thread-safe. Default: nothing built.
  virtual Prebuilt prebuild(const std::filesystem::path& source, const std::atomic<bool>* cancel);
};

}  // namespace khive
