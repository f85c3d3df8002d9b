#include "khive/record/store.hpp"

#include <sqlite3.h>

#include <stdexcept>

#include <fmt/format.h>

#include "khive/support/hash.hpp"

namespace khive {

namespace {

struct Stmt {
  sqlite3_stmt* s = nullptr;
  sqlite3* db;
  Stmt(sqlite3* d, const std::string& sql) : db(d) {
    if (sqlite3_prepare_v2(d, sql.c_str(), -1, &s, nullptr) != SQLITE_OK)
      throw std::runtime_error(std::string("run.db: ") + sqlite3_errmsg(d) + " in: " + sql);
  }
  ~Stmt() { sqlite3_finalize(s); }
  Stmt& bind(int i, const std::string& v) {
    sqlite3_bind_text(s, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& bind(int i, double v) {
    sqlite3_bind_double(s, i, v);
    return *this;
  }
  Stmt& bind(int i, int64_t v) {
    sqlite3_bind_int64(s, i, v);
    return *this;
  }
  Stmt& bind_opt(int i, const std::optional<double>& v) {
    if (v)
      sqlite3_bind_double(s, i, *v);
    else
      sqlite3_bind_null(s, i);
    return *this;
  }
  bool step() {
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw std::runtime_error(std::string("run.db: ") + sqlite3_errmsg(db));
  }
  std::string text(int c) const {
    auto p = sqlite3_column_text(s, c);
    return p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(s, c)))
             : std::string();
  }
  double real(int c) const { return sqlite3_column_double(s, c); }
  int64_t integer(int c) const { return sqlite3_column_int64(s, c); }
  bool null(int c) const { return sqlite3_column_type(s, c) == SQLITE_NULL; }
};

const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS candidates (
  id TEXT PRIMARY KEY, seq INTEGER NOT NULL, hash TEXT NOT NULL, agent TEXT, strategy TEXT, parent TEXT, label TEXT,
  ext TEXT, note TEXT, source TEXT, params TEXT, file TEXT, verdict TEXT, check_name TEXT, reason TEXT, message TEXT,
  diagnosis TEXT, score REAL, time_s REAL, delta REAL, workloads TEXT, t REAL, eval_s REAL, comparison TEXT);
CREATE INDEX IF NOT EXISTS candidates_hash ON candidates(hash);
CREATE TABLE IF NOT EXISTS board (
  id INTEGER PRIMARY KEY AUTOINCREMENT, agent TEXT, strategy TEXT, kind TEXT, text TEXT, candidate TEXT, delta REAL,
  reason TEXT, t REAL, evicted INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS switches (
  id INTEGER PRIMARY KEY AUTOINCREMENT, t REAL, agent TEXT, from_strategy TEXT, to_strategy TEXT, reason TEXT, base TEXT);
CREATE TABLE IF NOT EXISTS agents (idx INTEGER PRIMARY KEY, name TEXT, kind TEXT, strategy TEXT, base TEXT);
CREATE TABLE IF NOT EXISTS pending (
  id TEXT PRIMARY KEY, agent TEXT, build_key TEXT, status TEXT NOT NULL, t_deferred REAL, t_evaluated REAL, note TEXT);
CREATE TABLE IF NOT EXISTS agent_state (idx INTEGER PRIMARY KEY, kind TEXT NOT NULL, state TEXT NOT NULL);
)";

// A stored name read back as its type; a name this version does not know is named with the file, the row ("candidate
// c0007", "pending c0007") and the column instead of being read as something else.
template <typename E>
E stored(std::optional<E> value, const std::filesystem::path& db, const std::string& row, const char* column,
         const std::string& text, const char* expected) {
  if (!value)
    throw std::runtime_error(
        fmt::format("{}: {}: column {} is '{}', expected {}", db.string(), row, column, text, expected));
  return *value;
}

CandidateRecord read_candidate(const Stmt& q, const std::filesystem::path& db) {
  CandidateRecord c;
  c.id = q.text(0);
  c.seq = q.integer(1);
  c.hash = q.text(2);
  c.agent = q.text(3);
  c.strategy = q.text(4);
  c.parent = q.text(5);
  c.label = q.text(6);
  c.ext = q.text(7);
  c.note = q.text(8);
  c.source = q.text(9);
  auto params = nlohmann::json::parse(q.text(10), nullptr, false);
  if (params.is_object())
    for (auto& [k, v] : params.items()) c.params[k] = v.is_string() ? v.get<std::string>() : v.dump();
  c.file = q.text(11);
  c.standing = stored(parse_standing(q.text(12)), db, "candidate " + c.id, "verdict", q.text(12),
                      "leader, backup, rejected, error or pending");
  if (!q.text(13).empty())
    c.check = stored(parse_check(q.text(13)), db, "candidate " + c.id, "check_name", q.text(13),
                     "a check's name (docs/guard.md)");
  c.reason = q.text(14);
  c.message = q.text(15);
  c.diagnosis = q.text(16);
  if (!q.null(17)) c.score = q.real(17);
  c.time_s = q.real(18);
  c.delta = q.real(19);
  auto w = nlohmann::json::parse(q.text(20), nullptr, false);
  if (w.is_object())
    for (auto& [k, v] : w.items())
      if (v.is_number()) c.workload_median_s[k] = v.get<double>();
  c.t = q.real(21);
  c.eval_s = q.real(22);
  // A comparison that cannot be read leaves the candidate without one (its delta still says the gain).
  if (auto cmp = nlohmann::json::parse(q.text(23), nullptr, false); cmp.is_object()) {
    try {
      c.comparison = comparison_from_json(cmp);
    } catch (const std::exception&) {
    }
  }
  return c;
}

const char* kCandidateCols =
    "id, seq, hash, agent, strategy, parent, label, ext, note, source, params, file, verdict, check_name, reason, "
    "message, "
    "diagnosis, score, time_s, delta, workloads, t, eval_s";

}  // namespace

const char* pending_status_name(PendingStatus s) {
  switch (s) {
    case PendingStatus::awaiting: return "awaiting";
    case PendingStatus::evaluated: return "evaluated";
    case PendingStatus::observed: return "observed";
  }
  return "?";
}

std::optional<PendingStatus> parse_pending_status(std::string_view name) {
  for (auto s : {PendingStatus::awaiting, PendingStatus::evaluated, PendingStatus::observed})
    if (name == pending_status_name(s)) return s;
  return std::nullopt;
}

MeasuredKernel measured_kernel(const CandidateRecord& c) {
  MeasuredKernel k;
  k.id = c.id;
  k.source = c.source;
  k.ext = c.ext;
  k.agent = c.agent;
  k.strategy = c.strategy;
  k.params = c.params;
  k.score = c.score.value_or(0);
  k.time_s = c.time_s;
  k.workload_median_s = c.workload_median_s;
  return k;
}

namespace {

// A handle that only reads `db`: read-only first; where that cannot even read (a WAL database in a directory this
// user cannot write: SQLite must create its shared-memory file), as an immutable file (nothing else writes it then,
// or it would be writable). nullptr with `error` set when neither works.
sqlite3* open_for_reading(const std::filesystem::path& db, std::string& error) {
  auto readable = [](sqlite3* h) {
    return sqlite3_exec(h, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr) == SQLITE_OK;
  };
  sqlite3* h = nullptr;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY | SQLITE_OPEN_FULLMUTEX, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(h, 10000);
    if (readable(h)) return h;
  }
  error = h ? sqlite3_errmsg(h) : "out of memory";
  sqlite3_close(h);
  h = nullptr;
  std::string uri = "file:";
  for (char c : std::filesystem::absolute(db).string()) {
    if (c == '%' || c == '?' || c == '#')
      uri += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    else
      uri += c;
  }
  uri += "?immutable=1";
  if (sqlite3_open_v2(uri.c_str(), &h, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_FULLMUTEX, nullptr) ==
          SQLITE_OK &&
      readable(h))
    return h;
  sqlite3_close(h);
  return nullptr;
}

}  // namespace

