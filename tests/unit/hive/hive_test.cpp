// The orchestrator with scripted outcomes: a fake evaluator reads the "kernel" text (time=0.5, reject=REASON,
// error) and a scripted agent proposes fixed sources per strategy. No compiler, no GPU.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "khive/hive/hive.hpp"
#include "khive/hive/standings.hpp"
#include "khive/record/event_log.hpp"
#include "khive/record/store.hpp"
#include "khive/support/files.hpp"

using namespace khive;
namespace fs = std::filesystem;

namespace {

double parse_time(const std::string& s) { return s.rfind("time=", 0) == 0 ? std::stod(s.substr(5)) : 0.0; }

class FakeEvaluator : public Evaluator {
 public:
  std::atomic<int> calls{0};
  std::atomic<bool>* stop_after_flag = nullptr;
  int stop_after = 0;
  Evaluation prepare(const fs::path& ref) override { return judge(read_file(ref), std::nullopt); }
  Evaluation evaluate(const fs::path& src, const std::optional<fs::path>& leader) override {
    int n = ++calls;
    if (stop_after_flag && n >= stop_after) stop_after_flag->store(true);
    return judge(read_file(src), leader ? std::optional<std::string>(read_file(*leader)) : std::nullopt);
  }
  static Evaluation judge(const std::string& s, const std::optional<std::string>& leader) {
    Evaluation e;
    if (s.rfind("reject=", 0) == 0) {
      e.status = EvalStatus::rejected;
      e.check = Check::correctness;
      e.reason = s.substr(
          7, s.find('#') == std::string::npos ? std::string::npos : s.find('#') - 7);  // "#n" keeps sources distinct
      e.message = "scripted rejection";
      return e;
    }
    if (s == "error") {
      e.status = EvalStatus::error;
      e.message = "scripted harness failure";
      return e;
    }
    e.status = EvalStatus::accepted;
    e.time_s = parse_time(s);
    e.score = 1.0 / (1.0 + e.time_s);
    e.workload_median_s = {{"w", e.time_s}};
    if (leader) {
      double lt = parse_time(*leader);
      e.gain_vs_leader = lt / e.time_s - 1;
      e.beats_leader = e.time_s < lt * 0.99;  // the "noise": 1%
    }
    return e;
  }
};

struct Seen {
  std::string strategy, start, leader;
  std::size_t board = 0, backups = 0;
};

struct Script {
  std::mutex mu;
  std::vector<Seen> seen;
  std::vector<std::string> outcomes;  // verdicts observed, in order
};

class ScriptAgent : public Agent {
 public:
  ScriptAgent(std::vector<std::pair<std::string, std::vector<std::string>>> plan, std::shared_ptr<Script> log,
              bool post = true)
      : plan_(std::move(plan)), log_(std::move(log)), post_(post) {}
  std::string kind() const override { return "script"; }
  std::vector<Strategy> strategies(const Task&, Backend) const override {
    std::vector<Strategy> v;
    for (auto& [n, _] : plan_) v.push_back({n, "scripted"});
    return v;
  }
  std::optional<Proposal> propose(const AgentContext& ctx) override {
    if (ctx.stopping()) return std::nullopt;
    {
      std::lock_guard<std::mutex> lk(log_->mu);
      log_->seen.push_back({ctx.strategy.name, ctx.start ? ctx.start->id : "", ctx.leader ? ctx.leader->id : "",
                            ctx.board.size(), ctx.backups.size()});
    }
    for (auto& [n, srcs] : plan_)
      if (n == ctx.strategy.name) {
        auto& i = next_[n];
        if (i >= srcs.size()) return std::nullopt;
        Proposal p;
        p.source = srcs[i++];
        p.label = n;
        p.parent = ctx.start ? ctx.start->id : "";
        return p;
      }
    return std::nullopt;
  }
  std::optional<BoardEntry> observe(const AgentContext& ctx, const Proposal& p, const Outcome& o) override {
    {
      std::lock_guard<std::mutex> lk(log_->mu);
      log_->outcomes.push_back(standing_name(o.standing));
    }
    if (!post_) return std::nullopt;
    BoardEntry e;
    e.kind = o.standing == Standing::leader ? "worked" : o.standing == Standing::rejected ? "failed" : "insight";
    e.text = p.source + " -> " + standing_name(o.standing);
    e.delta = o.delta_vs_leader;
    return e;
  }

