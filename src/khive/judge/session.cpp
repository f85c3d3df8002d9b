#include "khive/judge/session.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "khive/executor/gate.hpp"
#include "khive/guard/rules.hpp"
#include "khive/support/subprocess.hpp"

namespace khive {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// CPU: null exchanges per executor. Every CPU call is an exchange of its own, so the exchange's cost is subtracted
// from every sample: its median must be known to ~1 us (the jitter is tens of microseconds).
constexpr int kCalibrationExchanges = 200;
// The gate's latency (GPU): this many null calls in each of this many exchanges, before the kernel is loaded.
constexpr int kGateCalibrationCalls = 32;
constexpr int kGateCalibrationExchanges = 3;
// What a timed batch aims at: long enough that an exchange's fixed cost (the message, waking and stopping the
// executor, the drain) is small beside the calls' own device time.
constexpr double kGpuBatchTarget_s = 2e-3;
// The most calls of one gated batch: every call needs a golden of its own, and the gated clock's samples are single
// calls, so a longer batch buys no precision, only goldens (a 5 us kernel would otherwise get 256 per batch).
constexpr int kGpuMaxBatch = 16;
constexpr double kCpuBatchTarget_s = 5e-3;
// The most input and output tensors a gated call checksums (slots per call in the device's accumulators).
constexpr int kSlotsPerCall = 16;

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

int64_t default_memory_limit() { return physical_memory_bytes() / 4 * 3; }

// One time of its own per call, and a copy time per call or none: whatever the executor (executor.hpp), an answer of
// another shape is out of protocol, never a sample floored at a missing time.
void check_answer(const Exchange& x, std::size_t calls) {
  if (x.in_process_s.size() != calls || (!x.copy_s.empty() && x.copy_s.size() != calls))
    throw ExecutorFault(Reason::protocol_violation,
                        fmt::format("{} call(s) answered with {} time(s) of its own and {} copy time(s)", calls,
                                    x.in_process_s.size(), x.copy_s.size()));
}

}  // namespace

struct Session::PhaseTimer {
  double& acc;
  Clock::time_point t0 = Clock::now();
  PhaseTimer(Session& s, const char* phase) : acc(s.phases_[phase]) {}
  ~PhaseTimer() { acc += since(t0); }
};

Session::Session(JudgeDevice& dev, const Task& task, const Job& job, ProgressFn progress, ExecutorFactory make)
    : dev_(dev), task_(task), job_(job), progress_(std::move(progress)),
      make_(make ? std::move(make)
                 : ExecutorFactory([](const ExecutorSpec& spec, JudgeDevice& d) -> std::unique_ptr<Executor> {
                     return std::make_unique<ExecutorProcess>(spec, d);
                   })),
      keys_(InputSecret::from_hex(job.input_secret)),
      goldens_(dev, task, job, keys_,
               [this](Arena& a, int set, const Workload& w, const InputSpec& s) {
                 fill_inputs(a, set, w, s, true);
                 run_reference(a, set);
               }),
      rng_(std::random_device{}()) {
  lead_.is_candidate = false;
}

double Session::Observed::median_s() const { return median_of(sample_s); }
double Session::Observed::in_process_median_s() const { return median_of(in_process_s); }

Session::~Session() = default;

bool Session::selected(const Workload& w) const {
  if (auto b = parse_backend(job_.backend); b && !w.runs_on(*b)) return false;
  return job_.only_workloads.empty() ||
         std::find(job_.only_workloads.begin(), job_.only_workloads.end(), w.uuid) != job_.only_workloads.end();
}

// ---------------------------------------------------------------------------------------------- executors

std::unique_ptr<Executor> Session::start(const std::string& role, const std::string& library, bool vendor) {
  ExecutorSpec spec;
  spec.role = role;
  spec.path = job_.executor;
  spec.timeout_s = job_.timeout_s;
  spec.omp_threads = job_.omp_threads;
  spec.setup.backend = job_.backend;
  spec.setup.library = library;
  spec.setup.vendor_libraries = vendor;
  if (const auto w = exec::unknown_exec_trial(std::getenv("KHIVE_EXEC_TRIAL"))) {
    std::string known;
    for (std::string_view k : exec::kExecTrials) known += (known.empty() ? "" : ", ") + std::string(k);
    throw std::runtime_error("KHIVE_EXEC_TRIAL has '" + *w + "': expected comma-separated switches from " + known);
  }
  const bool bare = exec::exec_trial("no_sandbox");  // a measurement's switch (gate.hpp); the preflight says so
  if (const auto prof = exec::profiler_argv(std::getenv("KHIVE_EXEC_PROFILER")); !prof.words.empty()) {
    if (!prof.error.empty()) throw std::runtime_error(prof.error);
    if (!bare)
      throw std::runtime_error(
          "KHIVE_EXEC_PROFILER is set: a profiler runs the executor only with KHIVE_EXEC_TRIAL=no_sandbox (its "
          "injection makes system calls outside the sandbox's allowlist)");
    spec.args.insert(spec.args.begin(), spec.path);
    spec.args.insert(spec.args.begin(), prof.words.begin() + 1, prof.words.end());
    spec.path = prof.words.front();
  }
  spec.setup.seccomp = job_.sandbox.seccomp && !bare;
  spec.setup.landlock = job_.sandbox.landlock && !bare;
  spec.setup.new_netns = job_.sandbox.new_netns && !bare;
  spec.setup.drop_capabilities = job_.sandbox.drop_capabilities && !bare;
  spec.setup.memory_limit = job_.cpu_memory_limit > 0 ? job_.cpu_memory_limit : default_memory_limit();
  // On a GPU both sides poll briefly for each other's message (the host's cores are idle then): wake-ups stay short
  // and steady in the judge's clock. On the CPU the cores belong to the kernel.
  spec.setup.spin_s = job_.backend == "cuda" ? 2e-3 : 0;
  spec.spin_s = spec.setup.spin_s;
  PhaseTimer pt(*this, "executors");
  try {
    return make_(spec, dev_);
  } catch (const ExecutorFault& f) {
    // A GPU driver that cannot initialise inside the filesystem view: run without it, and say so.
    if (job_.backend == "cuda" && spec.setup.landlock && f.before_load) {
      spec.setup.landlock = false;
      auto ex = make_(spec, dev_);
      ex->note_sandbox("landlock",
                       std::string("off: the CUDA driver did not initialise inside the view (") + f.what() + ")");
      return ex;
    }
    throw;
  }
}

