#include "khive/cli/hive_cmds.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <iostream>
#include <optional>
#include <random>
#include <set>

#include <fmt/format.h>

#include "khive/agent/replay.hpp"
#include "khive/cli/conventions.hpp"
#include "khive/eval/guard_evaluator.hpp"
#include "khive/eval/recorded_evaluator.hpp"
#include "khive/hive/hive.hpp"
#include "khive/interop/python.hpp"
#include "khive/llm/llm_agent.hpp"
#include "khive/record/report.hpp"
#include "khive/record/rescore.hpp"
#include "khive/record/run_records.hpp"
#include "khive/record/store.hpp"
#include "khive/support/files.hpp"
#include "khive/support/interrupt.hpp"
#include "khive/tuner/tuner.hpp"

namespace khive {
namespace {

std::string ms(double s) { return s > 0 ? fmt::format("{:.3f} ms", s * 1e3) : std::string("-"); }

Backend pick_backend(const std::string& s) {
  if (!s.empty()) {
    auto b = parse_backend(s);
    if (!b) throw std::runtime_error("--backend: expected cpu or cuda, got '" + s + "'");
    return *b;
  }
#if defined(KHIVE_WITH_CUDA)
  if (!visible_gpu_slots().empty()) return Backend::cuda;
#endif
  return Backend::cpu;
}

// Expands --agent specs over --agents N (round robin) and builds them. Replay agents over the same
// directory share its files out.
// --warm-start RUN...: the accepted tuner points (leader and backups) of each earlier run, fastest first, at most 8
// a run; they need not come from the same task (a GEMM's points for another GEMM): the tuner skips what does not
// apply or is invalid here.
std::vector<std::map<std::string, std::string>> warm_start_points(const std::vector<std::string>& runs) {
  std::vector<std::map<std::string, std::string>> out;
  for (const auto& run : runs) {
    RunRecords rr = load_run_records(run);
    std::vector<const CandidateRecord*> ok;
    for (const auto& c : rr.candidates)
      if (c.accepted() && c.params.count("template") && c.time_s > 0) ok.push_back(&c);
    std::stable_sort(ok.begin(), ok.end(),
                     [](const CandidateRecord* a, const CandidateRecord* b) { return a->time_s < b->time_s; });
    for (std::size_t i = 0; i < ok.size() && i < 8; ++i) out.push_back(ok[i]->params);
  }
  return out;
}

std::vector<std::unique_ptr<Agent>> make_agents(const std::vector<std::string>& specs, int n,
                                                const std::filesystem::path& run_dir,
                                                const std::vector<std::map<std::string, std::string>>& warm_start = {},
                                                const std::set<std::string>& templates = {}) {
  std::vector<std::string> each;
  for (int i = 0; i < n; ++i) each.push_back(specs[static_cast<std::size_t>(i) % specs.size()]);
  std::map<std::string, int> total, seen;
  for (auto& s : each) ++total[s];
  auto tuner_memory = std::make_shared<TunerMemory>();
  auto ledger = std::make_shared<UsageLedger>();    // the run's model usage, all LLM agents together
  std::function<void(const LlmEvent&)> llm_events;  // RUN/llm/events.jsonl: transitions, requests, steps (tool_s)
  std::vector<std::unique_ptr<Agent>> out;
  for (auto& s : each) {
    if (s == "tuner") {
      TunerOptions o;
      o.memory = tuner_memory;  // the run's tuners never propose the same point twice
      o.warm_start = warm_start;
      o.templates = templates;
      out.push_back(make_tuner_agent(o));
    } else if (s.rfind("replay:", 0) == 0) {
      out.push_back(std::make_unique<ReplayAgent>(s.substr(7), seen[s]++, total[s]));
    } else if (s.rfind("llm:", 0) == 0 || s.rfind("cmd:", 0) == 0) {
      // Requests and replies are kept under the run directory, one folder per agent.
      std::string name = fmt::format("a{}", out.size());
      LlmAgentOptions o = s.rfind("llm:", 0) == 0 ? load_llm_config(s.substr(4)) : LlmAgentOptions{};
      // The agent keeps its transcripts in run_dir/<its name>: the name is unique per agent (a0, a1, or
      // "<config name>-a0" when several agents share one config).
      o.name = o.name.empty() ? name : o.name + "-" + name;
      o.run_dir = run_dir / "llm";
      o.run_usage = ledger;
      if (!llm_events) llm_events = llm_event_log(run_dir / "llm" / "events.jsonl");
      if (!o.on_event) o.on_event = llm_events;
      out.push_back(s.rfind("llm:", 0) == 0 ? make_llm_agent(o) : make_command_agent(s.substr(4), o));
    } else {
      throw std::runtime_error("--agent: expected tuner, replay:DIR, llm:CONFIG or cmd:COMMAND, got '" + s + "'");
    }
  }
  return out;
}

std::string timestamp() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", std::localtime(&t));
  return buf;
}

// "1h02m", "4m10s", "35s".
std::string duration_text(double s) {
  const long t = std::lround(std::max(0.0, s));
  if (t >= 3600) return fmt::format("{}h{:02d}m", t / 3600, (t % 3600) / 60);
  if (t >= 60) return fmt::format("{}m{:02d}s", t / 60, t % 60);
  return fmt::format("{}s", t);
}

// "3/30 candidates, 4m10s left" (time budget) or "~4m10s left at 12 s a candidate" (candidate budget, the pace so
// far); without a budget only the count.
std::string budget_text(const HiveStatus& s) {
  std::string out = s.budget_candidates > 0 ? fmt::format("{}/{} candidates", s.evaluated, s.budget_candidates)
                                            : fmt::format("{} candidate{}", s.evaluated, s.evaluated == 1 ? "" : "s");
  std::optional<double> left;
  std::string how;
  if (s.budget_time_s > 0) left = s.budget_time_s - s.session_s;
  if (s.budget_candidates > 0 && s.evaluated > 0) {
    const double pace = s.elapsed_s / s.evaluated;
    const double by_count = pace * std::max(0, s.budget_candidates - s.evaluated);
    if (!left || by_count < *left) left = by_count, how = fmt::format(" at {:.0f} s a candidate", pace);
  }
  if (left) out += fmt::format(", {}{} left{}", how.empty() ? "" : "~", duration_text(*left), how);
  return out;
}

// What the agents do now: "a0 evaluating c0004; a1 asking the model (optimize)".
std::string phases_text(const HiveStatus& s) {
  std::string out;
  for (const auto& a : s.agents) {
    std::string what = a.done ? "" : a.waiting ? "waits for a GPU verdict" : a.phase;
    if (!what.empty()) out += fmt::format("{}{} {}", out.empty() ? "" : "; ", a.name, what);
  }
  return out;
}

// Live progress: on a terminal the status block is redrawn in place under the scrolling event lines;
// otherwise the event lines are printed (one per candidate, switch, stop), and when nothing was printed for
// 30 s a heartbeat line says how far the run is and what each agent does.
class Progress {
 public:
  Progress(std::string title, bool quiet) : title_(std::move(title)), tty_(::isatty(1)), quiet_(quiet) {}
  void update(const HiveStatus& s) {
    if (quiet_) return;
    std::string out;
    if (tty_ && drawn_ > 0) out += fmt::format("\x1b[{}F\x1b[J", drawn_);
    for (auto& l : s.lines) out += l + "\n";
    if (!s.lines.empty()) last_line_s_ = s.elapsed_s;
    if (tty_) {
      auto block = status_block(s);
      drawn_ = static_cast<int>(std::count(block.begin(), block.end(), '\n'));
      out += block;
    } else if (s.elapsed_s - last_line_s_ >= 30) {
      const std::string now = phases_text(s);
      out += fmt::format("[{:6.1f}s] {}{}\n", s.elapsed_s, budget_text(s), now.empty() ? "" : "; " + now);
      last_line_s_ = s.elapsed_s;
    }
    std::cout << out << std::flush;
  }
  std::string status_block(const HiveStatus& s) const {
    std::string b;
    double busy = 0;
    for (auto& sl : s.slots) busy += sl.busy_s;
    b += fmt::format(
        "── {}  {:.0f}s  {}  leader {}  backups {}  board {}  device busy {:.0f}%\n", title_, s.elapsed_s,
        budget_text(s),
        s.leader ? fmt::format("{} {} ({})", s.leader->id, ms(s.leader->time_s),
                               s.leader->score > 0 ? fmt::format("score {:.3f}", s.leader->score) : "no score")
                 : "-",
        s.backups, s.board_entries,
        s.elapsed_s > 0 && !s.slots.empty() ? 100 * busy / (s.elapsed_s * static_cast<double>(s.slots.size())) : 0.0);
    for (auto& a : s.agents)
      b += fmt::format(
          "   {:<3} {:<14} {:<28} tries {:>3}  leader {:>2} backup {:>2} rejected {:>2} error {:>2}  best {}{}\n",
          a.name, a.kind.substr(0, 14), a.strategy.substr(0, 28), a.attempts, a.leaders, a.backups, a.rejected,
          a.errors, a.best_time_s ? ms(*a.best_time_s) : "-", agent_state(a));
    return b;
  }
  void finish() {
    if (tty_ && drawn_ > 0) std::cout << fmt::format("\x1b[{}F\x1b[J", drawn_) << std::flush;
    drawn_ = 0;
  }