std::optional<std::string> run_db_problem(const std::filesystem::path& db) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(db, ec);
  if (ec) return "cannot be read (" + ec.message() + ")";
  if (size == 0) return std::string("is empty (0 bytes)");
  std::string open_error;
  sqlite3* h = open_for_reading(db, open_error);
  if (!h) return "is not a readable SQLite database (" + open_error + ")";
  std::optional<std::string> problem;
  auto first_text = [&](const char* sql, std::string& out) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(h, sql, -1, &st, nullptr) != SQLITE_OK) {
      out = sqlite3_errmsg(h);
      sqlite3_finalize(st);
      return false;
    }
    const int rc = sqlite3_step(st);
    out =
        rc == SQLITE_ROW && sqlite3_column_text(st, 0) ? reinterpret_cast<const char*>(sqlite3_column_text(st, 0)) : "";
    const bool ok = rc == SQLITE_ROW || rc == SQLITE_DONE;
    if (!ok) out = sqlite3_errmsg(h);
    sqlite3_finalize(st);
    return ok;
  };
  std::string v;
  if (!first_text("PRAGMA quick_check", v))
    problem = "is not a readable SQLite database (" + v + ")";
  else if (v != "ok")
    problem = "fails SQLite's quick check (" + v + ")";
  else if (!first_text("SELECT (SELECT count(*) FROM meta) + (SELECT count(*) FROM candidates)", v))
    problem = "has no run tables (" + v + ")";
  else if (v == "0")
    problem = std::string("records nothing (no meta, no candidates)");
  sqlite3_close(h);
  return problem;
}

