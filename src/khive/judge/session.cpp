#include "khive/judge/session.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "khive/guard/rules.hpp"

namespace khive {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

constexpr int kCalibrationExchanges = 30;
constexpr int kBatchCalibrationExchanges = 9;

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

int64_t default_memory_limit() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page / 4 * 3 : 0;
}

}  // namespace

struct Session::PhaseTimer {
  double& acc;
  Clock::time_point t0 = Clock::now();
  PhaseTimer(Session& s, const char* phase) : acc(s.phases_[phase]) {}
  ~PhaseTimer() { acc += since(t0); }
};

Session::Session(JudgeDevice& dev, const Task& task, const Job& job, ProgressFn progress)
    : dev_(dev), task_(task), job_(job), progress_(std::move(progress)),
      goldens_(dev, task, job, [this](Arena& a, int set) { run_reference(a, set); }), rng_(std::random_device{}()) {
  lead_.is_candidate = false;
}

Session::~Session() = default;

bool Session::selected(const Workload& w) const {
  if (auto b = parse_backend(job_.backend); b && !w.runs_on(*b)) return false;
  return job_.only_workloads.empty() || std::find(job_.only_workloads.begin(), job_.only_workloads.end(), w.uuid) != job_.only_workloads.end();
}

// ---------------------------------------------------------------------------------------------- executors

std::unique_ptr<ExecutorProcess> Session::start(const std::string& role, const std::string& library, bool vendor) {
  ExecutorSpec spec;
  spec.role = role;
  spec.path = job_.executor;
  spec.timeout_s = job_.timeout_s;
  spec.omp_threads = job_.omp_threads;
  spec.setup.backend = job_.backend;
  spec.setup.library = library;
  spec.setup.vendor_libraries = vendor;
  spec.setup.seccomp = job_.sandbox.seccomp;
  spec.setup.landlock = job_.sandbox.landlock;
  spec.setup.new_netns = job_.sandbox.new_netns;
  spec.setup.drop_capabilities = job_.sandbox.drop_capabilities;
  spec.setup.memory_limit = job_.cpu_memory_limit > 0 ? job_.cpu_memory_limit : default_memory_limit();
  // On a GPU both sides poll briefly for each other's message (the host's cores are idle then): wake-ups stay short
  // and steady in the judge's clock. On the CPU the cores belong to the kernel.
  spec.setup.spin_s = job_.backend == "cuda" ? 2e-3 : 0;
  spec.spin_s = spec.setup.spin_s;
  PhaseTimer pt(*this, "executors");
  try {
    return std::make_unique<ExecutorProcess>(spec, dev_);
  } catch (const ExecutorFault& f) {
    // A GPU driver that cannot initialise inside the filesystem view: run without it, and say so.
    if (job_.backend == "cuda" && spec.setup.landlock && f.before_load) {
      spec.setup.landlock = false;
      auto ex = std::make_unique<ExecutorProcess>(spec, dev_);
      const_cast<nlohmann::json&>(ex->sandbox())["landlock"] =
          std::string("off: the CUDA driver did not initialise inside the view (") + f.what() + ")";
      return ex;
    }
    throw;
  }
}

