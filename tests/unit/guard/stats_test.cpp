// Timing statistics: summaries, the stopping rule and A/B acceptance, on deterministic synthetic samples
// (nvbench style: the same stream every run, no GPU).
#include <gtest/gtest.h>

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
  double uniform() {   // (0, 1)
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
  EXPECT_DOUBLE_EQ(s.p10, 1.2);   // position 0.1 * 2 = 0.2
  EXPECT_DOUBLE_EQ(s.p90, 2.8);
  EXPECT_DOUBLE_EQ(s.stddev, 1.0);
  EXPECT_DOUBLE_EQ(s.rel_spread, 1.4826 * 1.0 / 2.0);   // MAD = median(1, 0, 1) = 1
}

TEST(Summarize, EvenCountAveragesMiddle) {
  SampleSummary s = summarize({4.0, 1.0, 3.0, 2.0});
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.p10, 1.3);   // position 0.3
  EXPECT_DOUBLE_EQ(s.p90, 3.7);   // position 2.7
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(5.0 / 3.0));
  EXPECT_DOUBLE_EQ(s.rel_spread, 1.4826 * 1.0 / 2.5);   // deviations 1.5 0.5 0.5 1.5 -> MAD 1
}

TEST(Summarize, OutliersBarelyMoveTheMedian) {
  std::vector<double> v = stream(1, 41, 1.0, 0.002);
  SampleSummary clean = summarize(v);
  v.push_back(50.0);   // a preempted sample
  v.push_back(0.01);   // and a bogus fast one
  v.push_back(80.0);
  SampleSummary dirty = summarize(v);
  EXPECT_NEAR(dirty.median, clean.median, 0.002);
  EXPECT_NEAR(dirty.rel_spread, clean.rel_spread, 0.001);
  EXPECT_LT(dirty.rel_spread, 0.005);
  EXPECT_GT(dirty.mean, 2.0 * clean.mean);   // the mean is not robust
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
    if (samples.size() > 100000) break;   // the rule must have stopped long before
  }
  return samples.size();
}

TEST(ShouldStop, QuietStreamStopsAtMinSamples) {
  StoppingRule r;   // 10..200 samples, 0.5 %, 2 s
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
  EXPECT_EQ(run_until_stop(g, 1e-4, 0.05, r), r.max_samples);   // 200 * 0.1 ms stays under the 2 s cap
}

TEST(ShouldStop, NoisyStreamHitsTheTimeCap) {
  StoppingRule r;
  Synthetic g(6);
  const std::size_t n = run_until_stop(g, 0.05, 0.05, r);   // 50 ms samples: 2 s after ~40
  EXPECT_GT(n, 35u);
  EXPECT_LT(n, 45u);
}

TEST(ShouldStop, TheCapWaitsForMinSamplesUnlessTheKernelIsVerySlow) {
  StoppingRule r;   // 10 samples, 2 s
  std::vector<double> nine(9, 0.3);
  EXPECT_FALSE(should_stop(nine, 2.7, r));         // over the cap, but 9 < 10 samples
  nine.push_back(0.3);
  EXPECT_TRUE(should_stop(nine, 3.0, r));          // 10 samples and over the cap
  EXPECT_FALSE(should_stop({1.0, 1.5}, 2.5, r));   // a 1 s kernel: 2 samples are not enough
  EXPECT_FALSE(should_stop({1.0, 1.5, 1.2}, 7.9, r));
  EXPECT_TRUE(should_stop({1.0, 1.5, 1.2}, 8.0, r));   // 4x the cap and 3 samples
  EXPECT_FALSE(should_stop({3.0, 3.0}, 100, r));       // never on 2 samples (the watchdog bounds it)
}

TEST(ShouldStop, ModerateNoiseStopsOnceTheSpreadSettles) {
  StoppingRule r;
  r.target_noise = 0.02;
  Synthetic g(7);
  const std::size_t n = run_until_stop(g, 1e-4, 0.01, r);   // 1 % noise under a 2 % target
  EXPECT_GE(n, r.min_samples);
  EXPECT_LT(n, r.max_samples);
}

TEST(ShouldStop, NeverOnFewerThanTwoSamples) {
  StoppingRule r;
  r.min_samples = 0;
  EXPECT_FALSE(should_stop({}, 0, r));
  EXPECT_FALSE(should_stop({1.0}, 1.0, r));   // one sample: noise unknown
  EXPECT_TRUE(should_stop({1.0, 1.0}, 2.0 - 1e-9, r));
}

// --------------------------------------------------------------------------------------------- compare_ab

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

TEST(CompareAb, IdenticalSamplesAreNotFaster) {
  std::vector<double> a = stream(8, 30, 1e-3, 0.01);
  AbResult r = compare_ab(a, a);
  EXPECT_EQ(r.pairs, 30u);
  EXPECT_DOUBLE_EQ(r.median_ratio, 1.0);
  EXPECT_EQ(r.noise, 0.0);
  EXPECT_DOUBLE_EQ(r.threshold, 0.005);
  EXPECT_FALSE(r.b_faster);
}

