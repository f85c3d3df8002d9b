#include "khive/hive/hive.hpp"

#include "khive/guard/rules.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "khive/hive/board.hpp"
#include "khive/hive/store.hpp"
#include "khive/support/dir_lock.hpp"
#include "khive/support/files.hpp"
#include "khive/support/phase.hpp"

namespace khive {

using Clock = std::chrono::steady_clock;

std::string backend_ext(Backend b) { return b == Backend::cuda ? "cu" : "cpp"; }

std::string backup_family(const MeasuredKernel& k) {
  const auto t = k.params.find("template");
  return t != k.params.end() ? "template " + t->second : strategy_family(k.strategy);
}

std::vector<MeasuredKernel> rank_backups(const std::vector<MeasuredKernel>& accepted, const std::string& leader_id, int max,
                                         int per_family) {
  std::vector<MeasuredKernel> v;
  for (auto& k : accepted)
    if (k.id != leader_id) v.push_back(k);
  std::stable_sort(v.begin(), v.end(), [](const MeasuredKernel& a, const MeasuredKernel& b) {
    if (a.time_s != b.time_s) return a.time_s < b.time_s;
    return a.id < b.id;
  });
  std::vector<MeasuredKernel> out;
  std::map<std::string, int> fam;
  for (auto& k : v) {
    if (static_cast<int>(out.size()) >= max) break;
    auto& n = fam[backup_family(k)];
    if (per_family > 0 && n >= per_family) continue;
    ++n;
    out.push_back(k);
  }
  return out;
}

std::string choose_strategy(const std::vector<Strategy>& all, const std::string& current, const std::vector<std::string>& recent,
                            const std::vector<std::string>& exhausted, const std::map<std::string, int>& explored,
                            const std::map<std::string, int>& held, int agent_index) {
  auto in = [](const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); };
  std::vector<std::size_t> pool, fresh;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto& n = all[i].name;
    if (n == current || in(exhausted, n)) continue;
    pool.push_back(i);
    if (!in(recent, n)) fresh.push_back(i);
  }
  if (!fresh.empty()) pool = fresh;
  if (pool.empty()) return "";
  auto get = [](const std::map<std::string, int>& m, const std::string& k) {
    auto it = m.find(k);
    return it == m.end() ? 0 : it->second;
  };
  const std::size_t n = all.size(), start = static_cast<std::size_t>(std::max(0, agent_index)) % n;
  auto rot = [&](std::size_t i) { return (i + n - start) % n; };
  std::size_t best = pool.front();
  for (std::size_t i : pool) {
    auto key = [&](std::size_t j) { return std::make_tuple(get(explored, all[j].name), get(held, all[j].name), rot(j)); };
    if (key(i) < key(best)) best = i;
  }
  return all[best].name;
}

namespace {

struct AgentSlot {
  int index = 0;
  std::unique_ptr<Agent> agent;
  std::vector<Strategy> strategies;
  Strategy strategy;
  std::string base;                       // candidate id to derive from ("" = the leader)
  std::deque<std::string> recent;
  std::vector<std::string> exhausted;     // for the current base
  int attempts_in_strategy = 0;
  int streak = 0;                         // evaluated without a new leader, in this strategy
  int dup_streak = 0;
  std::map<std::string, int> own_explored;
  AgentStatus st;
};

MeasuredKernel to_measured(const CandidateRecord& c) {
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

std::string ms(double s) { return s > 0 ? fmt::format("{:.3f} ms", s * 1e3) : std::string("-"); }

std::string safe_label(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '_';
  if (s.size() > 40) s.resize(40);
  return s.empty() ? "k" : s;
}

}  // namespace

struct Hive::Impl {
  const Task& task;
  Backend backend;
  std::string ext;
  Evaluator& eval;
  HiveOptions o;
  std::vector<AgentSlot> agents;
  std::shared_ptr<DirLock> lock;   // held from the first look at run_dir to the end
  std::unique_ptr<RunStore> db;
  std::unique_ptr<EventLog> log;

  std::mutex mu;
  std::condition_variable cv;
  std::atomic<bool> stop{false};
  std::string stop_reason;
  Clock::time_point t0;
  double t_offset = 0;   // seconds of earlier sessions (resume)

  std::optional<MeasuredKernel> leader;
  std::string leader_file;
  std::vector<MeasuredKernel> accepted;
  std::vector<MeasuredKernel> backups;
  std::map<std::string, std::string> file_of;           // candidate id -> absolute source path
  std::map<std::string, CandidateRecord> known;         // hash -> verdict (errors excluded: retried)
  std::map<std::string, std::string> awaiting;          // hash -> id of a candidate awaiting its GPU verdict
  std::vector<BoardEntry> board;
  int64_t seq = 0;
  int evaluated = 0, reserved = 0;
  int since_hive_leader = 0, harness_errors = 0;
  bool told_no_backup = false;
  std::vector<std::string> lines;
  std::string reference_id;

  Impl(const Task& t, Backend b, Evaluator& e, HiveOptions opt) : task(t), backend(b), ext(backend_ext(b)), eval(e), o(std::move(opt)) {}

  double now() const { return t_offset + std::chrono::duration<double>(Clock::now() - t0).count(); }

  // ---- records (callers hold mu)
  void event(nlohmann::json ev, const std::string& line) {
    ev["t"] = std::round(now() * 1000) / 1000;
    log->append(ev);
    if (!line.empty()) lines.push_back(fmt::format("[{:6.1f}s] {}", now(), line));
    cv.notify_all();
  }

  void set_stop(const std::string& why) {
    if (!stop.exchange(true)) {
      stop_reason = why;
      event({{"type", "stop"}, {"reason", why}}, "stopping: " + why);
    }
  }

  void save_agent(const AgentSlot& a) {
    db->put_agent({a.index, a.st.name, a.st.kind, a.strategy.name, a.base});
    save_counters(a);
  }

  // The hive's own view of each agent (verdict counters, plateau streaks, strategy history) is kept in
  // run.db too: a deferred run resumes once per GPU round, and counters rebuilt from that session's
  // verdicts alone would keep every streak at 1, so the plateau rules could never fire. Callers hold mu.
  static std::string counters_key(const AgentSlot& a) { return fmt::format("agent_counters.{}.{}", a.index, a.st.kind); }

