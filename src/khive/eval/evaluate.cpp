#include "khive/eval/evaluate.hpp"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <mutex>
#include <random>
#include <set>

#include <fmt/format.h>

#include <unistd.h>

#include "khive/compile/symbol_policy.hpp"
#include "khive/eval/pytorch_baselines.hpp"
#include "khive/guard/rules.hpp"
#include "khive/interop/python.hpp"
#include "khive/job/input_keys.hpp"
#include "khive/numerics/inputs.hpp"
#include "khive/score/cpu_ceiling.hpp"
#include "khive/support/cache.hpp"
#include "khive/support/files.hpp"
#include "khive/support/load_watch.hpp"
#include "khive/support/subprocess.hpp"
#include "khive/support/text.hpp"

namespace khive {
namespace {

using Clock = std::chrono::steady_clock;

std::string sanitize(std::string s);

// `torch_version`: goldens made by the task's PyTorch reference (no native one for b) are kept apart from native
// ones, per torch version (another torch may round differently).
std::filesystem::path golden_dir(const Task& t, Backend b, const std::string& torch_version) {
  // goldens/v<kInputsVersion> (job/protocol.hpp): v6 inverse-transform normal inputs and secret timed seeds.
  std::string leaf(backend_name(b));
  if (!torch_version.empty()) leaf += "-pytorch-" + sanitize(torch_version);
  return cache_root() / "goldens" / ("v" + std::to_string(kInputsVersion)) / t.hash.substr(0, 24) / leaf;
}

// Builds and holds the artifact's directory against cache pruning (by any khive process) until `held` is
// dropped, so the judge finds the library it is given. An artifact pruned between the cache lookup and the
// hold is built again, once.
BuildResult build_held(const Task& task, const std::filesystem::path& src, const BuildOptions& bo,
                       std::optional<cache::Hold>& held) {
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

bool allows_vendor(const Task& t) { return t.policy.allows("cublas") || t.policy.allows("cublasLt"); }

// What every judge of one evaluation shares: the task, the plan's seeds, the reference's library, the goldens.
struct JobBase {
  Job job;
  JudgeOptions process;
};

JobBase job_base(const Task& t, const EvalOptions& o, uint64_t seed_base, const std::string& secret,
                 const std::filesystem::path& gdir) {
  JobBase b;
  Job& j = b.job;
  j.mode = "evaluate";
  j.backend = std::string(backend_name(o.backend));
  j.task_dir = std::filesystem::absolute(t.dir).string();
  j.perf_workloads = t.perf_filter;
  j.golden_dir = gdir.string();
  j.seed_base = seed_base;
  j.input_secret = secret;
  j.seeds = std::max(1, o.seeds);
  j.timing = o.timing;
  j.ab_alpha = o.ab.alpha;
  j.ab_alpha_slower = o.ab.alpha_slower;
  j.ab_min_gain = o.ab.min_gain;
  j.ab_min_pairs = static_cast<int>(o.ab.min_pairs);
  j.ab_min_gain_s = o.ab.min_gain_s;  // < 0: the backend's (the judge resolves it)
  j.timeout_s = o.judge.timeout_s;
  j.omp_threads = o.judge.omp_threads;
  j.cpu_memory_limit = o.judge.cpu_memory_limit;
  j.sandbox = o.judge.sandbox;
  b.process = o.judge.process;
  b.process.cuda_visible_devices = o.judge.cuda_visible_devices;
  return b;
}

// One judge process over one kernel; a harness error the judge calls retryable (an executor killed from outside:
// the OOM killer, an operator) is retried once.
JudgeOutcome judge_once(const Job& job, const JudgeOptions& p, Verdict& v, bool& retried) {
  JudgeOutcome out = launch_judge(job, p);
  v = read_verdict(out);
  if (!v.harness_error.empty() && v.retryable && !retried) {
    retried = true;
    out = launch_judge(job, p);
    v = read_verdict(out);
  }
  return out;
}

void account(KernelRun& k, const JudgeOutcome& out) {
  // The guard's own time: the judge process minus the kernel's calls (its "kernel" phase: every exchange with the
  // kernel's executor, on the judge's clock) and minus the reference's golden-making calls.
  double kernel_time = 0;
  if (auto it = k.verdict.phases.find("kernel"); it != k.verdict.phases.end()) kernel_time = it->second;
  if (out.result) k.golden_seconds = out.result->goldens.reference_s;
  k.guard_seconds = std::max(0.0, out.seconds - kernel_time - k.golden_seconds);
}

nlohmann::json query_clocks(const JudgeRunOptions& ro) {
  if (find_program("nvidia-smi").empty()) return nullptr;
  ProcessSpec p;
  p.argv = {"nvidia-smi",
            "--query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,persistence_mode",
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
  const char* names[] = {"name",          "sm_clock_mhz", "mem_clock_mhz", "max_sm_clock_mhz",
                         "temperature_c", "power_w",      "persistence"};
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
  const auto cap = cache::cap_from_env();  // throws on a malformed $KHIVE_CACHE_MAX_GB
  if (!cap) return "";
  std::lock_guard<std::mutex> lk(mu);
  if (last != Clock::time_point{} && !last_over && Clock::now() - last < std::chrono::seconds(30)) return "";
  cache::PruneResult pr = cache::prune(cache_root(), *cap, {own_unit});
  last = Clock::now();
  last_over = pr.after > *cap;
  if (pr.before <= *cap) return "";
  std::string line = pr.summary();
  std::cerr << "khive: " << line << "\n";  // the run's log (hive, bench, tune_suite capture stderr)
  return line;
}

// A random-seed evaluation's goldens live in a folder of their own, removed when it ends: they are never used again.
struct PrivateGoldens {
  std::filesystem::path dir;
  ~PrivateGoldens() {
    if (dir.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

}  // namespace

Task baseline_task(const Task& task) {
  Task t = task;
  for (const char* lib : {"cublas", "cublasLt"})
    if (!t.policy.allows(lib)) t.policy.libraries.emplace_back(lib);
  return t;
}

namespace {

// A saved implicit calibration taken while other processes used more than this share of the machine is
// replaced by a quieter one when the evaluation finds it at least kRecalibrateAfter old.
constexpr double kBusyShare = 0.15;
constexpr auto kRecalibrateAfter = std::chrono::minutes(10);

double saved_busy_share(const std::filesystem::path& saved) {
  try {
    auto j = nlohmann::json::parse(read_file(saved));
    return j.value("busy_share", 0.0);
  } catch (const std::exception&) {
    return 0.0;  // load_profile names what is wrong with the file
  }
}

}  // namespace

HardwareProfile resolve_profile(Backend b, const std::string& device_name,
                                const std::optional<std::filesystem::path>& explicit_path, const JudgeRunOptions& ro) {
  if (explicit_path) return load_profile(*explicit_path);
  auto saved = cache_root() / "profiles" / (sanitize(device_name) + ".json");
  const bool have_saved = std::filesystem::exists(saved);
  double saved_busy = 0;
  if (have_saved) {
    saved_busy = saved_busy_share(saved);
    std::error_code ec;
    const auto age = std::filesystem::file_time_type::clock::now() - std::filesystem::last_write_time(saved, ec);
    if (saved_busy <= kBusyShare || ec || age < kRecalibrateAfter) return load_profile(saved);
  }
  if (b == Backend::cuda && !have_saved) {
    if (auto p = builtin_profile(device_name)) return *p;
  }
  // Calibrate on this machine and keep it. Other work while it measures makes its ceilings too low (scores too
  // high; check 10's CPU floor does not depend on it, score/cpu_ceiling.hpp): such a calibration says so in its
  // source and is replaced by a quieter one later.
  LoadWatch load;
  Job j;
  j.mode = "calibrate";
  j.backend = std::string(backend_name(b));
  JudgeOptions p = ro.process;
  p.cuda_visible_devices = ro.cuda_visible_devices;
  p.budget_s = 300;
  JudgeOutcome out = launch_judge(j, p);
  if (!out.result || out.result->profile.is_null()) {
    if (have_saved) return load_profile(saved);
    throw std::runtime_error("calibration failed: " + judge_failure(out));
  }
  nlohmann::json prof = out.result->profile;
  const double busy = std::max(0.0, load.others_share());
  if (have_saved && busy >= saved_busy) return load_profile(saved);  // no quieter than what is kept
  if (busy > kBusyShare) {
    prof["busy_share"] = busy;
    prof["source"] = prof.value("source", std::string()) +
                     fmt::format(
                         "; measured while other processes used {:.0f}% of the machine: the ceilings may be too low "
                         "(scores too high); `khive calibrate` on a quiet machine replaces it",
                         100 * busy);
  }
  std::filesystem::create_directories(saved.parent_path());
  write_file_atomic(saved, prof.dump(2));
  return load_profile(saved);
}

namespace {

// The task's golden unit: held for the whole evaluation (golden_hold) so no khive process prunes it, touched (the
// LRU clock) and labelled with the task's name for `khive cache`; then the cache cap, sparing this unit. A
// random-seed evaluation keeps its goldens in a private folder inside it (private_goldens), removed at the end.
// Returns the folder the judge keeps this evaluation's goldens in; throws when the cache cannot be used.
std::filesystem::path hold_goldens(const Task& task, const EvalOptions& o, EvalReport& r,
                                   std::optional<cache::Hold>& golden_hold, PrivateGoldens& private_goldens,
                                   const std::string& torch_version, const std::string& fingerprint) {
  auto gdir = golden_dir(task, o.backend, torch_version);
  for (int attempt = 0; attempt < 3 && !golden_hold; ++attempt) {
    std::filesystem::create_directories(gdir);
    golden_hold = cache::hold(gdir);
  }
  if (!golden_hold)
    throw std::runtime_error(gdir.string() + ": cannot lock the golden directory (removed repeatedly while starting)");
  cache::touch(gdir);
  std::error_code ec;
  if (!std::filesystem::exists(gdir / ".task", ec))
    write_file_atomic(gdir / ".task", task.name + "\n" + r.task_dir + "\n");
  r.cache_pruned = apply_cache_cap(gdir);
  if (o.seed) {
    // The task's golden set is bounded too: earlier runs' goldens (other secrets) go first (support/cache.hpp).
    if (const auto cap = cache::golden_set_cap_from_env()) {
      const std::string line = cache::bound_golden_set(gdir, fingerprint, *cap).summary(task.name, *cap);
      if (!line.empty()) {
        std::cerr << "khive: " << line << "\n";
        r.cache_pruned += (r.cache_pruned.empty() ? "" : "; ") + line;
      }
    }
    return gdir;
  }
  // Named with this process's pid (make_temp_dir): if khive is killed before the destructor runs,
  // `khive cache prune` removes the folder once the pid has ended.
  private_goldens.dir = make_temp_dir(gdir, "eval");
  return private_goldens.dir;
}

// One kernel (the reference, a baseline) built, checked and timed by a judge of its own.
KernelRun time_kernel(const Task& t, const std::string& label, const std::filesystem::path& src, bool vendor,
                      const BuildOptions& bo, const JobBase& jb, bool& retried) {
  KernelRun k;
  k.label = label;
  k.source = src;
  std::optional<cache::Hold> held;
  k.build = build_held(t, src, bo, held);
  std::vector<SymbolViolation> v;
  if (k.build.ok) v = scan_symbols(k.build.library, t.policy, bo.backend);
  if (auto rej = build_rejection(k.build, v)) {
    k.verdict.rejection = *rej;
    return k;
  }
  Job job = jb.job;
  job.library = k.build.library.string();
  job.library_vendor = vendor;
  JudgeOutcome out = judge_once(job, jb.process, k.verdict, retried);
  account(k, out);
  return k;
}

// Check 11's results from the candidate's judge: the per-workload A/B tests, the leader's samples and the decision.
void read_ab(const JudgeResult& res, EvalReport& r) {
  for (const auto& a : res.ab) {
    AbReport rep;
    rep.workload = a.workload;
    rep.test.pairs = a.pairs;
    rep.test.ratio = a.ratio;
    rep.test.median_ratio = a.median_ratio;
    rep.test.p_faster = a.p_faster;
    rep.test.p_slower = a.p_slower;
    rep.test.noise = a.noise;
    rep.test.valid = a.valid;
    rep.faster = a.faster;
    rep.slower = a.slower;
    rep.holm_threshold = a.holm_threshold;
    rep.events.ratio = a.events.ratio;
    rep.events.p_faster = a.events.p_faster;
    rep.events.p_slower = a.events.p_slower;
    rep.events.valid = a.events.valid;
    r.ab.push_back(rep);
  }
  for (const auto& t : res.timing)
    if (!t.leader_samples_s.empty()) r.leader_samples[t.workload] = t.leader_samples_s;
  const AbDecisionRecord d = res.ab_decision.value_or(AbDecisionRecord{});
  r.new_leader = d.new_leader;
  r.ab_decision = d.why;
  r.ab_weighted_ratio = d.weighted_ratio;
}

// Why a run was not accepted: its rejection's message, else the harness error.
std::string why_not_accepted(const KernelRun& k) {
  return k.verdict.rejection ? k.verdict.rejection->message : k.verdict.harness_error;
}

// The argv that confines the task's PyTorch (khive-jail): it reads its interpreter and the task, writes nothing, has
// no network (interop/python.hpp). The task's Python may come from the internet (an imported problem file).
std::vector<std::string> pytorch_jail(const Task& task, Backend backend) {
  JailPolicy jail;
  jail.read = python_read_paths();
  jail.read.push_back(std::filesystem::absolute(task.dir).string());
  jail.cuda = backend == Backend::cuda;
  if (backend == Backend::cpu) jail.memory_bytes = physical_memory_bytes() / 4 * 3;
  return jailed(jail, {});
}

// The job's kernel under test becomes the task's PyTorch reference (Job::library_pytorch), run by the interpreter that
// has torch, in khive-jail. Throws when torch is not here.
void set_pytorch_kernel(Job& job, const Task& task, Backend backend) {
  const TorchPython& torch = torch_python();
  job.library.clear();
  job.library_pytorch = true;
  job.library_vendor = false;
  job.reference_python = torch.executable;
  job.reference_pythonpath = torch.pythonpath;
  job.reference_jail = pytorch_jail(task, backend);
  // One seed of each correctness workload: this is the task's own reference, not a candidate (checks 3-7 still run,
  // and every warm-up and timed call is validated); it saves two thirds of its correctness calls.
  job.seeds = 1;
}

// The task's PyTorch reference timed as the kernel under test by a judge of its own (Job::library_pytorch): PyTorch's
// T_b on the same clock as every kernel, its outputs checked against the goldens like a kernel's. nullopt, with
// r.pytorch_baselines saying why, when torch is not here.
std::optional<KernelRun> time_pytorch(const Task& task, const EvalOptions& o, const JobBase& jb, EvalReport& r) {
  Job job = jb.job;
  job.leader_library.clear();
  try {
    set_pytorch_kernel(job, task, o.backend);
  } catch (const std::exception& e) {
    r.pytorch_baselines = {
        {"ruler", "judge"}, {"accepted", false}, {"why", std::string("PyTorch is not here: ") + e.what()}};
    return std::nullopt;
  }
  KernelRun k;
  k.label = "pytorch";
  k.source = std::filesystem::path(task.dir) / "definition.json";
  JudgeOutcome out = judge_once(job, jb.process, k.verdict, r.retried);
  account(k, out);
  r.pytorch_baselines = {{"ruler", "judge"}, {"torch", torch_python().torch_version}, {"accepted", k.verdict.accepted}};
  if (!k.verdict.accepted) r.pytorch_baselines["why"] = why_not_accepted(k);
  return k;
}

// The device's profile, each perf workload's cost, T_sol and T_floor (r.workloads), and check 10: an accepted
// candidate faster than a floor no hardware reaches is rejected.
void check_plausibility(const Task& task, const EvalOptions& o, EvalReport& r) {
  // Score inputs: T_sol from measured ceilings, the plausibility floor from datasheet peaks.
  std::string dev_name = r.device;
  if (o.backend == Backend::cpu)
    dev_name = "cpu:" + r.device + " (" + std::to_string(r.preflight.value("threads", 0)) + " threads)";
  r.profile = resolve_profile(o.backend, dev_name, o.profile, o.judge);
  // Check 10's floor. On the CPU the profile's "peak" is a calibration (1.5x measured), and one taken on a busy
  // host is far too low: the floor comes from the larger of it and the cores' issue-width ceiling
  // (score/cpu_ceiling.hpp), which no kernel reaches, so a low calibration cannot reject an honest kernel.
  const HardwareProfile floor_profile =
      o.backend == Backend::cpu
          ? with_ceiling_peaks(r.profile,
                               cpu_core_ceiling(cpu_core_from_host(), std::max(1, r.preflight.value("threads", 1))))
          : r.profile;
  const double margin = o.plausibility_margin;
  std::map<std::string, double> floors;
  for (const auto& w : task.workloads) {
    if (!w.is_perf() || !w.runs_on(o.backend)) continue;
    WorkloadReport wr;
    wr.workload = w.uuid;
    wr.weight = w.weight;
    wr.cost = workload_cost(task, resolve_axes(task, w));
    wr.t_sol = sol_seconds(wr.cost, task.cost.unit, r.profile, true);
    wr.t_floor = sol_seconds(wr.cost, task.cost.unit, r.profile, false);
    floors[w.uuid] = floor_seconds(wr.cost, floor_profile) * (1.0 - margin);
    r.workloads.push_back(wr);
  }
  if (r.candidate.verdict.accepted)
    if (auto rej = plausibility_rejection(r.candidate.verdict.timings, floors)) {
      r.candidate.verdict.accepted = false;
      r.candidate.verdict.rejection = *rej;
      r.new_leader.reset();
    }
}

// Per-workload figures and the task score. T_b: PyTorch on this device when the suite has its numbers
// (docs/bench.md), else the fastest accepted baseline, else the reference.
void score_workloads(const Task& task, const std::optional<PytorchBaselines>& pytorch, EvalReport& r) {
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
    // PyTorch timed here on the judge's clock, else the suite's file.
    const bool judged = r.pytorch && r.pytorch->verdict.accepted;
    if (judged) {
      if (auto* t = r.pytorch->verdict.timing_for(wr.workload)) wr.pytorch = t->summary;
    } else if (pytorch && (wr.pytorch = pytorch->lookup(task, wr.workload))) {
      r.pytorch_baselines = {{"ruler", "file"},
                             {"file", pytorch->file.string()},
                             {"gpu", pytorch->gpu},
                             {"torch", pytorch->torch},
                             {"date", pytorch->date}};
      if (r.pytorch) r.pytorch_baselines["judge_failed"] = why_not_accepted(*r.pytorch);
    }
    if (wr.pytorch) {
      wr.baseline_time = wr.pytorch->median;
      wr.baseline_label = "pytorch";
    }
    if (wr.kernel) {
      double tk = wr.kernel->median;
      if (wr.t_sol > 0) wr.fraction_of_sol = wr.t_sol / tk;
      if (wr.reference) wr.speedup_vs_reference = wr.reference->median / tk;
      if (wr.pytorch) wr.speedup_vs_pytorch = wr.pytorch->median / tk;
      for (auto& [label, s] : wr.baselines) wr.speedup_vs_baseline[label] = s.median / tk;
      // The score's speed of light is the datasheet's (no kernel reaches it, so a kernel as fast as the baseline
      // scores ~0.5, as SOL-ExecBench's does); the calibrated ceilings give fraction_of_sol beside it.
      if (wr.baseline_time && wr.t_floor > 0) wr.score = sol_score(tk, *wr.baseline_time, wr.t_floor);
    }
    score_in.push_back({wr.weight, r.candidate.verdict.accepted && wr.kernel.has_value(),
                        wr.kernel ? wr.kernel->median : 0, wr.t_floor, wr.baseline_time});
  }
  r.task_score = r.candidate.verdict.accepted ? task_score(score_in) : std::optional<double>(0.0);
}

}  // namespace

// Over ~100 lines on purpose: what is left is the guard's order of steps, each with its early exit, and the cache
// holds (candidate, goldens, reference, leader) that must live until the evaluation ends; the steps themselves
// are the functions above.
EvalReport evaluate_kernel(const Task& task, const std::filesystem::path& kernel, const EvalOptions& o) {
  auto t0 = Clock::now();
  EvalReport r;
  r.task = task.name;
  r.task_dir = task.dir.string();
  r.kernel = kernel.string();
  r.backend = std::string(backend_name(o.backend));
  std::random_device rd;
  r.seed_base = o.seed ? *o.seed : (static_cast<uint64_t>(rd()) & 0xffffffffu) << 8;
  // Every input's secret: the run's (hive, bench), else derived from --seed (a reproducible evaluation, whose
  // goldens are kept and reused: anyone who knows the seed can predict its inputs), else random.
  const std::string secret = o.input_secret ? *o.input_secret
                             : o.seed       ? InputSecret::reproducible(*o.seed).hex()
                                            : InputSecret::random().hex();
  auto done = [&]() -> EvalReport& {
    r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return r;
  };
  BuildOptions bo = o.build;
  bo.backend = o.backend;

  // Check 1 first: a kernel that does not build (or calls what it may not) is rejected before anything else runs.
  // The task's PyTorch reference as the kernel under test (o.candidate_pytorch) has nothing to build.
  r.candidate.label = o.candidate_pytorch ? "pytorch" : "candidate";
  r.candidate.source = o.candidate_pytorch ? std::filesystem::path(task.dir) / "definition.json" : kernel;
  std::optional<cache::Hold> cand_held;
  if (o.candidate_pytorch && task.pytorch_reference.empty()) {
    r.harness_error = fmt::format("task {} has no PyTorch reference (definition.json: reference) to time", task.name);
    return done();
  }
  if (!o.candidate_pytorch) {
    r.candidate.build = build_held(task, kernel, bo, cand_held);
    std::vector<SymbolViolation> violations;
    if (r.candidate.build.ok) violations = scan_symbols(r.candidate.build.library, task.policy, o.backend);
    if (auto rej = build_rejection(r.candidate.build, violations)) {
      r.candidate.verdict.rejection = *rej;
      r.task_score = 0.0;
      return done();
    }
  }

  // The goldens' source: the task's native reference for the backend, else its PyTorch reference (run by the judge
  // in a Python executor of its own: python/khive_torch/executor.py).
  auto ref_src = task.reference_for(o.backend);
  const TorchPython* torch = nullptr;
  if (!ref_src) {
    if (task.pytorch_reference.empty()) {
      r.harness_error = fmt::format(
          "task {} has no {} reference (definition.json: khive.reference.{}) and no PyTorch reference "
          "(definition.json: reference)",
          task.name, backend_name(o.backend), backend_name(o.backend));
      return done();
    }
    try {
      torch = &torch_python();
    } catch (const std::exception& e) {
      r.harness_error =
          fmt::format("task {} has only a PyTorch reference, which makes its goldens: {}", task.name, e.what());
      return done();
    }
  }

  // The task's golden unit, held for the whole evaluation (hold_goldens).
  std::optional<cache::Hold> golden_hold;
  PrivateGoldens private_goldens;
  std::filesystem::path run_gdir;
  try {
    run_gdir = hold_goldens(task, o, r, golden_hold, private_goldens, torch ? torch->torch_version : "",
                            InputSecret::from_hex(secret).fingerprint());
  } catch (const std::exception& e) {
    r.harness_error = std::string("cache: ") + e.what();
    return done();
  }
  if (o.backend == Backend::cuda) r.clocks = query_clocks(o.judge);

  // The reference: built now (the judge runs it for the goldens it lacks), held for the whole evaluation.
  JobBase jb = job_base(task, o, r.seed_base, secret, run_gdir);
  std::optional<cache::Hold> ref_held;
  if (ref_src) {
    auto t_golden = Clock::now();
    BuildResult ref_build = build_held(task, *ref_src, bo, ref_held);
    if (!ref_build.ok) {
      r.harness_error = "the task's reference does not build: " + ref_build.summary() + "\n" +
                        format_diagnostics(ref_build.diagnostics);
      return done();
    }
    r.golden_seconds = std::chrono::duration<double>(Clock::now() - t_golden).count();
    jb.job.reference_library = ref_build.library.string();
  } else {
    jb.job.reference_python = torch->executable;
    jb.job.reference_pythonpath = torch->pythonpath;
    jb.job.reference_jail = pytorch_jail(task, o.backend);  // the reference is the task's Python: jailed
  }

  // One judge per kernel. With a leader, the candidate's judge also runs check 11 (both kernels in their own
  // executors, interleaved): its timings then come from the A/B.
  std::optional<cache::Hold> leader_held;
  std::optional<std::filesystem::path> leader_lib;
  if (o.leader) {
    BuildResult lb = build_held(o.leader_is_vendor ? baseline_task(task) : task, *o.leader, bo, leader_held);
    if (!lb.ok) {
      r.harness_error = "the leader does not build: " + lb.summary();
      return done();
    }
    leader_lib = lb.library;
  }
  {
    Job job = jb.job;
    job.library = r.candidate.build.library.string();
    job.library_vendor = allows_vendor(task);
    if (o.candidate_pytorch) {
      try {
        set_pytorch_kernel(job, task, o.backend);
      } catch (const std::exception& e) {
        r.harness_error = fmt::format("task {}: its PyTorch reference cannot be timed here: {}", task.name, e.what());
        return done();
      }
    }
    if (leader_lib) {
      job.leader_library = leader_lib->string();
      job.leader_vendor = o.leader_is_vendor;
    }
    JudgeOutcome out = judge_once(job, jb.process, r.candidate.verdict, r.retried);
    account(r.candidate, out);
    r.golden_seconds += r.candidate.golden_seconds;
    if (!r.candidate.verdict.harness_error.empty()) {
      r.harness_error = r.candidate.verdict.harness_error;
      r.ab_failed = o.leader.has_value();
      return done();
    }
    if (out.result && leader_lib && r.candidate.verdict.accepted) read_ab(*out.result, r);
  }
  if (o.measured) {
    r.reference = o.measured->reference;
  } else if (o.candidate_is_reference) {
    r.reference = r.candidate;
    r.reference->label = "reference";
  } else if (o.time_reference && ref_src)
    r.reference = time_kernel(task, "reference", *ref_src, allows_vendor(task), bo, jb, r.retried);
  // Device facts come from the candidate's judge, or the reference's when the candidate never ran; with neither,
  // there is nothing to score.
  r.preflight = r.candidate.verdict.preflight.is_object()
                    ? r.candidate.verdict.preflight
                    : (r.reference && r.reference->verdict.preflight.is_object() ? r.reference->verdict.preflight
                                                                                 : nlohmann::json::object());
  r.device = r.preflight.value("device", o.backend == Backend::cpu ? std::string("cpu") : std::string("cuda"));
  if (!r.candidate.verdict.accepted && !r.preflight.contains("device")) {
    r.task_score = 0.0;
    return done();
  }
  if (o.measured)
    r.baselines = o.measured->baselines;
  else if (o.time_baselines) {
    const Task vendor = baseline_task(task);  // baselines may link cuBLAS(Lt); the candidate above may not
    for (auto& b : task.baselines) {
      if ((o.backend == Backend::cuda) != (b.extension() == ".cu")) continue;
      r.baselines.push_back(time_kernel(vendor, "baseline:" + b.stem().string(), b, true, bo, jb, r.retried));
    }
  }

  const bool pytorch_on_judge = o.use_pytorch && o.pytorch_on_judge.value_or(o.backend == Backend::cuda || !ref_src) &&
                                !task.pytorch_reference.empty();
  if (o.candidate_pytorch) {
    r.pytorch = r.candidate;  // PyTorch itself was the kernel under test: its T_b is its own time
    r.pytorch_baselines = {{"ruler", "judge"}, {"accepted", r.candidate.verdict.accepted}};
  } else if (o.measured) {
    r.pytorch = o.measured->pytorch;
  } else if (pytorch_on_judge && o.time_baselines) {
    r.pytorch = time_pytorch(task, o, jb, r);
  }

  check_plausibility(task, o, r);

  std::optional<PytorchBaselines> pytorch;
  if (o.use_pytorch) {
    try {
      pytorch = find_pytorch_baselines(task, o.backend, r.device);
    } catch (const TaskFormatError& e) {
      r.harness_error = e.what();
      return done();
    }
  }
  score_workloads(task, pytorch, r);
  return done();
}

}  // namespace khive