void Session::start_kernels() {
  auto prepare = [&](Kernel& k, const std::string& role, const std::string& lib, bool vendor) {
    try {
      k.ex = start(role, lib, vendor);
      PhaseTimer pt(*this, "executors");
      k.overhead = k.ex->calibrate(kCalibrationExchanges);  // before any kernel code is in the process
      // A timed batch follows the judge's own device work (fresh inputs, poison, the flush): on a GPU shared by two
      // processes that costs a context switch the null exchange above never sees (an honest 4M-element vector add
      // showed 260 us per batch beyond its events on the H200). So the batch overheads are measured the way batches
      // run, flush first, at every power of two up to the largest batch, still before the kernel is loaded (a
      // loaded kernel could slow the null calls down to shrink its own times).
      for (int c = 1;; c *= 2) {
        k.batch_overhead[c] = k.ex->calibrate_batch(c, kBatchCalibrationExchanges, [&] { dev_.flush({}); });
        if (c >= std::max(1, job_.timing.max_batch)) break;
      }
      progress_(Check::run, "", "loading the " + role);
      k.ex->load();
    } catch (const ExecutorFault& f) {
      fault(f, role);
    }
  };
  prepare(cand_, "candidate", job_.library, job_.library_vendor);
  if (!job_.leader_library.empty()) {
    prepare(lead_, "leader", job_.leader_library, job_.leader_vendor);
    // One overhead for both sides of check 11: each executor's own calibration carries its own error, which would
    // be a fixed bias between them (for a 5 us kernel a few microseconds of it over a batch is several percent).
    auto pool = [](const Overhead& x, const Overhead& y) {
      std::vector<double> pooled = x.samples_s;
      pooled.insert(pooled.end(), y.samples_s.begin(), y.samples_s.end());
      return Overhead::of(std::move(pooled));
    };
    cand_.overhead = lead_.overhead = pool(cand_.overhead, lead_.overhead);
    for (auto& [c, o] : cand_.batch_overhead)
      if (lead_.batch_overhead.count(c)) o = lead_.batch_overhead[c] = pool(o, lead_.batch_overhead[c]);
  }
}

// The task's PyTorch reference in a process of its own (python/khive_torch/executor.py), for a task with no native
// reference on this backend. It is the task author's trusted code and needs the interpreter and the torch install,
// so the candidates' sandbox is not applied (docs/guard.md, "Isolation"); it sees only the regions shared with it.
std::unique_ptr<ExecutorProcess> Session::start_pytorch_reference() {
  ExecutorSpec spec;
  spec.role = "reference";
  spec.path = job_.reference_python;
  spec.args = {"-m", "khive_torch.executor"};
  spec.env = {"PYTHONPATH=" + job_.reference_pythonpath, "PYTHONDONTWRITEBYTECODE=1"};
  spec.timeout_s = job_.timeout_s;
  spec.omp_threads = job_.omp_threads;
  spec.setup.backend = job_.backend;
  spec.setup.task_dir = job_.task_dir;
  spec.setup.seccomp = spec.setup.landlock = spec.setup.new_netns = spec.setup.drop_capabilities = false;
  PhaseTimer pt(*this, "executors");
  return std::make_unique<ExecutorProcess>(spec, dev_);
}

void Session::run_reference(Arena& a, int set) {
  const bool pytorch = job_.reference_library.empty() && !job_.reference_python.empty();
  const bool staged = pytorch && dev_.backend() != "cpu";
  try {
    if (!ref_) {
      if (!pytorch && job_.reference_library.empty()) throw HarnessError{"a golden is missing and the job names no reference to make it"};
      ref_ = pytorch ? start_pytorch_reference()
                     : start("reference", job_.reference_library, task_.policy.allows("cublas") || task_.policy.allows("cublasLt"));
      ref_->load();
    }
    if (ref_arena_ != a.id()) {
      if (staged) {
        if (!host_) host_ = make_cpu_judge_device();
        staged_in_ = host_->region(a.inputs_region().bytes());
        staged_gold_ = host_->region(a.goldens_region().bytes());
        staged_in_->seal_against_writes();  // the reference maps it read-only; the judge's own mapping still writes
        Arena::Share s = a.share_staged(*staged_in_, *staged_gold_);
        ref_->share(s.map, s.layout, s.fds);
        ref_arena_ = a.id();
      } else {
        share_reference(a);
      }
    }
    dev_.synchronize();
    // Staged: the set's inputs as the judge made them on the device, copied byte for byte; its goldens back after.
    auto host_of = [](const SharedRegion& dev_region, SharedRegion& host_region, const void* p) {
      return host_region.ptr() + (static_cast<const char*>(p) - dev_region.ptr());
    };
    // The golden slots go over poisoned as the GoldenStore left them, so an output never written still shows.
    if (staged) {
      for (std::size_t i = 0; i < task_.inputs.size(); ++i)
        if (!task_.inputs[i].scalar) dev_.to_host(host_of(a.inputs_region(), *staged_in_, a.input(set, i)), a.input(set, i), a.in_bytes(i));
      for (std::size_t o = 0; o < task_.outputs.size(); ++o)
        dev_.to_host(host_of(a.goldens_region(), *staged_gold_, a.golden(set, o)), a.golden(set, o), a.out_bytes(o));
    }
    ref_->call({{set, a.scalars(set)}});
    if (staged) {
      for (std::size_t o = 0; o < task_.outputs.size(); ++o)
        dev_.from_host(a.golden(set, o), host_of(a.goldens_region(), *staged_gold_, a.golden(set, o)), a.out_bytes(o));
      dev_.synchronize();
    }
  } catch (const ExecutorFault& f) {
    fault(f, "reference");
  }
}

