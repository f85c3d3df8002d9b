// The hive's inside (Hive::Impl): its state under one mutex, and its methods, each defined in the file of its concern:
//
//   hive.cpp        the public face: Hive, HiveStatus (the evaluators are eval/'s: eval/evaluator.hpp)
//   records.cpp     events, run.db rows, the agents' counters and states, the board, the status line
//   slots.cpp       agent slots: strategy choice and switching, plateaus, an agent's context and counters
//   verdicts.cpp    one candidate judged: leader / backup / rejected / error, what it changes in the standings
//                   (standings.hpp: the leader, the accepted kernels, the ranked backups) and the leader's file
//   agent_loop.cpp  one agent's thread: propose, reuse known kernels, record, judge, conclude
//   deferred.cpp    deferred evaluation: build-only candidates, delivering verdicts on resume, evaluate-pending
//   setup.cpp       a run's setup and restore: the lock, the records, the agents' strategies, the reference, resume
//   loop.cpp        the run: the agents' threads, the watch loop (stop conditions, progress), the end
//   prebuild.cpp    speculative builds of what agents would propose next (prebuild.hpp; used by agent_loop.cpp)
//
// Private to src/khive/hive: nothing outside the hive's own files includes it.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "khive/hive/hive.hpp"
#include "khive/hive/prebuild.hpp"
#include "khive/hive/standings.hpp"
#include "khive/record/event_log.hpp"
#include "khive/record/store.hpp"
#include "khive/support/dir_lock.hpp"

namespace khive {

// One agent as the hive sees it: the agent, its strategies and the one it holds, where it derives from, and the
// hive's counters for the plateau rules.
struct AgentSlot {
  int index = 0;
  std::unique_ptr<Agent> agent;
  std::vector<Strategy> strategies;
  Strategy strategy;
  std::string base;  // candidate id to derive from ("" = the leader)
  std::deque<std::string> recent;
  std::vector<std::string> exhausted;  // for the current base
  int attempts_in_strategy = 0;
  int streak = 0;  // evaluated without a new leader, in this strategy
  int dup_streak = 0;
  std::map<std::string, int> own_explored;
  AgentStatus st;
};

struct Hive::Impl {
  using Clock = std::chrono::steady_clock;

  const Task& task;
  Backend backend;
  std::string ext;
  Evaluator& eval;
  HiveOptions o;
  std::vector<AgentSlot> agents;
  std::shared_ptr<DirLock> lock;  // held from the first look at run_dir to the end
  std::unique_ptr<RunStore> db;
  std::unique_ptr<EventLog> log;

  std::mutex mu;
  std::condition_variable cv;
  std::atomic<bool> stop{false};
  std::string stop_reason;
  // What stopped the run, for what happens to evaluations still under way (stop_evaluations): the time budget
  // (those waiting for a device end at once, those on it get a grace), Ctrl-C (those waiting end at once).
  bool stopped_by_time = false, stopped_by_interrupt = false;
  int running_agents = 0;  // agent threads still in agent_loop
  Clock::time_point t0;
  double t_offset = 0;  // seconds of earlier sessions (resume)

  Standings standings{o.max_backups, o.max_backups_per_family};  // the leader, the accepted kernels, the backups
  std::string leader_file;                                       // the leader's source in the run directory
  std::map<std::string, std::string> file_of;                    // candidate id -> absolute source path
  std::map<std::string, CandidateRecord> known;                  // hash -> verdict (errors excluded: retried)
  std::map<std::string, std::string> awaiting;                   // hash -> id of a candidate awaiting its GPU verdict
  std::vector<BoardEntry> board;
  int64_t seq = 0;
  int evaluated = 0, reserved = 0;
  int since_hive_leader = 0, harness_errors = 0;
  bool told_no_backup = false;
  std::vector<std::string> lines;
  std::string reference_id;
  std::unique_ptr<Prebuilder> prebuilder;  // speculative builds while verdicts are awaited (agent_loop.cpp)

  Impl(const Task& t, Backend b, Evaluator& e, HiveOptions opt)
      : task(t), backend(b), ext(backend_ext(b)), eval(e), o(std::move(opt)) {}

  double now() const { return t_offset + std::chrono::duration<double>(Clock::now() - t0).count(); }

