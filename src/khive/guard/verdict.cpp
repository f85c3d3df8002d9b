#include "khive/guard/verdict.hpp"

#include <csignal>
#include <cstring>

#include <fmt/format.h>

namespace khive {

nlohmann::json Rejection::to_json() const {
  return {{"check", static_cast<int>(check)}, {"check_name", check_name(check)}, {"reason", reason},
          {"workload", workload}, {"message", message}, {"diagnosis", diagnosis}};
}

const WorkloadTiming* Verdict::timing_for(const std::string& uuid) const {
  for (auto& t : timings)
    if (t.workload == uuid) return &t;
  return nullptr;
}

Verdict reject(Check c, std::string reason, std::string message, std::string diagnosis, std::string workload) {
  Verdict v;
  v.rejection = Rejection{c, std::move(reason), std::move(workload), std::move(message), std::move(diagnosis)};
  return v;
}

namespace {

std::string where(const RunnerOutcome& o) {
  if (!o.last_progress) return "before the runner reported any progress";
  const auto& p = *o.last_progress;
  Check c = static_cast<Check>(p.value("check", 2));
  std::string note = p.value("note", "");
  return fmt::format("during the {} check{}", check_name(c), note.empty() ? "" : " (" + note + ")");
}

std::string tail(const std::string& s, std::size_t n) { return s.size() <= n ? s : "..." + s.substr(s.size() - n); }

}  // namespace

Verdict judge_run(const RunnerOutcome& o) {
  Verdict v;
  std::string log = o.process.out + (o.process.err.empty() ? "" : "\n[stderr]\n" + o.process.err);
  auto finish = [&](Verdict r) {
    r.log_excerpt = tail(log, 4000);
    r.runner_seconds = o.seconds;
    if (o.result && o.result->contains("preflight")) r.preflight = (*o.result)["preflight"];
    else
      for (auto& f : o.frames)
        if (f.contains("preflight")) r.preflight = f["preflight"];
    return r;
  };
  const std::string workload = o.last_progress ? o.last_progress->value("workload", "") : "";
  // Order matters: evidence of tampering outranks anything the (possibly forged) frames say.
  if (o.tampered)
    return finish(reject(Check::run, "channel_tampered", "the result channel was tampered with: " + o.tamper_reason,
                         "a candidate may not write to descriptors it inherits; only the runner's signed frames count", workload));
  if (o.sandbox_violation)
    return finish(reject(Check::run, "sandbox_violation",
                         fmt::format("killed by the sandbox for a forbidden system call ({}) {}",
                                     o.forbidden_syscall.empty() ? "unknown" : o.forbidden_syscall, where(o)),
                         "kernels may not open files for writing, use the network, or start processes", workload));
  if (o.process.timed_out)
    return finish(reject(Check::run, "timeout", fmt::format("no result after {:.0f} s {}; the watchdog killed it", o.process.wall_s, where(o)),
                         "a hang (an endless loop, a deadlock, a kernel that never finishes) or a far too slow kernel", workload));
  if (o.process.signal) {
    int s = o.process.signal;
    std::string reason = s == SIGABRT ? "abort" : (s == SIGXFSZ ? "sandbox_violation" : (s == SIGXCPU ? "timeout" : "crash"));
    std::string what = s == SIGXFSZ ? "it tried to write a file" : o.process.describe();
    return finish(reject(Check::run, reason, fmt::format("the runner process was {} {}", what, where(o)),
                         tail(o.process.err, 1500), workload));
  }
  if (o.process.start_failed) {
    v.harness_error = "could not start khive-runner: " + o.process.err;
    return finish(v);
  }
  if (!o.result)
    return finish(reject(Check::run, "crash",
                         fmt::format("the runner ended ({}) without a result {}", o.process.describe(), where(o)),
                         "the candidate ended the process (exit, quick_exit) or corrupted it: " + tail(o.process.err, 1000), workload));
  const auto& r = *o.result;
  if (r.contains("error") && r["error"].is_string()) {
    v.harness_error = r["error"].get<std::string>();
    return finish(v);
  }
  if (r.contains("phases") && r["phases"].is_object())
    for (auto& [k, val] : r["phases"].items())
      if (val.is_number()) v.phases[k] = val.get<double>();
  if (r.contains("failure") && r["failure"].is_object()) {
    const auto& f = r["failure"];
    return finish(reject(static_cast<Check>(f.value("check", 2)), f.value("reason", "unknown"), f.value("message", ""),
                         f.value("diagnosis", ""), f.value("workload", "")));
  }
  v.accepted = true;
  for (auto& c : r.value("correctness", nlohmann::json::array())) v.correctness_calls += c.value("calls", 0);
  for (auto& t : r.value("timing", nlohmann::json::array())) {
    WorkloadTiming wt;
    wt.workload = t.value("workload", "");
    wt.samples = t.value("samples_s", std::vector<double>{});
    wt.summary = summarize(wt.samples);
    wt.validated = t.value("validated", 0);
    wt.drain_median_s = summarize(t.value("drain_s", std::vector<double>{})).median;
    v.timings.push_back(std::move(wt));
  }
  return finish(v);
}

void apply_plausibility(Verdict& v, const std::map<std::string, double>& floor_s) {
  if (!v.accepted) return;
  for (const auto& t : v.timings) {
    auto it = floor_s.find(t.workload);
    if (it == floor_s.end() || it->second <= 0) continue;
    if (t.summary.median < it->second) {
      v.accepted = false;
      v.rejection = Rejection{Check::plausibility, "faster_than_sol", t.workload,
                              fmt::format("workload {}: median {:.3g} s is below the speed-of-light floor {:.3g} s", t.workload,
                                          t.summary.median, it->second),
                              "a time no hardware can reach is a measurement fault (work escaped the timer, results were "
                              "cached, or the cost formula undercounts)"};
      return;
    }
  }
}

}  // namespace khive
