// The shared board's rules, as pure functions (unit-tested without a run): which entries to evict when the
// board is over capacity, which entries an agent sees, and how explored each strategy is.
//
//   std::vector<BoardEntry> b = ...;
//   auto gone = entries_to_evict(b, 20);     // ids to drop so that 20 remain
//   auto seen = relevant_entries(b, "gemm.tile", 30);
#pragma once
#include <map>
#include <string>
#include <vector>

#include "khive/agent/agent.hpp"

namespace khive {

struct EvictionRule {
  // A failure with a reason no other kept entry has is as informative as a change of this size: it
  // tells every agent what not to try, which a 1% gain or loss does about as much.
  double distinct_failure_value = 0.01;
};

// How informative an entry is (higher = kept longer): |delta|, or distinct_failure_value for a failed entry
// (whichever is larger).
double entry_information(const BoardEntry& e, const EvictionRule& r = {});

// Failures are duplicates when the strategy and the reason (the guard's code, else the text) match.
std::string failure_key(const BoardEntry& e);

// Ids to evict so that at most `capacity` entries remain (capacity <= 0: unlimited, nothing evicted).
// Deterministic, one entry at a time until the board fits:
//   1. a failure that duplicates a newer failure (same failure_key): the oldest such entry goes first;
//   2. otherwise the least informative entry (entry_information), the oldest (smallest id) on ties.
std::vector<int64_t> entries_to_evict(const std::vector<BoardEntry>& entries, int capacity, const EvictionRule& r = {});

// The entries an agent holding `strategy` reads before proposing, at most `limit`: first those of the same
// strategy, then those of the same family (the part before the first '.'), then insights from anywhere;
// within each group the most informative first, then the newest. Other entries are not shown.
std::vector<BoardEntry> relevant_entries(const std::vector<BoardEntry>& entries, const std::string& strategy,
                                         std::size_t limit = 30);

// Entries per strategy (for "least explored").
std::map<std::string, int> entries_per_strategy(const std::vector<BoardEntry>& entries);

std::string strategy_family(const std::string& strategy);

}  // namespace khive
