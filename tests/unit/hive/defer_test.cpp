// Deferred evaluation (models here, GPU there) with a scripted evaluator: candidates that build are
// recorded as pending and their agents wait; the run pauses with an event; evaluate_pending() gives the
// verdicts with the hive's rules (reference first, then in order against the leader of the time) and
// posts nothing to the board; a resumed run hands each agent its verdicts in order, the agent's saved
// state comes back, and the run continues. Plus the store's pending and agent-state tables.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>

#include "khive/hive/hive.hpp"
#include "khive/record/event_log.hpp"
#include "khive/record/store.hpp"
#include "khive/support/files.hpp"

using namespace khive;
namespace fs = std::filesystem;

namespace {

double time_of(const std::string& s) { return s.rfind("time=", 0) == 0 ? std::stod(s.substr(5)) : 0.0; }

// "build-error..." fails check 1; "reject..." fails at correctness; "time=T" is accepted in T seconds.
class DeferEvaluator : public Evaluator {
 public:
  std::atomic<int> builds{0}, runs{0}, prepares{0};
  Evaluation prepare(const fs::path& ref) override {
    ++prepares;
    return run(read_file(ref), std::nullopt);
  }
  Evaluation evaluate(const fs::path& src, const std::optional<fs::path>& leader) override {
    ++runs;
    auto s = read_file(src);
    if (auto b = build_only(src); b.status != EvalStatus::built) return b;
    return run(s, leader ? std::optional<std::string>(read_file(*leader)) : std::nullopt);
  }
  Evaluation build_only(const fs::path& src) override {
    ++builds;
    Evaluation e;
    auto s = read_file(src);
    e.build_key = "key:" + s;
    if (s.rfind("build-error", 0) == 0) {
      e.status = EvalStatus::rejected;
      e.check = Check::build;
      e.reason = "build_error";
      e.message = "scripted build error";
      return e;
    }
    e.status = EvalStatus::built;
    return e;
  }
  static Evaluation run(const std::string& s, const std::optional<std::string>& leader) {
    Evaluation e;
    e.build_key = "key:" + s;
    if (s.rfind("reject", 0) == 0) {
      e.status = EvalStatus::rejected;
      e.check = Check::correctness;
      e.reason = "mismatch";
      return e;
    }
    e.status = EvalStatus::accepted;
    e.time_s = time_of(s);
    e.workload_median_s = {{"w", e.time_s}};
    if (leader) {
      e.gain_vs_leader = time_of(*leader) / e.time_s - 1;
      e.beats_leader = e.time_s < time_of(*leader) * 0.99;
    }
    return e;
  }
};

struct Log {
  std::mutex mu;
  std::vector<std::string> seen;  // "c0002:leader" per observe
  std::vector<std::string> proposed;
  std::vector<std::string> loaded;  // states handed back by the hive
};

// Proposes its list in order; after a rejection at build it proposes the next (a "repair"). Its state is
// the position in the list, which the hive saves and restores.
class ListAgent : public Agent {
 public:
  ListAgent(std::vector<std::string> srcs, std::shared_ptr<Log> log) : srcs_(std::move(srcs)), log_(std::move(log)) {}
  std::string kind() const override { return "list"; }
  std::vector<Strategy> strategies(const Task&, Backend) const override { return {{"list.a", "scripted"}}; }
  std::optional<Proposal> propose(const AgentContext& ctx) override {
    if (ctx.stopping() || next_ >= srcs_.size()) return std::nullopt;
    Proposal p;
    p.source = srcs_[next_++];
    p.label = "k";
    std::lock_guard lk(log_->mu);
    log_->proposed.push_back(p.source);
    return p;
  }
  std::optional<BoardEntry> observe(const AgentContext&, const Proposal& p, const Outcome& o) override {
    std::lock_guard lk(log_->mu);
    log_->seen.push_back(o.candidate + ":" + standing_name(o.standing));
    BoardEntry e;
    e.kind = o.standing == Standing::leader ? "worked" : "failed";
    e.text = p.source + " -> " + standing_name(o.standing);
    return e;
  }
  nlohmann::json save_state() const override { return {{"next", next_}}; }
  void load_state(const nlohmann::json& j) override {
    next_ = j.at("next").get<std::size_t>();
    std::lock_guard lk(log_->mu);
    log_->loaded.push_back(j.dump());
  }

