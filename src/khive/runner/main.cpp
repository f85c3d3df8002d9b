// khive-runner: one fresh, sandboxed process per candidate. Reads the channel key from --key-fd (then
// closes it), the job from stdin, and answers only through signed frames on --channel-fd.
#include <chrono>
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>
#include <iterator>
#include <string>

#include "khive/run/channel.hpp"
#include "khive/run/protocol.hpp"
#include "khive/runner/calibrate.hpp"
#include "khive/runner/device.hpp"
#include "khive/runner/sandbox.hpp"
#include "khive/runner/session.hpp"
#include "khive/score/score.hpp"
#include "khive/task/task.hpp"

namespace {

using khive::Check;
using khive::EntryFn;
const auto g_started = std::chrono::steady_clock::now();   // set at load time: the process's start

// The key lives in its own page, readable only while a frame is being signed.
struct KeyPage {
  char* page = nullptr;
  std::size_t len = 0;
  void load(int fd) {
    std::string key;
    char buf[64];
    for (;;) {
      ssize_t r = ::read(fd, buf, sizeof buf);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      key.append(buf, static_cast<std::size_t>(r));
    }
    ::close(fd);
    if (key.size() < 16) throw std::runtime_error("no channel key on the key descriptor");
    page = static_cast<char*>(::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (page == MAP_FAILED) throw std::runtime_error("mmap for the key failed");
    std::memcpy(page, key.data(), key.size());
    len = key.size();
    ::mprotect(page, 4096, PROT_NONE);
  }
  std::string get() {
    ::mprotect(page, 4096, PROT_READ);
    std::string k(page, len);
    ::mprotect(page, 4096, PROT_NONE);
    return k;
  }
};

KeyPage g_key;
int g_channel = -1;
uint64_t g_seq = 0;

void send(const nlohmann::json& body) {
  std::string frame = khive::encode_frame(g_key.get(), g_seq++, body);
  std::size_t off = 0;
  while (off < frame.size()) {
    ssize_t w = ::write(g_channel, frame.data() + off, frame.size() - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      ::_exit(3);
    }
    off += static_cast<std::size_t>(w);
  }
}

khive::EntryFn load_entry(const std::string& path) {
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) throw khive::CallFault("load_error", std::string("cannot load ") + path + ": " + ::dlerror());
  auto abi = static_cast<const char*>(::dlsym(h, "khive_abi"));
  if (!abi || std::strcmp(abi, "khive-entry-v1") != 0)
    throw khive::CallFault("load_error", path + ": not built by khive (no khive_abi marker)");
  auto f = reinterpret_cast<khive::EntryFn>(::dlsym(h, "khive_entry"));
  if (!f) throw khive::CallFault("load_error", path + ": no khive_entry symbol");
  return f;
}

uint64_t netns_inode() {
  struct stat st{};
  return ::stat("/proc/self/ns/net", &st) == 0 ? static_cast<uint64_t>(st.st_ino) : 0;
}

}  // namespace

