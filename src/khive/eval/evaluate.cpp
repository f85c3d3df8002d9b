#include "khive/eval/evaluate.hpp"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <mutex>
#include <random>
#include <set>

#include <fmt/format.h>

#include "khive/build/symbol_policy.hpp"
#include "khive/support/cache.hpp"
#include "khive/support/files.hpp"
#include "khive/support/subprocess.hpp"
#include "khive/eval/pytorch_baselines.hpp"

namespace khive {
namespace {

using Clock = std::chrono::steady_clock;

struct Plan {
  std::vector<uint64_t> seeds;
  uint64_t new_data_seed = 0, perturb_seed = 0;
  TimingPlan timing;
};

Plan make_plan(uint64_t base, const EvalOptions& o) {
  Plan p;
  for (int i = 1; i <= std::max(1, o.seeds); ++i) p.seeds.push_back(base + static_cast<uint64_t>(i));
  p.new_data_seed = base + 101;
  p.perturb_seed = base + 202;
  p.timing = o.timing;
  p.timing.seed_base = base + 10000;
  // Which timed samples are validated is drawn per evaluation, so a kernel cannot know which calls count.
  std::mt19937_64 rng(base * 0x9E3779B97F4A7C15ull + 17);
  std::vector<int> pos(static_cast<std::size_t>(std::max(1, p.timing.min_samples)));
  for (std::size_t i = 0; i < pos.size(); ++i) pos[i] = static_cast<int>(i);
  std::shuffle(pos.begin(), pos.end(), rng);
  pos.resize(std::min<std::size_t>(pos.size(), static_cast<std::size_t>(std::max(0, o.validate_samples))));
  std::sort(pos.begin(), pos.end());
  p.timing.validate_at = pos;
  return p;
}

std::filesystem::path golden_dir(const Task& t, Backend b) {
  // goldens/v<kInputsVersion>: v2 sparse perturbation by drawn indices; v3 sampled timed goldens; v4 perturbed
  // values copied from the first half; v5 0.2% timing perturbation (run/protocol.hpp).
  return cache_root() / "goldens" / ("v" + std::to_string(kInputsVersion)) / t.hash.substr(0, 24) / std::string(backend_name(b));
}

Job base_job(const Task& t, Backend b, const Plan& p, const std::filesystem::path& gdir) {
  Job j;
  j.backend = std::string(backend_name(b));
  j.task_dir = std::filesystem::absolute(t.dir).string();
  j.golden_dir = gdir.string();
  j.perf_workloads = t.perf_filter;
  j.seeds = p.seeds;
  j.new_data_seed = p.new_data_seed;
  j.perturb_seed = p.perturb_seed;
  j.timing = p.timing;
  return j;
}

// Goldens the evaluation will read that are not on disk yet.
std::vector<GoldenRequest> missing_goldens(const Task& t, Backend b, const Plan& p, const std::filesystem::path& gdir) {
  std::vector<GoldenRequest> req;
  auto want = [&](const Workload& w, const InputSpec& s) {
    for (auto& o : t.outputs)
      if (!std::filesystem::exists(gdir / w.uuid / (s.key() + "." + o.name + ".bin"))) {
        req.push_back({w.uuid, s});
        return;
      }
  };
  for (const auto& w : t.workloads) {
    if (!w.runs_on(b)) continue;   // khive.backends: not on this backend at all
    if (w.checks_correctness()) {
      for (auto s : p.seeds) want(w, InputSpec{s});
      want(w, InputSpec{p.seeds.front(), p.perturb_seed, 0.01});
      want(w, InputSpec{p.new_data_seed});
    }
    if (w.is_perf())
      for (int k : p.timing.validate_at) want(w, timing_input(p.timing, k));
  }
  return req;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// Builds and holds the artifact's directory against cache pruning (by any khive process) until `held` is
// dropped, so the runner finds the library it is given. An artifact pruned between the cache lookup and the
// hold is built again, once.
BuildResult build_held(const Task& task, const std::filesystem::path& src, const BuildOptions& bo, std::optional<cache::Hold>& held) {
  BuildResult b;
  for (int attempt = 0; attempt < 2; ++attempt) {
    b = build_candidate(task, src, bo);
    if (!b.ok) return b;
    held = cache::hold(b.library.parent_path());
    std::error_code ec;
    if (held && std::filesystem::is_regular_file(b.library, ec)) return b;
  }
  return b;
}

KernelRun run_kernel(const Task& task, const std::string& label, const std::filesystem::path& src, const Job& job_base,
                     const EvalOptions& o) {
  KernelRun k;
  k.label = label;
  k.source = src;
  BuildOptions bo = o.build;
  bo.backend = o.backend;
  std::optional<cache::Hold> held;   // until the runner is done with the library
  k.build = build_held(task, src, bo, held);
  if (!k.build.ok) {
    std::string reason = k.build.timed_out ? "build_timeout" : "build_error";
    k.verdict = reject(Check::build, reason, "the kernel does not build: " + k.build.summary(),
                       format_diagnostics(k.build.diagnostics));
    return k;
  }
  auto violations = scan_symbols(k.build.library, task.policy, o.backend);
  if (!violations.empty()) {
    std::string all;
    for (auto& v : violations) all += fmt::format("{} {} ({})\n", v.imported ? "calls" : "defines", v.symbol, v.rule);
    const auto& v = violations.front();
    k.verdict = reject(Check::build, "forbidden_symbol",
                       fmt::format("the kernel {} {}: {}", v.imported ? "calls" : "defines", v.symbol, v.rule), all);
    return k;
  }
  Job job = job_base;
  job.mode = "evaluate";
  job.library = k.build.library.string();
  RunnerOutcome out = launch_runner(job, o.runner);
  k.verdict = judge_run(out);
  // The guard's own time: the runner process minus every call of the kernel (the runner's "kernel" phase,
  // wall clock around each call); older runners only report the timed samples.
  double kernel_time = 0;
  if (auto it = k.verdict.phases.find("kernel"); it != k.verdict.phases.end()) {
    kernel_time = it->second;
  } else {
    for (auto& t : k.verdict.timings)
      for (double s : t.samples) kernel_time += s;
  }
  k.guard_seconds = std::max(0.0, out.seconds - kernel_time);
  return k;
}

nlohmann::json query_clocks(const RunnerOptions& ro) {
  if (find_program("nvidia-smi").empty()) return nullptr;
  ProcessSpec p;
  p.argv = {"nvidia-smi", "--query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,persistence_mode",
            "--format=csv,noheader,nounits"};
  if (!ro.cuda_visible_devices.empty()) p.argv.push_back("--id=" + ro.cuda_visible_devices);
  p.timeout_s = 15;
  auto r = run_process(p);
  if (!r.ok()) return {{"error", first_line(r.err.empty() ? r.describe() : r.err)}};
  std::vector<std::string> f;
  std::string line = first_line(r.out), cur;
  for (char c : line + ",") {
    if (c == ',') {
      auto a = cur.find_first_not_of(' ');
      f.push_back(a == std::string::npos ? "" : cur.substr(a));
      cur.clear();
    } else {
      cur += c;
    }
  }
  const char* names[] = {"name", "sm_clock_mhz", "mem_clock_mhz", "max_sm_clock_mhz", "temperature_c", "power_w", "persistence"};
  nlohmann::json j;
  for (std::size_t i = 0; i < f.size() && i < 7; ++i) j[names[i]] = f[i];
  return j;
}

std::string sanitize(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

// The cache size policy at the start of an evaluation (docs/guard.md, "The cache"). One pruning at a time in
// this process; after one that left the cache under its cap, the next 30 s of evaluations (the hive's
// parallel ones) skip the scan. Returns the summary line when something was over the cap.
std::string apply_cache_cap(const std::filesystem::path& own_unit) {
  static std::mutex mu;
  static Clock::time_point last{};
  static bool last_over = false;
  const auto cap = cache::cap_from_env();   // throws on a malformed $KHIVE_CACHE_MAX_GB
  if (!cap) return "";
  std::lock_guard<std::mutex> lk(mu);
  if (last != Clock::time_point{} && !last_over && Clock::now() - last < std::chrono::seconds(30)) return "";
  cache::PruneResult pr = cache::prune(cache_root(), *cap, {own_unit});
  last = Clock::now();
  last_over = pr.after > *cap;
  if (pr.before <= *cap) return "";
  std::string line = pr.summary();
  std::cerr << "khive: " << line << "\n";   // the run's log (hive, bench, tune_suite capture stderr)
  return line;
}

}  // namespace

Task baseline_task(const Task& task) {
  Task t = task;
  for (const char* lib : {"cublas", "cublasLt"})
    if (!t.policy.allows(lib)) t.policy.libraries.emplace_back(lib);
  return t;
}

HardwareProfile resolve_profile(Backend b, const std::string& device_name, const std::optional<std::filesystem::path>& explicit_path,
                                const RunnerOptions& ro) {
  if (explicit_path) return load_profile(*explicit_path);
  auto saved = cache_root() / "profiles" / (sanitize(device_name) + ".json");
  if (std::filesystem::exists(saved)) return load_profile(saved);
  if (b == Backend::cuda) {
    if (auto p = builtin_profile(device_name)) return *p;
  }
  // Calibrate once on this machine and keep it.
  Job j;
  j.mode = "calibrate";
  j.backend = std::string(backend_name(b));
  RunnerOptions r = ro;
  r.timeout_s = 300;
  RunnerOutcome out = launch_runner(j, r);
  if (!out.result || !out.result->contains("profile"))
    throw std::runtime_error("calibration failed: " + (out.result && out.result->contains("error") ? (*out.result)["error"].get<std::string>()
                                                                                                   : out.process.describe()));
  std::filesystem::create_directories(saved.parent_path());
  write_file_atomic(saved, (*out.result)["profile"].dump(2));
  return load_profile(saved);
}

EvalReport evaluate_kernel(const Task& task, const std::filesystem::path& kernel, const EvalOptions& o) {
  auto t0 = Clock::now();
  EvalReport r;
  r.task = task.name;
  r.task_dir = task.dir.string();
  r.kernel = kernel.string();
  r.backend = std::string(backend_name(o.backend));
  r.seed_base = o.seed ? *o.seed : (std::random_device{}() & 0xffffffffu) << 8;
  Plan plan = make_plan(r.seed_base, o);
  auto gdir = golden_dir(task, o.backend);
  Job jb = base_job(task, o.backend, plan, gdir);
  auto done = [&]() -> EvalReport& {
    r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return r;
  };
  // The task's golden unit: held for the whole evaluation so no khive process prunes it, touched (the LRU
  // clock) and labelled with the task's name for `khive cache`; then the cache cap, sparing this unit.
  std::optional<cache::Hold> golden_hold;
  try {
    for (int attempt = 0; attempt < 3 && !golden_hold; ++attempt) {
      std::filesystem::create_directories(gdir);
      golden_hold = cache::hold(gdir);
    }
    if (!golden_hold) throw std::runtime_error(gdir.string() + ": cannot lock the golden directory (removed repeatedly while starting)");
    cache::touch(gdir);
    std::error_code ec;
    if (!std::filesystem::exists(gdir / ".task", ec)) write_file_atomic(gdir / ".task", task.name + "\n" + r.task_dir + "\n");
    r.cache_pruned = apply_cache_cap(gdir);
  } catch (const std::exception& e) {
    r.harness_error = std::string("cache: ") + e.what();
    return done();
  }
  // A random seed base is never used again: its goldens (and the saved base inputs of its timed samples) are
  // removed when this evaluation ends, so the cache does not grow by a full set per `khive eval`. Runs that
  // reuse them (the hive, bench, --seed) pass a fixed seed and keep them.
  struct DropGoldens {
    std::filesystem::path dir;
    std::vector<std::string> prefixes;
    ~DropGoldens() {
      if (prefixes.empty()) return;
      std::vector<std::filesystem::path> doomed;   // listed first, removed after: no removal while iterating
      std::error_code ec;
      for (auto wit = std::filesystem::directory_iterator(dir, ec); !ec && wit != std::filesystem::directory_iterator(); wit.increment(ec)) {
        std::error_code ec2;
        for (auto fit = std::filesystem::directory_iterator(wit->path(), ec2); !ec2 && fit != std::filesystem::directory_iterator();
             fit.increment(ec2)) {
          const std::string name = fit->path().filename().string();
          for (const auto& p : prefixes)
            if (name.rfind(p + ".", 0) == 0 || name.rfind(p + "p", 0) == 0) {
              doomed.push_back(fit->path());
              break;
            }
        }
      }
      for (const auto& f : doomed) {
        std::error_code ec3;
        std::filesystem::remove(f, ec3);
      }
    }
  } drop;
  if (!o.seed) {
    drop.dir = gdir;
    for (uint64_t s : plan.seeds) drop.prefixes.push_back(InputSpec{s}.key());
    drop.prefixes.push_back(InputSpec{plan.new_data_seed}.key());
    drop.prefixes.push_back(InputSpec{plan.timing.seed_base}.key());
  }
  if (o.backend == Backend::cuda) r.clocks = query_clocks(o.runner);

  // The reference: build it and make the goldens in its own process.
  auto ref_src = task.reference_for(o.backend);
  if (!ref_src) {
    r.harness_error = fmt::format("task {} has no {} reference", task.name, backend_name(o.backend));
    return done();
  }
  auto t_golden = Clock::now();
  BuildOptions bo = o.build;
  bo.backend = o.backend;
  // The reference must build even when every golden is cached (a task whose reference broke is an error); its
  // build is held for the whole evaluation, in case goldens must be made again later.
  std::optional<cache::Hold> ref_held;
  BuildResult ref_build = build_held(task, *ref_src, bo, ref_held);
  if (!ref_build.ok) {
    r.harness_error = "the task's reference does not build: " + ref_build.summary() + "\n" + format_diagnostics(ref_build.diagnostics);
    return done();
  }
  // Makes the goldens not on disk; "" or what failed.
  auto make_goldens = [&]() -> std::string {
    auto need = missing_goldens(task, o.backend, plan, gdir);
    if (need.empty()) return "";
    Job g = jb;
    g.mode = "golden";
    g.library = ref_build.library.string();
    g.goldens = need;
    RunnerOptions ro = o.runner;
    ro.timeout_s = std::max(ro.timeout_s, 600.0);
    RunnerOutcome out = launch_runner(g, ro);
    Verdict gv = judge_run(out);
    if (!gv.harness_error.empty() || gv.rejection)
      return "making goldens with the reference failed: " +
             (gv.rejection ? gv.rejection->message + (gv.rejection->diagnosis.empty() ? "" : " — " + gv.rejection->diagnosis)
                           : gv.harness_error);
    return "";
  };
  // The golden unit is held, so no khive process prunes it; files can still vanish by hand (rm, a cache
  // cleaner). A run that failed in the harness while goldens are missing is run again after making them once,
  // instead of failing the candidate with "cannot read".
  auto run_checked = [&](const Task& t, const std::string& label, const std::filesystem::path& src) {
    KernelRun k = run_kernel(t, label, src, jb, o);
    if (k.verdict.harness_error.empty() || r.goldens_remade || missing_goldens(task, o.backend, plan, gdir).empty()) return k;
    r.goldens_remade = true;
    if (std::string err = make_goldens(); !err.empty()) {
      k.verdict.harness_error += " (goldens were missing; making them again failed: " + err + ")";
      return k;
    }
    return run_kernel(t, label, src, jb, o);
  };
  if (std::string err = make_goldens(); !err.empty()) {
    r.harness_error = err;
    return done();
  }

  r.golden_seconds = std::chrono::duration<double>(Clock::now() - t_golden).count();
  r.candidate = run_checked(task, "candidate", kernel);
  if (!r.candidate.verdict.harness_error.empty()) {
    r.harness_error = r.candidate.verdict.harness_error;
    return done();
  }
  if (o.measured) r.reference = o.measured->reference;
  else if (o.time_reference) r.reference = run_checked(task, "reference", *ref_src);
  // Device facts come from the candidate's runner, or the reference's when the candidate never ran
  // (rejected at build); with neither, there is nothing to score.
  r.preflight = r.candidate.verdict.preflight.is_object() ? r.candidate.verdict.preflight
                : (r.reference && r.reference->verdict.preflight.is_object() ? r.reference->verdict.preflight : nlohmann::json::object());
  r.device = r.preflight.value("device", o.backend == Backend::cpu ? std::string("cpu") : std::string("cuda"));
  if (!r.candidate.verdict.accepted && !r.preflight.contains("device")) {
    r.task_score = 0.0;
    return done();
  }
  if (o.measured) r.baselines = o.measured->baselines;
  else if (o.time_baselines) {
    const Task vendor = baseline_task(task);   // baselines may link cuBLAS(Lt); the candidate above may not
    for (auto& b : task.baselines) {
      if ((o.backend == Backend::cuda) != (b.extension() == ".cu")) continue;
      r.baselines.push_back(run_checked(vendor, "baseline:" + b.stem().string(), b));
    }
  }

  // Score inputs: T_sol from measured ceilings, the plausibility floor from datasheet peaks.
  std::string dev_name = r.device;
  if (o.backend == Backend::cpu) dev_name = "cpu:" + r.device + " (" + std::to_string(r.preflight.value("threads", 0)) + " threads)";
  r.profile = resolve_profile(o.backend, dev_name, o.profile, o.runner);
  // On the CPU the "peak" is a calibrated figure (1.5x measured), not a datasheet number, and a busy
  // host calibrates low: only a time far beyond it is called a measurement fault.
  const double margin = o.backend == Backend::cpu ? std::max(o.plausibility_margin, 0.75) : o.plausibility_margin;
  std::map<std::string, double> floors;
  for (const auto& w : task.workloads) {
    if (!w.is_perf() || !w.runs_on(o.backend)) continue;
    WorkloadReport wr;
    wr.workload = w.uuid;
    wr.weight = w.weight;
    wr.cost = workload_cost(task, resolve_axes(task, w));
    wr.t_sol = sol_seconds(wr.cost, task.cost.unit, r.profile, true);
    wr.t_floor = sol_seconds(wr.cost, task.cost.unit, r.profile, false);
    floors[w.uuid] = wr.t_floor * (1.0 - margin);
    r.workloads.push_back(wr);
  }
  apply_plausibility(r.candidate.verdict, floors);

  // Check 11: interleaved A/B against the leader.
  if (o.leader && r.candidate.verdict.accepted) {
    std::optional<cache::Hold> leader_held, cand_held;
    BuildResult lb = build_held(o.leader_is_vendor ? baseline_task(task) : task, *o.leader, bo, leader_held);
    // The candidate's library was held only while its own run lasted: hold it again for the A/B (rebuilt if
    // it was pruned meanwhile; the same source gives the same key).
    if (lb.ok) {
      BuildResult cb = build_held(task, kernel, bo, cand_held);
      if (cb.ok) r.candidate.build.library = cb.library;
    }
    if (!lb.ok) {
      r.harness_error = "the leader does not build: " + lb.summary();
      return done();
    }
    Job ab = jb;
    ab.mode = "ab";
    ab.library = r.candidate.build.library.string();
    ab.leader_library = lb.library.string();
    RunnerOutcome out = launch_runner(ab, o.runner);
    Verdict av = judge_run(out);
    if (av.rejection) {
      r.candidate.verdict.accepted = false;
      r.candidate.verdict.rejection = av.rejection;
    } else if (!av.harness_error.empty()) {
      r.harness_error = "A/B timing failed: " + av.harness_error;
      r.ab_failed = true;
      return done();
    } else {
      std::vector<AbResult> results;
      std::vector<double> weights;
      for (auto& w : out.result->value("ab", nlohmann::json::array())) {
        AbReport a{w.value("workload", ""), compare_ab(w.value("a_s", std::vector<double>{}), w.value("b_s", std::vector<double>{}),
                                                      o.ab_min_gain)};
        double weight = 1;
        for (const auto& tw : task.workloads)
          if (tw.uuid == a.workload) weight = tw.weight;
        results.push_back(a.result);
        weights.push_back(weight);
        r.ab.push_back(a);
      }
      LeaderDecision d = decide_leader(results, weights, o.ab_min_gain);
      r.new_leader = d.new_leader;
      r.ab_decision = d.why;
    }
  }

  // Per-workload figures. T_b: PyTorch on this device when the suite has its numbers (docs/bench.md),
  // else the fastest accepted baseline, else the reference.
  std::optional<PytorchBaselines> pytorch;
  if (o.use_pytorch) {
    try {
      pytorch = find_pytorch_baselines(task, o.backend, r.device);
    } catch (const TaskFormatError& e) {
      r.harness_error = e.what();
      return done();
    }
  }
  std::vector<WorkloadScoreInput> score_in;
  for (auto& wr : r.workloads) {
    if (auto* t = r.candidate.verdict.timing_for(wr.workload)) wr.kernel = t->summary;
    if (r.reference && r.reference->verdict.accepted)
      if (auto* t = r.reference->verdict.timing_for(wr.workload)) wr.reference = t->summary;
    for (auto& b : r.baselines)
      if (b.verdict.accepted)
        if (auto* t = b.verdict.timing_for(wr.workload)) wr.baselines[b.label] = t->summary;
    for (auto& [label, s] : wr.baselines)
      if (!wr.baseline_time || s.median < *wr.baseline_time) {
        wr.baseline_time = s.median;
        wr.baseline_label = label;
      }
    if (!wr.baseline_time && wr.reference) {
      wr.baseline_time = wr.reference->median;
      wr.baseline_label = "reference";
    }
    if (pytorch)
      if ((wr.pytorch = pytorch->lookup(task, wr.workload))) {
        wr.baseline_time = wr.pytorch->median;
        wr.baseline_label = "pytorch";
        r.pytorch_baselines = {{"file", pytorch->file.string()}, {"gpu", pytorch->gpu}, {"torch", pytorch->torch}, {"date", pytorch->date}};
      }
    if (wr.kernel) {
      double tk = wr.kernel->median;
      if (wr.t_sol > 0) wr.fraction_of_sol = wr.t_sol / tk;
      if (wr.reference) wr.speedup_vs_reference = wr.reference->median / tk;
      if (wr.pytorch) wr.speedup_vs_pytorch = wr.pytorch->median / tk;
      for (auto& [label, s] : wr.baselines) wr.speedup_vs_baseline[label] = s.median / tk;
      if (wr.baseline_time && wr.t_sol > 0) wr.score = sol_score(tk, *wr.baseline_time, wr.t_sol);
    }
    score_in.push_back({wr.weight, r.candidate.verdict.accepted && wr.kernel.has_value(), wr.kernel ? wr.kernel->median : 0,
                        wr.t_sol, wr.baseline_time});
  }
  r.task_score = r.candidate.verdict.accepted ? task_score(score_in) : std::optional<double>(0.0);
  return done();
}

}  // namespace khive
