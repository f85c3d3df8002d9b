// A run's setup and restore: the run directory's lock and records, the agents' strategies, the run's meta, the task's
// reference (measured once, the first leader; or built here and left for a GPU), and a resumed run's state from run.db.
#include "khive/hive/hive_impl.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "khive/support/files.hpp"

namespace khive {

// The run directory's lock: the caller's (o.lock), else taken here.
void Hive::Impl::take_lock() {
  lock = o.lock ? o.lock
                : std::make_shared<DirLock>(
                      DirLock::acquire(o.run_dir, o.command.empty() ? process_command_line() : o.command));
}

// A previous process that ended without releasing the lock is said once, in the log and on the console.
void Hive::Impl::note_stale_lock() {
  if (lock->stale_note().empty()) return;
  std::lock_guard<std::mutex> lk(mu);
  event({{"type", "note"}, {"message", lock->stale_note()}}, lock->stale_note());
}

void Hive::Impl::open_records() {
  db = std::make_unique<RunStore>(o.run_dir / "run.db");
  log = std::make_unique<EventLog>(o.run_dir / "events.jsonl");
}

// Each agent's strategies and the one it starts with; an agent with none has nothing to try (said, and why).
void Hive::Impl::init_agents() {
  for (auto& a : agents) {
    a.strategies = a.agent->strategies(task, backend);
    a.st.kind = a.agent->kind();
    if (a.strategies.empty()) {
      a.st.done = true;
      const std::string why = a.agent->idle_because(task, backend);
      a.st.failure = why.empty() ? fmt::format("it has no strategy for task {} on the {} backend", task.name,
                                               backend_name(backend))
                                 : why;
      event({{"type", "agent_done"}, {"agent", a.st.name}, {"reason", a.st.failure}},
            fmt::format("{} has nothing to try: {}", a.st.name, a.st.failure));
      continue;
    }
    a.strategy = a.strategies[static_cast<std::size_t>(a.index) % a.strategies.size()];
  }
}

// A new run's meta in run.db: what it was made for, so that a resume can check it. Callers hold mu.
void Hive::Impl::record_run_meta() {
  namespace fs = std::filesystem;
  db->set_meta("task_hash", task.hash);
  db->set_meta("task", task.name);
  db->set_meta("task_dir", fs::absolute(task.dir).string());
  // Relative to the run directory too: a run directory carried to another machine inside the same
  // repository (the device copy) finds its task again there.
  db->set_meta("task_dir_from_run", fs::relative(fs::absolute(task.dir), fs::absolute(o.run_dir)).string());
  db->set_meta("backend", std::string(backend_name(backend)));
  db->set_meta("seed", std::to_string(o.seed));
  db->set_meta("options", o.meta.dump());
}

// A resumed run (or evaluate-pending) reads its state back from run.db: the candidates and their verdicts, the
// leader and backups, the board, then the agents' (restore_agents). Throws when run.db was made for another task
// or backend. Callers hold mu.
void Hive::Impl::restore() {
  auto meta_task = db->meta("task_hash");
  if (!meta_task)
    throw std::runtime_error((o.run_dir / "run.db").string() + ": not a khive run (no task_hash in meta)");
  if (*meta_task != task.hash)
    throw std::runtime_error(fmt::format(
        "{}: the run was made for task hash {}, but {} now hashes to {} (the task changed)",
        (o.run_dir / "run.db").string(), meta_task->substr(0, 12), task.dir.string(), task.hash.substr(0, 12)));
  if (auto b = db->meta("backend"); b && *b != backend_name(backend))
    throw std::runtime_error(fmt::format("{}: the run used the {} backend, not {}", (o.run_dir / "run.db").string(), *b,
                                         backend_name(backend)));
  reference_id = db->meta("reference").value_or("");
  std::string leader_id = db->meta("leader").value_or("");
  for (auto& c : db->candidates()) {
    seq = std::max(seq, c.seq);
    t_offset = std::max(t_offset, c.t);
    file_of[c.id] = (o.run_dir / c.file).string();
    if (c.id != reference_id) ++evaluated;
    if (c.standing == Standing::pending)
      awaiting[c.hash] = c.id;
    else if (c.standing != Standing::error)
      known[c.hash] = c;
    if (c.accepted()) standings.add(measured_kernel(c));
  }
  if (const MeasuredKernel* k = standings.find(leader_id)) become_leader(*k);
  // Files of candidates an interrupted session wrote but never recorded (killed mid-evaluation): their ids are not
  // given again (a new candidate once took c0005 while an unrecorded c0005-*.cpp was still there), the files stay.
  int unrecorded = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(o.run_dir / "candidates", ec)) {
    const std::string name = e.path().filename().string();
    std::size_t digits = 1;
    while (digits < name.size() && std::isdigit(static_cast<unsigned char>(name[digits]))) ++digits;
    if (name.size() < 3 || name[0] != 'c' || digits < 2 || digits > 18 || file_of.count(name.substr(0, digits)))
      continue;
    seq = std::max<int64_t>(seq, std::stoll(name.substr(1, digits - 1)));
    ++unrecorded;
  }
  if (unrecorded)
    event(
        {{"type", "note"},
         {"message",
          fmt::format("{} candidate file(s) of an interrupted session were never recorded; kept, their ids not reused",
                      unrecorded)}},
        fmt::format("{} candidate file(s) of an interrupted session were never recorded (kept in candidates/; their "
                    "ids are not reused)",
                    unrecorded));
  for (auto& s : db->board(false)) board.push_back(s.entry);
  restore_agents();
}

