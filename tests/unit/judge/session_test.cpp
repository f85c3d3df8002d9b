// The judge's checks 2-9 and 11 against scripted executors (judge/executor.hpp): the session as khive-judge runs it,
// on the CPU judge device, with the real goldens, inputs, poisons and rules, but each executor a few lines of C++ in
// this process that computes vector_add honestly or cheats in one way: crashes, answers with the wrong number of
// times, mutates an input, leaves an output unwritten, is wrong, is nondeterministic, caches, is right only while it
// is not timed, or hides its time. Milliseconds per check of outputs (a second or two per timed one), no process,
// no compiler.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <map>

#include "khive/judge/arena.hpp"
#include "khive/judge/device.hpp"
#include "khive/judge/executor.hpp"
#include "khive/judge/session.hpp"
#include "khive/support/files.hpp"

namespace khive {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// One call as a script sees it: the set's inputs a, b and output c in the view the executor was given (a kernel's:
// inputs and outputs; the reference's: its copy of the inputs and the goldens), and how many calls came before.
struct ScriptedCall {
  const Arena& arena;
  int set;
  bool reference_view;
  int index;
  const float* a() const {
    return reinterpret_cast<const float*>(reference_view ? arena.ref_input(set, 0) : arena.input(set, 0));
  }
  const float* b() const {
    return reinterpret_cast<const float*>(reference_view ? arena.ref_input(set, 1) : arena.input(set, 1));
  }
  float* c() const { return reinterpret_cast<float*>(reference_view ? arena.golden(set, 0) : arena.output(set, 0)); }
  int64_t n() const { return arena.n_out(0); }
  void add() const {
    for (int64_t i = 0; i < n(); ++i) c()[i] = a()[i] + b()[i];
  }
};

struct Script {
  std::function<void(const ScriptedCall&)> run = [](const ScriptedCall& c) { c.add(); };
  // Time per call beyond the work (a slower kernel, or one hiding its time), added to what the call reports rather
  // than slept: a sleep overshoots by tens of microseconds to milliseconds on a loaded machine, and check 11's test
  // of two equal kernels then called one of them faster about once in a hundred runs.
  double extra_s = 0;
  double reported_scale = 1;  // what it says of its own time per call, as a fraction of the truth
  int times_missing = 0;      // answers with this many fewer times of its own than calls
  bool crash_on_first_call = false;
};

class ScriptedExecutor : public Executor {
 public:
  ScriptedExecutor(std::string role, Script script) : role_(std::move(role)), script_(std::move(script)) {}
  const nlohmann::json& sandbox() const override { return sandbox_; }
  void note_sandbox(const std::string& layer, const std::string& note) override { sandbox_[layer] = note; }
  const std::string& role() const override { return role_; }
  bool loaded() const override { return loaded_; }
  void share(const Arena& arena, bool goldens) override { arena_ = &arena, reference_view_ = goldens; }
  void share(const nlohmann::json&, const nlohmann::json&, const std::vector<int>&) override {
    throw std::logic_error("staged shares are a GPU judge's");
  }
  void share_gate(SharedRegion&) override { throw std::logic_error("the gate is a GPU judge's"); }
  Overhead calibrate_batch(int, int exchanges, const std::function<void()>& before) override {
    std::vector<double> t;
    for (int i = 0; i < exchanges; ++i) {
      before();
      const auto t0 = Clock::now();
      t.push_back(since(t0));
    }
    return Overhead::of(t);
  }
  void load() override { loaded_ = true; }
  Exchange call(const std::vector<Call>& calls, uint32_t, const std::function<void()>&) override {
    if (script_.crash_on_first_call)
      throw ExecutorFault(Reason::crash, "the " + role_ + " executor was killed by SIGSEGV");
    Exchange x;
    const auto t0 = Clock::now();
    for (const auto& c : calls) {
      const auto tc = Clock::now();
      script_.run(ScriptedCall{*arena_, c.set, reference_view_, calls_++});
      x.in_process_s.push_back((since(tc) + script_.extra_s) * script_.reported_scale);
    }
    for (int i = 0; i < script_.times_missing && !x.in_process_s.empty(); ++i) x.in_process_s.pop_back();
    x.judge_s = since(t0) + script_.extra_s * static_cast<double>(calls.size());
    return x;
  }
  Exchange null_gated(int, uint32_t, const nlohmann::json&, const std::function<void()>&) override {
    throw std::logic_error("the gate is a GPU judge's");
  }
  void finish() override {}
  std::string log_tail(std::size_t) const override { return "scripted " + role_; }

