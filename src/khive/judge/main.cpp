// khive-judge: the trusted half of one evaluation (docs/guard.md). Started by khive with the channel key
// on --key-fd and the job on stdin; answers only through signed frames on --channel-fd. It never loads kernel code:
// kernels (the candidate, the leader, the reference) run in khive-exec processes it starts, sandboxes and stops;
// the judge owns the inputs, the goldens, the plan, the clock and the verdict.
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>
#include <iterator>
#include <string>

#include "khive/job/channel.hpp"
#include "khive/job/protocol.hpp"
#include "khive/job/result.hpp"
#include "khive/judge/calibrate.hpp"
#include "khive/judge/device.hpp"
#include "khive/judge/session.hpp"
#include "khive/task/task.hpp"

namespace {

std::string g_key;
int g_channel = -1;
uint64_t g_seq = 0;

void send(const nlohmann::json& body) {
  std::string frame = khive::encode_frame(g_key, g_seq++, body);
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

std::string read_key(int fd) {
  std::string key;
  char buf[64];
  for (;;) {
    ssize_t r = ::read(fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    key.append(buf, static_cast<std::size_t>(r));
  }
  ::close(fd);
  return key;
}

std::unique_ptr<khive::JudgeDevice> make_device(const std::string& backend) {
  if (backend == "cpu") return khive::make_cpu_judge_device();
#if defined(KHIVE_WITH_CUDA)
  if (backend == "cuda") return khive::make_cuda_judge_device();
  throw std::runtime_error("job: backend '" + backend + "' is not cpu or cuda");
#else
  throw std::runtime_error(backend == "cuda" ? "this khive-judge was built without CUDA"
                                             : "job: backend '" + backend + "' is not cpu or cuda");
#endif
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  // Nothing may read this process's memory: not dumpable, so no ptrace or /proc/<pid>/mem even for its own user.
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  int key_fd = -1;
  for (int i = 1; i + 1 < argc; ++i) {
    std::string a = argv[i];
    if (a == "--key-fd")
      key_fd = std::atoi(argv[++i]);
    else if (a == "--channel-fd")
      g_channel = std::atoi(argv[++i]);
  }
  if (key_fd < 0 || g_channel < 0) {
    std::cerr
        << "khive-judge: started by khive, not by hand (usage: khive-judge --key-fd N --channel-fd M < job.json)\n";
    return 2;
  }
  g_key = read_key(key_fd);
  if (g_key.size() < 16) {
    std::cerr << "khive-judge: no channel key on the key descriptor\n";
    return 2;
  }
  khive::JudgeResult result;
  try {
    std::string in((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    khive::Job job = khive::parse_job(nlohmann::json::parse(in));
    if (job.mode == "calibrate") {
      khive::HardwareProfile p;
#if defined(KHIVE_WITH_CUDA)
      p = job.backend == "cuda" ? khive::calibrate_cuda(0) : khive::calibrate_cpu();
#else
      if (job.backend == "cuda") throw std::runtime_error("this khive was built without CUDA");
      p = khive::calibrate_cpu();
#endif
      result.profile = nlohmann::json::parse(khive::profile_to_json(p));
      send(khive::judge_result_frame(result));
      return 0;
    }
    if (job.mode != "evaluate") throw std::runtime_error("unknown job mode '" + job.mode + "'");
    if (job.inputs_version != khive::kInputsVersion)
      throw std::runtime_error("khive and khive-judge make inputs differently (inputs version " +
                               std::to_string(job.inputs_version) + " vs " + std::to_string(khive::kInputsVersion) +
                               "): use a khive-judge from the same build");
    khive::Task task = khive::load_task(job.task_dir);
    if (!job.perf_workloads.empty()) {
      const auto b = khive::parse_backend(job.backend);
      if (!b) throw std::runtime_error("job: backend '" + job.backend + "' is not cpu or cuda");
      khive::select_perf_workloads(task, job.perf_workloads, *b);  // the orchestrator's selection, the same way
    }
    auto dev = make_device(job.backend);
    nlohmann::json pre = dev->preflight();
    send({{"type", "progress"}, {"check", 0}, {"workload", ""}, {"note", "preflight"}, {"preflight", pre}});
    auto progress = [](khive::Check c, const std::string& w, const std::string& note) {
      send({{"type", "progress"}, {"check", static_cast<int>(c)}, {"workload", w}, {"note", note}});
    };
    khive::Session session(*dev, task, job, progress);
    result = session.run();
    pre["sandbox"] = result.preflight.value("sandbox", nlohmann::json::object());
    result.preflight = pre;
  } catch (const khive::TaskFormatError& e) {
    result.error = std::string("task: ") + e.what();
  } catch (const std::exception& e) {
    result.error = e.what();
  }
  send(khive::judge_result_frame(result));
  return 0;
}
