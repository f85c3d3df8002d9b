#include "khive/eval/guard_evaluator.hpp"

#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include <fmt/format.h>

#include "khive/compile/symbol_policy.hpp"
#include "khive/guard/rules.hpp"
#include "khive/support/phase.hpp"
#include "khive/support/subprocess.hpp"

namespace khive {

using Clock = std::chrono::steady_clock;

namespace {
// The hive's record of a guard rejection (its reason string is the guard's code).
Evaluation rejection(const Rejection& r, Evaluation e) {
  e.status = EvalStatus::rejected;
  e.check = r.check;
  e.reason = reason_name(r.reason);
  e.message = r.message;
  e.diagnosis = r.diagnosis;
  return e;
}
}  // namespace

double weighted_geomean(const std::map<std::string, double>& t, const std::map<std::string, double>& weight) {
  double s = 0, ws = 0;
  for (auto& [k, v] : t) {
    if (!(v > 0)) continue;
    auto it = weight.find(k);
    double w = it == weight.end() ? 1.0 : it->second;
    if (w <= 0) continue;
    s += w * std::log(v);
    ws += w;
  }
  return ws > 0 ? std::exp(s / ws) : 0.0;
}

std::vector<std::string> visible_gpu_slots() {
  std::vector<std::string> out;
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES"); v && *v) {
    std::string cur;
    for (const char* p = v;; ++p) {
      if (*p == ',' || *p == 0) {
        if (!cur.empty()) out.push_back(cur);
        cur.clear();
        if (!*p) break;
      } else if (*p != ' ') {
        cur += *p;
      }
    }
    return out;
  }
  if (find_program("nvidia-smi").empty()) return out;
  ProcessSpec p;
  p.argv = {"nvidia-smi", "--query-gpu=index", "--format=csv,noheader"};
  p.timeout_s = 15;
  auto r = run_process(p);
  if (!r.ok()) return out;
  std::string cur;
  for (char c : r.out + "\n") {
    if (c == '\n') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (c != ' ' && c != '\r') {
      cur += c;
    }
  }
  return out;
}

GuardEvaluator::GuardEvaluator(const Task& task, Backend backend, EvalOptions base, std::vector<std::string> slots)
    : task_(task), backend_(backend), base_(std::move(base)) {
  base_.backend = backend;
  if (!base_.seed) throw std::invalid_argument("GuardEvaluator: the run's seed base must be set (EvalOptions::seed)");
  if (slots.empty()) {
    slot_dev_.push_back("");
    slots_.push_back({backend == Backend::cpu ? "cpu" : "cuda", 0, 0});
  } else {
    for (auto& s : slots) {
      slot_dev_.push_back(s);
      slots_.push_back({"cuda:" + s, 0, 0});
    }
  }
  busy_.assign(slots_.size(), false);
}

int GuardEvaluator::acquire() {
  report_phase("waiting for a device slot");
  int slot = -1;
  {
    std::unique_lock<std::mutex> lk(mu_);
    while (slot < 0) {
      if (stopping_) return -1;
      for (std::size_t i = 0; i < busy_.size() && slot < 0; ++i)
        if (!busy_[i]) {
          busy_[i] = true;
          slot = static_cast<int>(i);
        }
      if (slot < 0) cv_.wait(lk);
    }
  }
  // Outside mu_: the listener takes the hive's lock, and the hive's status line takes mu_ (slot_usage) under its
  // own; reporting under mu_ deadlocked the two (seen in hive_warm_start).
  report_phase("measuring");
  return slot;
}

void GuardEvaluator::release(int slot, double busy_s) {
  std::lock_guard<std::mutex> lk(mu_);
  busy_[static_cast<std::size_t>(slot)] = false;
  slots_[static_cast<std::size_t>(slot)].busy_s += busy_s;
  ++slots_[static_cast<std::size_t>(slot)].evaluations;
  cv_.notify_one();
}

void GuardEvaluator::stop_evaluating(bool in_flight) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (in_flight) cancel_ = true;
}

std::vector<SlotUsage> GuardEvaluator::slot_usage() const {
  std::lock_guard<std::mutex> lk(mu_);
  return slots_;
}

