#include "khive/support/subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include <fmt/format.h>

extern char** environ;

namespace khive {

std::map<std::string, std::string> inherited_env() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv(*e);
    const auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}
namespace {

using Clock = std::chrono::steady_clock;

void set_cloexec(int fd) { ::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) | FD_CLOEXEC); }

struct Pipe {
  int r = -1, w = -1;
  bool open() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return false;
    r = fds[0];
    w = fds[1];
    return true;
  }
  static void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

[[noreturn]] void child_fail(int err_fd, const char* what) {
  // Only async-signal-safe calls here.
  int e = errno;
  (void)!::write(err_fd, what, std::strlen(what));
  (void)!::write(err_fd, ": ", 2);
  const char* s = ::strerror(e);
  (void)!::write(err_fd, s, std::strlen(s));
  ::_exit(127);
}

pid_t g_khive = 0;  // in a guardian: the khive process it guards for

// The guardian's SIGTERM, its parent-death signal: once khive is gone (the guardian was reparented), the whole
// process group dies, the guardian with it. A SIGTERM from anyone else while khive lives is ignored: only khive
// ends its children.
void kill_own_group(int) {
  if (::getppid() != g_khive) ::kill(0, SIGKILL);
}

// Ends the guardian the way its child ended: the same exit code, or the same signal (without a core file).
[[noreturn]] void exit_like(int status) {
  if (WIFEXITED(status)) ::_exit(WEXITSTATUS(status));
  const int sig = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
  rlimit none{0, 0};
  ::setrlimit(RLIMIT_CORE, &none);
  ::signal(sig, SIG_DFL);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, sig);
  ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
  ::kill(::getpid(), sig);
  ::_exit(128 + sig);
}

// Runs in the forked child, the leader of its new process group (async-signal-safe calls only). It stays
// behind as the group's guardian: it forks the real child (which returns from here and execs) and waits
// for it. When khive ends by any path, kill -9 included, the kernel sends the guardian SIGTERM
// (PR_SET_PDEATHSIG) and it kills its whole group: a compiler driver's own children (cc1plus, ptxas, as)
// and a sleeping runner die with khive instead of running on. The real child dies with the guardian
// (its own PR_SET_PDEATHSIG). The guardian holds no descriptor, so EOFs reach khive as before.
void become_guardian(pid_t khive, int err_fd) {
  g_khive = khive;
  // Not khive to `pkill khive` (the cmdline still is: it is khive's memory), and deaf to the signals a person
  // sends to stop khive (`pkill -INT -f "khive optimize"` reaches it too): a guardian killed from outside
  // would take its child down and the verdict with it.
  ::prctl(PR_SET_NAME, "kh-guardian", 0, 0, 0);
  for (int s : {SIGINT, SIGHUP, SIGQUIT}) ::signal(s, SIG_IGN);
  struct sigaction sa {};
  sa.sa_handler = kill_own_group;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != khive) kill_own_group(0);  // khive was gone before the line above took effect
  const pid_t guardian = ::getpid();
  const pid_t real = ::fork();
  if (real < 0) child_fail(err_fd, "fork");
  if (real == 0) {
    for (int s : {SIGTERM, SIGINT, SIGHUP, SIGQUIT})
      ::signal(s, SIG_DFL);  // an ignored signal would stay so across exec
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != guardian) ::_exit(127);
    return;
  }
  ::close_range(0, ~0u, 0);
  int status = 0;
  while (::waitpid(real, &status, 0) < 0)
    if (errno != EINTR) ::_exit(127);
  exit_like(status);
}