// Each agent's strategy and base, the hive's counters and streaks on it, and its own state. Callers hold mu.
void Hive::Impl::restore_agents() {
  for (auto& r : db->agents())
    for (auto& a : agents)
      if (a.index == r.index && a.st.kind == r.kind)
        for (auto& s : a.strategies)
          if (s.name == r.strategy) {
            a.strategy = s;
            a.base = standings.find(r.base) ? r.base : "";
          }
  // The hive's counters and streaks per agent (absent in runs made before they were stored).
  for (auto& a : agents) {
    auto s = db->meta(counters_key(a));
    if (!s) continue;
    try {
      load_counters(a, *s);
    } catch (const std::exception& e) {
      event({{"type", "agent_error"},
             {"agent", a.st.name},
             {"message", std::string("its stored counters could not be read: ") + e.what()}},
            fmt::format("{}: stored counters not restored ({}); they start at zero", a.st.name, e.what()));
    }
  }
  if (auto h = db->meta("hive_counters")) {
    try {
      auto j = nlohmann::json::parse(*h);
      since_hive_leader = j.at("since_hive_leader").get<int>();
      told_no_backup = j.at("told_no_backup").get<bool>();
    } catch (const std::exception& e) {
      event({{"type", "agent_error"},
             {"agent", "hive"},
             {"message", std::string("hive_counters could not be read: ") + e.what()}},
            "");
    }
  }
  // The agents' own state (an LLM agent's loop position, its base and history), when they keep one.
  for (auto& a : agents) {
    auto s = db->agent_state(a.index, a.st.kind);
    if (!s) continue;
    try {
      a.agent->load_state(nlohmann::json::parse(*s));
    } catch (const std::exception& e) {
      event({{"type", "agent_error"},
             {"agent", a.st.name},
             {"message", std::string("its saved state could not be restored: ") + e.what()}},
            fmt::format("{}: saved state not restored ({}); it starts afresh", a.st.name, e.what()));
    }
  }
}

// The task's reference for the backend and its copy in the run directory (candidates/c0000-reference.EXT, written
// once). None when the task has only a PyTorch reference (the judge's goldens come from it; there is no reference
// kernel to measure, and the first accepted candidate is the first leader). Throws when the task has neither.
std::optional<Hive::Impl::ReferenceFiles> Hive::Impl::reference_files() const {
  auto ref = task.reference_for(backend);
  if (!ref && !task.pytorch_reference.empty()) return std::nullopt;
  if (!ref) throw std::runtime_error(fmt::format("task {} has no {} reference", task.name, backend_name(backend)));
  ReferenceFiles r;
  r.original = *ref;
  r.copy = o.run_dir / "candidates" / ("c0000-reference." + ext);
  r.source = read_file(*ref);
  if (!std::filesystem::exists(r.copy)) write_file_atomic(r.copy, r.source);
  return r;
}

// The evaluator's prepare() on the reference (timings for the score, goldens for every candidate), without mu while
// it runs (lk holds mu before and after). Throws when the guard does not accept the reference.
Evaluation Hive::Impl::prepare_reference(std::unique_lock<std::mutex>& lk, const ReferenceFiles& ref) {
  lk.unlock();
  Evaluation rev = eval.prepare(ref.copy);
  lk.lock();
  if (rev.status != EvalStatus::accepted)
    throw std::runtime_error(fmt::format("the task's reference {} was not accepted by the guard ({}: {} {})",
                                         ref.original.string(), eval_status_name(rev.status), rev.reason, rev.message));
  return rev;
}

