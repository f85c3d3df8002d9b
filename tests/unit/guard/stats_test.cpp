// Timing statistics: summaries, the stopping rule and A/B acceptance, on deterministic synthetic samples
// (nvbench style: the same stream every run, no GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "khive/guard/stats.hpp"

namespace khive {
namespace {

// Deterministic normal draws: splitmix64 -> two uniforms -> Box-Muller.
class Synthetic {
 public:
  explicit Synthetic(uint64_t seed) : s_(seed) {}
  double uniform() {  // (0, 1)
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (static_cast<double>(z >> 11) + 0.5) / 9007199254740992.0;
  }
  double normal() {
    const double u1 = uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  // A timing sample around `center` with relative noise `rel` (multiplicative, log-normal).
  double sample(double center, double rel) { return center * std::exp(rel * normal()); }

 private:
  uint64_t s_;
};

std::vector<double> stream(uint64_t seed, std::size_t n, double center, double rel) {
  Synthetic g(seed);
  std::vector<double> v(n);
  for (double& x : v) x = g.sample(center, rel);
  return v;
}

// ---------------------------------------------------------------------------------------------- summarize

TEST(Summarize, Empty) {
  SampleSummary s = summarize({});
  EXPECT_EQ(s.n, 0u);
  EXPECT_EQ(s.median, 0.0);
  EXPECT_EQ(s.rel_spread, 0.0);
}

TEST(Summarize, One) {
  SampleSummary s = summarize({4.0});
  EXPECT_EQ(s.n, 1u);
  EXPECT_EQ(s.median, 4.0);
  EXPECT_EQ(s.mean, 4.0);
  EXPECT_EQ(s.min, 4.0);
  EXPECT_EQ(s.max, 4.0);
  EXPECT_EQ(s.p10, 4.0);
  EXPECT_EQ(s.p90, 4.0);
  EXPECT_EQ(s.stddev, 0.0);
  EXPECT_EQ(s.rel_spread, 0.0);
}

TEST(Summarize, OddCount) {
  SampleSummary s = summarize({3.0, 1.0, 2.0});
  EXPECT_EQ(s.n, 3u);
  EXPECT_DOUBLE_EQ(s.median, 2.0);
  EXPECT_DOUBLE_EQ(s.mean, 2.0);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 3.0);
  EXPECT_DOUBLE_EQ(s.p10, 1.2);  // position 0.1 * 2 = 0.2
  EXPECT_DOUBLE_EQ(s.p90, 2.8);
  EXPECT_DOUBLE_EQ(s.stddev, 1.0);
  EXPECT_DOUBLE_EQ(s.rel_spread, 1.4826 * 1.0 / 2.0);  // MAD = median(1, 0, 1) = 1
}

TEST(Summarize, EvenCountAveragesMiddle) {
  SampleSummary s = summarize({4.0, 1.0, 3.0, 2.0});
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.p10, 1.3);  // position 0.3
  EXPECT_DOUBLE_EQ(s.p90, 3.7);  // position 2.7
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(5.0 / 3.0));
  EXPECT_DOUBLE_EQ(s.rel_spread, 1.4826 * 1.0 / 2.5);  // deviations 1.5 0.5 0.5 1.5 -> MAD 1
}

TEST(Summarize, OutliersBarelyMoveTheMedian) {
  std::vector<double> v = stream(1, 41, 1.0, 0.002);
  SampleSummary clean = summarize(v);
  v.push_back(50.0);  // a preempted sample
  v.push_back(0.01);  // and a bogus fast one
  v.push_back(80.0);
  SampleSummary dirty = summarize(v);
  EXPECT_NEAR(dirty.median, clean.median, 0.002);
  EXPECT_NEAR(dirty.rel_spread, clean.rel_spread, 0.001);
  EXPECT_LT(dirty.rel_spread, 0.005);
  EXPECT_GT(dirty.mean, 2.0 * clean.mean);  // the mean is not robust
  EXPECT_GT(dirty.stddev, 10.0);
  EXPECT_EQ(dirty.max, 80.0);
  EXPECT_EQ(dirty.min, 0.01);
}

