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
#include <cctype>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <system_error>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "khive/cli/cache_cmd.hpp"
#include "khive/cli/conventions.hpp"
#include "khive/cli/hive_cmds.hpp"
#include "khive/cli/import_cmd.hpp"
#include "khive/compile/symbol_policy.hpp"
#include "khive/eval/evaluate.hpp"
#include "khive/suite/bench.hpp"
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

// The command line of the commands defined here (the others parse into their own *Cli structs).
struct Args {
  std::string path, task_dir, kernel, backend_s, profile, leader, out_path, eval_perf;
  bool json = false;
  int seeds = 3;
  uint64_t seed = 0;
  double timeout = 0, time_cap = 0;
  bool no_ref = false, no_base = false, no_pytorch = false, vendor = false;
  std::string pytorch_ruler;  // "judge" | "file"; empty: judge on cuda, file on cpu
  khive::BenchCommand bc;
  CLI::App *tasks = nullptr, *sig = nullptr, *ev = nullptr, *bld = nullptr, *cal = nullptr, *bench = nullptr;
};

void add_tasks_and_signature(CLI::App& app, Args& a) {
  a.tasks = app.add_subcommand("tasks", "List the tasks under a directory");
  a.tasks->add_option("path", a.path, "a suite or task directory")->required();
  a.tasks->add_flag("--json", a.json, "machine-readable output");

  a.sig = app.add_subcommand("signature", "Print the exact khive_launch signature of a task");
  a.sig->add_option("task", a.task_dir, "task directory")->required();
  a.sig->add_option("--backend", a.backend_s, "cpu or cuda (default: cuda when a GPU is present)")
      ->check(khive::backend_value());
}

void add_eval(CLI::App& app, Args& a) {
  auto* ev = a.ev = app.add_subcommand("eval", "Check and time one kernel through the guard");
  ev->add_option("task", a.task_dir, "task directory")->required();
  ev->add_option("kernel", a.kernel, "kernel source (.cpp for cpu, .cu for cuda)")->required();
  ev->add_option("--backend", a.backend_s, "cpu or cuda (default: from the kernel's extension)")
      ->check(khive::backend_value());
  ev->add_flag("--json", a.json, "print the JSON report (schema khive.eval/1, docs/eval-json.md)");
  ev->add_option("--out", a.out_path, "also write the JSON report to this file");
  ev->add_option("--seeds", a.seeds, "fresh correctness seeds per workload")->check(khive::int_range(1, 100));
  ev->add_option("--seed", a.seed, "fixed seed base (reproducible inputs); default: random")
      ->check(khive::seed_value());
  ev->add_option("--leader", a.leader, "A/B against this kernel: is the candidate a new leader or a backup?");
  ev->add_option("--profile", a.profile, "hardware profile JSON (default: saved calibration or builtin)");
  ev->add_option(
        "--timeout", a.timeout,
        "the longest one call of the kernel (or of the reference) may take, seconds (0 = 60 on cpu, 300 on cuda)")
      ->check(khive::non_negative());
  ev->add_option("--time-cap", a.time_cap, "timing budget per workload, seconds (0 = 0.5 on cpu, 2 on cuda)")
      ->check(khive::non_negative());
  ev->add_option("--perf-workloads", a.eval_perf,
                 "time only the perf workloads whose uuid matches this regex (as khive optimize)");
  ev->add_flag("--no-reference", a.no_ref, "do not time the reference");
  ev->add_flag("--no-baselines", a.no_base, "do not time the task's baselines");
  ev->add_flag("--no-pytorch", a.no_pytorch, "T_b from the vendor baselines even where the suite has PyTorch numbers");
  ev->add_option(
        "--pytorch-ruler", a.pytorch_ruler,
        "PyTorch's T_b: 'judge' (the task's PyTorch reference timed by the judge, as a kernel) or 'file' (the suite's "
        "baselines/pytorch-<device>.json); default: judge on cuda, file on cpu")
      ->check(CLI::IsMember({"judge", "file"}));
}

void add_build_and_calibrate(CLI::App& app, Args& a) {
  // Build without running (no GPU needed for .cu): what a kernel author or an agent sees from the compiler.
  a.bld = app.add_subcommand("build", "Build one kernel for a task (no run): diagnostics, resources, symbol policy");
  a.bld->add_option("task", a.task_dir, "task directory")->required();
  a.bld->add_option("kernel", a.kernel, "kernel source (.cpp for cpu, .cu for cuda)")->required();
  a.bld->add_option("--backend", a.backend_s, "cpu or cuda (default: from the kernel's extension)")
      ->check(khive::backend_value());
  a.bld->add_flag("--vendor", a.vendor, "build as a vendor baseline: cublas and cublasLt linked and allowed");
  a.bld->add_flag("--json", a.json, "machine-readable output");

  a.cal = app.add_subcommand("calibrate", "Measure copy bandwidth and matrix rates; save a hardware profile");
  a.cal->add_option("--backend", a.backend_s, "cpu or cuda")->check(khive::backend_value());
  a.cal->add_option("--out", a.out_path, "profile file (default: <cache>/profiles/<device>.json)");
}

