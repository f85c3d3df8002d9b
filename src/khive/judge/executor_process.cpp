#include "khive/judge/executor_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "khive/executor/gate.hpp"
#include "khive/judge/arena.hpp"
#include "khive/judge/device.hpp"
#include "khive/support/text.hpp"

namespace khive {

namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

constexpr std::size_t kLogKeep = 64 << 10;
// The least the judge waits for the device to go idle after an answer (the context switch back takes ~0.2-0.4 ms).
constexpr double kDrainFloor_s = 0.5;

void keep_tail(std::string& log, const char* d, std::size_t n) {
  log.append(d, n);
  if (log.size() > kLogKeep) log.erase(0, log.size() - kLogKeep);
}

Reason reason_of(const std::string& r) {
  if (r == "cuda_error") return Reason::cuda_error;
  if (r == "load_error") return Reason::load_error;
  return Reason::protocol_violation;
}

}  // namespace

ExecutorProcess::ExecutorProcess(const ExecutorSpec& spec, JudgeDevice& dev) : spec_(spec), dev_(dev) {
  int sv[2], outp[2], errp[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0 || ::pipe2(outp, O_CLOEXEC) != 0 ||
      ::pipe2(errp, O_CLOEXEC) != 0)
    throw ExecutorFault(Reason::crash, std::string("cannot create the executor's channels: ") + std::strerror(errno),
                        false, true);
  // Everything the child needs is built before fork: the judge may be multithreaded (CUDA), so the child only
  // makes async-signal-safe calls until exec.
  std::vector<std::string> args = {spec.path};
  args.insert(args.end(), spec.args.begin(), spec.args.end());
  for (const char* a : {"--socket", "3", "--setup"}) args.emplace_back(a);
  args.push_back(nlohmann::json(spec.setup).dump());
  // GOMP_SPINCOUNT: OpenMP's idle threads spin for ~10 us after a parallel region, then sleep (libgomp's default spins
  // for up to a few ms, holding the cores the judge needs to see the answer: that showed up as clock disagreement).
  // CUDA_MODULE_LOADING: a kernel's modules load with its context (EAGER), so no timed call pays for a load; PyTorch's
  // load as its warm-up calls first use them (LAZY): EAGER would load every kernel of libtorch_cuda at start (on the
  // H200, import + context 7.89 s EAGER against 4.34 s LAZY: docs/results/2026-12-04-h200).
  std::vector<std::string> envs = {
      "PATH=/usr/bin:/bin",
      "LANG=C",
      "HOME=/nonexistent",
      "OMP_PROC_BIND=false",
      "GOMP_SPINCOUNT=10000",
      "CUDA_CACHE_DISABLE=1",
      spec.pytorch || exec::exec_trial("lazy_modules") ? "CUDA_MODULE_LOADING=LAZY" : "CUDA_MODULE_LOADING=EAGER"};
  envs.push_back("OMP_NUM_THREADS=" + std::to_string(spec.omp_threads > 0
                                                         ? spec.omp_threads
                                                         : static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN))));
  for (const char* v : {"LD_LIBRARY_PATH", "KHIVE_SANDBOX_EXTRA_SYSCALLS", "KHIVE_EXEC_PRIMER", "KHIVE_EXEC_TRIAL"})
    if (const char* x = std::getenv(v)) envs.push_back(std::string(v) + "=" + x);
  envs.insert(envs.end(), spec.env.begin(), spec.env.end());
  if (!spec.cuda_visible_devices.empty())
    envs.push_back("CUDA_VISIBLE_DEVICES=" + spec.cuda_visible_devices);
  else if (const char* x = std::getenv("CUDA_VISIBLE_DEVICES"))
    envs.push_back(std::string("CUDA_VISIBLE_DEVICES=") + x);
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : envs) envp.push_back(e.data());
  envp.push_back(nullptr);
  const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const pid_t parent = ::getpid();

  pid_ = ::fork();
  if (pid_ < 0) throw ExecutorFault(Reason::crash, std::string("fork failed: ") + std::strerror(errno), false, true);
  if (pid_ == 0) {
    ::setsid();
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // it dies with the judge
    if (::getppid() != parent) ::_exit(127);
    ::dup2(devnull, 0);
    ::dup2(outp[1], 1);
    ::dup2(errp[1], 2);
    ::dup2(sv[1], 3);
    ::syscall(SYS_close_range, 4u, ~0u, 0u);
    ::execve(argv[0], argv.data(), envp.data());
    const char msg[] =
        "khive-judge: cannot execute the executor (khive-exec, or the PyTorch reference's interpreter)\n";
    (void)!::write(2, msg, sizeof msg - 1);
    ::_exit(127);
  }
  ::close(devnull);
  ::close(sv[1]);
  ::close(outp[1]);
  ::close(errp[1]);
  sock_ = sv[0];
  out_ = outp[0];
  err_ = errp[0];
  ::fcntl(out_, F_SETFL, ::fcntl(out_, F_GETFL) | O_NONBLOCK);
  ::fcntl(err_, F_SETFL, ::fcntl(err_, F_GETFL) | O_NONBLOCK);

  // The hello (or why it could not set up): the executor has run no kernel code yet.
  exec::Message hello = wait_answer(now_s() + std::max(spec.timeout_s, 120.0));
  if (hello.op() == "fault") {
    for (int fd : hello.fds) ::close(fd);
    kill_now();
    throw ExecutorFault(
        Reason::crash,
        "the " + spec_.role + " executor could not set up: " + hello.body.value("message", std::string("?")), false,
        true);
  }
  if (hello.op() != "hello" || hello.body.value("version", 0) != exec::kProtocolVersion) {
    for (int fd : hello.fds) ::close(fd);
    kill_now();
    throw ExecutorFault(Reason::protocol_violation,
                        "the " + spec_.role + " executor answered no hello (a khive-exec of another version?)", false,
                        true);
  }
  sandbox_ = hello.body.value("sandbox", nlohmann::json::object());
  if (!hello.fds.empty()) notify_ = hello.fds[0];
  for (std::size_t i = 1; i < hello.fds.size(); ++i) ::close(hello.fds[i]);
  stop();
}

