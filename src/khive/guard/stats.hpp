// Statistics over timing samples: medians, spread, the stopping rule, and check 11's A/B test.
// Pure functions over synthetic or measured samples, tested without a GPU (nvbench-style criteria).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace khive {

struct SampleSummary {
  std::size_t n = 0;
  double median = 0, mean = 0, min = 0, max = 0, p10 = 0, p90 = 0;
  double stddev = 0;
  double rel_spread = 0;  // robust relative noise: 1.4826 * MAD / median
};
// median: the middle value, the mean of the two middle ones for even n; p10/p90: linear interpolation between
// closest ranks (position p * (n - 1), numpy's default); stddev: sample (n - 1); stddev and rel_spread are 0
// when n < 2 (and rel_spread when median <= 0). Empty input: all zero.
SampleSummary summarize(std::vector<double> samples);

// Stop timing when at least min_samples (and at least 2) were taken and the median is known to target_noise (its
// robust relative standard error, 1.25 x the samples' MAD-sigma / median / sqrt(n), is under it), or when
// max_samples / the time cap is reached (the cap applies whatever the sample count). Samples are single calls, whose
// spread never shrinks with more of them: the median's error does.
struct StoppingRule {
  std::size_t min_samples = 10, max_samples = 200;
  double target_noise = 0.005;  // 0.5 %
  double time_cap_s = 2.0;      // summed sample time (plus overhead) per workload; honoured once min_samples
                                // are in, else at 4x with at least 3 samples (very slow kernels)
};
bool should_stop(const std::vector<double>& samples, double elapsed_s, const StoppingRule& r);

// ---- Check 11: is B (the candidate) faster than A (the leader)? ----
//
// The judge times A and B on the same inputs in pairs, the order inside each pair drawn at random, each kernel
// in its own executor process. l_i = log(a_i / b_i) (> 0: B faster). When A and B are the same kernel, the
// random order makes l_i symmetric about 0, so the Wilcoxon signed-rank test is exact: its one-sided p-value
// is a true probability under the null, whatever the noise's shape (heavy tails, outliers, drift within a
// pair's order). No normal approximation and no estimate of the noise enter the decision.
//
//   AbTest t = ab_test(a, b);            // per workload
//   t.p_faster: P(a signed-rank sum this large | B no faster);  t.ratio: exp(Hodges-Lehmann estimate of l)
//   LeaderDecision d = decide_leader({t1, t2}, {w1, w2}, AbRule{});
//
// decide_leader makes B the new leader when
//   - some workload is faster: p_faster passes Holm's step-down procedure at family-wise level alpha over
//     the task's workloads (so an identical kernel is called faster on some workload in at most alpha of
//     comparisons, however many workloads the task has), and its ratio beats 1 by more than min_gain (the
//     minimum effect: a real but tiny difference between two executor processes never crowns a leader);
//   - no workload is slower: p_slower <= alpha_slower (one-sided, uncorrected: a regression anywhere vetoes,
//     so this side is deliberately sensitive) with 1/ratio beating 1 by more than min_gain;
//   - the weighted geometric mean of the ratios beats 1 by more than min_gain.
// A workload's effect must also beat min_gain_s in absolute time (the leader's median less the candidate's): the
// ruler's resolution. Two executors are two processes (on a GPU two contexts) and what the clock sees around a call
// differs between them by a fraction of a microsecond that no number of pairs averages away: on the H200 two copies
// of one 11 us kernel read 2.4 % apart in the median null A/B and were a "new leader" in 3 of 16 (2026-12-03,
// docs/results/2026-12-03-h200). The floor is per backend (min_gain_for_backend); it only bites on calls of a few
// microseconds: a 3 % gain clears 0.5 us from ~17 us up.
// A test needs at least min_pairs pairs before it can say "faster" (the smallest one-sided p of n pairs is
// 2^-n, so fewer than ~10 pairs can never pass at alpha = 1 % anyway). 20, not 10: at 10 pairs one pair of the
// wrong sign (a batch that met a clock ramp or another context) already costs the test its significance: on the
// H200 a 5 ms kernel 3.3 % slower by both clocks, every evaluation, was missed in 2 of 4 that stopped at 10 pairs
// with p = 0.042 (2026-12-03). The stopping rule that lets pairs stop there looks only at |log-ratios|, so raising
// the floor keeps the test exact.
struct AbRule {
  double alpha = 0.01;         // family-wise error of "faster" over all workloads
  double alpha_slower = 0.05;  // per workload, for the veto
  double min_gain = 0.01;      // minimum effect: 1 %
  std::size_t min_pairs = 20;
  // Minimum effect in time: the ruler's resolution (see above). 0: none; < 0: the backend's (min_gain_for_backend),
  // which the judge resolves; decide_leader applies none until it is resolved.
  double min_gain_s = -1;
  // A regression the judge's clock vetoes alone, without the executors' events (decide_on_both_clocks): 5 %.
  double judge_alone_slower = 0.05;
};
// The ruler's resolution per backend, for AbRule::min_gain_s: 0.5 us behind the GPU's gate, 2 us on the CPU (one
// exchange per call; its jitter is tens of microseconds, and calls of a few microseconds are floored at the
// executor's own clock).
double min_gain_for_backend(const std::string& backend);