TEST(Summarize, RelSpreadEstimatesRelativeNoise) {
  SampleSummary s = summarize(stream(2, 2001, 1e-3, 0.02));
  EXPECT_NEAR(s.median, 1e-3, 2e-5);
  EXPECT_NEAR(s.rel_spread, 0.02, 0.002);
  EXPECT_LT(s.p10, s.median);
  EXPECT_GT(s.p90, s.median);
}

// -------------------------------------------------------------------------------------------- should_stop

// Takes samples from g until should_stop says so; elapsed = summed sample time. Returns the count.
std::size_t run_until_stop(Synthetic& g, double center, double rel, const StoppingRule& r) {
  std::vector<double> samples;
  double elapsed = 0;
  while (!should_stop(samples, elapsed, r)) {
    samples.push_back(g.sample(center, rel));
    elapsed += samples.back();
    if (samples.size() > 100000) break;  // the rule must have stopped long before
  }
  return samples.size();
}

TEST(ShouldStop, QuietStreamStopsAtMinSamples) {
  StoppingRule r;  // 10..200 samples, 0.5 %, 2 s
  Synthetic g(3);
  EXPECT_EQ(run_until_stop(g, 1e-4, 0.0005, r), r.min_samples);
  std::vector<double> nine = stream(4, 9, 1e-4, 0.0005);
  EXPECT_FALSE(should_stop(nine, 9e-4, r));
  nine.push_back(1e-4);
  EXPECT_TRUE(should_stop(nine, 1e-3, r));
}

TEST(ShouldStop, NoisyStreamRunsToMaxSamples) {
  StoppingRule r;
  Synthetic g(5);
  // 10 % noise: the median's error 1.25 x 10 % / sqrt(200) is still ~0.9 %; 200 * 0.1 ms stays under the 2 s cap
  EXPECT_EQ(run_until_stop(g, 1e-4, 0.10, r), r.max_samples);
}

TEST(ShouldStop, NoisyStreamHitsTheTimeCap) {
  StoppingRule r;
  Synthetic g(6);
  const std::size_t n = run_until_stop(g, 0.05, 0.05, r);  // 50 ms samples: 2 s after ~40
  EXPECT_GT(n, 35u);
  EXPECT_LT(n, 45u);
}

TEST(ShouldStop, TheCapWaitsForMinSamplesUnlessTheKernelIsVerySlow) {
  StoppingRule r;  // 10 samples, 2 s
  std::vector<double> nine(9, 0.3);
  EXPECT_FALSE(should_stop(nine, 2.7, r));  // over the cap, but 9 < 10 samples
  nine.push_back(0.3);
  EXPECT_TRUE(should_stop(nine, 3.0, r));         // 10 samples and over the cap
  EXPECT_FALSE(should_stop({1.0, 1.5}, 2.5, r));  // a 1 s kernel: 2 samples are not enough
  EXPECT_FALSE(should_stop({1.0, 1.5, 1.2}, 7.9, r));
  EXPECT_TRUE(should_stop({1.0, 1.5, 1.2}, 8.0, r));  // 4x the cap and 3 samples
  EXPECT_FALSE(should_stop({3.0, 3.0}, 100, r));      // never on 2 samples (the watchdog bounds it)
}

TEST(ShouldStop, ModerateNoiseStopsOnceTheMedianIsKnown) {
  StoppingRule r;
  r.target_noise = 0.002;
  Synthetic g(7);
  // 1 % noise per call: the median's error 1.25 x 1 % / sqrt(n) is under 0.2 % from n ~ 40 on.
  const std::size_t n = run_until_stop(g, 1e-4, 0.01, r);
  EXPECT_GE(n, 25u);
  EXPECT_LE(n, 80u);
}

TEST(ShouldStop, MoreNoiseTakesMoreSamples) {
  StoppingRule r;
  r.max_samples = 100000;
  r.time_cap_s = 1e9;
  r.target_noise = 0.002;
  Synthetic g(8);
  // ~40 samples at 1 % noise, ~600 at 4 %: the count grows as the square of the noise.
  const std::size_t quiet = run_until_stop(g, 1e-4, 0.01, r), noisy = run_until_stop(g, 1e-4, 0.04, r);
  EXPECT_GT(noisy, 8 * quiet);
  EXPECT_LT(quiet, 80u);
}