void Session::share(Kernel& k, Arena& a) {
  try {
    k.ex->share(a, false);
  } catch (const ExecutorFault& f) {
    fault(f, k.ex->role());
  }
}

void Session::share_reference(Arena& a) {
  ref_->share(a, true);
  ref_arena_ = a.id();
}

void Session::fault(const ExecutorFault& f, const std::string& role) {
  const std::string log = role == "candidate" && cand_.ex ? cand_.ex->log_tail() : "";
  if (role == "reference") throw HarnessError{std::string("the task's reference failed: ") + f.what(), f.external};
  if (role == "leader") throw HarnessError{std::string("the leader failed (it was accepted before): ") + f.what(), f.external};
  if (f.external) throw HarnessError{f.what(), true};
  if (f.before_load) throw HarnessError{f.what(), false};
  const Check c = f.reason == Reason::work_after_return || f.reason == Reason::timing_disagrees ? Check::timing : Check::run;
  throw Rejected{Rejection{c, f.reason, current_, f.what(), log}};
}

// ---------------------------------------------------------------------------------------------- calls

void Session::fill_inputs(Arena& a, int set, const Workload& w, const InputSpec& s) {
  PhaseTimer pt(*this, "fill");
  for (std::size_t i = 0; i < task_.inputs.size(); ++i) {
    const auto& t = task_.inputs[i];
    const DistParams d = dist_params(task_.distribution_for(t.name, w));
    if (t.scalar) {
      auto it = w.inputs.find(t.name);
      const double v = (it != w.inputs.end() && it->second.kind == InputSource::Kind::scalar)
                           ? it->second.value
                           : input_value(d, s.perturb_seed ? s.perturb_seed : s.seed, i, 0);
      unsigned char* slot = a.scalar(set, i);
      std::fill(slot, slot + 8, 0);
      num::store(t.dtype, slot, 0, v);
    } else {
      dev_.fill(t.dtype, a.input(set, i), a.n_in(i), d, s, i);
    }
  }
}

std::vector<uint64_t> Session::hashes(Arena& a, int set) {
  if (a.inputs_sealed()) return {};  // nothing but the judge can write them
  PhaseTimer pt(*this, "checksum");
  std::vector<uint64_t> h;
  for (std::size_t i = 0; i < task_.inputs.size(); ++i) h.push_back(task_.inputs[i].scalar ? 0 : dev_.checksum(a.input(set, i), a.in_bytes(i)));
  return h;
}

void Session::check_inputs(Arena& a, int set, const std::vector<uint64_t>& before, const Workload& w, const std::string& context) {
  if (before.empty()) return;
  std::vector<uint64_t> after = hashes(a, set);
  for (std::size_t i = 0; i < before.size(); ++i)
    if (before[i] != after[i]) throw Rejected{input_mutated(task_.inputs[i].name, w.uuid, context)};
}