ExecutorProcess::~ExecutorProcess() {
  if (!reaped_) kill_now();
  for (int fd : {sock_, out_, err_, notify_})
    if (fd >= 0) ::close(fd);
}

void ExecutorProcess::kill_now() {
  if (reaped_ || pid_ <= 0) return;
  killed_by_judge_ = true;
  ::kill(pid_, SIGKILL);
  int st = 0;
  while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
  }
  wait_status_ = st;
  reaped_ = true;
}

void ExecutorProcess::stop() {
  if (reaped_) return;
  ::kill(pid_, SIGSTOP);
  for (;;) {
    int st = 0;
    pid_t r = ::waitpid(pid_, &st, WUNTRACED);
    if (r < 0 && errno == EINTR) continue;
    if (r == pid_ && WIFSTOPPED(st)) {
      stopped_ = true;
      return;
    }
    if (r == pid_ && (WIFEXITED(st) || WIFSIGNALED(st))) {
      wait_status_ = st;
      reaped_ = true;
    }
    return;
  }
}

void ExecutorProcess::resume() {
  if (reaped_) died("before the judge's next message");
  if (stopped_) {
    ::kill(pid_, SIGCONT);
    stopped_ = false;
  }
}

void ExecutorProcess::drain_pipes() {
  char buf[4096];
  for (int fd : {out_, err_}) {
    for (;;) {
      ssize_t r = ::read(fd, buf, sizeof buf);
      if (r <= 0) break;
      keep_tail(fd == out_ ? out_log_ : err_log_, buf, static_cast<std::size_t>(r));
    }
  }
}

