#include "khive/guard/rules.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "khive/compile/builder.hpp"
#include "khive/compile/symbol_policy.hpp"

namespace khive {

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string us(double s) { return fmt::format("{:.1f} us", s * 1e6); }

}  // namespace

std::optional<Rejection> output_rejection(Check check, const std::string& output, const CompareStats& st,
                                          const Tolerance& tol, const std::string& workload, const std::string& context,
                                          int64_t sample_of) {
  if (passes(st, tol)) return std::nullopt;
  Rejection r{check, Reason::wrong_output, workload, "", describe_mismatch(output, st, tol)};
  switch (check) {
    case Check::correctness:
      if (st.unwritten > 0)
        r.check = Check::written, r.reason = Reason::unwritten_output;
      else if (st.nonfinite > 0)
        r.reason = Reason::nonfinite_output;
      else if (st.out_zeros == st.n && st.ref_zeros < st.n)
        r.reason = Reason::all_zero_output;
      break;
    case Check::anti_caching:
      r.reason = Reason::caching;
      r.diagnosis += "; the output did not follow the inputs: results cached or replayed";
      break;
    case Check::timed_outputs:
      r.reason = Reason::timed_output_wrong;
      r.diagnosis += "; every timed call is validated: work skipped or done wrong under timing";
      break;
    default: break;
  }
  r.message = fmt::format("{}: output {} {} ({})", context, output,
                          st.unwritten ? fmt::format("has {} of {} elements never written", st.unwritten, st.n)
                                       : fmt::format("is wrong in {} of {} elements", st.bad, st.n),
                          describe_pattern(st));
  if (sample_of > 0) r.message += fmt::format(" [checked on a sample of {} of its {} elements]", st.n, sample_of);
  return r;
}

std::optional<Rejection> determinism_rejection(const std::string& output, const CompareStats& st, const Tolerance& tol,
                                               const std::string& workload, const std::string& context) {
  if (passes(st, tol)) return std::nullopt;
  return Rejection{Check::determinism, st.unwritten ? Reason::unwritten_output : Reason::nondeterministic, workload,
                   fmt::format("{}: output {} differs between two calls on the same inputs in {} of {} elements",
                               context, output, st.bad, st.n),
                   describe_mismatch(output, st, tol) + " (a race, or a read of memory nothing wrote)"};
}

Rejection input_mutated(const std::string& input, const std::string& workload, const std::string& context) {
  return Rejection{Check::inputs, Reason::input_mutated, workload,
                   fmt::format("{}: input {} changed during the call", context, input),
                   "inputs are read-only: the judge hashes every input after each call"};
}

ClockRule ClockRule::for_backend(const std::string& backend) {
  ClockRule r;
  // GPU: the gated clock brackets each call with the judge's own events; less the gate's calibrated latency (~294 us
  // of two context switches, MAD ~0.7 us on the H200, 2026-12-03) an honest call reads within ~2 us of its events.
  // Work hidden from the events is still on the judge's clock (it is the measurement); this check names it: an
  // in-process clock that saw next to nothing, or a quarter of a call missing.
  r.abs_s = kGpuGatedAllowance;
  if (backend ==
      "cpu") {  // both processes share the cores with the kernel and with whatever else runs: wake-ups are late
    r.rel = 0.75;
    r.abs_s = 20e-3;
  }
  return r;
}

double timed_sample(double bracket_s, double overhead_s, double own_s, double copy_s) {
  return std::max({1e-9, bracket_s - overhead_s - copy_s, own_s - copy_s});
}

std::optional<Rejection> clock_rejection(const std::vector<double>& judge_s, const std::vector<double>& in_process_s,
                                         double overhead_s, double jitter_s, const ClockRule& rule,
                                         const std::string& workload) {
  const std::size_t n = std::min(judge_s.size(), in_process_s.size());
  if (n == 0) return std::nullopt;
  std::vector<double> net, gap;
  for (std::size_t i = 0; i < n; ++i) {
    net.push_back(judge_s[i] - overhead_s);
    gap.push_back(judge_s[i] - overhead_s - in_process_s[i]);
  }
  const double g = median(gap), m = median(net);
  const double bound = std::max(rule.rel * m, rule.abs_s + 4 * jitter_s);
  if (g <= bound) return std::nullopt;
  return Rejection{
      Check::timing, Reason::timing_disagrees, workload,
      fmt::format(
          "workload {}: the judge's clock saw {} per timed batch beyond the kernel's own clock ({} of {}; allowed {})",
          workload, us(g), us(median(in_process_s)), us(m), us(bound)),
      "work the executor's clock did not cover: work on a stream other than the one passed to khive_launch, "
      "work left to another thread, or a tampered in-process clock. Enqueue all work on the given stream."};
}

std::optional<Rejection> drain_rejection(const std::vector<double>& drain_s, const std::vector<double>& judge_s,
                                         double idle_probe_s, const std::string& workload) {
  if (drain_s.empty()) return std::nullopt;
  const double extra = median(drain_s) - idle_probe_s;
  const double bound =
      std::max(kGpuContextSwitchAllowance, 0.1 * median(judge_s));  // the drain's probe waits for the switch back
  if (extra <= bound) return std::nullopt;
  return Rejection{
      Check::timing, Reason::work_after_return, workload,
      fmt::format("workload {}: the device was still busy for {} after the executor answered (allowed {})", workload,
                  us(extra), us(bound)),
      "the call returned while its work was still running on the GPU: all work must be finished, or at least "
      "enqueued on the given stream, when khive_launch returns"};
}

std::optional<Rejection> plausibility_rejection(const std::vector<WorkloadTiming>& timings,
                                                const std::map<std::string, double>& floor_s) {
  for (const auto& t : timings) {
    auto it = floor_s.find(t.workload);
    if (it == floor_s.end() || it->second <= 0 || t.summary.n == 0) continue;
    if (t.summary.median < it->second)
      return Rejection{
          Check::plausibility, Reason::faster_than_sol, t.workload,
          fmt::format("workload {}: median {:.3g} s is below the speed-of-light floor {:.3g} s", t.workload,
                      t.summary.median, it->second),
          "a time no hardware can reach is a measurement fault (work escaped the timer, results were cached, or the "
          "cost formula undercounts)"};
  }
  return std::nullopt;
}

std::optional<Rejection> build_rejection(const BuildResult& b, const std::vector<SymbolViolation>& violations) {
  if (!b.ok)
    return Rejection{Check::build, b.timed_out ? Reason::build_timeout : Reason::build_error, "",
                     "the kernel does not build: " + b.summary(), format_diagnostics(b.diagnostics)};
  if (violations.empty()) return std::nullopt;
  std::string all;
  for (const auto& v : violations)
    all += fmt::format("{} {} ({})\n", v.imported ? "calls" : "defines", v.symbol, v.rule);
  const auto& v = violations.front();
  return Rejection{Check::build, Reason::forbidden_symbol, "",
                   fmt::format("the kernel {} {}: {}", v.imported ? "calls" : "defines", v.symbol, v.rule), all};
}

}  // namespace khive