TEST(ShouldStop, NeverOnFewerThanTwoSamples) {
  StoppingRule r;
  r.min_samples = 0;
  EXPECT_FALSE(should_stop({}, 0, r));
  EXPECT_FALSE(should_stop({1.0}, 1.0, r));  // one sample: noise unknown
  EXPECT_TRUE(should_stop({1.0, 1.0}, 2.0 - 1e-9, r));
}

// --------------------------------------------------------------------------------------------- ab_test

// n interleaved pairs: A around ta, B around tb, each with its own relative noise.
void pairs(uint64_t seed, std::size_t n, double ta, double tb, double rel, std::vector<double>& a,
           std::vector<double>& b) {
  Synthetic g(seed);
  a.clear();
  b.clear();
  for (std::size_t i = 0; i < n; ++i) {
    a.push_back(g.sample(ta, rel));
    b.push_back(g.sample(tb, rel));
  }
}

// P(W+ >= w) by enumerating every sign pattern (small n): the exact test's definition, computed the slow way.
double brute_upper_tail(const std::vector<double>& l) {
  const std::size_t n = l.size();
  std::vector<std::size_t> idx(n);
  for (std::size_t i = 0; i < n; ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](std::size_t x, std::size_t y) { return std::fabs(l[x]) < std::fabs(l[y]); });
  std::vector<double> rank(n);
  for (std::size_t i = 0; i < n;) {  // average ranks for ties
    std::size_t j = i;
    while (j + 1 < n && std::fabs(l[idx[j + 1]]) == std::fabs(l[idx[i]])) ++j;
    for (std::size_t k = i; k <= j; ++k) rank[idx[k]] = (static_cast<double>(i + j) + 2) / 2;
    i = j + 1;
  }
  double w = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (l[i] > 0) w += rank[i];
  int hits = 0;
  for (uint32_t m = 0; m < (1u << n); ++m) {
    double s = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (m & (1u << i)) s += rank[i];
    hits += s >= w - 1e-9;
  }
  return static_cast<double>(hits) / static_cast<double>(1u << n);
}

