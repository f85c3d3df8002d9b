// khive: the command line.
//   khive tasks PATH                      list tasks
//   khive signature TASK [--backend B]    the exact khive_launch signature
//   khive eval TASK KERNEL [...]          the guard on one kernel (exit 0 accepted, 1 rejected, 2 error)
//   khive calibrate [--backend B]         measure this machine's ceilings and save a profile
//   khive build TASK KERNEL [--backend B] build only: diagnostics, kernel resources, symbol policy
//   khive bench SUITE [--kernels DIR]     reference, PyTorch, vendor and candidates of every task (docs/bench.md)
//   khive optimize TASK [...]             the hive: agents, board, leader; a run directory (docs/hive.md)
//   khive board RUN | khive report RUN    a run's board; rebuild its report.html
//   khive export RUN                      a run's meta and candidates as JSON (bench/*.py read runs through it)
//   khive cache [prune [--max-gb X] | clear]  cache sizes and cap; apply the size policy; remove everything
//   khive import kernelbench|flashinfer|solution ...  problems and solutions of other tools (import_cmd.cpp)
#include <csignal>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "khive/bench/bench.hpp"
#include "khive/build/symbol_policy.hpp"
#include "khive/cli/cache_cmd.hpp"
#include "khive/cli/conventions.hpp"
#include "khive/cli/hive_cmds.hpp"
#include "khive/cli/import_cmd.hpp"
#include "khive/eval/evaluate.hpp"
#include "khive/support/files.hpp"
#include "khive/support/load_watch.hpp"

namespace {

khive::Backend default_backend() {
#if defined(KHIVE_WITH_CUDA)
  // CUDA when a GPU is visible (nvidia-smi answers), else the CPU.
  khive::ProcessSpec p;
  p.argv = {"nvidia-smi", "-L"};
  p.timeout_s = 10;
  if (!khive::find_program("nvidia-smi").empty() && khive::run_process(p).ok()) return khive::Backend::cuda;
#endif
  return khive::Backend::cpu;
}

khive::Backend parse_backend_or_throw(const std::string& s) {
  if (s.empty()) return default_backend();
  auto b = khive::parse_backend(s);
  if (!b) throw CLI::ValidationError("--backend", "expected cpu or cuda, got '" + s + "'");
  return *b;
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"KernelHive: agents that make GPU kernels faster, judged by a deterministic guard"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("khive ") + KHIVE_VERSION);

  std::string path, task_dir, kernel, backend_s, profile, leader, out_path;
  bool json = false;
  int seeds = 3;
  uint64_t seed = 0;
  double timeout = 0, time_cap = 0;
  bool no_ref = false, no_base = false;

  auto* tasks = app.add_subcommand("tasks", "List the tasks under a directory");
  tasks->add_option("path", path, "a suite or task directory")->required();
  tasks->add_flag("--json", json, "machine-readable output");

  auto* sig = app.add_subcommand("signature", "Print the exact khive_launch signature of a task");
  sig->add_option("task", task_dir, "task directory")->required();
  sig->add_option("--backend", backend_s, "cpu or cuda (default: cuda when a GPU is present)");

  auto* ev = app.add_subcommand("eval", "Check and time one kernel through the guard");
  ev->add_option("task", task_dir, "task directory")->required();
  ev->add_option("kernel", kernel, "kernel source (.cpp for cpu, .cu for cuda)")->required();
  ev->add_option("--backend", backend_s, "cpu or cuda (default: from the kernel's extension)");
  ev->add_flag("--json", json, "print the JSON report (schema khive.eval/1, docs/eval-json.md)");
  ev->add_option("--out", out_path, "also write the JSON report to this file");
  ev->add_option("--seeds", seeds, "fresh correctness seeds per workload")->check(khive::int_range(1, 100));
  ev->add_option("--seed", seed, "fixed seed base (reproducible inputs); default: random");
  ev->add_option("--leader", leader, "A/B against this kernel: is the candidate a new leader or a backup?");
  ev->add_option("--profile", profile, "hardware profile JSON (default: saved calibration or builtin)");
  ev->add_option("--timeout", timeout, "the longest one call of the kernel (or of the reference) may take, seconds (0 = 60 on cpu, 300 on cuda)")
      ->check(khive::non_negative());
  ev->add_option("--time-cap", time_cap, "timing budget per workload, seconds (0 = 0.5 on cpu, 2 on cuda)")->check(khive::non_negative());
  std::string eval_perf;
  ev->add_option("--perf-workloads", eval_perf, "time only the perf workloads whose uuid matches this regex (as khive optimize)");
  ev->add_flag("--no-reference", no_ref, "do not time the reference");
  ev->add_flag("--no-baselines", no_base, "do not time the task's baselines");
  bool no_pytorch = false;
  ev->add_flag("--no-pytorch", no_pytorch, "T_b from the vendor baselines even where the suite has PyTorch numbers");

