#include "khive/hive/board.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace khive {

std::string strategy_family(const std::string& strategy) { return strategy.substr(0, strategy.find('.')); }

double entry_information(const BoardEntry& e, const EvictionRule& r) {
  double v = std::abs(e.delta);
  if (e.kind == "failed") v = std::max(v, r.distinct_failure_value);
  return v;
}

std::string failure_key(const BoardEntry& e) { return e.strategy + "\x1f" + (e.reason.empty() ? e.text : e.reason); }

std::vector<int64_t> entries_to_evict(const std::vector<BoardEntry>& entries, int capacity, const EvictionRule& r) {
  std::vector<int64_t> out;
  if (capacity <= 0 || static_cast<int>(entries.size()) <= capacity) return out;
  std::vector<BoardEntry> kept = entries;
  std::sort(kept.begin(), kept.end(), [](const BoardEntry& a, const BoardEntry& b) { return a.id < b.id; });
  while (static_cast<int>(kept.size()) > capacity) {
    // 1. The oldest failure that a newer failure with the same key repeats.
    std::map<std::string, int> count;
    for (auto& e : kept)
      if (e.kind == "failed") ++count[failure_key(e)];
    std::size_t victim = kept.size();
    for (std::size_t i = 0; i < kept.size(); ++i)
      if (kept[i].kind == "failed" && count[failure_key(kept[i])] > 1) {
        victim = i;  // kept is sorted by id: the first hit is the oldest
        break;
      }
    // 2. The least informative, oldest on ties.
    if (victim == kept.size()) {
      victim = 0;
      for (std::size_t i = 1; i < kept.size(); ++i)
        if (entry_information(kept[i], r) < entry_information(kept[victim], r)) victim = i;
    }
    out.push_back(kept[victim].id);
    kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(victim));
  }
  return out;
}

std::vector<BoardEntry> relevant_entries(const std::vector<BoardEntry>& entries, const std::string& strategy,
                                         std::size_t limit) {
  const std::string fam = strategy_family(strategy);
  auto group = [&](const BoardEntry& e) {
    if (e.strategy == strategy) return 0;
    if (strategy_family(e.strategy) == fam) return 1;
    if (e.kind == "insight") return 2;
    return 3;
  };
  std::vector<BoardEntry> v;
  for (auto& e : entries)
    if (group(e) < 3) v.push_back(e);
  std::stable_sort(v.begin(), v.end(), [&](const BoardEntry& a, const BoardEntry& b) {
    int ga = group(a), gb = group(b);
    if (ga != gb) return ga < gb;
    double ia = entry_information(a), ib = entry_information(b);
    if (ia != ib) return ia > ib;
    return a.id > b.id;
  });
  if (v.size() > limit) v.resize(limit);
  return v;
}

std::map<std::string, int> entries_per_strategy(const std::vector<BoardEntry>& entries) {
  std::map<std::string, int> m;
  for (auto& e : entries) ++m[e.strategy];
  return m;
}

}  // namespace khive