// What the child needs, prepared before fork: nothing is allocated after it.
struct ChildPlan {
  std::vector<std::string> envs;
  std::vector<char*> argv, envp;
  std::string cwd, exe;
  ChildPlan(const ProcessSpec& spec, const std::filesystem::path& exe_path)
      : cwd(spec.cwd.string()), exe(exe_path.string()) {
    if (spec.env)
      for (auto& [k, v] : *spec.env) envs.push_back(k + "=" + v);
    for (auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (auto& e : envs) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
  }
};

// Moves spec.pass_fds into place in the child and closes every other descriptor >= 3: the candidate inherits
// nothing it could write a verdict to (async-signal-safe calls only, no allocation).
void arrange_child_fds(const ProcessSpec& spec) {
  // Passed descriptors: first park them above every target, then move them into place.
  int parked[64];
  std::size_t np = spec.pass_fds.size() < 64 ? spec.pass_fds.size() : 64;
  for (std::size_t i = 0; i < np; ++i) {
    parked[i] = ::fcntl(spec.pass_fds[i].first, F_DUPFD, 512);
    if (parked[i] < 0) child_fail(2, "fcntl(F_DUPFD)");
  }
  for (std::size_t i = 0; i < np; ++i) {
    if (::dup2(parked[i], spec.pass_fds[i].second) < 0) child_fail(2, "dup2(pass_fd)");
    ::close(parked[i]);
  }
  int keep[65];
  std::size_t nk = 0;
  for (std::size_t i = 0; i < np; ++i) keep[nk++] = spec.pass_fds[i].second;
  // insertion sort (no allocation)
  for (std::size_t i = 1; i < nk; ++i)
    for (std::size_t j = i; j > 0 && keep[j - 1] > keep[j]; --j) std::swap(keep[j - 1], keep[j]);
  unsigned lo = 3;
  for (std::size_t i = 0; i < nk; ++i) {
    if (static_cast<unsigned>(keep[i]) > lo) ::close_range(lo, static_cast<unsigned>(keep[i]) - 1, 0);
    lo = static_cast<unsigned>(keep[i]) + 1;
  }
  ::close_range(lo, ~0u, 0);
  for (std::size_t i = 0; i < nk; ++i) ::fcntl(keep[i], F_SETFD, 0);  // survive exec
}

// The forked child: a new process group with a guardian (become_guardian), its pipes on 0-2, then exec.
[[noreturn]] void run_child(const ProcessSpec& spec, const ChildPlan& plan, pid_t khive, const Pipe& in,
                            const Pipe& out, const Pipe& err) {
  ::setpgid(0, 0);
  // Reset signal dispositions the orchestrator may have changed (SIGPIPE, SIGINT handlers).
  for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGCHLD}) ::signal(s, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  become_guardian(khive, err.w);
  if (::dup2(in.r, 0) < 0 || ::dup2(out.w, 1) < 0 || ::dup2(err.w, 2) < 0) child_fail(err.w, "dup2");
  arrange_child_fds(spec);
  if (!plan.cwd.empty() && ::chdir(plan.cwd.c_str()) != 0) child_fail(2, "chdir");
  if (spec.in_child && !spec.in_child()) child_fail(2, "sandbox set-up");
  if (spec.env)
    ::execve(plan.exe.c_str(), plan.argv.data(), plan.envp.data());
  else
    ::execv(plan.exe.c_str(), plan.argv.data());
  child_fail(2, "exec");
}

// Feeds stdin (small payloads; a large one would need to be interleaved with reading).
void feed_stdin(int fd, const std::string& data) {
  if (data.empty()) return;
  ::signal(SIGPIPE, SIG_IGN);
  std::size_t off = 0;
  while (off < data.size()) {
    ssize_t w = ::write(fd, data.data() + off, data.size() - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      break;
    }
    off += static_cast<std::size_t>(w);
  }
}

