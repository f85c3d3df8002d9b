// Issue 17, what the user reads: faster/slower worded from one comparison record in every line, the summary and
// the report; a leader that scores below a backup is explained; the chart draws the leader the summary names;
// the deferred summary counts nothing pending as evaluated; an agent that cannot work (its provider failed, or
// nothing to try) says so and a run where every agent failed so ends at once; one process per run directory;
// run databases from before the comparison column still open. A scripted evaluator, no compiler.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <regex>
#include <thread>

#include <fmt/format.h>

#include "khive/hive/hive.hpp"
#include "khive/record/report.hpp"
#include "khive/record/store.hpp"
#include "khive/support/files.hpp"

using namespace khive;
namespace fs = std::filesystem;

namespace {

// Sources: "solo=S ab=G score=X": accepted with own-run median S, A/B gain G over any leader (beats it when
// G > 0.05) and task score X. "block": waits until released (a long evaluation).
class AbEvaluator : public Evaluator {
 public:
  std::atomic<int> prepares{0};
  std::mutex mu;
  std::condition_variable cv;
  bool released = false;
  std::atomic<bool> blocking{false};
  Evaluation prepare(const fs::path& ref) override {
    ++prepares;
    return judge(read_file(ref), false);
  }
  Evaluation evaluate(const fs::path& src, const std::optional<fs::path>& leader) override {
    const std::string s = read_file(src);
    if (s == "block") {
      blocking = true;
      std::unique_lock<std::mutex> lk(mu);
      cv.wait(lk, [&] { return released; });
    }
    return judge(s, leader.has_value());
  }
  Evaluation build_only(const fs::path&) override {
    Evaluation e;
    e.status = EvalStatus::built;
    e.build_key = "k";
    return e;
  }
  void release() {
    std::lock_guard<std::mutex> lk(mu);
    released = true;
    cv.notify_all();
  }
  static double field(const std::string& s, const std::string& name, double dflt) {
    std::smatch m;
    if (std::regex_search(s, m, std::regex(name + "=([-0-9.e]+)"))) return std::stod(m[1].str());
    return dflt;
  }
  static Evaluation judge(const std::string& s, bool has_leader) {
    Evaluation e;
    e.status = EvalStatus::accepted;
    e.time_s = field(s, "solo", 1.0);
    e.score = field(s, "score", 0.5);
    e.workload_median_s = {{"w", e.time_s}};
    if (has_leader) {
      const double g = field(s, "ab", 0.0);
      e.gain_vs_leader = g;
      e.beats_leader = g > 0.05;
      e.ab_decision = g > 0.05 ? "faster beyond the noise on 1 of 1 workload(s), slower on none"
                               : "faster beyond the noise on no workload";
      e.ab = {{"w", g, 12, g > 0.05 ? "faster" : "level", "noise ±5.0%"}};
      e.message = "A/B vs the leader: " + e.ab_decision + ": w " + std::to_string(g * 100) + "% over 12 pairs";
    }
    return e;
  }
};

class ListAgent : public Agent {
 public:
  explicit ListAgent(std::vector<std::string> sources, std::vector<Strategy> strategies = {{"s.a", "scripted"}})
      : sources_(std::move(sources)), strategies_(std::move(strategies)) {}
  std::string kind() const override { return "list"; }
  std::vector<Strategy> strategies(const Task&, Backend) const override { return strategies_; }
  std::optional<Proposal> propose(const AgentContext& ctx) override {
    if (ctx.stopping() || next_ >= sources_.size()) return std::nullopt;
    Proposal p;
    p.source = sources_[next_++];
    p.label = "k" + std::to_string(next_);
    return p;
  }
  std::optional<BoardEntry> observe(const AgentContext&, const Proposal&, const Outcome& o) override {
    outcomes.push_back(o);
    return std::nullopt;
  }
  std::vector<Outcome> outcomes;

