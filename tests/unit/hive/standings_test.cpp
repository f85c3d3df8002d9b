// The run's standings (hive/standings.hpp): the leader, the accepted kernels and the ranked backups stay consistent
// whatever order the verdicts come in.
#include <gtest/gtest.h>

#include "khive/hive/standings.hpp"

namespace khive {
namespace {

MeasuredKernel kernel(std::string id, std::string strategy, double time_s) {
  MeasuredKernel m;
  m.id = std::move(id);
  m.strategy = std::move(strategy);
  m.time_s = time_s;
  return m;
}

std::vector<std::string> ids(const std::vector<MeasuredKernel>& v) {
  std::vector<std::string> out;
  for (const auto& k : v) out.push_back(k.id);
  return out;
}

TEST(Standings, TheFirstLeaderThenBackupsRankedFastestFirst) {
  Standings s(8, 0);
  EXPECT_FALSE(s.leader());
  s.add(kernel("c0000", "reference", 3e-3));
  s.lead("c0000");
  ASSERT_TRUE(s.leader());
  EXPECT_EQ(s.leader()->id, "c0000");
  EXPECT_TRUE(s.backups().empty());  // the leader is never its own backup
  s.add(kernel("c0001", "x.a", 4e-3));
  s.add(kernel("c0002", "x.b", 3.5e-3));
  EXPECT_EQ(ids(s.backups()), (std::vector<std::string>{"c0002", "c0001"}));
  EXPECT_EQ(s.accepted().size(), 3u);
  EXPECT_EQ(s.times().size(), 3u);
  EXPECT_EQ(s.find("c0002")->time_s, 3.5e-3);
  EXPECT_EQ(s.find("c0009"), nullptr);
}

TEST(Standings, ANewLeaderMakesTheOldOneABackup) {
  Standings s(8, 0);
  s.add(kernel("c0000", "reference", 3e-3));
  s.lead("c0000");
  s.add(kernel("c0001", "x.a", 4e-3));
  s.add(kernel("c0002", "x.b", 1e-3));
  s.lead("c0002");
  EXPECT_EQ(s.leader()->id, "c0002");
  EXPECT_EQ(ids(s.backups()), (std::vector<std::string>{"c0000", "c0001"}));
}

TEST(Standings, TheQuotasHoldAndAKernelIsNeverTwice) {
  Standings s(2, 1);  // two backups, one per family
  s.add(kernel("L", "y.a", 1e-3));
  s.lead("L");
  s.add(kernel("a1", "x.a", 2e-3));
  s.add(kernel("a2", "x.b", 2.1e-3));  // the second of family x: over its quota
  s.add(kernel("b1", "z.a", 5e-3));
  EXPECT_EQ(ids(s.backups()), (std::vector<std::string>{"a1", "b1"}));
  s.add(kernel("a1", "x.a", 6e-3));  // the same kernel measured again: replaced, not added
  EXPECT_EQ(s.accepted().size(), 4u);
  EXPECT_EQ(ids(s.backups()), (std::vector<std::string>{"a2", "b1"}));
  s.add(kernel("L", "y.a", 0.9e-3));  // the leader's own record replaced: it stays the leader, with the new time
  EXPECT_EQ(s.leader()->time_s, 0.9e-3);
}

TEST(Standings, OnlyAnAcceptedKernelCanLead) {
  Standings s(8, 0);
  EXPECT_THROW(s.lead("c0004"), std::logic_error);
  EXPECT_FALSE(s.leader());
}

}  // namespace
}  // namespace khive
