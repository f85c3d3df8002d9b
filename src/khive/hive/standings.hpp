// Where a run's accepted kernels stand: the leader, every accepted kernel with its own-run median, and the backups
// ranked for restarts (rank_backups: fastest first, a quota per family, never the leader). State and its rules only:
// the hive decides who leads (check 11, guard/leader.hpp), records it and writes best.<ext>; this keeps the three
// lists consistent with each other whatever order the verdicts come in (a run, a restore, a deferred evaluation).
//
//   Standings s(8, 2);
//   s.add(reference);  s.lead(reference);      // the first leader
//   s.add(c7);                                  // a backup: ranked among the others
//   s.add(c9);  s.lead(c9);                     // a new leader: the old one becomes a backup
//   s.leader()->id == "c9";  s.backups()[0].id == "c7" (if it is the fastest of them)
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "khive/agent/agent.hpp"
#include "khive/guard/leader.hpp"

namespace khive {

// The family a backup counts against for diversity: the template that made it (tuner candidates: every strategy of
// a family such as rowop.* would otherwise share one quota across templates, and per-shape dispatch would see
// only the two fastest of them), else the strategy's family (the part before the first dot).
std::string backup_family(const MeasuredKernel& k);

// Ranks accepted kernels into a diverse backup list: fastest first (by time_s), at most per_family per
// backup_family, at most max in all, never the leader.
std::vector<MeasuredKernel> rank_backups(const std::vector<MeasuredKernel>& accepted, const std::string& leader_id,
                                         int max, int per_family);

class Standings {
 public:
  Standings(int max_backups, int per_family) : max_(max_backups), per_family_(per_family) {}
  const std::optional<MeasuredKernel>& leader() const { return leader_; }
  const std::vector<MeasuredKernel>& accepted() const { return accepted_; }
  const std::vector<MeasuredKernel>& backups() const { return backups_; }
  const MeasuredKernel* find(const std::string& id) const;  // an accepted kernel, or nullptr
  std::vector<MeasuredTime> times() const;                  // every accepted kernel's own-run median
  // An accepted kernel joins (a second add of the same id replaces the first).
  void add(const MeasuredKernel& k);
  // An accepted kernel (added before) takes the lead; throws std::logic_error for one never added.
  void lead(const std::string& id);

 private:
  void rank();
  int max_, per_family_;
  std::optional<MeasuredKernel> leader_;
  std::vector<MeasuredKernel> accepted_, backups_;
};

}  // namespace khive