 private:
  std::vector<std::string> sources_;
  std::vector<Strategy> strategies_;
  std::size_t next_ = 0;
};

// An LLM-like agent whose provider cannot be reached.
class DownAgent : public Agent {
 public:
  std::string kind() const override { return "llm:down"; }
  std::vector<Strategy> strategies(const Task&, Backend) const override { return {{"llm.a", ""}, {"llm.b", ""}}; }
  std::optional<Proposal> propose(const AgentContext&) override {
    ++asked;
    return std::nullopt;
  }
  std::optional<BoardEntry> observe(const AgentContext&, const Proposal&, const Outcome&) override {
    return std::nullopt;
  }
  std::string provider_failure() const override {
    return "its model provider failed 3 times in a row; last: provider http://127.0.0.1:9/v1/chat/completions cannot "
           "be reached";
  }
  int asked = 0;
};

// An agent with nothing to try for the task (the tuner without a template).
class IdleAgent : public Agent {
 public:
  std::string kind() const override { return "tuner"; }
  std::vector<Strategy> strategies(const Task&, Backend) const override { return {}; }
  std::optional<Proposal> propose(const AgentContext&) override { return std::nullopt; }
  std::optional<BoardEntry> observe(const AgentContext&, const Proposal&, const Outcome&) override {
    return std::nullopt;
  }
  std::string idle_because(const Task& t, Backend) const override {
    return "the tuner has nothing to try for " + t.name;
  }
};

struct Fixture {
  fs::path dir = make_temp_dir(fs::temp_directory_path(), "khive-view-test");
  Task task;
  std::vector<std::string> lines;
  explicit Fixture(const std::string& reference = "solo=1.0 score=0.5") {
    task.name = "fake";
    task.dir = dir / "task";
    fs::create_directories(task.dir);
    task.reference_cpu = task.dir / "reference.cpp";
    write_file_atomic(*task.reference_cpu, reference);
    task.hash = "fakehash";
  }
  ~Fixture() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  HiveOptions opts() {
    HiveOptions o;
    o.run_dir = dir / "run";
    o.seed = 7;
    o.plateau = 100;
    o.on_update = [this](const HiveStatus& s) { lines.insert(lines.end(), s.lines.begin(), s.lines.end()); };
    return o;
  }
  std::string line_of(const std::string& id) const {
    for (const auto& l : lines)
      if (l.find(" " + id + " ") != std::string::npos) return l;
    return "";
  }
};

template <class... A>
std::vector<std::unique_ptr<Agent>> agents(std::unique_ptr<A>... a) {
  std::vector<std::unique_ptr<Agent>> v;
  (v.push_back(std::move(a)), ...);
  return v;
}

}  // namespace

// The own-run medians say the candidate is 5% slower (inside the 10% noise, so check 12 lets the A/B stand); the
// A/B (what decides) says 20% faster: the line, the record and the summary all say what the A/B said, and never set
// the two medians side by side.
TEST(UserView, VerdictLineAndSummaryWordTheComparison) {
  Fixture f;
  AbEvaluator ev;
  Hive h(f.task, Backend::cpu,
         agents(std::make_unique<ListAgent>(
             std::vector<std::string>{"solo=1.05 ab=0.2 score=0.6", "solo=0.8 ab=0.01 score=0.55"})),
         ev, f.opts());
  h.run();
  const std::string lead = f.line_of("c0001"), backup = f.line_of("c0002");
  EXPECT_NE(
      lead.find(
          "leader   own run 1050.000 ms, score 0.600; A/B vs c0000: +20.0% overall; faster beyond the noise on 1 of 1"),
      std::string::npos)
      << lead;
  EXPECT_NE(backup.find("backup   own run 800.000 ms, score 0.550; A/B vs c0001: +1.0% overall; faster beyond the "
                        "noise on no workload"),
            std::string::npos)
      << backup;
  EXPECT_EQ(lead.find("vs leader"), std::string::npos)
      << "the old wording set a median beside an A/B percentage: " << lead;

  RunStore db(f.dir / "run" / "run.db");
  auto cs = db.candidates();
  ASSERT_EQ(cs.size(), 3u);
  ASSERT_TRUE(cs[1].comparison);
  EXPECT_EQ(cs[1].comparison->against, "c0000");
  EXPECT_EQ(cs[1].comparison->basis, "ab");
  ASSERT_EQ(cs[1].comparison->workloads.size(), 1u);
  EXPECT_EQ(cs[1].comparison->workloads[0].call, "faster");
  EXPECT_NEAR(cs[1].delta, 0.2, 1e-12);

  const std::string sum = summary_text(f.dir / "run");
  EXPECT_NE(sum.find("it took the lead by A/B vs c0000: +20.0% overall"), std::string::npos) << sum;
  EXPECT_NE(sum.find("per workload: w faster +20.0% (noise ±5.0%, 12 pairs)"), std::string::npos) << sum;
  EXPECT_NE(sum.find("by the own-run medians"), std::string::npos) << sum;
  const std::string html = report_html(f.dir / "run");
  EXPECT_NE(html.find("+1.0% (A/B)"), std::string::npos);
}