 private:
  std::vector<std::pair<std::string, std::vector<std::string>>> plan_;
  std::shared_ptr<Script> log_;
  bool post_;
  std::map<std::string, std::size_t> next_;
};

struct Fixture {
  fs::path dir = make_temp_dir(fs::temp_directory_path(), "khive-hive-test");
  Task task;
  Fixture() {
    task.name = "fake";
    task.dir = dir / "task";
    fs::create_directories(task.dir);
    task.reference_cpu = task.dir / "reference.cpp";
    write_file_atomic(*task.reference_cpu, "time=1.0");
    task.hash = "fakehash";
  }
  HiveOptions opts(const std::string& run = "run") {
    HiveOptions o;
    o.run_dir = dir / run;
    o.seed = 42;
    return o;
  }
};

std::vector<std::unique_ptr<Agent>> one(std::unique_ptr<Agent> a) {
  std::vector<std::unique_ptr<Agent>> v;
  v.push_back(std::move(a));
  return v;
}

}  // namespace

TEST(Hive, VerdictRoutingRejectedBackupLeader) {
  Fixture f;
  FakeEvaluator ev;
  auto log = std::make_shared<Script>();
  auto o = f.opts();
  o.plateau = 100;
  Hive h(f.task, Backend::cpu,
         one(std::make_unique<ScriptAgent>(
             std::vector<std::pair<std::string, std::vector<std::string>>>{
                 {"s.a", {"reject=correctness_mismatch", "time=0.9", "time=0.895", "time=0.5", "time=0.9", "error"}}},
             log)),
         ev, o);
  auto r = h.run();
  // 0.9 beats the reference (1.0) -> leader; 0.895 is within the 1% noise -> backup; 0.5 -> leader;
  // the repeated 0.9 is not evaluated again; the harness error is recorded as such.
  EXPECT_EQ(log->outcomes, (std::vector<std::string>{"rejected", "leader", "backup", "leader", "leader", "error"}));
  EXPECT_EQ(ev.calls.load(), 5);
  ASSERT_TRUE(r.leader);
  EXPECT_DOUBLE_EQ(r.leader->time_s, 0.5);
  EXPECT_EQ(read_file(o.run_dir / "best.cpp"), "time=0.5");
  // Backups: fastest first, the leader excluded, the rejected one never among them.
  ASSERT_EQ(r.backups.size(), 3u);
  EXPECT_DOUBLE_EQ(r.backups[0].time_s, 0.895);
  EXPECT_DOUBLE_EQ(r.backups[1].time_s, 0.9);
  EXPECT_EQ(r.backups[2].id, "c0000");  // the reference
  RunStore db(o.run_dir / "run.db");
  auto cs = db.candidates();
  ASSERT_EQ(cs.size(), 6u);  // reference + 5 evaluated
  EXPECT_EQ(cs[1].standing, Standing::rejected);
  EXPECT_EQ(cs[1].reason, "correctness_mismatch");
  EXPECT_EQ(cs[5].standing, Standing::error);
  EXPECT_NEAR(cs[4].delta, 0.9 / 0.5 - 1, 1e-9);
  EXPECT_EQ(cs[4].parent, cs[2].id);  // derived from the leader of the time
  EXPECT_EQ(db.meta("leader").value(), cs[4].id);
}

TEST(Hive, BackupsAreDiversePerStrategyFamily) {
  std::vector<MeasuredKernel> acc;
  auto k = [](std::string id, std::string s, double t) {
    MeasuredKernel m;
    m.id = id;
    m.strategy = s;
    m.time_s = t;
    return m;
  };
  acc = {k("L", "x.a", 0.1),  k("1", "x.a", 0.2), k("2", "x.b", 0.21),
         k("3", "x.a", 0.22), k("4", "y.a", 0.5), k("5", "z.a", 0.6)};
  auto b = rank_backups(acc, "L", 3, 2);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].id, "1");
  EXPECT_EQ(b[1].id, "2");
  EXPECT_EQ(b[2].id, "4");  // "3" would be the third of family x
  // Template-made kernels count per template, whatever their strategy: two rowop templates keep two backups each.
  auto t = [&](std::string id, std::string s, std::string tmpl, double time) {
    MeasuredKernel m = k(id, s, time);
    m.params["template"] = tmpl;
    return m;
  };
  acc = {t("L", "rowop.passes", "rowop.a", 0.1),  t("1", "rowop.passes", "rowop.a", 0.2),
         t("2", "rowop.vector", "rowop.a", 0.21), t("3", "rowop.vector", "rowop.a", 0.22),
         t("4", "rowop.ring", "rowop.b", 0.3),    t("5", "rowop.ring", "rowop.b", 0.4)};
  b = rank_backups(acc, "L", 8, 2);
  std::vector<std::string> ids;
  for (auto& x : b) ids.push_back(x.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"1", "2", "4", "5"}));  // "3": the third of template rowop.a
  EXPECT_EQ(backup_family(acc[4]), "template rowop.b");
  EXPECT_EQ(backup_family(k("x", "llm.fix", 1)), "llm");
}