std::string ExecutorProcess::log_tail(std::size_t max_bytes) const {
  std::string s = tail(out_log_, max_bytes / 2);
  if (!err_log_.empty()) s += (s.empty() ? "" : "\n") + std::string("[stderr]\n") + tail(err_log_, max_bytes / 2);
  return s;
}

// The executor has ended (exited or killed): its status is kept and it is not waited for again.
bool ExecutorProcess::try_reap() {
  int st = 0;
  if (::waitpid(pid_, &st, WNOHANG) != pid_ || !(WIFEXITED(st) || WIFSIGNALED(st))) return false;
  wait_status_ = st;
  reaped_ = true;
  return true;
}

void ExecutorProcess::died(const std::string& while_doing) {
  if (!reaped_) {
    // The channel closed: the process is ending. Give it a moment, then make sure.
    const double until = now_s() + 5;
    for (;;) {
      if (try_reap()) break;
      if (now_s() > until) {
        kill_now();
        break;
      }
      ::usleep(1000);
    }
  }
  drain_pipes();
  const std::string err = tail(err_log_, 1200);
  const bool pre = !loaded_ && !kernel_code_ran_;
  const std::string who = "the " + spec_.role + " executor";
  const int st = wait_status_;
  if (WIFSIGNALED(st)) {
    const int sig = WTERMSIG(st);
    const std::string name = std::string(::strsignal(sig) ? ::strsignal(sig) : "signal");
    if (sig == SIGKILL && !killed_by_judge_)
      throw ExecutorFault(
          Reason::crash,
          who + " was killed from outside (SIGKILL not sent by the judge: the OOM killer or an operator) " +
              while_doing,
          true, pre);
    if (sig == SIGSYS)
      throw ExecutorFault(Reason::sandbox_violation,
                          who + " was killed by the sandbox for a forbidden system call " + while_doing, false, pre);
    if (sig == SIGXFSZ)
      throw ExecutorFault(Reason::sandbox_violation, who + " tried to write a file " + while_doing, false, pre);
    if (sig == SIGXCPU) throw ExecutorFault(Reason::timeout, who + " ran out of CPU time " + while_doing, false, pre);
    throw ExecutorFault(
        sig == SIGABRT ? Reason::abort : Reason::crash,
        fmt::format("{} was killed by signal {} ({}) {}{}", who, sig, name, while_doing, err.empty() ? "" : ": " + err),
        false, pre);
  }
  throw ExecutorFault(Reason::crash,
                      fmt::format("{} ended (exit {}) {} without answering{}", who,
                                  WIFEXITED(st) ? WEXITSTATUS(st) : -1, while_doing, err.empty() ? "" : ": " + err),
                      false, pre);
}

void ExecutorProcess::on_notification() {
  struct seccomp_notif* req = nullptr;
  struct seccomp_notif_resp* resp = nullptr;
  std::string name = "unknown";
  if (seccomp_notify_alloc(&req, &resp) == 0) {
    if (seccomp_notify_receive(notify_, req) == 0) {
      char* n = seccomp_syscall_resolve_num_arch(req->data.arch, req->data.nr);
      name = n ? n : "system call " + std::to_string(req->data.nr);
      std::free(n);
      kill_now();  // before answering: the call never proceeds
      resp->id = req->id;
      resp->error = -EPERM;
      resp->val = 0;
      resp->flags = 0;
      seccomp_notify_respond(notify_, resp);
    }
    seccomp_notify_free(req, resp);
  }
  kill_now();
  drain_pipes();
  throw ExecutorFault(Reason::sandbox_violation,
                      "the " + spec_.role + " executor made a forbidden system call: " + name, false,
                      !loaded_ && !kernel_code_ran_);
}