void Session::start_kernels() {
  auto prepare = [&](Kernel& k, const std::string& role, const std::string& lib, bool vendor) {
    try {
      k.ex = k.is_candidate && job_.library_pytorch ? start_pytorch(role, true) : start(role, lib, vendor);
      calibrate(k);  // before any kernel code is in the process
      progress_(Check::run, "", "loading the " + role);
      k.ex->load();
    } catch (const ExecutorFault& f) {
      fault(f, role);
    }
  };
  prepare(cand_, "candidate", job_.library, job_.library_vendor);
  if (!job_.leader_library.empty()) {
    prepare(lead_, "leader", job_.leader_library, job_.leader_vendor);
    // Each executor keeps its own calibration: two processes' exchanges (CPU) or gates (GPU) can differ by more than
    // a median of 200 null exchanges or 96 gated calls is uncertain, and a difference between them would be a fixed
    // bias between the sides.
  }
}

// The task's PyTorch reference in a process of its own (python/khive_torch/executor.py): for a task with no native
// reference on this backend (the goldens), or as the kernel under test (`as_kernel`: PyTorch's time on the judge's
// clock, python/khive_torch/timed.py). It needs the interpreter and the torch install, so the candidates' sandbox
// (seccomp's short allowlist) is not applied; khive-jail confines it instead (no network, reads its interpreter and
// the task, writes nothing: docs/guard.md, "Isolation"), and it sees only the regions shared with it.
std::unique_ptr<Executor> Session::start_pytorch(const std::string& role, bool as_kernel) {
  ExecutorSpec spec;
  spec.role = role;
  spec.pytorch = true;
  // Confined by khive-jail when khive asked for it (job.reference_jail: the task's Python may come from the internet).
  std::vector<std::string> argv = job_.reference_jail;
  for (const std::string& a : {job_.reference_python, std::string("-m"), std::string("khive_torch.executor")})
    argv.push_back(a);
  spec.path = argv[0];
  spec.args.assign(argv.begin() + 1, argv.end());
  spec.env = {"PYTHONPATH=" + job_.reference_pythonpath, "PYTHONDONTWRITEBYTECODE=1"};
  spec.timeout_s = job_.timeout_s;
  spec.omp_threads = job_.omp_threads;
  spec.setup.backend = job_.backend;
  spec.setup.task_dir = job_.task_dir;
  spec.setup.as_kernel = as_kernel;
  spec.setup.seccomp = spec.setup.landlock = spec.setup.new_netns = spec.setup.drop_capabilities = false;
  if (as_kernel) spec.setup.spin_s = spec.spin_s = job_.backend == "cuda" ? 2e-3 : 0;  // as start() sets a kernel's
  PhaseTimer pt(*this, "executors");
  return make_(spec, dev_);
}