TEST(Hive, PlateauMovesTheAgentToTheLeastExploredStrategyWithAReason) {
  Fixture f;
  FakeEvaluator ev;
  auto log = std::make_shared<Script>();
  auto o = f.opts();
  o.plateau = 2;
  o.budget_candidates = 5;
  using Plan = std::vector<std::pair<std::string, std::vector<std::string>>>;
  Hive h(
      f.task, Backend::cpu,
      one(std::make_unique<ScriptAgent>(
          Plan{{"s.a", {"time=1.5", "time=1.6", "time=1.7"}}, {"s.b", {"time=1.8", "time=0.5"}}, {"s.c", {"time=2.0"}}},
          log)),
      ev, o);
  h.run();
  RunStore db(o.run_dir / "run.db");
  auto sw = db.switches();
  ASSERT_GE(sw.size(), 1u);
  EXPECT_EQ(sw[0].from, "s.a");
  EXPECT_EQ(sw[0].to, "s.b");  // s.b and s.c are equally unexplored: declaration order
  EXPECT_NE(sw[0].reason.find("plateau: 2 evaluated candidates"), std::string::npos) << sw[0].reason;
  // After the switch the agent proposed under s.b, and its second s.b kernel became the leader.
  std::vector<std::string> strategies;
  for (auto& s : log->seen) strategies.push_back(s.strategy);
  EXPECT_EQ(std::vector<std::string>(strategies.begin(), strategies.begin() + 4),
            (std::vector<std::string>{"s.a", "s.a", "s.b", "s.b"}));
  EXPECT_EQ(log->outcomes[3], "leader");
  // The event log has the switch too.
  bool found = false;
  for (auto& e : read_event_log(o.run_dir / "events.jsonl").events)
    if (e["type"] == "switch" && e["to"] == "s.b") found = true;
  EXPECT_TRUE(found);
}

TEST(Hive, PlateauPrefersWhatTheBoardShowsLeastExplored) {
  std::vector<Strategy> all = {{"s.a", ""}, {"s.b", ""}, {"s.c", ""}, {"s.d", ""}};
  // s.b is heavily explored on the board, s.c a little, s.d not at all; s.a is the current one.
  EXPECT_EQ(choose_strategy(all, "s.a", {}, {}, {{"s.b", 5}, {"s.c", 1}}, {}, 0), "s.d");
  // Recently held strategies are avoided while there are others.
  EXPECT_EQ(choose_strategy(all, "s.a", {"s.d"}, {}, {{"s.b", 5}, {"s.c", 1}}, {}, 0), "s.c");
  // Exhausted ones never come back; with only recent ones left, a recent one is taken.
  EXPECT_EQ(choose_strategy(all, "s.a", {"s.d"}, {"s.b", "s.c"}, {}, {}, 0), "s.d");
  EXPECT_EQ(choose_strategy(all, "s.a", {}, {"s.b", "s.c", "s.d"}, {}, {}, 0), "");
  // Ties: the strategy fewer other agents hold, then rotation by agent index.
  EXPECT_EQ(choose_strategy(all, "s.a", {}, {}, {}, {{"s.b", 1}}, 0), "s.c");
  EXPECT_EQ(choose_strategy(all, "s.a", {}, {}, {}, {}, 3), "s.d");
}

