#include "khive/run/launcher.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "khive/run/channel.hpp"
#include "khive/support/files.hpp"
#include "khive/support/hash.hpp"

namespace khive {

std::filesystem::path default_runner_path() {
  if (const char* r = std::getenv("KHIVE_RUNNER"); r && *r) return r;
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    // Next to khive (bin/), or for test executables deeper in the build tree, in an ancestor's bin/.
    auto dir = self.parent_path();
    for (int up = 0; up < 5 && !dir.empty(); ++up, dir = dir.parent_path()) {
      for (auto p : {dir / "khive-runner", dir / "bin" / "khive-runner"})
        if (std::filesystem::exists(p)) return p;
      if (dir == dir.root_path()) break;
    }
  }
  return "khive-runner";
}

uint64_t current_netns_inode() {
  struct stat st{};
  if (::stat("/proc/self/ns/net", &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_ino);
}

namespace {

int64_t physical_memory() {
  long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page : 0;
}

}  // namespace

RunnerOutcome launch_runner(const Job& job, const RunnerOptions& opt) {
  RunnerOutcome out;
  Job j = job;
  j.orchestrator_netns = current_netns_inode();

  std::filesystem::path scratch_parent = opt.scratch_parent.empty() ? cache_root() / "scratch" : opt.scratch_parent;
  std::filesystem::path scratch = make_temp_dir(scratch_parent, "run");

  // Key pipe (one-shot, read by the runner before any candidate code loads) and result channel.
  int keyp[2], chan[2];
  if (::pipe2(keyp, O_CLOEXEC) != 0 || ::pipe2(chan, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("runner: pipe failed: ") + std::strerror(errno));
  std::string key = random_bytes(32);
  if (::write(keyp[1], key.data(), key.size()) != static_cast<ssize_t>(key.size()))
    throw std::runtime_error("runner: could not hand over the channel key");
  ::close(keyp[1]);

  // Cleared environment: only what the runner needs.
  std::map<std::string, std::string> env = {
      {"PATH", "/usr/local/bin:/usr/bin:/bin"}, {"HOME", scratch.string()}, {"TMPDIR", scratch.string()},
      {"LANG", "C"},                            {"CUDA_CACHE_DISABLE", "1"},
      {"CUDA_MODULE_LOADING", "EAGER"},
  };
  if (!opt.cuda_visible_devices.empty()) env["CUDA_VISIBLE_DEVICES"] = opt.cuda_visible_devices;
  else if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) env["CUDA_VISIBLE_DEVICES"] = v;
  if (const char* l = std::getenv("LD_LIBRARY_PATH")) env["LD_LIBRARY_PATH"] = l;   // CUDA libraries
  int threads = opt.omp_threads > 0 ? opt.omp_threads : static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  env["OMP_NUM_THREADS"] = std::to_string(threads);
  env["OMP_PROC_BIND"] = "false";

  const bool cpu = job.backend == "cpu";
  const bool evaluating = job.mode != "golden" && job.mode != "calibrate";
  const rlim_t as_limit = static_cast<rlim_t>(opt.cpu_memory_limit > 0 ? opt.cpu_memory_limit : physical_memory() / 4 * 3);
  const bool netns = opt.new_netns;
  const rlim_t cpu_seconds = static_cast<rlim_t>(opt.timeout_s > 0 ? opt.timeout_s * 4 + 10 : 0);

  ProcessSpec spec;
  spec.argv = {(opt.runner.empty() ? default_runner_path() : opt.runner).string(), "--key-fd", "3", "--channel-fd", "4"};
  spec.env = env;
  spec.cwd = scratch;
  spec.timeout_s = opt.timeout_s;
  spec.capture_limit = 256 << 10;
  spec.stdin_data = nlohmann::json(j).dump();
  spec.pass_fds = {{keyp[0], 3}, {chan[1], 4}};
  spec.in_child = [=]() {
    // Runs between fork and exec: no allocation. Failures of optional layers are tolerated; the
    // runner reports what it got (network namespace, seccomp) in its preflight.
    rlimit core{0, 0};
    ::setrlimit(RLIMIT_CORE, &core);
    rlimit nofile{1024, 1024};
    ::setrlimit(RLIMIT_NOFILE, &nofile);
    if (cpu_seconds) {
      rlimit c{cpu_seconds, cpu_seconds};
      ::setrlimit(RLIMIT_CPU, &c);
    }
    if (evaluating) {   // a candidate never needs to write a file
      rlimit fs{0, 0};
      ::setrlimit(RLIMIT_FSIZE, &fs);
    }
    if (cpu && as_limit) {   // CUDA reserves huge virtual ranges, so only the CPU backend is capped
      rlimit as{as_limit, as_limit};
      ::setrlimit(RLIMIT_AS, &as);
    }
    if (netns && ::unshare(CLONE_NEWNET) != 0) (void)::unshare(CLONE_NEWUSER | CLONE_NEWNET);
    return true;
  };
  FrameReader reader(key);
  spec.extra_read_fd = chan[0];
  spec.on_extra = [&](const char* d, std::size_t n) { reader.feed(d, n); };

  // The parent must not hold the child's ends open while reading, or EOF never comes: run_process
  // forks, and the child's copies are what it keeps; close ours right after the fork by passing them
  // through pass_fds and closing here once run_process has returned. A pipe with a live writer in
  // this process would never report EOF, so the reading is bounded by the child's life instead.
  ProcessResult pr = run_process(spec);
  ::close(keyp[0]);
  ::close(chan[1]);
  // Drain whatever is left in the channel after the child ended.
  ::fcntl(chan[0], F_SETFL, ::fcntl(chan[0], F_GETFL) | O_NONBLOCK);
  char buf[1 << 16];
  for (;;) {
    ssize_t r = ::read(chan[0], buf, sizeof buf);
    if (r <= 0) break;
    reader.feed(buf, static_cast<std::size_t>(r));
  }
  ::close(chan[0]);
  reader.finish();

  out.process = pr;
  out.seconds = pr.wall_s;
  out.frames = reader.frames();
  out.tampered = reader.tampered();
  out.tamper_reason = reader.tamper_reason();
  for (auto& f : out.frames) {
    std::string t = f.value("type", "");
    if (t == "result") out.result = f;
    else if (t == "progress") out.last_progress = f;
  }
  if (pr.exit_code == kSandboxExit || pr.signal == SIGSYS) {
    out.sandbox_violation = true;
    auto pos = pr.err.find(kSandboxMarker);
    if (pos != std::string::npos) {
      auto start = pos + std::strlen(kSandboxMarker);
      auto end = pr.err.find('\n', start);
      out.forbidden_syscall = pr.err.substr(start, end == std::string::npos ? std::string::npos : end - start);
    }
  }
  if (!opt.keep_scratch) {
    std::error_code ec;
    std::filesystem::remove_all(scratch, ec);
  }
  return out;
}

}  // namespace khive
