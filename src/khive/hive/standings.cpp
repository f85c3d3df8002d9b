#include "khive/hive/standings.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "khive/hive/board.hpp"

namespace khive {

std::string backup_family(const MeasuredKernel& k) {
  const auto t = k.params.find("template");
  return t != k.params.end() ? "template " + t->second : strategy_family(k.strategy);
}

std::vector<MeasuredKernel> rank_backups(const std::vector<MeasuredKernel>& accepted, const std::string& leader_id,
                                         int max, int per_family) {
  std::vector<MeasuredKernel> v;
  for (auto& k : accepted)
    if (k.id != leader_id) v.push_back(k);
  std::stable_sort(v.begin(), v.end(), [](const MeasuredKernel& a, const MeasuredKernel& b) {
    if (a.time_s != b.time_s) return a.time_s < b.time_s;
    return a.id < b.id;
  });
  std::vector<MeasuredKernel> out;
  std::map<std::string, int> fam;
  for (auto& k : v) {
    if (static_cast<int>(out.size()) >= max) break;
    auto& n = fam[backup_family(k)];
    if (per_family > 0 && n >= per_family) continue;
    ++n;
    out.push_back(k);
  }
  return out;
}

const MeasuredKernel* Standings::find(const std::string& id) const {
  for (const auto& k : accepted_)
    if (k.id == id) return &k;
  return nullptr;
}

std::vector<MeasuredTime> Standings::times() const {
  std::vector<MeasuredTime> t;
  for (const auto& k : accepted_) t.push_back({k.id, k.time_s});
  return t;
}

void Standings::add(const MeasuredKernel& k) {
  bool replaced = false;
  for (auto& a : accepted_)
    if (a.id == k.id) a = k, replaced = true;
  if (!replaced) accepted_.push_back(k);
  if (leader_ && leader_->id == k.id) leader_ = k;
  rank();
}

void Standings::lead(const std::string& id) {
  const MeasuredKernel* k = find(id);
  if (!k) throw std::logic_error("standings: " + id + " leads but was never accepted");
  leader_ = *k;
  rank();
}

void Standings::rank() { backups_ = rank_backups(accepted_, leader_ ? leader_->id : "", max_, per_family_); }

}  // namespace khive
