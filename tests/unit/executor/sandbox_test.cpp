// The executor's sandbox, installed in a forked child as khive-exec installs it on itself: what a kernel may still
// do (threads, memory, its own signals, system libraries), and what it may not (the cache, other processes, sockets).
// Violations reach the parent as seccomp notifications naming the call, as they reach the judge.
#include <fcntl.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <poll.h>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include <gtest/gtest.h>

#include "khive/executor/protocol.hpp"
#include "khive/executor/sandbox.hpp"

namespace khive::exec {
namespace {

// Runs `body` in a child inside the sandbox (Landlock + seccomp, as the executor applies them); returns the child's
// wait status and, when it made a forbidden call, that call's name.
struct Outcome {
  int status = 0;
  std::string violation;
};

Outcome sandboxed(const std::function<int()>& body, bool landlock = true) {
  int sv[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(sv[0]);
    int abi = 0;
    if (landlock) apply_landlock(base_read_paths(), device_paths(false), false, abi);
    int notify = -1;
    if (!apply_seccomp(false, {}, notify).empty()) ::_exit(90);
    try {
      send_message(sv[1], {{"op", "hello"}}, notify >= 0 ? std::vector<int>{notify} : std::vector<int>{});
    } catch (...) {
      ::_exit(91);
    }
    ::_exit(body());
  }
  ::close(sv[1]);
  Outcome o;
  Message hello = receive(sv[0]);
  ::close(sv[0]);
  if (!hello.fds.empty()) {
    const int nfd = hello.fds[0];
    struct seccomp_notif* req = nullptr;
    struct seccomp_notif_resp* resp = nullptr;
    seccomp_notify_alloc(&req, &resp);
    for (;;) {
      pollfd p{nfd, POLLIN, 0};
      int st = 0;
      if (::waitpid(pid, &st, WNOHANG) == pid) {
        o.status = st;
        break;
      }
      if (::poll(&p, 1, 50) > 0 && (p.revents & POLLIN) && seccomp_notify_receive(nfd, req) == 0) {
        char* n = seccomp_syscall_resolve_num_arch(req->data.arch, req->data.nr);
        o.violation = n ? n : "?";
        std::free(n);
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &o.status, 0);
        break;
      }
    }
    seccomp_notify_free(req, resp);
    ::close(nfd);
  } else {
    ::waitpid(pid, &o.status, 0);
  }
  return o;
}

bool exited_ok(const Outcome& o) { return WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0 && o.violation.empty(); }

TEST(Sandbox, WhatAKernelNeedsStillWorks) {
  Outcome o = sandboxed([] {
    std::atomic<int> sum{0};
    std::thread t([&] { sum += 1; });  // threads (OpenMP's pool, the CUDA runtime's)
    t.join();
    void* p = ::mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 2;
    static_cast<char*>(p)[12345] = 1;
    ::munmap(p, 1 << 20);
    std::ifstream status("/proc/self/status");  // /proc and system files read-only
    if (!status) return 3;
    if (std::thread::hardware_concurrency() == 0) return 4;
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return sum == 1 ? 0 : 5;
  });
  EXPECT_TRUE(exited_ok(o)) << "status " << o.status << " violation " << o.violation;
}

TEST(Sandbox, ItsOwnSignalsEndItNormally) {
  Outcome o = sandboxed([] {
    ::raise(SIGABRT);  // abort(): tgkill to itself
    return 0;
  });
  EXPECT_TRUE(o.violation.empty());
  ASSERT_TRUE(WIFSIGNALED(o.status));
  EXPECT_EQ(WTERMSIG(o.status), SIGABRT);
}

TEST(Sandbox, SocketsAreAViolationNamedToTheJudge) {
  Outcome o = sandboxed([] {
    ::socket(AF_INET, SOCK_STREAM, 0);
    return 0;
  });
  EXPECT_EQ(o.violation, "socket");
}

TEST(Sandbox, SignallingAnotherProcessIsAViolation) {
  Outcome o = sandboxed([] {
    ::kill(::getppid(), SIGKILL);
    return 0;
  });
  EXPECT_EQ(o.violation, "kill");
  Outcome self_kill = sandboxed([] {
    ::kill(::getpid(), SIGKILL);  // even to itself: a SIGKILL is always from outside
    return 0;
  });
  EXPECT_EQ(self_kill.violation, "kill");
}

TEST(Sandbox, NewProcessesAndHandleOpensAreViolations) {
  EXPECT_EQ(sandboxed([] { return static_cast<int>(::syscall(SYS_fork)); }).violation, "fork");
  EXPECT_EQ(sandboxed([] {
              ::syscall(SYS_ptrace, 0, 0, 0, 0);
              return 0;
            }).violation,
            "ptrace");
}

TEST(Sandbox, WritingAFileIsAViolation) {
  Outcome o = sandboxed([] {
    int fd = ::open("/dev/null", O_WRONLY);
    return fd >= 0 ? 0 : 1;
  });
  EXPECT_EQ(o.violation, "openat");
}

TEST(Sandbox, TheFilesystemViewHasNoCacheNoHomeNoTmp) {
  int abi = 0;
  {
    // Probe first whether this kernel has Landlock at all (the test machine's does: ABI >= 1).
    pid_t pid = ::fork();
    if (pid == 0) ::_exit(apply_landlock({}, {}, false, abi).empty() ? 0 : 1);
    int st = 0;
    ::waitpid(pid, &st, 0);
    if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) GTEST_SKIP() << "no Landlock on this kernel";
  }
  const std::string here = std::filesystem::current_path().string();
  Outcome o = sandboxed([here] {
    for (const char* p : {"/tmp", "/root", "/home"})
      if (::open(p, O_RDONLY | O_DIRECTORY) >= 0) return 10;
    if (::open(here.c_str(), O_RDONLY | O_DIRECTORY) >= 0) return 11;  // the build tree (the tests' cache lives there)
    if (::open("/etc/ld.so.cache", O_RDONLY) < 0) return 12;           // what the dynamic loader needs stays
    return 0;
  });
  EXPECT_TRUE(exited_ok(o)) << "status " << (WIFEXITED(o.status) ? WEXITSTATUS(o.status) : -1) << " " << o.violation;
}

}  // namespace
}  // namespace khive::exec
