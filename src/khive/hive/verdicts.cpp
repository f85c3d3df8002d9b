// One candidate judged: the evaluator against the leader of the time, the routing (rejected -> discarded; correct and
// not faster than the leader beyond the noise -> backup; faster -> new leader), and what a verdict changes: the leader
// and its file, the standings (standings.hpp), the known kernels.
#include "khive/hive/hive_impl.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "khive/guard/leader.hpp"
#include "khive/support/files.hpp"

namespace khive {

Outcome Hive::Impl::outcome_of(const CandidateRecord& c) {
  Outcome oc;
  static_cast<VerdictRecord&>(oc) = c;
  oc.candidate = c.id;
  oc.score = c.score.value_or(0);
  oc.time_s = c.time_s;
  oc.delta_vs_leader = c.delta;
  if (c.comparison) {
    oc.comparison = comparison_brief(*c.comparison);
    oc.comparison_detail = comparison_full(*c.comparison);
  }
  oc.workload_median_s = c.workload_median_s;
  return oc;
}

Proposal Hive::Impl::proposal_of(const CandidateRecord& c) {
  Proposal p;
  p.source = c.source;
  p.ext = c.ext;
  p.parent = c.parent;
  p.params = c.params;
  p.note = c.note;
  p.label = c.label;
  return p;
}

void Hive::Impl::become_leader(const MeasuredKernel& k) {
  standings.lead(k.id);
  leader_file = file_of[k.id];
  db->set_meta("leader", k.id);
  write_file_atomic(o.run_dir / ("best." + ext), k.source);
}

// Runs the evaluator on a recorded candidate against the leader of the time, applies the rules (leader /
// backup / rejected / error) to the hive's state and records it. `preset`: a verdict reached without
// running it (wrong backend, a deferred build rejection). A harness error is recorded only when
// record_error (evaluate-pending leaves the candidate awaiting instead). Called without mu.
Evaluation Hive::Impl::judge(CandidateRecord& c, const std::filesystem::path& file,
                             const std::optional<Evaluation>& preset, bool record_error) {
  Evaluation ev;
  if (preset) ev = *preset;
  std::string against_id;
  std::optional<MeasuredKernel> prev_leader;
  const std::optional<Standing> verdict = measure_until_decided(ev, preset.has_value(), file, against_id, prev_leader);
  std::lock_guard<std::mutex> lk(mu);
  if (!verdict) {
    // The run stopped before this evaluation could end (--budget-time, Ctrl-C): nothing is recorded; its file stays
    // and a resumed run gives no other candidate its id (setup.cpp, restore).
    event({{"type", "note"}, {"candidate", c.id}, {"message", "not evaluated: " + stop_reason}},
          fmt::format("{} not evaluated: {}", c.id, stop_reason));
    return ev;
  }
  if (*verdict == Standing::error) {
    if (++harness_errors >= o.max_harness_errors)
      set_stop(fmt::format("{} harness errors in a row (last: {})", harness_errors, ev.message.substr(0, 200)));
    if (!record_error) {
      c.message = ev.message;
      return ev;
    }
  } else {
    harness_errors = 0;
  }
  write_verdict(c, ev, *verdict, against_id, prev_leader);
  apply_verdict(c);
  return ev;
}

// Evaluates (unless ev holds a preset verdict) against the leader of the time until a verdict stands: a win over a
// leader that was replaced meanwhile is measured again against the new one. against_id: the leader it was measured
// with ("" when none); prev_leader: the leader when the verdict was reached. nullopt: cancelled (the run stopped
// first). Called without mu.
std::optional<Standing> Hive::Impl::measure_until_decided(Evaluation& ev, bool preset,
                                                          const std::filesystem::path& file, std::string& against_id,
                                                          std::optional<MeasuredKernel>& prev_leader) {
  for (int attempt = 0;; ++attempt) {
    std::optional<std::filesystem::path> against;
    {
      std::lock_guard<std::mutex> lk(mu);
      against_id.clear();
      if (const auto& leader = standings.leader()) {
        against = leader_file;
        against_id = leader->id;
      }
    }
    if (!preset || attempt > 0) {
      try {
        ev = eval.evaluate(file, against);
      } catch (const std::exception& e) {
        ev = Evaluation{};
        ev.status = EvalStatus::error;
        ev.message = e.what();
      }
    }
    if (ev.status == EvalStatus::cancelled) return std::nullopt;
    std::lock_guard<std::mutex> lk(mu);
    prev_leader = standings.leader();
    if (auto verdict = route(ev, against_id, attempt)) return verdict;
  }
}

// The verdict on one evaluation (not cancelled), or nullopt to measure again against a leader that changed meanwhile:
// check 11's rules (guard/leader.hpp) over the A/B's call. Callers hold mu.
std::optional<Standing> Hive::Impl::route(Evaluation& ev, const std::string& against_id, int attempt) {
  if (ev.status == EvalStatus::error) return Standing::error;
  if (ev.status != EvalStatus::accepted) return Standing::rejected;
  LeaderEvidence e;
  const auto& leader = standings.leader();
  e.has_leader = leader.has_value();
  e.measured_against_current = leader && leader->id == against_id;
  e.beats_leader = ev.beats_leader.value_or(false);
  e.attempt = attempt;
  e.time_s = ev.time_s;
  e.rel_spread = ev.rel_spread;
  e.accepted = standings.times();
  const std::optional<LeaderRuling> r = rule_on_accepted(e);
  if (!r) return std::nullopt;
  if (!r->not_made_leader.empty()) {
    // Said in the comparison's decision, so every line and summary gives the reason.
    ev.ab_decision += (ev.ab_decision.empty() ? "" : "; ") + std::string("not made leader: ") + r->not_made_leader;
    ev.message += (ev.message.empty() ? "" : "; ") + r->not_made_leader;
  }
  return r->standing;
}

// The evaluation and its verdict into the candidate's record, with its comparison against the leader it was measured
// with. Callers hold mu.
void Hive::Impl::write_verdict(CandidateRecord& c, const Evaluation& ev, Standing verdict,
                               const std::string& against_id, const std::optional<MeasuredKernel>& prev_leader) {
  c.standing = verdict;
  c.check = ev.check;
  c.reason = ev.reason;
  c.message = ev.message;
  c.diagnosis = ev.diagnosis;
  c.score = ev.score;
  c.time_s = ev.time_s;
  c.workload_median_s = ev.workload_median_s;
  c.eval_s = ev.seconds;
  c.delta = 0;
  c.comparison.reset();
  if (ev.status == EvalStatus::accepted && prev_leader) {
    // Against the leader it was measured with (which may have been replaced meanwhile).
    const MeasuredKernel* with = standings.find(against_id);
    c.comparison = make_comparison(against_id.empty() ? prev_leader->id : against_id, ev.gain_vs_leader, ev.ab_decision,
                                   ev.ab, ev.message, ev.time_s, with ? with->time_s : prev_leader->time_s);
    if (c.comparison) c.delta = c.comparison->gain;
  }
  c.t = now();
}

// A recorded verdict changes the hive: the kernel is known (errors are retried), accepted ones join the leader or the
// backups. Callers hold mu.
void Hive::Impl::apply_verdict(const CandidateRecord& c) {
  awaiting.erase(c.hash);
  if (c.standing != Standing::error) known[c.hash] = c;
  if (c.accepted()) standings.add(measured_kernel(c));  // a backup is ranked among the others at once
  record_candidate(c);
  if (c.standing == Standing::leader) {
    become_leader(measured_kernel(c));
    // "Exhausted" holds for a base: agents that derive from the leader have a new one now, so their spent
    // strategies may have more to give (the tuner's sub-spaces move with the leader; tuner.dispatch composes
    // from the new leader and its backups). Agents restarted from a backup keep theirs.
    for (auto& a : agents)
      if (a.base.empty() && !a.exhausted.empty()) {
        a.exhausted.clear();
        save_agent(a);
      }
  }
}

}  // namespace khive