struct AbTest {
  std::size_t pairs = 0;              // valid pairs used (positive finite times; exact ties dropped from the ranks)
  double ratio = 1;                   // exp(Hodges-Lehmann estimate of log(a/b)): > 1 means B faster
  double median_ratio = 1;            // exp(median(log(a_i / b_i))), for people
  double p_faster = 1, p_slower = 1;  // exact one-sided signed-rank p-values
  double noise = 0;                   // 1.4826 * median(|l_i - median(l)|): spread of one pair's log-ratio
  double leader_s = 0;                // median of a: the scale that AbRule::min_gain_s is taken against
  bool valid = true;                  // false: mismatched lengths or a time that is not a positive finite number
};
AbTest ab_test(const std::vector<double>& a, const std::vector<double>& b);

// The exact one-sided signed-rank p-value for a positive shift of l: P(W+ >= observed W+) when every sign is
// a fair coin (ties in |l| take average ranks; zeros are dropped). Exposed for tests.
double signed_rank_p(const std::vector<double>& l);

struct LeaderDecision {
  bool new_leader = false;
  double weighted_ratio = 1;                // exp(sum w_i log ratio_i / sum w_i)
  std::vector<std::size_t> slower, faster;  // workloads slower / faster by the rule above
  std::vector<double> holm_threshold;       // per workload, the p_faster it had to reach (Holm's step-down)
  std::string why;                          // one line: what decided it
};
LeaderDecision decide_leader(const std::vector<AbTest>& per_workload, const std::vector<double>& weights,
                             const AbRule& rule = {});
// Check 11 on both clocks. Each kernel runs in an executor of its own and the executors are not interchangeable: on
// a GPU the time around a call (switching between the judge's context and each executor's) differs between two
// executors by a fraction of a microsecond that the calibration does not take away, and the executors' own clocks
// (CUDA events / the executor's steady clock around each call) do not see it.
//   - "Faster" needs both clocks: a new leader on the judge's clock stays one only if decide_leader on the events
//     also finds it. Two copies of one 30 us kernel were a "new leader" in 4 of 26 null A/Bs on the H200 on the
//     judge's clock alone (2026-12-02). A kernel that forges its own clock gains nothing: the judge's must show it.
//   - "Slower" (the veto) needs both clocks too, unless the judge's clock alone sees a regression no executor
//     difference explains (is_slower_on_the_judge_alone: beyond AbRule::judge_alone_slower and 4x min_gain_s):
//     two copies of one 8-25 us kernel were "slower" in 3 of 44 null A/Bs on the judge's clock, 0.5 us apart, and
//     level on their events (2026-12-03). A kernel that forges its events to hide a small regression on one
//     workload must still be faster overall on the judge's clock, beyond min_gain, to lead.
// Events that are missing or not valid leave the judge's clock to decide alone.
//
//   LeaderDecision d = decide_on_both_clocks({judge_w1, judge_w2}, {events_w1, events_w2}, {1, 1}, rule);
LeaderDecision decide_on_both_clocks(const std::vector<AbTest>& judge, const std::vector<AbTest>& on_events,
                                     const std::vector<double>& weights, const AbRule& rule = {});
bool is_slower_on_the_judge_alone(const AbTest& t, const AbRule& rule);
bool is_faster(const AbTest& t, double p_threshold, const AbRule& rule);
bool is_slower(const AbTest& t, const AbRule& rule);

// Stop pairing when the spread of the log-ratios says the estimate is good to target_noise, at max_pairs, or
// at the time cap (as should_stop). Uses |l_i| only, which the test's sign statistics are independent of under
// the null, so stopping on it keeps the test exact.
bool should_stop_pairs(const std::vector<double>& a, const std::vector<double>& b, double elapsed_s,
                       const StoppingRule& r);

// should_stop_pairs ends at 4x its time cap with as few as 3 pairs, and below rule.min_pairs check 11 cannot say
// "faster". When a candidate that looked faster everywhere ran out of time that way, the evaluator measures again
// with its time cap scaled by this: enough for 1.5x min_pairs at the pace seen (fewest_pairs in the old 4x cap), at
// least 1.5x and at most 8x. Example: min_pairs 20, 12 pairs seen -> 2.5x (30 pairs expected); 2 pairs -> 8x.
double ab_retry_cap_scale(std::size_t fewest_pairs, const AbRule& rule);

}  // namespace khive