void Session::poison_outputs(Arena& a, int first, int count, Poison p) {
  PhaseTimer pt(*this, "poison");
  for (int k = first; k < first + count; ++k)
    for (std::size_t o = 0; o < task_.outputs.size(); ++o) dev_.poison(task_.outputs[o].dtype, a.output(k, o), a.n_out(o), p);
}

Exchange Session::call(Kernel& k, Arena& a, int first, int count, const std::string& context) {
  dev_.synchronize();  // the judge's fills and sentinels are done before the kernel runs
  std::vector<ExecutorProcess::Call> calls;
  for (int s = first; s < first + count; ++s) calls.push_back({s, a.scalars(s)});
  try {
    Exchange x = k.ex->call(calls);
    if (k.is_candidate) phases_["kernel"] += x.judge_s;
    return x;
  } catch (const ExecutorFault& f) {
    fault(ExecutorFault(f.reason, context + ": " + f.what(), f.external, f.before_load), k.ex->role());
  }
}

void Session::check_outputs(Arena& a, int set, const std::vector<Golden>& gold, const Workload& w, Poison p, Check check, const std::string& context,
                            const Kernel& k) {
  PhaseTimer pt(*this, "compare");
  for (std::size_t o = 0; o < task_.outputs.size(); ++o) {
    const auto& spec = task_.outputs[o];
    const Tolerance tol = task_.tolerance_for(spec.name, w);
    CompareStats st = goldens_.compare(a, set, o, gold[o], tol, p);
    if (auto r = output_rejection(check, spec.name, st, tol, w.uuid, context, GoldenStore::sample_of(a, o, gold[o]))) {
      if (!k.is_candidate) throw HarnessError{"the leader's output was wrong: " + r->message};
      throw Rejected{*r};
    }
  }
}

// ---------------------------------------------------------------------------------------------- checks 3-7

void Session::correctness(const Workload& w) {
  current_ = w.uuid;
  Arena a(dev_, task_, w, 2);
  share(cand_, a);
  for (int si = 0; si < job_.seeds; ++si) {
    const InputSpec spec{job_.seed_base + static_cast<uint64_t>(si) + 1};
    const std::string ctx = fmt::format("workload {} (seed {})", w.uuid, spec.seed);
    progress_(Check::correctness, w.uuid, ctx);
    fill_inputs(a, 0, w, spec);
    auto before = hashes(a, 0);
    std::vector<Golden> gold;
    {
      PhaseTimer pt(*this, "goldens");
      gold = goldens_.ensure(a, 0, w, spec, false, true);
    }
    poison_outputs(a, 0, 1, Poison::a);
    call(cand_, a, 0, 1, ctx);
    ++correctness_calls_;
    check_inputs(a, 0, before, w, ctx);
    check_outputs(a, 0, gold, w, Poison::a, Check::correctness, ctx, cand_);
    if (si != 0) continue;

    // Check 6: the same inputs again (outputs poisoned with the other sentinel) give the same outputs.
    progress_(Check::determinism, w.uuid, ctx);
    std::vector<std::string> first(task_.outputs.size());
    for (std::size_t o = 0; o < first.size(); ++o) {
      first[o].resize(a.out_bytes(o));
      dev_.to_host(first[o].data(), a.output(0, o), first[o].size());
    }
    poison_outputs(a, 0, 1, Poison::b);
    call(cand_, a, 0, 1, ctx + ", repeated");
    ++correctness_calls_;
    check_inputs(a, 0, before, w, ctx + ", repeated");
    for (std::size_t o = 0; o < first.size(); ++o) {
      const auto& out = task_.outputs[o];
      const Tolerance tol = task_.tolerance_for(out.name, w);
      CompareStats st = dev_.compare(out.dtype, a.output(0, o), first[o].data(), false, a.n_out(o), a.cols_out(o), tol, Poison::b);
      if (auto r = determinism_rejection(out.name, st, tol, w.uuid, ctx)) throw Rejected{*r};
    }

    // Check 7: a few elements changed at the same addresses; new data at the same addresses; the same data at new
    // addresses (set 1). Each must stay correct.
    progress_(Check::anti_caching, w.uuid, ctx);
    struct Variant {
      InputSpec spec;
      const char* what;
      int set;
    };
    const Variant vs[] = {{{spec.seed, job_.seed_base + 202, 0.01}, "a few input elements changed at the same addresses", 0},
                          {{job_.seed_base + 101}, "new input data at the same addresses", 0},
                          {spec, "the same input data at new addresses", 1}};
    for (const auto& v : vs) {
      const std::string vctx = fmt::format("workload {} ({})", w.uuid, v.what);
      fill_inputs(a, v.set, w, v.spec);
      auto vb = hashes(a, v.set);
      std::vector<Golden> vg;
      {
        PhaseTimer pt(*this, "goldens");
        vg = goldens_.ensure(a, v.set, w, v.spec, false, true);
      }
      poison_outputs(a, v.set, 1, Poison::a);
      call(cand_, a, v.set, 1, vctx);
      ++correctness_calls_;
      check_inputs(a, v.set, vb, w, vctx);
      check_outputs(a, v.set, vg, w, Poison::a, Check::anti_caching, vctx, cand_);
    }
  }
}