TEST(SignedRank, ExactTailMatchesEnumeration) {
  const std::vector<std::vector<double>> cases = {
      {0.3, -0.1, 0.2, 0.5, -0.4, 0.05, 0.7, -0.25},
      {1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
      {-1, -2, -3, -4, -5, -6},
      {0.1, -0.1, 0.1, 0.2, -0.2, 0.3},  // ties in |l|
      {0.4, -0.3, 0.2, -0.1, 0.6, 0.5, -0.7, 0.8, 0.9, -0.05, 0.15, 0.25},
  };
  for (const auto& l : cases) EXPECT_NEAR(signed_rank_p(l), brute_upper_tail(l), 1e-12);
  EXPECT_NEAR(signed_rank_p({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}), 1.0 / 1024, 1e-15);  // all positive: 2^-n
}

TEST(AbTest, IdenticalSamplesAreLevel) {
  std::vector<double> a = stream(8, 30, 1e-3, 0.01);
  AbTest t = ab_test(a, a);
  EXPECT_EQ(t.pairs, 0u);  // every log-ratio is exactly 0: no signs to count
  EXPECT_DOUBLE_EQ(t.ratio, 1.0);
  EXPECT_DOUBLE_EQ(t.p_faster, 1.0);
  EXPECT_FALSE(is_faster(t, 0.01, AbRule{}));
}

TEST(AbTest, ClearGainIsFaster) {
  for (uint64_t seed = 30; seed < 50; ++seed) {
    std::vector<double> a, b;
    pairs(seed, 30, 1e-3, 1e-3 / 1.05, 0.01, a, b);  // B 5 % faster, 1 % noise
    AbTest t = ab_test(a, b);
    EXPECT_TRUE(is_faster(t, 0.01, AbRule{})) << "seed " << seed << " ratio " << t.ratio << " p " << t.p_faster;
    EXPECT_NEAR(t.ratio, 1.05, 0.01);
    AbTest back = ab_test(b, a);
    EXPECT_FALSE(is_faster(back, 0.05, AbRule{}));
    EXPECT_TRUE(is_slower(back, AbRule{}));
  }
}

TEST(AbTest, GainBelowTheMinimumEffectIsNotFaster) {
  std::vector<double> a, b;
  pairs(50, 100, 1e-3, 1e-3 / 1.005, 0.0001, a, b);  // 0.5 % gain, measured very precisely: significant, too small
  AbTest t = ab_test(a, b);
  EXPECT_LT(t.p_faster, 1e-10);
  EXPECT_NEAR(t.ratio, 1.005, 0.0002);
  EXPECT_FALSE(is_faster(t, 0.01, AbRule{}));
  AbRule lenient;
  lenient.min_gain = 0.001;
  EXPECT_TRUE(is_faster(t, 0.01, lenient));
}

// The ruler's resolution in time: 3 % of 11 us (0.33 us) is under the GPU's 0.5 us, 3 % of 27 us (0.81 us) over it;
// the same floor holds for "slower", so two copies of a tiny kernel are neither.
TEST(AbTest, GainBelowTheRulersResolutionIsNeitherFasterNorSlower) {
  AbRule gpu;
  gpu.min_gain_s = min_gain_for_backend("cuda");
  EXPECT_DOUBLE_EQ(gpu.min_gain_s, 0.5e-6);
  EXPECT_GT(min_gain_for_backend("cpu"), gpu.min_gain_s);
  std::vector<double> a, b;
  pairs(51, 30, 11e-6, 11e-6 / 1.03, 0.002, a, b);
  AbTest small = ab_test(a, b);
  EXPECT_NEAR(small.leader_s, 11e-6, 0.1e-6);
  EXPECT_LT(small.p_faster, 1e-6);
  EXPECT_TRUE(is_faster(small, 0.01, AbRule{}));  // relative rule alone: faster
  EXPECT_FALSE(is_faster(small, 0.01, gpu));
  EXPECT_FALSE(is_slower(ab_test(b, a), gpu));
  EXPECT_TRUE(is_slower(ab_test(b, a), AbRule{}));
  pairs(52, 30, 27e-6, 27e-6 / 1.03, 0.002, a, b);
  EXPECT_TRUE(is_faster(ab_test(a, b), 0.01, gpu));
  EXPECT_TRUE(is_slower(ab_test(b, a), gpu));
  const LeaderDecision d = decide_leader({small}, {1}, gpu);
  EXPECT_FALSE(d.new_leader);
  EXPECT_NE(d.why.find("0.5 us"), std::string::npos) << d.why;
}

TEST(AbTest, FewerThanMinPairsCannotBeFaster) {
  std::vector<double> two(19, 2.0), one(19, 1.0);  // B twice as fast, 19 pairs (AbRule's minimum is 20)
  AbTest t = ab_test(two, one);
  EXPECT_EQ(t.pairs, 19u);
  EXPECT_FALSE(is_faster(t, 0.01, AbRule{}));
}

TEST(AbTest, Guards) {
  AbTest t = ab_test({}, {});
  EXPECT_EQ(t.pairs, 0u);
  EXPECT_FALSE(is_faster(t, 1.0, AbRule{}));
  std::vector<double> a(22, 2.0), b(21, 1.0);  // lengths differ
  EXPECT_FALSE(ab_test(a, b).valid);
  EXPECT_FALSE(is_faster(ab_test(a, b), 1.0, AbRule{}));
  std::vector<double> two(22, 2.0), one(22, 1.0);
  for (std::size_t i = 0; i < 22; ++i) two[i] += 0.001 * static_cast<double>(i);  // distinct |l|
  EXPECT_TRUE(is_faster(ab_test(two, one), 0.01, AbRule{}));
  one[3] = 0.0;
  EXPECT_FALSE(is_faster(ab_test(two, one), 1.0, AbRule{}));
  one[3] = -1.0;
  EXPECT_FALSE(ab_test(two, one).valid);
  one[3] = 1.0;
  two[5] = NAN;
  EXPECT_FALSE(ab_test(two, one).valid);
  two[5] = INFINITY;
  EXPECT_FALSE(ab_test(two, one).valid);
}

// The decision's error rates over many deterministic trials. Null: an identical kernel (A and B from the same
// distribution) must be a new leader in at most alpha = 1 % of comparisons, whatever the noise's shape.
double leader_rate(std::size_t workloads, std::size_t n, double gain, double rel, bool heavy_tails = false) {
  int leaders = 0;
  const int trials = 2000;
  for (int t = 0; t < trials; ++t) {
    std::vector<AbTest> tests;
    for (std::size_t w = 0; w < workloads; ++w) {
      std::vector<double> a, b;
      pairs(100000 + static_cast<uint64_t>(t) * 31 + w, n, 1.0, 1.0 / (1.0 + gain), rel, a, b);
      if (heavy_tails)  // every 7th sample of either side 3x slower (an interrupted sample)
        for (std::size_t i = 0; i < n; i += 7) (i % 2 ? a : b)[i] *= 3;
      tests.push_back(ab_test(a, b));
    }
    leaders += decide_leader(tests, std::vector<double>(workloads, 1.0)).new_leader;
  }
  return static_cast<double>(leaders) / trials;
}

TEST(DecideLeader, NullRateIsAtMostAlpha) {
  // With the 1 % minimum effect the null rate is far under alpha; without it, the test alone holds it at alpha.
  EXPECT_LE(leader_rate(1, 20, 0.0, 0.05), 0.01);
  EXPECT_LE(leader_rate(4, 20, 0.0, 0.05), 0.01);
  EXPECT_LE(leader_rate(8, 50, 0.0, 0.01), 0.01);
  EXPECT_LE(leader_rate(4, 30, 0.0, 0.10, true), 0.01);
}

TEST(DecideLeader, PowerOnRealGains) {
  EXPECT_GE(leader_rate(1, 20, 0.05, 0.01), 0.99);  // 5 % under 1 % noise: always
  EXPECT_GE(leader_rate(4, 30, 0.05, 0.02), 0.99);
  EXPECT_GE(leader_rate(1, 60, 0.03, 0.03), 0.9);   // 3 % under 3 % noise with 60 pairs
  EXPECT_LE(leader_rate(1, 20, -0.03, 0.02), 0.0);  // a slower kernel never
}

AbTest synthetic(double ratio, double p_faster, double p_slower, std::size_t pairs = 20) {
  AbTest t;
  t.pairs = pairs;
  t.ratio = ratio;
  t.median_ratio = ratio;
  t.p_faster = p_faster;
  t.p_slower = p_slower;
  return t;
}

TEST(DecideLeader, FasterSomewhereLevelElsewhereLeads) {
  // 40 % faster on three prefill shapes, level on a memory-bound decode shape.
  auto d = decide_leader(
      {synthetic(1.4, 1e-6, 1), synthetic(1.5, 1e-6, 1), synthetic(1.39, 1e-6, 1), synthetic(1.005, 0.3, 0.7)},
      {1, 1, 1, 1});
  EXPECT_TRUE(d.new_leader) << d.why;
  EXPECT_EQ(d.faster.size(), 3u);
  EXPECT_TRUE(d.slower.empty());
  EXPECT_GT(d.weighted_ratio, 1.3);
}

TEST(DecideLeader, ARegressionVetoes) {
  auto d = decide_leader({synthetic(1.4, 1e-6, 1), synthetic(1.5, 1e-6, 1), synthetic(1 / 1.05, 1, 1e-4)}, {1, 1, 1});
  EXPECT_FALSE(d.new_leader);
  ASSERT_EQ(d.slower.size(), 1u);
  EXPECT_EQ(d.slower[0], 2u);
  EXPECT_NE(d.why.find("slower"), std::string::npos);
}

TEST(DecideLeader, AGainOnlyTheJudgesClockSeesIsNotALeader) {
  // As on the H200: two copies of one kernel, 2 % apart on the judge's clock (the executors' context switches),
  // level on their events.
  const AbTest judge = synthetic(1.02, 1e-4, 1);
  ASSERT_TRUE(decide_leader({judge}, {1}).new_leader);
  const LeaderDecision both = decide_on_both_clocks({judge}, {synthetic(1.001, 0.4, 0.6)}, {1});
  EXPECT_FALSE(both.new_leader);
  EXPECT_NE(both.why.find("not on the executors' own clocks"), std::string::npos) << both.why;
  // A real gain shows on both clocks.
  EXPECT_TRUE(decide_on_both_clocks({judge}, {synthetic(1.03, 1e-5, 1)}, {1}).new_leader);
  // Events that are not valid (an executor that reported none), or missing, leave the judge's clock to decide; a
  // gain on the events alone is never a leader.
  AbTest broken = synthetic(1.5, 1e-9, 1);
  broken.valid = false;
  EXPECT_TRUE(decide_on_both_clocks({judge}, {broken}, {1}).new_leader);
  EXPECT_TRUE(decide_on_both_clocks({judge}, {}, {1}).new_leader);
  EXPECT_FALSE(decide_on_both_clocks({synthetic(1.0, 0.5, 0.5)}, {synthetic(1.5, 1e-9, 1)}, {1}).new_leader);
}

TEST(DecideLeader, ARegressionOnlyTheJudgesClockSeesDoesNotVeto) {
  AbRule gpu;
  gpu.min_gain_s = min_gain_for_backend("cuda");
  const auto timed = [](AbTest t, double leader_s) {
    t.leader_s = leader_s;
    return t;
  };
  // As on the H200 (2026-12-03): two copies of one 8 us kernel, 6.5 % (0.5 us) apart on the judge's clock, level
  // on their events: not "slower".
  const AbTest small = timed(synthetic(1 / 1.065, 1, 1e-4), 8e-6);
  ASSERT_TRUE(is_slower(small, AbRule{}));
  LeaderDecision d = decide_on_both_clocks({small}, {timed(synthetic(1.0, 0.5, 0.5), 8e-6)}, {1}, gpu);
  EXPECT_TRUE(d.slower.empty()) << d.why;
  EXPECT_NE(d.why.find("judge's clock alone on 1"), std::string::npos) << d.why;
  // ... and it does not stop a gain elsewhere that both clocks see.
  const AbTest big = timed(synthetic(1.2, 1e-6, 1), 100e-6);
  d = decide_on_both_clocks({big, small}, {big, timed(synthetic(1.0, 0.5, 0.5), 8e-6)}, {1, 1}, gpu);
  EXPECT_TRUE(d.new_leader) << d.why;
  // The events confirm it: slower, and it vetoes.
  d = decide_on_both_clocks({big, small}, {big, timed(synthetic(1 / 1.08, 1, 1e-4), 8e-6)}, {1, 1}, gpu);
  EXPECT_FALSE(d.new_leader);
  EXPECT_EQ(d.slower, std::vector<std::size_t>{1});
  // Beyond 5 % and 2 us (4x the GPU's resolution) the judge's clock vetoes alone, whatever the events say: a kernel
  // that forges its events cannot hide a real regression.
  const AbTest clear = timed(synthetic(1 / 1.10, 1, 1e-4), 30e-6);
  EXPECT_TRUE(is_slower_on_the_judge_alone(clear, gpu));
  d = decide_on_both_clocks({big, clear}, {big, timed(synthetic(1.0, 0.5, 0.5), 8e-6)}, {1, 1}, gpu);
  EXPECT_FALSE(d.new_leader);
  EXPECT_EQ(d.slower, std::vector<std::size_t>{1});
  // 10 % of 8 us is 0.8 us: under 2 us, so not alone.
  EXPECT_FALSE(is_slower_on_the_judge_alone(timed(synthetic(1 / 1.10, 1, 1e-4), 8e-6), gpu));
  // Without events the judge's clock decides alone, as before.
  d = decide_on_both_clocks({big, small}, {}, {1, 1}, gpu);
  EXPECT_EQ(d.slower, std::vector<std::size_t>{1});
}

TEST(DecideLeader, HolmAdjustsForTheNumberOfWorkloads) {
  // p = 0.004 passes alone (alpha 1 %) but not as the only small p among four workloads (needs 0.0025).
  EXPECT_TRUE(decide_leader({synthetic(1.1, 0.004, 1)}, {1}).new_leader);
  auto d = decide_leader(
      {synthetic(1.1, 0.004, 1), synthetic(1.0, 0.5, 0.5), synthetic(1.0, 0.5, 0.5), synthetic(1.0, 0.5, 0.5)},
      {1, 1, 1, 1});
  EXPECT_FALSE(d.new_leader);
  EXPECT_NEAR(d.holm_threshold[0], 0.0025, 1e-15);
  // Step-down: the smallest p meets alpha/4, the next alpha/3.
  auto d2 = decide_leader(
      {synthetic(1.1, 0.002, 1), synthetic(1.1, 0.003, 1), synthetic(1.0, 0.5, 0.5), synthetic(1.0, 0.5, 0.5)},
      {1, 1, 1, 1});
  EXPECT_EQ(d2.faster.size(), 2u);
}

TEST(DecideLeader, WeightsDecideTheOverallGain) {
  // Faster on a light workload only; the heavy one is level but slightly slower: under the 1 % minimum overall.
  auto d = decide_leader({synthetic(1.03, 1e-5, 1), synthetic(0.996, 0.6, 0.4)}, {1, 20});
  EXPECT_FALSE(d.new_leader);
  EXPECT_NE(d.why.find("minimum"), std::string::npos);
  EXPECT_TRUE(decide_leader({synthetic(1.03, 1e-5, 1), synthetic(0.996, 0.6, 0.4)}, {20, 1}).new_leader);
}

TEST(DecideLeader, TooFewPairsAnywhereGivesNoLeader) {
  EXPECT_FALSE(decide_leader({synthetic(1.5, 1e-6, 1), synthetic(1.5, 1e-6, 1, 1)}, {1, 1}).new_leader);
  EXPECT_FALSE(decide_leader({}, {}).new_leader);
}

TEST(ShouldStopPairs, StopsOnSpreadNotOnSign) {
  StoppingRule r;
  r.target_noise = 0.005;
  std::vector<double> a, b;
  pairs(5, 40, 1e-3, 1e-3 / 1.3, 0.001, a, b);  // a 30 % gain measured precisely: the spread of |l| is small
  EXPECT_TRUE(should_stop_pairs(a, b, 0.1, r));
  // Flipping the order of some pairs (which sign each l has) does not change the decision to stop.
  for (std::size_t i = 0; i < a.size(); i += 3) std::swap(a[i], b[i]);
  EXPECT_TRUE(should_stop_pairs(a, b, 0.1, r));
  pairs(6, 40, 1e-3, 1e-3, 0.2, a, b);  // 20 % noise: keeps going until the cap
  EXPECT_FALSE(should_stop_pairs(a, b, 0.1, r));
  EXPECT_TRUE(should_stop_pairs(a, b, r.time_cap_s + 0.1, r));
}

// The evaluator's second A/B after one that stopped short of min_pairs (guard_evaluator.cpp): at any pace whose first
// A/B stopped between 3 and min_pairs - 1 pairs, the scaled cap reaches min_pairs with room to spare. Pairs are
// simulated at a fixed pace on 20 % noise, so only the cap can stop them before max_samples.
TEST(AbRetryCapScale, TheSecondAbReachesMinPairsAtThePaceOfTheFirst) {
  AbRule rule;
  StoppingRule cap;
  cap.min_samples = rule.min_pairs;
  cap.time_cap_s = 0.4;
  auto pairs_until_stop = [&](double pair_s, double time_cap_s) {
    StoppingRule r = cap;
    r.time_cap_s = time_cap_s;
    std::vector<double> a, b;
    for (std::size_t n = 1;; ++n) {
      pairs(7, n, 1e-3, 1e-3, 0.2, a, b);
      if (should_stop_pairs(a, b, static_cast<double>(n) * pair_s, r)) return n;
    }
  };
  for (std::size_t first = 3; first < rule.min_pairs; ++first) {
    const double pair_s = 4 * cap.time_cap_s / static_cast<double>(first) + 1e-9;  // the pace that stops at `first`
    ASSERT_EQ(pairs_until_stop(pair_s, cap.time_cap_s), first);
    const double scale = ab_retry_cap_scale(first, rule);
    EXPECT_GE(scale, 1.5);
    EXPECT_LE(scale, 8.0);
    EXPECT_GE(pairs_until_stop(pair_s, cap.time_cap_s * scale), rule.min_pairs) << "first A/B: " << first;
  }
  EXPECT_DOUBLE_EQ(ab_retry_cap_scale(12, rule), 2.5);  // min_pairs 20: 30 pairs wanted at the pace of 12
  EXPECT_DOUBLE_EQ(ab_retry_cap_scale(2, rule), 8.0);   // capped
  EXPECT_DOUBLE_EQ(ab_retry_cap_scale(0, rule), 8.0);
  EXPECT_DOUBLE_EQ(ab_retry_cap_scale(40, rule), 1.5);  // never less than half as much time again
}

}  // namespace
}  // namespace khive