RunStore::RunStore(const std::filesystem::path& db, Access access) : path_(db) {
  if (access == Access::read_only) {
    std::string e;
    db_ = open_for_reading(db, e);
    if (!db_) throw std::runtime_error(db.string() + ": cannot open the run database: " + e);
    add_comparison_column();
    return;
  }
  if (!db.parent_path().empty()) std::filesystem::create_directories(db.parent_path());
  if (sqlite3_open_v2(db.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr) !=
      SQLITE_OK) {
    std::string e = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw std::runtime_error(db.string() + ": cannot open the run database: " + e);
  }
  sqlite3_busy_timeout(db_, 10000);
  // WAL + synchronous=FULL: every committed row survives a crash; readers (khive report) never block the run.
  exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;");
  exec(kSchema);
  add_comparison_column();
}

// Runs recorded before comparisons were kept get the column; a database that cannot be changed (read-only) is
// read without it.
void RunStore::add_comparison_column() {
  bool has = false;
  {
    Stmt q(db_, "PRAGMA table_info(candidates)");
    while (q.step()) has = has || q.text(1) == "comparison";
  }
  if (!has) {
    char* err = nullptr;
    has = sqlite3_exec(db_, "ALTER TABLE candidates ADD COLUMN comparison TEXT", nullptr, nullptr, &err) == SQLITE_OK;
    sqlite3_free(err);
    if (!has) {  // another process may have added it meanwhile
      Stmt q(db_, "PRAGMA table_info(candidates)");
      while (q.step()) has = has || q.text(1) == "comparison";
    }
  }
  cols_ = std::string(kCandidateCols) + (has ? ", comparison" : ", NULL");
}

RunStore::~RunStore() {
  if (db_) sqlite3_close(db_);
}

void RunStore::exec(const std::string& sql) const {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string e = err ? err : "error";
    sqlite3_free(err);
    throw std::runtime_error(path_.string() + ": " + e);
  }
}

void RunStore::set_meta(const std::string& key, const std::string& value) {
  std::lock_guard<std::mutex> lk(mu_);
  Stmt q(db_, "INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)");
  q.bind(1, key).bind(2, value).step();
}

std::optional<std::string> RunStore::meta(const std::string& key) const {
  std::lock_guard<std::mutex> lk(mu_);
  Stmt q(db_, "SELECT value FROM meta WHERE key = ?");
  q.bind(1, key);
  if (q.step()) return q.text(0);
  return std::nullopt;
}