TEST(CompareAb, SameDistributionIsNotFaster) {
  for (uint64_t seed = 10; seed < 30; ++seed) {
    std::vector<double> a, b;
    pairs(seed, 50, 1e-3, 1e-3, 0.01, a, b);
    AbResult r = compare_ab(a, b);
    EXPECT_FALSE(r.b_faster) << "seed " << seed << " ratio " << r.median_ratio << " threshold " << r.threshold;
    EXPECT_NEAR(r.noise, 0.01 * std::sqrt(2.0), 0.006) << "seed " << seed;   // noise of a ratio of two samples
  }
}

TEST(CompareAb, ClearGainIsFaster) {
  for (uint64_t seed = 30; seed < 50; ++seed) {
    std::vector<double> a, b;
    pairs(seed, 30, 1e-3, 1e-3 / 1.05, 0.01, a, b);   // B 5 % faster, 1 % noise
    AbResult r = compare_ab(a, b);
    EXPECT_TRUE(r.b_faster) << "seed " << seed << " ratio " << r.median_ratio << " threshold " << r.threshold;
    EXPECT_NEAR(r.median_ratio, 1.05, 0.02);
    // and the other way round A is not faster than B
    EXPECT_FALSE(compare_ab(b, a).b_faster);
  }
}

TEST(CompareAb, GainBelowMinGainIsNotFaster) {
  std::vector<double> a, b;
  pairs(50, 100, 1e-3, 1e-3 / 1.003, 0.0001, a, b);   // 0.3 % gain, measured very precisely
  AbResult r = compare_ab(a, b);
  EXPECT_NEAR(r.median_ratio, 1.003, 0.0002);
  EXPECT_LT(r.noise * 2 / std::sqrt(100.0), 0.001);   // the noise alone would let it through
  EXPECT_DOUBLE_EQ(r.threshold, 0.005);
  EXPECT_FALSE(r.b_faster);
  EXPECT_TRUE(compare_ab(a, b, /*min_gain=*/0.001).b_faster);
}

TEST(CompareAb, NoisySmallGainWithFewPairsIsNotFaster) {
  for (uint64_t seed = 60; seed < 80; ++seed) {
    std::vector<double> a, b;
    pairs(seed, 5, 1e-3, 1e-3 / 1.03, 0.10, a, b);   // 3 % gain under 10 % noise, 5 pairs
    AbResult r = compare_ab(a, b);
    EXPECT_EQ(r.pairs, 5u);
    EXPECT_FALSE(r.b_faster) << "seed " << seed << " ratio " << r.median_ratio << " threshold " << r.threshold;
  }
}

// The rule's error rates over many deterministic trials (the figures quoted in stats.hpp).
double acceptance_rate(std::size_t n, double gain, double rel, std::size_t min_pairs = 10) {
  int accepted = 0;
  const int trials = 1000;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> a, b;
    pairs(1000 + t, n, 1.0, 1.0 / (1.0 + gain), rel, a, b);
    accepted += compare_ab(a, b, 0.005, 2.0, min_pairs).b_faster;
  }
  return static_cast<double>(accepted) / trials;
}

TEST(CompareAb, ErrorRates) {
  // Without the pair floor, a handful of pairs lets slower candidates through.
  EXPECT_GT(acceptance_rate(5, -0.03, 0.10, /*min_pairs=*/2), 0.05);
  EXPECT_EQ(acceptance_rate(5, -0.03, 0.10), 0.0);
  // From 10 pairs on: a 3 % slower B under 10 % noise is rarely accepted, an equal one seldom.
  EXPECT_LT(acceptance_rate(10, -0.03, 0.10), 0.06);
  EXPECT_LT(acceptance_rate(30, -0.03, 0.10), 0.025);
  EXPECT_LT(acceptance_rate(10, 0.0, 0.10), 0.12);
  EXPECT_LT(acceptance_rate(30, 0.0, 0.10), 0.09);
  EXPECT_LT(acceptance_rate(30, 0.0, 0.01), 0.06);
  // Under 1 % noise a 3 % slower B never passes; a 5 % faster one always does from 10 pairs on.
  EXPECT_EQ(acceptance_rate(10, -0.03, 0.01), 0.0);
  EXPECT_EQ(acceptance_rate(10, 0.05, 0.01), 1.0);
  // A noisy 3 % gain needs many pairs to be seen.
  EXPECT_LT(acceptance_rate(10, 0.03, 0.10), 0.3);
  EXPECT_GT(acceptance_rate(400, 0.03, 0.10), 0.9);
}

TEST(CompareAb, ThresholdShrinksWithMorePairs) {
  std::vector<double> a, b;
  pairs(90, 10, 1e-3, 1e-3, 0.2, a, b);
  AbResult few = compare_ab(a, b);
  pairs(90, 1000, 1e-3, 1e-3, 0.2, a, b);
  AbResult many = compare_ab(a, b);
  EXPECT_GT(few.threshold, 3 * many.threshold);
  EXPECT_NEAR(many.threshold, 2 * many.noise / std::sqrt(1000.0), 1e-15);
  EXPECT_NEAR(many.noise, 0.2 * std::sqrt(2.0), 0.02);
}