// ---------------------------------------------------------------------------------------------- checks 8-9, 11

int Session::batch_size(Arena& a, const Workload& w, std::vector<Kernel*> ks) {
  // Warm-up calls on fresh random inputs (never cached, never seen again); their outputs must be written.
  std::vector<double> est;
  for (Kernel* k : ks) share(*k, a);
  for (int i = 0; i < std::max(1, job_.timing.warmup); ++i)
    for (Kernel* k : ks) {
      const std::string ctx = fmt::format("workload {} (warm-up {} of the {})", w.uuid, i + 1, k->ex->role());
      fill_inputs(a, 0, w, InputSpec{rng_() | 1});
      auto before = hashes(a, 0);
      poison_outputs(a, 0, 1, Poison::a);
      Exchange x = call(*k, a, 0, 1, ctx);
      check_inputs(a, 0, before, w, ctx);
      for (std::size_t o = 0; o < task_.outputs.size(); ++o) {
        const auto& out = task_.outputs[o];
        CompareStats st = dev_.compare(out.dtype, a.output(0, o), a.output(0, o), true, a.n_out(o), a.cols_out(o), Tolerance{}, Poison::a);
        if (st.unwritten > 0) {
          if (!k->is_candidate) throw HarnessError{"the leader left outputs unwritten in " + ctx};
          throw Rejected{Rejection{Check::written, Reason::unwritten_output, w.uuid,
                                   fmt::format("{}: output {} has {} of {} elements never written", ctx, out.name, st.unwritten, st.n),
                                   describe_pattern(st)}};
        }
      }
      est.push_back(std::max(1e-9, x.judge_s - k->overhead.median_s));
    }
  const double t_call = median_of(est);
  const double target = job_.timing.target_batch_s > 0 ? job_.timing.target_batch_s : (job_.backend == "cpu" ? 5e-3 : 1e-3);
  const std::size_t fit = std::max<std::size_t>(1, dev_.memory_budget() / std::max<std::size_t>(1, 2 * Arena::set_bytes(task_, a.axes())));
  const int want = static_cast<int>(std::ceil(target / t_call));
  return static_cast<int>(std::clamp<std::size_t>(static_cast<std::size_t>(std::max(1, want)), 1,
                                                  std::min<std::size_t>(fit, static_cast<std::size_t>(std::max(1, job_.timing.max_batch)))));
}

