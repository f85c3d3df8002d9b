// One evaluation in the judge (docs/guard.md): the kernel's executor, the leader's for check 11, the
// reference's for goldens, and the procedures of checks 2-9 and 11 over them. The judge owns the inputs, the
// goldens, the plan and the clock; an executor only performs the calls it is handed, on memory the judge shares.
//
//   checks 3-7   correctness workloads, several seeds: inputs immutable (CPU: sealed) or hashed after every call,
//                outputs poisoned before every call and compared with goldens; the same inputs twice; a few elements
//                changed, new data at old addresses, the same data at new addresses
//   checks 8-9   perf workloads: every call (warm-up and timed) gets inputs no kernel has seen (input_keys.hpp: a
//                keyed PRF of a secret, never repeated within an executor), written by the judge only when the call
//                is due (no look-ahead), and EVERY call's outputs are compared with goldens. The sample is the judge's
//                own clock per call: on a GPU its own events around a gate the executor's stream waits behind
//                (executor/gate.hpp), less its calibrated excess over a call's own events for the workload's
//                memory (Kernel::by_workload); on the CPU one exchange per call, less a
//                null exchange. The executor's clock only cross-checks it (guard/rules.hpp)
//   check 11     candidate and leader in separate executors, in pairs on the same inputs, the order inside each pair
//                drawn at random, both validated, each stopped while the other runs; signed-rank test per workload,
//                Holm over the workloads (guard/stats.hpp)
//
//   Session s(dev, task, job, progress);
//   JudgeResult result = s.run();   // rejection | error (+ retryable) | accepted, with timings (job/result.hpp)
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
#include "khive/job/input_keys.hpp"
#include "khive/job/protocol.hpp"
#include "khive/job/result.hpp"
#include "khive/judge/arena.hpp"
#include "khive/judge/device.hpp"
#include "khive/judge/executor_process.hpp"
#include "khive/judge/goldens.hpp"
#include "khive/task/task.hpp"

namespace khive {

using ProgressFn = std::function<void(Check, const std::string& workload, const std::string& note)>;

class Session {
 public:
  // `make`: how executors start (default: ExecutorProcess, a khive-exec process); unit tests pass scripted ones.
  Session(JudgeDevice& dev, const Task& task, const Job& job, ProgressFn progress, ExecutorFactory make = {});
  ~Session();
  JudgeResult run();

 private:
  struct Rejected {  // thrown inside the procedures: the first failed check ends the evaluation
    Rejection r;
  };
  struct HarnessError {
    std::string why;
    bool retryable = false;
  };
  struct Kernel {  // one executor under test (the candidate, or the leader in an A/B)
    std::unique_ptr<Executor> ex;
    // What the judge's clock sees of a call that does no work, measured before any kernel code was in the process
    // (a loaded kernel could slow the null calls down to shrink its own times): GPU: the gate's latency between the
    // judge's events; CPU: one exchange after the judge's flush, as a timed call runs.
    Overhead overhead;
    // GPU, per perf workload: what the bracket sees beyond the call's own events for a built-in call that reads
    // every input and writes every output of the workload (executor/device.hpp, TouchCall), measured the same way
    // before load. This, not the empty gate, is what a timed call's sample subtracts: the switch out of a context
    // whose call touched memory costs ~2-4 us more than out of an empty one, by an amount that depends on the
    // footprint and differs between two executors (docs/guard.md, "The clock").
    std::map<std::string, Overhead> by_workload;
    const Overhead& offset(const std::string& workload) const {
      auto it = by_workload.find(workload);
      return it == by_workload.end() ? overhead : it->second;
    }
    std::unique_ptr<SharedRegion> gate;  // GPU: the counters of executor/gate.hpp
    uint32_t gate_next = 1;              // the value the next gated call waits for
    bool is_candidate = true;
  };
  struct TimedCall {  // one call of a timed batch: its input set and that set's goldens
    InputSpec spec;
    std::vector<Golden> gold;
  };
  struct Observed {                    // one batch of calls, each validated
    std::vector<double> sample_s;      // per call, the judge's clock less the overhead
    std::vector<double> bracket_s;     // per call, the judge's clock as read (GPU: J1 - J0; CPU: the exchange)
    std::vector<double> in_process_s;  // per call, the executor's own clock
    std::vector<double> copy_s;        // per call, taken off the sample: a PyTorch run's result copy (Exchange::copy_s)
    double drain_s = 0;                // the exchanges' drains (GPU), summed
    double median_s() const;           // of sample_s
    double in_process_median_s() const;
  };

  std::unique_ptr<Executor> start(const std::string& role, const std::string& library, bool vendor);
  std::unique_ptr<Executor> start_pytorch(const std::string& role, bool as_kernel);
  void start_kernels();
  void run_reference(Arena& a, int set);
  void share(Kernel& k, Arena& a);
  void share_reference(Arena& a);