void RunStore::put_candidate(const CandidateRecord& c) {
  std::lock_guard<std::mutex> lk(mu_);
  Stmt q(
      db_,
      fmt::format(
          "INSERT OR REPLACE INTO candidates({}, comparison) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
          kCandidateCols));
  nlohmann::json params(c.params), w(c.workload_median_s);
  q.bind(1, c.id)
      .bind(2, c.seq)
      .bind(3, c.hash)
      .bind(4, c.agent)
      .bind(5, c.strategy)
      .bind(6, c.parent)
      .bind(7, c.label);
  q.bind(8, c.ext)
      .bind(9, c.note)
      .bind(10, c.source)
      .bind(11, params.dump())
      .bind(12, c.file)
      .bind(13, standing_name(c.standing));
  q.bind(14, c.check_text())
      .bind(15, c.reason)
      .bind(16, c.message)
      .bind(17, c.diagnosis)
      .bind_opt(18, c.score)
      .bind(19, c.time_s);
  q.bind(20, c.delta).bind(21, w.dump()).bind(22, c.t).bind(23, c.eval_s);
  q.bind(24, c.comparison
                 ? comparison_json(*c.comparison).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                 : std::string());
  q.step();
}

std::vector<CandidateRecord> RunStore::candidates() const {
  std::lock_guard<std::mutex> lk(mu_);
  Stmt q(db_, fmt::format("SELECT {} FROM candidates ORDER BY seq", cols_));
  std::vector<CandidateRecord> v;
  while (q.step()) v.push_back(read_candidate(q, path_));
  return v;
}

std::optional<CandidateRecord> RunStore::find_by_hash(const std::string& hash) const {
  std::lock_guard<std::mutex> lk(mu_);
  Stmt q(db_, fmt::format("SELECT {} FROM candidates WHERE hash = ? ORDER BY seq LIMIT 1", cols_));
  q.bind(1, hash);
  if (q.step()) return read_candidate(q, path_);
  return std::nullopt;
}

int64_t RunStore::add_board_entry(const BoardEntry& e, double t) {
  std::lock_guard<std::mutex> lk(mu_);
  Stmt q(db_, "INSERT INTO board(agent, strategy, kind, text, candidate, delta, reason, t) VALUES(?,?,?,?,?,?,?,?)");
  q.bind(1, e.agent)
      .bind(2, e.strategy)
      .bind(3, e.kind)
      .bind(4, e.text)
      .bind(5, e.candidate)
      .bind(6, e.delta)
      .bind(7, e.reason)
      .bind(8, t);
  q.step();
  return sqlite3_last_insert_rowid(db_);
}

void RunStore::evict_board_entries(const std::vector<int64_t>& ids) {
  std::lock_guard<std::mutex> lk(mu_);
  for (auto id : ids) {
    Stmt q(db_, "UPDATE board SET evicted = 1 WHERE id = ?");
    q.bind(1, id).step();
  }
}

std::vector<StoredBoardEntry> RunStore::board(bool include_evicted) const {
  std::lock_guard<std::mutex> lk(mu_);
  Stmt q(db_, std::string("SELECT id, agent, strategy, kind, text, candidate, delta, reason, t, evicted FROM board ") +
                  (include_evicted ? "" : "WHERE evicted = 0 ") + "ORDER BY id");
  std::vector<StoredBoardEntry> v;
  while (q.step()) {
    StoredBoardEntry s;
    s.entry.id = q.integer(0);
    s.entry.agent = q.text(1);
    s.entry.strategy = q.text(2);
    s.entry.kind = q.text(3);
    s.entry.text = q.text(4);
    s.entry.candidate = q.text(5);
    s.entry.delta = q.real(6);
    s.entry.reason = q.text(7);
    s.t = q.real(8);
    s.evicted = q.integer(9) != 0;
    v.push_back(std::move(s));
  }
  return v;
}