exec::Message ExecutorProcess::wait_answer(double deadline) {
  if (spec_.spin_s > 0) {  // the answer usually comes soon: poll without sleeping first
    const double until = std::min(deadline, now_s() + spec_.spin_s);
    while (now_s() < until) {
      try {
        if (auto m = exec::try_receive(sock_)) return std::move(*m);
      } catch (const exec::ChannelError&) {
        break;  // the blocking loop below says what happened
      }
    }
  }
  for (;;) {
    std::vector<pollfd> p = {{sock_, POLLIN, 0}, {out_, POLLIN, 0}, {err_, POLLIN, 0}};
    if (notify_ >= 0) p.push_back({notify_, POLLIN, 0});
    const double left = deadline - now_s();
    if (left <= 0) {
      kill_now();
      drain_pipes();
      throw ExecutorFault(Reason::timeout,
                          fmt::format("the {} executor gave no answer within {:.0f} s; the judge killed it", spec_.role,
                                      spec_.timeout_s),
                          false, !loaded_ && !kernel_code_ran_);
    }
    int r = ::poll(p.data(), p.size(), static_cast<int>(std::min(left * 1000 + 1, 1000.0)));
    if (r < 0 && errno == EINTR) continue;
    if (p.size() > 3 && (p[3].revents & POLLIN)) on_notification();
    if (p[1].revents || p[2].revents) drain_pipes();
    if (p[0].revents & POLLIN) {
      try {
        if (auto m = exec::try_receive(sock_)) return std::move(*m);
      } catch (const exec::ChannelError& e) {
        // Gone (closed, or reset: an executor killed with the judge's message unread resets the channel) is a death,
        // whose cause the exit status tells (an external SIGKILL during timing had read as a protocol violation).
        if (e.peer_gone) died("while the judge waited for its answer");
        kill_now();
        throw ExecutorFault(Reason::protocol_violation,
                            "the " + spec_.role + " executor sent something that is not a message: " + e.what(), false,
                            !loaded_ && !kernel_code_ran_);
      }
    } else if (p[0].revents & (POLLHUP | POLLERR)) {
      died("while the judge waited for its answer");
    }
  }
}