void Session::run_reference(Arena& a, int set) {
  const bool pytorch = job_.reference_library.empty() && !job_.reference_python.empty();
  const bool staged = pytorch && dev_.backend() != "cpu";
  try {
    if (!ref_) {
      if (!pytorch && job_.reference_library.empty())
        throw HarnessError{"a golden is missing and the job names no reference to make it"};
      ref_ = pytorch ? start_pytorch("reference", false)
                     : start("reference", job_.reference_library,
                             task_.policy.allows("cublas") || task_.policy.allows("cublasLt"));
      ref_->load();
    }
    if (ref_arena_ != a.id()) {
      if (staged) {
        if (!host_) host_ = make_cpu_judge_device();
        staged_in_ = host_->region(a.ref_inputs_region().bytes());
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
    // Staged: the set's reference inputs as the judge made them on the device, copied byte for byte; its goldens back.
    auto host_of = [](const SharedRegion& dev_region, SharedRegion& host_region, const void* p) {
      return host_region.ptr() + (static_cast<const char*>(p) - dev_region.ptr());
    };
    // The golden slots go over poisoned as the GoldenStore left them, so an output never written still shows.
    if (staged) {
      for (std::size_t i = 0; i < task_.inputs.size(); ++i)
        if (!task_.inputs[i].scalar)
          dev_.to_host(host_of(a.ref_inputs_region(), *staged_in_, a.ref_input(set, i)), a.ref_input(set, i),
                       a.in_bytes(i));
      for (std::size_t o = 0; o < task_.outputs.size(); ++o)
        dev_.to_host(host_of(a.goldens_region(), *staged_gold_, a.golden(set, o)), a.golden(set, o), a.out_bytes(o));
    }
    check_answer(ref_->call({{set, a.scalars(set)}}), 1);
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
  if (role == "leader")
    throw HarnessError{std::string("the leader failed (it was accepted before): ") + f.what(), f.external};
  if (f.external) throw HarnessError{f.what(), true};
  if (f.before_load) throw HarnessError{f.what(), false};
  const Check c =
      f.reason == Reason::work_after_return || f.reason == Reason::timing_disagrees ? Check::timing : Check::run;
  throw Rejected{Rejection{c, f.reason, current_, f.what(), log}};
}

// ---------------------------------------------------------------------------------------------- calls

bool Session::on_default_normal(const Workload& w, const TensorSpec& t) const {
  return !t.scalar && !dtype_is_integer(t.dtype) && !task_.distributions.count(t.name) &&
         !w.distributions.count(t.name);
}

void Session::fill_inputs(Arena& a, int set, const Workload& w, const InputSpec& s, bool for_reference) {
  PhaseTimer pt(*this, "fill");
  const InputDraw draw = keys_.draw(s);
  for (std::size_t i = 0; i < task_.inputs.size(); ++i) {
    const auto& t = task_.inputs[i];
    DistParams d = dist_params(task_.distribution_for(t.name, w));
    if (s.centered && on_default_normal(w, t)) d.a = 0.0;
    if (t.scalar) {
      auto it = w.inputs.find(t.name);
      const double v = (it != w.inputs.end() && it->second.kind == InputSource::Kind::scalar)
                           ? it->second.value
                           : value_of_bits(d, prf_u64(draw.perturbed ? draw.perturb : draw.data, kStreamScalar | i, 0));
      unsigned char* slot = a.scalar(set, i);
      std::fill(slot, slot + 8, 0);
      num::store(t.dtype, slot, 0, v);
    } else if (!for_reference && a.ref_holds(set, s)) {
      dev_.copy(a.input(set, i), a.ref_input(set, i), a.in_bytes(i));  // the same bytes, made for the golden just now
    } else {
      dev_.fill(t.dtype, for_reference ? a.ref_input(set, i) : a.input(set, i), a.n_in(i), d, draw, i);
    }
  }
  if (for_reference) a.set_ref_holds(set, s);
}

// The kernels' view of sets already used: overwritten (a byte pattern), so a kernel that runs after another on the same
// sets (check 11) cannot read the coming calls' inputs there before the judge reveals them again.
void Session::scrub_inputs(Arena& a, int first, int count) {
  PhaseTimer pt(*this, "fill");
  for (int s = first; s < first + count; ++s)
    for (std::size_t i = 0; i < task_.inputs.size(); ++i)
      if (!task_.inputs[i].scalar)
        dev_.poison(DType::i8, a.input(s, i), static_cast<int64_t>(a.in_bytes(i)), Poison::a);
}

std::vector<uint64_t> Session::hashes(Arena& a, int set) {
  if (a.inputs_sealed()) return {};  // nothing but the judge can write them
  PhaseTimer pt(*this, "checksum");
  std::vector<uint64_t> h;
  for (std::size_t i = 0; i < task_.inputs.size(); ++i)
    h.push_back(task_.inputs[i].scalar ? 0 : dev_.checksum(a.input(set, i), a.in_bytes(i)));
  return h;
}

void Session::check_inputs(Arena& a, int set, const std::vector<uint64_t>& before, const Workload& w,
                           const std::string& context) {
  if (before.empty()) return;
  std::vector<uint64_t> after = hashes(a, set);
  for (std::size_t i = 0; i < before.size(); ++i)
    if (before[i] != after[i]) throw Rejected{input_mutated(task_.inputs[i].name, w.uuid, context)};
}

void Session::poison_outputs(Arena& a, int first, int count, Poison p) {
  PhaseTimer pt(*this, "poison");
  for (int k = first; k < first + count; ++k)
    for (std::size_t o = 0; o < task_.outputs.size(); ++o)
      dev_.poison(task_.outputs[o].dtype, a.output(k, o), a.n_out(o), p);
}

Exchange Session::call(Kernel& k, Arena& a, int first, int count, const std::string& context) {
  dev_.synchronize();  // the judge's fills and sentinels are done before the kernel runs
  std::vector<Executor::Call> calls;
  for (int s = first; s < first + count; ++s) calls.push_back({s, a.scalars(s)});
  try {
    Exchange x = k.ex->call(calls);
    if (k.is_candidate) phases_["kernel"] += x.judge_s;
    check_answer(x, calls.size());
    return x;
  } catch (const ExecutorFault& f) {
    fault(ExecutorFault(f.reason, context + ": " + f.what(), f.external, f.before_load), k.ex->role());
  }
}

namespace {
// The root mean square of a golden's finite values on the host (all of them, or its sample); 0 for a device golden.
double golden_rms(const Golden& g, DType t) {
  const std::size_t size = num::size_of(t);
  if (g.kind == Golden::Kind::device || size == 0) return 0.0;
  const int64_t n = static_cast<int64_t>(g.data.size() / size);
  double sum = 0;
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double v = num::load(t, g.data.data(), i);
    if (std::isfinite(v)) sum += v * v, ++count;
  }
  return count ? std::sqrt(sum / static_cast<double>(count)) : 0.0;
}
}  // namespace

void Session::check_outputs(Arena& a, int set, const std::vector<Golden>& gold, const Workload& w, Poison p,
                            Check check, const std::string& context, const Kernel& k, bool at_output_scale) {
  PhaseTimer pt(*this, "compare");
  for (std::size_t o = 0; o < task_.outputs.size(); ++o) {
    const auto& spec = task_.outputs[o];
    Tolerance tol = task_.tolerance_for(spec.name, w);
    // On zero-mean inputs results cross zero, and near a crossing an honest kernel's rounding (another summation
    // order) is large against |ref| though tiny against the output's scale: atol grows by rtol x rms(reference). A
    // kernel wrong on the negative half of its data is off by about that scale itself, not by rtol of it.
    if (at_output_scale) tol.atol += tol.rtol * golden_rms(gold[o], spec.dtype);
    CompareStats st = goldens_.compare(a, set, o, gold[o], tol, p);
    if (auto r = output_rejection(check, spec.name, st, tol, w.uuid, context, GoldenStore::sample_of(a, o, gold[o]))) {
      if (!k.is_candidate) throw HarnessError{"the leader's output was wrong: " + r->message};
      throw Rejected{*r};
    }
  }
}

// ---------------------------------------------------------------------------------------------- checks 3-7

std::vector<uint64_t> Session::checked_call(Arena& a, int set, const Workload& w, const InputSpec& spec, Check check,
                                            const std::string& ctx, bool at_output_scale) {
  std::vector<Golden> gold;
  {
    PhaseTimer pt(*this, "goldens");
    gold = goldens_.ensure(a, set, w, spec, false, true);
  }
  fill_inputs(a, set, w, spec);
  auto before = hashes(a, set);
  poison_outputs(a, set, 1, Poison::a);
  call(cand_, a, set, 1, ctx);
  ++correctness_calls_;
  check_inputs(a, set, before, w, ctx);
  check_outputs(a, set, gold, w, Poison::a, check, ctx, cand_, at_output_scale);
  return before;
}

void Session::correctness(const Workload& w) {
  current_ = w.uuid;
  Arena a(dev_, task_, w, 2);
  share(cand_, a);
  for (int si = 0; si < job_.seeds; ++si) {
    const InputSpec spec{job_.seed_base + static_cast<uint64_t>(si) + 1};
    const std::string ctx = fmt::format("workload {} (seed {})", w.uuid, spec.seed);
    progress_(Check::correctness, w.uuid, ctx);
    const auto before = checked_call(a, 0, w, spec, Check::correctness, ctx);
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
      CompareStats st =
          dev_.compare(out.dtype, a.output(0, o), first[o].data(), false, a.n_out(o), a.cols_out(o), tol, Poison::b);
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
    const Variant vs[] = {
        {{spec.seed, job_.seed_base + 202, 0.01}, "a few input elements changed at the same addresses", 0},
        {{job_.seed_base + 101}, "new input data at the same addresses", 0},
        {spec, "the same input data at new addresses", 1}};
    for (const auto& v : vs)
      checked_call(a, v.set, w, v.spec, Check::anti_caching, fmt::format("workload {} ({})", w.uuid, v.what));

    // Check 5 once more on zero-mean inputs, where some input is on the default normal(0.5, 1): its mean catches
    // kernels right only on zero-mean data, and this draw those right only where its positive bias holds (a sum
    // over K of products is ~0.25 K: every value positive, every activation saturated).
    if (std::none_of(task_.inputs.begin(), task_.inputs.end(),
                     [&](const TensorSpec& t) { return on_default_normal(w, t); }))
      continue;
    const InputSpec zero{job_.seed_base + 303, 0, 0.01, true};
    const std::string zctx = fmt::format("workload {} (seed {}, zero-mean inputs)", w.uuid, zero.seed);
    progress_(Check::correctness, w.uuid, zctx);
    checked_call(a, 0, w, zero, Check::correctness, zctx, true);
  }
}

// ---------------------------------------------------------------------------------------------- checks 8-9, 11

void Session::calibrate(Kernel& k) {
  PhaseTimer pt(*this, "executors");
  if (!dev_.gated()) {
    // As a timed call runs: the judge's flush, then one call in one exchange. (A per-workload touch call as on the
    // GPU, tried on this 2-core machine with the executor's OpenMP pool made before load, left real calls' exchanges
    // 230-270 us beyond their own time against 100 us for the touch's: worse than the null exchange.)
    k.overhead = k.ex->calibrate_batch(1, kCalibrationExchanges, [&] { dev_.flush({}); });
    return;
  }
  k.gate = dev_.region(exec::kGateBytes);
  dev_.synchronize();  // the region is zeroed before the executor maps it
  k.ex->share_gate(*k.gate);
  // The same gate a timed call goes through (gated_batch), with nothing revealed and no kernel inside it.
  k.overhead = Overhead::of(calibration_calls(k, kGateCalibrationCalls, kGateCalibrationExchanges, nullptr));
  // Per perf workload, a call that touches that workload's memory, on an arena of its own shape.
  if (job_.time)
    for (const auto& w : task_.workloads) {
      if (!w.is_perf() || !selected(w)) continue;
      Arena cal(dev_, task_, w, 1);
      share(k, cal);
      k.by_workload[w.uuid] =
          Overhead::of(calibration_calls(k, kGateCalibrationCalls, kGateCalibrationExchanges, cal.touch_spans(0)));
    }
}

std::vector<double> Session::calibration_calls(Kernel& k, int calls, int exchanges, const nlohmann::json& touch) {
  std::vector<double> t;
  for (int x = 0; x < exchanges; ++x) {
    const uint32_t first = k.gate_next;
    k.gate_next += static_cast<uint32_t>(calls);
    Exchange e;
    // The judge's side is enqueued once the executor has its message (see gated_batch); any failure once a wait is
    // on the judge's stream releases the gate.
    try {
      e = k.ex->null_gated(calls, first, touch, [&] {
        for (int j = 0; j < calls; ++j) enqueue_gated_call(k, j, first + static_cast<uint32_t>(j), {}, {});
      });
    } catch (...) {
      release_gate(k);
      throw;
    }
    if (!dev_.wait_idle(job_.timeout_s)) {
      release_gate(k);
      throw std::runtime_error("the gate's calibration did not finish on the device");
    }
    for (int j = 0; j < calls; ++j)
      t.push_back(dev_.elapsed_s(2 * j, 2 * j + 1) -
                  (touch.is_null() ? 0.0 : e.in_process_s[static_cast<std::size_t>(j)]));
  }
  return t;
}

void Session::enqueue_gated_call(Kernel& k, int j, uint32_t v, const std::function<void()>& reveal,
                                 const std::function<void()>& after_end) {
  char* g = k.gate->ptr();
  dev_.wait_geq(g + exec::kGateGo, v);  // the executor has queued call j (and finished queueing j - 1)
  if (reveal) reveal();
  dev_.flush_async();
  dev_.mark(2 * j);
  dev_.write_value(g + exec::kGateReady, v);
  dev_.wait_geq(g + exec::kGateDone, v);
  dev_.mark(2 * j + 1);
  if (after_end) after_end();
}

void Session::release_gate(Kernel& k) {
  char* g = k.gate->ptr();
  dev_.release(g + exec::kGateGo, exec::gate_release_value(k.gate_next));
  dev_.release(g + exec::kGateDone, exec::gate_release_value(k.gate_next));
  dev_.wait_idle(job_.timeout_s);
}

std::vector<Session::TimedCall> Session::plan_calls(Arena& a, const Workload& w, CallKind kind, uint64_t first_k,
                                                    int count) {
  std::vector<TimedCall> calls;
  for (int j = 0; j < count; ++j) {
    TimedCall c;
    c.spec = InputSpec{keys_.call_label(kind, job_.seed_base, w.uuid, first_k + static_cast<uint64_t>(j))};
    PhaseTimer pt(*this, "goldens");
    c.gold = goldens_.ensure(a, j, w, c.spec, true, false);  // made on the reference's view: no kernel sees them
    calls.push_back(std::move(c));
  }
  return calls;
}

Session::Observed Session::timed_batch(Kernel& k, Arena& a, const std::vector<TimedCall>& calls, const Workload& w,
                                       uint64_t first_k, const char* what) {
  Observed o =
      dev_.gated() ? gated_batch(k, a, calls, w, first_k, what) : exchanged_batch(k, a, calls, w, first_k, what);
  scrub_inputs(a, 0, static_cast<int>(calls.size()));
  return o;
}

// CPU: one exchange per call, its inputs written just before its message (the executor is stopped between calls,
// so it never runs while a later call's inputs are there).
Session::Observed Session::exchanged_batch(Kernel& k, Arena& a, const std::vector<TimedCall>& calls, const Workload& w,
                                           uint64_t first_k, const char* what) {
  Observed o;
  for (std::size_t j = 0; j < calls.size(); ++j) {
    const int s = static_cast<int>(j);
    const std::string ctx = fmt::format("workload {} ({} call {} of the {})", w.uuid, what, first_k + j, k.ex->role());
    fill_inputs(a, s, w, calls[j].spec);
    auto before = hashes(a, s);
    poison_outputs(a, s, 1, Poison::a);
    {
      PhaseTimer pt(*this, "flush");
      dev_.flush(a.touched(s, 1));
    }
    Exchange x = call(k, a, s, 1, ctx);
    check_inputs(a, s, before, w, ctx);
    check_outputs(a, s, calls[j].gold, w, Poison::a, Check::timed_outputs, ctx, k);
    // A call far shorter than the exchange's jitter (a few microseconds against tens) can read below zero once the
    // null exchange is subtracted; the executor's own time is then the floor. It can only raise a sample (an executor
    // that reports less changes nothing), so the judge's clock still bounds every sample from below.
    const double own = x.in_process_s.empty() ? 0 : x.in_process_s[0];
    const double copy =
        x.copy_s.empty() ? 0 : x.copy_s[0];  // PyTorch timed as a kernel: its results' copy is not its time
    o.bracket_s.push_back(x.judge_s);
    o.sample_s.push_back(timed_sample(x.judge_s, k.overhead.median_s, own, copy));
    o.copy_s.push_back(copy);
    o.in_process_s.push_back(own);
    o.drain_s += x.drain_s;
  }
  return o;
}

// GPU: the batch's calls are enqueued on both sides of the gate (executor/gate.hpp) and run in one exchange; call
// j's inputs are written on the judge's stream only after the executor has queued call j and call j - 1 has ended,
// and its outputs are checksummed right after its end, so work that goes on after a call ended shows as a changed
// checksum when the batch is validated.
Session::Observed Session::gated_batch(Kernel& k, Arena& a, const std::vector<TimedCall>& calls, const Workload& w,
                                       uint64_t first_k, const char* what) {
  const int n = static_cast<int>(calls.size());
  const std::size_t n_in = task_.inputs.size(), n_out = task_.outputs.size();
  if (n_in + n_out > static_cast<std::size_t>(kSlotsPerCall) || 2 * n * kSlotsPerCall > dev_.checksum_slots() ||
      2 * n > dev_.marks())
    throw HarnessError{fmt::format(
        "a gated batch of {} calls with {} tensors is more than the judge's device can track", n, n_in + n_out)};
  auto slot = [&](int j, std::size_t t, int pass) { return (pass * n + j) * kSlotsPerCall + static_cast<int>(t); };
  const uint32_t first = k.gate_next;
  k.gate_next += static_cast<uint32_t>(n);

  poison_outputs(a, 0, n, Poison::a);
  {
    PhaseTimer pt(*this, "flush");
    dev_.flush({});  // persisting lines reset, L2 written over; synchronised: nothing of the judge's is pending
  }
  std::vector<Executor::Call> cs;
  for (int s = 0; s < n; ++s) cs.push_back({s, a.scalars(s)});
  const std::string ctx =
      fmt::format("workload {} ({} calls {}-{} of the {})", w.uuid, what, first_k, first_k + n - 1, k.ex->role());
  // The judge's side of the gate is enqueued once the executor has its message: a host's enqueue blocks when its
  // queue on the device is full, and the judge's queue drains only as the executor's `go`s come, so enqueueing all
  // of it before telling the executor can wait for ever (the likeliest cause of 6f4db06's hang on the H200: 32
  // calibration calls with reveals and checksums, ~450 operations; 16 timed calls of ~220 had run). Any failure
  // once a wait is on the judge's stream releases the gate: a wait nobody satisfies would hold the judge's stream,
  // and every later synchronisation with it, for ever.
  auto enqueue = [&] {
    for (int j = 0; j < n; ++j)
      enqueue_gated_call(
          k, j, first + static_cast<uint32_t>(j),
          [&] {
            fill_inputs(a, j, w, calls[static_cast<std::size_t>(j)].spec);
            for (std::size_t i = 0; i < n_in; ++i)
              if (!task_.inputs[i].scalar) dev_.checksum_async(a.input(j, i), a.in_bytes(i), slot(j, i, 0));
          },
          [&] {
            for (std::size_t o = 0; o < n_out; ++o)
              dev_.checksum_async(a.output(j, o), a.out_bytes(o), slot(j, n_in + o, 0));
          });
  };
  Exchange x;
  try {
    x = k.ex->call(cs, first, enqueue);
    if (k.is_candidate) phases_["kernel"] += x.judge_s;
    check_answer(x, cs.size());
  } catch (const ExecutorFault& f) {
    release_gate(k);
    fault(ExecutorFault(f.reason, ctx + ": " + f.what(), f.external, f.before_load), k.ex->role());
  } catch (...) {
    release_gate(k);
    throw;
  }
  // The executor synchronised its device before answering, so the judge's side ends within moments; if it does not,
  // some call's `done` was never written (the executor answered before its calls ended).
  if (!dev_.wait_idle(std::max(1.0, 4 * x.judge_s))) {
    release_gate(k);
    Rejection r{
        Check::timing, Reason::work_after_return, w.uuid,
        ctx + ": the executor answered before its calls had ended on the device (a call's end was never signalled)",
        "every call's work must be on the stream passed to khive_launch and finished when the executor answers"};
    if (!k.is_candidate) throw HarnessError{"the leader failed the gate: " + r.message};
    throw Rejected{r};
  }
  Observed o;
  o.drain_s = x.drain_s;
  for (int j = 0; j < n; ++j) {
    const double b = dev_.elapsed_s(2 * j, 2 * j + 1);
    o.bracket_s.push_back(b);
    const double copy =
        j < static_cast<int>(x.copy_s.size()) ? x.copy_s[static_cast<std::size_t>(j)] : 0;  // see exchanged_batch
    const double own = j < static_cast<int>(x.in_process_s.size()) ? x.in_process_s[static_cast<std::size_t>(j)] : 0;
    o.sample_s.push_back(
        timed_sample(b, k.offset(w.uuid).median_s, own, copy));  // the executor's time its floor, as on the CPU
    o.copy_s.push_back(copy);
    o.in_process_s.push_back(own);
  }
  // Validation: inputs unchanged since they were revealed, outputs right, and unchanged since their call ended.
  {
    PhaseTimer pt(*this, "checksum");
    for (int j = 0; j < n; ++j) {
      for (std::size_t i = 0; i < n_in; ++i)
        if (!task_.inputs[i].scalar) dev_.checksum_async(a.input(j, i), a.in_bytes(i), slot(j, i, 1));
      for (std::size_t t = 0; t < n_out; ++t) dev_.checksum_async(a.output(j, t), a.out_bytes(t), slot(j, n_in + t, 1));
    }
    dev_.synchronize();
  }
  const std::vector<uint64_t> at_call = dev_.read_checksums(0, n * kSlotsPerCall),
                              now = dev_.read_checksums(n * kSlotsPerCall, n * kSlotsPerCall);
  for (int j = 0; j < n; ++j) {
    const std::string c = fmt::format("workload {} ({} call {} of the {})", w.uuid, what,
                                      first_k + static_cast<uint64_t>(j), k.ex->role());
    for (std::size_t i = 0; i < n_in; ++i)
      if (!task_.inputs[i].scalar &&
          at_call[static_cast<std::size_t>(slot(j, i, 0))] != now[static_cast<std::size_t>(slot(j, i, 0))]) {
        if (!k.is_candidate) throw HarnessError{"the leader changed its inputs in " + c};
        throw Rejected{input_mutated(task_.inputs[i].name, w.uuid, c)};
      }
    check_outputs(a, j, calls[static_cast<std::size_t>(j)].gold, w, Poison::a, Check::timed_outputs, c, k);
    for (std::size_t t = 0; t < n_out; ++t)
      if (at_call[static_cast<std::size_t>(slot(j, n_in + t, 0))] !=
          now[static_cast<std::size_t>(slot(j, n_in + t, 0))]) {
        Rejection r{
            Check::timing, Reason::work_after_return, w.uuid,
            fmt::format(
                "{}: output {} changed after the call had ended (the judge read it when the call signalled its end, "
                "and again after the batch)",
                c, task_.outputs[t].name),
            "work that outlives its call: every call's work must end before khive_launch's stream reaches its end"};
        if (!k.is_candidate) throw HarnessError{"the leader wrote after its call ended: " + r.message};
        throw Rejected{r};
      }
  }
  return o;
}

int Session::warm_up(const Workload& w, std::vector<Kernel*> ks) {
  const int n = std::max(1, job_.timing.warmup);
  std::size_t fit = std::max<std::size_t>(
      1, dev_.memory_budget() / std::max<std::size_t>(1, Arena::set_bytes(task_, resolve_axes(task_, w))));
  std::vector<double> est;
  {
    // As many sets as the memory budget holds (a 4096 x 393216 fp32 elementwise workload is 26 GB a set with the
    // reference's copies: three did not fit on an 80 GB H100), the warm-up calls in batches of that many.
    const int sets = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(n), fit));
    Arena warm(dev_, task_, w, sets);
    for (Kernel* k : ks) share(*k, warm);
    // Every kernel warms up on inputs of its own (warm-up labels, then the kernel's index), validated like timed
    // calls: a warm-up is neither free compute nor an unchecked call.
    uint64_t first = 0;
    for (Kernel* k : ks) {
      std::vector<double> times;
      for (int done = 0; done < n; done += sets) {
        const int m = std::min(sets, n - done);
        auto calls = plan_calls(warm, w, CallKind::warmup, first, m);
        Observed o = timed_batch(*k, warm, calls, w, first, "warm-up");
        times.insert(times.end(), o.sample_s.begin(), o.sample_s.end());
        first += static_cast<uint64_t>(m);
      }
      est.push_back(median_of(times));
    }
  }
  const double t_call = *std::max_element(est.begin(), est.end());
  const double target = job_.timing.target_batch_s > 0 ? job_.timing.target_batch_s
                                                       : (dev_.gated() ? kGpuBatchTarget_s : kCpuBatchTarget_s);
  if (dev_.gated())
    fit = std::min<std::size_t>(fit, static_cast<std::size_t>(std::min({kGpuMaxBatch, dev_.marks() / 2,
                                                                        dev_.checksum_slots() / (2 * kSlotsPerCall)})));
  const int want = static_cast<int>(std::ceil(target / std::max(t_call, 1e-7)));
  return static_cast<int>(std::clamp<std::size_t>(
      static_cast<std::size_t>(std::max(1, want)), 1,
      std::min<std::size_t>(fit, static_cast<std::size_t>(std::max(1, job_.timing.max_batch)))));
}