TEST(Hive, HivePlateauRestartsAgentsFromBackups) {
  Fixture f;
  FakeEvaluator ev;
  auto log = std::make_shared<Script>();
  auto o = f.opts();
  o.plateau = 2;
  o.budget_candidates = 6;
  using Plan = std::vector<std::pair<std::string, std::vector<std::string>>>;
  // One agent, one strategy: after P candidates without a leader it has nowhere to switch; after P more (P x (agents
  // + 1)) the whole hive has stalled and the agent restarts from the best backup.
  Hive h(f.task, Backend::cpu,
         one(std::make_unique<ScriptAgent>(
             Plan{{"s.a", {"time=1.2", "time=1.1", "time=1.3", "time=1.4", "time=1.5", "time=1.6"}}}, log)),
         ev, o);
  h.run();
  RunStore db(o.run_dir / "run.db");
  auto sw = db.switches();
  ASSERT_GE(sw.size(), 1u);
  EXPECT_NE(sw[0].reason.find("hive plateau"), std::string::npos) << sw[0].reason;
  EXPECT_NE(sw[0].reason.find("restart from backup c0002"), std::string::npos)
      << sw[0].reason;  // 1.1 is the best backup
  EXPECT_EQ(sw[0].base, "c0002");
  ASSERT_GE(log->seen.size(), 5u);
  EXPECT_EQ(log->seen[0].start, "c0000");   // the reference leads at first
  EXPECT_EQ(log->seen[3].start, "c0000");   // the agent's own plateau (nowhere to switch) is not yet the hive's
  EXPECT_EQ(log->seen[4].start, "c0002");   // after the restart: derives from the backup
  EXPECT_EQ(log->seen[4].leader, "c0000");  // the leader itself is unchanged
}

// A strategy that had nothing to propose around the old leader is tried again around a new one: "exhausted" holds
// for a base (tuner sub-spaces move with the leader; tuner.dispatch composes only once backups differ).
class AfterLeaderAgent : public Agent {
 public:
  std::string kind() const override { return "script"; }
  std::vector<Strategy> strategies(const Task&, Backend) const override {
    return {{"s.later", "needs a new leader"}, {"s.first", "one kernel"}};
  }
  std::optional<Proposal> propose(const AgentContext& ctx) override {
    Proposal p;
    p.label = ctx.strategy.name;
    const bool reference_leads = !ctx.leader || ctx.leader->source == "time=1.0";
    if (ctx.strategy.name == "s.later") {
      if (reference_leads || later_done) return std::nullopt;
      later_done = true;
      p.source = "time=0.3";
      return p;
    }
    if (first_done) return std::nullopt;
    first_done = true;
    p.source = "time=0.5";
    return p;
  }
  std::optional<BoardEntry> observe(const AgentContext&, const Proposal&, const Outcome&) override {
    return std::nullopt;
  }
  bool later_done = false, first_done = false;
};

TEST(Hive, ANewLeaderReopensStrategiesExhaustedAroundTheOldOne) {
  Fixture f;
  FakeEvaluator ev;
  auto o = f.opts();
  o.budget_candidates = 10;
  Hive h(f.task, Backend::cpu, one(std::make_unique<AfterLeaderAgent>()), ev, o);
  h.run();
  RunStore db(o.run_dir / "run.db");
  auto cs = db.candidates();
  std::vector<std::string> sources;
  for (auto& c : cs) sources.push_back(c.source);
  // s.later (nothing yet) -> s.first: 0.5 leads -> s.first spent -> s.later again: 0.3 leads.
  ASSERT_EQ(sources, (std::vector<std::string>{"time=1.0", "time=0.5", "time=0.3"}));
  EXPECT_EQ(cs.back().standing, Standing::leader);
  EXPECT_EQ(db.meta("leader").value(), cs.back().id);
  auto sw = db.switches();
  ASSERT_GE(sw.size(), 2u);
  EXPECT_EQ(sw[0].to, "s.first");
  EXPECT_EQ(sw[1].to, "s.later");
}