Exchange ExecutorProcess::exchange(const nlohmann::json& msg, const std::vector<int>& fds, const char* expect,
                                   const std::function<void()>& after_send) {
  resume();
  Exchange x;
  const double t0 = now_s();
  try {
    exec::send_message(sock_, msg, fds);
  } catch (const exec::ChannelError&) {
    died("when the judge sent its next message");
  }
  if (after_send) {
    try {
      after_send();
    } catch (...) {
      kill_now();  // its calls wait for a `ready` that will never come
      drain_pipes();
      throw;
    }
  }
  exec::Message a = wait_answer(t0 + spec_.timeout_s);
  const double t_answered = now_s();
  stop();
  if (spec_.setup.backend == "cpu") pin_threads();  // stopped, and outside the judge's clock
  for (int fd : a.fds) ::close(fd);                 // an executor never hands the judge descriptors after its hello
  // A fault ends the evaluation: the executor is killed rather than drained (work it had queued behind the gate is
  // still pending on the device, and the drain would wait for it and blame the kernel for work after return).
  if (a.op() == "fault") {
    kill_now();
    drain_pipes();
    const std::string reason = a.body.value("reason", std::string());
    const std::string message = a.body.value("message", std::string());
    if (reason == "bad_request" && !loaded_)
      throw ExecutorFault(Reason::protocol_violation, "the judge's request was refused: " + message, false, true);
    throw ExecutorFault(reason_of(reason), "the " + spec_.role + " executor reported: " + message, false,
                        !loaded_ && !kernel_code_ran_);
  }
  const double t_answer = now_s();
  // Nothing honest is left on the device once the executor answered (it synchronised the device first): the drain
  // only waits for the context switch back. Work that outlasts a generous bound is a verdict now, not a wait until
  // the per-call timeout (an evaluation once hung for minutes on work handed to another stream).
  const double drain_limit = std::min(spec_.timeout_s, std::max(kDrainFloor_s, 4 * (t_answer - t0)));
  try {
    x.drain_s = dev_.drain(drain_limit);
  } catch (const std::exception&) {
    kill_now();
    throw ExecutorFault(Reason::work_after_return,
                        fmt::format("the {} executor answered, but the device stayed busy for {:.2f} s afterwards",
                                    spec_.role, drain_limit));
  }
  x.judge_s = now_s() - t0;
  // KHIVE_TRACE_EXCHANGES=1: one line per exchange on the judge's stderr (where the judge's clock goes: until the
  // answer, the stop, the drain), for diagnosing the clock checks on a new machine; =<path>: appended to that file
  // (khive shows the judge's stderr only when it fails).
  static FILE* const trace = [] {
    const char* v = std::getenv("KHIVE_TRACE_EXCHANGES");
    if (!v || !*v) return static_cast<FILE*>(nullptr);
    if (std::string(v) == "1") return stderr;
    FILE* f = std::fopen(v, "a");
    return f ? f : stderr;
  }();
  if (trace) {
    double in = 0;
    std::size_t n = 0;
    if (a.body.contains("times_s") && a.body["times_s"].is_array())
      for (const auto& v : a.body["times_s"])
        if (v.is_number()) in += v.get<double>(), ++n;
    std::fprintf(trace, "xtrace %s %s n=%zu answer_us=%.1f stop_us=%.1f drain_us=%.1f in_us=%.1f\n", spec_.role.c_str(),
                 msg.value("op", std::string("?")).c_str(), n, 1e6 * (t_answered - t0), 1e6 * (t_answer - t_answered),
                 1e6 * x.drain_s, 1e6 * in);
  }
  if (reaped_) died("right after answering");
  const std::string op = a.op();
  if (op != expect)
    throw ExecutorFault(Reason::protocol_violation,
                        fmt::format("the {} executor answered '{}' where '{}' was due", spec_.role, op, expect), false,
                        !loaded_ && !kernel_code_ran_);
  if (op == "done") {
    const auto& t = a.body.contains("times_s") ? a.body["times_s"] : nlohmann::json();
    if (!t.is_array())
      throw ExecutorFault(Reason::protocol_violation, "the " + spec_.role + " executor's answer has no times");
    for (const auto& v : t) {
      if (!v.is_number())
        throw ExecutorFault(Reason::protocol_violation,
                            "the " + spec_.role + " executor's answer has a time that is not a number");
      if (!std::isfinite(v.get<double>()) || v.get<double>() < 0)  // a clock that runs backwards was tampered with
        throw ExecutorFault(
            Reason::timing_disagrees,
            fmt::format("the {} executor's own clock measured a call at {} s: its clock was tampered with", spec_.role,
                        v.dump()));
      x.in_process_s.push_back(v.get<double>());
    }
    if (spec_.pytorch && spec_.setup.as_kernel && a.body.contains("copy_s")) {
      const auto& c = a.body["copy_s"];
      if (!c.is_array() || c.size() != x.in_process_s.size())
        throw ExecutorFault(Reason::protocol_violation,
                            "the " + spec_.role + " executor's copy times do not match its calls");
      for (std::size_t i = 0; i < c.size(); ++i) {
        const double v = c[i].is_number() ? c[i].get<double>() : -1;
        if (!std::isfinite(v) || v < 0 || v > x.in_process_s[i])
          throw ExecutorFault(
              Reason::protocol_violation,
              fmt::format("the {} executor's copy time {} is not within its call", spec_.role, c[i].dump()));
        x.copy_s.push_back(v);
      }
    }
  }
  return x;
}

void ExecutorProcess::pin_threads() {
  static const bool off = [] {
    const char* v = std::getenv("KHIVE_CPU_PIN");
    return v && std::string(v) == "0";
  }();
  if (off || reaped_ || pid_ <= 0) return;
  if (cpus_.empty()) {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (::sched_getaffinity(pid_, sizeof mask, &mask) != 0) return;
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &mask)) cpus_.push_back(c);
  }
  if (cpus_.size() < 2) return;  // one CPU: nothing to spread
  std::vector<pid_t> tids;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(pid_) + "/task", ec)) {
    const std::string name = e.path().filename().string();
    if (!name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }))
      tids.push_back(std::stoi(name));
  }
  std::sort(tids.begin(), tids.end());
  if (tids.empty() || tids == pinned_) return;
  for (std::size_t i = 0; i < tids.size(); ++i) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpus_[i % cpus_.size()], &one);
    (void)::sched_setaffinity(tids[i], sizeof one, &one);  // a thread that has just ended: nothing to place
  }
  pinned_ = std::move(tids);
}