  // Build without running (no GPU needed for .cu): what a kernel author or an agent sees from the compiler.
  bool vendor = false;
  auto* bld = app.add_subcommand("build", "Build one kernel for a task (no run): diagnostics, resources, symbol policy");
  bld->add_option("task", task_dir, "task directory")->required();
  bld->add_option("kernel", kernel, "kernel source (.cpp for cpu, .cu for cuda)")->required();
  bld->add_option("--backend", backend_s, "cpu or cuda (default: from the kernel's extension)");
  bld->add_flag("--vendor", vendor, "build as a vendor baseline: cublas and cublasLt linked and allowed");
  bld->add_flag("--json", json, "machine-readable output");

  auto* cal = app.add_subcommand("calibrate", "Measure copy bandwidth and matrix rates; save a hardware profile");
  cal->add_option("--backend", backend_s, "cpu or cuda");
  cal->add_option("--out", out_path, "profile file (default: <cache>/profiles/<device>.json)");

  khive::BenchCommand bc;
  auto* bench = app.add_subcommand("bench", "Every task of a suite: reference, PyTorch, vendor baselines, candidates; a leaderboard");
  bench->add_option("suite", bc.suite, "suite directory (tasks/cutegen26)")->required();
  bench->add_option("--kernels", bc.kernels, "candidates: DIR/<task name or task directory name>/*.cu (cuda) or *.cpp (cpu)");
  bench->add_option("--backend", backend_s, "cpu or cuda (default: cuda when a GPU is present)");
  bench->add_flag("--json", bc.json, "print bench.json (schema khive.bench/1) instead of the final table");
  bench->add_option("--out", bc.out, "directory for bench.json and bench.md (default .khive/bench/<suite>-<date>)");
  bench->add_option("--tasks", bc.tasks, "only these tasks (comma-separated names)");
  bench->add_option("--seeds", bc.seeds, "fresh correctness seeds per workload")->check(khive::int_range(1, 100));
  bench->add_option("--seed", bc.seed, "fixed seed base (default: random, one per bench run)");
  bench->add_option("--profile", bc.profile, "hardware profile JSON (default: saved calibration or builtin)");
  bench->add_option("--timeout", bc.timeout, "the longest one call of a kernel may take, seconds");
  bench->add_option("--time-cap", bc.time_cap, "timing budget per workload, seconds");
  bench->add_option("--build-jobs", bc.build_jobs, "parallel builds before timing (default: the number of cores)");
  bench->add_flag("--no-pytorch", bc.no_pytorch, "ignore the suite's PyTorch numbers (T_b from the vendor baselines)");
  bench->add_flag("--ab-vendor", bc.ab_vendor, "also time each candidate interleaved with each vendor baseline in one process (guard check 11)");
  bench->add_option("--perf-workloads", bc.perf_workloads, "time only the perf workloads whose uuid matches this regex (checks stay)");

  khive::HiveCli hive_cli;   // optimize, board, report (hive_cmds.cpp)
  khive::add_hive_commands(app, hive_cli);
  khive::CacheCli cache_cli;  // cache, cache prune, cache clear (cache_cmd.cpp)
  khive::add_cache_command(app, cache_cli);
  khive::ImportCli import_cli;  // import kernelbench|flashinfer|solution (import_cmd.cpp)
  khive::add_import_command(app, import_cli);

