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
#include "khive/eval/evaluator.hpp"
#include "khive/record/comparison.hpp"
#include "khive/support/dir_lock.hpp"
#include "khive/task/task.hpp"

namespace khive {

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
  // Speculative builds (hive/prebuild.hpp): while a proposal waits for its verdict, what its agent would propose next
  // is built ahead on this many cores. -1: default_prebuild_jobs (CUDA: the spare cores, at most 8; CPU: 0).
  int prebuild_jobs = -1;
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