void Session::check_clock(const Workload& w, const std::vector<Observed>& obs, const Kernel& k) {
  std::vector<double> judge, in, drain, per_batch;
  for (const auto& o : obs) {
    judge.insert(judge.end(), o.bracket_s.begin(), o.bracket_s.end());
    in.insert(in.end(), o.in_process_s.begin(), o.in_process_s.end());
    drain.push_back(o.drain_s);
    double b = 0;
    for (double t : o.bracket_s) b += t;
    per_batch.push_back(b);
  }
  const Overhead& off = k.offset(w.uuid);
  std::optional<Rejection> r =
      clock_rejection(judge, in, off.median_s, off.jitter_s, ClockRule::for_backend(job_.backend), w.uuid);
  if (!r && job_.backend == "cuda") {
    const double idle = dev_.preflight().value("idle_probe_s", 0.0);
    r = drain_rejection(drain, per_batch, 2 * idle, w.uuid);
  }
  if (!r) return;
  r->message += fmt::format(
      " [the judge's clock holds {:.1f} us around a call beyond its own time, calibrated before load; drain {:.1f} us]",
      1e6 * off.median_s, 1e6 * median_of(drain));
  if (!k.is_candidate) throw HarnessError{"the leader failed the clock check: " + r->message};
  throw Rejected{*r};
}

