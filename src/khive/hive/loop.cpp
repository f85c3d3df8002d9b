// The run: set up (setup.cpp), one thread per agent (agent_loop.cpp), and the hive's main thread watching the stop
// conditions (Ctrl-C, the time budget, every agent done or waiting) and reporting progress; then the end of the run.
#include "khive/hive/hive_impl.hpp"

#include <algorithm>
#include <thread>

#include <fmt/format.h>

namespace khive {

HiveResult Hive::Impl::run() {
  namespace fs = std::filesystem;
  t0 = Clock::now();
  take_lock();
  fs::create_directories(o.run_dir / "candidates");
  bool existing = fs::exists(o.run_dir / "run.db");
  if (existing && !o.resume)
    throw std::runtime_error(fmt::format(
        "{} already holds a run (run.db): resume it with --resume, or choose another --out", o.run_dir.string()));
  if (!existing && o.resume) throw std::runtime_error(fmt::format("{}: no run.db to resume", o.run_dir.string()));
  open_records();
  note_stale_lock();
  init_agents();

  std::unique_lock<std::mutex> lk(mu);
  if (o.resume) restore();
  for (auto& a : agents) a.st.strategy = a.strategy.name, a.st.base = a.base;
  if (!o.resume) record_run_meta();
  event({{"type", o.resume ? "resume" : "start"},
         {"task", task.name},
         {"backend", backend_name(backend)},
         {"seed", o.seed},
         {"agents", agents.size()},
         {"options", o.meta}},
        fmt::format("{} {} on {} with {} agent(s)", o.resume ? "resume" : "start", task.name, backend_name(backend),
                    agents.size()));

  for (auto& a : agents)
    if (!a.st.failure.empty()) agent_failed(a, a.st.failure);
  if (all_failed()) {  // nothing can be tried: say so before spending minutes on the reference
    set_stop("no agent can work on this task (see above)");
    return finish(lk);
  }
  start_reference(lk);
  for (auto& a : agents) save_agent(a);
  lk.unlock();

  std::vector<AgentSlot*> starting;
  for (auto& a : agents)
    if (!a.st.done) starting.push_back(&a);
  const int jobs = o.prebuild_jobs >= 0 ? o.prebuild_jobs
                                        : default_prebuild_jobs(backend, static_cast<int>(starting.size()),
                                                                std::thread::hardware_concurrency());
  prebuilder = std::make_unique<Prebuilder>(eval, o.run_dir / ".prebuild", jobs);
  running_agents =
      static_cast<int>(starting.size());  // counted before any agent thread runs (each decrements under mu)
  std::vector<std::thread> threads;
  for (AgentSlot* a : starting) threads.emplace_back([this, a] { agent_loop(*a); });
  lk.lock();
  watch(lk);
  stop_evaluations(lk);
  lk.unlock();
  for (auto& t : threads) t.join();
  prebuilder->stop();  // what is still compiling ahead is of no use now
  lk.lock();
  return finish(lk);
}

// The hive's main thread while the agents work (lk holds mu): stops the run on Ctrl-C, when the time budget is spent
// or when every agent is done or waits for a GPU verdict; reports progress at least once a second.
void Hive::Impl::watch(std::unique_lock<std::mutex>& lk) {
  auto last_update = Clock::now() - std::chrono::seconds(10);
  while (true) {
    cv.wait_for(lk, std::chrono::milliseconds(250));
    if (o.external_stop && o.external_stop->load() && !stop) {
      stopped_by_interrupt = true;
      set_stop("interrupted (Ctrl-C)");
    }
    if (o.budget_time_s > 0 && std::chrono::duration<double>(Clock::now() - t0).count() >= o.budget_time_s && !stop) {
      stopped_by_time = true;
      set_stop(fmt::format("time budget spent ({:.0f} s)", o.budget_time_s));
    }
    bool all_done =
        std::all_of(agents.begin(), agents.end(), [](const AgentSlot& a) { return a.st.done || a.st.waiting; });
    bool any_waits = std::any_of(agents.begin(), agents.end(), [](const AgentSlot& a) { return a.st.waiting; });
    if (all_done)
      set_stop(any_waits      ? "every agent waits for a GPU verdict"
               : all_failed() ? "every agent failed: its model provider could not be used"
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
}

// After the stop (lk holds mu). Candidates already reserved under a candidate budget are part of it and are
// evaluated. On the time budget or Ctrl-C, an evaluation still waiting for a device ends at once, unrecorded. On the
// time budget, one on a device may finish within a grace of 10 % of the budget (5 to 60 s); then its judge is killed
// and it ends unrecorded too (issue 25: --budget-time 5 ended after 120 s, whole evaluations over). After Ctrl-C those
// on a device finish and are recorded (a second Ctrl-C ends khive at once).
void Hive::Impl::stop_evaluations(std::unique_lock<std::mutex>& lk) {
  if (!stopped_by_time && !stopped_by_interrupt) return;
  lk.unlock();
  eval.stop_evaluating(false);
  lk.lock();
  if (!stopped_by_time) return;
  const double grace = std::clamp(0.1 * o.budget_time_s, 5.0, 60.0);
  if (cv.wait_for(lk, std::chrono::duration<double>(grace), [&] { return running_agents == 0; })) return;
  event({{"type", "note"},
         {"message", fmt::format("evaluations still running {:.0f} s after the time budget were stopped", grace)}},
        fmt::format("evaluations still running {:.0f} s after the time budget are stopped (not recorded)", grace));
  lk.unlock();
  eval.stop_evaluating(true);
  lk.lock();
}

// The end of a run (lk holds mu): counters, the pause or stop reason, slot use and the end event.
HiveResult Hive::Impl::finish(std::unique_lock<std::mutex>& lk) {
  for (auto& a : agents) save_counters(a);  // also what changed outside a verdict (reused, duplicates)
  if (!awaiting.empty()) {
    // Every pause is an event: what waits, and what to run next.
    std::vector<std::string> ids;
    for (auto& p : db->pending(PendingStatus::awaiting)) ids.push_back(p.id);
    std::string cause = stop_reason;
    stop_reason = pause_message();
    event({{"type", "pause"}, {"pending", ids.size()}, {"ids", ids}, {"cause", cause}, {"message", stop_reason}},
          stop_reason);
  }
  db->set_meta("stop_reason", stop_reason);
  nlohmann::json slots_j = slots_json();
  db->set_meta("slots", slots_j.dump());
  if (prebuilder && prebuilder->enabled()) db->set_meta("prebuild", prebuilder->stats().to_json().dump());
  const auto& leader = standings.leader();
  event({{"type", "end"},
         {"reason", stop_reason},
         {"evaluated", evaluated},
         {"leader", leader ? leader->id : ""},
         {"slots", slots_j},
         {"pending", awaiting.size()}},
        "");
  db->set_meta("wall_s", fmt::format("{:.3f}", now()));
  HiveResult r;
  r.status = status(true);
  r.status.finished = true;
  r.leader = leader;
  r.backups = standings.backups();
  r.reference_id = reference_id;
  if (o.on_update) {
    lk.unlock();
    o.on_update(r.status);
  }
  return r;
}

}  // namespace khive
