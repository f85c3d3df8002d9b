// The real tuner agent and the hive's real rules replayed on H200 measurements (tests/recordings/, through the
// RecordedEvaluator): which point each agent proposes first, that a single-agent search reaches the recorded
// fastest kernel, the plateau and hive-plateau switches, the backup list, and the per-shape dispatcher composing the
// recorded composites again from the state the recorded run had. One tuner agent makes a replay deterministic (several
// agents interleave by thread timing); every expectation below is computed from the recording, not written in.
#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "khive/hive/standings.hpp"
#include "recorded_support.hpp"

using namespace khive;
using namespace khive::recorded_test;

namespace {

std::vector<CandidateRecord> proposed(const Replay& rp) {
  std::vector<CandidateRecord> out;
  for (const auto& c : rp.records.candidates)
    if (c.id != rp.records.reference) out.push_back(c);
  return out;
}

MeasuredKernel measured(const RecordedCandidate& c) {
  MeasuredKernel k;
  k.id = c.id;
  k.strategy = c.strategy;
  k.params = c.params;
  k.score = c.score.value_or(0);
  k.time_s = c.time_s;
  k.workload_median_s = c.workload_median_s;
  return k;
}

MeasuredKernel measured(const CandidateRecord& c) { return measured_kernel(c); }

int option_int(const Recording& rec, const char* key, int fallback) {
  return rec.options.contains(key) && rec.options.at(key).is_number_integer() ? rec.options.at(key).get<int>()
                                                                              : fallback;
}

}  // namespace

// Agent i of the recorded run held strategy i (round robin over the templates) with the run's seed for index i, and
// the agents proposed their first kernels at once, from the reference, sharing one memory of proposed points (ids are
// proposal order). A tuner at index i of a replay with the same seed, whose memory holds the points proposed before,
// proposes the same point first: the default of its sub-space's template, or the nearest point not yet taken.
TEST(RecordedReplay, EachAgentFirstProposesTheRecordedPoint) {
  for (const std::string name : {"h200-softmax-dispatch.json", "h200-gemm-bf16.json", "h200-kb08-relayout.json"}) {
    const Recorded& r = recorded(name);
    ASSERT_GE(r.rec.agents, 2) << name;
    std::set<std::string> templates;
    int not_default = 0;
    for (int i = 0; i < r.rec.agents; ++i) {
      SCOPED_TRACE(fmt::format("{}: agent a{}", name, i));
      const std::string agent = fmt::format("a{}", i);
      const RecordedCandidate* want = nullptr;
      for (const auto& c : r.rec.candidates)
        if (c.agent == agent && (!want || c.id < want->id)) want = &c;
      ASSERT_NE(want, nullptr);
      ReplayOptions ro{.idle = i, .agents = 1, .budget = 1};
      for (const auto& c : r.rec.candidates)
        if (c.id < want->id) ro.tried.push_back(recorded_point_key(c.params));
      const Replay rp = replay(r, ro);
      const auto got = proposed(rp);
      ASSERT_EQ(got.size(), 1u);
      EXPECT_EQ(got[0].agent, agent);
      EXPECT_EQ(got[0].strategy, want->strategy);
      EXPECT_EQ(recorded_point_key(got[0].params), recorded_point_key(want->params));
      EXPECT_EQ(got[0].workload_median_s, want->workload_median_s) << got[0].message;
      const tuner::Template* t = library().find_template(got[0].params.at("template"));
      ASSERT_NE(t, nullptr);
      templates.insert(t->name);
      not_default += tuner::point_from_params(*t, got[0].params) != t->default_point();
    }
    // On the row ops the agents begin on three templates (the round robin); on a GEMM with one template the later
    // agents find its default taken and move to their own sub-space's nearest point.
    if (name == "h200-softmax-dispatch.json") EXPECT_EQ(templates.size(), 3u);
    if (name == "h200-gemm-bf16.json") EXPECT_EQ(not_default, 2);
  }
}

// A single tuner agent, the hive's rules and the recorded medians: the search reaches the kernel the recorded run found
// fastest (kb08: RELAYOUT_A of CUTLASS's sm80 SIMT GEMM, 2.8x the hand-written template's best), and it leads at the
// end.
TEST(RecordedReplay, OneAgentReachesTheRecordedFastestAndItLeads) {
  const Recorded& r = recorded("h200-kb08-relayout.json");
  const RecordedCandidate* fastest = nullptr;
  for (const auto& c : r.rec.candidates)
    if (c.accepted() && (!fastest || c.time_s < fastest->time_s)) fastest = &c;
  ASSERT_NE(fastest, nullptr);
  const Replay rp = replay(r, {.agents = 1, .plateau = 3, .budget = 30});
  ASSERT_TRUE(rp.result.leader.has_value());
  EXPECT_EQ(recorded_point_key(rp.result.leader->params), recorded_point_key(fastest->params))
      << "the replay's leader is " << rp.result.leader->id;
  EXPECT_EQ(rp.result.leader->time_s, fastest->time_s);
  // Each leader change was a gain on the recorded medians: the lineage of leaders gets strictly faster.
  double last = 0;
  for (const auto& c : rp.records.candidates)
    if (c.standing == Standing::leader) {
      if (last > 0) EXPECT_LT(c.time_s, last) << c.id;
      last = c.time_s;
    }
}