 private:
  std::vector<std::string> srcs_;
  std::shared_ptr<Log> log_;
  std::size_t next_ = 0;
};

struct Fixture {
  fs::path dir = make_temp_dir(fs::temp_directory_path(), "khive-defer-test");
  Task task;
  Fixture() {
    task.name = "fake";
    task.dir = dir / "task";
    fs::create_directories(task.dir);
    task.reference_cpu = task.dir / "reference.cpp";
    write_file_atomic(*task.reference_cpu, "time=1.0");
    task.hash = "fakehash";
  }
  HiveOptions opts() {
    HiveOptions o;
    o.run_dir = dir / "run";
    o.seed = 42;
    o.plateau = 100;
    return o;
  }
};

std::vector<std::unique_ptr<Agent>> agents(const std::vector<std::vector<std::string>>& lists,
                                           std::shared_ptr<Log> log) {
  std::vector<std::unique_ptr<Agent>> v;
  for (auto& l : lists) v.push_back(std::make_unique<ListAgent>(l, log));
  return v;
}

std::map<std::string, std::string> verdicts(const fs::path& run) {
  RunStore db(run / "run.db");
  std::map<std::string, std::string> m;
  for (auto& c : db.candidates()) m[c.id] = standing_name(c.standing);
  return m;
}

std::vector<std::string> types(const fs::path& run) {
  std::vector<std::string> t;
  for (auto& e : read_event_log(run / "events.jsonl").events) t.push_back(e["type"]);
  return t;
}

}  // namespace

TEST(RunStorePending, StatusesInCandidateOrderAndAgentState) {
  auto d = make_temp_dir(fs::temp_directory_path(), "khive-defer-store");
  RunStore db(d / "run.db");
  for (auto [id, seq] : {std::pair{"c0002", 2}, std::pair{"c0001", 1}}) {
    CandidateRecord c;
    c.id = id;
    c.seq = seq;
    c.hash = id;
    c.standing = Standing::pending;
    db.put_candidate(c);
  }
  db.put_pending({"c0002", "a1", "k2", PendingStatus::awaiting, 1.0, 0, ""});
  db.put_pending({"c0001", "a0", "k1", PendingStatus::awaiting, 2.0, 0, ""});
  auto all = db.pending();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].id, "c0001");  // by candidate order, not by insertion
  EXPECT_EQ(all[0].build_key, "k1");
  all[0].status = PendingStatus::evaluated;
  all[0].t_evaluated = 3.5;
  db.put_pending(all[0]);
  ASSERT_EQ(db.pending(PendingStatus::awaiting).size(), 1u);
  EXPECT_EQ(db.pending(PendingStatus::awaiting)[0].id, "c0002");
  EXPECT_DOUBLE_EQ(db.pending(PendingStatus::evaluated)[0].t_evaluated, 3.5);

  EXPECT_FALSE(db.agent_state(0, "list"));
  db.put_agent_state(0, "list", "{\"next\":1}");
  db.put_agent_state(0, "list", "{\"next\":2}");
  EXPECT_EQ(db.agent_state(0, "list").value(), "{\"next\":2}");
  EXPECT_FALSE(db.agent_state(0, "other-kind"));  // a state is only handed to the same kind of agent
}