// Reads the child's stdout and stderr (and spec.extra_read_fd) until it is reaped and they reach EOF, killing its
// group at the deadline or on cancel; returns its wait status.
int pump_until_exit(const ProcessSpec& spec, pid_t pid, Clock::time_point t0, int out_fd, int err_fd,
                    ProcessResult& res) {
  auto deadline = spec.timeout_s > 0
                      ? t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(spec.timeout_s))
                      : Clock::time_point::max();
  int fds[3] = {out_fd, err_fd, spec.extra_read_fd};
  std::string* sinks[2] = {&res.out, &res.err};
  std::size_t* dropped[2] = {&res.out_dropped, &res.err_dropped};
  bool reaped = false;
  int status = 0;
  Clock::time_point reaped_at{};
  char buf[1 << 16];
  for (;;) {
    pollfd pfd[3];
    int n = 0;
    int map[3];
    for (int i = 0; i < 3; ++i)
      if (fds[i] >= 0) {
        pfd[n] = {fds[i], POLLIN, 0};
        map[n++] = i;
      }
    // Done when the child is reaped and its stdout/stderr reached EOF; the extra fd (a channel whose
    // writer the caller may still hold) is drained by the caller.
    if (reaped && fds[0] < 0 && fds[1] < 0) break;
    auto now = Clock::now();
    if (!res.timed_out && now >= deadline) {
      res.timed_out = true;
      ::killpg(pid, SIGKILL);
    }
    if (!res.cancelled && !reaped && spec.cancel && spec.cancel->load()) {
      res.cancelled = true;
      ::killpg(pid, SIGKILL);
    }
    // After the child is gone, give its descendants a moment to close inherited pipes, then stop.
    if (reaped && now - reaped_at > std::chrono::milliseconds(500)) {
      ::killpg(pid, SIGKILL);
      break;
    }
    int wait_ms = 50;
    if (deadline != Clock::time_point::max() && !res.timed_out) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
      wait_ms = static_cast<int>(std::max<long long>(0, std::min<long long>(left, 50)));
    }
    int pr = n ? ::poll(pfd, static_cast<nfds_t>(n), wait_ms) : (::usleep(static_cast<useconds_t>(wait_ms) * 1000), 0);
    if (pr < 0 && errno != EINTR) break;
    for (int k = 0; k < n && pr > 0; ++k) {
      if (!(pfd[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      int i = map[k];
      ssize_t r = ::read(fds[i], buf, sizeof buf);
      if (r <= 0) {
        if (r < 0 && errno == EINTR) continue;
        if (i < 2) ::close(fds[i]);
        fds[i] = -1;
        continue;
      }
      if (i == 2) {
        if (spec.on_extra) spec.on_extra(buf, static_cast<std::size_t>(r));
        continue;
      }
      std::size_t keep = std::min<std::size_t>(static_cast<std::size_t>(r),
                                               spec.capture_limit - std::min(spec.capture_limit, sinks[i]->size()));
      sinks[i]->append(buf, keep);
      *dropped[i] += static_cast<std::size_t>(r) - keep;
    }
    if (!reaped) {
      pid_t w = ::waitpid(pid, &status, WNOHANG);
      if (w == pid) {
        reaped = true;
        reaped_at = Clock::now();
      }
    }
  }
  for (int i = 0; i < 2; ++i)
    if (fds[i] >= 0) ::close(fds[i]);
  if (!reaped) {
    ::killpg(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  return status;
}

}  // namespace

std::string ProcessResult::describe() const {
  if (start_failed) return "could not start (" + err + ")";
  if (timed_out) return fmt::format("timed out after {:.1f} s", wall_s);
  if (cancelled) return fmt::format("cancelled after {:.1f} s", wall_s);
  if (signal)
    return fmt::format("killed by {} ({})",
                       sigabbrev_np(signal) ? std::string("SIG") + sigabbrev_np(signal) : std::to_string(signal),
                       strsignal(signal));
  return fmt::format("exit {}", exit_code);
}

std::filesystem::path find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return std::filesystem::exists(name) ? std::filesystem::path(name) : "";
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    std::filesystem::path p = std::filesystem::path(dir) / name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

ProcessResult run_process(const ProcessSpec& spec) {
  ProcessResult res;
  if (spec.argv.empty()) {
    res.start_failed = true;
    res.err = "empty argv";
    return res;
  }
  std::filesystem::path exe = find_program(spec.argv[0]);
  if (exe.empty()) {
    res.start_failed = true;
    res.err = spec.argv[0] + ": not found in PATH";
    return res;
  }
  const ChildPlan plan(spec, exe);  // everything the child needs is prepared before fork: no allocation after it

  Pipe in, out, err;
  if (!in.open() || !out.open() || !err.open()) {
    res.start_failed = true;
    res.err = std::string("pipe: ") + std::strerror(errno);
    return res;
  }
  auto t0 = Clock::now();
  const pid_t self = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    res.start_failed = true;
    res.err = std::string("fork: ") + std::strerror(errno);
    return res;
  }
  if (pid == 0) run_child(spec, plan, self, in, out, err);
  ::setpgid(pid, pid);  // also from the parent, so killpg works even before the child runs
  Pipe::close_fd(in.r);
  Pipe::close_fd(out.w);
  Pipe::close_fd(err.w);
  feed_stdin(in.w, spec.stdin_data);
  Pipe::close_fd(in.w);

  const int status = pump_until_exit(spec, pid, t0, out.r, err.r, res);
  ::killpg(pid, SIGKILL);  // no descendant outlives the call
  res.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  if (WIFEXITED(status)) {
    res.exit_code = WEXITSTATUS(status);
    if (res.exit_code == 127 && res.out.empty() && res.err.find(": ") != std::string::npos &&
        (res.err.rfind("exec:", 0) == 0 || res.err.rfind("sandbox set-up", 0) == 0 || res.err.rfind("chdir", 0) == 0))
      res.start_failed = true;
  } else if (WIFSIGNALED(status)) {
    res.signal = WTERMSIG(status);
  }
  if (res.timed_out || res.cancelled) res.signal = 0;
  return res;
}

int64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page : 0;
}

}  // namespace khive
