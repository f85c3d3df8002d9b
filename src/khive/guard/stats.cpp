// Statistics over timing samples (stats.hpp).
#include "khive/guard/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace khive {

namespace {

constexpr double kMadToSigma = 1.4826;   // MAD -> standard deviation for normal data

// Median of a sorted, non-empty vector; even n averages the two middle values.
double sorted_median(const std::vector<double>& s) {
  const std::size_t n = s.size();
  return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return sorted_median(v);
}

// Median absolute deviation from the median m.
double mad(const std::vector<double>& v, double m) {
  std::vector<double> d(v.size());
  std::transform(v.begin(), v.end(), d.begin(), [m](double x) { return std::fabs(x - m); });
  return median_of(std::move(d));
}

// Percentile p in [0, 1] of a sorted, non-empty vector, linear interpolation between closest ranks
// (position p * (n - 1); numpy's default).
double sorted_percentile(const std::vector<double>& s, double p) {
  const double pos = p * static_cast<double>(s.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, s.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return s[lo] + frac * (s[hi] - s[lo]);
}

}  // namespace

SampleSummary summarize(std::vector<double> samples) {
  SampleSummary r;
  r.n = samples.size();
  if (samples.empty()) return r;
  std::sort(samples.begin(), samples.end());
  const double n = static_cast<double>(r.n);
  r.median = sorted_median(samples);
  r.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / n;
  r.min = samples.front();
  r.max = samples.back();
  r.p10 = sorted_percentile(samples, 0.10);
  r.p90 = sorted_percentile(samples, 0.90);
  if (r.n >= 2) {
    double ss = 0;
    for (double x : samples) ss += (x - r.mean) * (x - r.mean);
    r.stddev = std::sqrt(ss / (n - 1));
    if (r.median > 0) r.rel_spread = kMadToSigma * mad(samples, r.median) / r.median;
  }
  return r;
}

bool should_stop(const std::vector<double>& samples, double elapsed_s, const StoppingRule& r) {
  const std::size_t n = samples.size();
  if (n >= r.max_samples) return true;
  // The noise of fewer than two samples is unknown (rel_spread reads 0 then), never "quiet".
  if (n < 2) return false;
  // The time cap ends sampling once min_samples are in; a kernel so slow that min_samples do not fit
  // gets until 4x the cap and at least 3 samples (a median of 2 is no median).
  if (elapsed_s >= r.time_cap_s && n >= r.min_samples) return true;
  if (elapsed_s >= 4 * r.time_cap_s && n >= 3) return true;
  if (n < r.min_samples) return false;
  return summarize(samples).rel_spread < r.target_noise;
}

AbResult compare_ab(const std::vector<double>& a, const std::vector<double>& b, double min_gain, double k,
                    std::size_t min_pairs) {
  AbResult r;
  r.pairs = std::min(a.size(), b.size());
  std::vector<double> logs;
  logs.reserve(r.pairs);
  bool valid = a.size() == b.size();
  for (std::size_t i = 0; i < r.pairs; ++i) {
    if (!(a[i] > 0) || !(b[i] > 0) || !std::isfinite(a[i]) || !std::isfinite(b[i])) {
      valid = false;   // a time that is not a positive number: no verdict
      continue;
    }
    logs.push_back(std::log(a[i] / b[i]));
  }
  if (logs.empty()) return r;
  const double m = median_of(logs);
  r.median_ratio = std::exp(m);
  r.noise = logs.size() >= 2 ? kMadToSigma * mad(logs, m) : 0.0;
  r.threshold = std::max(min_gain, k * r.noise / std::sqrt(static_cast<double>(logs.size())));
  // Too few pairs say too little about the noise (one pair nothing at all): no verdict.
  const bool enough = logs.size() >= std::max<std::size_t>(min_pairs, 2);
  r.b_faster = valid && enough && r.median_ratio - 1.0 > r.threshold;
  return r;
}

bool b_slower(const AbResult& r) {
  return r.pairs >= 2 && r.median_ratio > 0 && 1.0 / r.median_ratio - 1.0 > r.threshold;
}

LeaderDecision decide_leader(const std::vector<AbResult>& per_workload, const std::vector<double>& weights,
                             double min_gain) {
  LeaderDecision d;
  if (per_workload.empty()) {
    d.why = "no perf workload was compared";
    return d;
  }
  double lw = 0, ws = 0;
  bool verdict_everywhere = true;
  for (std::size_t i = 0; i < per_workload.size(); ++i) {
    const AbResult& r = per_workload[i];
    const double w = i < weights.size() && weights[i] > 0 ? weights[i] : 1.0;
    if (r.pairs < 2 || !(r.median_ratio > 0)) verdict_everywhere = false;
    else {
      lw += w * std::log(r.median_ratio);
      ws += w;
    }
    if (b_slower(r)) d.slower.push_back(i);
    if (r.b_faster) d.faster.push_back(i);
  }
  d.weighted_ratio = ws > 0 ? std::exp(lw / ws) : 1.0;
  if (!verdict_everywhere) d.why = "too few A/B pairs on some workload";
  else if (!d.slower.empty()) d.why = "slower than the leader beyond the noise on " + std::to_string(d.slower.size()) + " workload(s)";
  else if (d.faster.empty()) d.why = "faster beyond the noise on no workload";
  else if (d.weighted_ratio - 1.0 <= min_gain) d.why = "overall gain under the minimum";
  else {
    d.new_leader = true;
    d.why = "faster beyond the noise on " + std::to_string(d.faster.size()) + " of " + std::to_string(per_workload.size()) +
            " workload(s), slower on none";
  }
  return d;
}

}  // namespace khive