// Check 12: the A/B says +20% but the candidate's own median is 50% slower than the reference's (beyond the
// noise): it is not made leader, and its line and record say why (a kernel that is slow except when paired
// with the leader must not lead).
TEST(UserView, AnAbWinTheSoloMediansContradictStaysABackupAndSaysWhy) {
  Fixture f;
  AbEvaluator ev;
  Hive h(f.task, Backend::cpu,
         agents(std::make_unique<ListAgent>(std::vector<std::string>{"solo=1.5 ab=0.2 score=0.6"})), ev, f.opts());
  h.run();
  const std::string line = f.line_of("c0001");
  EXPECT_NE(line.find("backup"), std::string::npos) << line;
  EXPECT_NE(line.find("not made leader"), std::string::npos) << line;
  EXPECT_NE(line.find("50% slower than c0000"), std::string::npos) << line;
  RunStore db(f.dir / "run" / "run.db");
  auto cs = db.candidates();
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_EQ(cs[1].standing, Standing::backup);
  ASSERT_TRUE(cs[1].comparison);
  EXPECT_NE(cs[1].comparison->decision.find("not made leader"), std::string::npos) << cs[1].comparison->decision;
}

// The leader (chosen by A/B) scores 0.2, below the reference's 0.5 and a backup's 0.45: the summary says which
// kernel scores higher and why, and the chart's leader line ends at the leader's own dot, not at the best score.
TEST(UserView, ALeaderScoringBelowABackupIsExplainedAndChartedAsTheLeader) {
  Fixture f;
  AbEvaluator ev;
  Hive h(f.task, Backend::cpu,
         agents(std::make_unique<ListAgent>(
             std::vector<std::string>{"solo=0.9 ab=0.3 score=0.2", "solo=0.7 ab=0.02 score=0.45"})),
         ev, f.opts());
  h.run();
  const std::string sum = summary_text(f.dir / "run");
  EXPECT_NE(sum.find("leader c0001"), std::string::npos) << sum;
  EXPECT_NE(sum.find("note: c0000 (reference) has a higher task score than the leader (0.500 vs 0.200)"),
            std::string::npos)
      << sum;
  EXPECT_NE(sum.find("the leader is chosen by interleaved A/B runs"), std::string::npos) << sum;

  const std::string html = report_html(f.dir / "run");
  // The black path: M x0,y0 L x1,y0 L x1,y1 ... L xend,ylast. Its last vertex before the horizontal run to the
  // right edge is the current leader's point, which must be that leader's own dot.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(html, m, std::regex("<path d='([^']*)' fill='none' stroke='#000'")));
  std::vector<std::pair<double, double>> pts;
  const std::string d = m[1].str();
  std::regex num("([0-9.]+),([0-9.]+)");
  for (auto it = std::sregex_iterator(d.begin(), d.end(), num); it != std::sregex_iterator(); ++it)
    pts.push_back({std::stod((*it)[1].str()), std::stod((*it)[2].str())});
  ASSERT_GE(pts.size(), 3u);
  const auto leader_pt = pts[pts.size() - 2];
  bool dot = false;
  const std::string circle = fmt::format("<circle cx='{:.1f}' cy='{:.1f}'", leader_pt.first, leader_pt.second);
  dot = html.find(circle) != std::string::npos;
  EXPECT_TRUE(dot) << "no accepted kernel's dot at the leader line's end " << circle;
  // And that dot is the lower score (0.2), below the reference's (0.5): y grows downwards.
  EXPECT_GT(leader_pt.second, pts.front().second);
}