  khive::HelpCli help_cli = khive::finish_cli(app);   // help CMD, --arch, defaults in help, exit codes (docs/cli.md)
  if (int rc = khive::parse_cli(app, argc, argv); rc >= 0) return rc;

  try {
    if (help_cli.selected()) return khive::run_help(app, help_cli);
    if (hive_cli.selected()) return khive::run_hive_command(hive_cli);
    if (cache_cli.selected()) return khive::run_cache_command(cache_cli);
    if (import_cli.selected()) return khive::run_import_command(import_cli);
    if (*tasks) {
      auto found = khive::find_tasks(path);
      nlohmann::json arr = nlohmann::json::array();
      int bad = 0;
      for (auto& d : found) {
        try {
          auto t = khive::load_task(d);
          int corr = 0, perf = 0;
          for (auto& w : t.workloads) {
            corr += w.checks_correctness();
            perf += w.is_perf();
          }
          if (json)
            arr.push_back({{"name", t.name}, {"dir", d.string()}, {"op_type", t.op_type}, {"correctness_workloads", corr},
                           {"perf_workloads", perf}, {"cuda_reference", t.reference_cuda.has_value()},
                           {"cpu_reference", t.reference_cpu.has_value()}, {"baselines", t.baselines.size()}});
          else
            fmt::print("{:<28} {:<12} {:>3} correctness / {:>2} perf workloads  refs: {}{}  {}\n", t.name, t.op_type, corr, perf,
                       t.reference_cpu ? "cpu " : "", t.reference_cuda ? "cuda" : "", d.string());
        } catch (const std::exception& e) {
          ++bad;
          if (json) arr.push_back({{"dir", d.string()}, {"error", e.what()}});
          else fmt::print("{:<28} ERROR {}\n", d.filename().string(), e.what());
        }
      }
      if (json) std::cout << arr.dump(2) << "\n";
      if (found.empty()) {
        std::cerr << "khive: no task (a directory with definition.json) under " << path << "\n";
        return 2;
      }
      return bad ? 2 : 0;
    }
    if (*bld) {
      auto t = khive::load_task(task_dir);
      std::filesystem::path src = kernel;
      khive::Backend b = backend_s.empty() ? (src.extension() == ".cu" ? khive::Backend::cuda : khive::Backend::cpu)
                                           : parse_backend_or_throw(backend_s);
      if (!std::filesystem::is_regular_file(src)) {
        std::cerr << "khive build: " << kernel << ": no such file\n";
        return 2;
      }
      if (vendor)
        for (const char* lib : {"cublas", "cublasLt"})
          if (!t.policy.allows(lib)) t.policy.libraries.emplace_back(lib);
      khive::BuildOptions bo;
      bo.backend = b;
      auto r = khive::build_candidate(t, src, bo);
      std::vector<khive::SymbolViolation> bad;
      if (r.ok) bad = khive::scan_symbols(r.library, t.policy, b);
      if (json) {
        nlohmann::json res = nlohmann::json::array(), viol = nlohmann::json::array(), diags = nlohmann::json::array();
        for (auto& k : r.resources)
          res.push_back({{"kernel", k.kernel}, {"arch", k.arch}, {"registers", k.registers}, {"shared_bytes", k.shared_bytes},
                         {"spill_stores", k.spill_stores}, {"spill_loads", k.spill_loads}, {"advisories", k.advisories}});
        for (auto& v : bad) viol.push_back({{"symbol", v.symbol}, {"rule", v.rule}, {"imported", v.imported}});
        std::cout << nlohmann::json{{"ok", r.ok && bad.empty()}, {"built", r.ok}, {"summary", r.summary()},
                                    {"command", r.command}, {"log", r.log}, {"resources", res}, {"forbidden_symbols", viol}}
                         .dump(2)
                  << "\n";
      } else {
        std::cout << "build: " << r.summary() << "\n";
        if (!r.diagnostics.empty()) std::cout << khive::format_diagnostics(r.diagnostics, 20);
        for (auto& k : r.resources)
          std::cout << fmt::format("  {} {}: {} registers, {} B shared, spills {}/{} B{}\n", k.arch, k.kernel, k.registers,
                                   k.shared_bytes, k.spill_stores, k.spill_loads, k.wgmma_serialized ? ", wgmma serialized" : "");
        for (auto& v : bad) std::cout << fmt::format("forbidden: {} {} ({})\n", v.imported ? "calls" : "defines", v.symbol, v.rule);
      }
      return r.ok && bad.empty() ? 0 : 1;
    }
    if (*sig) {
      auto t = khive::load_task(task_dir);
      std::cout << khive::launch_signature(t, parse_backend_or_throw(backend_s)) << "\n";
      return 0;
    }
    if (*cal) {
      auto b = parse_backend_or_throw(backend_s);
      const std::string gpu_busy = b == khive::Backend::cuda ? khive::gpu_busy_warning() : "";
      khive::LoadWatch load;   // other work on the machine while it measures makes the ceilings too low
      khive::Job j;
      j.mode = "calibrate";
      j.backend = std::string(khive::backend_name(b));
      khive::JudgeOptions jo;
      jo.budget_s = 300;
      auto out = khive::launch_judge(j, jo);
      if (!out.result || !out.result->contains("profile")) {
        std::cerr << "khive calibrate: failed: "
                  << (out.result && out.result->contains("error") ? (*out.result)["error"].get<std::string>() : out.process.describe())
                  << "\n" << out.process.err << "\n";
        return 2;
      }
      for (const std::string& w : {gpu_busy, load.warning()})
        if (!w.empty()) std::cerr << "khive calibrate: warning: " << w << "\n";
      auto& prof = (*out.result)["profile"];
      std::string name = prof.value("name", "device");
      std::string safe = name;
      for (char& c : safe)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      std::filesystem::path dest = out_path.empty() ? khive::cache_root() / "profiles" / (safe + ".json") : std::filesystem::path(out_path);
      khive::write_file_atomic(dest, prof.dump(2));
      std::cout << prof.dump(2) << "\nsaved " << dest.string() << "\n";
      return 0;
    }
    if (*bench) {
      bc.backend = parse_backend_or_throw(backend_s);
      for (int i = 0; i < argc; ++i) bc.command_line += (i ? " " : "") + std::string(argv[i]);
      return khive::bench_command(bc);
    }
    if (*ev) {
      auto t = khive::load_task(task_dir);
      khive::EvalOptions o;
      if (backend_s.empty()) {
        std::string ext = std::filesystem::path(kernel).extension().string();
        o.backend = ext == ".cu" ? khive::Backend::cuda : khive::Backend::cpu;
      } else {
        o.backend = parse_backend_or_throw(backend_s);
      }
      if (std::string err = khive::narrow_perf_workloads(t, eval_perf, o.backend); !err.empty()) {
        std::cerr << "khive eval: " << err << "\n";
        return 2;
      }
      if (!std::filesystem::exists(kernel)) {
        std::cerr << "khive eval: " << kernel << ": no such file\n";
        return 2;
      }
      o.seeds = seeds;
      if (seed) o.seed = seed;
      if (!leader.empty()) o.leader = leader;
      if (!profile.empty()) o.profile = profile;
      if (timeout > 0) o.judge.timeout_s = timeout;
      else o.judge.timeout_s = o.backend == khive::Backend::cuda ? 300 : 60;
      if (time_cap > 0) o.timing.time_cap_s = time_cap;
      else if (o.backend == khive::Backend::cpu) o.timing.time_cap_s = 0.5;
      o.time_reference = !no_ref;
      o.time_baselines = !no_base;
      o.use_pytorch = !no_pytorch;
      auto r = khive::evaluate_kernel(t, std::filesystem::absolute(kernel), o);
      auto j = khive::report_json(r);
      if (!out_path.empty()) khive::write_file_atomic(out_path, j.dump(2));
      if (json) std::cout << j.dump(2) << "\n";
      else std::cout << khive::report_text(r);
      if (!r.harness_error.empty()) return 2;
      return r.accepted() ? 0 : 1;
    }
  } catch (const khive::TaskFormatError& e) {
    std::cerr << "khive: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "khive: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
