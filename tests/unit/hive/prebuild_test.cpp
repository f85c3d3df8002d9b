// Speculative builds (hive/prebuild.hpp): the queue's rules with a scripted evaluator (no compiler), and the hive
// building what an agent peeks while its proposal is judged.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "khive/hive/hive.hpp"
#include "khive/hive/prebuild.hpp"
#include "khive/record/report.hpp"
#include "khive/record/store.hpp"
#include "khive/support/files.hpp"

namespace fs = std::filesystem;
using namespace khive;

namespace {

// Builds nothing: records each text it is asked to prebuild (its key is "k:" + text); `hold` makes builds wait
// until released or cancelled.
class ScriptedBuilds : public Evaluator {
 public:
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> built;  // texts, in the order their builds started
  std::map<std::string, int> evaluated;
  bool hold = false, released = false;
  int wait_for_next = 0;  // evaluate("pN") for N < this waits until "pN+1" was built ahead (HivePrebuild)
  std::atomic<int> running{0};

  Evaluation prepare(const fs::path& ref) override { return accepted(read_file(ref), 1.0); }
  Evaluation evaluate(const fs::path& src, const std::optional<fs::path>&) override {
    const std::string s = read_file(src);
    std::unique_lock<std::mutex> lk(mu);
    ++evaluated[s];
    // The hive offers pN's successor before it judges pN: the verdict waits (at most 5 s) until that one was built
    // ahead, so the test does not depend on how fast the worker threads get a core.
    if (wait_for_next && s.size() > 1 && s[0] == 'p' && std::stoi(s.substr(1)) < wait_for_next) {
      const std::string next = "p" + std::to_string(std::stoi(s.substr(1)) + 1);
      cv.wait_for(lk, std::chrono::seconds(5),
                  [&] { return std::find(built.begin(), built.end(), next) != built.end() && running == 0; });
    }
    return accepted(s, 2.0);  // never faster: the leader stays, so what was peeked is what comes next
  }
  Prebuilt prebuild(const fs::path& source, const std::atomic<bool>* cancel) override {
    const std::string s = read_file(source);
    {
      std::unique_lock<std::mutex> lk(mu);
      built.push_back(s);
      ++running;
      cv.notify_all();
      while (hold && !released && !cancel->load()) cv.wait_for(lk, std::chrono::milliseconds(5));
      --running;
      cv.notify_all();
    }
    Prebuilt p;
    p.built = true;
    p.cancelled = cancel->load() && hold && !released;
    p.ok = !p.cancelled;
    p.key = "k:" + s;
    p.seconds = 0.5;
    return p;
  }
  static Evaluation accepted(const std::string& s, double t) {
    Evaluation e;
    e.status = EvalStatus::accepted;
    e.time_s = t;
    e.workload_median_s = {{"w", t}};
    e.build_key = "k:" + s;
    e.beats_leader = false;
    return e;
  }
  void release() {
    std::lock_guard<std::mutex> lk(mu);
    released = true;
    cv.notify_all();
  }
  bool wait_running(int n) {
    std::unique_lock<std::mutex> lk(mu);
    return cv.wait_for(lk, std::chrono::seconds(5), [&] { return running.load() >= n; });
  }
};

struct Dir {
  fs::path p = make_temp_dir(fs::temp_directory_path(), "khive-prebuild-test");
  ~Dir() {
    std::error_code ec;
    fs::remove_all(p, ec);
  }
};

}  // namespace

