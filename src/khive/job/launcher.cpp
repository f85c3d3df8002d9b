#include "khive/job/launcher.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "khive/job/channel.hpp"
#include "khive/support/files.hpp"
#include "khive/support/hash.hpp"
#include "khive/support/text.hpp"

namespace khive {

namespace {

// ": <the tail of what the judge printed>", or nothing when it printed nothing (the message once ended in ": ").
std::string said(const std::string& err) {
  const std::string t = tail(trim(err), 600);
  return t.empty() ? "" : ": " + t;
}

}  // namespace

std::filesystem::path default_judge_path() { return sibling_executable("KHIVE_JUDGE", "khive-judge"); }
std::filesystem::path default_executor_path() { return sibling_executable("KHIVE_EXEC", "khive-exec"); }

JudgeOutcome launch_judge(const Job& job_in, const JudgeOptions& opt) {
  if (opt.stand_in) return opt.stand_in(job_in);
  JudgeOutcome out;
  Job job = job_in;
  if (job.executor.empty()) job.executor = (opt.executor.empty() ? default_executor_path() : opt.executor).string();

  // Key pipe (read by the judge first) and result channel. Only the judge holds them: the executors it starts
  // inherit neither.
  int keyp[2], chan[2];
  if (::pipe2(keyp, O_CLOEXEC) != 0 || ::pipe2(chan, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("judge: pipe failed: ") + std::strerror(errno));
  std::string key = random_bytes(32);
  if (::write(keyp[1], key.data(), key.size()) != static_cast<ssize_t>(key.size()))
    throw std::runtime_error("judge: could not hand over the channel key");
  ::close(keyp[1]);

  std::map<std::string, std::string> env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}, {"LANG", "C"}};
  for (const char* v : {"HOME", "LD_LIBRARY_PATH", "KHIVE_CACHE", "XDG_CACHE_HOME", "KHIVE_SANDBOX_EXTRA_SYSCALLS",
                        "KHIVE_TRACE_EXCHANGES", "KHIVE_CPU_PIN", "KHIVE_ALLOW_MPS", "KHIVE_EXEC_PRIMER",
                        "KHIVE_EXEC_TRIAL", "KHIVE_EXEC_PROFILER"})
    if (const char* x = std::getenv(v)) env[v] = x;
  if (!opt.cuda_visible_devices.empty())
    env["CUDA_VISIBLE_DEVICES"] = opt.cuda_visible_devices;
  else if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES"))
    env["CUDA_VISIBLE_DEVICES"] = v;

  ProcessSpec spec;
  spec.argv = {(opt.judge.empty() ? default_judge_path() : opt.judge).string(), "--key-fd", "3", "--channel-fd", "4"};
  spec.env = env;
  spec.timeout_s = opt.budget_s > 0 ? opt.budget_s : std::max(600.0, 20 * job.timeout_s);
  spec.capture_limit = 256 << 10;
  spec.stdin_data = nlohmann::json(job).dump();
  spec.pass_fds = {{keyp[0], 3}, {chan[1], 4}};
  spec.cancel = opt.cancel;
  FrameReader reader(key);
  spec.extra_read_fd = chan[0];
  spec.on_extra = [&](const char* d, std::size_t n) { reader.feed(d, n); };
  ProcessResult pr = run_process(spec);
  ::close(keyp[0]);
  ::close(chan[1]);
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
    if (t == "result")
      take_result_frame(out, f);
    else if (t == "progress")
      out.last_progress = f;
  }
  return out;
}

void take_result_frame(JudgeOutcome& o, const nlohmann::json& frame) {
  o.result.reset();
  o.result_problem.clear();
  try {
    o.result = judge_result_from_json(frame);
  } catch (const std::exception& e) {
    o.result_problem = e.what();
  }
}

std::string judge_failure(const JudgeOutcome& o) {
  if (o.result && !o.result->error.empty()) return o.result->error;
  if (!o.result_problem.empty()) return "the judge's result is malformed: " + o.result_problem;
  return o.process.describe();
}

Verdict read_verdict(const JudgeOutcome& o) {
  Verdict v;
  v.log_excerpt = tail(o.process.out + (o.process.err.empty() ? "" : "\n[stderr]\n" + o.process.err), 4000);
  v.judge_seconds = o.seconds;
  auto harness = [&](std::string why, bool retry) {
    v.harness_error = std::move(why);
    v.retryable = retry;
    return v;
  };
  // The channel is the judge's alone; anything else on it means the sandbox failed somewhere: fail closed.
  if (o.tampered) {
    Verdict r =
        reject(Check::run, Reason::channel_tampered, "the judge's result channel was tampered with: " + o.tamper_reason,
               "only the judge writes its channel; an executor reached it, so the kernel escaped its sandbox");
    r.log_excerpt = v.log_excerpt;
    return r;
  }
  if (o.process.start_failed) return harness("could not start khive-judge: " + o.process.err, false);
  if (o.process.cancelled) return harness(std::string(kEvaluationCancelled), false);
  if (o.process.timed_out)
    return harness(fmt::format("the judge ran past its budget of {:.0f} s", o.process.wall_s), false);
  if (o.process.signal)
    return harness("the judge process was " + o.process.describe() + " (killed from outside, or a judge bug)" +
                       said(o.process.err),
                   o.process.signal == SIGKILL);
  if (!o.result_problem.empty()) return harness("the judge's result is malformed: " + o.result_problem, false);
  if (!o.result)
    return harness("the judge ended (" + o.process.describe() + ") without a result" + said(o.process.err), false);
  const JudgeResult& r = *o.result;
  v.preflight = r.preflight;
  v.phases = r.phases;
  if (!r.error.empty()) return harness(r.error, r.retryable);
  v.correctness_calls = r.correctness_calls;
  for (const auto& t : r.timing) {
    WorkloadTiming wt;
    wt.workload = t.workload;
    wt.samples = t.samples_s;
    wt.in_process = t.in_process_s;
    wt.copy = t.copy_s;
    wt.batch = t.batch;
    wt.validated = static_cast<int>(t.validated);
    wt.overhead_s = t.overhead_s;
    wt.gate_s = t.gate_s;
    wt.summary = summarize(wt.samples);
    v.timings.push_back(std::move(wt));
  }
  v.rejection = r.rejection;
  v.accepted = !r.rejection;
  return v;
}

}  // namespace khive