std::vector<Golden> Session::timed_inputs(Arena& a, int set, const Workload& w, uint64_t k) {
  const InputSpec spec{timed_seed(job_.input_secret, job_.seed_base, w.uuid, k)};
  fill_inputs(a, set, w, spec);
  PhaseTimer pt(*this, "goldens");
  return goldens_.ensure(a, set, w, spec, true, false);
}

Session::Observed Session::timed_batch(Kernel& k, Arena& a, int count, const std::vector<std::vector<Golden>>& gold, const Workload& w,
                                       uint64_t first_k) {
  std::vector<std::vector<uint64_t>> before;
  for (int s = 0; s < count; ++s) before.push_back(hashes(a, s));
  poison_outputs(a, 0, count, Poison::a);
  {
    PhaseTimer pt(*this, "flush");
    dev_.flush(a.touched(0, count));
  }
  const std::string ctx = fmt::format("workload {} (timed calls {}-{} of the {})", w.uuid, first_k, first_k + count - 1, k.ex->role());
  Exchange x = call(k, a, 0, count, ctx);
  for (int s = 0; s < count; ++s) {
    const std::string c = fmt::format("workload {} (timed call {} of the {})", w.uuid, first_k + s, k.ex->role());
    check_inputs(a, s, before[s], w, c);
    check_outputs(a, s, gold[s], w, Poison::a, Check::timed_outputs, c, k);
  }
  double in = 0;
  for (double t : x.in_process_s) in += t;
  return {std::max(1e-9, (x.judge_s - k.overhead_for(count).median_s) / count), in / count, x.judge_s, in, x.drain_s};
}

void Session::check_clock(const Workload& w, const std::vector<Observed>& obs, const Kernel& k, int batch) {
  std::vector<double> judge, in, drain;
  for (const auto& o : obs) {
    judge.push_back(o.judge_s);
    in.push_back(o.in_batch_s);
    drain.push_back(o.drain_s);
  }
  const Overhead o = k.overhead_for(batch);
  std::optional<Rejection> r = clock_rejection(judge, in, o.median_s, o.jitter_s, ClockRule::for_backend(job_.backend), w.uuid);
  if (!r && job_.backend == "cuda") {
    const double idle = dev_.preflight().value("idle_probe_s", 0.0);
    r = drain_rejection(drain, judge, 2 * idle, w.uuid);
  }
  if (!r) return;
  r->message += fmt::format(" [batches of {} call(s); a no-work batch costs {:.1f} us on the judge's clock; drain {:.1f} us]", batch,
                            1e6 * o.median_s, 1e6 * median_of(drain));
  if (!k.is_candidate) throw HarnessError{"the leader failed the clock check: " + r->message};
  throw Rejected{*r};
}

Overhead Session::Kernel::overhead_for(int calls) const {
  if (batch_overhead.empty()) return overhead;
  auto hi = batch_overhead.lower_bound(calls);
  if (hi == batch_overhead.end()) return std::prev(hi)->second;
  if (hi->first == calls || hi == batch_overhead.begin()) return hi->second;
  auto lo = std::prev(hi);
  const double f = static_cast<double>(calls - lo->first) / (hi->first - lo->first);
  Overhead o;
  o.median_s = lo->second.median_s + f * (hi->second.median_s - lo->second.median_s);
  o.jitter_s = std::max(lo->second.jitter_s, hi->second.jitter_s);
  return o;
}

