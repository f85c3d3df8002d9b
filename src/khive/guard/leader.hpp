// Check 11, the hive's side: what an accepted kernel becomes (leader or backup) once the judge's A/B has spoken.
// The A/B itself is stats.hpp's (decide_leader, decide_on_both_clocks, run by the judge); these are the rules that
// take its answer to a standing, in one place for both evaluators: the guard's (an A/B measured now) and the
// recorded one (medians measured on another machine). Pure functions, tested with synthetic numbers.
//
//   LeaderEvidence e{.has_leader = true, .measured_against_current = true, .beats_leader = true, .time_s = 2e-3, ...};
//   std::optional<LeaderRuling> r = rule_on_accepted(e);   // nullopt: measure it again against the new leader
//   r->standing == Standing::leader, or Standing::backup with r->not_made_leader saying why
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "khive/verdict/verdict.hpp"

namespace khive {

struct MeasuredTime {
  std::string id;
  double time_s = 0;
};

// The leader is never slower than the reference or a backup on the judge's own medians beyond noise. The A/B compares
// a candidate with the leader in one interleaved run; the others were measured alone, earlier. When a loaded host makes
// the two disagree (a candidate "faster than the leader" whose median is slower than a backup's), the A/B's gain is not
// confirmed and the candidate stays a backup. Returns why, or nullopt. Noise: max(10 %, 3 x the candidate's relative
// spread).
std::optional<std::string> leader_inconsistency(double candidate_s, double rel_spread,
                                                const std::vector<MeasuredTime>& others);

// How often a win over a leader that was replaced while the candidate was measured is measured again against the new
// one before the candidate is settled as a backup: the leader can change under a long evaluation more than once, but
// a kernel that keeps chasing new leaders has shown it is not clearly faster than them.
inline constexpr int kLeaderRemeasures = 2;

struct LeaderEvidence {
  bool has_leader = false;                // a leader stands now
  bool measured_against_current = false;  // the A/B was against the leader that stands now (it may have changed)
  bool beats_leader = false;              // the A/B's call: faster than the leader it was measured against
  int attempt = 0;                        // measurements of this kernel so far, less one
  double time_s = 0, rel_spread = 0;      // the candidate's own-run median and its samples' relative spread
  std::vector<MeasuredTime> accepted;     // every accepted kernel's own-run median (reference, leader, backups)
};
struct LeaderRuling {
  Standing standing = Standing::backup;  // leader | backup
  std::string not_made_leader;           // the A/B said faster, but leader_inconsistency did not confirm it: why
};
// The standing of an accepted kernel:
//   no leader yet                                   -> leader (the first correct kernel)
//   measured against the leader that stands now     -> leader when the A/B says faster, else backup
//   measured against a leader replaced meanwhile    -> a loss stays a backup (it cannot beat the faster successor); a
//                                                      win is measured again (nullopt) up to kLeaderRemeasures times,
//                                                      then settles as a backup
// and a leader by these rules that leader_inconsistency contradicts stays a backup, saying why.
std::optional<LeaderRuling> rule_on_accepted(const LeaderEvidence& e);

// ---- check 11 on recorded medians (hive/recorded_evaluator.hpp) ----
// Two kernels recorded on another machine were never timed together, so no A/B can be replayed. decide_leader's rule
// on their recorded per-workload medians with a fixed noise instead: the candidate leads when it is faster than the
// leader by more than `noise` on at least one timed workload, slower by more than `noise` on none, and its weighted
// geometric-mean gain exceeds `min_gain`. Every workload of `weights` must have a median in both maps (a missing one
// throws std::out_of_range).
struct MedianComparison {
  int faster = 0, slower = 0, workloads = 0;
  double gain = 0;  // weighted geometric mean of leader / candidate, less 1 (+0.05: 5 % faster)
  bool beats_leader = false;
  bool within_noise = false;  // a positive gain over min_gain that the noise does not let lead (no workload beyond it)
};
MedianComparison compare_recorded_medians(const std::map<std::string, double>& leader_s,
                                          const std::map<std::string, double>& candidate_s,
                                          const std::map<std::string, double>& weights, double noise, double min_gain);

}  // namespace khive