 private:
  std::string role_;
  Script script_;
  nlohmann::json sandbox_ = {{"scripted", true}};
  const Arena* arena_ = nullptr;
  bool reference_view_ = false;
  bool loaded_ = false;
  int calls_ = 0;
};

// The CPU judge device as on a kernel that cannot seal a memfd (or a GPU): the executors could write the inputs, so the
// judge hashes them around every call (check 3). Everything else is the CPU device's.
class UnsealedRegion : public SharedRegion {
 public:
  explicit UnsealedRegion(std::unique_ptr<SharedRegion> r) : r_(std::move(r)) {
    ptr_ = r_->ptr(), bytes_ = r_->bytes();
  }
  int share() override { return r_->share(); }
  bool seal_against_writes() override { return false; }

 private:
  std::unique_ptr<SharedRegion> r_;
};
class UnsealedCpuDevice : public JudgeDevice {
 public:
  std::string backend() const override { return d_->backend(); }
  nlohmann::json preflight() override { return d_->preflight(); }
  std::unique_ptr<SharedRegion> region(std::size_t bytes) override {
    return std::make_unique<UnsealedRegion>(d_->region(bytes));
  }
  std::size_t memory_budget() override { return budget ? budget : d_->memory_budget(); }
  void* alloc(std::size_t bytes) override { return d_->alloc(bytes); }
  void release(void* p) override { d_->release(p); }
  void to_host(void* host, const void* dev, std::size_t bytes) override { d_->to_host(host, dev, bytes); }
  void from_host(void* dev, const void* host, std::size_t bytes) override { d_->from_host(dev, host, bytes); }
  void copy(void* dst, const void* src, std::size_t bytes) override { d_->copy(dst, src, bytes); }
  void fill(DType t, void* p, int64_t n, const DistParams& d, const InputDraw& s, uint64_t tensor) override {
    d_->fill(t, p, n, d, s, tensor);
  }
  void poison(DType t, void* p, int64_t n, Poison which) override { d_->poison(t, p, n, which); }
  uint64_t checksum(const void* p, std::size_t bytes) override { return d_->checksum(p, bytes); }
  void gather_sample(DType t, const void* out, int64_t n, uint64_t key, int64_t count, void* host_dst) override {
    d_->gather_sample(t, out, n, key, count, host_dst);
  }
  CompareStats compare(DType t, const void* out, const void* ref, bool on_device, int64_t n, int64_t cols,
                       const Tolerance& tol, Poison p) override {
    return d_->compare(t, out, ref, on_device, n, cols, tol, p);
  }
  void flush(const std::vector<Region>& touched) override { d_->flush(touched); }
  double drain(double timeout_s) override { return d_->drain(timeout_s); }
  void synchronize() override { d_->synchronize(); }

  std::size_t budget = 0;  // bytes of arena the judge may plan with (0: the CPU device's)

 private:
  std::unique_ptr<JudgeDevice> d_ = make_cpu_judge_device();
};

class SessionChecks : public ::testing::Test {
 protected:
  void SetUp() override {
    // vector_add with a perf workload of 8K elements (the task's own are 1M-16M: the judge's fills and comparisons
    // would take seconds per timed test).
    goldens_ = make_temp_dir(fs::temp_directory_path(), "khive-session-test");
    const fs::path dir = goldens_ / "vector_add";
    fs::create_directories(dir);
    for (const char* f : {"definition.json", "reference.cpp", "reference.cu"})
      fs::copy_file(fs::path(KHIVE_SOURCE_DIR) / "tasks/demo-cpu/vector_add" / f, dir / f);
    write_file_atomic(dir / "workload.jsonl",
                      R"({"uuid": "vector_add-n7", "axes": {"N": 7}, "khive": {"role": "correctness", "weight": 1}}
{"uuid": "vector_add-n1000", "axes": {"N": 1000}, "khive": {"role": "correctness", "weight": 1}}
{"uuid": "vector_add-n65537", "axes": {"N": 65537}, "khive": {"role": "correctness", "weight": 1}}
{"uuid": "vector_add-n8192", "axes": {"N": 8192}, "khive": {"role": "perf", "weight": 1}}
)");
    task_ = load_task(dir);
    dev_ = make_cpu_judge_device();
    job_.mode = "evaluate";
    job_.backend = "cpu";
    job_.task_dir = task_.dir.string();
    job_.library = "candidate.so";  // names only: the scripted executors load nothing
    job_.reference_library = "reference.so";
    job_.golden_dir = goldens_.string();
    job_.input_secret = std::string(64, '7');
    job_.seeds = 2;
    job_.only_workloads = {"vector_add-n7", "vector_add-n1000", "vector_add-n65537"};
    job_.time = false;
  }
  void TearDown() override { fs::remove_all(goldens_); }