TEST(HiveDefer, PausesEvaluatesElsewhereAndResumes) {
  Fixture f;
  auto log = std::make_shared<Log>();
  auto o = f.opts();
  o.defer_eval = true;
  // a0: a build error (a real verdict here: observed at once), then a kernel that builds -> pending.
  // a1: a kernel that builds -> pending. Both wait; nothing is run.
  DeferEvaluator here;
  {
    Hive h(f.task, Backend::cpu,
           agents({{"build-error #1", "time=0.5", "time=0.4"}, {"time=0.8", "reject #2", "time=0.3"}}, log), here, o);
    auto r = h.run();
    EXPECT_EQ(r.status.stop_reason.rfind("paused: 3 candidate(s) await GPU evaluation", 0), 0u) << r.status.stop_reason;
    EXPECT_NE(r.status.stop_reason.find("khive evaluate-pending"), std::string::npos);
    EXPECT_FALSE(r.leader);  // the reference is deferred too
  }
  EXPECT_EQ(here.runs.load(), 0);
  EXPECT_EQ(here.prepares.load(), 0);
  ASSERT_EQ(log->seen.size(), 1u);  // only the build verdict
  EXPECT_EQ(log->seen[0].substr(5), ":rejected");
  EXPECT_EQ(log->proposed.size(), 3u);  // nobody proposed on top of a pending kernel
  auto v = verdicts(o.run_dir);
  EXPECT_EQ(v["c0000"], "pending");
  EXPECT_EQ(v[log->seen[0].substr(0, 5)], "rejected");
  int pending = 0;
  for (auto& [id, verdict] : v) pending += verdict == "pending";
  EXPECT_EQ(pending, 3);
  auto t = types(o.run_dir);
  EXPECT_EQ(std::count(t.begin(), t.end(), "pause"), 1);
  {
    RunStore db(o.run_dir / "run.db");
    EXPECT_EQ(db.pending(PendingStatus::awaiting).size(), 3u);
    EXPECT_EQ(db.board(false).size(), 1u);  // the build failure's conclusion
  }

  // "On the GPU": a separate evaluator, no agents.
  DeferEvaluator there;
  PendingSummary sum;
  {
    HiveOptions eo = f.opts();
    eo.resume = true;
    Hive h(f.task, Backend::cpu, {}, there, eo);
    sum = h.evaluate_pending();
  }
  EXPECT_EQ(there.prepares.load(), 1);
  EXPECT_EQ(there.runs.load(), 2);
  ASSERT_EQ(sum.verdicts.size(), 3u);
  EXPECT_EQ(sum.verdicts[0].id, "c0000");
  EXPECT_EQ(sum.verdicts[0].standing, Standing::leader);
  EXPECT_EQ(sum.errors, 0);
  EXPECT_EQ(sum.remaining, 0);
  v = verdicts(o.run_dir);
  // In candidate order against the leader of the time: whichever of 0.5 / 0.8 came first leads, and 0.5
  // leads in the end.
  ASSERT_TRUE(sum.leader);
  EXPECT_DOUBLE_EQ(sum.leader->time_s, 0.5);
  EXPECT_EQ(read_file(o.run_dir / "best.cpp"), "time=0.5");
  {
    RunStore db(o.run_dir / "run.db");
    EXPECT_EQ(db.board(false).size(), 1u);  // no invented board entries
    EXPECT_EQ(db.pending(PendingStatus::evaluated).size(), 2u);
    EXPECT_EQ(db.pending(PendingStatus::observed).size(), 1u);  // the reference: nobody observes it
  }

  // Resume here (still no GPU): each agent observes its verdict, then continues; the next pending pauses again.
  auto log2 = std::make_shared<Log>();
  DeferEvaluator again;
  HiveOptions ro = f.opts();
  ro.resume = true;
  ro.defer_eval = true;
  Hive h2(f.task, Backend::cpu,
          agents({{"build-error #1", "time=0.5", "time=0.4"}, {"time=0.8", "reject #2", "time=0.3"}}, log2), again, ro);
  auto r2 = h2.run();
  EXPECT_EQ(again.prepares.load(), 0);
  EXPECT_EQ(again.runs.load(), 0);
  // The saved states came back (positions 2 and 1), so no agent re-proposed what it had proposed before.
  EXPECT_EQ(log2->loaded.size(), 2u);
  std::sort(log2->proposed.begin(), log2->proposed.end());
  EXPECT_EQ(log2->proposed, (std::vector<std::string>{"reject #2", "time=0.4"}));
  // Each agent observed exactly the verdict recorded there (the two agents' order is the threads').
  ASSERT_EQ(log2->seen.size(), 2u);
  for (auto& s : log2->seen) EXPECT_EQ(s.substr(6), v[s.substr(0, 5)]) << s;
  t = types(o.run_dir);
  EXPECT_EQ(std::count(t.begin(), t.end(), "deliver"), 2);
  EXPECT_EQ(std::count(t.begin(), t.end(), "pause"), 2);  // every pause is an event
  ASSERT_TRUE(r2.leader);
  EXPECT_DOUBLE_EQ(r2.leader->time_s, 0.5);
  RunStore db(o.run_dir / "run.db");
  EXPECT_EQ(db.board(false).size(), 3u);                      // each agent posted its conclusion on observing
  EXPECT_EQ(db.pending(PendingStatus::awaiting).size(), 2u);  // time=0.4 and reject #2 now await
  EXPECT_EQ(r2.status.evaluated, 5);
}

TEST(HiveDefer, ResumeWithADeviceEvaluatesWhatStillAwaits) {
  Fixture f;
  auto log = std::make_shared<Log>();
  auto o = f.opts();
  o.defer_eval = true;
  DeferEvaluator here;
  Hive(f.task, Backend::cpu, agents({{"time=0.5", "time=0.4"}}, log), here, o).run();
  // Resumed where a device is (no defer): the reference and the awaiting kernel are evaluated by the hive
  // itself, the agent observes the verdict, and the run goes on to the end.
  auto log2 = std::make_shared<Log>();
  DeferEvaluator gpu;
  auto ro = f.opts();
  ro.resume = true;
  Hive h(f.task, Backend::cpu, agents({{"time=0.5", "time=0.4"}}, log2), gpu, ro);
  auto r = h.run();
  EXPECT_EQ(gpu.prepares.load(), 1);
  EXPECT_EQ(gpu.runs.load(), 2);
  EXPECT_EQ(log2->seen, (std::vector<std::string>{"c0001:leader", "c0002:leader"}));
  ASSERT_TRUE(r.leader);
  EXPECT_DOUBLE_EQ(r.leader->time_s, 0.4);
  RunStore db(o.run_dir / "run.db");
  EXPECT_TRUE(db.pending(PendingStatus::awaiting).empty());
  EXPECT_EQ(r.status.stop_reason.rfind("paused", 0), std::string::npos);
}