// The reference at a run's start, measured once: timings for the score, goldens for every candidate, the first
// leader. Deferred, it is only built here (lk holds mu before and after).
void Hive::Impl::start_reference(std::unique_lock<std::mutex>& lk) {
  const std::optional<ReferenceFiles> found = reference_files();
  if (!found) {
    const std::string note =
        fmt::format("no native {} reference: goldens come from the task's PyTorch reference", backend_name(backend));
    event({{"type", "note"}, {"message", note}}, note);
    if (o.defer_eval) return;  // measured where the candidates are (evaluate-pending)
    // T_b: that PyTorch reference timed by the judge as a kernel, once per run (it never leads: it is not a kernel).
    lk.unlock();
    Evaluation pe = eval.prepare_pytorch();
    lk.lock();
    const std::string tb = pe.status == EvalStatus::accepted
                               ? std::string("T_b: the task's PyTorch reference, timed by the judge as a kernel")
                               : "no T_b: the task's PyTorch reference was not timed (" +
                                     std::string(eval_status_name(pe.status)) + ": " + pe.message + ")";
    if (pe.status == EvalStatus::accepted && !pe.score_basis.empty()) db->set_meta("score_basis", pe.score_basis);
    event({{"type", "note"}, {"message", tb}}, tb);
    return;
  }
  const ReferenceFiles& ref = *found;
  if (!o.defer_eval) {
    Evaluation rev = prepare_reference(lk, ref);
    measure_reference(ref.source, ref.copy, rev);
    return;
  }
  // No device here: the reference is measured where the candidates are (evaluate-pending); until
  // then there is no leader. It must build, or nothing could ever be judged against it.
  if (!reference_id.empty()) return;
  lk.unlock();
  Evaluation b = eval.build_only(ref.copy);
  lk.lock();
  if (b.status != EvalStatus::built)
    throw std::runtime_error(fmt::format("the task's reference {} does not build ({}: {} {})", ref.original.string(),
                                         eval_status_name(b.status), b.reason, b.message));
  CandidateRecord c = reference_record(ref.source, ref.copy);
  c.standing = Standing::pending;
  c.message = "built here; measured on a GPU by evaluate-pending";
  db->set_meta("reference", c.id);
  record_candidate(c);
  db->put_pending({c.id, "hive", b.build_key, PendingStatus::awaiting, c.t, 0, ""});
  awaiting[c.hash] = c.id;
}

CandidateRecord Hive::Impl::reference_record(const std::string& ref_source, const std::filesystem::path& ref_copy) {
  CandidateRecord c;
  c.id = "c0000";
  reference_id = c.id;
  c.seq = 0;
  c.hash = candidate_hash(ext, ref_source);
  c.agent = "hive";
  c.strategy = "reference";
  c.label = "reference";
  c.ext = ext;
  c.note = "the task's reference, measured once at the start";
  c.source = ref_source;
  c.file = std::filesystem::relative(ref_copy, o.run_dir).string();
  c.t = now();
  file_of[c.id] = ref_copy.string();
  return c;
}

// The reference's measurement of this session: recorded as the first leader when the run has none yet
// (a new run, or one whose reference was deferred). Returns true when it was recorded now. Holds mu.
bool Hive::Impl::measure_reference(const std::string& ref_source, const std::filesystem::path& ref_copy,
                                   const Evaluation& rev) {
  std::optional<CandidateRecord> prior;
  if (!reference_id.empty())
    for (auto& c : db->candidates())
      if (c.id == reference_id) prior = c;
  if (prior && prior->standing != Standing::pending) return false;
  CandidateRecord c = reference_record(ref_source, ref_copy);
  c.standing = Standing::leader;
  c.score = rev.score;
  c.time_s = rev.time_s;
  c.workload_median_s = rev.workload_median_s;
  c.eval_s = rev.seconds;
  awaiting.erase(c.hash);
  known[c.hash] = c;
  standings.add(measured_kernel(c));
  db->set_meta("reference", c.id);
  // Which T_b and T_sol the run's scores stand on (each session re-measures: the last one's is kept).
  if (!rev.score_basis.empty()) db->set_meta("score_basis", rev.score_basis);
  record_candidate(c);
  become_leader(measured_kernel(c));
  if (prior) db->put_pending({c.id, "hive", "", PendingStatus::observed, 0, c.t, "measured"});
  return true;
}

}  // namespace khive