// Over the GEMM's eight shapes the single agent reaches every point the three recorded agents measured, and its leader
// is the fastest of them within the replay's noise (two of them are 0.06% apart: check 11 keeps the first).
TEST(RecordedReplay, OneAgentCoversTheRecordedGemmPointsAndLeadsWithinTheNoise) {
  const Recorded& r = recorded("h200-gemm-bf16.json");
  const Replay rp = replay(r, {.agents = 1, .plateau = 3, .budget = 60});
  std::set<std::string> reached;
  for (const auto& c : proposed(rp))
    if (const RecordedCandidate* rc = recorded_point(r.rec, c.params)) reached.insert(rc->id);
  std::set<std::string> all;
  double fastest = 0;
  for (const auto& c : r.rec.candidates) {
    all.insert(c.id);
    if (c.accepted() && (fastest == 0 || c.time_s < fastest)) fastest = c.time_s;
  }
  EXPECT_EQ(reached, all);
  ASSERT_TRUE(rp.result.leader.has_value());
  EXPECT_LE(rp.result.leader->time_s, fastest * (1 + r.rec.noise));
  EXPECT_EQ(rp.stats.by_hash + rp.stats.by_point, static_cast<int>(reached.size()));
  // Everything else the agent tried is named as unrecorded, and nothing was concluded from it.
  for (const auto& c : proposed(rp))
    if (!recorded_point(r.rec, c.params)) {
      EXPECT_EQ(c.standing, Standing::error) << c.id;
      EXPECT_EQ(c.reason, "not_recorded") << c.id;
    }
}

// The plateau rule (docs/hive.md): P evaluated candidates in a row without a new leader move the agent to
// another strategy, and with one agent the hive's plateau (P x (active agents + 1): each agent's own switch first)
// restarts it from the fastest backup. The replay's event log is walked with counters of its own; harness errors
// (unrecorded kernels) count towards neither.
TEST(RecordedReplay, PlateausSwitchAfterPNonImprovingCandidates) {
  struct Case {
    std::string name;
    int plateau, budget;
  };
  for (const Case& k : std::vector<Case>{{"h200-kb08-relayout.json", 2, 30},
                                         {"h200-kb08-relayout.json", 3, 30},
                                         {"h200-softmax-dispatch.json", 3, 60},
                                         {"h200-gemm-bf16.json", 2, 60}}) {
    SCOPED_TRACE(fmt::format("{} with P = {}", k.name, k.plateau));
    const Recorded& r = recorded(k.name);
    const Replay rp = replay(r, {.agents = 1, .plateau = k.plateau, .budget = k.budget});
    int streak = 0, hive = 0, agent_switches = 0, hive_restarts = 0;
    bool agent_due = false, hive_due = false;
    std::string leader;
    std::map<std::string, double> accepted_time;  // every accepted kernel so far (the reference too)
    for (const auto& e : rp.events) {
      const std::string type = e.value("type", "");
      if (type == "candidate") {
        ASSERT_FALSE(agent_due)
            << "P non-improving candidates in a row, and the agent proposed again without a switch: " << e.dump();
        ASSERT_FALSE(hive_due) << "a hive plateau went unanswered: " << e.dump();
        const CandidateRecord c = candidate_from_event(e);
        const Standing v = c.standing;
        const std::string& id = c.id;
        if (c.accepted()) accepted_time[id] = c.time_s;
        if (v == Standing::leader) {
          leader = id;
          streak = hive = 0;
        } else if (v == Standing::backup || v == Standing::rejected) {
          ++streak;
          ++hive;
        }
        agent_due = streak >= k.plateau;
        hive_due = hive >= 2 * k.plateau;
      } else if (type == "switch") {
        const std::string why = e.value("reason", "");
        if (why.rfind("plateau:", 0) == 0) {
          EXPECT_TRUE(agent_due) << why;
          EXPECT_EQ(why.rfind(fmt::format("plateau: {} evaluated candidates in a row", k.plateau), 0), 0u) << why;
          EXPECT_NE(e.value("from", ""), e.value("to", ""));
          ++agent_switches;
        } else if (why.rfind("hive plateau:", 0) == 0) {
          EXPECT_TRUE(hive_due) << why;
          // Restarted from the fastest accepted kernel that is not the leader.
          std::string best;
          for (const auto& [id, t] : accepted_time)
            if (id != leader && (best.empty() || t < accepted_time[best])) best = id;
          EXPECT_EQ(e.value("base", ""), best) << why;
          hive = 0;
          hive_due = false;
          ++hive_restarts;
        }
        streak = 0;  // any move (plateau, exhausted strategy, restart) starts the agent's count afresh
        agent_due = false;
      } else if (type == "plateau") {  // nowhere to go: stays, counts afresh
        streak = 0;
        agent_due = false;
      } else if (type == "hive_plateau") {  // no backup to restart from
        hive = 0;
        hive_due = false;
      }
    }
    EXPECT_GE(agent_switches, 1) << "the recorded data should bring the agent to a plateau within the budget";
    EXPECT_GE(hive_restarts, 1);
  }
}