  void save_counters(const AgentSlot& a) {
    auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
    nlohmann::json j = {{"attempts", a.st.attempts},
                        {"leaders", a.st.leaders},
                        {"backups", a.st.backups},
                        {"rejected", a.st.rejected},
                        {"errors", a.st.errors},
                        {"reused", a.st.reused},
                        {"switches", a.st.switches},
                        {"since_leader", a.st.since_leader},
                        {"best_time_s", opt(a.st.best_time_s)},
                        {"best_score", opt(a.st.best_score)},
                        {"attempts_in_strategy", a.attempts_in_strategy},
                        {"streak", a.streak},
                        {"dup_streak", a.dup_streak},
                        {"own_explored", a.own_explored},
                        {"recent", std::vector<std::string>(a.recent.begin(), a.recent.end())},
                        {"exhausted", a.exhausted}};
    db->set_meta(counters_key(a), j.dump());
    db->set_meta("hive_counters", nlohmann::json({{"since_hive_leader", since_hive_leader}, {"told_no_backup", told_no_backup}}).dump());
  }

  void load_counters(AgentSlot& a, const std::string& text) {
    auto j = nlohmann::json::parse(text);
    auto opt = [&](const char* k) { return j.at(k).is_null() ? std::optional<double>() : std::optional<double>(j.at(k).get<double>()); };
    a.st.attempts = j.at("attempts").get<int>();
    a.st.leaders = j.at("leaders").get<int>();
    a.st.backups = j.at("backups").get<int>();
    a.st.rejected = j.at("rejected").get<int>();
    a.st.errors = j.at("errors").get<int>();
    a.st.reused = j.at("reused").get<int>();
    a.st.switches = j.at("switches").get<int>();
    a.st.since_leader = j.at("since_leader").get<int>();
    a.st.best_time_s = opt("best_time_s");
    a.st.best_score = opt("best_score");
    a.attempts_in_strategy = j.at("attempts_in_strategy").get<int>();
    a.streak = j.at("streak").get<int>();
    a.dup_streak = j.at("dup_streak").get<int>();
    a.own_explored = j.at("own_explored").get<std::map<std::string, int>>();
    auto recent = j.at("recent").get<std::vector<std::string>>();
    a.recent.assign(recent.begin(), recent.end());
    a.exhausted = j.at("exhausted").get<std::vector<std::string>>();
  }

  const MeasuredKernel* find_accepted(const std::string& id) const {
    for (auto& k : accepted)
      if (k.id == id) return &k;
    return nullptr;
  }

  std::vector<SlotUsage> slots() const { return eval.slot_usage(); }

  // ---- strategy moves (callers hold mu)
  void record_switch(AgentSlot& a, const std::string& to, const std::string& reason) {
    SwitchRecord s{0, now(), a.st.name, a.strategy.name, to, reason, a.base};
    db->add_switch(s);
    event({{"type", "switch"}, {"agent", a.st.name}, {"from", a.strategy.name}, {"to", to}, {"reason", reason}, {"base", a.base}},
          fmt::format("{} {} -> {}: {}", a.st.name, a.strategy.name, to, reason));
    ++a.st.switches;
  }

  // Moves the agent to another strategy; false when there is none (the agent stays, or is done when its
  // current strategy is exhausted too).
  bool switch_strategy(AgentSlot& a, const std::string& reason) {
    std::map<std::string, int> explored = o.board ? entries_per_strategy(board) : a.own_explored;
    std::map<std::string, int> held;
    for (auto& b : agents)
      if (&b != &a && !b.st.done) ++held[b.strategy.name];
    std::vector<std::string> recent(a.recent.begin(), a.recent.end());
    std::string next = choose_strategy(a.strategies, a.strategy.name, recent, a.exhausted, explored, held, a.index);
    if (next.empty()) return false;
    std::string base_before = a.base;
    a.base.clear();   // a new direction starts from the leader
    record_switch(a, next, reason + (base_before.empty() ? "" : fmt::format(" (leaves backup {})", base_before)));
    a.recent.push_back(a.strategy.name);
    while (static_cast<int>(a.recent.size()) > std::max(0, o.recent_window)) a.recent.pop_front();
    for (auto& s : a.strategies)
      if (s.name == next) a.strategy = s;
    a.attempts_in_strategy = 0;
    a.streak = 0;
    a.st.strategy = next;
    a.st.base.clear();
    save_agent(a);
    return true;
  }

  void exhausted(AgentSlot& a, const std::string& why) {
    if (std::find(a.exhausted.begin(), a.exhausted.end(), a.strategy.name) == a.exhausted.end()) a.exhausted.push_back(a.strategy.name);
    if (!switch_strategy(a, why)) {
      a.st.done = true;
      event({{"type", "agent_done"}, {"agent", a.st.name}, {"reason", why + "; no strategy left"}},
            fmt::format("{} done: {}; no strategy left", a.st.name, why));
    }
  }