void ExecutorProcess::share(const Arena& arena, bool goldens) {
  Arena::Share s = arena.share(goldens, goldens || spec_.pytorch);
  share(s.map, s.layout, s.fds);
}

void ExecutorProcess::share(const nlohmann::json& map, const nlohmann::json& layout, const std::vector<int>& fds) {
  try {
    exchange(map, fds, "ok");
  } catch (...) {
    for (int fd : fds) ::close(fd);
    throw;
  }
  for (int fd : fds) ::close(fd);
  exchange(layout, {}, "ok");
}

Overhead ExecutorProcess::calibrate_batch(int calls, int exchanges, const std::function<void()>& before) {
  std::vector<double> t;
  for (int i = 0; i < exchanges; ++i) {
    if (before) before();
    t.push_back(exchange({{"op", "null"}, {"count", calls}}, {}, "done").judge_s);
  }
  return Overhead::of(std::move(t));
}

void ExecutorProcess::load() {
  kernel_code_ran_ = true;  // its constructors run inside this exchange
  exchange({{"op", "load"}}, {}, "ok");
  loaded_ = true;
}

void ExecutorProcess::share_gate(SharedRegion& gate) {
  const int fd = gate.share();
  try {
    exchange({{"op", "gate"}, {"bytes", gate.bytes()}}, {fd}, "ok");
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

Exchange ExecutorProcess::null_gated(int calls, uint32_t gate_first, const nlohmann::json& touch,
                                     const std::function<void()>& after_send) {
  nlohmann::json msg = {{"op", "null"}, {"count", calls}, {"gate", {{"first", gate_first}}}};
  if (!touch.is_null()) msg["touch"] = touch;
  Exchange x = exchange(msg, {}, "done", after_send);
  if (x.in_process_s.size() != static_cast<std::size_t>(calls))
    throw ExecutorFault(Reason::protocol_violation, fmt::format("the {} executor answered {} times for {} null calls",
                                                                spec_.role, x.in_process_s.size(), calls));
  return x;
}

Exchange ExecutorProcess::call(const std::vector<Call>& calls, uint32_t gate_first,
                               const std::function<void()>& after_send) {
  nlohmann::json cs = nlohmann::json::array();
  for (const auto& c : calls) cs.push_back({{"set", c.set}, {"scalars", c.scalars}});
  nlohmann::json msg = {{"op", "call"}, {"calls", cs}};
  if (gate_first) msg["gate"] = {{"first", gate_first}};
  // The answer's shape is checked by the session (check_answer), whatever the executor.
  return exchange(msg, {}, "done", after_send);
}

void ExecutorProcess::finish() {
  if (reaped_) died("before it was asked to quit");
  resume();
  try {
    exec::send_message(sock_, {{"op", "quit"}});
  } catch (const exec::ChannelError&) {
    died("when asked to quit");
  }
  const double until = now_s() + 10;
  for (;;) {
    if (try_reap()) break;
    if (notify_ >= 0) {
      pollfd p{notify_, POLLIN, 0};
      if (::poll(&p, 1, 1) > 0 && (p.revents & POLLIN)) on_notification();
    } else {
      ::usleep(1000);
    }
    if (now_s() > until) {
      kill_now();
      throw ExecutorFault(Reason::timeout,
                          "the " + spec_.role + " executor did not exit within 10 s of being asked to quit");
    }
  }
  drain_pipes();
  if (!(WIFEXITED(wait_status_) && WEXITSTATUS(wait_status_) == 0))
    died("when asked to quit (its exit code or a crash at exit)");
}

}  // namespace khive