void add_bench(CLI::App& app, Args& a) {
  khive::BenchCommand& bc = a.bc;
  auto* bench = a.bench = app.add_subcommand(
      "bench", "Every task of a suite: reference, PyTorch, vendor baselines, candidates; a leaderboard");
  bench->add_option("suite", bc.suite, "suite directory (tasks/cutegen26)")->required();
  bench->add_option("--kernels", bc.kernels,
                    "candidates: DIR/<task name or task directory name>/*.cu (cuda) or *.cpp (cpu)");
  bench->add_option("--backend", a.backend_s, "cpu or cuda (default: cuda when a GPU is present)")
      ->check(khive::backend_value());
  bench->add_flag("--json", bc.json, "print bench.json (schema khive.bench/1) instead of the final table");
  bench->add_option("--out", bc.out, "directory for bench.json and bench.md (default .khive/bench/<suite>-<date>)");
  bench->add_option("--tasks", bc.tasks, "only these tasks (comma-separated names)");
  bench->add_option("--seeds", bc.seeds, "fresh correctness seeds per workload")->check(khive::int_range(1, 100));
  bench->add_option("--seed", bc.seed, "fixed seed base (default: random, one per bench run)")
      ->check(khive::seed_value());
  bench->add_option("--profile", bc.profile, "hardware profile JSON (default: saved calibration or builtin)");
  bench->add_option("--timeout", bc.timeout, "the longest one call of a kernel may take, seconds");
  bench->add_option("--time-cap", bc.time_cap, "timing budget per workload, seconds");
  bench->add_option("--build-jobs", bc.build_jobs, "parallel builds before timing (default: the number of cores)");
  bench->add_flag("--no-pytorch", bc.no_pytorch, "ignore the suite's PyTorch numbers (T_b from the vendor baselines)");
  bench
      ->add_option("--pytorch-ruler", bc.pytorch_ruler,
                   "PyTorch's numbers: 'judge' (timed by the judge, as a kernel) or 'file'; default: judge on cuda")
      ->check(CLI::IsMember({"judge", "file"}));
  bench->add_flag("--ab-vendor", bc.ab_vendor,
                  "also time each candidate interleaved with each vendor baseline in one process (guard check 11)");
  bench->add_option("--perf-workloads", bc.perf_workloads,
                    "time only the perf workloads whose uuid matches this regex (checks stay)");
}

// khive tasks PATH: one line (or JSON object) per task; exit 2 when none is found or one does not load.
int run_tasks(const Args& a) {
  auto found = khive::find_tasks(a.path);
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
      if (a.json)
        arr.push_back({{"name", t.name},
                       {"dir", d.string()},
                       {"op_type", t.op_type},
                       {"correctness_workloads", corr},
                       {"perf_workloads", perf},
                       {"cuda_reference", t.reference_cuda.has_value()},
                       {"cpu_reference", t.reference_cpu.has_value()},
                       {"pytorch_reference", !t.pytorch_reference.empty()},
                       {"baselines", t.baselines.size()}});
      else
        fmt::print("{:<28} {:<12} {:>3} correctness / {:>2} perf workloads  refs: {}{}{}  {}\n", t.name, t.op_type,
                   corr, perf, t.reference_cpu ? "cpu " : "", t.reference_cuda ? "cuda " : "",
                   t.pytorch_reference.empty() ? "" : "pytorch", d.string());
    } catch (const std::exception& e) {
      ++bad;
      if (a.json)
        arr.push_back({{"dir", d.string()}, {"error", e.what()}});
      else
        fmt::print("{:<28} ERROR {}\n", d.filename().string(), e.what());
    }
  }
  if (a.json) std::cout << arr.dump(2) << "\n";
  if (found.empty()) {
    std::cerr << "khive: no task (a directory with definition.json) under " << a.path << "\n";
    return 2;
  }
  return bad ? 2 : 0;
}