// A workload's timing as the result carries it: the samples and the calibration they were taken against.
TimingRecord Session::timing_record(const Workload& w, std::vector<double> samples, std::vector<double> in_process,
                                    std::vector<double> drain, int batch, uint64_t validated) const {
  TimingRecord t;
  t.workload = w.uuid;
  t.samples_s = std::move(samples);
  t.in_process_s = std::move(in_process);
  t.drain_s = std::move(drain);
  t.batch = batch;
  t.validated = static_cast<int64_t>(validated);
  t.clock = dev_.gated() ? "gated" : "exchange";
  t.overhead_s = cand_.offset(w.uuid).median_s;
  t.overhead_jitter_s = cand_.offset(w.uuid).jitter_s;
  t.gate_s = cand_.overhead.median_s;
  return t;
}

TimingRecord Session::time_solo(const Workload& w) {
  current_ = w.uuid;
  progress_(Check::timing, w.uuid, "warm-up");
  const int batch = warm_up(w, {&cand_});
  Arena a(dev_, task_, w, batch);
  share(cand_, a);
  StoppingRule rule{static_cast<std::size_t>(job_.timing.min_samples),
                    static_cast<std::size_t>(job_.timing.max_samples), job_.timing.target_noise,
                    job_.timing.time_cap_s};
  std::vector<Observed> obs;
  std::vector<double> samples, in, copies;
  uint64_t k = 0;
  const auto t0 = Clock::now();
  progress_(Check::timing, w.uuid, fmt::format("timed batches of {} call(s)", batch));
  for (;;) {
    auto calls = plan_calls(a, w, CallKind::timed, k, batch);
    obs.push_back(timed_batch(cand_, a, calls, w, k, "timed"));
    samples.insert(samples.end(), obs.back().sample_s.begin(), obs.back().sample_s.end());
    in.insert(in.end(), obs.back().in_process_s.begin(), obs.back().in_process_s.end());
    copies.insert(copies.end(), obs.back().copy_s.begin(), obs.back().copy_s.end());
    k += static_cast<uint64_t>(batch);
    // The cap is wall time, the judge's own work included (fresh inputs, goldens, comparisons): it bounds how long
    // a workload takes once the minimum samples are in. Every sample is one call.
    if (should_stop(samples, since(t0), rule)) break;
  }
  check_clock(w, obs, cand_);
  std::vector<double> drain;
  for (const auto& o : obs) drain.push_back(o.drain_s);
  TimingRecord t = timing_record(w, samples, in, drain, batch, k);
  if (job_.library_pytorch) t.copy_s = copies;  // what each sample left out: the copy of run()'s result
  return t;
}

