// A run's database, run.db (SQLite: candidates, board, strategy switches, agents, deferred evaluations, run
// metadata), beside its event log (event_log.hpp). The report and `--resume` read them back.
//
//   RunStore db(run / "run.db");  db.put_candidate(rec);  db.find_by_hash(h);
#pragma once
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "khive/agent/agent.hpp"
#include "khive/record/comparison.hpp"
#include "khive/support/hash.hpp"  // candidate_hash: a candidate's identity in run.db

struct sqlite3;

namespace khive {

struct CandidateRecord : VerdictRecord {
  std::string id;    // "c0007"
  int64_t seq = 0;   // order of recording
  std::string hash;  // sha256 of ext + source: the same kernel proposed twice is evaluated once
  std::string agent, strategy, parent, label, ext, note, source;
  std::map<std::string, std::string> params;
  std::string file;  // path of the source inside the run directory
  std::optional<double> score;
  double time_s = 0;                     // weighted geometric mean of the perf workload medians (accepted)
  double delta = 0;                      // gain over the leader at the time (+0.05 = 5% faster): comparison->gain
  std::optional<Comparison> comparison;  // accepted ones: how it stood against the leader of its time (comparison.hpp)
  std::map<std::string, double> workload_median_s;
  double t = 0;       // seconds since the run started, when the verdict was recorded
  double eval_s = 0;  // wall time of the evaluation
};

// An accepted candidate as agents and the backup ranking see it (agent/agent.hpp).
MeasuredKernel measured_kernel(const CandidateRecord& c);

struct SwitchRecord {
  int64_t id = 0;
  double t = 0;
  std::string agent, from, to, reason;
  std::string base;  // the candidate the agent derives from after the switch ("" = the leader)
};

struct AgentRecord {
  int index = 0;
  std::string name, kind, strategy, base;
};

// A candidate whose evaluation was deferred (built here, run on a machine with a GPU: docs/hive.md,
// "Models here, GPU there"): awaiting (built, not run) -> evaluated (verdict recorded by `khive evaluate-pending`)
// -> observed (its agent has seen the verdict on resume). The names are run.db's.
enum class PendingStatus { awaiting, evaluated, observed };
const char* pending_status_name(PendingStatus s);
std::optional<PendingStatus> parse_pending_status(std::string_view name);

struct PendingRecord {
  std::string id;         // candidate id ("c0007"; "c0000" is the reference)
  std::string agent;      // "a0", or "hive" for the reference
  std::string build_key;  // the builder's content key here; compared when it is rebuilt there
  PendingStatus status = PendingStatus::awaiting;
  double t_deferred = 0, t_evaluated = 0;
  std::string note;  // e.g. the last harness error while evaluating it
};

struct StoredBoardEntry {
  BoardEntry entry;
  double t = 0;
  bool evicted = false;
};

// What is wrong with the run database at `db` for a reader, or nullopt when it is whole: empty (0 bytes), not an
// SQLite database, failing SQLite's quick check, or recording nothing (no meta, no candidates). Opens it read-only and
// never changes it: RunStore's constructor would turn an empty file into an empty run, whose report then overwrote a
// good one (a 0-byte run.db made `khive report` write a 1 kB report.html over 20 kB, exit 0).
std::optional<std::string> run_db_problem(const std::filesystem::path& db);

class RunStore {
 public:
  enum class Access { read_write, read_only };
  // read_write: creates the schema when new. read_only (report, board, export, rescore): never writes, not even the
  // WAL's shared-memory file, so a run directory that is read-only (an archive, another user's) can still be read.
  // Throws naming the file.
  explicit RunStore(const std::filesystem::path& db, Access access = Access::read_write);
  ~RunStore();
  RunStore(const RunStore&) = delete;
  RunStore& operator=(const RunStore&) = delete;

  void set_meta(const std::string& key, const std::string& value);
  std::optional<std::string> meta(const std::string& key) const;

  void put_candidate(const CandidateRecord& c);     // insert or replace by id
  std::vector<CandidateRecord> candidates() const;  // by seq
  std::optional<CandidateRecord> find_by_hash(const std::string& hash) const;

  int64_t add_board_entry(const BoardEntry& e, double t);  // returns the new id
  void evict_board_entries(const std::vector<int64_t>& ids);
  std::vector<StoredBoardEntry> board(bool include_evicted) const;

  void add_switch(const SwitchRecord& s);
  std::vector<SwitchRecord> switches() const;

  void put_agent(const AgentRecord& a);
  std::vector<AgentRecord> agents() const;

  // Deferred evaluation: insert or replace by id; listed in candidate order (seq), optionally one status.
  void put_pending(const PendingRecord& p);
  std::vector<PendingRecord> pending(std::optional<PendingStatus> status = std::nullopt) const;

  // An agent's own state (JSON from Agent::save_state), so that a resumed run continues where it paused.
  void put_agent_state(int index, const std::string& kind, const std::string& state_json);
  std::optional<std::string> agent_state(int index, const std::string& kind) const;

 private:
  void exec(const std::string& sql) const;
  void add_comparison_column();
  std::filesystem::path path_;
  std::string cols_;  // the candidate columns read and written (older databases may lack `comparison`)
  sqlite3* db_ = nullptr;
  mutable std::mutex mu_;
};

}  // namespace khive
