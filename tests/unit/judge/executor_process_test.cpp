// The judge's side of an executor, with a real khive-exec and kernels built by the real builder (CPU backend):
// calls land in memory the judge owns, the inputs cannot be written, every way an executor can fail is one fault,
// and a stopped executor does nothing behind the judge's back.
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <csignal>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "khive/build/builder.hpp"
#include "khive/judge/arena.hpp"
#include "khive/judge/executor_process.hpp"
#include "khive/run/launcher.hpp"

namespace khive {
namespace {

namespace fs = std::filesystem;

struct Fixture : ::testing::Test {
  Task task = load_task(fs::path(KHIVE_SOURCE_DIR) / "tasks/demo-cpu/vector_add");
  std::unique_ptr<JudgeDevice> dev = make_cpu_judge_device();
  fs::path dir = fs::temp_directory_path() / ("khive-exec-test-" + std::to_string(::getpid()));

  void SetUp() override { fs::create_directories(dir); }
  void TearDown() override { fs::remove_all(dir); }

  std::string build(const std::string& name, const std::string& body) {
    fs::path src = dir / (name + ".cpp");
    std::ofstream(src) << "#include <cstdint>\nextern \"C\" void khive_launch(const float* a, const float* b, float* c, int64_t N) {\n"
                       << body << "\n}\n";
    BuildOptions bo;
    bo.backend = Backend::cpu;
    bo.cache_dir = dir / "cache";
    BuildResult r = build_candidate(task, src, bo);
    EXPECT_TRUE(r.ok) << r.log;
    return r.library.string();
  }
  ExecutorSpec spec(const std::string& library, double timeout = 20) {
    ExecutorSpec s;
    s.role = "candidate";
    s.path = default_executor_path().string();
    s.setup.backend = "cpu";
    s.setup.library = library;
    s.timeout_s = timeout;
    return s;
  }
  const Workload& workload(const std::string& uuid) {
    for (const auto& w : task.workloads)
      if (w.uuid == uuid) return w;
    throw std::runtime_error("no workload " + uuid);
  }
  void fill(Arena& a, int set, uint64_t seed) {
    for (std::size_t i = 0; i < task.inputs.size(); ++i)
      dev->fill(task.inputs[i].dtype, a.input(set, i), a.n_in(i), dist_params(task.distribution_for(task.inputs[i].name)), InputSpec{seed}, i);
  }
};

TEST_F(Fixture, CallsComputeIntoTheJudgesMemory) {
  ExecutorProcess ex(spec(build("add", "for (int64_t i = 0; i < N; ++i) c[i] = a[i] + b[i];")), *dev);
  EXPECT_EQ(ex.sandbox().value("seccomp", ""), "allowlist, violations reported to the judge");
  Overhead o = ex.calibrate(10);
  EXPECT_GT(o.median_s, 0);
  ex.load();
  Arena a(*dev, task, workload("vector_add-n1000"), 2);
  EXPECT_TRUE(a.inputs_sealed());
  ex.share(a, false);
  fill(a, 1, 7);
  dev->poison(DType::f32, a.output(1, 0), 1000, Poison::a);
  Exchange x = ex.call({{1, a.scalars(1)}});
  ASSERT_EQ(x.in_process_s.size(), 1u);
  EXPECT_GE(x.judge_s, x.in_process_s[0]);
  auto* in_a = reinterpret_cast<const float*>(a.input(1, 0));
  auto* in_b = reinterpret_cast<const float*>(a.input(1, 1));
  auto* out = reinterpret_cast<const float*>(a.output(1, 0));
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(out[i], in_a[i] + in_b[i]) << i;
  ex.finish();
}

TEST_F(Fixture, InputsAreReadOnlyForTheKernel) {
  ExecutorProcess ex(spec(build("scribble", "const_cast<float*>(b)[0] = 1.0f; for (int64_t i = 0; i < N; ++i) c[i] = a[i];")), *dev);
  ex.load();
  Arena a(*dev, task, workload("vector_add-n1000"), 1);
  ex.share(a, false);
  fill(a, 0, 3);
  try {
    ex.call({{0, a.scalars(0)}});
    FAIL() << "a write into a sealed input must fault";
  } catch (const ExecutorFault& f) {
    EXPECT_EQ(f.reason, Reason::crash);
    EXPECT_NE(std::string(f.what()).find("wrote into its inputs"), std::string::npos) << f.what();
  }
}

TEST_F(Fixture, AHangIsKilledAtTheTimeout) {
  ExecutorProcess ex(spec(build("hang", "volatile int spin = 1; while (spin) {}"), 1.5), *dev);
  ex.load();
  Arena a(*dev, task, workload("vector_add-n1"), 1);
  ex.share(a, false);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    ex.call({{0, a.scalars(0)}});
    FAIL();
  } catch (const ExecutorFault& f) {
    EXPECT_EQ(f.reason, Reason::timeout);
    EXPECT_FALSE(f.external);
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10);
}

TEST_F(Fixture, AnExternalKillIsNotTheKernelsFault) {
  // The kernel spins until "an operator" (this test) SIGKILLs its process from outside.
  ExecutorProcess ex(spec(build("spin", "volatile int spin = 1; while (spin) {}")), *dev);
  ex.load();
  Arena a(*dev, task, workload("vector_add-n1"), 1);
  ex.share(a, false);
  std::thread killer([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    // The executor is this process's only khive-exec child: find it in /proc.
    for (auto& e : fs::directory_iterator("/proc")) {
      std::ifstream st(e.path() / "stat");
      std::string pid, comm, state, ppid;
      if (st >> pid >> comm >> state >> ppid && ppid == std::to_string(::getpid()) && comm == "(khive-exec)") ::kill(std::stoi(pid), SIGKILL);
    }
  });
  try {
    ex.call({{0, a.scalars(0)}});
    killer.join();
    FAIL();
  } catch (const ExecutorFault& f) {
    killer.join();
    EXPECT_TRUE(f.external) << f.what();
  }
}

TEST_F(Fixture, AStaticConstructorThatCrashesIsTheKernelsFault) {
  ExecutorProcess ex(spec(build("ctor", "}\nstatic int boom = [] { *reinterpret_cast<volatile int*>(16) = 1; return 0; }();\nstatic void unused() {")), *dev);
  try {
    ex.load();
    FAIL();
  } catch (const ExecutorFault& f) {
    EXPECT_EQ(f.reason, Reason::crash);
    EXPECT_FALSE(f.before_load);   // its own code ran: a rejection, not a harness error
  }
}

}  // namespace
}  // namespace khive
