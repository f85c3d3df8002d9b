// One agent's thread: it proposes; a kernel the run knows already is answered from the records; a new one is recorded,
// judged (or built and left for a GPU, deferred.cpp) and its verdict concluded: the agent observes it, its
// conclusion goes to the board, plateaus and budgets are checked.
#include "khive/hive/hive_impl.hpp"

#include <cctype>

#include <fmt/format.h>

#include "khive/support/files.hpp"
#include "khive/support/phase.hpp"

namespace khive {

namespace {

std::string safe_label(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '_';
  if (s.size() > 40) s.resize(40);
  return s.empty() ? "k" : s;
}

}  // namespace

void Hive::Impl::agent_loop(AgentSlot& a) {
  std::string subject;  // the candidate the phase is about
  PhaseListener listen([&](const std::string& what) {
    std::lock_guard<std::mutex> lk(mu);
    a.st.phase = what.empty() || subject.empty() ? what : what + " " + subject;
  });
  if (!deliver(a)) {
    std::lock_guard<std::mutex> lk(mu);
    --running_agents;
    cv.notify_all();
    return;
  }
  while (!stop && agent_step(a, subject)) {
  }
  std::lock_guard<std::mutex> lk(mu);
  a.st.phase.clear();
  --running_agents;
  cv.notify_all();
}

// One round of the agent: a proposal, from its context to its conclusion. False: the agent's loop ends (it is done or
// failed, a budget is spent, the run stops, or it waits for a GPU verdict). Called without mu.
bool Hive::Impl::agent_step(AgentSlot& a, std::string& subject) {
  AgentContext ctx;
  {
    std::lock_guard<std::mutex> lk(mu);
    if (a.st.done) return false;
    if (budget_usage_spent()) return false;
    ctx = context(a);
  }
  subject.clear();
  report_phase("proposing");
  std::optional<Proposal> p;
  try {
    p = a.agent->propose(ctx);
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lk(mu);
    a.st.done = true;
    event({{"type", "agent_error"}, {"agent", a.st.name}, {"message", e.what()}},
          fmt::format("{} failed: {}", a.st.name, e.what()));
    return false;
  }
  save_state(a);
  if (stop) return false;
  if (!p) return no_proposal(a);
  if (p->ext.empty()) p->ext = ext;
  const std::string hash = candidate_hash(p->ext, p->source);
  if (seen_before(a, ctx, *p, hash)) return true;
  a.dup_streak = 0;
  CandidateRecord c;
  const auto file = new_candidate(a, ctx, *p, hash, c);
  if (!file) return false;

  std::optional<Evaluation> preset;
  if (p->ext != ext) {
    Evaluation e;
    e.status = EvalStatus::rejected;
    e.check = Check::build;
    e.reason = "wrong_backend";
    e.message =
        fmt::format("a .{} kernel was proposed for the {} backend (expected .{})", p->ext, backend_name(backend), ext);
    preset = e;
  } else if (o.defer_eval) {
    subject = c.id;
    if (build_deferred(a, c, *file, preset)) return false;  // it waits for a GPU verdict
  }
  subject = c.id;
  if (!preset) prebuild_next(a, ctx);
  report_phase("evaluating");
  const Evaluation ev = judge(c, *file, preset, true);
  report_phase("");
  if (prebuilder) prebuilder->used(ev.build_key);
  {
    std::lock_guard<std::mutex> lk(mu);
    --reserved;
    if (ev.status == EvalStatus::cancelled) return false;  // the run stopped first: nothing to observe or count
    ++evaluated;
    account(a, c);
  }
  conclude(a, ctx, *p, c);
  return true;
}

// While this agent's proposal is judged: what it would propose next if that verdict changed nothing, built ahead on
// spare cores (prebuild.hpp). Texts the run has already judged or awaits are not offered. A peek that fails changes
// nothing (the agent proposes as always).
void Hive::Impl::prebuild_next(AgentSlot& a, const AgentContext& ctx) {
  if (!prebuilder || !prebuilder->enabled() || stop) return;
  const std::size_t n = 2;  // one to build now, one more queued: the next proposal and the one after
  std::vector<Proposal> next;
  try {
    next = a.agent->peek(ctx, n);
  } catch (const std::exception&) {
    return;
  }
  for (auto& q : next) {
    if (q.ext.empty()) q.ext = ext;
    if (q.ext != ext) continue;
    const std::string hash = candidate_hash(q.ext, q.source);
    {
      std::lock_guard<std::mutex> lk(mu);
      if (known.count(hash) || awaiting.count(hash)) continue;
    }
    prebuilder->offer(hash, q.ext, q.source);
  }
}

// The agent proposed nothing: it failed (its provider could not be used) -> false, it stops; or its strategy is
// exhausted -> it moves to another one (or is done). Called without mu.
bool Hive::Impl::no_proposal(AgentSlot& a) {
  std::lock_guard<std::mutex> lk(mu);
  if (const std::string failure = a.agent->provider_failure(); !failure.empty()) {
    agent_failed(a, failure);
    return false;
  }
  const std::string why = a.agent->declined_because();
  exhausted(a, why.empty() ? fmt::format("strategy {} exhausted", a.strategy.name)
                           : fmt::format("strategy {} exhausted: {}", a.strategy.name, why));
  return true;
}

// A kernel the run has seen (same hash): one awaiting its GPU verdict is not evaluated twice; one evaluated before
// (this run or a resumed one) gives its verdict again. Too many in a row exhaust the strategy. True when it was one.
// Called without mu.
bool Hive::Impl::seen_before(AgentSlot& a, const AgentContext& ctx, const Proposal& p, const std::string& hash) {
  std::optional<CandidateRecord> prior;
  std::string awaited;
  {
    std::lock_guard<std::mutex> lk(mu);
    if (auto it = known.find(hash); it != known.end())
      prior = it->second;
    else if (auto w = awaiting.find(hash); w != awaiting.end())
      awaited = w->second;
  }
  if (!awaited.empty()) {  // the same kernel already awaits its GPU verdict: nothing new to evaluate
    std::lock_guard<std::mutex> lk(mu);
    ++a.st.reused;
    event({{"type", "reuse"}, {"agent", a.st.name}, {"candidate", awaited}, {"verdict", Standing::pending}}, "");
    if (++a.dup_streak >= o.max_duplicates) {
      a.dup_streak = 0;
      exhausted(a, fmt::format("{} proposals in a row repeated known kernels", o.max_duplicates));
    }
    return true;
  }
  if (prior) {  // evaluated before (this run or a resumed one): reuse the verdict
    Outcome oc = outcome_of(*prior);
    try {
      a.agent->observe(ctx, p, oc);
    } catch (const std::exception&) {
    }
    save_state(a);
    std::lock_guard<std::mutex> lk(mu);
    ++a.st.reused;
    event({{"type", "reuse"}, {"agent", a.st.name}, {"candidate", prior->id}, {"verdict", prior->standing}}, "");
    if (++a.dup_streak >= o.max_duplicates) {
      a.dup_streak = 0;
      exhausted(a, fmt::format("{} proposals in a row repeated evaluated kernels", o.max_duplicates));
    }
    return true;
  }
  return false;
}

// A new candidate: its id (one evaluation reserved from the candidate budget), its record and its file under
// candidates/. None when the budget is spent (the run stops). Called without mu.
std::optional<std::filesystem::path> Hive::Impl::new_candidate(AgentSlot& a, const AgentContext& ctx, const Proposal& p,
                                                               const std::string& hash, CandidateRecord& c) {
  std::string parent_default;
  {
    std::lock_guard<std::mutex> lk(mu);
    if (o.budget_candidates > 0 && evaluated + reserved >= o.budget_candidates) {
      set_stop(fmt::format("candidate budget spent ({})", o.budget_candidates));
      return std::nullopt;
    }
    ++reserved;
    c.id = fmt::format("c{:04d}", ++seq);
    c.seq = seq;
    parent_default = ctx.start ? ctx.start->id : "";
    // "" = a fresh kernel (Proposal contract); an id the run does not know means the agent's start.
    c.parent = p.parent;
    if (!c.parent.empty() && !file_of.count(c.parent)) c.parent = parent_default;
  }
  c.hash = hash;
  c.agent = a.st.name;
  c.strategy = a.strategy.name;
  c.label = p.label.empty() ? "candidate" : p.label;
  c.ext = p.ext;
  c.note = p.note;
  c.source = p.source;
  c.params = p.params;
  auto file = o.run_dir / "candidates" / fmt::format("{}-{}.{}", c.id, safe_label(c.label), c.ext);
  c.file = std::filesystem::relative(file, o.run_dir).string();
  write_file_atomic(file, c.source);
  {
    std::lock_guard<std::mutex> lk(mu);
    file_of[c.id] = file.string();
  }
  return file;
}

// The agent sees the verdict; its conclusion goes to the board; plateaus and the budget are checked.
// Called without mu.
void Hive::Impl::conclude(AgentSlot& a, const AgentContext& ctx, const Proposal& p, const CandidateRecord& c) {
  Outcome oc = outcome_of(c);
  std::optional<BoardEntry> entry;
  try {
    entry = a.agent->observe(ctx, p, oc);
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lk(mu);
    event({{"type", "agent_error"}, {"agent", a.st.name}, {"message", e.what()}}, "");
  }
  save_state(a);
  std::lock_guard<std::mutex> lk(mu);
  if (entry) post(a, *entry, oc);
  if (c.standing != Standing::error) check_plateaus(a);
  if (o.budget_candidates > 0 && evaluated >= o.budget_candidates)
    set_stop(fmt::format("candidate budget spent ({})", o.budget_candidates));
}

// Token / cost budgets over every agent's usage (callers hold mu).
bool Hive::Impl::budget_usage_spent() {
  if (o.budget_tokens <= 0 && o.budget_cost_usd <= 0) return false;
  int64_t tokens = 0;
  double cost = 0;
  for (auto& b : agents) {
    auto u = b.agent->usage();
    tokens += u.tokens;
    cost += u.cost_usd;
  }
  if (o.budget_tokens > 0 && tokens >= o.budget_tokens)
    set_stop(fmt::format("token budget spent ({} of {})", tokens, o.budget_tokens));
  else if (o.budget_cost_usd > 0 && cost >= o.budget_cost_usd)
    set_stop(fmt::format("cost budget spent (${:.2f} of ${:.2f})", cost, o.budget_cost_usd));
  return stop;
}

}  // namespace khive