void RunStore::add_switch(const SwitchRecord& s) {
  std::lock_guard<std::mutex> lk(mu_);
  Stmt q(db_, "INSERT INTO switches(t, agent, from_strategy, to_strategy, reason, base) VALUES(?,?,?,?,?,?)");
  q.bind(1, s.t).bind(2, s.agent).bind(3, s.from).bind(4, s.to).bind(5, s.reason).bind(6, s.base).step();
}

std::vector<SwitchRecord> RunStore::switches() const {
  std::lock_guard<std::mutex> lk(mu_);
  Stmt q(db_, "SELECT id, t, agent, from_strategy, to_strategy, reason, base FROM switches ORDER BY id");
  std::vector<SwitchRecord> v;
  while (q.step()) v.push_back({q.integer(0), q.real(1), q.text(2), q.text(3), q.text(4), q.text(5), q.text(6)});
  return v;
}

void RunStore::put_agent(const AgentRecord& a) {
  std::lock_guard<std::mutex> lk(mu_);
  Stmt q(db_, "INSERT OR REPLACE INTO agents(idx, name, kind, strategy, base) VALUES(?,?,?,?,?)");
  q.bind(1, static_cast<int64_t>(a.index)).bind(2, a.name).bind(3, a.kind).bind(4, a.strategy).bind(5, a.base).step();
}

std::vector<AgentRecord> RunStore::agents() const {
  std::lock_guard<std::mutex> lk(mu_);
  Stmt q(db_, "SELECT idx, name, kind, strategy, base FROM agents ORDER BY idx");
  std::vector<AgentRecord> v;
  while (q.step()) v.push_back({static_cast<int>(q.integer(0)), q.text(1), q.text(2), q.text(3), q.text(4)});
  return v;
}

void RunStore::put_pending(const PendingRecord& p) {
  std::lock_guard<std::mutex> lk(mu_);
  Stmt q(db_,
         "INSERT OR REPLACE INTO pending(id, agent, build_key, status, t_deferred, t_evaluated, note) "
         "VALUES(?,?,?,?,?,?,?)");
  q.bind(1, p.id)
      .bind(2, p.agent)
      .bind(3, p.build_key)
      .bind(4, pending_status_name(p.status))
      .bind(5, p.t_deferred)
      .bind(6, p.t_evaluated)
      .bind(7, p.note)
      .step();
}

std::vector<PendingRecord> RunStore::pending(std::optional<PendingStatus> status) const {
  std::lock_guard<std::mutex> lk(mu_);
  // Candidate order, so that verdicts are produced and observed in the order the agents proposed.
  Stmt q(db_,
         std::string("SELECT p.id, p.agent, p.build_key, p.status, p.t_deferred, p.t_evaluated, p.note FROM pending p "
                     "LEFT JOIN candidates c ON c.id = p.id ") +
             (status ? "WHERE p.status = ? " : "") + "ORDER BY c.seq, p.id");
  if (status) q.bind(1, pending_status_name(*status));
  std::vector<PendingRecord> v;
  while (q.step())
    v.push_back({q.text(0), q.text(1), q.text(2),
                 stored(parse_pending_status(q.text(3)), path_, "pending " + q.text(0), "status", q.text(3),
                        "awaiting, evaluated or observed"),
                 q.real(4), q.real(5), q.text(6)});
  return v;
}

void RunStore::put_agent_state(int index, const std::string& kind, const std::string& state_json) {
  std::lock_guard<std::mutex> lk(mu_);
  Stmt q(db_, "INSERT OR REPLACE INTO agent_state(idx, kind, state) VALUES(?,?,?)");
  q.bind(1, static_cast<int64_t>(index)).bind(2, kind).bind(3, state_json).step();
}

std::optional<std::string> RunStore::agent_state(int index, const std::string& kind) const {
  std::lock_guard<std::mutex> lk(mu_);
  Stmt q(db_, "SELECT state FROM agent_state WHERE idx = ? AND kind = ?");
  q.bind(1, static_cast<int64_t>(index)).bind(2, kind);
  if (q.step()) return q.text(0);
  return std::nullopt;
}

}  // namespace khive