// The summary's slot line says how busy the device was and how many evaluations it ran per minute of the run
// (issue 23: a search that keeps the GPU busy reports both).
TEST(UserView, SummarySaysSlotBusyShareAndEvaluationsPerMinute) {
  struct SlotEvaluator : AbEvaluator {
    std::vector<SlotUsage> slot_usage() const override { return {{"cuda:0", 1.5, 3}}; }
  };
  Fixture f;
  SlotEvaluator ev;
  Hive h(f.task, Backend::cpu, agents(std::make_unique<ListAgent>(std::vector<std::string>{"solo=0.5 ab=0.5"})), ev,
         f.opts());
  h.run();
  const std::string sum = summary_text(f.dir / "run");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      sum, m,
      std::regex(R"(device slot cuda:0: busy 1\.5 s of ([0-9.]+) s \([0-9]+%\), 3 runs \(([0-9.]+) per minute\))")))
      << sum;
  // The rate is over the run's recorded wall time (the line shows it rounded to 0.1 s).
  auto wall = RunStore(f.dir / "run" / "run.db").meta("wall_s");
  ASSERT_TRUE(wall);
  const double rate = std::stod(m[2].str()), expect = 180 / std::stod(*wall);
  EXPECT_NEAR(rate, expect, 0.05 + expect * 1e-3) << sum;
  EXPECT_NEAR(std::stod(m[1].str()), std::stod(*wall), 0.05) << sum;
}

TEST(UserView, DeferredSummaryCountsNothingPendingAsEvaluated) {
  Fixture f;
  AbEvaluator ev;
  auto o = f.opts();
  o.defer_eval = true;
  Hive h(f.task, Backend::cpu, agents(std::make_unique<ListAgent>(std::vector<std::string>{"solo=0.5 ab=0.5"})), ev, o);
  h.run();
  const std::string sum = summary_text(f.dir / "run");
  EXPECT_NE(sum.find("0 candidates evaluated (leader 0, backup 0, rejected 0, error 0)"), std::string::npos) << sum;
  EXPECT_NE(sum.find("pending: 1 candidate and the reference built here"), std::string::npos) << sum;
}

TEST(UserView, AnAgentWhoseProviderFailsStopsAndSaysWhy) {
  Fixture f;
  AbEvaluator ev;
  auto down = std::make_unique<DownAgent>();
  DownAgent* d = down.get();
  Hive h(f.task, Backend::cpu, agents(std::move(down)), ev, f.opts());
  auto r = h.run();
  EXPECT_EQ(d->asked, 1) << "no strategy switch can help an agent whose provider is down";
  EXPECT_TRUE(r.status.all_agents_failed());
  EXPECT_EQ(r.status.stop_reason, "every agent failed: its model provider could not be used");
  bool said = false;
  for (const auto& l : f.lines)
    said = said || l.find("a0 (llm:down) stopped: its model provider failed 3 times") != std::string::npos;
  EXPECT_TRUE(said);
  const std::string sum = summary_text(f.dir / "run");
  EXPECT_NE(
      sum.find(
          "agent a0 (llm:down) failed: its model provider failed 3 times in a row; last: provider http://127.0.0.1:9"),
      std::string::npos)
      << sum;
}