int main(int argc, char** argv) {
  // A write to a closed pipe must fail with EPIPE, not kill the runner (and hide what happened).
  std::signal(SIGPIPE, SIG_IGN);
  int key_fd = -1;
  for (int i = 1; i + 1 < argc; ++i) {
    std::string a = argv[i];
    if (a == "--key-fd") key_fd = std::atoi(argv[++i]);
    else if (a == "--channel-fd") g_channel = std::atoi(argv[++i]);
  }
  if (key_fd < 0 || g_channel < 0) {
    std::cerr << "khive-runner: started by khive, not by hand (usage: khive-runner --key-fd N --channel-fd M < job.json)\n";
    return 2;
  }
  try {
    g_key.load(key_fd);
  } catch (const std::exception& e) {
    std::cerr << "khive-runner: " << e.what() << "\n";
    return 2;
  }
  nlohmann::json result = {{"type", "result"}};
  try {
    std::string in((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    khive::Job job = nlohmann::json::parse(in).get<khive::Job>();
    auto progress = [](Check c, const std::string& w, const std::string& note) {
      send({{"type", "progress"}, {"check", static_cast<int>(c)}, {"workload", w}, {"note", note}});
    };

    if (job.mode == "calibrate") {
      khive::HardwareProfile p;
#if defined(KHIVE_WITH_CUDA)
      p = job.backend == "cuda" ? khive::calibrate_cuda(0) : khive::calibrate_cpu();
#else
      if (job.backend == "cuda") throw std::runtime_error("this khive was built without CUDA");
      p = khive::calibrate_cpu();
#endif
      result["profile"] = nlohmann::json::parse(khive::profile_to_json(p));
      send(result);
      return 0;
    }

    if (job.inputs_version != khive::kInputsVersion)
      throw std::runtime_error("khive and khive-runner make inputs differently (inputs version " + std::to_string(job.inputs_version) +
                               " vs " + std::to_string(khive::kInputsVersion) + "): use a khive-runner from the same build");
    khive::Task task = khive::load_task(job.task_dir);
    if (!job.perf_workloads.empty()) {
      const auto b = khive::parse_backend(job.backend);
      if (!b) throw std::runtime_error("job: backend '" + job.backend + "' is not cpu or cuda");
      khive::select_perf_workloads(task, job.perf_workloads, *b);   // the orchestrator's selection, the same way
    }
    std::unique_ptr<khive::Device> dev;
    if (job.backend == "cpu") {
      dev = khive::make_cpu_device();
    } else {
#if defined(KHIVE_WITH_CUDA)
      dev = khive::make_cuda_device();
#else
      throw khive::CallFault("no_device", "this khive-runner was built without CUDA");
#endif
    }
    nlohmann::json pre = dev->preflight();
    pre["netns_isolated"] = job.orchestrator_netns != 0 && netns_inode() != job.orchestrator_netns;
    std::string sc;
    if (job.seccomp) {
      auto level = job.mode == "golden" ? khive::SandboxLevel::golden
                                        : (job.backend == "cuda" ? khive::SandboxLevel::cuda : khive::SandboxLevel::cpu);
      sc = khive::install_seccomp(level);
    }
    pre["seccomp"] = job.seccomp && sc.empty();
    if (!sc.empty()) pre["seccomp_error"] = sc;
    result["preflight"] = pre;
    send({{"type", "progress"}, {"check", 0}, {"workload", ""}, {"note", "preflight"}, {"preflight", pre}});

    // Candidate code runs from here on (its static constructors run inside dlopen).
    khive::Session session(*dev, task, job, progress);
    auto since = [](std::chrono::steady_clock::time_point t) {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    };
    double startup_s = since(g_started);
    auto t_load = std::chrono::steady_clock::now();
    EntryFn lead = job.mode == "ab" ? load_entry(job.leader_library) : nullptr;
    EntryFn entry = load_entry(job.library);
    double load_s = since(t_load);
    nlohmann::json body;
    if (job.mode == "golden") body = session.run_golden(entry);
    else if (job.mode == "evaluate") body = session.run_evaluate(entry);
    else if (job.mode == "ab") body = session.run_ab(lead, entry);
    else throw std::runtime_error("unknown job mode '" + job.mode + "'");
    result.update(body);
    nlohmann::json ph = session.phases();
    ph["startup"] = startup_s;   // process start to the first line of the session: task, device, sandbox
    ph["load_library"] = load_s; // dlopen of the candidate (its static constructors included)
    result["phases"] = ph;
  } catch (const khive::CallFault& e) {
    result["failure"] = {{"check", static_cast<int>(Check::run)}, {"check_name", "run"}, {"reason", e.reason},
                         {"workload", ""}, {"message", e.what()}, {"diagnosis", ""}};
  } catch (const khive::TaskFormatError& e) {
    result["error"] = std::string("task: ") + e.what();
  } catch (const std::exception& e) {
    result["error"] = e.what();
  }
  send(result);
  return 0;
}