  // Checks 8-9 (and 11 with a leader) on one perf workload, briefly.
  void timed() {
    job_.only_workloads = {"vector_add-n7", "vector_add-n8192"};
    job_.time = true;
    job_.timing = TimingPlan{2, 10, 40, 0.05, 0.3, 2e-3, 8};
    job_.ab_min_pairs = 20;
  }

  JudgeResult run(const Script& candidate, std::optional<Script> leader = std::nullopt) {
    if (leader) job_.leader_library = "leader.so";
    std::map<std::string, Script> scripts = {{"candidate", candidate}, {"reference", Script{}}};
    if (leader) scripts["leader"] = *leader;
    Session s(
        *dev_, task_, job_, [this](Check c, const std::string&, const std::string&) { phase_ = c; },
        [scripts](const ExecutorSpec& spec, JudgeDevice&) -> std::unique_ptr<Executor> {
          return std::make_unique<ScriptedExecutor>(spec.role, scripts.at(spec.role));
        });
    return s.run();
  }
  static void expect_rejected(const JudgeResult& r, Check check, Reason reason) {
    ASSERT_TRUE(r.error.empty()) << r.error;
    ASSERT_TRUE(r.rejection) << "accepted";
    EXPECT_EQ(r.rejection->check, check) << r.rejection->message;
    EXPECT_EQ(r.rejection->reason, reason) << reason_name(r.rejection->reason) << ": " << r.rejection->message;
  }