// khive build TASK KERNEL: the build's diagnostics, resources and forbidden symbols; exit 0 when it built clean.
int run_build(const Args& a) {
  auto t = khive::load_task(a.task_dir);
  std::filesystem::path src = a.kernel;
  khive::Backend b = a.backend_s.empty() ? (src.extension() == ".cu" ? khive::Backend::cuda : khive::Backend::cpu)
                                         : parse_backend_or_throw(a.backend_s);
  if (!std::filesystem::is_regular_file(src)) {
    std::cerr << "khive build: " << a.kernel << ": no such file\n";
    return 2;
  }
  if (a.vendor)
    for (const char* lib : {"cublas", "cublasLt"})
      if (!t.policy.allows(lib)) t.policy.libraries.emplace_back(lib);
  khive::BuildOptions bo;
  bo.backend = b;
  auto r = khive::build_candidate(t, src, bo);
  std::vector<khive::SymbolViolation> bad;
  if (r.ok) bad = khive::scan_symbols(r.library, t.policy, b);
  if (a.json) {
    nlohmann::json res = nlohmann::json::array(), viol = nlohmann::json::array(), diags = nlohmann::json::array();
    for (auto& k : r.resources)
      res.push_back({{"kernel", k.kernel},
                     {"arch", k.arch},
                     {"registers", k.registers},
                     {"shared_bytes", k.shared_bytes},
                     {"spill_stores", k.spill_stores},
                     {"spill_loads", k.spill_loads},
                     {"advisories", k.advisories}});
    for (auto& v : bad) viol.push_back({{"symbol", v.symbol}, {"rule", v.rule}, {"imported", v.imported}});
    std::cout << nlohmann::json{{"ok", r.ok && bad.empty()}, {"built", r.ok}, {"summary", r.summary()},
                                {"command", r.command},      {"log", r.log},  {"resources", res},
                                {"forbidden_symbols", viol}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << "build: " << r.summary() << "\n";
    if (!r.diagnostics.empty()) std::cout << khive::format_diagnostics(r.diagnostics, 20);
    for (auto& k : r.resources)
      std::cout << fmt::format("  {} {}: {} registers, {} B shared, spills {}/{} B{}\n", k.arch, k.kernel, k.registers,
                               k.shared_bytes, k.spill_stores, k.spill_loads,
                               k.wgmma_serialized ? ", wgmma serialized" : "");
    for (auto& v : bad)
      std::cout << fmt::format("forbidden: {} {} ({})\n", v.imported ? "calls" : "defines", v.symbol, v.rule);
  }
  return r.ok && bad.empty() ? 0 : 1;
}

// khive calibrate: measures this machine and saves the profile (default: the cache's, named after the device).
int run_calibrate(const Args& a) {
  auto b = parse_backend_or_throw(a.backend_s);
  const std::string gpu_busy = b == khive::Backend::cuda ? khive::gpu_busy_warning() : "";
  khive::LoadWatch load;  // other work on the machine while it measures makes the ceilings too low
  khive::Job j;
  j.mode = "calibrate";
  j.backend = std::string(khive::backend_name(b));
  khive::JudgeOptions jo;
  jo.budget_s = 300;
  auto out = khive::launch_judge(j, jo);
  if (!out.result || out.result->profile.is_null()) {
    std::cerr << "khive calibrate: failed: " << khive::judge_failure(out) << "\n" << out.process.err << "\n";
    return 2;
  }
  for (const std::string& w : {gpu_busy, load.warning()})
    if (!w.empty()) std::cerr << "khive calibrate: warning: " << w << "\n";
  auto& prof = out.result->profile;
  std::string name = prof.value("name", "device");
  std::string safe = name;
  for (char& c : safe)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  std::filesystem::path dest =
      a.out_path.empty() ? khive::cache_root() / "profiles" / (safe + ".json") : std::filesystem::path(a.out_path);
  khive::write_file_atomic(dest, prof.dump(2));
  std::cout << prof.dump(2) << "\nsaved " << dest.string() << "\n";
  return 0;
}

// khive eval TASK KERNEL: the guard on one kernel; exit 0 accepted, 1 rejected, 2 error.
int run_eval(const Args& a) {
  auto t = khive::load_task(a.task_dir);
  khive::EvalOptions o;
  if (a.backend_s.empty()) {
    std::string ext = std::filesystem::path(a.kernel).extension().string();
    o.backend = ext == ".cu" ? khive::Backend::cuda : khive::Backend::cpu;
  } else {
    o.backend = parse_backend_or_throw(a.backend_s);
  }
  if (std::string err = khive::narrow_perf_workloads(t, a.eval_perf, o.backend); !err.empty()) {
    std::cerr << "khive eval: " << err << "\n";
    return 2;
  }
  if (!std::filesystem::exists(a.kernel)) {
    std::cerr << "khive eval: " << a.kernel << ": no such file\n";
    return 2;
  }
  o.seeds = a.seeds;
  if (a.seed) o.seed = a.seed;
  if (!a.leader.empty()) o.leader = a.leader;
  if (!a.profile.empty()) o.profile = a.profile;
  if (a.timeout > 0)
    o.judge.timeout_s = a.timeout;
  else
    o.judge.timeout_s = o.backend == khive::Backend::cuda ? 300 : 60;
  if (a.time_cap > 0)
    o.timing.time_cap_s = a.time_cap;
  else if (o.backend == khive::Backend::cpu)
    o.timing.time_cap_s = 0.5;
  o.time_reference = !a.no_ref;
  o.time_baselines = !a.no_base;
  o.use_pytorch = !a.no_pytorch;
  if (!a.pytorch_ruler.empty()) o.pytorch_on_judge = a.pytorch_ruler == "judge";
  auto r = khive::evaluate_kernel(t, std::filesystem::absolute(a.kernel), o);
  auto j = khive::report_json(r);
  if (!a.out_path.empty()) khive::write_file_atomic(a.out_path, j.dump(2));
  if (a.json)
    std::cout << j.dump(2) << "\n";
  else
    std::cout << khive::report_text(r);
  if (!r.harness_error.empty()) return 2;
  return r.accepted() ? 0 : 1;
}

// "khive eval", "khive import solution": the command the user ran, for messages that name it.
std::string command_name(const CLI::App& app) {
  std::string name = "khive";
  for (const CLI::App* c = &app;;) {
    const auto subs = c->get_subcommands();
    if (subs.empty()) break;
    c = subs.front();
    name += " " + c->get_name();
  }
  return name;
}
std::string help_hint(const CLI::App& app) { return "Run '" + command_name(app) + " --help' for the options.\n"; }

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"KernelHive: agents that make GPU kernels faster, judged by a deterministic guard"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("khive ") + KHIVE_VERSION);

  Args a;
  add_tasks_and_signature(app, a);
  add_eval(app, a);
  add_build_and_calibrate(app, a);
  add_bench(app, a);
  khive::HiveCli hive_cli;  // optimize, board, report (hive_cmds.cpp)
  khive::add_hive_commands(app, hive_cli);
  khive::CacheCli cache_cli;  // cache, cache prune, cache clear (cache_cmd.cpp)
  khive::add_cache_command(app, cache_cli);
  khive::ImportCli import_cli;  // import kernelbench|flashinfer|solution (import_cmd.cpp)
  khive::add_import_command(app, import_cli);

  khive::HelpCli help_cli = khive::finish_cli(app);  // help CMD, --arch, defaults in help, exit codes (docs/cli.md)
  if (int rc = khive::parse_cli(app, argc, argv); rc >= 0) return rc;

  try {
    if (help_cli.selected()) return khive::run_help(app, help_cli);
    if (hive_cli.selected()) return khive::run_hive_command(hive_cli);
    if (cache_cli.selected()) return khive::run_cache_command(cache_cli);
    if (import_cli.selected()) return khive::run_import_command(import_cli);
    if (*a.tasks) return run_tasks(a);
    if (*a.bld) return run_build(a);
    if (*a.sig) {
      auto t = khive::load_task(a.task_dir);
      std::cout << khive::launch_signature(t, parse_backend_or_throw(a.backend_s)) << "\n";
      return 0;
    }
    if (*a.cal) return run_calibrate(a);
    if (*a.bench) {
      a.bc.backend = parse_backend_or_throw(a.backend_s);
      for (int i = 0; i < argc; ++i) a.bc.command_line += (i ? " " : "") + std::string(argv[i]);
      return khive::bench_command(a.bc);
    }
    if (*a.ev) return run_eval(a);
  } catch (const khive::TaskFormatError& e) {
    std::cerr << command_name(app) << ": " << e.what() << "\n" << help_hint(app);
    return 2;
  } catch (const std::filesystem::filesystem_error& e) {
    // The path and what the system said, not the library's "filesystem error: status: ... [path]".
    std::string what = e.code().message();
    if (!what.empty()) what[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(what[0])));
    std::cerr << command_name(app) << ": " << (e.path1().empty() ? std::string() : e.path1().string() + ": ") << what
              << (e.code() == std::errc::too_many_symbolic_link_levels ? " (a link that leads back to itself?)" : "")
              << "\n"
              << help_hint(app);
    return 2;
  } catch (const std::exception& e) {
    std::cerr << command_name(app) << ": " << e.what() << "\n";
    return 2;
  }
  return 0;
}
