// Agent slots: which strategy an agent holds and when it moves (exhausted, plateau, the hive-wide plateau's restart
// from a backup), what it is told each round (its context), and the hive's counters on it. Callers hold mu.
#include "khive/hive/hive_impl.hpp"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "khive/hive/board.hpp"

namespace khive {

std::string choose_strategy(const std::vector<Strategy>& all, const std::string& current,
                            const std::vector<std::string>& recent, const std::vector<std::string>& exhausted,
                            const std::map<std::string, int>& explored, const std::map<std::string, int>& held,
                            int agent_index) {
  auto in = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
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
    auto key = [&](std::size_t j) {
      return std::make_tuple(get(explored, all[j].name), get(held, all[j].name), rot(j));
    };
    if (key(i) < key(best)) best = i;
  }
  return all[best].name;
}

void Hive::Impl::record_switch(AgentSlot& a, const std::string& to, const std::string& reason) {
  SwitchRecord s{0, now(), a.st.name, a.strategy.name, to, reason, a.base};
  db->add_switch(s);
  event({{"type", "switch"},
         {"agent", a.st.name},
         {"from", a.strategy.name},
         {"to", to},
         {"reason", reason},
         {"base", a.base}},
        fmt::format("{} {} -> {}: {}", a.st.name, a.strategy.name, to, reason));
  ++a.st.switches;
}

