// Issue 17's support pieces: the run directory lock (busy, stale), children that die with their parent (the
// guardian), a pending child cancelled at once, pid-tagged temporary folders and the removal of a dead owner's
// leftovers, text repaired to valid UTF-8, the phase a worker thread reports.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>

#include "khive/support/cache.hpp"
#include "khive/support/dir_lock.hpp"
#include "khive/support/files.hpp"
#include "khive/support/phase.hpp"
#include "khive/support/subprocess.hpp"
#include "khive/support/text.hpp"

namespace fs = std::filesystem;
using namespace khive;

namespace {

struct TempDir {
  fs::path p = make_temp_dir(fs::temp_directory_path(), "khive-rel-test");
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(p, ec);
  }
};

bool alive(pid_t pid) { return ::kill(pid, 0) == 0; }

// A pid that ran and ended (reaped): nothing lives under it now.
pid_t dead_pid() {
  pid_t p = ::fork();
  if (p == 0) ::_exit(0);
  ::waitpid(p, nullptr, 0);
  return p;
}

}  // namespace

TEST(DirLock, ASecondHolderIsRefusedNamingTheFirst) {
  TempDir d;
  DirLock first = DirLock::acquire(d.p / "run", "khive optimize --resume run");
  EXPECT_TRUE(first.stale_note().empty());
  try {
    DirLock::acquire(d.p / "run", "khive evaluate-pending run");  // another open file: flock conflicts
    FAIL() << "the second acquire must throw";
  } catch (const DirLockBusy& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("is in use by another khive"), std::string::npos) << m;
    EXPECT_NE(m.find("pid " + std::to_string(::getpid())), std::string::npos) << m;
    EXPECT_NE(m.find("`khive optimize --resume run`"), std::string::npos) << m;
  }
  first.release();
  DirLock again = DirLock::acquire(d.p / "run", "khive optimize --resume run");
  EXPECT_TRUE(again.stale_note().empty()) << "a clean release leaves no stale record";
}

TEST(DirLock, AHolderThatDiedWithoutReleasingIsDetected) {
  TempDir d;
  pid_t child = ::fork();
  if (child == 0) {
    DirLock l = DirLock::acquire(d.p, "khive optimize tasks/x");
    ::_exit(0);  // ends without release(): what kill -9 does
  }
  int st = 0;
  ::waitpid(child, &st, 0);
  DirLock l = DirLock::acquire(d.p, "khive optimize --resume x");  // the kernel released the flock
  EXPECT_NE(l.stale_note().find("ended without releasing its lock"), std::string::npos) << l.stale_note();
  EXPECT_NE(l.stale_note().find("pid " + std::to_string(child)), std::string::npos) << l.stale_note();
}

TEST(Subprocess, TheGroupDiesWithItsParentEvenByKill9) {
  TempDir d;
  const fs::path pidfile = d.p / "grandchild.pid";
  // A middle process runs `sh` whose own child (the grandchild, like cc1plus under g++) sleeps; then the middle
  // process is killed with SIGKILL, as khive would be.
  pid_t middle = ::fork();
  if (middle == 0) {
    ProcessSpec p;
    p.argv = {"/bin/sh", "-c", "sleep 300 & echo $! > " + pidfile.string() + "; wait"};
    run_process(p);
    ::_exit(0);
  }
  pid_t grandchild = 0;
  for (int i = 0; i < 100 && !grandchild; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::ifstream f(pidfile);
    f >> grandchild;
  }
  ASSERT_GT(grandchild, 0);
  ASSERT_TRUE(alive(grandchild));
  ::kill(middle, SIGKILL);
  ::waitpid(middle, nullptr, 0);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    gone = !alive(grandchild);
  }
  EXPECT_TRUE(gone) << "the sleeping grandchild " << grandchild << " outlived the killed parent";
}

TEST(Subprocess, TheGuardianIgnoresSignalsMeantForKhive) {
  TempDir d;
  const fs::path pidfile = d.p / "guardian.pid";
  ProcessResult r;
  std::thread t([&] {
    ProcessSpec p;
    p.argv = {"/bin/sh", "-c", "echo $PPID > " + pidfile.string() + "; sleep 2; exit 3"};
    r = run_process(p);
  });
  pid_t guardian = 0;
  for (int i = 0; i < 100 && !guardian; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::ifstream f(pidfile);
    f >> guardian;
  }
  ASSERT_GT(guardian, 0);
  std::ifstream comm("/proc/" + std::to_string(guardian) + "/comm");
  std::string name;
  comm >> name;
  EXPECT_EQ(name, "kh-guardian") << "`pkill khive` must not match it";
  for (int s : {SIGINT, SIGHUP, SIGQUIT, SIGTERM}) ::kill(guardian, s);  // what `pkill -f "khive ..."` sends
  t.join();
  EXPECT_EQ(r.exit_code, 3) << r.describe();
  EXPECT_EQ(r.signal, 0) << r.describe();
}