TEST(Prebuilder, BuildsEachTextOnceAndCountsTheOnesEvaluatedLater) {
  Dir d;
  ScriptedBuilds ev;
  PrebuildStats st;
  {
    Prebuilder pb(ev, d.p / "scratch", 2);
    EXPECT_TRUE(pb.enabled());
    pb.offer("h1", "cpp", "one");
    pb.offer("h2", "cpp", "two");
    pb.offer("h1", "cpp", "one");  // offered before: ignored
    for (int i = 0; i < 1000 && pb.stats().built < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    pb.used("k:two");
    pb.used("k:two");    // counted once
    pb.used("k:other");  // not built here
    pb.stop();
    st = pb.stats();
  }
  EXPECT_EQ(st.jobs, 2);
  EXPECT_EQ(st.offered, 2);
  EXPECT_EQ(st.built, 2);
  EXPECT_EQ(st.used, 1);
  EXPECT_DOUBLE_EQ(st.compile_s, 1.0);
  EXPECT_EQ(st.dropped, 0);
  EXPECT_FALSE(fs::exists(d.p / "scratch")) << "the scratch texts are removed";
  const auto j = st.to_json();
  EXPECT_EQ(j.at("built"), 2);
  EXPECT_EQ(j.at("used"), 1);
}

TEST(Prebuilder, OffIgnoresOffers) {
  Dir d;
  ScriptedBuilds ev;
  Prebuilder pb(ev, d.p / "scratch", 0);
  EXPECT_FALSE(pb.enabled());
  pb.offer("h", "cpp", "x");
  pb.stop();
  EXPECT_TRUE(ev.built.empty());
  EXPECT_EQ(pb.stats().offered, 0);
  EXPECT_FALSE(fs::exists(d.p / "scratch"));
}

// One build at a time, held: the newest offer is built next, the queue keeps at most max_queue (the oldest drop), and
// stop() kills what is compiling (cancelled, not counted as built) and drops the rest, without waiting for it.
TEST(Prebuilder, NewestFirstBoundedQueueAndStopCancels) {
  Dir d;
  ScriptedBuilds ev;
  ev.hold = true;
  Prebuilder pb(ev, d.p / "scratch", 1, 2);
  pb.offer("a", "cpp", "a");
  ASSERT_TRUE(ev.wait_running(1));  // "a" is compiling
  pb.offer("b", "cpp", "b");
  pb.offer("c", "cpp", "c");
  pb.offer("e", "cpp", "e");  // the queue holds 2: "b" (the oldest) drops
  EXPECT_EQ(pb.stats().dropped, 1);
  {
    std::lock_guard<std::mutex> lk(ev.mu);
    ev.released = true;  // "a" ends; then "e", newest first, then "c"
    ev.cv.notify_all();
  }
  for (int i = 0; i < 1000 && pb.stats().built < 3; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(ev.built, (std::vector<std::string>{"a", "e", "c"}));
  {
    std::lock_guard<std::mutex> lk(ev.mu);
    ev.released = false;  // the next build is held again, until stop() cancels it
  }
  pb.offer("f", "cpp", "f");
  ASSERT_TRUE(ev.wait_running(1));
  pb.offer("g", "cpp", "g");  // queued behind "f"
  const auto t0 = std::chrono::steady_clock::now();
  pb.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  const auto st = pb.stats();
  EXPECT_EQ(st.built, 3);
  EXPECT_EQ(st.cancelled, 1);
  EXPECT_EQ(st.dropped, 2);   // "b", and "g" left in the queue at the end
  pb.offer("h", "cpp", "h");  // after stop: ignored
  EXPECT_EQ(pb.stats().offered, 6);
}

TEST(Prebuilder, DefaultJobsAreTheSpareCoresOnCudaAndNoneOnCpu) {
  EXPECT_EQ(default_prebuild_jobs(Backend::cpu, 2, 16), 0);
  EXPECT_EQ(default_prebuild_jobs(Backend::cuda, 4, 16), 8);  // 16 - 4 agents - 2, at most 8
  EXPECT_EQ(default_prebuild_jobs(Backend::cuda, 4, 10), 4);
  EXPECT_EQ(default_prebuild_jobs(Backend::cuda, 2, 2), 0);  // this 2-core machine: none
}

namespace {

// Proposes "p1", "p2", ... in order and peeks the next two; never faster than the reference.
class CountingAgent : public Agent {
 public:
  int next = 1, last = 6;
  std::string kind() const override { return "counting"; }
  std::vector<Strategy> strategies(const Task&, Backend) const override { return {{"count.up", "one more"}}; }
  std::optional<Proposal> propose(const AgentContext& ctx) override {
    if (ctx.stopping() || next > last) return std::nullopt;
    return text(next++);
  }
  std::vector<Proposal> peek(const AgentContext&, std::size_t n) override {
    std::vector<Proposal> out;
    for (int i = next; i <= last && out.size() < n; ++i) out.push_back(text(i));
    return out;
  }
  std::optional<BoardEntry> observe(const AgentContext&, const Proposal&, const Outcome&) override {
    return std::nullopt;
  }
  static Proposal text(int i) {
    Proposal p;
    p.source = "p" + std::to_string(i);
    p.ext = "cpp";
    p.label = "p" + std::to_string(i);
    return p;
  }
};

Task toy_task(const fs::path& dir) {
  Task t;
  t.name = "toy";
  t.dir = dir;
  fs::create_directories(dir);
  t.reference_cpu = dir / "reference.cpp";
  write_file_atomic(*t.reference_cpu, "ref");
  t.hash = "toyhash";
  return t;
}

}  // namespace

// The hive: while each proposal is judged, the agent's next two are built ahead; every later proposal was built
// before it was evaluated, and the summary says how many were used.
TEST(HivePrebuild, WhatTheAgentPeeksIsBuiltBeforeItIsProposed) {
  Dir d;
  const Task task = toy_task(d.p / "task");
  ScriptedBuilds ev;
  ev.wait_for_next = 6;  // CountingAgent's last
  HiveOptions o;
  o.run_dir = d.p / "run";
  o.budget_candidates = 6;
  o.prebuild_jobs = 2;
  std::vector<std::unique_ptr<Agent>> agents;
  agents.push_back(std::make_unique<CountingAgent>());
  Hive h(task, Backend::cpu, std::move(agents), ev, o);
  h.run();
  // p1 is proposed before anything was peeked; p2..p6 were peeked while an earlier one was judged.
  std::set<std::string> built(ev.built.begin(), ev.built.end());
  for (int i = 2; i <= 6; ++i) EXPECT_TRUE(built.count("p" + std::to_string(i))) << "p" << i << " not built ahead";
  EXPECT_FALSE(built.count("p1"));
  EXPECT_EQ(ev.built.size(), built.size()) << "a text was built ahead twice";
  auto meta = RunStore(o.run_dir / "run.db").meta("prebuild");
  ASSERT_TRUE(meta);
  const auto j = nlohmann::json::parse(*meta);
  EXPECT_EQ(j.at("jobs"), 2);
  EXPECT_EQ(j.at("used"), 5);
  const std::string sum = summary_text(o.run_dir);
  EXPECT_NE(sum.find("speculative builds (2 at a time): 5 built ahead (0 failed), 5 of them evaluated later"),
            std::string::npos)
      << sum;
  EXPECT_FALSE(fs::exists(o.run_dir / ".prebuild"));
}

// Off (0 jobs, the CPU default): nothing is built ahead and the summary says nothing about it.
TEST(HivePrebuild, OffBuildsNothingAhead) {
  Dir d;
  const Task task = toy_task(d.p / "task");
  ScriptedBuilds ev;
  HiveOptions o;
  o.run_dir = d.p / "run";
  o.budget_candidates = 3;
  std::vector<std::unique_ptr<Agent>> agents;
  agents.push_back(std::make_unique<CountingAgent>());
  Hive h(task, Backend::cpu, std::move(agents), ev, o);
  h.run();
  EXPECT_TRUE(ev.built.empty());
  EXPECT_FALSE(RunStore(o.run_dir / "run.db").meta("prebuild"));
  EXPECT_EQ(summary_text(o.run_dir).find("speculative"), std::string::npos);
}
