// Statistics over timing samples: medians, spread, the stopping rule, and A/B acceptance.
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
  double rel_spread = 0;   // robust relative noise: 1.4826 * MAD / median
};
// median: the middle value, the mean of the two middle ones for even n; p10/p90: linear interpolation between
// closest ranks (position p * (n - 1), numpy's default); stddev: sample (n - 1); stddev and rel_spread are 0
// when n < 2 (and rel_spread when median <= 0). Empty input: all zero.
SampleSummary summarize(std::vector<double> samples);

// Stop timing when at least min_samples (and at least 2) were taken and the robust relative noise is under
// target_noise, or when max_samples / the time cap is reached (the cap applies whatever the sample count).
struct StoppingRule {
  std::size_t min_samples = 10, max_samples = 200;
  double target_noise = 0.005;   // 0.5 %
  double time_cap_s = 2.0;       // summed sample time (plus overhead) per workload; honoured once min_samples
                                 // are in, else at 4x with at least 3 samples (very slow kernels)
};
bool should_stop(const std::vector<double>& samples, double elapsed_s, const StoppingRule& r);

// Interleaved A/B comparison (guard check 11). Samples come in pairs (a_i, b_i) taken back to back.
// ratio_i = a_i / b_i  (>1: B faster). Work in logs, l_i = log(ratio_i), so that the spread is relative and
// symmetric (a 2x and a 0.5x are equally far from 1):
//   median_ratio = exp(median(l_i))
//   noise        = 1.4826 * MAD(l_i)                  (robust per-pair relative spread, ~sigma of one ratio)
//   threshold    = max(min_gain, k * noise / sqrt(pairs))
//   b_faster     = median_ratio - 1 > threshold
// The noise of one pair is divided by sqrt(pairs) because the noise of the median of n pairs shrinks like
// 1/sqrt(n) (its standard error is about 1.25 * sigma / sqrt(n) for normal data, so the default k = 2 asks
// for about 1.6 standard errors, one-sided, on top of min_gain). min_gain keeps differences too small to
// matter (0.5 %) from flipping the leader even when the noise is tiny.
// No verdict (b_faster = false) with fewer than min_pairs pairs: the MAD of a handful of log-ratios is itself
// too noisy to trust. Simulated with log-normal noise (20 000 trials each), the rule above without that
// floor accepts a B that is 3 % *slower* under 10 % noise in 8 % of 5-pair trials and 14 % of 3-pair trials;
// at 10 pairs 3.4 %, at 30 pairs 0.9 %. An equally fast B is accepted in ~9 % of trials at 10 pairs and
// 6-7 % at 30-100 pairs under 10 % noise (k = 2 is ~1.6 standard errors, and the MAD is itself noisy); such a
// B is not slower, so that costs churn, not speed. Raise k (or min_pairs) to make acceptance stricter.
// Guards: mismatched lengths, fewer than min_pairs valid pairs, or any time that is not a positive finite
// number give b_faster = false (pairs = the smaller length; the other fields describe the valid pairs).
struct AbResult {
  std::size_t pairs = 0;
  double median_ratio = 1;   // exp(median(log(a_i / b_i))) = median(a_i / b_i) for odd n
  double noise = 0;          // 1.4826 * MAD of the log-ratios (relative, per pair)
  double threshold = 0;      // what median_ratio - 1 had to exceed
  bool b_faster = false;
};
AbResult compare_ab(const std::vector<double>& a, const std::vector<double>& b, double min_gain = 0.005,
                    double k = 2.0, std::size_t min_pairs = 10);
// B is slower than A by more than the noise (the mirror of b_faster, same threshold).
bool b_slower(const AbResult& r);

// Check 11 over a task's perf workloads: the candidate becomes leader when
//   - no workload is slower by more than its noise (never trade a regression for a gain elsewhere),
//   - at least one workload is faster by more than its noise, and
//   - the weighted geometric mean of the ratios beats 1 by more than min_gain.
// So a kernel 40% faster on prefill shapes and level (within noise) on a memory-bound decode shape leads;
// one that is 40% faster on three shapes and 5% slower (beyond noise) on the fourth stays a backup.
struct LeaderDecision {
  bool new_leader = false;
  double weighted_ratio = 1;   // exp(sum w_i log r_i / sum w_i)
  std::vector<std::size_t> slower, faster;   // indices of workloads slower / faster beyond their noise
  std::string why;             // one line: what decided it
};
LeaderDecision decide_leader(const std::vector<AbResult>& per_workload, const std::vector<double>& weights,
                             double min_gain = 0.005);

}  // namespace khive