TEST(Hive, CandidateBudgetIsExactWithConcurrentAgents) {
  Fixture f;
  FakeEvaluator ev;
  auto log = std::make_shared<Script>();
  auto o = f.opts();
  o.budget_candidates = 7;
  std::vector<std::unique_ptr<Agent>> agents;
  for (int i = 0; i < 3; ++i) {
    std::vector<std::string> srcs;
    for (int j = 0; j < 10; ++j) srcs.push_back("time=" + std::to_string(2.0 + i + j * 0.01));
    agents.push_back(std::make_unique<ScriptAgent>(
        std::vector<std::pair<std::string, std::vector<std::string>>>{{"s.a", srcs}}, log));
  }
  Hive h(f.task, Backend::cpu, std::move(agents), ev, o);
  auto r = h.run();
  EXPECT_EQ(ev.calls.load(), 7);
  EXPECT_EQ(r.status.evaluated, 7);
  EXPECT_NE(r.status.stop_reason.find("candidate budget"), std::string::npos);
  EXPECT_EQ(r.leader->id, "c0000");  // nothing beat the reference
}

TEST(Hive, BoardCapacityAndNoBoard) {
  Fixture f;
  FakeEvaluator ev;
  auto log = std::make_shared<Script>();
  auto o = f.opts();
  o.board_capacity = 3;
  o.plateau = 100;
  using Plan = std::vector<std::pair<std::string, std::vector<std::string>>>;
  Plan plan{{"s.a", {"time=0.9", "time=0.95", "reject=x#1", "reject=x#2", "time=0.3", "time=2"}}};
  {
    Hive h(f.task, Backend::cpu, one(std::make_unique<ScriptAgent>(plan, log)), ev, o);
    auto r = h.run();
    EXPECT_EQ(r.status.board_entries, 3u);
    RunStore db(o.run_dir / "run.db");
    EXPECT_EQ(db.board(false).size(), 3u);
    EXPECT_EQ(db.board(true).size(), 6u);
    // Evicted: the older of the two identical failures, then the least informative (the remaining failure,
    // worth 1%, and the -5% backup). Kept: +11% (0.9 over 1.0), +200% (0.3 over 0.9), -85% (2 vs 0.3).
    std::vector<std::string> kinds;
    std::vector<int64_t> ids;
    for (auto& s : db.board(false)) kinds.push_back(s.entry.kind), ids.push_back(s.entry.id);
    EXPECT_EQ(kinds, (std::vector<std::string>{"worked", "worked", "insight"}));
    EXPECT_EQ(ids, (std::vector<int64_t>{1, 5, 6}));
    EXPECT_EQ(log->seen.back().board, 3u);
  }
  auto log2 = std::make_shared<Script>();
  auto o2 = f.opts("run2");
  o2.board = false;
  o2.plateau = 100;
  Hive h2(f.task, Backend::cpu, one(std::make_unique<ScriptAgent>(plan, log2)), ev, o2);
  auto r2 = h2.run();
  EXPECT_EQ(r2.status.board_entries, 0u);
  for (auto& s : log2->seen) EXPECT_EQ(s.board, 0u);
}

// A session killed mid-evaluation leaves candidate files it never recorded; a resumed run keeps them and gives their
// ids to no new candidate (issue 25: a new c0004 took the place of an unrecorded c0004-*.cpp).
TEST(Hive, ResumeDoesNotReuseTheIdsOfUnrecordedCandidateFiles) {
  Fixture f;
  auto log = std::make_shared<Script>();
  using Plan = std::vector<std::pair<std::string, std::vector<std::string>>>;
  Plan plan{{"s.a", {"time=0.9", "time=0.8", "time=0.7", "time=0.6"}}};
  auto o = f.opts();
  o.plateau = 100;
  o.budget_candidates = 2;
  {
    FakeEvaluator ev;
    Hive h(f.task, Backend::cpu, one(std::make_unique<ScriptAgent>(plan, log)), ev, o);
    h.run();
  }
  // What a kill during the next candidate's evaluation leaves: its file, no record.
  const auto orphan = o.run_dir / "candidates" / "c0007-candidate.cpp";
  write_file_atomic(orphan, "// never recorded\n");
  o.resume = true;
  o.budget_candidates = 3;
  FakeEvaluator ev2;
  Hive h2(f.task, Backend::cpu, one(std::make_unique<ScriptAgent>(plan, std::make_shared<Script>())), ev2, o);
  h2.run();
  EXPECT_EQ(read_file(orphan), "// never recorded\n");
  RunStore db(o.run_dir / "run.db");
  const auto cs = db.candidates();
  ASSERT_FALSE(cs.empty());
  EXPECT_EQ(cs.back().id, "c0008") << "the new candidate's id comes after the unrecorded one's";
  const std::string events = read_file(o.run_dir / "events.jsonl");
  EXPECT_NE(events.find("never recorded"), std::string::npos);
}