TimingRecord Session::time_ab(const Workload& w, AbTest& test, AbTest& on_events) {
  current_ = w.uuid;
  progress_(Check::acceptance, w.uuid, "warm-up of both");
  const int batch = warm_up(w, {&lead_, &cand_});
  Arena a(dev_, task_, w, batch);
  share(cand_, a);
  share(lead_, a);
  StoppingRule rule{static_cast<std::size_t>(std::max(job_.timing.min_samples, job_.ab_min_pairs)),
                    static_cast<std::size_t>(job_.timing.max_samples), job_.timing.target_noise,
                    2 * job_.timing.time_cap_s};
  std::vector<Observed> oa, ob;
  std::vector<double> as, bs, samples, in;
  uint64_t k = 0;
  const auto t0 = Clock::now();
  progress_(Check::acceptance, w.uuid, fmt::format("interleaved pairs, batches of {} call(s)", batch));
  for (;;) {
    auto calls = plan_calls(a, w, CallKind::timed, k, batch);
    const bool cand_first = (rng_() & 1) != 0;  // the order inside the pair, drawn at random: the test is exact
    Kernel& first = cand_first ? cand_ : lead_;
    Kernel& second = cand_first ? lead_ : cand_;
    Observed o1 = timed_batch(first, a, calls, w, k, "timed");
    Observed o2 = timed_batch(second, a, calls, w, k, "timed");
    oa.push_back(cand_first ? o2 : o1);
    ob.push_back(cand_first ? o1 : o2);
    // One pair per round: the median call of each side (the calls of one round share its order, so they are not
    // pairs of their own).
    as.push_back(oa.back().median_s());
    bs.push_back(ob.back().median_s());
    samples.insert(samples.end(), ob.back().sample_s.begin(), ob.back().sample_s.end());
    in.insert(in.end(), ob.back().in_process_s.begin(), ob.back().in_process_s.end());
    k += static_cast<uint64_t>(batch);
    if (should_stop_pairs(as, bs, since(t0), rule)) break;
  }
  check_clock(w, ob, cand_);
  check_clock(w, oa, lead_);
  test = ab_test(as, bs);
  std::vector<double> ea, eb;
  for (std::size_t i = 0; i < oa.size() && i < ob.size(); ++i)
    ea.push_back(oa[i].in_process_median_s()), eb.push_back(ob[i].in_process_median_s());
  on_events = ab_test(ea, eb);
  std::vector<double> drain;
  for (const auto& o : ob) drain.push_back(o.drain_s);
  TimingRecord t = timing_record(w, samples, in, drain, batch, 2 * k);
  t.leader_overhead_s = lead_.offset(w.uuid).median_s;
  t.pair_samples_s = bs;
  t.leader_samples_s = as;
  return t;
}