 private:
  static std::string agent_state(const AgentStatus& a) {
    if (!a.failure.empty()) return "  (failed: " + a.failure.substr(0, 80) + ")";
    if (a.done) return "  (done)";
    if (a.waiting) return "  (waits for a GPU verdict)";
    std::string s = a.phase.empty() ? "" : "  " + a.phase;
    if (!a.base.empty()) s += "  (from " + a.base + ")";
    return s;
  }
  std::string title_;
  bool tty_, quiet_;
  int drawn_ = 0;
  double last_line_s_ = 0;
};

// --resume RUN: the run's recorded options (stored), its task, and its backend and seed unless given again. False
// (said on stderr) when RUN has no run database.
bool read_resumed(HiveCli& h, nlohmann::json& stored, std::filesystem::path& run_dir, std::string& task_dir) {
  run_dir = h.resume;
  if (!std::filesystem::exists(run_dir / "run.db")) {
    std::cerr << "khive optimize: --resume " << run_dir.string() << ": no run.db there\n";
    return false;
  }
  if (auto why = run_db_problem(run_dir / "run.db")) {
    std::cerr << "khive optimize: --resume " << run_dir.string() << ": its run.db " << *why
              << " (nothing was changed; its events.jsonl still holds the run: `khive export " << run_dir.string()
              << "`)\n";
    return false;
  }
  RunStore db(run_dir / "run.db");
  stored = nlohmann::json::parse(db.meta("options").value_or("{}"), nullptr, false);
  if (!stored.is_object()) stored = nlohmann::json::object();
  task_dir = resolve_run_task(run_dir, task_dir,
                              "give the task directory first: khive optimize TASK --resume " + run_dir.string())
                 .string();
  if (h.backend.empty()) h.backend = db.meta("backend").value_or("");
  if (!h.seed) h.seed = std::stoull(db.meta("seed").value_or("0"));
  return true;
}

// Who makes the goldens when the task has no native reference on this backend: its PyTorch reference (the judge
// runs it in a Python executor), which needs torch. Empty when the run can go on, else why it cannot.
std::string golden_source_problem(const Task& task, Backend backend, bool quiet) {
  if (task.reference_for(backend)) return "";
  std::string why = " and no PyTorch reference (definition.json: reference)";
  if (!task.pytorch_reference.empty()) {
    try {
      const TorchPython& tp = torch_python();
      if (!quiet)
        std::cout << fmt::format(
            "goldens: the task's PyTorch reference (torch {}, {}); no native {} reference, so the first accepted "
            "candidate is the first leader\n",
            tp.torch_version, tp.executable, backend_name(backend));
      return "";
    } catch (const std::exception& e) {
      why = std::string("; its PyTorch reference would make the goldens, but ") + e.what();
    }
  }
  return fmt::format("task {} has no {} reference (definition.json: khive.reference.{}){}", task.name,
                     backend_name(backend), backend_name(backend), why);
}

// What a run is started with: each option as given now, else as the resumed run was started (stored), else its
// default; and the run's meta that records them for a later --resume.
struct RunSettings {
  std::vector<std::string> specs;  // agent specs, cycled over n agents
  int n = 0;
  HiveOptions o;
  InputSecret input_secret;  // every input's secret (never shown to agents), kept so a resume reuses goldens
  double time_cap = 0, timeout = 0;
  int seeds = 0;
};

RunSettings run_settings(HiveCli& h, const nlohmann::json& stored, const Task& task,
                         const std::filesystem::path& run_dir, const std::string& perf_pattern) {
  namespace fs = std::filesystem;
  auto given = [&](const char* name) { return h.optimize->count(name) > 0; };
  auto pick = [&](const char* name, auto cur, const char* key) {
    using T = decltype(cur);
    if (given(name) || !stored.contains(key)) return cur;
    return stored[key].get<T>();
  };
  RunSettings rs;
  rs.specs = h.agents;
  if (rs.specs.empty() && stored.contains("agents")) rs.specs = stored["agents"].get<std::vector<std::string>>();
  if (rs.specs.empty()) rs.specs = {"tuner"};
  rs.n = given("--agents") ? h.n_agents : stored.value("n_agents", 0);
  if (rs.n <= 0) rs.n = static_cast<int>(rs.specs.size());
  HiveOptions& o = rs.o;
  o.budget_candidates = pick("--budget-candidates", h.budget_candidates, "budget_candidates");
  o.budget_time_s = pick("--budget-time", h.budget_time, "budget_time_s");
  o.budget_tokens = pick("--budget-tokens", h.budget_tokens, "budget_tokens");
  o.budget_cost_usd = pick("--budget-cost", h.budget_cost, "budget_cost_usd");
  o.plateau = pick("--plateau", h.plateau, "plateau");
  o.prebuild_jobs = pick("--prebuild", h.prebuild, "prebuild");
  o.board_capacity = pick("--board-capacity", h.board_capacity, "board_capacity");
  o.board = !pick("--no-board", h.no_board, "no_board");
  o.max_backups = pick("--max-backups", h.max_backups, "max_backups");
  o.max_backups_per_family = pick("--backups-per-family", h.per_family, "backups_per_family");
  if (!h.seed) h.seed = (static_cast<uint64_t>(std::random_device{}()) & 0xffffffffu) << 8;
  o.seed = h.seed;
  o.resume = !h.resume.empty();
  o.run_dir = o.resume ? run_dir
                       : (h.out.empty() ? fs::path(".khive/runs") / (task.name + "-" + timestamp()) : fs::path(h.out));
  o.external_stop = &interrupt_requested();
  rs.input_secret = run_input_secret(stored);
  rs.time_cap = pick("--time-cap", h.time_cap, "time_cap_s");
  rs.timeout = pick("--timeout", h.timeout, "timeout_s");
  rs.seeds = pick("--seeds", h.seeds, "seeds");
  // A resumed run keeps its warm start unless given again (points it already tried are not proposed twice).
  if (h.warm_start.empty() && stored.is_object() && stored.contains("warm_start") && stored["warm_start"].is_array())
    for (const auto& w : stored["warm_start"])
      if (w.is_string()) h.warm_start.push_back(w.get<std::string>());
  o.meta = {{"agents", rs.specs},
            {"n_agents", rs.n},
            {"budget_candidates", o.budget_candidates},
            {"budget_time_s", o.budget_time_s},
            {"budget_tokens", o.budget_tokens},
            {"budget_cost_usd", o.budget_cost_usd},
            {"plateau", o.plateau},
            {"prebuild", o.prebuild_jobs},
            {"board_capacity", o.board_capacity},
            {"no_board", !o.board},
            {"max_backups", o.max_backups},
            {"backups_per_family", o.max_backups_per_family},
            {"time_cap_s", rs.time_cap},
            {"timeout_s", rs.timeout},
            {"seeds", rs.seeds},
            {"perf_workloads", perf_pattern},
            {"warm_start", h.warm_start},
            {"input_secret", rs.input_secret.hex()}};
  return rs;
}

// After the hive: the summary, the best kernel and the report, and the exit code that says how the run ended.
int report_run(const HiveResult& r, const std::filesystem::path& run_dir, Backend backend, Progress& progress,
               bool quiet) {
  progress.finish();
  if (!quiet) std::cout << progress.status_block(r.status);
  auto report = write_report(run_dir);
  std::cout << "\n" << summary_text(run_dir);
  auto best = run_dir / ("best." + backend_ext(backend));
  if (std::filesystem::exists(best)) std::cout << fmt::format("best kernel: {}\n", best.string());
  std::cout << fmt::format("report: {}\n", report.string());
  if (r.status.all_agents_failed()) {
    std::cerr << "khive optimize: no agent could work, so the run tried nothing new:\n";
    for (const auto& a : r.status.agents) std::cerr << fmt::format("  {} ({}): {}\n", a.name, a.kind, a.failure);
    std::cerr << fmt::format(
        "fix what each line names (a provider's base_url, key or server; an agent that fits the task), then: "
        "khive optimize --resume {}\n",
        run_dir.string());
    return exit_code::usage;
  }
  if (r.status.stop_reason.rfind("paused:", 0) == 0) {
    std::cout << r.status.stop_reason << "\n";
    return exit_code::paused;  // candidates await GPU evaluation (docs/hive.md)
  }
  if (interrupt_requested().load()) {
    std::cout << fmt::format("interrupted; what was recorded is kept: khive optimize --resume {}\n", run_dir.string());
    return exit_code::interrupted;
  }
  // A run that judged nothing (no leader, no accepted reference) did not optimize: every evaluation was a harness
  // error (issue 24: a task the judge could not lay out ended the run with exit 0 and no leader). Exit 2, with why.
  if (!r.leader && r.reference_id.empty()) {
    std::vector<std::string> why;
    try {
      for (const auto& c : load_run_records(run_dir, false).candidates)
        if (c.standing == Standing::error && !c.message.empty() &&
            std::find(why.begin(), why.end(), c.message) == why.end() && why.size() < 3)
          why.push_back(c.message);
    } catch (const std::exception& e) {
      why.push_back(e.what());
    }
    std::cerr << "khive optimize: nothing could be evaluated (no leader, and the task's reference was never measured)"
              << (why.empty() ? std::string(".") : std::string(":")) << "\n";
    for (const auto& w : why) std::cerr << "  " << w << "\n";
    return exit_code::usage;
  }
  return exit_code::ok;
}

// `khive optimize --replay RECORDING`: the hive and its agents as in any run, every candidate answered from a run
// recorded on a GPU (hive/recorded_evaluator.hpp) instead of by the guard: the search, the leader / backup / plateau
// rules and the dispatcher replayed on real measurements, on any machine. The task, backend and timed workloads are
// the recording's, and so are the seed and the run's options unless given again; the run directory is an ordinary
// run's. A search that leaves what was recorded gets "not recorded" errors, and max_harness_errors of them in a row
// end the run (its summary says so, and the last line counts them).
int run_replay(HiveCli& h) {
  namespace fs = std::filesystem;
  if (!h.resume.empty()) {
    std::cerr << "khive optimize: --replay starts a new run; --resume continues one (give one of them)\n";
    return exit_code::usage;
  }
  Recording rec;
  try {
    rec = load_recording(h.replay);
  } catch (const std::exception& e) {
    std::cerr << "khive optimize: --replay: " << e.what() << "\n";
    return exit_code::usage;
  }
  const auto backend = parse_backend(rec.backend);  // load_recording accepts only cpu or cuda
  if (!h.backend.empty() && h.backend != rec.backend) {
    std::cerr << fmt::format(
        "khive optimize: --backend {}: the recording {} was made on {} (a replay runs on its backend)\n", h.backend,
        h.replay, rec.backend);
    return exit_code::usage;
  }
  if (h.optimize->count("--perf-workloads") > 0 && h.perf_workloads != rec.perf_workloads) {
    std::cerr << fmt::format(
        "khive optimize: --perf-workloads '{}': the recording timed '{}' and a replay times the same\n",
        h.perf_workloads, rec.perf_workloads);
    return exit_code::usage;
  }
  // The recording names its task relative to the repository: here if it is there, else khive's own source tree.
  const fs::path root = fs::exists(rec.task_dir) ? fs::current_path() : fs::path(KHIVE_SOURCE_DIR);
  Task task;
  std::optional<RecordedEvaluator> ev;
  try {
    task = load_recorded_task(rec, root);
    if (!h.task.empty() && load_task(h.task).name != task.name)
      throw std::runtime_error(
          fmt::format("TASK {} is not the recording's task {} ({})", h.task, task.name, rec.task_dir));
    RecordedOptions ro;
    ro.model_composites = h.model_composites;
    ev.emplace(task, *backend, rec, ro);
  } catch (const std::exception& e) {
    std::cerr << "khive optimize: --replay " << h.replay << ": " << e.what() << "\n";
    return exit_code::usage;
  }
  if (h.optimize->count("--seed") == 0)
    h.seed = rec.seed;  // each agent gets the seed its index had in the recorded run
  // The recorded run's options (agents, budgets, plateau, backups) unless given again, as a resumed run keeps its own.
  RunSettings rs =
      run_settings(h, rec.options.is_object() ? rec.options : nlohmann::json::object(), task, {}, rec.perf_workloads);
  HiveOptions& o = rs.o;
  o.meta["replay"] = fs::absolute(rec.file).string();
  o.lock = std::make_shared<DirLock>(DirLock::acquire(o.run_dir, process_command_line()));
  // The tuner sees the templates the recording used: ones added to kernels/ since would change its strategies.
  auto agents = make_agents(rs.specs, rs.n, o.run_dir, {}, recorded_templates(rec));
  Progress progress(fmt::format("{} ({}, replayed)", task.name, backend_name(*backend)), h.quiet);
  o.on_update = [&](const HiveStatus& s) { progress.update(s); };
  InterruptGuard interrupts;  // Ctrl-C: stop cleanly (in-flight evaluations finish and are recorded)
  std::cout << fmt::format(
      "khive optimize {} on {}, replayed from {} ({}; {} candidates recorded): {} agent(s) [{}], seed {}, run "
      "directory {}\n",
      task.name, backend_name(*backend), h.replay, rec.device.empty() ? "device not recorded" : rec.device,
      rec.candidates.size(), rs.n, fmt::join(rs.specs, ", "), o.seed, o.run_dir.string());
  Hive hive(task, *backend, std::move(agents), *ev, o);
  HiveResult r = hive.run();
  const int rc = report_run(r, o.run_dir, *backend, progress, h.quiet);
  const auto st = ev->stats();
  std::cout << fmt::format(
      "replay: {} answered from the recording ({} by source hash, {} by template point, {} modeled), {} not "
      "recorded{}\n",
      st.by_hash + st.by_point + st.modeled, st.by_hash, st.by_point, st.modeled, st.unrecorded,
      st.unrecorded ? fmt::format(" (the search left the recording: first {})", st.unrecorded_keys.front()) : "");
  return rc;
}

int run_optimize(HiveCli& h) {
  if (!h.replay.empty()) return run_replay(h);
  nlohmann::json stored = nlohmann::json::object();  // options of the resumed run; empty for a new one
  std::filesystem::path run_dir;
  std::string task_dir = h.task;
  if (!h.resume.empty() && !read_resumed(h, stored, run_dir, task_dir)) return 2;
  if (task_dir.empty()) {
    std::cerr << "khive optimize: give a TASK directory (or --resume RUN)\n";
    return 2;
  }
  auto task = load_task(task_dir);
  Backend backend = pick_backend(h.backend);
  // --perf-workloads: a resumed run keeps the timed workloads it started with (its times are over those).
  std::string perf_pattern = stored.value("perf_workloads", std::string());
  if (h.optimize->count("--perf-workloads") > 0) {
    if (!h.resume.empty() && h.perf_workloads != perf_pattern) {
      std::cerr << fmt::format(
          "khive optimize: --perf-workloads '{}': the resumed run {} was started with '{}' and keeps it (its times are "
          "over those workloads)\n",
          h.perf_workloads, run_dir.string(), perf_pattern);
      return 2;
    }
    perf_pattern = h.perf_workloads;
  }
  std::vector<std::string> kept;
  if (std::string err = narrow_perf_workloads(task, perf_pattern, backend, &kept); !err.empty()) {
    std::cerr << "khive optimize: " << err << "\n";
    return 2;
  }
  if (!kept.empty() && !h.quiet)
    std::cout << fmt::format("timed workloads ({} of the task's): {}\n", kept.size(), fmt::join(kept, ", "));
  if (std::string why = golden_source_problem(task, backend, h.quiet); !why.empty()) {
    std::cerr << "khive optimize: " << why << "\n";
    return 2;
  }
  RunSettings rs = run_settings(h, stored, task, run_dir, perf_pattern);
  HiveOptions& o = rs.o;
  std::vector<std::map<std::string, std::string>> warm;
  try {
    warm = warm_start_points(h.warm_start);
  } catch (const std::exception& e) {
    std::cerr << "khive optimize: --warm-start: " << e.what() << "\n";
    return 2;
  }

  // The run directory's lock before anything writes under it (agents keep transcripts there).
  o.lock = std::make_shared<DirLock>(DirLock::acquire(o.run_dir, process_command_line()));
  EvalOptions eo = hive_eval_options(backend, o.seed, rs.input_secret, rs.seeds, rs.time_cap, rs.timeout);
  std::vector<std::string> slots;
  if (backend == Backend::cuda) slots = visible_gpu_slots();
  // Models here, GPU there: without a visible GPU a CUDA run builds its candidates here and leaves them
  // for `khive evaluate-pending` (docs/hive.md). --defer-eval forces it (also on the CPU backend, for tests).
  o.defer_eval = h.defer_eval || (backend == Backend::cuda && slots.empty());
  if (o.defer_eval && !h.defer_eval && !h.quiet)
    std::cout << "no GPU visible: evaluation deferred (candidates are built here and run by `khive evaluate-pending` "
                 "on a GPU)\n";
  GuardEvaluator ev(task, backend, eo, slots);

  auto agents = make_agents(rs.specs, rs.n, o.run_dir, warm);
  Progress progress(fmt::format("{} ({})", task.name, backend_name(backend)), h.quiet);
  o.on_update = [&](const HiveStatus& s) { progress.update(s); };
  InterruptGuard interrupts;  // Ctrl-C: stop cleanly (in-flight evaluations finish and are recorded)
  std::cout << fmt::format("khive optimize {} on {}: {} agent(s) [{}], run directory {}{}\n", task.name,
                           backend_name(backend), rs.n, fmt::join(rs.specs, ", "), o.run_dir.string(),
                           o.resume ? " (resumed)" : "");
  Hive hive(task, backend, std::move(agents), ev, o);
  HiveResult r = hive.run();
  return report_run(r, o.run_dir, backend, progress, h.quiet);
}

}  // namespace

