// `khive evaluate-pending RUN`: the GPU side of a deferred run (docs/hive.md, "Models here, GPU there").
// The run's candidates were built where the models run; here every awaiting one goes through the guard
// with the run's seed and options, against the leader of the time, and the verdicts land in run.db and
// events.jsonl. `khive optimize --resume RUN` then hands them to the agents.
#include <iostream>

#include <fmt/format.h>

#include "khive/cli/conventions.hpp"
#include "khive/cli/hive_cmds.hpp"
#include "khive/eval/guard_evaluator.hpp"
#include "khive/hive/hive.hpp"
#include "khive/numerics/inputs.hpp"
#include "khive/record/report.hpp"
#include "khive/record/store.hpp"

namespace khive {

namespace fs = std::filesystem;

fs::path resolve_run_task(const fs::path& run_dir, const std::string& given, const std::string& how) {
  if (!given.empty()) return given;
  // Opening a RunStore creates a database: a folder without one (a results folder that kept only its event log)
  // must not get an empty run.db by being looked at.
  if (!fs::is_regular_file(run_dir / "run.db"))
    throw std::runtime_error(
        fmt::format("{}: no run database to read the run's task from; {}", (run_dir / "run.db").string(), how));
  RunStore db(run_dir / "run.db", RunStore::Access::read_only);
  auto abs = db.meta("task_dir").value_or("");
  if (!abs.empty() && fs::exists(fs::path(abs) / "definition.json")) return abs;
  auto rel = db.meta("task_dir_from_run").value_or("");
  if (!rel.empty()) {
    auto p = (run_dir / rel).lexically_normal();
    if (fs::exists(p / "definition.json")) return p;
  }
  throw std::runtime_error(
      fmt::format("{}: the run's task is not here (recorded: '{}'{}); {}", (run_dir / "run.db").string(), abs,
                  rel.empty() ? std::string() : fmt::format(", relative to the run: '{}'", rel), how));
}

std::string narrow_perf_workloads(Task& task, const std::string& pattern, Backend backend,
                                  std::vector<std::string>* kept) {
  if (pattern.empty()) return "";
  try {
    auto k = select_perf_workloads(task, pattern, backend);
    if (kept) *kept = std::move(k);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

InputSecret run_input_secret(const nlohmann::json& stored) {
  if (stored.is_object() && stored.contains("input_secret")) {
    const auto& v = stored["input_secret"];
    if (v.is_string()) return InputSecret::from_hex(v.get<std::string>());
    if (v.is_number_unsigned() || v.is_number_integer()) return InputSecret::from_legacy(v.get<uint64_t>());
    throw std::invalid_argument("the run's meta: input_secret is neither 64 hex digits nor a number");
  }
  return InputSecret::random();
}

EvalOptions hive_eval_options(Backend backend, uint64_t seed, const InputSecret& input_secret, int seeds,
                              double time_cap, double timeout) {
  EvalOptions eo;
  eo.backend = backend;
  eo.seed = seed;
  // One secret per run: every evaluation of the run times the same (unpredictable) inputs, so goldens are made once.
  eo.input_secret = input_secret.hex();
  eo.seeds = seeds;
  eo.judge.timeout_s = timeout > 0 ? timeout : (backend == Backend::cuda ? 300 : 60);
  if (time_cap > 0) eo.timing.time_cap_s = time_cap;
  // CPU: 1 s per workload, so that check 11 (whose A/B stops at twice the cap) can reach its 10 pairs on
  // kernels of ~100 ms; with less, a slow leader can never be replaced.
  else if (backend == Backend::cpu)
    eo.timing.time_cap_s = 1.0;
  return eo;
}

void add_pending_command(CLI::App& app, HiveCli& h) {
  auto* ep = app.add_subcommand("evaluate-pending",
                                "Evaluate the candidates a deferred run left awaiting (on a machine with a GPU); then "
                                "resume it with optimize --resume");
  h.evaluate_pending = ep;
  ep->add_option("run", h.run, "run directory (made by khive optimize with deferred evaluation)")->required();
  ep->add_option("--task", h.task, "the task directory, when the recorded one is not found here");
  ep->add_option("--backend", h.backend, "cpu or cuda (must be the run's; default: the run's)")
      ->check(khive::backend_value());
  ep->add_flag("--quiet", h.quiet, "only the summary");
}

int run_evaluate_pending(HiveCli& h) {
  fs::path run_dir = h.run;
  if (!fs::exists(run_dir / "run.db")) {
    std::cerr << "khive evaluate-pending: " << run_dir.string() << ": no run.db there (expected a run directory)\n";
    return 2;
  }
  nlohmann::json stored;
  std::string backend_s;
  uint64_t seed = 0;
  {
    RunStore db(run_dir / "run.db");
    stored = nlohmann::json::parse(db.meta("options").value_or("{}"), nullptr, false);
    if (!stored.is_object()) stored = nlohmann::json::object();
    backend_s = db.meta("backend").value_or("");
    auto s = db.meta("seed").value_or("");
    if (s.empty()) {
      std::cerr << "khive evaluate-pending: " << (run_dir / "run.db").string()
                << ": meta 'seed' missing (not a khive run?)\n";
      return 2;
    }
    seed = std::stoull(s);
  }
  auto run_backend = parse_backend(backend_s);
  if (!run_backend) {
    std::cerr << fmt::format("khive evaluate-pending: {}: meta 'backend' is '{}', expected cpu or cuda\n",
                             (run_dir / "run.db").string(), backend_s);
    return 2;
  }
  if (!h.backend.empty() && h.backend != backend_s) {
    std::cerr << fmt::format("khive evaluate-pending: the run uses the {} backend, not {}\n", backend_s, h.backend);
    return 2;
  }
  Backend backend = *run_backend;
  auto task = load_task(resolve_run_task(run_dir, h.task));
  // The run's timed workloads, as optimize chose them.
  if (std::string err = narrow_perf_workloads(task, stored.value("perf_workloads", std::string()), backend);
      !err.empty()) {
    std::cerr << "khive evaluate-pending: " << (run_dir / "run.db").string() << ": " << err << "\n";
    return 2;
  }
  std::vector<std::string> slots;
  if (backend == Backend::cuda) {
    slots = visible_gpu_slots();
    if (slots.empty()) {
      std::cerr << "khive evaluate-pending: no GPU visible here (CUDA_VISIBLE_DEVICES / nvidia-smi); run it on the "
                   "machine with the GPU\n";
      return 2;
    }
  }
  EvalOptions eo = hive_eval_options(backend, seed, run_input_secret(stored), stored.value("seeds", 3),
                                     stored.value("time_cap_s", 0.0), stored.value("timeout_s", 0.0));
  GuardEvaluator ev(task, backend, eo, slots);
  HiveOptions o;
  o.run_dir = run_dir;
  o.lock = std::make_shared<DirLock>(DirLock::acquire(run_dir, process_command_line()));
  o.resume = true;
  o.seed = seed;
  o.max_backups = stored.value("max_backups", o.max_backups);
  o.max_backups_per_family = stored.value("backups_per_family", o.max_backups_per_family);
  if (!h.quiet)
    o.on_update = [](const HiveStatus& s) {
      for (auto& l : s.lines) std::cout << l << "\n";
    };
  Hive hive(task, backend, {}, ev, o);
  PendingSummary sum = hive.evaluate_pending();
  write_report(run_dir);

  auto ms = [](double s) { return s > 0 ? fmt::format("{:.4g} ms", s * 1e3) : std::string("-"); };
  std::cout << fmt::format("\nevaluate-pending {} ({} on {}): {} verdict(s) in {:.1f} s\n", run_dir.string(), task.name,
                           backend_name(backend), sum.verdicts.size(), sum.seconds);
  for (auto& v : sum.verdicts)
    std::cout << fmt::format("  {} {:<5} {:<22} {:<8} {:>12} {}{}\n", v.id, v.agent, v.label.substr(0, 22),
                             standing_name(v.standing), ms(v.time_s),
                             v.comparison                     ? comparison_brief(*v.comparison)
                             : v.standing == Standing::leader ? std::string("the first leader")
                                                              : v.check_text() + ": " + v.reason,
                             v.build_key_changed ? "  (rebuilt with another toolchain)" : "");
  if (sum.leader)
    std::cout << fmt::format("leader: {} ({}, {})\n", sum.leader->id, sum.leader->agent, ms(sum.leader->time_s));
  if (sum.errors > 0 || sum.remaining > 0) {
    std::cout << fmt::format(
        "{} harness error(s); {} candidate(s) still await evaluation: run evaluate-pending again\n", sum.errors,
        sum.remaining);
    return 2;
  }
  std::cout << fmt::format("next, where the models run: khive optimize --resume {}\n", run_dir.string());
  return 0;
}

}  // namespace khive