Evaluation GuardEvaluator::from_report(const EvalReport& r) const {
  Evaluation e;
  e.seconds = r.seconds;
  if (!r.harness_error.empty()) {
    // Once the judges are being killed, a harness error is that (the reference's or the leader's judge too).
    e.status = r.harness_error == kEvaluationCancelled || cancel_ ? EvalStatus::cancelled : EvalStatus::error;
    e.message = r.harness_error;
    return e;
  }
  const auto& v = r.candidate.verdict;
  if (!v.accepted) {
    if (v.rejection) return rejection(*v.rejection, e);
    e.status = EvalStatus::rejected;
    return e;
  }
  e.status = EvalStatus::accepted;
  std::map<std::string, double> weight;
  std::vector<double> spreads;
  for (auto& w : r.workloads) {
    weight[w.workload] = w.weight;
    if (w.kernel) e.workload_median_s[w.workload] = w.kernel->median, spreads.push_back(w.kernel->rel_spread);
  }
  e.time_s = weighted_geomean(e.workload_median_s, weight);
  if (!spreads.empty()) {
    std::sort(spreads.begin(), spreads.end());
    e.rel_spread = spreads[spreads.size() / 2];
  }
  // The guard's evaluation scored it (score/, against T_b from the runs prepare() kept): the same number khive eval
  // and khive bench give, never recomputed here.
  e.score = r.task_score;
  if (r.new_leader) e.beats_leader = *r.new_leader;
  if (!r.ab.empty()) {
    // One number for "how much faster than the leader": check 11's own weighted ratio (the decision's number), and
    // per workload the guard's own call, so every line, summary and prompt words it the same way.
    e.gain_vs_leader = r.ab_weighted_ratio - 1;
    e.ab_decision = r.ab_decision;
    std::string detail;
    for (auto& a : r.ab) {
      AbWorkload w;
      w.workload = a.workload;
      w.gain = a.test.ratio - 1;
      w.pairs = a.test.pairs;
      w.call = a.faster                            ? "faster"
               : a.slower                          ? "slower"
               : a.test.pairs < base_.ab.min_pairs ? "too few pairs"
                                                   : "level";
      w.evidence = a.faster   ? fmt::format("p {:.2g}, needed <= {:.2g}", a.test.p_faster, a.holm_threshold)
                   : a.slower ? fmt::format("p {:.2g} that it is slower", a.test.p_slower)
                              : fmt::format("p faster {:.2g}, needed <= {:.2g}; noise {:.1f}%", a.test.p_faster,
                                            a.holm_threshold, a.test.noise * 100);
      e.ab.push_back(w);
      detail += fmt::format("{}{} {:+.1f}% over {} pairs ({}: {})", detail.empty() ? "" : "; ", w.workload,
                            w.gain * 100, w.pairs, w.call, w.evidence);
    }
    e.message = "A/B vs the leader: " + (r.ab_decision.empty() ? "" : r.ab_decision + ": ") + detail;
  }
  return e;
}

// One evaluation on a free device slot (on the CPU backend: alone on the machine); the slot's busy time feeds the
// dispatcher's estimate, also when the evaluation throws.
EvalReport GuardEvaluator::evaluate_in_slot(const std::filesystem::path& kernel, EvalOptions o) {
  const int slot = acquire();
  if (slot < 0) {
    EvalReport r;
    r.harness_error = kEvaluationCancelled;
    return r;
  }
  o.judge.cuda_visible_devices = slot_dev_[static_cast<std::size_t>(slot)];
  o.judge.process.cancel = &cancel_;
  const auto t0 = Clock::now();
  auto done = [&] { release(slot, std::chrono::duration<double>(Clock::now() - t0).count()); };
  try {
    std::unique_lock<std::shared_mutex> cpu(cpu_, std::defer_lock);
    if (backend_ == Backend::cpu) cpu.lock();
    EvalReport r = evaluate_kernel(task_, kernel, o);
    done();
    return r;
  } catch (...) {
    done();
    throw;
  }
}

Evaluation GuardEvaluator::prepare(const std::filesystem::path& reference) {
  EvalOptions o = base_;
  o.leader.reset();
  o.time_reference = false;  // the kernel under test is the reference itself
  o.candidate_is_reference = true;
  o.time_baselines = true;
  return prepared(evaluate_in_slot(reference, o), false);
}

Evaluation GuardEvaluator::prepare_pytorch() {
  EvalOptions o = base_;
  o.leader.reset();
  o.time_reference = false;
  o.time_baselines = true;
  o.candidate_pytorch = true;
  return prepared(evaluate_in_slot("pytorch", o), true);
}