  // ---- records.cpp (callers hold mu unless said)
  void event(nlohmann::json ev, const std::string& line);
  void set_stop(const std::string& why);
  void save_agent(const AgentSlot& a);
  static std::string counters_key(const AgentSlot& a);
  void save_counters(const AgentSlot& a);
  void load_counters(AgentSlot& a, const std::string& text);
  void post(AgentSlot& a, BoardEntry e, const Outcome& oc);
  void record_candidate(const CandidateRecord& c);
  static std::string verdict_line(const CandidateRecord& c);
  void save_state(AgentSlot& a);  // without mu
  std::vector<SlotUsage> slots() const { return eval.slot_usage(); }
  nlohmann::json slots_json() const;
  HiveStatus status(bool take_lines);
  static std::string ms(double s);

  // ---- slots.cpp (callers hold mu)
  void record_switch(AgentSlot& a, const std::string& to, const std::string& reason);
  bool switch_strategy(AgentSlot& a, const std::string& reason);
  void exhausted(AgentSlot& a, const std::string& why);
  void agent_failed(AgentSlot& a, const std::string& why);
  void check_plateaus(AgentSlot& a);
  void check_hive_plateau();
  AgentContext context(AgentSlot& a);
  void account(AgentSlot& a, const CandidateRecord& c);
  bool all_failed() const;

  // ---- verdicts.cpp
  Evaluation judge(CandidateRecord& c, const std::filesystem::path& file, const std::optional<Evaluation>& preset,
                   bool record_error);
  std::optional<Standing> measure_until_decided(Evaluation& ev, bool preset, const std::filesystem::path& file,
                                                std::string& against_id, std::optional<MeasuredKernel>& prev_leader);
  std::optional<Standing> route(Evaluation& ev, const std::string& against_id, int attempt);
  void write_verdict(CandidateRecord& c, const Evaluation& ev, Standing verdict, const std::string& against_id,
                     const std::optional<MeasuredKernel>& prev_leader);
  void apply_verdict(const CandidateRecord& c);
  void become_leader(const MeasuredKernel& k);
  static Outcome outcome_of(const CandidateRecord& c);
  static Proposal proposal_of(const CandidateRecord& c);

  // ---- agent_loop.cpp (without mu)
  void agent_loop(AgentSlot& a);
  bool agent_step(AgentSlot& a, std::string& subject);
  bool no_proposal(AgentSlot& a);
  bool seen_before(AgentSlot& a, const AgentContext& ctx, const Proposal& p, const std::string& hash);
  std::optional<std::filesystem::path> new_candidate(AgentSlot& a, const AgentContext& ctx, const Proposal& p,
                                                     const std::string& hash, CandidateRecord& c);
  void conclude(AgentSlot& a, const AgentContext& ctx, const Proposal& p, const CandidateRecord& c);
  void prebuild_next(AgentSlot& a, const AgentContext& ctx);
  bool budget_usage_spent();  // callers hold mu

  // ---- deferred.cpp
  bool build_deferred(AgentSlot& a, CandidateRecord& c, const std::filesystem::path& file,
                      std::optional<Evaluation>& preset);
  bool deliver(AgentSlot& a);
  std::string pause_message() const;
  PendingSummary evaluate_pending();
  bool evaluate_one_pending(PendingRecord pr, const std::map<std::string, CandidateRecord>& by_id, PendingSummary& sum);

  // ---- setup.cpp
  struct ReferenceFiles {
    std::filesystem::path original, copy;  // the task's reference; its copy in the run directory
    std::string source;
  };
  void take_lock();
  void open_records();
  void note_stale_lock();
  void init_agents();
  void record_run_meta();
  void restore();
  void restore_agents();
  std::optional<ReferenceFiles> reference_files() const;  // none: only a PyTorch reference (the judge's goldens)
  Evaluation prepare_reference(std::unique_lock<std::mutex>& lk, const ReferenceFiles& ref);
  void start_reference(std::unique_lock<std::mutex>& lk);
  CandidateRecord reference_record(const std::string& ref_source, const std::filesystem::path& ref_copy);
  bool measure_reference(const std::string& ref_source, const std::filesystem::path& ref_copy, const Evaluation& rev);

  // ---- loop.cpp
  HiveResult run();
  void watch(std::unique_lock<std::mutex>& lk);
  void stop_evaluations(std::unique_lock<std::mutex>& lk);
  HiveResult finish(std::unique_lock<std::mutex>& lk);
};

}  // namespace khive
