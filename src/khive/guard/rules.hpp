// The guard's rules over observations (docs/guard.md, checks 1-11): pure functions, one home for every decision.
// The judge process calls the ones about outputs and clocks as it observes; khive calls the build rule (check 1)
// and plausibility (check 10); check 11 is in stats.hpp (the A/B) and leader.hpp (what it makes of a kernel). Tested
// with synthetic observations, no device needed.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "khive/guard/checks.hpp"
#include "khive/numerics/compare.hpp"

namespace khive {

// ---- checks 4, 5, 7, 9: one output against its golden ----
// The rejection for an output that does not pass `tol`, or nullopt. `check` is where the call happened
// (correctness, anti_caching, timed_outputs); the reason follows what was wrong:
//   unwritten elements           -> check 4 unwritten_output (during timing: check 9 timed_output_wrong)
//   correctness: nonfinite       -> nonfinite_output; all zeros where the reference is not -> all_zero_output;
//                else            -> wrong_output
//   anti-caching                 -> caching;  timed outputs -> timed_output_wrong
// `context` says which call ("workload w3 (seed 2)"); `sample_of` > 0 when only a sample of that many elements
// of the output was compared.
std::optional<Rejection> output_rejection(Check check, const std::string& output, const CompareStats& st,
                                          const Tolerance& tol, const std::string& workload, const std::string& context,
                                          int64_t sample_of = 0);

// ---- check 6 ----
std::optional<Rejection> determinism_rejection(const std::string& output, const CompareStats& st, const Tolerance& tol,
                                               const std::string& workload, const std::string& context);

// ---- check 3 ----
Rejection input_mutated(const std::string& input, const std::string& workload, const std::string& context);

// ---- check 8: the judge's clock against the executor's ----
// Per timed batch b the judge measured J_b (its clock, from sending the call to the executor being stopped and,
// on a GPU, the device idle again) and the executor reported E_b (its own clock around the calls). overhead_s is
// the judge's calibration of one exchange (median of null calls made before any kernel code was loaded),
// jitter_s that calibration's spread (1.4826 MAD). An honest executor has J_b - overhead ~ E_b. The kernel's work
// that escaped the executor's clock (another stream, another thread, a forged in-process time) makes
// gap_b = J_b - overhead - E_b large; the candidate is rejected when
//   median(gap_b) > max(rel * median(J_b - overhead), abs + 4 * jitter)
// with rel = 25 %, abs = 10 us per call on the GPU's gated clock; on the CPU rel = 75 % and abs = 20 ms (the judge and
// the executor share the cores with the kernel's threads and whatever else runs there, so wake-ups can be late by
// milliseconds). The sample khive reports is the judge's (J_b - overhead) / calls, never E_b, so a forged E_b gains
// nothing; this rule names the cheat (or the bug: work outside the given stream) instead of timing it quietly. What
// switching the GPU between the judge's and an executor's contexts may cost around one batch (measured up to ~270 us on
// the H200), allowed on top of the no-work overhead by check 8's drain rule.
inline constexpr double kGpuContextSwitchAllowance = 400e-6;
// The gated clock (executor/gate.hpp) against the executor's events, per call, beyond the gate's latency: honest calls
// read within ~2 us of their events on the H200.
inline constexpr double kGpuGatedAllowance = 10e-6;

// One timed call's sample: the judge's clock as read (`bracket_s`) less the calibrated overhead, never below the
// executor's own time of the call (that floor can only raise a sample: an executor that reports less changes nothing;
// it binds where the calibration over-subtracts, as under MPS), less `copy_s`, the copy of a PyTorch run's result into
// the output slots (0 for a kernel, which writes in place), and never below 1 ns.
double timed_sample(double bracket_s, double overhead_s, double own_s, double copy_s = 0);

struct ClockRule {
  double rel = 0.25;
  double abs_s = 50e-6;
  static ClockRule for_backend(const std::string& backend);
};
std::optional<Rejection> clock_rejection(const std::vector<double>& judge_s, const std::vector<double>& in_process_s,
                                         double overhead_s, double jitter_s, const ClockRule& rule,
                                         const std::string& workload);

// GPU: after the executor answered and was stopped, the device was still busy for drain_s (the judge probed until
// it ran at idle speed). Work left running after a call returned: rejected when the median drain beyond one idle
// probe exceeds max(50 us, 10 % of the median batch time).
std::optional<Rejection> drain_rejection(const std::vector<double>& drain_s, const std::vector<double>& judge_s,
                                         double idle_probe_s, const std::string& workload);

// ---- check 10 ----
// A median under floor_s[workload] is a measurement fault (nothing beats the datasheet peak).
std::optional<Rejection> plausibility_rejection(const std::vector<WorkloadTiming>& timings,
                                                const std::map<std::string, double>& floor_s);

// ---- check 11: guard/leader.hpp (the hive's side) and guard/stats.hpp (the A/B) ----

// ---- check 1 ----
struct SymbolViolation;  // compile/symbol_policy.hpp
struct BuildResult;      // compile/builder.hpp
// The build's verdict: build_error / build_timeout, or forbidden_symbol from the policy scan.
std::optional<Rejection> build_rejection(const BuildResult& b, const std::vector<SymbolViolation>& violations);

}  // namespace khive