  // The agent cannot work (its provider failed): no strategy switch would help. Said on the console, in the
  // log and in run.db (the summary lists it). Callers hold mu.
  void agent_failed(AgentSlot& a, const std::string& why) {
    a.st.done = true;
    a.st.failure = why;
    event({{"type", "agent_failed"}, {"agent", a.st.name}, {"kind", a.st.kind}, {"reason", why}},
          fmt::format("{} ({}) stopped: {}", a.st.name, a.st.kind, why));
    auto failures = nlohmann::json::parse(db->meta("agent_failures").value_or("{}"), nullptr, false);
    if (!failures.is_object()) failures = nlohmann::json::object();
    failures[a.st.name] = {{"kind", a.st.kind}, {"reason", why}};
    db->set_meta("agent_failures", failures.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }

  void check_plateaus(AgentSlot& a) {
    if (o.plateau <= 0) return;
    if (a.streak >= o.plateau) {
      std::string why = fmt::format("plateau: {} evaluated candidates in a row without a new leader", a.streak);
      if (!switch_strategy(a, why)) {
        a.streak = 0;   // nowhere to go: keep searching here, count afresh
        event({{"type", "plateau"}, {"agent", a.st.name}, {"strategy", a.strategy.name}, {"reason", why + "; no other strategy"}},
              fmt::format("{} {}; no other strategy, stays on {}", a.st.name, why, a.strategy.name));
      }
    }
    int active = 0;
    for (auto& b : agents) active += !b.st.done;
    // The hive's plateau is the escalation after each agent's own: every active agent has had P candidates and one
    // switch of strategy (P more) without a new leader. (At P x active, a lone agent was restarted from a backup at the
    // very moment it switched, and never searched the strategy it switched to.)
    if (active > 0 && since_hive_leader >= o.plateau * (active + 1)) {
      std::string why = fmt::format("hive plateau: {} evaluated candidates without a new leader", since_hive_leader);
      since_hive_leader = 0;
      if (backups.empty()) {
        if (!told_no_backup)
          event({{"type", "hive_plateau"}, {"reason", why + "; no backup to restart from"}}, why + "; no backup to restart from");
        told_no_backup = true;
        return;
      }
      // The agents longest without a leader restart from the best backups, round robin.
      std::vector<AgentSlot*> order;
      for (auto& b : agents)
        if (!b.st.done) order.push_back(&b);
      std::stable_sort(order.begin(), order.end(), [](AgentSlot* x, AgentSlot* y) { return x->st.since_leader > y->st.since_leader; });
      std::size_t k = (order.size() + 1) / 2;
      for (std::size_t i = 0; i < k; ++i) {
        auto& b = *order[i];
        const auto& bk = backups[i % backups.size()];
        b.base = bk.id;
        b.exhausted.clear();   // from another starting point, a spent strategy may have more to give
        b.streak = 0;
        record_switch(b, b.strategy.name, fmt::format("{}; restart from backup {} ({}, {})", why, bk.id, bk.strategy, ms(bk.time_s)));
        b.st.base = bk.id;
        save_agent(b);
      }
    }
  }

  AgentContext context(AgentSlot& a) {
    AgentContext c;
    c.task = &task;
    c.backend = backend;
    c.strategy = a.strategy;
    c.leader = leader;
    c.start = leader;
    if (!a.base.empty())
      if (auto* k = find_accepted(a.base)) c.start = *k;
    c.backups = backups;
    if (o.board) c.board = relevant_entries(board, a.strategy.name, o.board_view);
    c.attempts_in_strategy = a.attempts_in_strategy;
    c.seed = o.seed + 1000003ull * static_cast<uint64_t>(a.index + 1);
    c.stop = &stop;
    return c;
  }

  void post(AgentSlot& a, BoardEntry e, const Outcome& oc) {
    if (!o.board) return;
    e.agent = a.st.name;
    if (e.strategy.empty()) e.strategy = a.strategy.name;
    if (e.candidate.empty()) e.candidate = oc.candidate;
    if (e.kind != "worked" && e.kind != "failed" && e.kind != "insight") e.kind = "insight";
    if (e.kind == "failed" && e.reason.empty()) e.reason = oc.reason;
    e.id = db->add_board_entry(e, now());
    board.push_back(e);
    event({{"type", "board"}, {"id", e.id}, {"agent", e.agent}, {"strategy", e.strategy}, {"kind", e.kind}, {"text", e.text},
           {"candidate", e.candidate}, {"delta", e.delta}, {"reason", e.reason}},
          "");
    auto gone = entries_to_evict(board, o.board_capacity);
    if (!gone.empty()) {
      db->evict_board_entries(gone);
      for (auto id : gone) event({{"type", "evict"}, {"id", id}}, "");
      board.erase(std::remove_if(board.begin(), board.end(),
                                 [&](const BoardEntry& b) { return std::find(gone.begin(), gone.end(), b.id) != gone.end(); }),
                  board.end());
    }
  }

  void record_candidate(const CandidateRecord& c) {
    db->put_candidate(c);
    event({{"type", "candidate"}, {"id", c.id}, {"agent", c.agent}, {"strategy", c.strategy}, {"parent", c.parent}, {"label", c.label},
           {"hash", c.hash}, {"file", c.file}, {"params", c.params}, {"note", c.note}, {"verdict", c.verdict}, {"check", c.check},
           {"reason", c.reason}, {"message", c.message}, {"score", c.score ? nlohmann::json(*c.score) : nlohmann::json()},
           {"time_s", c.time_s}, {"delta", c.delta}, {"workloads", c.workload_median_s}, {"eval_s", c.eval_s},
           {"comparison", c.comparison ? comparison_json(*c.comparison) : nlohmann::json()}},
          verdict_line(c));
  }

  // One line per verdict. An accepted kernel shows its own-run median and score, and how it stood against the
  // leader (its comparison: check 11's A/B), never two medians side by side as if they said which is faster.
  static std::string verdict_line(const CandidateRecord& c) {
    std::string s = fmt::format("{} {} {} {:<22} {:<8} ", c.agent, c.strategy, c.id, c.label, c.verdict);
    if (c.verdict == "leader" || c.verdict == "backup") {
      s += "own run " + ms(c.time_s) + (c.score ? fmt::format(", score {:.3f}", *c.score) : std::string());
      if (c.comparison) return s + "; " + comparison_brief(*c.comparison);
      return s + (c.verdict == "leader" ? "; the first leader" : "");
    }
    return s + (c.check.empty() ? "" : c.check + ": ") + c.reason + (c.message.empty() ? "" : " — " + c.message.substr(0, 120));
  }

  void become_leader(const MeasuredKernel& k) {
    leader = k;
    leader_file = file_of[k.id];
    backups = rank_backups(accepted, k.id, o.max_backups, o.max_backups_per_family);
    db->set_meta("leader", k.id);
    write_file_atomic(o.run_dir / ("best." + ext), k.source);
  }

  // ---- verdicts
  // Runs the evaluator on a recorded candidate against the leader of the time, applies the rules (leader /
  // backup / rejected / error) to the hive's state and records it. `preset`: a verdict reached without
  // running it (wrong backend, a deferred build rejection). A harness error is recorded only when
  // record_error (evaluate-pending leaves the candidate awaiting instead). Called without mu.
  Evaluation judge(CandidateRecord& c, const std::filesystem::path& file, const std::optional<Evaluation>& preset, bool record_error) {
    Evaluation ev;
    if (preset) ev = *preset;
    std::string verdict, against_id;
    std::optional<MeasuredKernel> prev_leader;
    for (int attempt = 0; verdict.empty(); ++attempt) {
      std::optional<std::filesystem::path> against;
      {
        std::lock_guard<std::mutex> lk(mu);
        against_id.clear();
        if (leader) {
          against = leader_file;
          against_id = leader->id;
        }
      }
      if (ev.status.empty() || attempt > 0) {
        try {
          ev = eval.evaluate(file, against);
        } catch (const std::exception& e) {
          ev = Evaluation{};
          ev.status = "error";
          ev.message = e.what();
        }
      }
      std::lock_guard<std::mutex> lk(mu);
      prev_leader = leader;
      if (ev.status == "error") verdict = "error";
      else if (ev.status != "accepted") verdict = "rejected";
      else if (!leader) verdict = "leader";
      else if (leader->id != against_id) {
        // The leader changed while this kernel was measured: a win over the old one is re-checked
        // against the new one (a loss to the old leader cannot beat its faster successor).
        if (!ev.beats_leader.value_or(false) || attempt >= 2) verdict = "backup";
      } else {
        verdict = ev.beats_leader.value_or(false) ? "leader" : "backup";
      }
      // Never a leader slower than the reference or a backup on the solo medians (guard/rules.hpp).
      if (verdict == "leader" && leader) {
        std::vector<MeasuredTime> others;
        for (const auto& k : accepted) others.push_back({k.id, k.time_s});
        if (auto why = leader_inconsistency(ev.time_s, ev.rel_spread, others)) {
          verdict = "backup";   // said in the comparison's decision, so every line and summary gives the reason
          ev.ab_decision += (ev.ab_decision.empty() ? "" : "; ") + std::string("not made leader: ") + *why;
          ev.message += (ev.message.empty() ? "" : "; ") + *why;
        }
      }
    }
    std::lock_guard<std::mutex> lk(mu);
    if (verdict == "error") {
      if (++harness_errors >= o.max_harness_errors)
        set_stop(fmt::format("{} harness errors in a row (last: {})", harness_errors, ev.message.substr(0, 200)));
      if (!record_error) {
        c.message = ev.message;
        return ev;
      }
    } else {
      harness_errors = 0;
    }
    c.verdict = verdict;
    c.check = ev.check;
    c.reason = ev.reason;
    c.message = ev.message;
    c.diagnosis = ev.diagnosis;
    c.score = ev.score;
    c.time_s = ev.time_s;
    c.workload_median_s = ev.workload_median_s;
    c.eval_s = ev.seconds;
    c.delta = 0;
    c.comparison.reset();
    if (ev.status == "accepted" && prev_leader) {
      // Against the leader it was measured with (which may have been replaced meanwhile).
      const MeasuredKernel* with = find_accepted(against_id);
      c.comparison = make_comparison(against_id.empty() ? prev_leader->id : against_id, ev.gain_vs_leader, ev.ab_decision, ev.ab, ev.message,
                                     ev.time_s, with ? with->time_s : prev_leader->time_s);
      if (c.comparison) c.delta = c.comparison->gain;
    }
    c.t = now();
    awaiting.erase(c.hash);
    if (verdict != "error") known[c.hash] = c;
    if (verdict == "leader" || verdict == "backup") accepted.push_back(to_measured(c));
    record_candidate(c);
    if (verdict == "leader") {
      become_leader(to_measured(c));
      // "Exhausted" holds for a base: agents that derive from the leader have a new one now, so their spent
      // strategies may have more to give (the tuner's sub-spaces move with the leader; tuner.dispatch composes
      // from the new leader and its backups). Agents restarted from a backup keep theirs.
      for (auto& a : agents)
        if (a.base.empty() && !a.exhausted.empty()) {
          a.exhausted.clear();
          save_agent(a);
        }
    } else if (verdict == "backup") {
      backups = rank_backups(accepted, leader ? leader->id : "", o.max_backups, o.max_backups_per_family);
    }
    return ev;
  }

  // The agent's side of a verdict: its counters and plateau streaks (callers hold mu).
  void account(AgentSlot& a, const CandidateRecord& c) {
    ++a.attempts_in_strategy;
    ++a.st.attempts;
    ++a.own_explored[a.strategy.name];
    if (c.verdict == "error") {
      ++a.st.errors;
      return;
    }
    if (c.verdict == "leader" || c.verdict == "backup")
      if (!a.st.best_time_s || c.time_s < *a.st.best_time_s) {
        a.st.best_time_s = c.time_s;
        a.st.best_score = c.score;
      }
    if (c.verdict == "leader") {
      ++a.st.leaders;
      since_hive_leader = 0;
      a.streak = 0;
      a.st.since_leader = 0;
      if (!a.base.empty()) {   // the restart paid off: follow the leader again
        a.base.clear();
        a.st.base.clear();
        save_agent(a);
      }
      told_no_backup = false;
    } else {
      c.verdict == "backup" ? ++a.st.backups : ++a.st.rejected;
      ++since_hive_leader;
      ++a.streak;
      ++a.st.since_leader;
    }
    save_counters(a);
  }

  // The agent sees the verdict; its conclusion goes to the board; plateaus and the budget are checked.
  // Called without mu.
  void conclude(AgentSlot& a, const AgentContext& ctx, const Proposal& p, const CandidateRecord& c) {
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
    if (c.verdict != "error") check_plateaus(a);
    if (o.budget_candidates > 0 && evaluated >= o.budget_candidates)
      set_stop(fmt::format("candidate budget spent ({})", o.budget_candidates));
  }

  void save_state(AgentSlot& a) {
    nlohmann::json s;
    try {
      s = a.agent->save_state();
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lk(mu);
      event({{"type", "agent_error"}, {"agent", a.st.name}, {"message", std::string("saving its state: ") + e.what()}}, "");
      return;
    }
    // Agents keep text from outside (a model's replies): never let one invalid byte lose the state.
    if (!s.is_null()) db->put_agent_state(a.index, a.st.kind, s.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }

  static Proposal proposal_of(const CandidateRecord& c) {
    Proposal p;
    p.source = c.source;
    p.ext = c.ext;
    p.parent = c.parent;
    p.params = c.params;
    p.note = c.note;
    p.label = c.label;
    return p;
  }

  // Deferred verdicts, before the agent proposes again: in order, each evaluated one is observed; an
  // awaiting one is evaluated now when a device is here, else the agent keeps waiting. False: it waits.
  bool deliver(AgentSlot& a) {
    for (auto& pr : db->pending()) {
      if (pr.agent != a.st.name || pr.status == "observed") continue;
      auto all = db->candidates();
      auto it = std::find_if(all.begin(), all.end(), [&](const CandidateRecord& r) { return r.id == pr.id; });
      if (it == all.end()) continue;   // cannot happen with a consistent run.db; nothing to observe
      CandidateRecord c = *it;
      if (pr.status == "awaiting") {
        std::lock_guard<std::mutex> lk(mu);
        if (o.defer_eval) {
          a.st.waiting = true;
          return false;
        }
      }
      if (pr.status == "awaiting") {   // a device is here now: evaluate it as the hive would have
        auto file = o.run_dir / c.file;
        if (!std::filesystem::exists(file)) write_file_atomic(file, c.source);
        report_phase("evaluating " + c.id);
        judge(c, file, std::nullopt, true);
        report_phase("");
      }
      AgentContext ctx;
      {
        std::lock_guard<std::mutex> lk(mu);
        account(a, c);
        ctx = context(a);
        event({{"type", "deliver"}, {"agent", a.st.name}, {"candidate", c.id}, {"verdict", c.verdict}},
              fmt::format("{} observes the deferred verdict on {}: {}", a.st.name, c.id, c.verdict));
      }
      conclude(a, ctx, proposal_of(c), c);
      pr.status = "observed";
      db->put_pending(pr);
      if (stop) return false;
    }
    return true;
  }

  // ---- one agent
  void agent_loop(AgentSlot& a) {
    std::string subject;   // the candidate the phase is about
    PhaseListener listen([&](const std::string& what) {
      std::lock_guard<std::mutex> lk(mu);
      a.st.phase = what.empty() || subject.empty() ? what : what + " " + subject;
    });
    if (!deliver(a)) {
      std::lock_guard<std::mutex> lk(mu);
      cv.notify_all();
      return;
    }
    while (!stop) {
      AgentContext ctx;
      {
        std::lock_guard<std::mutex> lk(mu);
        if (a.st.done) break;
        if (budget_usage_spent()) break;
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
        event({{"type", "agent_error"}, {"agent", a.st.name}, {"message", e.what()}}, fmt::format("{} failed: {}", a.st.name, e.what()));
        break;
      }
      save_state(a);
      if (stop) break;
      if (!p) {
        std::lock_guard<std::mutex> lk(mu);
        if (const std::string failure = a.agent->provider_failure(); !failure.empty()) {
          agent_failed(a, failure);
          break;
        }
        const std::string why = a.agent->declined_because();
        exhausted(a, why.empty() ? fmt::format("strategy {} exhausted", a.strategy.name) : fmt::format("strategy {} exhausted: {}", a.strategy.name, why));
        continue;
      }
      if (p->ext.empty()) p->ext = ext;
      const std::string hash = candidate_hash(p->ext, p->source);
      std::optional<CandidateRecord> prior;
      std::string awaited;
      {
        std::lock_guard<std::mutex> lk(mu);
        if (auto it = known.find(hash); it != known.end()) prior = it->second;
        else if (auto w = awaiting.find(hash); w != awaiting.end()) awaited = w->second;
      }
      if (!awaited.empty()) {   // the same kernel already awaits its GPU verdict: nothing new to evaluate
        std::lock_guard<std::mutex> lk(mu);
        ++a.st.reused;
        event({{"type", "reuse"}, {"agent", a.st.name}, {"candidate", awaited}, {"verdict", "pending"}}, "");
        if (++a.dup_streak >= o.max_duplicates) {
          a.dup_streak = 0;
          exhausted(a, fmt::format("{} proposals in a row repeated known kernels", o.max_duplicates));
        }
        continue;
      }
      if (prior) {   // evaluated before (this run or a resumed one): reuse the verdict
        Outcome oc = outcome_of(*prior);
        try {
          a.agent->observe(ctx, *p, oc);
        } catch (const std::exception&) {
        }
        save_state(a);
        std::lock_guard<std::mutex> lk(mu);
        ++a.st.reused;
        event({{"type", "reuse"}, {"agent", a.st.name}, {"candidate", prior->id}, {"verdict", prior->verdict}}, "");
        if (++a.dup_streak >= o.max_duplicates) {
          a.dup_streak = 0;
          exhausted(a, fmt::format("{} proposals in a row repeated evaluated kernels", o.max_duplicates));
        }
        continue;
      }
      a.dup_streak = 0;
      CandidateRecord c;
      std::string parent_default;
      {
        std::lock_guard<std::mutex> lk(mu);
        if (o.budget_candidates > 0 && evaluated + reserved >= o.budget_candidates) {
          set_stop(fmt::format("candidate budget spent ({})", o.budget_candidates));
          break;
        }
        ++reserved;
        c.id = fmt::format("c{:04d}", ++seq);
        c.seq = seq;
        parent_default = ctx.start ? ctx.start->id : "";
        // "" = a fresh kernel (Proposal contract); an id the run does not know means the agent's start.
        c.parent = p->parent;
        if (!c.parent.empty() && !file_of.count(c.parent)) c.parent = parent_default;
      }
      c.hash = hash;
      c.agent = a.st.name;
      c.strategy = a.strategy.name;
      c.label = p->label.empty() ? "candidate" : p->label;
      c.ext = p->ext;
      c.note = p->note;
      c.source = p->source;
      c.params = p->params;
      auto file = o.run_dir / "candidates" / fmt::format("{}-{}.{}", c.id, safe_label(c.label), c.ext);
      c.file = std::filesystem::relative(file, o.run_dir).string();
      write_file_atomic(file, c.source);
      {
        std::lock_guard<std::mutex> lk(mu);
        file_of[c.id] = file.string();
      }

      std::optional<Evaluation> preset;
      if (p->ext != ext) {
        Evaluation e;
        e.status = "rejected";
        e.check = "build";
        e.reason = "wrong_backend";
        e.message = fmt::format("a .{} kernel was proposed for the {} backend (expected .{})", p->ext, backend_name(backend), ext);
        preset = e;
      } else if (o.defer_eval) {
        // Check 1 here (a build error or a forbidden symbol is a real verdict, repaired here); the run waits
        // for a GPU only with kernels that build.
        Evaluation b;
        subject = c.id;
        report_phase("building");
        try {
          b = eval.build_only(file);
        } catch (const std::exception& e) {
          b.status = "error";
          b.message = e.what();
        }
        if (b.status == "built") {
          std::lock_guard<std::mutex> lk(mu);
          --reserved;
          ++evaluated;   // spent from the budget now: it will be evaluated
          c.verdict = "pending";
          c.message = "built here (check 1 passed); awaits evaluation on a GPU";
          c.eval_s = b.seconds;
          c.t = now();
          record_candidate(c);
          db->put_pending({c.id, a.st.name, b.build_key, "awaiting", c.t, 0, ""});
          awaiting[hash] = c.id;
          a.st.waiting = true;   // it must not propose on top of a kernel nobody has measured
          ++a.st.pending;
          if (o.budget_candidates > 0 && evaluated >= o.budget_candidates)
            set_stop(fmt::format("candidate budget spent ({})", o.budget_candidates));
          break;
        }
        preset = b;
      }
      subject = c.id;
      report_phase("evaluating");
      judge(c, file, preset, true);
      report_phase("");
      {
        std::lock_guard<std::mutex> lk(mu);
        --reserved;
        ++evaluated;
        account(a, c);
      }
      conclude(a, ctx, *p, c);
    }
    std::lock_guard<std::mutex> lk(mu);
    a.st.phase.clear();
    cv.notify_all();
  }

  static Outcome outcome_of(const CandidateRecord& c) {
    Outcome oc;
    oc.candidate = c.id;
    oc.verdict = c.verdict;
    oc.check = c.check;
    oc.reason = c.reason;
    oc.message = c.message;
    oc.diagnosis = c.diagnosis;
    oc.score = c.score.value_or(0);
    oc.time_s = c.time_s;
    oc.delta_vs_leader = c.delta;
    if (c.comparison) {
      oc.comparison = comparison_brief(*c.comparison);
      oc.comparison_detail = comparison_full(*c.comparison);
    }
    oc.workload_median_s = c.workload_median_s;
    return oc;
  }

  // Token / cost budgets over every agent's usage (callers hold mu).
  bool budget_usage_spent() {
    if (o.budget_tokens <= 0 && o.budget_cost_usd <= 0) return false;
    int64_t tokens = 0;
    double cost = 0;
    for (auto& b : agents) {
      auto u = b.agent->usage();
      tokens += u.tokens;
      cost += u.cost_usd;
    }
    if (o.budget_tokens > 0 && tokens >= o.budget_tokens) set_stop(fmt::format("token budget spent ({} of {})", tokens, o.budget_tokens));
    else if (o.budget_cost_usd > 0 && cost >= o.budget_cost_usd)
      set_stop(fmt::format("cost budget spent (${:.2f} of ${:.2f})", cost, o.budget_cost_usd));
    return stop;
  }

  bool all_failed() const {
    return !agents.empty() && std::all_of(agents.begin(), agents.end(), [](const AgentSlot& a) { return !a.st.failure.empty(); });
  }

  HiveStatus status(bool take_lines) {
    HiveStatus s;
    s.elapsed_s = now();
    s.session_s = std::chrono::duration<double>(Clock::now() - t0).count();
    s.evaluated = evaluated;
    for (auto& a : agents) s.agents.push_back(a.st);
    s.leader = leader;
    s.backups = backups.size();
    s.board_entries = board.size();
    s.slots = slots();
    if (take_lines) s.lines.swap(lines);
    s.stop_reason = stop_reason;
    s.budget_candidates = o.budget_candidates;
    s.budget_time_s = o.budget_time_s;
    return s;
  }

  void restore() {
    auto meta_task = db->meta("task_hash");
    if (!meta_task) throw std::runtime_error((o.run_dir / "run.db").string() + ": not a khive run (no task_hash in meta)");
    if (*meta_task != task.hash)
      throw std::runtime_error(fmt::format("{}: the run was made for task hash {}, but {} now hashes to {} (the task changed)",
                                           (o.run_dir / "run.db").string(), meta_task->substr(0, 12), task.dir.string(), task.hash.substr(0, 12)));
    if (auto b = db->meta("backend"); b && *b != backend_name(backend))
      throw std::runtime_error(fmt::format("{}: the run used the {} backend, not {}", (o.run_dir / "run.db").string(), *b, backend_name(backend)));
    reference_id = db->meta("reference").value_or("");
    std::string leader_id = db->meta("leader").value_or("");
    for (auto& c : db->candidates()) {
      seq = std::max(seq, c.seq);
      t_offset = std::max(t_offset, c.t);
      file_of[c.id] = (o.run_dir / c.file).string();
      if (c.id != reference_id) ++evaluated;
      if (c.verdict == "pending") awaiting[c.hash] = c.id;
      else if (c.verdict != "error") known[c.hash] = c;
      if (c.verdict == "leader" || c.verdict == "backup") accepted.push_back(to_measured(c));
    }
    for (auto& k : accepted)
      if (k.id == leader_id) become_leader(k);
    for (auto& s : db->board(false)) board.push_back(s.entry);
    for (auto& r : db->agents())
      for (auto& a : agents)
        if (a.index == r.index && a.st.kind == r.kind)
          for (auto& s : a.strategies)
            if (s.name == r.strategy) {
              a.strategy = s;
              a.base = find_accepted(r.base) ? r.base : "";
            }
    // The hive's counters and streaks per agent (absent in runs made before they were stored).
    for (auto& a : agents) {
      auto s = db->meta(counters_key(a));
      if (!s) continue;
      try {
        load_counters(a, *s);
      } catch (const std::exception& e) {
        event({{"type", "agent_error"}, {"agent", a.st.name}, {"message", std::string("its stored counters could not be read: ") + e.what()}},
              fmt::format("{}: stored counters not restored ({}); they start at zero", a.st.name, e.what()));
      }
    }
    if (auto h = db->meta("hive_counters")) {
      try {
        auto j = nlohmann::json::parse(*h);
        since_hive_leader = j.at("since_hive_leader").get<int>();
        told_no_backup = j.at("told_no_backup").get<bool>();
      } catch (const std::exception& e) {
        event({{"type", "agent_error"}, {"agent", "hive"}, {"message", std::string("hive_counters could not be read: ") + e.what()}}, "");
      }
    }
    // The agents' own state (an LLM agent's loop position, its base and history), when they keep one.
    for (auto& a : agents) {
      auto s = db->agent_state(a.index, a.st.kind);
      if (!s) continue;
      try {
        a.agent->load_state(nlohmann::json::parse(*s));
      } catch (const std::exception& e) {
        event({{"type", "agent_error"}, {"agent", a.st.name}, {"message", std::string("its saved state could not be restored: ") + e.what()}},
              fmt::format("{}: saved state not restored ({}); it starts afresh", a.st.name, e.what()));
      }
    }
  }

  // A previous process that ended without releasing the lock is said once, in the log and on the console.
  void take_lock() {
    lock = o.lock ? o.lock : std::make_shared<DirLock>(DirLock::acquire(o.run_dir, o.command.empty() ? process_command_line() : o.command));
  }
  void note_stale_lock() {
    if (lock->stale_note().empty()) return;
    std::lock_guard<std::mutex> lk(mu);
    event({{"type", "note"}, {"message", lock->stale_note()}}, lock->stale_note());
  }

  std::string pause_message() const {
    return fmt::format("paused: {} candidate(s) await GPU evaluation; run `khive evaluate-pending {}` on a machine with a GPU, then "
                       "`khive optimize --resume {}`",
                       awaiting.size(), o.run_dir.string(), o.run_dir.string());
  }

  CandidateRecord reference_record(const std::string& ref_source, const std::filesystem::path& ref_copy) {
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
  bool measure_reference(const std::string& ref_source, const std::filesystem::path& ref_copy, const Evaluation& rev) {
    std::optional<CandidateRecord> prior;
    if (!reference_id.empty())
      for (auto& c : db->candidates())
        if (c.id == reference_id) prior = c;
    if (prior && prior->verdict != "pending") return false;
    CandidateRecord c = reference_record(ref_source, ref_copy);
    c.verdict = "leader";
    c.score = rev.score;
    c.time_s = rev.time_s;
    c.workload_median_s = rev.workload_median_s;
    c.eval_s = rev.seconds;
    awaiting.erase(c.hash);
    known[c.hash] = c;
    accepted.push_back(to_measured(c));
    db->set_meta("reference", c.id);
    // Which T_b and T_sol the run's scores stand on (each session re-measures: the last one's is kept).
    if (!rev.score_basis.empty()) db->set_meta("score_basis", rev.score_basis);
    record_candidate(c);
    become_leader(to_measured(c));
    if (prior) db->put_pending({c.id, "hive", "", "observed", 0, c.t, "measured"});
    return true;
  }

  HiveResult run() {
    namespace fs = std::filesystem;
    t0 = Clock::now();
    take_lock();
    fs::create_directories(o.run_dir / "candidates");
    bool existing = fs::exists(o.run_dir / "run.db");
    if (existing && !o.resume)
      throw std::runtime_error(fmt::format("{} already holds a run (run.db): resume it with --resume, or choose another --out", o.run_dir.string()));
    if (!existing && o.resume) throw std::runtime_error(fmt::format("{}: no run.db to resume", o.run_dir.string()));
    db = std::make_unique<RunStore>(o.run_dir / "run.db");
    log = std::make_unique<EventLog>(o.run_dir / "events.jsonl");
    note_stale_lock();

    for (auto& a : agents) {
      a.strategies = a.agent->strategies(task, backend);
      a.st.kind = a.agent->kind();
      if (a.strategies.empty()) {
        a.st.done = true;
        const std::string why = a.agent->idle_because(task, backend);
        a.st.failure = why.empty() ? fmt::format("it has no strategy for task {} on the {} backend", task.name, backend_name(backend)) : why;
        event({{"type", "agent_done"}, {"agent", a.st.name}, {"reason", a.st.failure}}, fmt::format("{} has nothing to try: {}", a.st.name, a.st.failure));
        continue;
      }
      a.strategy = a.strategies[static_cast<std::size_t>(a.index) % a.strategies.size()];
    }
    std::unique_lock<std::mutex> lk(mu);
    if (o.resume) restore();
    for (auto& a : agents) a.st.strategy = a.strategy.name, a.st.base = a.base;

    if (!o.resume) {
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
    event({{"type", o.resume ? "resume" : "start"}, {"task", task.name}, {"backend", backend_name(backend)}, {"seed", o.seed},
           {"agents", agents.size()}, {"options", o.meta}},
          fmt::format("{} {} on {} with {} agent(s)", o.resume ? "resume" : "start", task.name, backend_name(backend), agents.size()));

    for (auto& a : agents)
      if (!a.st.failure.empty()) agent_failed(a, a.st.failure);
    if (all_failed()) {   // nothing can be tried: say so before spending minutes on the reference
      set_stop("no agent can work on this task (see above)");
      return finish(lk);
    }

    // The reference, measured once: timings for the score, goldens for every candidate, the first leader.
    auto ref = task.reference_for(backend);
    if (!ref) throw std::runtime_error(fmt::format("task {} has no {} reference", task.name, backend_name(backend)));
    auto ref_copy = o.run_dir / "candidates" / ("c0000-reference." + ext);
    std::string ref_source = read_file(*ref);
    if (!fs::exists(ref_copy)) write_file_atomic(ref_copy, ref_source);
    if (o.defer_eval) {
      // No device here: the reference is measured where the candidates are (evaluate-pending); until
      // then there is no leader. It must build, or nothing could ever be judged against it.
      if (reference_id.empty()) {
        lk.unlock();
        Evaluation b = eval.build_only(ref_copy);
        lk.lock();
        if (b.status != "built")
          throw std::runtime_error(fmt::format("the task's reference {} does not build ({}: {} {})", ref->string(), b.status, b.reason, b.message));
        CandidateRecord c = reference_record(ref_source, ref_copy);
        c.verdict = "pending";
        c.message = "built here; measured on a GPU by evaluate-pending";
        db->set_meta("reference", c.id);
        record_candidate(c);
        db->put_pending({c.id, "hive", b.build_key, "awaiting", c.t, 0, ""});
        awaiting[c.hash] = c.id;
      }
    } else {
      lk.unlock();
      Evaluation rev = eval.prepare(ref_copy);
      lk.lock();
      if (rev.status != "accepted")
        throw std::runtime_error(fmt::format("the task's reference {} was not accepted by the guard ({}: {} {})", ref->string(), rev.status,
                                             rev.reason, rev.message));
      measure_reference(ref_source, ref_copy, rev);
    }
    for (auto& a : agents) save_agent(a);
    lk.unlock();

    std::vector<std::thread> threads;
    for (auto& a : agents)
      if (!a.st.done) threads.emplace_back([this, &a] { agent_loop(a); });

    auto last_update = Clock::now() - std::chrono::seconds(10);
    lk.lock();
    while (true) {
      cv.wait_for(lk, std::chrono::milliseconds(250));
      if (o.external_stop && o.external_stop->load()) set_stop("interrupted (Ctrl-C)");
      if (o.budget_time_s > 0 && std::chrono::duration<double>(Clock::now() - t0).count() >= o.budget_time_s)
        set_stop(fmt::format("time budget spent ({:.0f} s)", o.budget_time_s));
      bool all_done = std::all_of(agents.begin(), agents.end(), [](const AgentSlot& a) { return a.st.done || a.st.waiting; });
      bool any_waits = std::any_of(agents.begin(), agents.end(), [](const AgentSlot& a) { return a.st.waiting; });
      if (all_done) set_stop(any_waits ? "every agent waits for a GPU verdict" : all_failed() ? "every agent failed: its model provider could not be used"
                                                                                      : "every agent is done (all strategies exhausted)");
      if (o.on_update && (!lines.empty() || Clock::now() - last_update > std::chrono::seconds(1))) {
        auto s = status(true);
        lk.unlock();
        o.on_update(s);
        lk.lock();
        last_update = Clock::now();
      }
      if (stop) break;
    }
    lk.unlock();
    for (auto& t : threads) t.join();   // in-flight evaluations finish and are recorded
    lk.lock();
    return finish(lk);
  }

  // The end of a run (lk holds mu): counters, the pause or stop reason, slot use and the end event.
  HiveResult finish(std::unique_lock<std::mutex>& lk) {
    for (auto& a : agents) save_counters(a);   // also what changed outside a verdict (reused, duplicates)
    if (!awaiting.empty()) {
      // Every pause is an event: what waits, and what to run next.
      std::vector<std::string> ids;
      for (auto& p : db->pending("awaiting")) ids.push_back(p.id);
      std::string cause = stop_reason;
      stop_reason = pause_message();
      event({{"type", "pause"}, {"pending", ids.size()}, {"ids", ids}, {"cause", cause}, {"message", stop_reason}}, stop_reason);
    }
    db->set_meta("stop_reason", stop_reason);
    nlohmann::json slots_j = nlohmann::json::array();
    for (auto& s : slots()) slots_j.push_back({{"name", s.name}, {"busy_s", s.busy_s}, {"evaluations", s.evaluations}});
    db->set_meta("slots", slots_j.dump());
    event({{"type", "end"}, {"reason", stop_reason}, {"evaluated", evaluated}, {"leader", leader ? leader->id : ""}, {"slots", slots_j},
           {"pending", awaiting.size()}},
          "");
    db->set_meta("wall_s", fmt::format("{:.3f}", now()));
    HiveResult r;
    r.status = status(true);
    r.status.finished = true;
    r.leader = leader;
    r.backups = backups;
    r.reference_id = reference_id;
    if (o.on_update) {
      lk.unlock();
      o.on_update(r.status);
    }
    return r;
  }
  PendingSummary evaluate_pending() {
    namespace fs = std::filesystem;
    t0 = Clock::now();
    if (!fs::exists(o.run_dir / "run.db")) throw std::runtime_error(fmt::format("{}: no run.db (not a khive run directory)", o.run_dir.string()));
    take_lock();
    db = std::make_unique<RunStore>(o.run_dir / "run.db");
    log = std::make_unique<EventLog>(o.run_dir / "events.jsonl");
    note_stale_lock();
    std::unique_lock<std::mutex> lk(mu);
    restore();
    auto todo = db->pending("awaiting");
    PendingSummary sum;
    event({{"type", "evaluate_pending"}, {"pending", todo.size()}, {"backend", backend_name(backend)}},
          fmt::format("evaluate-pending: {} candidate(s) awaiting on {}", todo.size(), backend_name(backend)));
    // The reference first: this session's goldens and T_b (the run's seed), and the first leader when it
    // was deferred too.
    auto ref = task.reference_for(backend);
    if (!ref) throw std::runtime_error(fmt::format("task {} has no {} reference", task.name, backend_name(backend)));
    auto ref_copy = o.run_dir / "candidates" / ("c0000-reference." + ext);
    std::string ref_source = read_file(*ref);
    if (!fs::exists(ref_copy)) write_file_atomic(ref_copy, ref_source);
    lk.unlock();
    Evaluation rev = eval.prepare(ref_copy);
    lk.lock();
    if (rev.status != "accepted")
      throw std::runtime_error(fmt::format("the task's reference {} was not accepted by the guard ({}: {} {})", ref->string(), rev.status,
                                           rev.reason, rev.message));
    if (measure_reference(ref_source, ref_copy, rev)) {
      PendingVerdict v;
      v.id = reference_id;
      v.agent = "hive";
      v.strategy = v.label = "reference";
      v.verdict = "leader";
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
      auto it = by_id.find(pr.id);
      if (it == by_id.end()) throw std::runtime_error(fmt::format("{}: pending {} has no candidate row", (o.run_dir / "run.db").string(), pr.id));
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
      if (ev.status == "error") {
        ++sum.errors;
        pr.note = ev.message.substr(0, 500);
        db->put_pending(pr);
        event({{"type", "pending_error"}, {"candidate", c.id}, {"agent", c.agent}, {"message", ev.message}},
              fmt::format("{}: harness error, left awaiting: {}", c.id, ev.message.substr(0, 200)));
        if (stop) break;
        continue;
      }
      PendingVerdict v;
      v.id = c.id;
      v.agent = c.agent;
      v.strategy = c.strategy;
      v.label = c.label;
      v.verdict = c.verdict;
      v.check = c.check;
      v.reason = c.reason;
      v.message = c.message;
      v.time_s = c.time_s;
      v.delta = c.delta;
      v.comparison = c.comparison;
      v.score = c.score;
      v.eval_s = c.eval_s;
      v.build_key_changed = !pr.build_key.empty() && !ev.build_key.empty() && pr.build_key != ev.build_key;
      if (v.build_key_changed)
        event({{"type", "note"}, {"candidate", c.id}, {"message", "rebuilt with another build key (another compiler or flags) than where it was proposed"}},
              "");
      sum.verdicts.push_back(v);
      pr.status = "evaluated";
      pr.t_evaluated = c.t;
      pr.note.clear();
      db->put_pending(pr);
      if (o.on_update) {
        auto st = status(true);
        o.on_update(st);
      }
    }
    lk.lock();
    sum.remaining = static_cast<int>(db->pending("awaiting").size());
    sum.leader = leader;
    sum.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    nlohmann::json slots_j = nlohmann::json::array();
    for (auto& s : slots()) slots_j.push_back({{"name", s.name}, {"busy_s", s.busy_s}, {"evaluations", s.evaluations}});
    event({{"type", "evaluated_pending"}, {"evaluated", sum.verdicts.size()}, {"errors", sum.errors}, {"remaining", sum.remaining},
           {"leader", leader ? leader->id : ""}, {"seconds", sum.seconds}, {"slots", slots_j}},
          fmt::format("evaluate-pending: {} verdict(s), {} harness error(s), {} still awaiting; leader {}", sum.verdicts.size(), sum.errors,
                      sum.remaining, leader ? leader->id : "-"));
    return sum;
  }
};

Hive::Hive(const Task& task, Backend backend, std::vector<std::unique_ptr<Agent>> agents, Evaluator& eval, HiveOptions o)
    : impl_(std::make_unique<Impl>(task, backend, eval, std::move(o))) {
  int i = 0;
  for (auto& a : agents) {
    AgentSlot s;
    s.index = i;
    s.st.name = fmt::format("a{}", i);
    s.agent = std::move(a);
    impl_->agents.push_back(std::move(s));
    ++i;
  }
}

Hive::~Hive() = default;

bool HiveStatus::all_agents_failed() const {
  return !agents.empty() && std::all_of(agents.begin(), agents.end(), [](const AgentStatus& a) { return !a.failure.empty(); });
}

HiveResult Hive::run() { return impl_->run(); }

PendingSummary Hive::evaluate_pending() { return impl_->evaluate_pending(); }

Evaluation Evaluator::build_only(const std::filesystem::path& source) {
  throw std::runtime_error("this evaluator cannot defer evaluation (no build-only check) for " + source.string());
}

}  // namespace khive
