// Statistics over timing samples (stats.hpp).
#include "khive/guard/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

namespace khive {

namespace {

constexpr double kMadToSigma = 1.4826;  // MAD -> standard deviation for normal data

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

// log(a_i / b_i) for valid pairs; sets valid = false when any pair is unusable.
std::vector<double> log_ratios(const std::vector<double>& a, const std::vector<double>& b, bool& valid) {
  valid = a.size() == b.size();
  const std::size_t n = std::min(a.size(), b.size());
  std::vector<double> l;
  l.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (!(a[i] > 0) || !(b[i] > 0) || !std::isfinite(a[i]) || !std::isfinite(b[i])) {
      valid = false;
      continue;
    }
    l.push_back(std::log(a[i] / b[i]));
  }
  return l;
}

// Hodges-Lehmann estimate: the median of the Walsh averages (l_i + l_j) / 2, i <= j. O(n^2); n <= a few hundred.
double hodges_lehmann(const std::vector<double>& l) {
  std::vector<double> w;
  w.reserve(l.size() * (l.size() + 1) / 2);
  for (std::size_t i = 0; i < l.size(); ++i)
    for (std::size_t j = i; j < l.size(); ++j) w.push_back(0.5 * (l[i] + l[j]));
  if (w.empty()) return 0;
  auto mid = w.begin() + static_cast<std::ptrdiff_t>(w.size() / 2);
  std::nth_element(w.begin(), mid, w.end());
  if (w.size() % 2) return *mid;
  double hi = *mid;
  double lo = *std::max_element(w.begin(), mid);
  return 0.5 * (lo + hi);
}

// Doubled average ranks of |l| (integers even with ties), for nonzero l; zeros are dropped (Wilcoxon's rule).
void doubled_ranks(const std::vector<double>& l, std::vector<long>& rank2, std::vector<bool>& positive) {
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < l.size(); ++i)
    if (l[i] != 0.0) idx.push_back(i);
  std::sort(idx.begin(), idx.end(), [&](std::size_t x, std::size_t y) { return std::fabs(l[x]) < std::fabs(l[y]); });
  rank2.assign(idx.size(), 0);
  positive.assign(idx.size(), false);
  for (std::size_t i = 0; i < idx.size();) {
    std::size_t j = i;
    while (j + 1 < idx.size() && std::fabs(l[idx[j + 1]]) == std::fabs(l[idx[i]])) ++j;
    const long r2 = static_cast<long>(i + 1 + j + 1);  // 2 * average of ranks i+1 .. j+1
    for (std::size_t k = i; k <= j; ++k) {
      rank2[k] = r2;
      positive[k] = l[idx[k]] > 0;
    }
    i = j + 1;
  }
}

// P(W >= w) where W = sum of rank2 over a uniformly random subset (each sign +/- with probability 1/2).
double upper_tail(const std::vector<long>& rank2, long w) {
  long total = std::accumulate(rank2.begin(), rank2.end(), 0L);
  if (w <= 0) return 1.0;
  if (w > total) return 0.0;
  if (rank2.size() > 600) {  // normal approximation with continuity correction (never reached by the judge)
    double mean = total / 2.0, var = 0;
    for (long r : rank2) var += static_cast<double>(r) * static_cast<double>(r) / 4.0;
    double z = (static_cast<double>(w) - 0.5 - mean) / std::sqrt(var);
    return 0.5 * std::erfc(z / std::sqrt(2.0));
  }
  // count[s] / 2^n: distribution of the sum, in probabilities (doubles stay exact enough: terms are dyadic).
  std::vector<double> p(static_cast<std::size_t>(total) + 1, 0.0);
  p[0] = 1.0;
  long reach = 0;
  for (long r : rank2) {
    for (long s = reach; s >= 0; --s)
      if (p[static_cast<std::size_t>(s)] != 0.0) p[static_cast<std::size_t>(s + r)] += p[static_cast<std::size_t>(s)];
    reach += r;
    for (long s = 0; s <= reach; ++s) p[static_cast<std::size_t>(s)] *= 0.5;
  }
  double tail = 0;
  for (long s = w; s <= total; ++s) tail += p[static_cast<std::size_t>(s)];
  return std::min(1.0, tail);
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
  return 1.25 * summarize(samples).rel_spread / std::sqrt(static_cast<double>(n)) < r.target_noise;
}

