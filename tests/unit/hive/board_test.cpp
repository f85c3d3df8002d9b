#include <gtest/gtest.h>

#include "khive/hive/board.hpp"

using namespace khive;

namespace {
BoardEntry E(int64_t id, std::string kind, double delta, std::string strategy = "s.a", std::string reason = "") {
  BoardEntry e;
  e.id = id;
  e.kind = std::move(kind);
  e.delta = delta;
  e.strategy = std::move(strategy);
  e.reason = std::move(reason);
  e.text = "entry " + std::to_string(id);
  return e;
}
}  // namespace

TEST(BoardEviction, UnlimitedOrUnderCapacityEvictsNothing) {
  std::vector<BoardEntry> b = {E(1, "worked", 0.1), E(2, "failed", 0, "s.a", "build_error")};
  EXPECT_TRUE(entries_to_evict(b, 0).empty());
  EXPECT_TRUE(entries_to_evict(b, 2).empty());
}

TEST(BoardEviction, DuplicateFailuresGoFirstOldestFirst) {
  std::vector<BoardEntry> b = {E(1, "failed", 0, "s.a", "build_error"), E(2, "worked", 0.001),
                               E(3, "failed", 0, "s.a", "build_error"), E(4, "failed", 0, "s.a", "build_error"),
                               E(5, "failed", 0, "s.b", "build_error")};
  // Two must go: the two older copies of (s.a, build_error); the tiny gain and s.b's failure stay.
  EXPECT_EQ(entries_to_evict(b, 3), (std::vector<int64_t>{1, 3}));
}

TEST(BoardEviction, LeastInformativeNextOldestOnTies) {
  std::vector<BoardEntry> b = {E(1, "worked", 0.20), E(2, "insight", -0.002), E(3, "worked", 0.05),
                               E(4, "insight", 0.002), E(5, "failed", 0, "s.a", "correctness_mismatch")};
  // |delta| 0.002 twice (ids 2 and 4: the older first), then the distinct failure (worth 0.01) before 0.05.
  EXPECT_EQ(entries_to_evict(b, 3), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(entries_to_evict(b, 2), (std::vector<int64_t>{2, 4, 5}));
  EXPECT_EQ(entries_to_evict(b, 1), (std::vector<int64_t>{2, 4, 5, 3}));
}

TEST(BoardEviction, LargeLossIsKeptLikeALargeGain) {
  std::vector<BoardEntry> b = {E(1, "insight", -0.30), E(2, "worked", 0.01), E(3, "worked", 0.02)};
  EXPECT_EQ(entries_to_evict(b, 1), (std::vector<int64_t>{2, 3}));
}

TEST(BoardEviction, DeterministicWhateverTheInputOrder) {
  std::vector<BoardEntry> b = {E(5, "worked", 0.01), E(2, "worked", 0.01), E(9, "failed", 0, "s.a", "x"),
                               E(7, "failed", 0, "s.a", "x")};
  auto r1 = entries_to_evict(b, 2);
  std::reverse(b.begin(), b.end());
  EXPECT_EQ(entries_to_evict(b, 2), r1);
  EXPECT_EQ(r1, (std::vector<int64_t>{7, 2}));
}

TEST(BoardRelevance, SameStrategyThenFamilyThenInsights) {
  std::vector<BoardEntry> b = {E(1, "worked", 0.01, "gemm.tile"), E(2, "worked", 0.3, "gemm.stages"),
                               E(3, "failed", 0, "soft.x", "r"), E(4, "insight", 0.1, "soft.y"),
                               E(5, "worked", 0.02, "gemm.tile")};
  auto v = relevant_entries(b, "gemm.tile", 10);
  ASSERT_EQ(v.size(), 4u);  // the unrelated failure is not shown
  EXPECT_EQ(v[0].id, 5);    // same strategy, larger |delta| first
  EXPECT_EQ(v[1].id, 1);
  EXPECT_EQ(v[2].id, 2);  // same family
  EXPECT_EQ(v[3].id, 4);  // an insight from elsewhere
  EXPECT_EQ(relevant_entries(b, "gemm.tile", 2).size(), 2u);
}