  Task task_;
  std::unique_ptr<JudgeDevice> dev_;
  fs::path goldens_;
  Job job_;
  Check phase_ = Check::preflight;  // what the session last said it was doing (its progress)
};

TEST_F(SessionChecks, AnHonestKernelIsAccepted) {
  const JudgeResult r = run(Script{});
  EXPECT_TRUE(r.accepted()) << (r.rejection ? r.rejection->message : r.error);
  // per workload: 2 seeds, the repeat, check 7's three variants (no zero-mean draw: vector_add names its inputs'
  // distributions; Check5RightOnlyOnPositiveMeanData has one)
  EXPECT_EQ(r.correctness_calls, 3 * (2 + 1 + 3));
  EXPECT_EQ(r.preflight.at("sandbox").at("candidate").at("scripted"), true);
}

TEST_F(SessionChecks, Check2ACrashAndAnAnswerOfTheWrongShape) {
  Script crash;
  crash.crash_on_first_call = true;
  expect_rejected(run(crash), Check::run, Reason::crash);
  Script short_answer;
  short_answer.times_missing = 1;  // one call, no time of its own
  expect_rejected(run(short_answer), Check::run, Reason::protocol_violation);
}

TEST_F(SessionChecks, Check3AnInputWrittenTo) {
  Script s;
  s.run = [](const ScriptedCall& c) {
    c.add();
    const_cast<float*>(c.a())[0] += 1;
  };
  // Where inputs cannot be sealed (the judge hashes them around each call): check 3.
  dev_ = std::make_unique<UnsealedCpuDevice>();
  expect_rejected(run(s), Check::inputs, Reason::input_mutated);
  // Sealed (the CPU device: an executor's mapping cannot write them, so there is nothing to hash), a write only the
  // judge's own mapping could make is still no way through: the repeated call sees other inputs (check 6).
  dev_ = make_cpu_judge_device();
  expect_rejected(run(s), Check::determinism, Reason::nondeterministic);
}

TEST_F(SessionChecks, Check4AnOutputLeftUnwritten) {
  Script s;
  s.run = [](const ScriptedCall& c) {
    for (int64_t i = 0; i + 1 < c.n(); ++i) c.c()[i] = c.a()[i] + c.b()[i];  // all but the last element
  };
  expect_rejected(run(s), Check::written, Reason::unwritten_output);
}

TEST_F(SessionChecks, Check5AWrongOutput) {
  Script s;
  s.run = [](const ScriptedCall& c) {
    c.add();
    c.c()[c.n() / 2] += 1e-3f;  // one element, far beyond atol = rtol = 1e-6
  };
  expect_rejected(run(s), Check::correctness, Reason::wrong_output);
}

TEST_F(SessionChecks, Check5RightOnlyOnPositiveMeanData) {
  // Right on every draw with the default distribution's mean 0.5 (vector_add's own distributions taken away), wrong
  // where the data is centred: the kind of kernel a sum over K of products hides (all positive, every activation
  // saturated). The zero-mean draw after check 7 finds it; workloads of 1000+ elements, so no mean-0.5 draw comes
  // near 0.25.
  task_.distributions.clear();
  job_.only_workloads = {"vector_add-n1000", "vector_add-n65537"};
  Script s;
  s.run = [](const ScriptedCall& c) {
    double mean = 0;
    for (int64_t i = 0; i < c.n(); ++i) mean += c.a()[i];
    c.add();
    if (mean / static_cast<double>(c.n()) < 0.25) c.c()[0] += 1;
  };
  const JudgeResult r = run(s);
  expect_rejected(r, Check::correctness, Reason::wrong_output);
  EXPECT_NE(r.rejection->message.find("zero-mean inputs"), std::string::npos) << r.rejection->message;
  // With the task's own distribution for a (mean 0.5), a's draw stays where the task puts it and b's alone is
  // centred: the same kernel is right everywhere, and accepted.
  Distribution d;
  d.mean = 0.5;
  task_.distributions["a"] = d;
  job_.golden_dir = (goldens_ / "a-named").string();  // (goldens are kept per definition; this one changed in memory)
  const JudgeResult ok = run(s);
  EXPECT_TRUE(ok.error.empty()) << ok.error;
  EXPECT_FALSE(ok.rejection) << ok.rejection->message;
  EXPECT_EQ(ok.correctness_calls, 2 * (2 + 1 + 3 + 1));  // the zero-mean draw is one more call per workload
}

TEST_F(SessionChecks, Check6ADifferentAnswerToTheSameInputs) {
  Script s;
  s.run = [](const ScriptedCall& c) {
    c.add();
    if (c.index == 1) c.c()[0] += 1;  // the repeated call of the first seed
  };
  expect_rejected(run(s), Check::determinism, Reason::nondeterministic);
}

TEST_F(SessionChecks, Check7AnAnswerCachedByTheFirstElement) {
  // Right for every new input set, but a call whose first input element it has seen gets the answer it gave then:
  // check 7's "a few elements changed at the same addresses" keeps the first element and changes later ones.
  auto cache = std::make_shared<std::map<float, std::vector<float>>>();
  Script s;
  s.run = [cache](const ScriptedCall& c) {
    auto it = cache->find(c.a()[0]);
    if (it != cache->end() && static_cast<int64_t>(it->second.size()) == c.n()) {
      std::copy(it->second.begin(), it->second.end(), c.c());
      return;
    }
    c.add();
    (*cache)[c.a()[0]] = std::vector<float>(c.c(), c.c() + c.n());
  };
  expect_rejected(run(s), Check::anti_caching, Reason::caching);
}

TEST_F(SessionChecks, Check9RightOnlyWhileNotTimed) {
  timed();
  Script s;
  s.run = [this](const ScriptedCall& c) {
    c.add();
    if (phase_ == Check::timing) c.c()[0] = 0;  // skips work once the judge says it is timing
  };
  expect_rejected(run(s), Check::timed_outputs, Reason::timed_output_wrong);
}

TEST_F(SessionChecks, Check8TimeHiddenFromItsOwnClock) {
  timed();
  Script s;
  s.extra_s = 25e-3;        // 25 ms per call beyond its work (the CPU rule's floor is 20 ms) ...
  s.reported_scale = 1e-3;  // ... that its own clock does not report
  expect_rejected(run(s), Check::timing, Reason::timing_disagrees);
}

TEST_F(SessionChecks, TimingsComeFromTheJudgesClock) {
  timed();
  Script s;
  s.reported_scale = 1e-3;  // it claims to be 1000x faster than it is; the samples do not believe it
  const JudgeResult r = run(s);
  ASSERT_TRUE(r.accepted()) << (r.rejection ? r.rejection->message : r.error);
  ASSERT_EQ(r.timing.size(), 1u);
  const TimingRecord& t = r.timing[0];
  EXPECT_EQ(t.workload, "vector_add-n8192");
  ASSERT_FALSE(t.samples_s.empty());
  EXPECT_EQ(t.samples_s.size(), t.in_process_s.size());
  EXPECT_EQ(t.clock, "exchange");
  for (std::size_t i = 0; i < t.samples_s.size(); ++i) EXPECT_GT(t.samples_s[i], 10 * t.in_process_s[i]) << i;
  EXPECT_GE(t.validated, static_cast<int64_t>(t.samples_s.size()));
}

TEST_F(SessionChecks, Check11AClearlyFasterCandidateLeadsAndAnEqualOneDoesNot) {
  timed();
  job_.timing.time_cap_s =
      1;  // room for check 11's 20 pairs on a loaded machine (the pairs stop at their noise target)
  Script fast, slow;
  slow.extra_s = 2e-3;  // the leader spends 2 ms more per call
  JudgeResult r = run(fast, slow);
  ASSERT_TRUE(r.accepted()) << (r.rejection ? r.rejection->message : r.error);
  ASSERT_TRUE(r.ab_decision);
  EXPECT_TRUE(r.ab_decision->new_leader) << r.ab_decision->why;
  ASSERT_EQ(r.ab.size(), 1u);
  EXPECT_TRUE(r.ab[0].faster);
  EXPECT_GE(r.ab[0].pairs, 20u);
  Script same = slow;
  r = run(slow, same);  // the same kernel on both sides
  ASSERT_TRUE(r.ab_decision);
  EXPECT_FALSE(r.ab_decision->new_leader) << r.ab_decision->why;
  // And a slower candidate is vetoed.
  r = run(slow, fast);
  ASSERT_TRUE(r.ab_decision);
  EXPECT_FALSE(r.ab_decision->new_leader);
  EXPECT_TRUE(r.ab[0].slower);
}

TEST_F(SessionChecks, WarmUpCallsGoInBatchesOfWhatFitsInMemory) {
  // A workload of which fewer sets fit than there are warm-up calls (a 26 GB elementwise set on an 80 GB H100): the
  // warm-up takes as many sets as fit and runs its calls in batches of that many, each still validated.
  timed();
  job_.timing.warmup = 3;
  auto d = std::make_unique<UnsealedCpuDevice>();
  d->budget = 1;  // less than one set: one at a time
  dev_ = std::move(d);
  auto widest = std::make_shared<int>(0);
  auto calls = std::make_shared<int>(0);
  Script s;
  s.run = [widest, calls](const ScriptedCall& c) {
    c.add();
    *widest = std::max(*widest, c.arena.sets());
    ++*calls;
  };
  const JudgeResult r = run(s);
  ASSERT_TRUE(r.accepted()) << (r.rejection ? r.rejection->message : r.error);
  EXPECT_LE(*widest, 2) << "no arena wider than correctness's pair (the warm-up's was 3 sets before)";
  ASSERT_FALSE(r.timing.empty());
  EXPECT_EQ(r.timing[0].batch, 1);
  // And a warm-up that wrote nothing is still caught on its one-set batches.
  Script lazy;
  lazy.run = [](const ScriptedCall& c) {
    if (c.arena.sets() > 1) c.add();  // correctness's pairs pass; the one-set warm-up's outputs stay unwritten
  };
  expect_rejected(run(lazy), Check::timed_outputs, Reason::timed_output_wrong);
}

// No correctness workload on this backend (a KernelBench import too large for the CPU has all of its marked cuda):
// nothing would check the kernel, so there is no verdict, only the reason naming the file and the field.
TEST_F(SessionChecks, NothingToCheckTheKernelOnIsAHarnessErrorNotAnAcceptance) {
  job_.only_workloads = {"vector_add-n8192"};
  const JudgeResult r = run(Script{});
  EXPECT_FALSE(r.accepted());
  EXPECT_FALSE(r.rejection);
  EXPECT_NE(r.error.find("workload.jsonl: khive.backends: expected a correctness workload that runs on cpu"),
            std::string::npos)
      << r.error;
  EXPECT_EQ(r.correctness_calls, 0);
}

TEST_F(SessionChecks, AFailingReferenceIsAHarnessErrorNotAVerdict) {
  std::map<std::string, Script> scripts;
  Script broken;
  broken.crash_on_first_call = true;
  Session s(
      *dev_, task_, job_, [](Check, const std::string&, const std::string&) {},
      [broken](const ExecutorSpec& spec, JudgeDevice&) -> std::unique_ptr<Executor> {
        return std::make_unique<ScriptedExecutor>(spec.role, spec.role == "reference" ? broken : Script{});
      });
  const JudgeResult r = s.run();
  EXPECT_FALSE(r.rejection);
  EXPECT_NE(r.error.find("the task's reference failed"), std::string::npos) << r.error;
}

}  // namespace
}  // namespace khive