// ---------------------------------------------------------------------------------------------- the evaluation

JudgeResult Session::run() {
  JudgeResult result;
  nlohmann::json sandbox = nlohmann::json::object();
  try {
    // Nothing to check the kernel on (a task whose correctness workloads are all marked for the other backend, as a
    // KernelBench import too large for the CPU): a verdict of ACCEPTED would say nothing, so say why instead.
    if (job_.check_correctness && std::none_of(task_.workloads.begin(), task_.workloads.end(), [&](const Workload& w) {
          return w.checks_correctness() && selected(w);
        }))
      throw HarnessError{(task_.dir / "workload.jsonl").string() + ": khive.backends: expected a correctness " +
                         "workload that runs on " + job_.backend + " (nothing else checks the kernel), got none"};
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
          result.timing.push_back(time_ab(w, t, te));
          tests.push_back(t);
          event_tests.push_back(te);
          weights.push_back(w.weight);
          result.ab.push_back(AbRecord{w.uuid, t.pairs, t.ratio, t.median_ratio, t.p_faster, t.p_slower, t.noise,
                                       t.valid, AbEventsRecord{te.ratio, te.p_faster, te.p_slower, te.valid}});
        } else {
          result.timing.push_back(time_solo(w));
        }
      }
    current_.clear();
    if (lead_.ex) {
      AbRule rule{job_.ab_alpha, job_.ab_alpha_slower, job_.ab_min_gain, static_cast<std::size_t>(job_.ab_min_pairs),
                  job_.ab_min_gain_s >= 0 ? job_.ab_min_gain_s : min_gain_for_backend(job_.backend)};
      const LeaderDecision d = decide_on_both_clocks(tests, event_tests, weights, rule);
      for (std::size_t i = 0; i < result.ab.size(); ++i) {
        result.ab[i].holm_threshold = d.holm_threshold[i];
        result.ab[i].faster = std::find(d.faster.begin(), d.faster.end(), i) != d.faster.end();
        result.ab[i].slower = std::find(d.slower.begin(), d.slower.end(), i) != d.slower.end();
      }
      result.ab_decision =
          AbDecisionRecord{d.new_leader, d.weighted_ratio, d.why, rule.alpha, rule.min_gain, rule.min_gain_s};
    }
    // A kernel whose process does not end cleanly (destructors that crash) is rejected.
    try {
      cand_.ex->finish();
    } catch (const ExecutorFault& f) {
      fault(f, "candidate");
    }
  } catch (const Rejected& r) {
    result.rejection = r.r;
  } catch (const HarnessError& h) {
    result.error = h.why;
    result.retryable = h.retryable;
  } catch (const std::exception& e) {
    result.error = std::string("judge: ") + e.what();
  }
  for (auto* ex : {cand_.ex.get(), lead_.ex.get(), ref_.get()})
    if (ex) sandbox[ex->role()] = ex->sandbox();
  result.preflight["sandbox"] = sandbox;  // the caller adds the device's facts
  result.correctness_calls = correctness_calls_;
  result.overhead_s = {cand_.overhead.median_s, cand_.overhead.jitter_s};
  const GoldenStats& gs = goldens_.stats();
  result.goldens = {gs.cached, gs.made, gs.corrupt, gs.reference_s};
  result.phases = phases_;
  if (cand_.ex && result.rejection) result.log = cand_.ex->log_tail(4000);
  return result;
}

}  // namespace khive