// The backup list at the end of a replay over two templates: fastest first, never the leader, at most the per-template
// quota, and a kernel left out only because faster ones of its template fill the quota or the list is full.
TEST(RecordedReplay, BackupsAreTheFastestPerTemplate) {
  const Recorded& r = recorded("h200-kb08-relayout.json");
  const int max = 4, per = 2;
  const Replay rp = replay(r, {.agents = 1, .plateau = 3, .budget = 30, .max_backups = max, .backups_per_family = per});
  ASSERT_TRUE(rp.result.leader.has_value());
  const auto& b = rp.result.backups;
  ASSERT_FALSE(b.empty());
  EXPECT_LE(static_cast<int>(b.size()), max);
  std::map<std::string, int> per_template;
  std::set<std::string> in;
  for (std::size_t i = 0; i < b.size(); ++i) {
    EXPECT_NE(b[i].id, rp.result.leader->id);
    if (i) EXPECT_LE(b[i - 1].time_s, b[i].time_s);
    EXPECT_LE(++per_template[backup_family(b[i])], per) << b[i].id;
    in.insert(b[i].id);
  }
  std::set<std::string> templates;
  int left_out = 0;
  for (const auto& c : rp.records.candidates) {
    if (c.accepted() && c.params.count("template")) templates.insert(c.params.at("template"));
    if (!c.accepted() || c.id == rp.result.leader->id || in.count(c.id)) continue;
    ++left_out;
    const MeasuredKernel k = measured(c);
    const bool quota_full = per_template[backup_family(k)] == per;
    bool slower_than_its_template = true;
    for (const auto& x : b)
      if (backup_family(x) == backup_family(k) && x.time_s > k.time_s) slower_than_its_template = false;
    const bool list_full = static_cast<int>(b.size()) == max && b.back().time_s <= k.time_s;
    EXPECT_TRUE((quota_full && slower_than_its_template) || list_full)
        << c.id << " (" << k.time_s << " s) was left out";
  }
  EXPECT_EQ(templates.size(), 2u) << "two templates compete on this task";
  EXPECT_GE(left_out, 1) << "the quota must have left something out, or this checks nothing";
}

// The recorded run's five per-shape composites (sol/softmax, session 4 call 6), each composed again by today's
// dispatcher from the leader and backups that run had when its agent proposed it (the verdicts recorded before the
// agent's previous verdict), rendered by the tuner, and answered by the evaluator with that composite's own medians.
TEST(RecordedReplay, TheDispatcherRecomposesTheRecordedComposites) {
  const Recorded& r = recorded("h200-softmax-dispatch.json");
  const int max = option_int(r.rec, "max_backups", 8), per = option_int(r.rec, "backups_per_family", 2);
  RecordedEvaluator ev(r.task, Backend::cuda, r.rec);
  TempDir d("khive-rec-");
  int composites = 0;
  for (std::size_t i = 0; i < r.rec.candidates.size(); ++i) {
    const RecordedCandidate& c = r.rec.candidates[i];
    if (!is_composite(c.params)) continue;
    SCOPED_TRACE(c.id);
    ++composites;
    double asked = r.rec.reference.t;  // the agent proposes right after it observed its previous verdict
    for (std::size_t j = 0; j < i; ++j)
      if (r.rec.candidates[j].agent == c.agent) asked = r.rec.candidates[j].t;
    std::vector<const RecordedCandidate*> known = {&r.rec.reference};
    for (const auto& x : r.rec.candidates)
      if (x.accepted() && x.t <= asked) known.push_back(&x);
    std::stable_sort(known.begin(), known.end(), [](auto* a, auto* b) { return a->t < b->t; });
    std::vector<MeasuredKernel> acc;
    std::string leader_id;
    for (const auto* x : known) {
      acc.push_back(measured(*x));
      if (x->standing == Standing::leader) leader_id = x->id;
    }
    const MeasuredKernel leader = *std::find_if(acc.begin(), acc.end(), [&](auto& k) { return k.id == leader_id; });
    const tuner::DispatchPlan plan =
        tuner::plan_dispatch(r.task, r.bt, library(), leader, rank_backups(acc, leader_id, max, per));
    ASSERT_TRUE(plan.ok()) << plan.reason;
    EXPECT_EQ(plan.params.at("variants"), c.params.at("variants"));
    EXPECT_EQ(recorded_point_key(plan.params), recorded_point_key(c.params));
    const fs::path f =
        write_kernel(d.path, c.id + ".cu", tuner::render_composite(r.task, r.bt, plan.variants, plan.routes));
    EXPECT_EQ(source_point_key(read_file(f)), recorded_point_key(c.params));
    const Evaluation e = ev.evaluate(f, std::nullopt);
    EXPECT_EQ(e.status, EvalStatus::accepted) << e.message;
    EXPECT_EQ(e.workload_median_s, c.workload_median_s);
  }
  EXPECT_EQ(composites, 5);
}