void add_hive_commands(CLI::App& app, HiveCli& h) {
  auto* op = app.add_subcommand(
      "optimize", "Run the hive on a task: agents propose, the guard decides, the fastest correct kernel leads");
  h.optimize = op;
  op->add_option("task", h.task, "task directory (optional with --resume)");
  op->add_option("--agent", h.agents,
                 "agent spec, repeatable: tuner | replay:DIR | llm:CONFIG | cmd:COMMAND (default: tuner)");
  op->add_option("--agents", h.n_agents, "number of agents (specs are dealt round robin; default: one per --agent)")
      ->check(int_range(1, 256));
  op->add_option("--budget-candidates", h.budget_candidates, "stop after this many evaluated candidates (0 = no limit)")
      ->check(int_range(0, 1000000000));
  op->add_option("--budget-time", h.budget_time, "stop after this many seconds (0 = no limit)")->check(non_negative());
  op->add_option("--budget-tokens", h.budget_tokens, "stop when the agents used this many model tokens (0 = no limit)")
      ->check(int_range(0, 1000000000000000));
  op->add_option("--budget-cost", h.budget_cost, "stop when the agents spent this many USD (0 = no limit)")
      ->check(non_negative());
  op->add_option("--plateau", h.plateau,
                 "evaluated candidates in a row without a new leader before an agent switches strategy")
      ->check(int_range(1, 100000));
  op->add_option("--prebuild", h.prebuild,
                 "build this many proposals ahead at a time, the ones the tuner would try next, while verdicts are "
                 "awaited (0 = off; default: the spare cores on cuda, at most 8, and 0 on cpu)")
      ->check(int_range(0, 256));
  op->add_option("--board-capacity", h.board_capacity,
                 "keep at most K board entries, evicting the least informative (0 = unlimited)")
      ->check(int_range(0, 1000000000));
  op->add_flag("--no-board", h.no_board, "no shared board (ablation)");
  op->add_option("--max-backups", h.max_backups, "backups kept (ranked, diverse)")->check(int_range(0, 1000));
  op->add_option(
        "--backups-per-family", h.per_family,
        "at most this many backups per family (a template, for template-made kernels; else the strategy family)")
      ->check(int_range(1, 1000));
  op->add_option("--out", h.out, "run directory (default .khive/runs/TASK-TIMESTAMP)");
  op->add_option("--resume", h.resume, "continue the run in this directory without re-evaluating its candidates");
  op->add_option("--backend", h.backend, "cpu or cuda (default: cuda when a GPU is present)")
      ->check(khive::backend_value());
  op->add_option("--seed", h.seed, "seed base of the run (inputs, agents); default random, recorded")
      ->check(seed_value());
  op->add_option("--seeds", h.seeds, "fresh correctness seeds per workload")->check(int_range(1, 100));
  op->add_option(
      "--warm-start", h.warm_start,
      "earlier run directory, repeatable: the tuner proposes its fastest accepted points first (where they apply)");
  op->add_option("--perf-workloads", h.perf_workloads,
                 "time only the perf workloads whose uuid matches this regex (every correctness check still runs)");
  op->add_option("--time-cap", h.time_cap, "timing budget per workload, seconds (0 = 1 on cpu, 2 on cuda)")
      ->check(non_negative());
  op->add_option(
        "--timeout", h.timeout,
        "the longest one call of a kernel (or of the reference) may take, seconds (0 = 60 on cpu, 300 on cuda)")
      ->check(non_negative());
  op->add_flag("--quiet", h.quiet, "no live progress, only the summary");
  op->add_option(
      "--replay", h.replay,
      "a run recorded on a GPU (tests/recordings/*.json): every candidate answered from it, not by the guard "
      "(no GPU needed; task, backend, seed and options are the recording's; deterministic with --agents 1; "
      "docs/hive.md)");
  op->add_flag(
      "--model-composites", h.model_composites,
      "--replay: a per-shape composite of recorded points gets each point's recorded medians (modeled, not measured)");
  op->add_flag("--defer-eval", h.defer_eval,
               "build candidates here, leave running them to `khive evaluate-pending` on a GPU (automatic on cuda "
               "without a GPU)");

  h.board = app.add_subcommand("board", "Print the shared board of a run");
  h.board->add_option("run", h.run, "run directory")->required();
  h.board->add_flag("--all", h.all, "include evicted entries");
  h.report = app.add_subcommand("report", "Rebuild RUN/report.html from the run database and print the summary");
  h.report->add_option("run", h.run, "run directory")->required();
  h.report->add_option("--out", h.report_out,
                       "write the report there instead of RUN/report.html (a run directory that is read-only)");
  h.rescore = app.add_subcommand(
      "rescore",
      "Recompute a run's scores against T_b as the guard defines it now (PyTorch where the suite has numbers) with a "
      "given hardware profile; the run is not changed");
  h.rescore->add_option("run", h.run, "run directory")->required();
  h.rescore
      ->add_option("--profile", h.profile,
                   "hardware profile JSON of the device the run was timed on (khive calibrate --out)")
      ->required();
  h.rescore->add_option("--task", h.task_dir, "the run's task directory (default: as the run recorded it)");
  h.rescore->add_flag("--json", h.json, "print JSON instead of the table");
  h.export_run = app.add_subcommand(
      "export",
      "Print a run's meta and candidates as JSON (schema khive.run-export/1), from run.db or else events.jsonl");
  h.export_run->add_option("run", h.run, "run directory")->required();
  add_solution_export_options(h.export_run, h.solution_export);
  add_pending_command(app, h);
}

