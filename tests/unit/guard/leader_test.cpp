// Check 11, the hive's side (guard/leader.hpp): what an accepted kernel becomes once the A/B has spoken, and the rule
// on recorded medians. Synthetic numbers only.
#include <gtest/gtest.h>

#include <cmath>

#include "khive/guard/leader.hpp"

namespace khive {
namespace {

TEST(LeaderInconsistency, ALeaderIsNeverSlowerThanTheOthersBeyondNoise) {
  // A loaded host: the A/B called the candidate faster than the leader, but its median is 24x the reference's.
  auto why = leader_inconsistency(24e-3, 0.05, {{"reference", 1e-3}, {"c7", 1.5e-3}});
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("reference"), std::string::npos) << *why;
  // Within noise of the best one (10 % here) it may lead.
  EXPECT_FALSE(leader_inconsistency(1.05e-3, 0.01, {{"reference", 1e-3}}));
  // Noisy measurements widen the band: 3 x a 6 % spread is 18 %.
  EXPECT_FALSE(leader_inconsistency(1.15e-3, 0.06, {{"reference", 1e-3}}));
  EXPECT_TRUE(leader_inconsistency(1.25e-3, 0.06, {{"reference", 1e-3}}));
  EXPECT_FALSE(leader_inconsistency(1e-3, 0.0, {}));
}

LeaderEvidence evidence(bool beats, bool current, int attempt = 0) {
  LeaderEvidence e;
  e.has_leader = true;
  e.measured_against_current = current;
  e.beats_leader = beats;
  e.attempt = attempt;
  e.time_s = 1e-3;
  e.rel_spread = 0.01;
  e.accepted = {{"c0000", 2e-3}, {"c0003", 1.2e-3}};
  return e;
}

TEST(RuleOnAccepted, TheFirstCorrectKernelLeads) {
  LeaderEvidence e;
  e.time_s = 5e-3;  // however slow: there is nothing to compare it with
  auto r = rule_on_accepted(e);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->standing, Standing::leader);
  EXPECT_TRUE(r->not_made_leader.empty());
}

TEST(RuleOnAccepted, AgainstTheCurrentLeaderTheAbDecides) {
  EXPECT_EQ(rule_on_accepted(evidence(true, true))->standing, Standing::leader);
  EXPECT_EQ(rule_on_accepted(evidence(false, true))->standing, Standing::backup);
}

TEST(RuleOnAccepted, AWinOverAReplacedLeaderIsMeasuredAgainThenSettles) {
  EXPECT_FALSE(rule_on_accepted(evidence(true, false, 0)));  // measure again against the new leader
  EXPECT_FALSE(rule_on_accepted(evidence(true, false, kLeaderRemeasures - 1)));
  auto settled = rule_on_accepted(evidence(true, false, kLeaderRemeasures));
  ASSERT_TRUE(settled);
  EXPECT_EQ(settled->standing, Standing::backup);
  // A loss to the old leader cannot beat its faster successor: a backup at once.
  auto lost = rule_on_accepted(evidence(false, false, 0));
  ASSERT_TRUE(lost);
  EXPECT_EQ(lost->standing, Standing::backup);
}

TEST(RuleOnAccepted, AnAbWinTheSoloMediansContradictStaysABackupSayingWhy) {
  LeaderEvidence e = evidence(true, true);
  e.time_s = 24e-3;  // 20x the backup c0003's median: the A/B's gain is not confirmed
  auto r = rule_on_accepted(e);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->standing, Standing::backup);
  EXPECT_NE(r->not_made_leader.find("c0003"), std::string::npos) << r->not_made_leader;
  // The same contradiction on a loss changes nothing and says nothing.
  e.beats_leader = false;
  EXPECT_TRUE(rule_on_accepted(e)->not_made_leader.empty());
}

TEST(CompareRecordedMedians, FasterBeyondNoiseSomewhereSlowerNowhereAndAGain) {
  const std::map<std::string, double> w = {{"a", 1}, {"b", 1}};
  const std::map<std::string, double> leader = {{"a", 10e-6}, {"b", 100e-6}};
  // 20 % faster on a, level on b: leads (weighted gain ~ 9.5 %).
  auto m = compare_recorded_medians(leader, {{"a", 10e-6 / 1.2}, {"b", 100e-6}}, w, 0.05, 0.01);
  EXPECT_TRUE(m.beats_leader);
  EXPECT_EQ(m.faster, 1);
  EXPECT_EQ(m.slower, 0);
  EXPECT_EQ(m.workloads, 2);
  EXPECT_NEAR(m.gain, std::sqrt(1.2) - 1, 1e-12);
  // Faster on a but 10 % slower on b: vetoed.
  m = compare_recorded_medians(leader, {{"a", 10e-6 / 1.2}, {"b", 110e-6}}, w, 0.05, 0.01);
  EXPECT_FALSE(m.beats_leader);
  EXPECT_EQ(m.slower, 1);
  EXPECT_FALSE(m.within_noise);
  // 3 % faster on both: a gain over min_gain, but within the noise on every workload.
  m = compare_recorded_medians(leader, {{"a", 10e-6 / 1.03}, {"b", 100e-6 / 1.03}}, w, 0.05, 0.01);
  EXPECT_FALSE(m.beats_leader);
  EXPECT_TRUE(m.within_noise);
  // A zero weight does not count towards the gain but still vetoes.
  m = compare_recorded_medians(leader, {{"a", 10e-6 / 1.2}, {"b", 150e-6}}, {{"a", 1}, {"b", 0}}, 0.05, 0.01);
  EXPECT_FALSE(m.beats_leader);
  EXPECT_NEAR(m.gain, 0.2, 1e-12);
  // A workload the candidate has no median for is an error, not a silent zero.
  EXPECT_THROW(compare_recorded_medians(leader, {{"a", 10e-6}}, w, 0.05, 0.01), std::out_of_range);
}

}  // namespace
}  // namespace khive