// Moves the agent to another strategy; false when there is none (the agent stays, or is done when its
// current strategy is exhausted too).
bool Hive::Impl::switch_strategy(AgentSlot& a, const std::string& reason) {
  std::map<std::string, int> explored = o.board ? entries_per_strategy(board) : a.own_explored;
  std::map<std::string, int> held;
  for (auto& b : agents)
    if (&b != &a && !b.st.done) ++held[b.strategy.name];
  std::vector<std::string> recent(a.recent.begin(), a.recent.end());
  std::string next = choose_strategy(a.strategies, a.strategy.name, recent, a.exhausted, explored, held, a.index);
  if (next.empty()) return false;
  std::string base_before = a.base;
  a.base.clear();  // a new direction starts from the leader
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

void Hive::Impl::exhausted(AgentSlot& a, const std::string& why) {
  if (std::find(a.exhausted.begin(), a.exhausted.end(), a.strategy.name) == a.exhausted.end())
    a.exhausted.push_back(a.strategy.name);
  if (!switch_strategy(a, why)) {
    a.st.done = true;
    event({{"type", "agent_done"}, {"agent", a.st.name}, {"reason", why + "; no strategy left"}},
          fmt::format("{} done: {}; no strategy left", a.st.name, why));
  }
}

// The agent cannot work (its provider failed): no strategy switch would help. Said on the console, in the
// log and in run.db (the summary lists it). Callers hold mu.
void Hive::Impl::agent_failed(AgentSlot& a, const std::string& why) {
  a.st.done = true;
  a.st.failure = why;
  event({{"type", "agent_failed"}, {"agent", a.st.name}, {"kind", a.st.kind}, {"reason", why}},
        fmt::format("{} ({}) stopped: {}", a.st.name, a.st.kind, why));
  auto failures = nlohmann::json::parse(db->meta("agent_failures").value_or("{}"), nullptr, false);
  if (!failures.is_object()) failures = nlohmann::json::object();
  failures[a.st.name] = {{"kind", a.st.kind}, {"reason", why}};
  db->set_meta("agent_failures", failures.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

// The agent's plateau (P evaluated candidates in a row without a new leader in its strategy: it switches), then the
// hive's.
void Hive::Impl::check_plateaus(AgentSlot& a) {
  if (o.plateau <= 0) return;
  if (a.streak >= o.plateau) {
    std::string why = fmt::format("plateau: {} evaluated candidates in a row without a new leader", a.streak);
    if (!switch_strategy(a, why)) {
      a.streak = 0;  // nowhere to go: keep searching here, count afresh
      event({{"type", "plateau"},
             {"agent", a.st.name},
             {"strategy", a.strategy.name},
             {"reason", why + "; no other strategy"}},
            fmt::format("{} {}; no other strategy, stays on {}", a.st.name, why, a.strategy.name));
    }
  }
  check_hive_plateau();
}

// The hive-wide plateau (P x (active agents + 1) evaluated candidates without a new leader): the agents longest
// without a leader restart from the best backups.
void Hive::Impl::check_hive_plateau() {
  int active = 0;
  for (auto& b : agents) active += !b.st.done;
  // The hive's plateau is the escalation after each agent's own: every active agent has had P candidates and one
  // switch of strategy (P more) without a new leader. (At P x active, a lone agent was restarted from a backup at the
  // very moment it switched, and never searched the strategy it switched to.)
  if (active > 0 && since_hive_leader >= o.plateau * (active + 1)) {
    std::string why = fmt::format("hive plateau: {} evaluated candidates without a new leader", since_hive_leader);
    since_hive_leader = 0;
    const auto& backups = standings.backups();
    if (backups.empty()) {
      if (!told_no_backup)
        event({{"type", "hive_plateau"}, {"reason", why + "; no backup to restart from"}},
              why + "; no backup to restart from");
      told_no_backup = true;
      return;
    }
    // The agents longest without a leader restart from the best backups, round robin.
    std::vector<AgentSlot*> order;
    for (auto& b : agents)
      if (!b.st.done) order.push_back(&b);
    std::stable_sort(order.begin(), order.end(),
                     [](AgentSlot* x, AgentSlot* y) { return x->st.since_leader > y->st.since_leader; });
    std::size_t k = (order.size() + 1) / 2;
    for (std::size_t i = 0; i < k; ++i) {
      auto& b = *order[i];
      const auto& bk = backups[i % backups.size()];
      b.base = bk.id;
      b.exhausted.clear();  // from another starting point, a spent strategy may have more to give
      b.streak = 0;
      record_switch(b, b.strategy.name,
                    fmt::format("{}; restart from backup {} ({}, {})", why, bk.id, bk.strategy, ms(bk.time_s)));
      b.st.base = bk.id;
      save_agent(b);
    }
  }
}

AgentContext Hive::Impl::context(AgentSlot& a) {
  AgentContext c;
  c.task = &task;
  c.backend = backend;
  c.strategy = a.strategy;
  c.leader = standings.leader();
  c.start = standings.leader();
  if (!a.base.empty())
    if (auto* k = standings.find(a.base)) c.start = *k;
  c.backups = standings.backups();
  if (o.board) c.board = relevant_entries(board, a.strategy.name, o.board_view);
  c.attempts_in_strategy = a.attempts_in_strategy;
  c.seed = o.seed + 1000003ull * static_cast<uint64_t>(a.index + 1);
  c.stop = &stop;
  return c;
}

// The agent's side of a verdict: its counters and plateau streaks (callers hold mu).
void Hive::Impl::account(AgentSlot& a, const CandidateRecord& c) {
  ++a.attempts_in_strategy;
  ++a.st.attempts;
  ++a.own_explored[a.strategy.name];
  if (c.standing == Standing::error) {
    ++a.st.errors;
    return;
  }
  if (c.accepted())
    if (!a.st.best_time_s || c.time_s < *a.st.best_time_s) {
      a.st.best_time_s = c.time_s;
      a.st.best_score = c.score;
    }
  if (c.standing == Standing::leader) {
    ++a.st.leaders;
    since_hive_leader = 0;
    a.streak = 0;
    a.st.since_leader = 0;
    if (!a.base.empty()) {  // the restart paid off: follow the leader again
      a.base.clear();
      a.st.base.clear();
      save_agent(a);
    }
    told_no_backup = false;
  } else {
    c.standing == Standing::backup ? ++a.st.backups : ++a.st.rejected;
    ++since_hive_leader;
    ++a.streak;
    ++a.st.since_leader;
  }
  save_counters(a);
}

bool Hive::Impl::all_failed() const {
  return !agents.empty() &&
         std::all_of(agents.begin(), agents.end(), [](const AgentSlot& a) { return !a.st.failure.empty(); });
}

}  // namespace khive
