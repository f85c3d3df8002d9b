// The stable JSON schema (docs/eval-json.md) and the terminal table of `khive eval`.
#include <sstream>

#include <fmt/format.h>

#include "khive/eval/evaluate.hpp"
#include "khive/support/text.hpp"

namespace khive {
namespace {

nlohmann::json opt(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

nlohmann::json summary_json(const std::optional<SampleSummary>& s) {
  if (!s) return nullptr;
  return {{"median_s", s->median},       {"min_s", s->min}, {"p10_s", s->p10}, {"p90_s", s->p90},
          {"rel_spread", s->rel_spread}, {"samples", s->n}};
}

nlohmann::json run_json(const KernelRun& k) {
  nlohmann::json j = {
      {"label", k.label},
      {"source", k.source.string()},
      {"accepted", k.verdict.accepted},
      {"build", {{"ok", k.build.ok}, {"cached", k.build.cached}, {"seconds", k.build.seconds}, {"key", k.build.key}}},
      {"guard_seconds", k.guard_seconds},
      {"judge_seconds", k.verdict.judge_seconds},
      {"golden_seconds", k.golden_seconds},
      {"correctness_calls", k.verdict.correctness_calls},
      {"phases", k.verdict.phases}};
  j["rejection"] = k.verdict.rejection ? k.verdict.rejection->to_json() : nlohmann::json(nullptr);
  nlohmann::json timing = nlohmann::json::array();
  for (const auto& t : k.verdict.timings) {
    timing.push_back({{"workload", t.workload},
                      {"batch", t.batch},
                      {"validated", t.validated},
                      {"samples_s", t.samples},
                      {"in_process_s", t.in_process}});
    if (!t.copy.empty()) timing.back()["copy_s"] = t.copy;  // PyTorch timed as a kernel: what each sample left out
    // The calibration behind the samples: what the judge took off each bracket (scripts/device.sh's primer table).
    timing.back()["overhead_s"] = t.overhead_s;
    timing.back()["gate_s"] = t.gate_s;
  }
  j["timing"] = timing;
  if (!k.verdict.harness_error.empty()) j["harness_error"] = k.verdict.harness_error;
  j["diagnostics"] = k.build.diagnostics;
  return j;
}

std::string rate(const WorkloadReport& w) {
  if (!w.kernel) return "-";
  double t = w.kernel->median;
  if (w.cost.flops > 0 && w.cost.flops / t > 1e9 && w.cost.flops / std::max(w.cost.bytes, 1.0) > 8)
    return fmt::format("{:.1f} TFLOP/s", w.cost.flops / t / 1e12);
  return fmt::format("{:.1f} GB/s", w.cost.bytes / t / 1e9);
}

std::string x(const std::optional<double>& v) { return v ? fmt::format("{:.2f}x", *v) : "-"; }

}  // namespace

nlohmann::json report_json(const EvalReport& r) {
  nlohmann::json j;
  j["schema"] = "khive.eval/1";
  j["task"] = r.task;
  j["task_dir"] = r.task_dir;
  j["kernel"] = r.kernel;
  j["backend"] = r.backend;
  j["device"] = r.device;
  j["seed_base"] = r.seed_base;
  j["seconds"] = r.seconds;
  j["accepted"] = r.accepted();
  if (!r.harness_error.empty()) j["harness_error"] = r.harness_error;
  j["verdict"] = r.candidate.verdict.rejection ? r.candidate.verdict.rejection->to_json() : nlohmann::json(nullptr);
  j["preflight"] = r.preflight;
  j["clocks"] = r.clocks;
  j["profile"] = {{"name", r.profile.name}, {"source", r.profile.source}};
  j["pytorch_baselines"] = r.pytorch_baselines;
  j["golden_seconds"] = r.golden_seconds;
  j["cache_pruned"] = r.cache_pruned.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.cache_pruned);
  j["retried"] = r.retried;
  j["candidate"] = run_json(r.candidate);
  j["reference"] = r.reference ? run_json(*r.reference) : nlohmann::json(nullptr);
  j["baselines"] = nlohmann::json::array();
  for (auto& b : r.baselines) j["baselines"].push_back(run_json(b));
  j["pytorch_run"] = r.pytorch ? run_json(*r.pytorch) : nlohmann::json(nullptr);
  j["workloads"] = nlohmann::json::array();
  for (auto& w : r.workloads) {
    nlohmann::json bl;
    for (auto& [k, s] : w.baselines) bl[k] = summary_json(s);
    j["workloads"].push_back({{"workload", w.workload},
                              {"weight", w.weight},
                              {"flops", w.cost.flops},
                              {"bytes", w.cost.bytes},
                              {"t_sol_s", w.t_sol},
                              {"t_floor_s", w.t_floor},
                              {"kernel", summary_json(w.kernel)},
                              {"reference", summary_json(w.reference)},
                              {"baselines", bl},
                              {"baseline_label", w.baseline_label},
                              {"baseline_s", opt(w.baseline_time)},
                              {"fraction_of_sol", opt(w.fraction_of_sol)},
                              {"speedup_vs_reference", opt(w.speedup_vs_reference)},
                              {"speedup_vs_baseline", w.speedup_vs_baseline},
                              {"pytorch", summary_json(w.pytorch)},
                              {"speedup_vs_pytorch", opt(w.speedup_vs_pytorch)},
                              {"score", opt(w.score)}});
  }
  j["task_score"] = opt(r.task_score);
  j["ab"] = nlohmann::json::array();
  for (auto& a : r.ab)
    j["ab"].push_back({{"workload", a.workload},
                       {"pairs", a.test.pairs},
                       {"ratio", a.test.ratio},
                       {"median_ratio", a.test.median_ratio},
                       {"noise", a.test.noise},
                       {"p_faster", a.test.p_faster},
                       {"p_slower", a.test.p_slower},
                       {"holm_threshold", a.holm_threshold},
                       {"faster", a.faster},
                       {"slower", a.slower},
                       {"events",
                        {{"ratio", a.events.ratio},
                         {"p_faster", a.events.p_faster},
                         {"p_slower", a.events.p_slower},
                         {"valid", a.events.valid}}}});
  j["new_leader"] = r.new_leader ? nlohmann::json(*r.new_leader) : nlohmann::json(nullptr);
  j["ab_decision"] = r.new_leader ? nlohmann::json(r.ab_decision) : nlohmann::json(nullptr);
  j["ab_weighted_ratio"] = r.new_leader ? nlohmann::json(r.ab_weighted_ratio) : nlohmann::json(nullptr);
  return j;
}

std::string report_text(const EvalReport& r) {
  std::ostringstream o;
  o << fmt::format("task {}  kernel {}  backend {}  device {}\n", r.task, r.kernel, r.backend, r.device);
  if (!r.cache_pruned.empty()) o << r.cache_pruned << "\n";
  if (!r.harness_error.empty()) {
    o << "HARNESS ERROR (no verdict on the kernel): " << r.harness_error << "\n";
    return o.str();
  }
  if (r.clocks.is_object())
    o << fmt::format("clocks: SM {} MHz (max {}), memory {} MHz, {} C\n", r.clocks.value("sm_clock_mhz", "?"),
                     r.clocks.value("max_sm_clock_mhz", "?"), r.clocks.value("mem_clock_mhz", "?"),
                     r.clocks.value("temperature_c", "?"));
  if (!r.workloads.empty() && r.candidate.verdict.accepted) {
    o << fmt::format("{:<14} {:>12} {:>7} {:>14} {:>7} {:>10} {:>10} {:>6}\n", "workload", "median", "spread", "rate",
                     "SOL", "vs ref", "vs base", "score");
    for (auto& w : r.workloads) {
      std::string vb = w.baseline_time && w.kernel ? fmt::format("{:.2f}x", *w.baseline_time / w.kernel->median) : "-";
      o << fmt::format("{:<14} {:>12} {:>6.1f}% {:>14} {:>6.1f}% {:>10} {:>10} {:>6}\n", w.workload,
                       w.kernel ? time_text(w.kernel->median) : "-", w.kernel ? w.kernel->rel_spread * 100 : 0.0,
                       rate(w), w.fraction_of_sol ? *w.fraction_of_sol * 100 : 0.0, x(w.speedup_vs_reference), vb,
                       w.score ? fmt::format("{:.3f}", *w.score) : "-");
    }
    o << fmt::format("baseline for the score: {}; T_sol from profile '{}'\n",
                     r.workloads.front().baseline_label.empty() ? "none" : r.workloads.front().baseline_label,
                     r.profile.name);
  }
  auto line = [&](const KernelRun& k) {
    if (k.verdict.accepted) return fmt::format("{:<18} accepted (guard {:.2f} s)\n", k.label, k.guard_seconds);
    if (!k.verdict.harness_error.empty())
      return fmt::format("{:<18} harness error: {}\n", k.label, k.verdict.harness_error);
    auto& j = *k.verdict.rejection;
    return fmt::format("{:<18} REJECTED at check {} ({}): {}\n", k.label, static_cast<int>(j.check),
                       reason_name(j.reason), j.message);
  };
  if (r.reference) o << line(*r.reference);
  for (auto& b : r.baselines) o << line(b);
  for (auto& a : r.ab)
    o << fmt::format(
        "A/B vs leader on {}: {:.3f}x over {} pairs (noise {:.2f}%, signed-rank p faster {:.2g}, slower {:.2g}; {})\n",
        a.workload, a.test.ratio, a.test.pairs, a.test.noise * 100, a.test.p_faster, a.test.p_slower,
        a.faster ? "faster" : (a.slower ? "slower" : "level"));
  if (r.task_score) o << fmt::format("task score: {:.3f}\n", *r.task_score);
  const auto& v = r.candidate.verdict;
  if (v.accepted) {
    o << "verdict: ACCEPTED";
    if (r.new_leader) o << (*r.new_leader ? " — new leader (" : " — backup (") << r.ab_decision << ")";
    o << "\n";
  } else {
    auto& j = *v.rejection;
    o << fmt::format("verdict: REJECTED at check {} ({}): {}\n", static_cast<int>(j.check), check_name(j.check),
                     reason_name(j.reason));
    o << "  " << j.message << "\n";
    if (!j.diagnosis.empty()) o << "  " << j.diagnosis << "\n";
  }
  return o.str();
}

}  // namespace khive