Evaluation GuardEvaluator::prepared(const EvalReport& r, bool candidate_is_pytorch) {
  // Every later evaluation is scored against these runs (EvalOptions::measured): T_b per workload as the guard's
  // evaluation picks it (PyTorch on this device where it was timed or the suite has its numbers, else the fastest
  // vendor baseline), else the reference measured here.
  auto m = std::make_shared<MeasuredRuns>();
  m->baselines = r.baselines;
  if (candidate_is_pytorch) {
    m->pytorch = r.candidate;
  } else {
    m->reference = r.reference;  // the candidate's own run (EvalOptions::candidate_is_reference)
    m->pytorch = r.pytorch;
  }
  if (r.candidate.verdict.accepted) measured_ = m;
  std::map<std::string, int> basis;  // T_b source -> workloads
  for (const auto& w : r.workloads)
    if (w.baseline_time) ++basis[w.baseline_label];
  Evaluation e = from_report(r);
  std::string tb;
  for (const auto& [label, n] : basis)
    tb += fmt::format("{}{} on {} workload{}", tb.empty() ? "" : ", ", label, n, n == 1 ? "" : "s");
  e.score_basis = fmt::format("T_b: {}; T_sol: hardware profile '{}' ({})", tb.empty() ? "none" : tb, r.profile.name,
                              r.profile.source.empty() ? "no source recorded" : r.profile.source);
  return e;
}

// Builds outside the device slots (content-hash cache); on the CPU, builds share the cores among themselves but wait
// while a judge times.
BuildResult GuardEvaluator::build(const std::filesystem::path& source, const std::atomic<bool>* cancel) {
  BuildOptions bo = base_.build;
  bo.backend = backend_;
  bo.cancel = cancel;
  report_phase("building");
  std::shared_lock<std::shared_mutex> cpu(cpu_, std::defer_lock);
  if (backend_ == Backend::cpu) cpu.lock();
  return build_candidate(task_, source, bo);
}

Evaluation GuardEvaluator::build_only(const std::filesystem::path& source) {
  const BuildResult b = build(source);
  Evaluation e;
  e.seconds = b.seconds;
  e.build_key = b.key;
  // Check 1 as the guard applies it (guard/rules.hpp).
  if (auto rej =
          build_rejection(b, b.ok ? scan_symbols(b.library, task_.policy, backend_) : std::vector<SymbolViolation>{}))
    return rejection(*rej, e);
  e.status = EvalStatus::built;
  return e;
}

Prebuilt GuardEvaluator::prebuild(const std::filesystem::path& source, const std::atomic<bool>* cancel) {
  const BuildResult b = build(source, cancel);
  Prebuilt p;
  p.built = true;
  p.ok = b.ok;
  p.cached = b.cached;
  p.cancelled = b.cancelled;
  p.key = b.key;
  p.seconds = b.seconds;
  return p;
}

Evaluation GuardEvaluator::evaluate(const std::filesystem::path& source,
                                    const std::optional<std::filesystem::path>& leader) {
  EvalOptions o = base_;
  o.leader = leader;
  o.time_reference = false;  // timed once in prepare()
  o.time_baselines = false;
  o.measured = measured_;
  // Build first, outside the slot (content-hash cache): the guard's own build is then a cache hit.
  const BuildResult b = build(source);
  if (!b.ok) {
    Evaluation e;
    e.build_key = b.key;
    e.seconds = b.seconds;
    return rejection(*build_rejection(b, {}), e);
  }
  EvalReport r = evaluate_in_slot(source, o);
  // Check 11 stops at its time cap even below its minimum pairs, and then cannot accept. When the candidate looked
  // faster on every workload but the A/B ran out of time before that, measure again with a cap large enough for
  // 1.5x the minimum pairs at the pace seen (ab_retry_cap_scale): more evidence, the same rule. (It once asked for
  // 12 pairs, under a minimum of 20: on a loaded CI machine a 1.5x faster CPU kernel stayed a backup.)
  if (leader && r.accepted() && r.new_leader && !*r.new_leader && !r.ab.empty()) {
    bool promising = true;
    std::size_t fewest = SIZE_MAX;
    for (auto& a : r.ab) {
      promising = promising && a.test.ratio - 1 > o.ab.min_gain;
      fewest = std::min(fewest, a.test.pairs);
    }
    if (promising && fewest < o.ab.min_pairs && fewest > 0) {
      EvalOptions o2 = o;
      o2.timing.time_cap_s = o.timing.time_cap_s * ab_retry_cap_scale(fewest, o.ab);
      EvalReport r2 = evaluate_in_slot(source, o2);
      r2.seconds += r.seconds;
      auto e2 = from_report(r2);
      e2.build_key = b.key;
      return e2;
    }
  }
  auto e = from_report(r);
  e.build_key = b.key;
  return e;
}

}  // namespace khive