TEST(Hive, ResumeReusesVerdictsInsteadOfReevaluating) {
  Fixture f;
  auto log = std::make_shared<Script>();
  using Plan = std::vector<std::pair<std::string, std::vector<std::string>>>;
  Plan plan{{"s.a", {"time=0.9", "reject=x", "time=0.7", "time=0.8", "time=0.6", "time=0.65"}}};
  auto o = f.opts();
  o.plateau = 100;
  o.budget_candidates = 3;
  {
    FakeEvaluator ev;
    Hive h(f.task, Backend::cpu, one(std::make_unique<ScriptAgent>(plan, log)), ev, o);
    h.run();
    EXPECT_EQ(ev.calls.load(), 3);
  }
  o.resume = true;
  o.budget_candidates = 6;
  FakeEvaluator ev2;
  auto log2 = std::make_shared<Script>();
  Hive h2(f.task, Backend::cpu, one(std::make_unique<ScriptAgent>(plan, log2)), ev2, o);
  auto r = h2.run();
  EXPECT_EQ(ev2.calls.load(), 3);  // only the three new kernels
  EXPECT_EQ(r.status.evaluated, 6);
  EXPECT_EQ(log2->outcomes[0], "leader");  // reused verdicts, as recorded
  EXPECT_EQ(log2->outcomes[1], "rejected");
  EXPECT_DOUBLE_EQ(r.leader->time_s, 0.6);
  RunStore db(o.run_dir / "run.db");
  EXPECT_EQ(db.candidates().size(), 7u);
  // A run directory is not silently overwritten, and a resume needs a run.
  auto o3 = o;
  o3.resume = false;
  FakeEvaluator ev3;
  Hive h3(f.task, Backend::cpu, one(std::make_unique<ScriptAgent>(plan, log2)), ev3, o3);
  EXPECT_THROW(h3.run(), std::runtime_error);
  // The task must be the one the run was made for.
  Task other = f.task;
  other.hash = "different";
  Hive h4(other, Backend::cpu, one(std::make_unique<ScriptAgent>(plan, log2)), ev3, o);
  EXPECT_THROW(h4.run(), std::runtime_error);
}

TEST(Hive, InterruptStopsCleanlyAndKeepsEverything) {
  Fixture f;
  FakeEvaluator ev;
  std::atomic<bool> sigint{false};
  ev.stop_after_flag = &sigint;
  ev.stop_after = 2;
  auto log = std::make_shared<Script>();
  auto o = f.opts();
  o.external_stop = &sigint;
  std::vector<std::string> srcs;
  for (int j = 0; j < 50; ++j) srcs.push_back("time=" + std::to_string(3.0 + j * 0.01));
  Hive h(f.task, Backend::cpu,
         one(std::make_unique<ScriptAgent>(std::vector<std::pair<std::string, std::vector<std::string>>>{{"s.a", srcs}},
                                           log)),
         ev, o);
  auto r = h.run();
  EXPECT_NE(r.status.stop_reason.find("interrupted"), std::string::npos);
  EXPECT_LT(ev.calls.load(), 10);
  RunStore db(o.run_dir / "run.db");
  EXPECT_EQ(static_cast<int>(db.candidates().size()), ev.calls.load() + 1);  // every evaluated one recorded
  auto evs = read_event_log(o.run_dir / "events.jsonl").events;
  EXPECT_EQ(evs.back()["type"], "end");
}

// One device slot, evaluations of `eval_s` each, and stop_evaluating as GuardEvaluator has it: waiting ones end at
// once, cancelled; with in_flight, the one on the slot too.
class SlotEvaluator : public Evaluator {
 public:
  explicit SlotEvaluator(double eval_s) : eval_s_(eval_s) {}
  std::atomic<int> started{0}, cancelled{0};
  Evaluation prepare(const fs::path& ref) override { return FakeEvaluator::judge(read_file(ref), std::nullopt); }
  Evaluation evaluate(const fs::path& src, const std::optional<fs::path>& leader) override {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait(lk, [&] { return !busy_ || stopping_; });
    if (stopping_) return cancel();
    busy_ = true;
    ++started;
    const bool killed = cv_.wait_for(lk, std::chrono::duration<double>(eval_s_), [&] { return in_flight_; });
    busy_ = false;
    cv_.notify_all();
    if (killed) return cancel();
    lk.unlock();
    return FakeEvaluator::judge(read_file(src), leader ? std::optional<std::string>(read_file(*leader)) : std::nullopt);
  }
  void stop_evaluating(bool in_flight) override {
    std::lock_guard<std::mutex> lk(mu_);
    stopping_ = true;
    in_flight_ = in_flight_ || in_flight;
    cv_.notify_all();
  }

