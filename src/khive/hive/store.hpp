// The run's records: events.jsonl (append-only, fsync'd, crash-safe) and run.db (SQLite: candidates, board,
// strategy switches, agents, run metadata). The report and `--resume` read them back.
//
//   EventLog log(run / "events.jsonl");  log.append({{"type","candidate"}, ...});
//   auto r = read_event_log(run / "events.jsonl");   // r.events; r.torn_tail when the last line was cut
//   RunStore db(run / "run.db");  db.put_candidate(rec);  db.find_by_hash(h);
#pragma once
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "khive/hive/agent.hpp"
#include "khive/hive/comparison.hpp"

struct sqlite3;

namespace khive {

class EventLog {
 public:
  // Opens (creates) the log for appending. A torn last line (a crash mid-write: no final newline) is cut
  // off first, so the next event starts on a line of its own.
  explicit EventLog(std::filesystem::path file);
  ~EventLog();
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;
  // Writes one JSON line and fsyncs it before returning; thread-safe.
  void append(const nlohmann::json& event);
  const std::filesystem::path& file() const { return file_; }

 private:
  std::filesystem::path file_;
  int fd_ = -1;
  std::mutex mu_;
};

struct EventLogContents {
  std::vector<nlohmann::json> events;
  bool torn_tail = false;   // the last line was incomplete or unparsable and was ignored
};
// Reads a log. Only the last line may be torn; a bad line elsewhere throws std::runtime_error naming the
// file and the line. A missing file throws too.
EventLogContents read_event_log(const std::filesystem::path& file);

struct CandidateRecord {
  std::string id;                  // "c0007"
  int64_t seq = 0;                 // order of recording
  std::string hash;                // sha256 of ext + source: the same kernel proposed twice is evaluated once
  std::string agent, strategy, parent, label, ext, note, source;
  std::map<std::string, std::string> params;
  std::string file;                // path of the source inside the run directory
  std::string verdict;             // "leader" | "backup" | "rejected" | "error"
  std::string check, reason, message, diagnosis;
  std::optional<double> score;
  double time_s = 0;               // weighted geometric mean of the perf workload medians (accepted)
  double delta = 0;                // gain over the leader at the time (+0.05 = 5% faster): comparison->gain
  std::optional<Comparison> comparison;   // accepted ones: how it stood against the leader of its time (comparison.hpp)
  std::map<std::string, double> workload_median_s;
  double t = 0;                    // seconds since the run started, when the verdict was recorded
  double eval_s = 0;               // wall time of the evaluation
};

struct SwitchRecord {
  int64_t id = 0;
  double t = 0;
  std::string agent, from, to, reason;
  std::string base;                // the candidate the agent derives from after the switch ("" = the leader)
};

struct AgentRecord {
  int index = 0;
  std::string name, kind, strategy, base;
};

// A candidate whose evaluation was deferred (built here, run on a machine with a GPU: docs/hive.md,
// "Models here, GPU there"). status: "awaiting" (built, not run) -> "evaluated" (verdict recorded by
// `khive evaluate-pending`) -> "observed" (its agent has seen the verdict on resume).
struct PendingRecord {
  std::string id;                  // candidate id ("c0007"; "c0000" is the reference)
  std::string agent;               // "a0", or "hive" for the reference
  std::string build_key;           // the builder's content key here; compared when it is rebuilt there
  std::string status;              // "awaiting" | "evaluated" | "observed"
  double t_deferred = 0, t_evaluated = 0;
  std::string note;                // e.g. the last harness error while evaluating it
};

struct StoredBoardEntry {
  BoardEntry entry;
  double t = 0;
  bool evicted = false;
};

class RunStore {
 public:
  explicit RunStore(const std::filesystem::path& db);   // creates the schema when new; throws naming the file
  ~RunStore();
  RunStore(const RunStore&) = delete;
  RunStore& operator=(const RunStore&) = delete;

  void set_meta(const std::string& key, const std::string& value);
  std::optional<std::string> meta(const std::string& key) const;

  void put_candidate(const CandidateRecord& c);   // insert or replace by id
  std::vector<CandidateRecord> candidates() const;   // by seq
  std::optional<CandidateRecord> find_by_hash(const std::string& hash) const;

  int64_t add_board_entry(const BoardEntry& e, double t);   // returns the new id
  void evict_board_entries(const std::vector<int64_t>& ids);
  std::vector<StoredBoardEntry> board(bool include_evicted) const;

  void add_switch(const SwitchRecord& s);
  std::vector<SwitchRecord> switches() const;

  void put_agent(const AgentRecord& a);
  std::vector<AgentRecord> agents() const;

  // Deferred evaluation: insert or replace by id; listed in candidate order (seq), optionally one status.
  void put_pending(const PendingRecord& p);
  std::vector<PendingRecord> pending(const std::string& status = "") const;

  // An agent's own state (JSON from Agent::save_state), so that a resumed run continues where it paused.
  void put_agent_state(int index, const std::string& kind, const std::string& state_json);
  std::optional<std::string> agent_state(int index, const std::string& kind) const;

 private:
  void exec(const std::string& sql) const;
  void add_comparison_column();
  std::filesystem::path path_;
  std::string cols_;   // the candidate columns read and written (older databases may lack `comparison`)
  sqlite3* db_ = nullptr;
  mutable std::mutex mu_;
};

std::string candidate_hash(const std::string& ext, const std::string& source);

// What a run recorded, from run.db or, when a folder kept only its event log (the log is the crash-safe record;
// results folders may leave the database out), from the log's start, candidate, stop and end events (the last event
// of a candidate id wins). For readers of finished runs: khive rescore, optimize --warm-start, khive export (and
// through it the bench/*.py tables).
struct RunRecords {
  std::string source;              // "run.db" or "events.jsonl": what was read
  std::string reference, leader, backend, seed;
  std::string task, task_dir, task_dir_from_run;   // as recorded; an event log records the task's name only
  std::optional<std::string> stop_reason;          // none: the run never recorded stopping (it was cut short)
  nlohmann::json options = nlohmann::json::object();
  std::vector<CandidateRecord> candidates;   // in recording order; from a log, seq is that order (0 = first)
};
// Throws std::runtime_error naming the file when the directory has neither, or (require_reference) the reference was
// never recorded; never creates a database.
RunRecords load_run_records(const std::filesystem::path& run_dir, bool require_reference = true);
// `khive export RUN`'s document (schema khive.run-export/1): the run's meta and its candidates without their sources.
nlohmann::json run_records_json(const RunRecords& rr, const std::filesystem::path& run_dir);

}  // namespace khive