  // A set's inputs: the kernels' view (reveal) or the reference's (for its goldens).
  void fill_inputs(Arena& a, int set, const Workload& w, const InputSpec& s, bool for_reference = false);
  // Whether input t is a float tensor on the default distribution (normal(0.5, 1): none given by the task or the
  // workload), which an InputSpec::centered draw makes with mean 0.
  bool on_default_normal(const Workload& w, const TensorSpec& t) const;
  void scrub_inputs(Arena& a, int first, int count);
  std::vector<uint64_t> hashes(Arena& a, int set);
  void check_inputs(Arena& a, int set, const std::vector<uint64_t>& before, const Workload& w,
                    const std::string& context);
  void poison_outputs(Arena& a, int first, int count, Poison p);
  Exchange call(Kernel& k, Arena& a, int first, int count, const std::string& context);
  // at_output_scale: atol widened by rtol x the golden's rms (the zero-mean draw: see check_outputs).
  void check_outputs(Arena& a, int set, const std::vector<Golden>& gold, const Workload& w, Poison p, Check check,
                     const std::string& context, const Kernel& k, bool at_output_scale = false);

  // One correctness call of the candidate on set `set` with spec's inputs (checks 3-5, or 7 as `check` says), against
  // goldens made for them; the inputs' hashes before the call (check 6 compares a repeat with them).
  std::vector<uint64_t> checked_call(Arena& a, int set, const Workload& w, const InputSpec& spec, Check check,
                                     const std::string& ctx, bool at_output_scale = false);
  void correctness(const Workload& w);
  void calibrate(Kernel& k);
  // The gated calls of one calibration on k's gate (before load): `calls` per exchange, `exchanges` times, with
  // `touch` spans or none; per call, the judge's bracket less the executor's events (touch) or the bracket (none).
  std::vector<double> calibration_calls(Kernel& k, int calls, int exchanges, const nlohmann::json& touch);
  // Call j's side of the gate on the judge's stream (executor/gate.hpp), as value v: wait for the executor's `go`,
  // `reveal`, flush, J0, `ready`, wait for `done`, J1, `after_end`.
  void enqueue_gated_call(Kernel& k, int j, uint32_t v, const std::function<void()>& reveal,
                          const std::function<void()>& after_end);
  // Every wait the judge's stream has on k's gate passes (an executor that failed mid-batch never writes its
  // counters); the gate is spent: the evaluation ends.
  void release_gate(Kernel& k);
  // Warm-up calls (validated like timed ones, their times discarded), then the batch size.
  int warm_up(const Workload& w, std::vector<Kernel*> ks);
  std::vector<TimedCall> plan_calls(Arena& a, const Workload& w, CallKind kind, uint64_t first_k, int count);
  // Runs `calls` on slots 0.. of `a`, each call's inputs revealed only when it is due, and validates every call.
  Observed timed_batch(Kernel& k, Arena& a, const std::vector<TimedCall>& calls, const Workload& w, uint64_t first_k,
                       const char* what);
  Observed gated_batch(Kernel& k, Arena& a, const std::vector<TimedCall>& calls, const Workload& w, uint64_t first_k,
                       const char* what);
  Observed exchanged_batch(Kernel& k, Arena& a, const std::vector<TimedCall>& calls, const Workload& w,
                           uint64_t first_k, const char* what);
  TimingRecord timing_record(const Workload& w, std::vector<double> samples, std::vector<double> in_process,
                             std::vector<double> drain, int batch, uint64_t validated) const;
  TimingRecord time_solo(const Workload& w);
  // `test` on the judge's clock; `on_events` the same test on the executors' own clocks (check 11 needs both).
  TimingRecord time_ab(const Workload& w, AbTest& test, AbTest& on_events);
  void check_clock(const Workload& w, const std::vector<Observed>& obs, const Kernel& k);

  [[noreturn]] void fault(const ExecutorFault& f, const std::string& role);
  bool selected(const Workload& w) const;

  JudgeDevice& dev_;
  const Task& task_;
  const Job& job_;
  ProgressFn progress_;
  ExecutorFactory make_;
  Kernel cand_, lead_;
  std::unique_ptr<Executor> ref_;
  uint64_t ref_arena_ = 0;  // the arena the reference's executor has mapped (Arena::id)
  // A PyTorch reference on a GPU judge works on host memory (Python cannot map the judge's CUDA regions): memfds
  // of the arena's sizes, the set's inputs copied in before each call and its goldens copied out after it.
  std::unique_ptr<JudgeDevice> host_;
  std::unique_ptr<SharedRegion> staged_in_, staged_gold_;
  std::string current_;  // the workload being judged, for rejections raised by executor faults
  InputKeys keys_;
  GoldenStore goldens_;
  std::mt19937_64 rng_;
  std::map<std::string, double> phases_;
  int correctness_calls_ = 0;
  struct PhaseTimer;
};

}  // namespace khive