nlohmann::json Session::time_solo(const Workload& w) {
  current_ = w.uuid;
  progress_(Check::timing, w.uuid, "warm-up");
  int batch;
  {
    Arena warm(dev_, task_, w, 1);
    batch = batch_size(warm, w, {&cand_});
  }
  Arena a(dev_, task_, w, batch);
  share(cand_, a);
  StoppingRule rule{static_cast<std::size_t>(job_.timing.min_samples), static_cast<std::size_t>(job_.timing.max_samples), job_.timing.target_noise,
                    job_.timing.time_cap_s};
  std::vector<Observed> obs;
  std::vector<double> samples;
  uint64_t k = 0;
  const auto t0 = Clock::now();
  progress_(Check::timing, w.uuid, fmt::format("timed batches of {} call(s)", batch));
  for (;;) {
    std::vector<std::vector<Golden>> gold;
    for (int s = 0; s < batch; ++s) gold.push_back(timed_inputs(a, s, w, k + static_cast<uint64_t>(s)));
    obs.push_back(timed_batch(cand_, a, batch, gold, w, k));
    samples.push_back(obs.back().sample_s);
    k += static_cast<uint64_t>(batch);
    // The cap is wall time, the judge's own work included (fresh inputs, goldens, comparisons): it bounds how long
    // a workload takes once the minimum samples are in.
    if (should_stop(samples, since(t0), rule)) break;
  }
  check_clock(w, obs, cand_, batch);
  std::vector<double> in, drain;
  for (const auto& o : obs) in.push_back(o.in_process_s), drain.push_back(o.drain_s);
  return {{"workload", w.uuid},
          {"samples_s", samples},
          {"in_process_s", in},
          {"drain_s", drain},
          {"batch", batch},
          {"validated", k},
          {"overhead_s", cand_.overhead_for(batch).median_s}};
}

nlohmann::json Session::time_ab(const Workload& w, AbTest& test, AbTest& on_events) {
  current_ = w.uuid;
  progress_(Check::acceptance, w.uuid, "warm-up of both");
  int batch;
  {
    Arena warm(dev_, task_, w, 1);
    batch = batch_size(warm, w, {&lead_, &cand_});
  }
  Arena a(dev_, task_, w, batch);
  share(cand_, a);
  share(lead_, a);
  StoppingRule rule{static_cast<std::size_t>(std::max(job_.timing.min_samples, job_.ab_min_pairs)), static_cast<std::size_t>(job_.timing.max_samples),
                    job_.timing.target_noise, 2 * job_.timing.time_cap_s};
  std::vector<Observed> oa, ob;
  std::vector<double> as, bs;
  uint64_t k = 0;
  const auto t0 = Clock::now();
  progress_(Check::acceptance, w.uuid, fmt::format("interleaved pairs, batches of {} call(s)", batch));
  for (;;) {
    std::vector<std::vector<Golden>> gold;
    for (int s = 0; s < batch; ++s) gold.push_back(timed_inputs(a, s, w, k + static_cast<uint64_t>(s)));
    const bool cand_first = (rng_() & 1) != 0;  // the order inside the pair, drawn at random: the test is exact
    Kernel& first = cand_first ? cand_ : lead_;
    Kernel& second = cand_first ? lead_ : cand_;
    Observed o1 = timed_batch(first, a, batch, gold, w, k);
    Observed o2 = timed_batch(second, a, batch, gold, w, k);
    oa.push_back(cand_first ? o2 : o1);
    ob.push_back(cand_first ? o1 : o2);
    as.push_back(oa.back().sample_s);
    bs.push_back(ob.back().sample_s);
    k += static_cast<uint64_t>(batch);
    if (should_stop_pairs(as, bs, since(t0), rule)) break;
  }
  check_clock(w, ob, cand_, batch);
  check_clock(w, oa, lead_, batch);
  test = ab_test(as, bs);
  std::vector<double> ea, eb;
  for (std::size_t i = 0; i < oa.size() && i < ob.size(); ++i) ea.push_back(oa[i].in_process_s), eb.push_back(ob[i].in_process_s);
  on_events = ab_test(ea, eb);
  std::vector<double> in, drain;
  for (const auto& o : ob) in.push_back(o.in_process_s), drain.push_back(o.drain_s);
  return {{"workload", w.uuid},
          {"samples_s", bs},
          {"in_process_s", in},
          {"drain_s", drain},
          {"batch", batch},
          {"validated", 2 * k},
          {"overhead_s", cand_.overhead_for(batch).median_s},
          {"leader_samples_s", as}};
}