TEST(CompareAb, Guards) {
  AbResult r = compare_ab({}, {});
  EXPECT_EQ(r.pairs, 0u);
  EXPECT_FALSE(r.b_faster);

  std::vector<double> a(10, 2.0), b(9, 1.0);   // B twice as fast, but the lengths differ
  r = compare_ab(a, b);
  EXPECT_EQ(r.pairs, 9u);
  EXPECT_FALSE(r.b_faster);

  r = compare_ab({2.0}, {1.0}, 0.005, 2.0, /*min_pairs=*/0);   // one pair: noise unknown, whatever min_pairs
  EXPECT_EQ(r.pairs, 1u);
  EXPECT_FALSE(r.b_faster);

  r = compare_ab(std::vector<double>(9, 2.0), std::vector<double>(9, 1.0));   // under min_pairs
  EXPECT_DOUBLE_EQ(r.median_ratio, 2.0);
  EXPECT_FALSE(r.b_faster);

  std::vector<double> two(10, 2.0), one(10, 1.0);
  r = compare_ab(two, one);
  EXPECT_TRUE(r.b_faster);
  EXPECT_DOUBLE_EQ(r.median_ratio, 2.0);

  one[3] = 0.0;   // a non-positive time
  EXPECT_FALSE(compare_ab(two, one).b_faster);
  one[3] = -1.0;
  EXPECT_FALSE(compare_ab(two, one).b_faster);
  one[3] = 1.0;
  two[5] = NAN;
  EXPECT_FALSE(compare_ab(two, one).b_faster);
  two[5] = INFINITY;
  EXPECT_FALSE(compare_ab(two, one).b_faster);
}

}  // namespace
}  // namespace khive

// ------------------------------------------------------------------------------------------ decide_leader

using khive::AbResult;
using khive::b_slower;
using khive::decide_leader;

namespace {
AbResult ab(double ratio, double threshold, std::size_t pairs = 20) {
  AbResult r;
  r.pairs = pairs;
  r.median_ratio = ratio;
  r.threshold = threshold;
  r.b_faster = pairs >= 10 && ratio - 1.0 > threshold;
  return r;
}
}  // namespace

TEST(DecideLeader, FasterSomewhereLevelElsewhereLeads) {
  // 40% faster on three prefill shapes, level (within 2% noise) on a memory-bound decode shape.
  auto d = decide_leader({ab(1.4, 0.01), ab(1.5, 0.01), ab(1.39, 0.01), ab(1.005, 0.02)}, {1, 1, 1, 1});
  EXPECT_TRUE(d.new_leader) << d.why;
  EXPECT_EQ(d.faster.size(), 3u);
  EXPECT_TRUE(d.slower.empty());
  EXPECT_GT(d.weighted_ratio, 1.3);
}

TEST(DecideLeader, ARegressionBeyondTheNoiseVetoes) {
  // The same gains, but 5% slower (noise 1%) on the decode shape: a backup, and the reason says why.
  auto d = decide_leader({ab(1.4, 0.01), ab(1.5, 0.01), ab(1.39, 0.01), ab(1 / 1.05, 0.01)}, {1, 1, 1, 1});
  EXPECT_FALSE(d.new_leader);
  ASSERT_EQ(d.slower.size(), 1u);
  EXPECT_EQ(d.slower[0], 3u);
  EXPECT_NE(d.why.find("slower"), std::string::npos);
}

TEST(DecideLeader, LevelEverywhereIsABackup) {
  auto d = decide_leader({ab(1.004, 0.01), ab(0.998, 0.01)}, {1, 1});
  EXPECT_FALSE(d.new_leader);
  EXPECT_TRUE(d.faster.empty());
  EXPECT_TRUE(d.slower.empty());
}

TEST(DecideLeader, WeightsDecideTheOverallGain) {
  // Faster beyond the noise on a light workload only; the heavy one is level but slightly slower: the
  // weighted gain stays under the 0.5% minimum.
  auto d = decide_leader({ab(1.02, 0.01), ab(0.996, 0.01)}, {1, 20});
  EXPECT_FALSE(d.new_leader);
  EXPECT_NE(d.why.find("overall"), std::string::npos);
  EXPECT_TRUE(decide_leader({ab(1.02, 0.01), ab(0.996, 0.01)}, {20, 1}).new_leader);
}

TEST(DecideLeader, TooFewPairsAnywhereGivesNoLeader) {
  auto d = decide_leader({ab(1.5, 0.01), ab(1.5, 0.01, 1)}, {1, 1});
  EXPECT_FALSE(d.new_leader);
  EXPECT_FALSE(decide_leader({}, {}).new_leader);
}

TEST(DecideLeader, SlowerIsTheMirrorOfFaster) {
  EXPECT_TRUE(b_slower(ab(1 / 1.03, 0.01)));
  EXPECT_FALSE(b_slower(ab(1 / 1.005, 0.01)));
  EXPECT_FALSE(b_slower(ab(1.2, 0.01)));
}