TEST(Subprocess, TheRealChildsExitCodeAndSignalArePassedOn) {
  ProcessSpec p;
  p.argv = {"/bin/sh", "-c", "exit 7"};
  EXPECT_EQ(run_process(p).exit_code, 7);
  p.argv = {"/bin/sh", "-c", "kill -SEGV $$"};
  auto r = run_process(p);
  EXPECT_EQ(r.signal, SIGSEGV) << r.describe();
  p.argv = {"/nonexistent/program"};
  EXPECT_TRUE(run_process(p).start_failed);
}

TEST(Subprocess, CancelEndsAPendingChildAtOnce) {
  std::atomic<bool> stop{false};
  ProcessSpec p;
  p.argv = {"/bin/sh", "-c", "sleep 300"};
  p.cancel = &stop;
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop = true;
  });
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_process(p);
  t.join();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
  EXPECT_TRUE(r.cancelled);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.describe().find("cancelled"), std::string::npos);
}

TEST(TempDirs, CarryTheirOwnersPid) {
  TempDir d;
  fs::path t = make_temp_dir(d.p, "tmp-0123456789ab");
  EXPECT_EQ(temp_dir_owner(t), ::getpid()) << t;
  EXPECT_EQ(temp_dir_owner(d.p / "run-XYZ123"), 0);
  EXPECT_EQ(temp_dir_owner(d.p / "run-p12x-ABCDEF"), 0);
}

TEST(CachePrune, RemovesTheLeftoversOfEndedProcessesOnly) {
  TempDir d;
  const pid_t gone = dead_pid();
  const fs::path shard = d.p / "build" / "ab";
  const fs::path dead_build = shard / ("tmp-ab0123456789-p" + std::to_string(gone) + "-Qw3rTy");
  const fs::path live_build = make_temp_dir(shard, "tmp-ab0123456789");  // this process: alive
  const fs::path dead_scratch = d.p / "scratch" / ("run-p" + std::to_string(gone) + "-AbCdEf");
  const fs::path live_scratch = make_temp_dir(d.p / "scratch", "run");
  for (const auto& p : {dead_build, dead_scratch}) {
    fs::create_directories(p);
    std::ofstream(p / "unit.cpp") << std::string(100, 'x');
  }
  auto r = cache::prune(d.p, 1ull << 40);
  EXPECT_EQ(r.leftovers, 2);
  EXPECT_EQ(r.leftover_bytes, 200u);
  EXPECT_FALSE(fs::exists(dead_build));
  EXPECT_FALSE(fs::exists(dead_scratch));
  EXPECT_TRUE(fs::exists(live_build));
  EXPECT_TRUE(fs::exists(live_scratch));
  EXPECT_NE(r.leftovers_text().find("2 folders left by ended processes removed"), std::string::npos)
      << r.leftovers_text();
}

TEST(Text, InvalidUtf8IsReplacedAndValidTextKept) {
  std::string ok = "plain ascii, é, 日本, 🙂";
  EXPECT_EQ(make_valid_utf8(ok), 0u);
  EXPECT_EQ(ok, "plain ascii, é, 日本, 🙂");
  std::string bad = std::string("a\xff") + "b" + "\xc3" + "\xe2\x82" + "\xed\xa0\x80" + "\xc0\xaf" + "z";
  const std::size_t n = make_valid_utf8(bad);
  EXPECT_EQ(n, 9u);  // ff; c3 (cut); e2 82 (cut); ed a0 80 (a surrogate); c0 af (overlong)
  EXPECT_EQ(bad.substr(0, 1), "a");
  EXPECT_EQ(bad.back(), 'z');
  std::string again = bad;
  EXPECT_EQ(make_valid_utf8(again), 0u) << "the result is valid UTF-8";
}

TEST(Phase, AListenerHearsItsThreadOnly) {
  std::string heard;
  {
    PhaseListener l([&](const std::string& w) { heard = w; });
    report_phase("building");
    EXPECT_EQ(heard, "building");
    std::thread([] { report_phase("measuring"); }).join();  // another thread: not ours
    EXPECT_EQ(heard, "building");
  }
  report_phase("after");  // no listener: nothing happens
  EXPECT_EQ(heard, "building");
}