double signed_rank_p(const std::vector<double>& l) {
  std::vector<long> rank2;
  std::vector<bool> positive;
  doubled_ranks(l, rank2, positive);
  long w = 0;
  for (std::size_t i = 0; i < rank2.size(); ++i)
    if (positive[i]) w += rank2[i];
  return upper_tail(rank2, w);
}

AbTest ab_test(const std::vector<double>& a, const std::vector<double>& b) {
  AbTest t;
  std::vector<double> l = log_ratios(a, b, t.valid);
  if (l.empty()) return t;
  const double m = median_of(l);
  t.median_ratio = std::exp(m);
  t.noise = l.size() >= 2 ? kMadToSigma * mad(l, m) : 0.0;
  t.ratio = std::exp(hodges_lehmann(l));
  if (t.valid && !a.empty()) t.leader_s = median_of(a);
  std::vector<long> rank2;
  std::vector<bool> positive;
  doubled_ranks(l, rank2, positive);
  t.pairs = rank2.size();
  long wplus = 0, total = 0;
  for (std::size_t i = 0; i < rank2.size(); ++i) {
    total += rank2[i];
    if (positive[i]) wplus += rank2[i];
  }
  t.p_faster = upper_tail(rank2, wplus);
  t.p_slower = upper_tail(rank2, total - wplus);  // W- = total - W+ has the same null distribution
  return t;
}

double min_gain_for_backend(const std::string& backend) { return backend == "cuda" ? 0.5e-6 : 2e-6; }

namespace {
// |leader - candidate| in time at the estimated ratio: the leader's median scaled by how much the ratio moves it.
double effect_s(const AbTest& t) { return t.ratio > 0 ? t.leader_s * std::abs(1.0 - 1.0 / t.ratio) : 0.0; }
bool beats_resolution(const AbTest& t, const AbRule& rule) {
  return rule.min_gain_s <= 0 || effect_s(t) > rule.min_gain_s;
}
}  // namespace

bool is_faster(const AbTest& t, double p_threshold, const AbRule& rule) {
  return t.valid && t.pairs >= rule.min_pairs && t.p_faster <= p_threshold && t.ratio - 1.0 > rule.min_gain &&
         beats_resolution(t, rule);
}

bool is_slower(const AbTest& t, const AbRule& rule) {
  return t.valid && t.pairs >= 2 && t.p_slower <= rule.alpha_slower && t.ratio > 0 &&
         1.0 / t.ratio - 1.0 > rule.min_gain && beats_resolution(t, rule);
}

namespace {
// decide_leader with the veto's workloads given: `slower[i]` says whether workload i vetoes.
LeaderDecision decide_with_veto(const std::vector<AbTest>& per_workload, const std::vector<double>& weights,
                                const AbRule& rule, const std::vector<bool>& slower) {
  LeaderDecision d;
  const std::size_t w = per_workload.size();
  if (w == 0) {
    d.why = "no perf workload was compared";
    return d;
  }
  // Holm's step-down: the k-th smallest p_faster is compared with alpha / (w - k); the first that fails stops it.
  std::vector<std::size_t> order(w);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](std::size_t x, std::size_t y) { return per_workload[x].p_faster < per_workload[y].p_faster; });
  d.holm_threshold.assign(w, 0.0);
  bool still = true;
  for (std::size_t k = 0; k < w; ++k) {
    const std::size_t i = order[k];
    d.holm_threshold[i] = rule.alpha / static_cast<double>(w - k);
    if (still && per_workload[i].p_faster <= d.holm_threshold[i]) {
      if (is_faster(per_workload[i], d.holm_threshold[i], rule)) d.faster.push_back(i);
    } else {
      still = false;
    }
  }
  std::sort(d.faster.begin(), d.faster.end());
  double lw = 0, ws = 0;
  bool usable = true;
  for (std::size_t i = 0; i < w; ++i) {
    const AbTest& t = per_workload[i];
    const double wt = i < weights.size() && weights[i] > 0 ? weights[i] : 1.0;
    if (!t.valid || t.pairs < 2)
      usable = false;
    else {
      lw += wt * std::log(t.ratio);
      ws += wt;
    }
    if (slower[i]) d.slower.push_back(i);
  }
  d.weighted_ratio = ws > 0 ? std::exp(lw / ws) : 1.0;
  const std::string overall = fmt::format("overall {:+.1f}%", (d.weighted_ratio - 1) * 100);
  if (!usable)
    d.why = "too few valid A/B pairs on some workload";
  else if (!d.slower.empty())
    d.why = fmt::format(
        "slower than the leader on {} workload(s) (signed-rank p <= {:g}, beyond the {:g}% minimum effect); {}",
        d.slower.size(), rule.alpha_slower, rule.min_gain * 100, overall);
  else if (d.faster.empty())
    d.why = fmt::format("faster on no workload at family-wise level {:g} with a gain over {:g}%{}; {}", rule.alpha,
                        rule.min_gain * 100,
                        rule.min_gain_s > 0 ? fmt::format(" and {:g} us", rule.min_gain_s * 1e6) : "", overall);
  else if (d.weighted_ratio - 1.0 <= rule.min_gain)
    d.why = fmt::format("{} is under the {:g}% minimum", overall, rule.min_gain * 100);
  else {
    d.new_leader = true;
    d.why = fmt::format("faster on {} of {} workload(s) (signed-rank, Holm at {:g}), slower on none; {}",
                        d.faster.size(), w, rule.alpha, overall);
  }
  return d;
}
}  // namespace

