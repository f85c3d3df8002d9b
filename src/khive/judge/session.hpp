// One evaluation in the judge (docs/guard.md): the kernel's executor, the leader's for check 11, the
// reference's for goldens, and the procedures of checks 2-9 and 11 over them. The judge owns the inputs, the
// goldens, the plan and the clock; an executor only performs the calls it is handed, on memory the judge shares.
//
//   checks 3-7   correctness workloads, several seeds: inputs immutable (CPU: sealed) or hashed after every call,
//                outputs poisoned before every call and compared with goldens; the same inputs twice; a few elements
//                changed, new data at old addresses, the same data at new addresses
//   checks 8-9   perf workloads: every timed call gets inputs no kernel has seen (timed_seed: unpredictable, never
//                repeated within an executor) and EVERY timed call's outputs are compared with goldens; the sample is
//                the judge's own clock over a batch of calls (long against its overhead), the executor's clock only
//                cross-checks it (guard/rules.hpp)
//   check 11     candidate and leader in separate executors, in pairs on the same inputs, the order inside each pair
//                drawn at random, both validated, each stopped while the other runs; signed-rank test per workload,
//                Holm over the workloads (guard/stats.hpp)
//
//   Session s(dev, task, job, progress);
//   nlohmann::json result = s.run();   // {"rejection": ...} | {"error": ..., "retryable": b} | accepted, with timings
#pragma once
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "khive/guard/checks.hpp"
#include "khive/guard/stats.hpp"
#include "khive/job/protocol.hpp"
#include "khive/judge/arena.hpp"
#include "khive/judge/device.hpp"
#include "khive/judge/executor_process.hpp"
#include "khive/judge/goldens.hpp"
#include "khive/task/task.hpp"

namespace khive {

using ProgressFn = std::function<void(Check, const std::string& workload, const std::string& note)>;

class Session {
 public:
  Session(JudgeDevice& dev, const Task& task, const Job& job, ProgressFn progress);
  ~Session();
  nlohmann::json run();

 private:
  struct Rejected {  // thrown inside the procedures: the first failed check ends the evaluation
    Rejection r;
  };
  struct HarnessError {
    std::string why;
    bool retryable = false;
  };
  struct Kernel {  // one executor under test (the candidate, or the leader in an A/B)
    std::unique_ptr<ExecutorProcess> ex;
    Overhead overhead;                       // one null call, back to back (the batch-size estimate)
    std::map<int, Overhead> batch_overhead;  // a null batch of 2^i calls after the judge's flush, as a timed batch runs
    bool is_candidate = true;
    // What the judge's clock sees for a batch of `calls` that does no work: measured at the powers of two before
    // any kernel code was in the process, interpolated in between.
    Overhead overhead_for(int calls) const;
  };
  struct Observed {       // one timed batch
    double sample_s;      // per call, from the judge's clock: (judge_s - overhead) / calls
    double in_process_s;  // per call, from the executor's clock
    double judge_s;       // the whole exchange, the judge's clock
    double in_batch_s;    // the whole batch, the executor's clock
    double drain_s;
  };

  std::unique_ptr<ExecutorProcess> start(const std::string& role, const std::string& library, bool vendor);
  std::unique_ptr<ExecutorProcess> start_pytorch_reference();
  void start_kernels();
  void run_reference(Arena& a, int set);
  void share(Kernel& k, Arena& a);
  void share_reference(Arena& a);

  void fill_inputs(Arena& a, int set, const Workload& w, const InputSpec& s);
  std::vector<uint64_t> hashes(Arena& a, int set);
  void check_inputs(Arena& a, int set, const std::vector<uint64_t>& before, const Workload& w, const std::string& context);
  void poison_outputs(Arena& a, int first, int count, Poison p);
  Exchange call(Kernel& k, Arena& a, int first, int count, const std::string& context);
  void check_outputs(Arena& a, int set, const std::vector<Golden>& gold, const Workload& w, Poison p, Check check, const std::string& context,
                     const Kernel& k);

  void correctness(const Workload& w);
  int batch_size(Arena& a, const Workload& w, std::vector<Kernel*> ks);
  std::vector<Golden> timed_inputs(Arena& a, int set, const Workload& w, uint64_t k);
  Observed timed_batch(Kernel& k, Arena& a, int count, const std::vector<std::vector<Golden>>& gold, const Workload& w, uint64_t first_k);
  nlohmann::json time_solo(const Workload& w);
  // `test` on the judge's clock; `on_events` the same test on the executors' own clocks (check 11 needs both).
  nlohmann::json time_ab(const Workload& w, AbTest& test, AbTest& on_events);
  void check_clock(const Workload& w, const std::vector<Observed>& obs, const Kernel& k, int batch);

  [[noreturn]] void fault(const ExecutorFault& f, const std::string& role);
  bool selected(const Workload& w) const;

  JudgeDevice& dev_;
  const Task& task_;
  const Job& job_;
  ProgressFn progress_;
  Kernel cand_, lead_;
  std::unique_ptr<ExecutorProcess> ref_;
  uint64_t ref_arena_ = 0;  // the arena the reference's executor has mapped (Arena::id)
  // A PyTorch reference on a GPU judge works on host memory (Python cannot map the judge's CUDA regions): memfds
  // of the arena's sizes, the set's inputs copied in before each call and its goldens copied out after it.
  std::unique_ptr<JudgeDevice> host_;
  std::unique_ptr<SharedRegion> staged_in_, staged_gold_;
  std::string current_;  // the workload being judged, for rejections raised by executor faults
  GoldenStore goldens_;
  std::mt19937_64 rng_;
  std::map<std::string, double> phases_;
  int correctness_calls_ = 0;
  struct PhaseTimer;
};

}  // namespace khive