 private:
  Evaluation cancel() {
    ++cancelled;
    Evaluation e;
    e.status = EvalStatus::cancelled;
    return e;
  }
  double eval_s_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool busy_ = false, stopping_ = false, in_flight_ = false;
};

// --budget-time (issue 25: --budget-time 5 ended after 120 s): when it is spent, candidates waiting for the device are
// not evaluated and one on the device is stopped after the grace (10 % of the budget, at least 5 s); neither is
// recorded, and a resumed run does not give their ids to others.
TEST(Hive, TheTimeBudgetEndsEvaluationsThatWouldOverrunIt) {
  Fixture f;
  SlotEvaluator ev(60.0);  // each evaluation would take 60 s
  auto o = f.opts();
  o.budget_time_s = 3;  // long enough for an agent to reach the device on a loaded machine
  std::vector<std::unique_ptr<Agent>> agents;
  auto log = std::make_shared<Script>();
  for (int i = 0; i < 3; ++i)
    agents.push_back(std::make_unique<ScriptAgent>(
        std::vector<std::pair<std::string, std::vector<std::string>>>{
            {"s." + std::to_string(i), {"time=0." + std::to_string(5 + i)}}},
        log));
  const auto t0 = std::chrono::steady_clock::now();
  Hive h(f.task, Backend::cpu, std::move(agents), ev, o);
  auto r = h.run();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_NE(r.status.stop_reason.find("time budget"), std::string::npos) << r.status.stop_reason;
  EXPECT_LT(wall, 25.0) << "the run waited for evaluations past the budget and its grace";
  EXPECT_GE(wall, 7.5) << "the evaluation on the device had its grace (5 s after the 3 s budget)";
  EXPECT_EQ(ev.started.load(), 1);
  EXPECT_EQ(ev.cancelled.load(), 3);  // two that waited, one stopped after the grace
  EXPECT_TRUE(log->outcomes.empty()) << "an agent observed a verdict that was never reached";
  RunStore db(o.run_dir / "run.db");
  EXPECT_EQ(db.candidates().size(), 1u);  // the reference alone
  int notes = 0;
  for (const auto& e : read_event_log(o.run_dir / "events.jsonl").events)
    notes +=
        e.value("type", "") == "note" && e.value("message", "").find("not evaluated: time budget") != std::string::npos;
  EXPECT_EQ(notes, 3);
  // Without a time budget, an evaluation is never stopped: one agent, one 0.2 s evaluation.
  SlotEvaluator quick(0.2);
  auto o2 = f.opts("run2");
  Hive h2(f.task, Backend::cpu,
          one(std::make_unique<ScriptAgent>(
              std::vector<std::pair<std::string, std::vector<std::string>>>{{"s.a", {"time=0.5"}}}, log)),
          quick, o2);
  h2.run();
  EXPECT_EQ(quick.cancelled.load(), 0);
  EXPECT_EQ(RunStore(o2.run_dir / "run.db").candidates().size(), 2u);
}

TEST(Hive, RepeatedHarnessErrorsStopTheRun) {
  Fixture f;
  FakeEvaluator ev;
  auto log = std::make_shared<Script>();
  auto o = f.opts();
  o.max_harness_errors = 3;
  Hive h(f.task, Backend::cpu,
         one(std::make_unique<ScriptAgent>(
             std::vector<std::pair<std::string, std::vector<std::string>>>{
                 {"s.a", {"error", "error", "error", "error", "time=0.1"}}},
             log)),
         ev, o);
  auto r = h.run();
  EXPECT_EQ(ev.calls.load(), 3);
  EXPECT_NE(r.status.stop_reason.find("harness errors"), std::string::npos);
}