// `khive rescore RUN --profile P`: the leader's and every accepted candidate's recorded and recomputed scores.
static int run_rescore(const HiveCli& h) {
  Rescore r;
  try {
    const HardwareProfile prof = load_profile(h.profile);
    r = rescore_run(h.run, resolve_run_task(h.run, h.task_dir), prof);
  } catch (const std::exception& e) {
    std::cerr << "khive rescore: " << e.what() << "\n";
    return 2;
  }
  auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  const RescoredCandidate* lead = r.find(r.leader);
  if (h.json) {
    nlohmann::json j = {{"task", r.task},
                        {"device", r.device},
                        {"pytorch_file", r.pytorch_file},
                        {"reference", r.reference},
                        {"leader", r.leader},
                        {"leader_recorded", lead ? opt(lead->recorded) : nullptr},
                        {"leader_rescored", lead ? opt(lead->rescored) : nullptr}};
    for (const auto& [uuid, tb] : r.t_b)
      j["workloads"][uuid] = {{"t_b_s", tb}, {"t_b_label", r.t_b_label[uuid]}, {"t_sol_s", r.t_sol[uuid]}};
    for (const auto& c : r.candidates)
      j["candidates"].push_back({{"id", c.id},
                                 {"verdict", c.standing},
                                 {"time_s", c.time_s},
                                 {"recorded", opt(c.recorded)},
                                 {"rescored", opt(c.rescored)}});
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  auto f = [](const std::optional<double>& v) { return v ? fmt::format("{:.3f}", *v) : std::string("-"); };
  std::cout << fmt::format(
      "{} on {}: T_b from {}\n", r.task, r.device,
      r.pytorch_file.empty() ? "the reference (no PyTorch numbers for this device)" : r.pytorch_file);
  for (const auto& [uuid, tb] : r.t_b)
    std::cout << fmt::format("  {}: T_b {:.4g} us ({}), T_sol {:.4g} us\n", uuid, tb * 1e6, r.t_b_label[uuid],
                             r.t_sol[uuid] * 1e6);
  std::cout << fmt::format("{:8} {:8} {:>12} {:>9} {:>9}\n", "id", "verdict", "time", "recorded", "rescored");
  for (const auto& c : r.candidates)
    std::cout << fmt::format("{:8} {:8} {:>9.4g} us {:>9} {:>9}\n", c.id, standing_name(c.standing), c.time_s * 1e6,
                             f(c.recorded), f(c.rescored));
  if (lead)
    std::cout << fmt::format("leader {}: score {} (recorded {})\n", r.leader, f(lead->rescored), f(lead->recorded));
  return 0;
}

int run_hive_command(HiveCli& h) {
  if (h.evaluate_pending && *h.evaluate_pending) return run_evaluate_pending(h);
  if (*h.board) {
    std::cout << board_text(h.run, h.all);
    return 0;
  }
  if (*h.rescore) return run_rescore(h);
  if (*h.export_run) {
    if (h.solution_export.solution) return run_solution_export(h.run, h.solution_export);
    // A run cut short before its reference was measured is still exported (reference null): readers say so.
    RunRecords rr;
    try {
      rr = load_run_records(h.run, /*require_reference=*/false);
    } catch (const std::exception& e) {
      std::cerr << "khive export: " << e.what() << "\n";
      return 2;
    }
    // Labels and messages come from agents: invalid UTF-8 is replaced rather than failing the export.
    std::cout << run_records_json(rr, h.run).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return 0;
  }
  if (*h.report) {
    std::filesystem::path p;
    if (h.report_out.empty()) {
      try {
        p = write_report(h.run);
      } catch (const std::exception& e) {
        std::error_code ec;
        if (::access(h.run.c_str(), W_OK) == 0 || !std::filesystem::is_directory(h.run, ec)) throw;
        throw std::runtime_error(std::string(e.what()) +
                                 "; the run directory is not writable: give the report a place with --out FILE");
      }
    } else {
      p = h.report_out;
      write_file_atomic(p, report_html(h.run));
    }
    std::cout << summary_text(h.run) << "report: " << p.string() << "\n";
    return 0;
  }
  if (!h.out.empty() && !h.resume.empty()) {
    std::cerr << "khive optimize: --out and --resume exclude each other (a resumed run stays in its directory)\n";
    return 2;
  }
  return run_optimize(h);
}

}  // namespace khive