TEST(UserView, AnAgentWithNothingToTrySaysSoAndAnIdleRunEndsAtOnce) {
  Fixture f;
  AbEvaluator ev;
  Hive h(f.task, Backend::cpu, agents(std::make_unique<IdleAgent>()), ev, f.opts());
  auto r = h.run();
  EXPECT_TRUE(r.status.all_agents_failed());
  EXPECT_EQ(ev.prepares.load(), 0) << "the reference is not measured when no agent can work";
  bool said = false;
  for (const auto& l : f.lines)
    said = said || l.find("a0 (tuner) stopped: the tuner has nothing to try for fake") != std::string::npos;
  EXPECT_TRUE(said);
  // With another agent that can work, the run goes on and the idle one is still named.
  Fixture g;
  Hive h2(
      g.task, Backend::cpu,
      agents(std::make_unique<IdleAgent>(), std::make_unique<ListAgent>(std::vector<std::string>{"solo=0.5 ab=0.5"})),
      ev, g.opts());
  auto r2 = h2.run();
  EXPECT_FALSE(r2.status.all_agents_failed());
  EXPECT_NE(summary_text(g.dir / "run").find("agent a0 (tuner) failed: the tuner has nothing to try"),
            std::string::npos);
}

TEST(UserView, ASecondProcessOnTheSameRunDirectoryIsRefused) {
  Fixture f;
  AbEvaluator ev;
  auto o = f.opts();
  std::mutex mu;
  std::string phase;  // what the progress line shows for a0 while its candidate is evaluated
  o.on_update = [&](const HiveStatus& s) {
    std::lock_guard<std::mutex> lk(mu);
    if (!s.agents.empty() && !s.agents[0].phase.empty()) phase = s.agents[0].phase;
  };
  Hive first(f.task, Backend::cpu, agents(std::make_unique<ListAgent>(std::vector<std::string>{"block"})), ev, o);
  std::thread t([&] { first.run(); });
  while (!ev.blocking) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the hive updates its progress every second
  {
    std::lock_guard<std::mutex> lk(mu);
    EXPECT_EQ(phase, "evaluating c0001") << "the progress line says what the agent waits for";
  }
  auto o2 = o;
  o2.resume = true;
  Hive second(f.task, Backend::cpu, agents(std::make_unique<ListAgent>(std::vector<std::string>{"solo=0.1"})), ev, o2);
  try {
    second.run();
    ADD_FAILURE() << "the second hive on a busy run directory must throw";
  } catch (const DirLockBusy& e) {
    EXPECT_NE(std::string(e.what()).find("is in use by another khive"), std::string::npos) << e.what();
  }
  ev.release();
  t.join();
  RunStore db(o.run_dir / "run.db");
  EXPECT_EQ(db.candidates().size(), 2u) << "the first run's records are whole; the second added nothing";
}

TEST(UserView, ARunDatabaseFromBeforeComparisonsStillOpens) {
  Fixture f;
  const fs::path file = f.dir / "old.db";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
  const char* old_schema =
      "CREATE TABLE candidates (id TEXT PRIMARY KEY, seq INTEGER NOT NULL, hash TEXT NOT NULL, agent TEXT, strategy "
      "TEXT, parent TEXT, "
      "label TEXT, ext TEXT, note TEXT, source TEXT, params TEXT, file TEXT, verdict TEXT, check_name TEXT, reason "
      "TEXT, message TEXT, "
      "diagnosis TEXT, score REAL, time_s REAL, delta REAL, workloads TEXT, t REAL, eval_s REAL);"
      "INSERT INTO candidates VALUES('c0001', 1, 'h', 'a0', 's', '', 'k', 'cpp', '', 'src', '{}', 'f', 'backup', '', "
      "'', '', '', 0.4, "
      "0.5, 0.03, '{}', 1.0, 2.0);";
  ASSERT_EQ(sqlite3_exec(db, old_schema, nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  RunStore store(file);
  auto cs = store.candidates();
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].standing, Standing::backup);
  EXPECT_NEAR(cs[0].delta, 0.03, 1e-12);
  EXPECT_FALSE(cs[0].comparison);
  CandidateRecord c = cs[0];
  c.comparison = Comparison{"c0000", "medians", 0.03, "no A/B was run: the own-run medians", {}, ""};
  store.put_candidate(c);
  ASSERT_TRUE(store.candidates()[0].comparison);
  EXPECT_EQ(comparison_brief(*store.candidates()[0].comparison), "own-run medians vs c0000: +3.0%");
}