LeaderDecision decide_leader(const std::vector<AbTest>& per_workload, const std::vector<double>& weights,
                             const AbRule& rule) {
  std::vector<bool> slower(per_workload.size());
  for (std::size_t i = 0; i < per_workload.size(); ++i) slower[i] = is_slower(per_workload[i], rule);
  return decide_with_veto(per_workload, weights, rule, slower);
}

bool is_slower_on_the_judge_alone(const AbTest& t, const AbRule& rule) {
  return is_slower(t, rule) && 1.0 / t.ratio - 1.0 > rule.judge_alone_slower &&
         (rule.min_gain_s <= 0 || effect_s(t) > 4 * rule.min_gain_s);
}

bool should_stop_pairs(const std::vector<double>& a, const std::vector<double>& b, double elapsed_s,
                       const StoppingRule& r) {
  const std::size_t n = std::min(a.size(), b.size());
  if (n >= r.max_samples) return true;
  if (n < 2) return false;
  if (elapsed_s >= r.time_cap_s && n >= r.min_samples) return true;
  if (elapsed_s >= 4 * r.time_cap_s && n >= 3) return true;
  if (n < r.min_samples) return false;
  // Standard error of a median-like estimate of the log-ratio, from the spread of |l_i| alone (sign-blind: the
  // spread of |l| is the noise whether or not there is an effect, and it says nothing about the signs).
  std::vector<double> absl;
  for (std::size_t i = 0; i < n; ++i)
    if (a[i] > 0 && b[i] > 0 && std::isfinite(a[i]) && std::isfinite(b[i]))
      absl.push_back(std::fabs(std::log(a[i] / b[i])));
  if (absl.size() < 2) return false;
  const double scale = kMadToSigma * mad(absl, median_of(absl));
  return 1.25 * scale / std::sqrt(static_cast<double>(absl.size())) < r.target_noise;
}

double ab_retry_cap_scale(std::size_t fewest_pairs, const AbRule& rule) {
  if (fewest_pairs == 0) return 8.0;
  const double want = 1.5 * static_cast<double>(std::max<std::size_t>(rule.min_pairs, 2));
  return std::clamp(want / static_cast<double>(fewest_pairs), 1.5, 8.0);
}

LeaderDecision decide_on_both_clocks(const std::vector<AbTest>& judge, const std::vector<AbTest>& on_events,
                                     const std::vector<double>& weights, const AbRule& rule) {
  bool events_usable = on_events.size() == judge.size() && !judge.empty();
  for (const auto& t : on_events)
    if (!t.valid || t.pairs == 0) events_usable = false;
  if (!events_usable) return decide_leader(judge, weights, rule);
  std::vector<bool> slower(judge.size());
  std::size_t judge_only = 0;
  for (std::size_t i = 0; i < judge.size(); ++i) {
    const bool on_judge = is_slower(judge[i], rule);
    slower[i] = on_judge && (is_slower(on_events[i], rule) || is_slower_on_the_judge_alone(judge[i], rule));
    judge_only += on_judge && !slower[i];
  }
  LeaderDecision d = decide_with_veto(judge, weights, rule, slower);
  if (judge_only > 0)
    d.why += fmt::format(
        " (slower on the judge's clock alone on {} workload(s), within what two executors differ by: not a regression)",
        judge_only);
  if (!d.new_leader) return d;
  const LeaderDecision de = decide_leader(on_events, weights, rule);
  if (de.new_leader) return d;
  d.new_leader = false;
  d.why = "faster on the judge's clock (" + d.why + "), but not on the executors' own clocks (" + de.why +
          "): the gain is in the time around the calls, not in the kernel";
  return d;
}

}  // namespace khive