// ---------------------------------------------------------------------------------------------- the evaluation

nlohmann::json Session::run() {
  nlohmann::json result = nlohmann::json::object();
  nlohmann::json timing = nlohmann::json::array(), ab = nlohmann::json::array();
  nlohmann::json sandbox = nlohmann::json::object();
  try {
    start_kernels();
    if (job_.check_correctness)
      for (const auto& w : task_.workloads)
        if (w.checks_correctness() && selected(w)) correctness(w);
    std::vector<AbTest> tests, event_tests;
    std::vector<double> weights;
    if (job_.time)
      for (const auto& w : task_.workloads) {
        if (!w.is_perf() || !selected(w)) continue;
        if (lead_.ex) {
          AbTest t, te;
          timing.push_back(time_ab(w, t, te));
          tests.push_back(t);
          event_tests.push_back(te);
          weights.push_back(w.weight);
          ab.push_back({{"workload", w.uuid},
                        {"pairs", t.pairs},
                        {"ratio", t.ratio},
                        {"median_ratio", t.median_ratio},
                        {"p_faster", t.p_faster},
                        {"p_slower", t.p_slower},
                        {"noise", t.noise},
                        {"valid", t.valid},
                        {"events", {{"ratio", te.ratio}, {"p_faster", te.p_faster}, {"p_slower", te.p_slower}, {"valid", te.valid}}}});
        } else {
          timing.push_back(time_solo(w));
        }
      }
    current_.clear();
    if (lead_.ex) {
      AbRule rule{job_.ab_alpha, job_.ab_alpha_slower, job_.ab_min_gain, static_cast<std::size_t>(job_.ab_min_pairs)};
      LeaderDecision d = decide_leader(tests, weights, rule);
      d = confirm_on_events(std::move(d), event_tests, weights, rule);
      for (std::size_t i = 0; i < ab.size(); ++i) {
        ab[i]["holm_threshold"] = d.holm_threshold[i];
        ab[i]["faster"] = std::find(d.faster.begin(), d.faster.end(), i) != d.faster.end();
        ab[i]["slower"] = std::find(d.slower.begin(), d.slower.end(), i) != d.slower.end();
      }
      result["ab"] = ab;
      result["ab_decision"] = {
          {"new_leader", d.new_leader}, {"weighted_ratio", d.weighted_ratio}, {"why", d.why}, {"alpha", rule.alpha}, {"min_gain", rule.min_gain}};
    }
    // A kernel whose process does not end cleanly (destructors that crash) is rejected.
    try {
      cand_.ex->finish();
    } catch (const ExecutorFault& f) {
      fault(f, "candidate");
    }
  } catch (const Rejected& r) {
    result["rejection"] = r.r.to_json();
  } catch (const HarnessError& h) {
    result["error"] = h.why;
    result["retryable"] = h.retryable;
  } catch (const std::exception& e) {
    result["error"] = std::string("judge: ") + e.what();
  }
  for (auto* ex : {cand_.ex.get(), lead_.ex.get(), ref_.get()})
    if (ex) sandbox[ex->role()] = ex->sandbox();
  result["sandbox"] = sandbox;
  result["timing"] = timing;
  result["correctness_calls"] = correctness_calls_;
  result["overhead_s"] = {{"candidate", cand_.overhead.median_s}, {"jitter", cand_.overhead.jitter_s}};
  const GoldenStats& gs = goldens_.stats();
  result["goldens"] = {{"cached", gs.cached}, {"made", gs.made}, {"reference_s", gs.reference_s}};
  result["phases"] = phases_;
  if (cand_.ex && result.contains("rejection")) result["log"] = cand_.ex->log_tail(4000);
  return result;
}

}  // namespace khive