TEST(HiveDefer, BudgetReachedWithPendingPauses) {
  Fixture f;
  auto log = std::make_shared<Log>();
  auto o = f.opts();
  o.defer_eval = true;
  o.budget_candidates = 1;
  DeferEvaluator here;
  Hive h(f.task, Backend::cpu, agents({{"time=0.5"}, {"time=0.6"}}, log), here, o);
  auto r = h.run();
  EXPECT_EQ(r.status.stop_reason.rfind("paused: ", 0), 0u) << r.status.stop_reason;
  RunStore db(o.run_dir / "run.db");
  EXPECT_EQ(db.pending(PendingStatus::awaiting).size(),
            2u);  // the reference and exactly one candidate: the budget holds
  auto ev = read_event_log(o.run_dir / "events.jsonl").events;
  bool cause = false;
  for (auto& e : ev)
    if (e["type"] == "pause") cause = e["cause"].get<std::string>().find("budget") != std::string::npos;
  EXPECT_TRUE(cause);
}

// A deferred run resumes once per GPU round. The hive's counters and plateau streaks must carry over the
// pauses: with one candidate per session, counting only the session's own verdicts would never let a
// streak reach the plateau.
TEST(HiveDefer, CountersAndStreaksSurvivePauses) {
  Fixture f;
  const std::vector<std::string> list = {"time=0.5", "time=0.9", "time=0.95", "time=0.97"};
  auto opts = [&](bool resume) {
    auto o = f.opts();
    o.defer_eval = true;
    o.plateau = 2;
    o.resume = resume;
    return o;
  };
  HiveResult last;
  for (int round = 0; round < 4; ++round) {
    auto log = std::make_shared<Log>();
    DeferEvaluator here;
    last = Hive(f.task, Backend::cpu, agents({list}, log), here, opts(round > 0)).run();
    ASSERT_EQ(last.status.stop_reason.rfind("paused: ", 0), 0u) << "round " << round << ": " << last.status.stop_reason;
    DeferEvaluator there;
    auto eo = f.opts();
    eo.resume = true;
    Hive(f.task, Backend::cpu, {}, there, eo).evaluate_pending();
  }
  // Delivered over sessions 2-4: c0001 leader, c0002 and c0003 backups; c0004 evaluated, not yet observed.
  ASSERT_EQ(last.status.agents.size(), 1u);
  const auto& a = last.status.agents[0];
  EXPECT_EQ(a.attempts, 3);
  EXPECT_EQ(a.leaders, 1);
  EXPECT_EQ(a.backups, 2);
  EXPECT_EQ(a.since_leader, 2);
  ASSERT_TRUE(a.best_time_s);
  EXPECT_DOUBLE_EQ(*a.best_time_s, 0.5);
  // The two backups, one per session, make a streak of 2 = the plateau: the agent's plateau fires (it has
  // no other strategy, so it stays and counts afresh).
  auto t = types(f.opts().run_dir);
  EXPECT_EQ(std::count(t.begin(), t.end(), "plateau"), 1);

  // Bad stored counters are an event naming the agent, not a crash; the run goes on from zero.
  {
    RunStore db(f.opts().run_dir / "run.db");
    db.set_meta("agent_counters.0.list", "{\"attempts\": \"three\"}");
  }
  auto log = std::make_shared<Log>();
  DeferEvaluator here;
  auto r = Hive(f.task, Backend::cpu, agents({list}, log), here, opts(true)).run();
  bool named = false;
  for (auto& e : read_event_log(f.opts().run_dir / "events.jsonl").events)
    if (e["type"] == "agent_error" && e["agent"] == "a0")
      named = e["message"].get<std::string>().find("stored counters") != std::string::npos;
  EXPECT_TRUE(named);
  ASSERT_EQ(r.status.agents.size(), 1u);
  EXPECT_EQ(r.status.agents[0].attempts, 1);  // only c0004, delivered in this session
}
