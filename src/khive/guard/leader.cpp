#include "khive/guard/leader.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace khive {

std::optional<std::string> leader_inconsistency(double candidate_s, double rel_spread,
                                                const std::vector<MeasuredTime>& others) {
  const double tol = std::max(0.10, 3 * rel_spread);
  const MeasuredTime* best = nullptr;
  for (const auto& o : others)
    if (o.time_s > 0 && (!best || o.time_s < best->time_s)) best = &o;
  if (!best || !(candidate_s > best->time_s * (1 + tol))) return std::nullopt;
  return fmt::format(
      "its median {:.4g} s is {:.0f}% slower than {}'s {:.4g} s (beyond the {:.0f}% noise): the A/B's gain over the "
      "leader "
      "is not confirmed by the solo measurements, so it stays a backup",
      candidate_s, (candidate_s / best->time_s - 1) * 100, best->id, best->time_s, tol * 100);
}

std::optional<LeaderRuling> rule_on_accepted(const LeaderEvidence& e) {
  LeaderRuling r;
  if (!e.has_leader) {
    r.standing = Standing::leader;
    return r;
  }
  if (!e.measured_against_current) {
    // The leader changed while this kernel was measured: a win over the old one is re-checked against the new one
    // (a loss to the old leader cannot beat its faster successor).
    if (e.beats_leader && e.attempt < kLeaderRemeasures) return std::nullopt;
    r.standing = Standing::backup;
    return r;
  }
  r.standing = e.beats_leader ? Standing::leader : Standing::backup;
  if (r.standing == Standing::leader)
    if (auto why = leader_inconsistency(e.time_s, e.rel_spread, e.accepted)) {
      r.standing = Standing::backup;
      r.not_made_leader = *why;
    }
  return r;
}

MedianComparison compare_recorded_medians(const std::map<std::string, double>& leader_s,
                                          const std::map<std::string, double>& candidate_s,
                                          const std::map<std::string, double>& weights, double noise, double min_gain) {
  MedianComparison m;
  double lw = 0, ws = 0;
  for (const auto& [u, w] : weights) {
    const double r = leader_s.at(u) / candidate_s.at(u);  // > 1: the candidate is faster
    if (r - 1 > noise) ++m.faster;
    if (r - 1 < -noise) ++m.slower;
    if (w > 0) lw += w * std::log(r), ws += w;
  }
  m.workloads = static_cast<int>(weights.size());
  m.gain = ws > 0 ? std::exp(lw / ws) - 1 : 0.0;
  m.beats_leader = m.slower == 0 && m.faster > 0 && m.gain > min_gain;
  m.within_noise = !m.beats_leader && m.gain > min_gain && m.slower == 0;
  return m;
}

}  // namespace khive