// Live, in a replay: each composite the tuner proposes routes every timed shape to the point that is fastest there
// among the leader and the backups the agent saw (the leader's own point unless another is 3% faster), as the
// recorded medians say; the recording holds no composite of the GEMM, so each is answered as not recorded.
TEST(RecordedReplay, ProposedCompositesRouteEachShapeToItsFastestVisiblePoint) {
  const Recorded& r = recorded("h200-gemm-bf16.json");
  const ReplayOptions ro{.agents = 1, .plateau = 3, .budget = 60};
  const Replay rp = replay(r, ro);
  const tuner::DispatchOptions dopt;
  int checked = 0;
  std::vector<MeasuredKernel> acc;
  std::string leader_id;
  for (const auto& c : rp.records.candidates) {
    if (is_composite(c.params)) {
      SCOPED_TRACE(c.id);
      EXPECT_EQ(c.standing, Standing::error);
      EXPECT_EQ(c.reason, "not_recorded");
      const MeasuredKernel leader = *std::find_if(acc.begin(), acc.end(), [&](auto& k) { return k.id == leader_id; });
      std::vector<MeasuredKernel> seen = {leader};
      for (auto& b : rank_backups(acc, leader_id, ro.max_backups, ro.backups_per_family)) seen.push_back(b);
      // Per timed workload (each is its own shape here): the point to run there.
      std::map<std::string, std::string> want;
      for (const auto& w : r.rec.timed) {
        const MeasuredKernel* best = &seen.front();
        for (const auto& k : seen)
          if (k.params.count("template") && k.workload_median_s.at(w) < best->workload_median_s.at(w)) best = &k;
        if (best->workload_median_s.at(w) * (1 + dopt.min_gain) > leader.workload_median_s.at(w)) best = &seen.front();
        want[w] = recorded_point_key(best->params);
      }
      std::set<std::string> distinct;
      for (const auto& [w, k] : want) distinct.insert(k);
      EXPECT_GE(distinct.size(), 2u);
      if (distinct.size() > dopt.max_variants) continue;  // the plan then merges points: not this simple rule
      std::map<std::string, std::string> route;
      for (const auto& [w, k] : want) route[w] = k;
      std::string expected = std::string(tuner::kDispatchTemplate) + "{";
      for (const auto& [w, k] : route) expected += (expected.back() == '{' ? "" : ";") + w + "=" + k;
      EXPECT_EQ(recorded_point_key(c.params), expected + "}");
      ++checked;
      continue;
    }
    if (c.accepted()) acc.push_back(measured(c));
    if (c.standing == Standing::leader) leader_id = c.id;
  }
  EXPECT_GE(checked, 1) << "the replay should propose a composite: decode shapes prefer other points";
}

// With composites modeled from their routed points' recorded medians (RecordedOptions::model_composites), the hive
// makes the tuner's composite the leader: on every shape it runs a point at least as fast as the single leader's.
TEST(RecordedReplay, AModeledCompositeOfRecordedPointsLeads) {
  const Recorded& r = recorded("h200-gemm-bf16.json");
  const Replay rp = replay(r, {.agents = 1, .plateau = 3, .budget = 60, .model_composites = true});
  ASSERT_TRUE(rp.result.leader.has_value());
  EXPECT_TRUE(is_composite(rp.result.leader->params)) << rp.result.leader->id;
  EXPECT_GE(rp.stats.modeled, 1);
  double best_single = 0;
  for (const auto& c : rp.records.candidates)
    if (c.accepted() && !is_composite(c.params) && c.id != rp.records.reference &&
        (best_single == 0 || c.time_s < best_single))
      best_single = c.time_s;
  EXPECT_LT(rp.result.leader->time_s, best_single);
}
