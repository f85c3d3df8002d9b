// Deferred evaluation (models here, GPU there): a candidate is built here (check 1) and recorded "pending"; its agent
// waits and the run pauses when every agent waits. `khive evaluate-pending` gives the verdicts on a machine with a GPU
// (evaluate_pending); a resumed run hands them to the agents before they propose again (deliver).
#include "khive/hive/hive_impl.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "khive/support/files.hpp"
#include "khive/support/phase.hpp"

namespace khive {

// Check 1 here (a build error or a forbidden symbol is a real verdict, repaired here); the run waits for a GPU only
// with kernels that build. True: the candidate was built and recorded pending, its agent waits. False: `preset` holds
// the build's verdict (a rejection or a harness error), to be recorded as any verdict. Called without mu.
bool Hive::Impl::build_deferred(AgentSlot& a, CandidateRecord& c, const std::filesystem::path& file,
                                std::optional<Evaluation>& preset) {
  Evaluation b;
  report_phase("building");
  try {
    b = eval.build_only(file);
  } catch (const std::exception& e) {
    b.status = EvalStatus::error;
    b.message = e.what();
  }
  if (b.status == EvalStatus::built) {
    std::lock_guard<std::mutex> lk(mu);
    --reserved;
    ++evaluated;  // spent from the budget now: it will be evaluated
    c.standing = Standing::pending;
    c.message = "built here (check 1 passed); awaits evaluation on a GPU";
    c.eval_s = b.seconds;
    c.t = now();
    record_candidate(c);
    db->put_pending({c.id, a.st.name, b.build_key, PendingStatus::awaiting, c.t, 0, ""});
    awaiting[c.hash] = c.id;
    a.st.waiting = true;  // it must not propose on top of a kernel nobody has measured
    ++a.st.pending;
    if (o.budget_candidates > 0 && evaluated >= o.budget_candidates)
      set_stop(fmt::format("candidate budget spent ({})", o.budget_candidates));
    return true;
  }
  preset = b;
  return false;
}

// Deferred verdicts, before the agent proposes again: in order, each evaluated one is observed; an
// awaiting one is evaluated now when a device is here, else the agent keeps waiting. False: it waits.
bool Hive::Impl::deliver(AgentSlot& a) {
  for (auto& pr : db->pending()) {
    if (pr.agent != a.st.name || pr.status == PendingStatus::observed) continue;
    auto all = db->candidates();
    auto it = std::find_if(all.begin(), all.end(), [&](const CandidateRecord& r) { return r.id == pr.id; });
    if (it == all.end()) continue;  // cannot happen with a consistent run.db; nothing to observe
    CandidateRecord c = *it;
    if (pr.status == PendingStatus::awaiting) {
      std::lock_guard<std::mutex> lk(mu);
      if (o.defer_eval) {
        a.st.waiting = true;
        return false;
      }
    }
    if (pr.status == PendingStatus::awaiting) {  // a device is here now: evaluate it as the hive would have
      auto file = o.run_dir / c.file;
      if (!std::filesystem::exists(file)) write_file_atomic(file, c.source);
      report_phase("evaluating " + c.id);
      const Evaluation ev = judge(c, file, std::nullopt, true);
      report_phase("");
      if (ev.status == EvalStatus::cancelled) return false;  // the run stopped first: it stays awaiting
    }
    AgentContext ctx;
    {
      std::lock_guard<std::mutex> lk(mu);
      account(a, c);
      ctx = context(a);
      event({{"type", "deliver"}, {"agent", a.st.name}, {"candidate", c.id}, {"verdict", c.standing}},
            fmt::format("{} observes the deferred verdict on {}: {}", a.st.name, c.id, standing_name(c.standing)));
    }
    conclude(a, ctx, proposal_of(c), c);
    pr.status = PendingStatus::observed;
    db->put_pending(pr);
    if (stop) return false;
  }
  return true;
}

std::string Hive::Impl::pause_message() const {
  return fmt::format(
      "paused: {} candidate(s) await GPU evaluation; run `khive evaluate-pending {}` on a machine with a GPU, then "
      "`khive optimize --resume {}`",
      awaiting.size(), o.run_dir.string(), o.run_dir.string());
}

// The GPU side: the reference first (this session's goldens and T_b, the run's seed, and the first leader when it was
// deferred too), then every awaiting candidate in order against the leader of its time.
PendingSummary Hive::Impl::evaluate_pending() {
  namespace fs = std::filesystem;
  t0 = Clock::now();
  if (!fs::exists(o.run_dir / "run.db"))
    throw std::runtime_error(fmt::format("{}: no run.db (not a khive run directory)", o.run_dir.string()));
  take_lock();
  open_records();
  note_stale_lock();
  std::unique_lock<std::mutex> lk(mu);
  restore();
  auto todo = db->pending(PendingStatus::awaiting);
  PendingSummary sum;
  event({{"type", "evaluate_pending"}, {"pending", todo.size()}, {"backend", backend_name(backend)}},
        fmt::format("evaluate-pending: {} candidate(s) awaiting on {}", todo.size(), backend_name(backend)));
  const std::optional<ReferenceFiles> ref = reference_files();  // none: a PyTorch-only task, nothing to measure
  Evaluation rev = ref ? prepare_reference(lk, *ref) : Evaluation{};
  if (ref && measure_reference(ref->source, ref->copy, rev)) {
    PendingVerdict v;
    v.id = reference_id;
    v.agent = "hive";
    v.strategy = v.label = "reference";
    v.standing = Standing::leader;
    v.time_s = rev.time_s;
    v.score = rev.score;
    v.eval_s = rev.seconds;
    sum.verdicts.push_back(v);
  }
  std::map<std::string, CandidateRecord> by_id;
  for (auto& c : db->candidates()) by_id[c.id] = c;
  lk.unlock();
  for (auto pr : todo) {
    if (pr.id == reference_id) continue;
    if (!evaluate_one_pending(pr, by_id, sum)) break;
  }
  lk.lock();
  sum.remaining = static_cast<int>(db->pending(PendingStatus::awaiting).size());
  const auto& leader = standings.leader();
  sum.leader = leader;
  sum.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  nlohmann::json slots_j = slots_json();
  event({{"type", "evaluated_pending"},
         {"evaluated", sum.verdicts.size()},
         {"errors", sum.errors},
         {"remaining", sum.remaining},
         {"leader", leader ? leader->id : ""},
         {"seconds", sum.seconds},
         {"slots", slots_j}},
        fmt::format("evaluate-pending: {} verdict(s), {} harness error(s), {} still awaiting; leader {}",
                    sum.verdicts.size(), sum.errors, sum.remaining, leader ? leader->id : "-"));
  return sum;
}

// One awaiting candidate judged and its verdict recorded (a harness error leaves it awaiting, with a note). False:
// the run stops (too many harness errors). Called without mu.
bool Hive::Impl::evaluate_one_pending(PendingRecord pr, const std::map<std::string, CandidateRecord>& by_id,
                                      PendingSummary& sum) {
  namespace fs = std::filesystem;
  auto it = by_id.find(pr.id);
  if (it == by_id.end())
    throw std::runtime_error(
        fmt::format("{}: pending {} has no candidate row", (o.run_dir / "run.db").string(), pr.id));
  CandidateRecord c = it->second;
  // Paths inside the run directory are relative, so a run made on another machine reads the same;
  // the source is in run.db as well, should the file have been left behind.
  auto file = o.run_dir / c.file;
  if (!fs::exists(file)) write_file_atomic(file, c.source);
  {
    std::lock_guard<std::mutex> g(mu);
    file_of[c.id] = file.string();
  }
  Evaluation ev = judge(c, file, std::nullopt, false);
  std::lock_guard<std::mutex> g(mu);
  if (ev.status == EvalStatus::cancelled) return false;  // stopped first: it stays awaiting
  if (ev.status == EvalStatus::error) {
    ++sum.errors;
    pr.note = ev.message.substr(0, 500);
    db->put_pending(pr);
    event({{"type", "pending_error"}, {"candidate", c.id}, {"agent", c.agent}, {"message", ev.message}},
          fmt::format("{}: harness error, left awaiting: {}", c.id, ev.message.substr(0, 200)));
    return !stop;
  }
  PendingVerdict v;
  v.id = c.id;
  v.agent = c.agent;
  v.strategy = c.strategy;
  v.label = c.label;
  static_cast<VerdictRecord&>(v) = c;
  v.time_s = c.time_s;
  v.delta = c.delta;
  v.comparison = c.comparison;
  v.score = c.score;
  v.eval_s = c.eval_s;
  v.build_key_changed = !pr.build_key.empty() && !ev.build_key.empty() && pr.build_key != ev.build_key;
  if (v.build_key_changed)
    event({{"type", "note"},
           {"candidate", c.id},
           {"message", "rebuilt with another build key (another compiler or flags) than where it was proposed"}},
          "");
  sum.verdicts.push_back(v);
  pr.status = PendingStatus::evaluated;
  pr.t_evaluated = c.t;
  pr.note.clear();
  db->put_pending(pr);
  if (o.on_update) {
    auto st = status(true);
    o.on_update(st);
  }
  return true;
}

}  // namespace khive
