// The hive (docs/hive.md): N agents on threads, each holding one strategy; a shared leader and a
// ranked, diverse set of backups; every candidate through an Evaluator (the guard, or a scripted fake in
// tests); the plateau rule; the shared board; budgets; the run directory (run.db, events.jsonl, candidates/).
//
//   GuardEvaluator ev(task, Backend::cpu, eval_options);          // evaluator.hpp
//   HiveOptions o; o.run_dir = "runs/softmax"; o.budget_candidates = 40; o.plateau = 6;
//   Hive hive(task, Backend::cpu, std::move(agents), ev, o);
//   HiveResult r = hive.run();        // blocks until a budget is spent, every agent is done, or stop is set
//
// Verdict routing (docs/hive.md): rejected -> discarded; correct and not faster than the leader by more than the
// noise (guard check 11, interleaved A/B) -> backup; correct and faster -> new leader. The task's reference is
// measured once at the start and is the first leader, so the hive's answer is never slower than it.
#pragma once
#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "khive/agent/agent.hpp"
#include "khive/record/comparison.hpp"
#include "khive/support/dir_lock.hpp"
#include "khive/task/task.hpp"

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
};

struct HiveOptions {
  std::filesystem::path run_dir;
  bool resume = false;        // continue the run in run_dir (its run.db) instead of starting one
  int budget_candidates = 0;  // evaluated candidates (the reference excluded); 0 = unlimited
  double budget_time_s = 0;   // wall time; 0 = unlimited
  int64_t budget_tokens = 0;  // summed Agent::usage(); 0 = unlimited
  double budget_cost_usd = 0;
  int plateau = 6;              // P: evaluated candidates in a row without a new leader -> switch
  bool board = true;            // false: no shared board (ablation)
  int board_capacity = 0;       // 0 = unlimited
  std::size_t board_view = 30;  // entries an agent reads per proposal
  int max_backups = 8;
  int max_backups_per_family = 2;  // diversity: at most this many backups per strategy family
  int recent_window = 2;           // a plateau switch avoids the strategies held this recently
  int max_duplicates = 20;         // proposals in a row repeating known kernels -> strategy exhausted
  int max_harness_errors = 5;      // harness failures in a row -> the run stops
  // Models here, GPU there: candidates are built (check 1) but not run; one that builds is recorded as
  // "pending" and its agent waits; the run pauses when every agent waits. `evaluate_pending()` (on a
  // machine with a GPU) gives the verdicts; a resumed run hands them to the agents. The reference is
  // deferred too (it is measured there).
  bool defer_eval = false;
  uint64_t seed = 0;                                        // per run; agents get seed + index
  const std::atomic<bool>* external_stop = nullptr;         // Ctrl-C
  std::function<void(const struct HiveStatus&)> on_update;  // progress; called from the hive's main thread
  nlohmann::json meta;                                      // recorded in run.db (task, backend, agent specs, options)
  std::string command;  // recorded in the run directory's lock (DirLock); "" = this process's command line
  // The run directory's lock when the caller took it already (the CLI does, before making agents that write
  // under the directory); else the hive takes it.
  std::shared_ptr<DirLock> lock;
};

struct AgentStatus {
  std::string name, kind, strategy, base;
  int attempts = 0, leaders = 0, backups = 0, rejected = 0, errors = 0, reused = 0, switches = 0;
  int since_leader = 0;  // evaluated candidates since its last new leader (plateau counter)
  std::optional<double> best_time_s, best_score;
  bool done = false;
  bool waiting = false;  // its last proposal awaits a GPU verdict (deferred evaluation)
  std::string failure;   // why it stopped when it could not work (Agent::provider_failure)
  std::string phase;     // what it does now: "proposing", "evaluating c0004", ... ("" when idle)
  int pending = 0;       // candidates it left awaiting in this session
};

struct HiveStatus {
  double elapsed_s = 0;  // all sessions of the run
  double session_s = 0;  // this session (the time budget counts these)
  int evaluated = 0;     // candidates evaluated in this run (all sessions)
  std::vector<AgentStatus> agents;
  std::optional<MeasuredKernel> leader;
  std::size_t backups = 0, board_entries = 0;
  std::vector<SlotUsage> slots;
  int budget_candidates = 0;  // the run's budgets, for progress (0 = none)
  double budget_time_s = 0;
  std::vector<std::string> lines;  // events since the previous update, one line each (for plain output)
  bool finished = false;
  std::string stop_reason;
  // Every agent stopped because it could not work (its model provider failed), none was merely done.
  bool all_agents_failed() const;
};

struct HiveResult {
  HiveStatus status;
  std::optional<MeasuredKernel> leader;
  std::vector<MeasuredKernel> backups;
  std::string reference_id;
};

// What `khive evaluate-pending` did.
struct PendingVerdict : VerdictRecord {
  std::string id, agent, strategy, label;
  double time_s = 0, delta = 0, eval_s = 0;
  std::optional<double> score;
  std::optional<Comparison> comparison;  // accepted: against the leader of its time (record/comparison.hpp)
  bool build_key_changed = false;        // rebuilt there with another key (another toolchain): said, not fatal
};
struct PendingSummary {
  std::vector<PendingVerdict> verdicts;  // in candidate order, the reference first when it was pending
  int errors = 0;                        // harness failures: left awaiting, evaluated again next time
  int remaining = 0;                     // still awaiting afterwards
  std::optional<MeasuredKernel> leader;
  double seconds = 0;
};

class Hive {
 public:
  Hive(const Task& task, Backend backend, std::vector<std::unique_ptr<Agent>> agents, Evaluator& eval, HiveOptions o);
  ~Hive();
  // run() and evaluate_pending() hold the run directory's lock (support/dir_lock.hpp) while they work: a
  // second process on the same directory throws DirLockBusy before touching run.db.
  HiveResult run();
  // The GPU side of a deferred run (o.run_dir must hold one; agents are not needed): measures the reference
  // (goldens and T_b, the run's seed), then every awaiting candidate in order through the evaluator against
  // the leader of the time, with the hive's leader / backup / rejected rules; records the verdicts in run.db
  // and events.jsonl. Board entries are not written here: each agent posts its own conclusion when it
  // observes the verdict on resume.
  PendingSummary evaluate_pending();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The plateau choice: the strategy to move an agent to, or "" when none other is left. Candidates are the
// agent's strategies other than the current one, not exhausted and not among the `recent` ones (dropped
// from the filter when it leaves nothing); the least explored wins (explored[name], e.g. board entries),
// then the one held by the fewest other agents (held[name]), then declaration order starting after the
// agent's index (so identical agents spread out).
std::string choose_strategy(const std::vector<Strategy>& all, const std::string& current,
                            const std::vector<std::string>& recent, const std::vector<std::string>& exhausted,
                            const std::map<std::string, int>& explored, const std::map<std::string, int>& held,
                            int agent_index);

}  // namespace khive
