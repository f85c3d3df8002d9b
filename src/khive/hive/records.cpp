// The hive's records: events (events.jsonl and the console lines), run.db rows (candidates, agents, their counters and
// states), the shared board, and the status the progress display reads. Callers hold mu unless said.
#include "khive/hive/hive_impl.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "khive/hive/board.hpp"
#include "khive/record/run_records.hpp"

namespace khive {

std::string Hive::Impl::ms(double s) { return s > 0 ? fmt::format("{:.3f} ms", s * 1e3) : std::string("-"); }

void Hive::Impl::event(nlohmann::json ev, const std::string& line) {
  ev["t"] = std::round(now() * 1000) / 1000;
  log->append(ev);
  if (!line.empty()) lines.push_back(fmt::format("[{:6.1f}s] {}", now(), line));
  cv.notify_all();
}

void Hive::Impl::set_stop(const std::string& why) {
  if (!stop.exchange(true)) {
    stop_reason = why;
    event({{"type", "stop"}, {"reason", why}}, "stopping: " + why);
  }
}

void Hive::Impl::save_agent(const AgentSlot& a) {
  db->put_agent({a.index, a.st.name, a.st.kind, a.strategy.name, a.base});
  save_counters(a);
}

// The hive's own view of each agent (verdict counters, plateau streaks, strategy history) is kept in
// run.db too: a deferred run resumes once per GPU round, and counters rebuilt from that session's
// verdicts alone would keep every streak at 1, so the plateau rules could never fire. Callers hold mu.
std::string Hive::Impl::counters_key(const AgentSlot& a) {
  return fmt::format("agent_counters.{}.{}", a.index, a.st.kind);
}

void Hive::Impl::save_counters(const AgentSlot& a) {
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
  db->set_meta("hive_counters",
               nlohmann::json({{"since_hive_leader", since_hive_leader}, {"told_no_backup", told_no_backup}}).dump());
}

void Hive::Impl::load_counters(AgentSlot& a, const std::string& text) {
  auto j = nlohmann::json::parse(text);
  auto opt = [&](const char* k) {
    return j.at(k).is_null() ? std::optional<double>() : std::optional<double>(j.at(k).get<double>());
  };
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

void Hive::Impl::post(AgentSlot& a, BoardEntry e, const Outcome& oc) {
  if (!o.board) return;
  e.agent = a.st.name;
  if (e.strategy.empty()) e.strategy = a.strategy.name;
  if (e.candidate.empty()) e.candidate = oc.candidate;
  if (e.kind != "worked" && e.kind != "failed" && e.kind != "insight") e.kind = "insight";
  if (e.kind == "failed" && e.reason.empty()) e.reason = oc.reason;
  e.id = db->add_board_entry(e, now());
  board.push_back(e);
  event({{"type", "board"},
         {"id", e.id},
         {"agent", e.agent},
         {"strategy", e.strategy},
         {"kind", e.kind},
         {"text", e.text},
         {"candidate", e.candidate},
         {"delta", e.delta},
         {"reason", e.reason}},
        "");
  auto gone = entries_to_evict(board, o.board_capacity);
  if (!gone.empty()) {
    db->evict_board_entries(gone);
    for (auto id : gone) event({{"type", "evict"}, {"id", id}}, "");
    board.erase(
        std::remove_if(board.begin(), board.end(),
                       [&](const BoardEntry& b) { return std::find(gone.begin(), gone.end(), b.id) != gone.end(); }),
        board.end());
  }
}

void Hive::Impl::record_candidate(const CandidateRecord& c) {
  db->put_candidate(c);
  event(candidate_event(c), verdict_line(c));
}

// One line per verdict. An accepted kernel shows its own-run median and score, and how it stood against the
// leader (its comparison: check 11's A/B), never two medians side by side as if they said which is faster.
std::string Hive::Impl::verdict_line(const CandidateRecord& c) {
  std::string s = fmt::format("{} {} {} {:<22} {:<8} ", c.agent, c.strategy, c.id, c.label, standing_name(c.standing));
  if (c.accepted()) {
    s += "own run " + ms(c.time_s) + (c.score ? fmt::format(", score {:.3f}", *c.score) : std::string());
    if (c.comparison) return s + "; " + comparison_brief(*c.comparison);
    return s + (c.standing == Standing::leader ? "; the first leader" : "");
  }
  return s + (c.check ? c.check_text() + ": " : "") + c.reason +
         (c.message.empty() ? "" : " — " + c.message.substr(0, 120));
}

// The agent's own state (Agent::save_state) into run.db. Called without mu.
void Hive::Impl::save_state(AgentSlot& a) {
  nlohmann::json s;
  try {
    s = a.agent->save_state();
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lk(mu);
    event({{"type", "agent_error"}, {"agent", a.st.name}, {"message", std::string("saving its state: ") + e.what()}},
          "");
    return;
  }
  // Agents keep text from outside (a model's replies): never let one invalid byte lose the state.
  if (!s.is_null())
    db->put_agent_state(a.index, a.st.kind, s.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

// The evaluator's slots and their use, as the end events record them.
nlohmann::json Hive::Impl::slots_json() const {
  nlohmann::json slots_j = nlohmann::json::array();
  for (auto& s : slots()) slots_j.push_back({{"name", s.name}, {"busy_s", s.busy_s}, {"evaluations", s.evaluations}});
  return slots_j;
}

HiveStatus Hive::Impl::status(bool take_lines) {
  HiveStatus s;
  s.elapsed_s = now();
  s.session_s = std::chrono::duration<double>(Clock::now() - t0).count();
  s.evaluated = evaluated;
  for (auto& a : agents) s.agents.push_back(a.st);
  s.leader = standings.leader();
  s.backups = standings.backups().size();
  s.board_entries = board.size();
  s.slots = slots();
  if (take_lines) s.lines.swap(lines);
  s.stop_reason = stop_reason;
  s.budget_candidates = o.budget_candidates;
  s.budget_time_s = o.budget_time_s;
  return s;
}

}  // namespace khive
