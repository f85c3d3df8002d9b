// `khive bench`: the suite leaderboard (bench.hpp, docs/bench.md).
#include "khive/suite/bench.hpp"

#include "khive/job/input_keys.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <ctime>
#include <iostream>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "khive/eval/pytorch_baselines.hpp"
#include "khive/guard/stats.hpp"
#include "khive/support/files.hpp"
#include "khive/support/interrupt.hpp"
#include "khive/support/text.hpp"

namespace khive {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string verdict_text(const KernelRun& k) {
  if (!k.verdict.harness_error.empty()) return "error: " + k.verdict.harness_error;
  if (k.verdict.accepted) return "accepted";
  if (!k.verdict.rejection) return "rejected";
  const auto& j = *k.verdict.rejection;
  return fmt::format("rejected at check {} ({}): {}", static_cast<int>(j.check), reason_name(j.reason), j.message);
}

// The impl for a kernel run, its times taken from the run's own verdict (perf workloads of the row only).
BenchImpl impl_from_run(const KernelRun& k, std::string label, std::string kind, const std::vector<BenchWorkload>& ws) {
  BenchImpl m;
  m.label = std::move(label);
  m.kind = std::move(kind);
  m.source = k.source.string();
  m.accepted = k.verdict.accepted;
  m.verdict = verdict_text(k);
  if (m.accepted)
    for (const auto& w : ws)
      if (auto* t = k.verdict.timing_for(w.workload)) m.times[w.workload] = t->summary;
  return m;
}

// count_baselines: the evaluation that timed the vendor baselines and PyTorch (the reference's): their judges' time
// too. PyTorch's run is its own judge unless PyTorch was the kernel under test (a task with no native reference).
// The report's golden_seconds is the reference's build plus the candidate judge's golden runs: the build is counted
// with the builds, and every judge's golden runs (part of its judge seconds) as "of which goldens".
void add_time(BenchRow& row, const EvalReport& r, bool count_baselines, bool pytorch_was_candidate = false) {
  row.build_s += std::max(0.0, r.golden_seconds - r.candidate.golden_seconds);
  auto runs = std::vector<const KernelRun*>{&r.candidate};
  if (count_baselines) {
    for (auto& b : r.baselines) runs.push_back(&b);
    if (r.pytorch && !pytorch_was_candidate) runs.push_back(&*r.pytorch);
  }
  for (auto* k : runs) {
    row.build_s += k->build.seconds;
    row.runner_s += k->verdict.judge_seconds;
    row.golden_s += k->golden_seconds;
  }
}

// "1.234 ms (45%)": an impl's mean time with its fraction of SOL; "-" when it has none.
std::string cell(const BenchImpl* m) {
  if (!m) return "-";
  if (!m->accepted) return m->kind == "pytorch" ? "error" : "REJECTED";
  if (!m->gmean_s) return "incomplete";
  return m->fraction_of_sol ? fmt::format("{} ({:.0f}%)", time_text(*m->gmean_s), *m->fraction_of_sol * 100)
                            : time_text(*m->gmean_s);
}

std::string verdicts(const BenchRow& row) {
  if (!row.error.empty()) return "ERROR: " + row.error.substr(0, row.error.find('\n'));
  std::vector<std::string> parts;
  int cands = 0, cands_ok = 0;
  for (const auto& m : row.impls) {
    if (m.kind == "candidate") {
      ++cands;
      cands_ok += m.accepted;
      if (!m.accepted)
        parts.push_back(
            fmt::format("{} {}", m.label.substr(m.label.find(':') + 1), m.verdict.substr(0, m.verdict.find(':'))));
    } else if (m.kind != "pytorch" && !m.accepted) {
      parts.push_back(fmt::format("{} {}", m.label, m.verdict.substr(0, m.verdict.find(':'))));
    }
  }
  std::string s = parts.empty() && cands == 0 ? "ok" : "";
  if (cands) s = fmt::format("{}/{} candidates accepted", cands_ok, cands);
  for (auto& p : parts) s += (s.empty() ? "" : "; ") + p;
  return s;
}

// DIR/<task name>/ or, when there is none, DIR/<task directory name>/ (sol/rope's task is named rope_bf16).
std::vector<std::filesystem::path> candidate_files(const std::filesystem::path& kernels, const Task& task,
                                                   const std::filesystem::path& dir, const std::string& ext) {
  auto kdir = kernels / task.name;
  if (!std::filesystem::is_directory(kdir)) kdir = kernels / dir.filename();
  std::vector<std::filesystem::path> files;
  if (std::filesystem::is_directory(kdir))
    for (const auto& e : std::filesystem::directory_iterator(kdir))
      if (e.is_regular_file() && e.path().extension() == ext) files.push_back(std::filesystem::absolute(e.path()));
  std::sort(files.begin(), files.end());
  return files;
}

bool selected(const std::set<std::string>& only, const std::filesystem::path& dir, const std::string& name) {
  return only.empty() || only.count(name) || only.count(dir.filename().string());
}

// Builds every source the run will evaluate, jobs at a time, so that the evaluations (which build one
// after another) find them in the cache. Build failures are not reported here: the evaluation reports them.
int prebuild(const std::vector<std::filesystem::path>& dirs, const BenchOptions& o, const std::set<std::string>& only,
             const std::string& ext) {
  std::vector<std::pair<std::shared_ptr<const Task>, std::filesystem::path>> work;
  for (const auto& dir : dirs) {
    std::shared_ptr<Task> task;
    try {
      task = std::make_shared<Task>(load_task(dir));
    } catch (const std::exception&) {
      continue;  // the row reports it
    }
    if (!selected(only, dir, task->name)) continue;
    if (auto ref = task->reference_for(o.eval.backend)) work.emplace_back(task, *ref);
    auto vendor = std::make_shared<Task>(baseline_task(*task));  // as evaluate_kernel builds baselines
    for (const auto& b : task->baselines)
      if (b.extension() == ext) work.emplace_back(vendor, b);
    if (o.kernels)
      for (const auto& f : candidate_files(*o.kernels, *task, dir, ext)) work.emplace_back(task, f);
  }
  BuildOptions bo = o.eval.build;
  bo.backend = o.eval.backend;
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i; (i = next++) < work.size();) {
      try {
        build_candidate(*work[i].first, work[i].second, bo);
      } catch (const std::exception&) {  // the evaluation builds it again and reports the error
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < std::max(1, o.build_jobs); ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  return static_cast<int>(work.size());
}

}  // namespace

const BenchImpl* BenchRow::find(const std::string& kind) const {
  for (const auto& m : impls)
    if (m.kind == kind) return &m;
  return nullptr;
}

bool BenchReport::failed() const {
  for (const auto& r : rows) {
    if (!r.error.empty()) return true;
    if (auto* ref = r.find("reference"); !ref || !ref->accepted) return true;
  }
  return false;
}

void finish_row(BenchRow& row) {
  for (auto& m : row.impls) {
    m.gmean_s = m.fraction_of_sol = m.score = std::nullopt;
    if (!m.accepted || row.workloads.empty()) continue;
    double wsum = 0, log_t = 0, log_f = 0;
    bool complete = true, sol = true;
    std::vector<WorkloadScoreInput> in;
    for (const auto& w : row.workloads) {
      auto it = m.times.find(w.workload);
      if (it == m.times.end() || !(it->second.median > 0)) {
        complete = false;
        break;
      }
      double t = it->second.median;
      wsum += w.weight;
      log_t += w.weight * std::log(t);
      if (w.t_sol > 0)
        log_f += w.weight * std::log(w.t_sol / t);
      else
        sol = false;
      in.push_back({w.weight, true, t, w.t_sol_score > 0 ? w.t_sol_score : w.t_sol, w.t_b});
    }
    if (!complete || wsum <= 0) continue;
    m.gmean_s = std::exp(log_t / wsum);
    if (sol) m.fraction_of_sol = std::exp(log_f / wsum);
    m.score = task_score(in);
  }
  auto fastest = [&](const std::string& kind) {
    int best = -1;
    for (int i = 0; i < static_cast<int>(row.impls.size()); ++i) {
      const auto& m = row.impls[static_cast<std::size_t>(i)];
      if (m.kind == kind && m.gmean_s && (best < 0 || *m.gmean_s < *row.impls[static_cast<std::size_t>(best)].gmean_s))
        best = i;
    }
    return best;
  };
  row.best_vendor = fastest("vendor");
  row.best_candidate = fastest("candidate");
}

namespace {

// The reference of one task through its own guard, with the vendor baselines timed in the same evaluation: the
// row's workloads (T_b as the evaluation picked it) and its reference, PyTorch and vendor entries. Throws on a
// harness error (the row's error).
EvalReport bench_reference(BenchReport& rep, BenchRow& row, const Task& task, const EvalOptions& eo) {
  auto ref = task.reference_for(eo.backend);
  EvalOptions ro = eo;
  ro.time_reference = false;
  ro.time_baselines = true;
  ro.measured = nullptr;
  // A task whose only reference is PyTorch: that reference, timed by the judge as a kernel, is the row's reference
  // and its PyTorch entry (and T_b).
  if (!ref && task.pytorch_reference.empty())
    throw std::runtime_error(fmt::format("no {} reference and no PyTorch reference", rep.backend));
  ro.candidate_pytorch = !ref;
  EvalReport rr = evaluate_kernel(task, ref ? *ref : std::filesystem::path("pytorch"), ro);
  add_time(row, rr, true, ro.candidate_pytorch);
  if (!rr.harness_error.empty()) throw std::runtime_error(rr.harness_error);
  if (rep.device.empty()) {
    rep.device = rr.device;
    rep.clocks = rr.clocks;
    rep.profile = rr.profile.name;
  }
  if (rep.pytorch.is_null() && !rr.pytorch_baselines.is_null()) rep.pytorch = rr.pytorch_baselines;
  for (const auto& w : rr.workloads) {
    BenchWorkload bw{w.workload, w.weight, w.cost.flops, w.cost.bytes, w.t_sol, std::nullopt, ""};
    bw.t_sol_score = w.t_floor;  // the datasheet roofline scores (issue 14); t_sol stays for "% of SOL"
    // T_b as the evaluation picked it, except that the reference (here the evaluated kernel) stands in
    // only when neither PyTorch nor a vendor baseline has a time.
    if (w.pytorch || !w.baselines.empty()) {
      bw.t_b = w.baseline_time;
      bw.t_b_label = w.baseline_label;
    } else if (w.kernel) {
      bw.t_b = w.kernel->median;
      bw.t_b_label = "reference";
    }
    row.workloads.push_back(bw);
  }
  row.impls.push_back(impl_from_run(rr.candidate, "reference", "reference", row.workloads));
  // Each entry's seconds: its own judge (and build); the evaluation's other runs are the entries below.
  row.impls.back().seconds = rr.candidate.verdict.judge_seconds + rr.candidate.build.seconds;
  // PyTorch: timed by the judge (its run's verdict), else the suite's numbers for this device when it has them.
  BenchImpl pt;
  pt.label = pt.kind = "pytorch";
  if (rr.pytorch && !ro.candidate_pytorch) pt.seconds = rr.pytorch->verdict.judge_seconds;
  for (const auto& w : rr.workloads)
    if (w.pytorch) pt.times[w.workload] = *w.pytorch;
  const std::string judge_failed = rr.pytorch && !rr.pytorch->verdict.accepted ? verdict_text(*rr.pytorch) : "";
  if (pt.times.empty() && !judge_failed.empty()) {
    pt.source = "timed by the judge";
    pt.verdict = judge_failed;  // shown as "error"; bench.json says why
    row.impls.push_back(pt);
  } else if (!pt.times.empty()) {
    pt.accepted = true;
    pt.verdict =
        judge_failed.empty() ? "measured" : "measured (the file's numbers; the judge's run: " + judge_failed + ")";
    pt.source = rr.pytorch_baselines.value("ruler", "") == "judge"
                    ? "timed by the judge, torch " + rr.pytorch_baselines.value("torch", "")
                    : rr.pytorch_baselines.value("file", "");
    row.impls.push_back(pt);
  }
  for (const auto& b : rr.baselines) {
    row.impls.push_back(impl_from_run(b, b.label, "vendor", row.workloads));
    row.impls.back().seconds = b.verdict.judge_seconds + b.build.seconds;
  }
  return rr;
}

// One candidate file through the guard (the reference's and vendors' runs reused from `measured`), A/B-timed
// against each of ab_vendors when it is accepted.
BenchImpl bench_candidate(BenchRow& row, const Task& task, const std::filesystem::path& f, const EvalOptions& eo,
                          const std::shared_ptr<MeasuredRuns>& measured,
                          const std::vector<const KernelRun*>& ab_vendors) {
  EvalOptions co = eo;
  co.measured = measured;
  std::string label = "candidate:" + f.filename().string();
  // The first vendor's A/B rides on the candidate's own evaluation (check 11 with the vendor as the
  // leader); any further vendor takes an evaluation of its own.
  if (!ab_vendors.empty()) {
    co.leader = ab_vendors.front()->source;
    co.leader_is_vendor = true;
  }
  EvalReport cr = evaluate_kernel(task, f, co);
  add_time(row, cr, false);
  BenchImpl m = impl_from_run(cr.candidate, label, "candidate", row.workloads);
  if (cr.ab_failed && cr.candidate.verdict.accepted) {
    m.ab_error = cr.harness_error;  // the candidate's own checks and times stand
  } else if (!cr.harness_error.empty()) {
    m.accepted = false;
    m.verdict = "error: " + cr.harness_error;
    m.times.clear();
  }
  if (m.accepted && !ab_vendors.empty()) {
    auto record = [&](const KernelRun& vendor, const EvalReport& er) {
      for (const auto& a : er.ab) m.ab[vendor.label][a.workload] = a;
      if (!er.harness_error.empty() && m.ab_error.empty()) m.ab_error = er.harness_error;
    };
    record(*ab_vendors.front(), cr);
    for (std::size_t v = 1; v < ab_vendors.size(); ++v) {
      EvalOptions vo = co;
      vo.leader = ab_vendors[v]->source;
      EvalReport vr = evaluate_kernel(task, f, vo);
      add_time(row, vr, false);
      record(*ab_vendors[v], vr);
    }
  }
  m.seconds = cr.seconds;
  return m;
}

// Every candidate of the task under --kernels, each one's failure its own row entry.
void bench_candidates(BenchRow& row, const Task& task, const std::filesystem::path& dir, const BenchOptions& o,
                      const EvalOptions& eo, const EvalReport& rr, const std::string& ext) {
  auto files = candidate_files(*o.kernels, task, dir, ext);
  auto measured = std::make_shared<MeasuredRuns>();
  measured->reference = rr.candidate;
  measured->reference->label = "reference";
  measured->baselines = rr.baselines;
  measured->pytorch = rr.pytorch;
  // The vendors a candidate is A/B-timed against (--ab-vendor): the accepted ones.
  std::vector<const KernelRun*> ab_vendors;
  if (o.ab_vendor)
    for (const auto& b : rr.baselines)
      if (b.verdict.accepted) ab_vendors.push_back(&b);
  for (const auto& f : files) {
    try {
      row.impls.push_back(bench_candidate(row, task, f, eo, measured, ab_vendors));
    } catch (const std::exception& e) {  // one kernel's failure is its row entry; the run goes on
      BenchImpl m;
      m.label = "candidate:" + f.filename().string();
      m.kind = "candidate";
      m.source = f.string();
      m.verdict = std::string("error: ") + e.what();
      row.impls.push_back(std::move(m));
    }
  }
}

}  // namespace

BenchReport run_bench(const std::filesystem::path& suite, const BenchOptions& o,
                      const std::function<void(const BenchRow&)>& on_row) {
  auto t_all = Clock::now();
  BenchReport rep;
  rep.suite = suite.string();
  rep.backend = std::string(backend_name(o.eval.backend));
  rep.date = utc_now("%Y-%m-%dT%H:%M:%SZ");
  EvalOptions eo = o.eval;
  // One seed base and one input secret for the whole run: every kernel of a task sees the same inputs, so goldens
  // are made once. The secret is random unless --seed asks for a reproducible bench (whose inputs anyone who knows
  // the seed can predict).
  if (!eo.input_secret)
    eo.input_secret = eo.seed ? InputSecret::reproducible(*eo.seed).hex() : InputSecret::random().hex();
  rep.seed_base = eo.seed ? *eo.seed : (std::random_device{}() & 0xffffffffu) << 8;
  eo.seed = rep.seed_base;
  const std::string ext = o.eval.backend == Backend::cuda ? ".cu" : ".cpp";
  std::set<std::string> only(o.only.begin(), o.only.end()), seen;
  const auto dirs = find_tasks(suite);
  if (o.build_jobs > 1) {
    auto tb = Clock::now();
    rep.prebuilt = prebuild(dirs, o, only, ext);
    rep.prebuild_s = since(tb);
  }

  for (const auto& dir : dirs) {
    if (o.stop && o.stop->load()) {
      rep.partial = true;  // the tasks not started are not listed
      break;
    }
    BenchRow row;
    row.dir = dir.string();
    row.task = dir.filename().string();
    auto t0 = Clock::now();
    auto finish = [&] {
      row.seconds = since(t0);
      finish_row(row);
      if (on_row) on_row(row);
      rep.rows.push_back(std::move(row));
      if (o.on_progress) {
        rep.seconds = since(t_all);
        rep.partial = true;
        o.on_progress(rep);
        rep.partial = false;
      }
    };
    Task task;
    try {
      task = load_task(dir);
      row.task = task.name;
    } catch (const std::exception& e) {
      if (!only.empty() && !only.count(row.task)) continue;
      row.error = e.what();
      finish();
      continue;
    }
    if (!selected(only, dir, task.name)) continue;
    seen.insert(task.name);
    seen.insert(dir.filename().string());
    try {
      if (!o.perf_workloads.empty()) select_perf_workloads(task, o.perf_workloads, o.eval.backend);  // throws: no match
      const EvalReport rr = bench_reference(rep, row, task, eo);
      if (o.kernels) bench_candidates(row, task, dir, o, eo, rr, ext);
    } catch (const std::exception& e) {
      row.error = e.what();
    }
    finish();
  }
  for (const auto& name : o.only)
    if (!seen.count(name) && !rep.partial) {
      BenchRow row;
      row.task = name;
      row.error = "no such task in " + suite.string();
      if (on_row) on_row(row);
      rep.rows.push_back(row);
    }
  rep.seconds = since(t_all);
  return rep;
}

// ---------------------------------------------------------------- output

std::string bench_table_header() {
  return fmt::format("{:<24} {:>20} {:>20} {:>28} {:>34} {:>6}  {}\n", "task", "reference", "pytorch", "vendor",
                     "best candidate", "score", "verdicts");
}

std::string bench_row_line(const BenchRow& row) {
  const BenchImpl* v =
      row.best_vendor >= 0 ? &row.impls[static_cast<std::size_t>(row.best_vendor)] : row.find("vendor");
  const BenchImpl* c =
      row.best_candidate >= 0 ? &row.impls[static_cast<std::size_t>(row.best_candidate)] : row.find("candidate");
  std::string vs = v ? v->label.substr(v->label.find(':') + 1) + " " + cell(v) : "-";
  std::string cs = c ? c->label.substr(c->label.find(':') + 1) + " " + cell(c) : "-";
  std::string score = c && c->score ? fmt::format("{:.3f}", *c->score) : "-";
  return fmt::format("{:<24} {:>20} {:>20} {:>28} {:>34} {:>6}  {}\n", row.task, cell(row.find("reference")),
                     cell(row.find("pytorch")), vs, cs, score, verdicts(row));
}

nlohmann::json bench_json(const BenchReport& r) {
  auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json j = {{"schema", "khive.bench/1"}, {"suite", r.suite},
                      {"backend", r.backend},      {"device", r.device},
                      {"command", r.command},      {"date", r.date},
                      {"profile", r.profile},      {"clocks", r.clocks},
                      {"pytorch", r.pytorch},      {"seed_base", r.seed_base},
                      {"seconds", r.seconds},      {"prebuild", {{"seconds", r.prebuild_s}, {"sources", r.prebuilt}}},
                      {"partial", r.partial}};
  j["rows"] = nlohmann::json::array();
  for (const auto& row : r.rows) {
    nlohmann::json jr = {{"task", row.task}, {"dir", row.dir}, {"seconds", row.seconds}};
    jr["error"] = row.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(row.error);
    jr["time"] = {{"builds_s", row.build_s},
                  {"goldens_s", row.golden_s},
                  {"runner_s", row.runner_s},
                  {"other_s", std::max(0.0, row.seconds - row.build_s - row.runner_s)}};
    jr["workloads"] = nlohmann::json::array();
    for (const auto& w : row.workloads)
      jr["workloads"].push_back({{"workload", w.workload},
                                 {"weight", w.weight},
                                 {"flops", w.flops},
                                 {"bytes", w.bytes},
                                 {"t_sol_s", w.t_sol},
                                 {"t_sol_score_s", w.t_sol_score},
                                 {"t_b_s", opt(w.t_b)},
                                 {"t_b_label", w.t_b_label}});
    jr["impls"] = nlohmann::json::array();
    for (const auto& m : row.impls) {
      nlohmann::json t = nlohmann::json::object();
      for (const auto& [uuid, s] : m.times)
        t[uuid] = {{"median_s", s.median}, {"rel_spread", s.rel_spread}, {"samples", s.n}};
      nlohmann::json impl = {{"label", m.label},          {"kind", m.kind},
                             {"source", m.source},        {"accepted", m.accepted},
                             {"verdict", m.verdict},      {"times", t},
                             {"gmean_s", opt(m.gmean_s)}, {"fraction_of_sol", opt(m.fraction_of_sol)},
                             {"score", opt(m.score)},     {"seconds", m.seconds}};
      if (!m.ab.empty() || !m.ab_error.empty()) {
        nlohmann::json ab = nlohmann::json::object();
        for (const auto& [vendor, per] : m.ab)
          for (const auto& [uuid, a] : per)
            ab[vendor][uuid] = {{"vendor_over_this", a.test.ratio},
                                {"noise", a.test.noise},
                                {"p_faster", a.test.p_faster},
                                {"p_slower", a.test.p_slower},
                                {"pairs", a.test.pairs},
                                {"faster", a.faster},
                                {"slower", a.slower}};
        impl["ab"] = ab;
        impl["ab_error"] = m.ab_error.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.ab_error);
      }
      jr["impls"].push_back(impl);
    }
    auto label = [&](int i) {
      return i >= 0 ? nlohmann::json(row.impls[static_cast<std::size_t>(i)].label) : nlohmann::json(nullptr);
    };
    jr["best_vendor"] = label(row.best_vendor);
    jr["best_candidate"] = label(row.best_candidate);
    j["rows"].push_back(jr);
  }
  return j;
}

static std::string ab_verdict(const AbReport& a) {
  if (a.faster) return "faster";
  if (a.slower) return "slower";
  return "within noise";
}

std::string bench_ab_markdown(const BenchReport& r) {
  std::ostringstream o;
  bool any = false;
  for (const auto& row : r.rows)
    for (const auto& m : row.impls) {
      if (m.ab.empty() && m.ab_error.empty()) continue;
      if (!any)
        o << "\n## Interleaved A/B against the vendor baselines\n\n"
             "Each candidate and the vendor baseline timed in pairs on the same inputs, each in its own executor under "
             "one judge, "
             "the order inside a pair drawn at random (the guard's check 11, the vendor as A): T_vendor / T_candidate "
             "is the "
             "Hodges-Lehmann estimate of the per-pair ratio, above 1 when the candidate is faster; noise is the pairs' "
             "relative "
             "spread (1.4826 MAD of the log-ratios); p is the exact signed-rank p-value of 'faster', and the verdict "
             "is the "
             "guard's (Holm over the task's workloads, 1 % minimum effect).\n\n"
             "| task | candidate | vendor | workload | T_vendor / T_candidate | noise | pairs | p faster | verdict |\n"
             "|---|---|---|---|---|---|---|---|---|\n";
      any = true;
      const std::string cand = m.label.substr(m.label.find(':') + 1);
      for (const auto& [vendor, per] : m.ab)
        for (const auto& [uuid, a] : per)
          o << fmt::format("| {} | {} | {} | {} | {:.4f}x | {:.2f}% | {} | {:.2g} | {} |\n", row.task, cand,
                           vendor.substr(vendor.find(':') + 1), uuid, a.test.ratio, 100 * a.test.noise, a.test.pairs,
                           a.test.p_faster, ab_verdict(a));
      if (!m.ab_error.empty())
        o << fmt::format("| {} | {} | - | - | - | - | - | - | {} |\n", row.task, cand, m.ab_error);
    }
  return o.str();
}

std::string bench_markdown(const BenchReport& r) {
  std::ostringstream o;
  o << fmt::format("# khive bench {}\n\n", r.suite);
  o << fmt::format("- date: {}\n- device: {} (backend {})\n- command: `{}`\n- hardware profile (T_sol): {}\n", r.date,
                   r.device, r.backend, r.command, r.profile);
  if (r.clocks.is_object())
    o << fmt::format("- clocks at the start: SM {} MHz (max {}), memory {} MHz, {} C\n",
                     r.clocks.value("sm_clock_mhz", "?"), r.clocks.value("max_sm_clock_mhz", "?"),
                     r.clocks.value("mem_clock_mhz", "?"), r.clocks.value("temperature_c", "?"));
  const bool judged = r.pytorch.is_object() && r.pytorch.value("ruler", "") == "judge";
  o << fmt::format("- PyTorch numbers: {}\n",
                   judged ? fmt::format("each task's PyTorch reference timed by the judge, as a kernel (torch {})",
                                        r.pytorch.value("torch", ""))
                   : r.pytorch.is_object() ? fmt::format("{} (torch {}, {})", r.pytorch.value("file", ""),
                                                         r.pytorch.value("torch", ""), r.pytorch.value("date", ""))
                                           : std::string("none for this device"));
  if (r.partial)
    o << fmt::format("- **partial**: written after {} task(s); the run was cut short or is still going\n",
                     r.rows.size());
  o << fmt::format("- seed base {}; total wall time {:.1f} s", r.seed_base, r.seconds);
  if (r.prebuilt)
    o << fmt::format(", of which {:.1f} s building {} sources in parallel before timing", r.prebuild_s, r.prebuilt);
  o << "\n\n";
  o << "Times are the weighted geometric mean of the medians over the task's perf workloads, with the fraction of the\n"
       "speed of light (T_sol / T) in parentheses. Score: SOL-ExecBench's, of the best candidate, against T_b "
       "(PyTorch\n"
       "where measured on this device, else the fastest vendor baseline, else the reference); 0.5 = as fast as T_b, 1 "
       "= SOL.\n\n";
  o << "| task | reference | PyTorch | vendor | best candidate | score | T_b | verdicts "
       "|\n|---|---|---|---|---|---|---|---|\n";
  for (const auto& row : r.rows) {
    const BenchImpl* v =
        row.best_vendor >= 0 ? &row.impls[static_cast<std::size_t>(row.best_vendor)] : row.find("vendor");
    const BenchImpl* c =
        row.best_candidate >= 0 ? &row.impls[static_cast<std::size_t>(row.best_candidate)] : row.find("candidate");
    std::set<std::string> tb;
    for (const auto& w : row.workloads) tb.insert(w.t_b_label.empty() ? "-" : w.t_b_label);
    std::string tbs;
    for (const auto& s : tb) tbs += (tbs.empty() ? "" : ", ") + s;
    std::string vd = verdicts(row);
    for (char& ch : vd)
      if (ch == '|' || ch == '\n') ch = ' ';
    o << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", row.task, cell(row.find("reference")),
                     cell(row.find("pytorch")), v ? v->label.substr(v->label.find(':') + 1) + " " + cell(v) : "-",
                     c ? c->label.substr(c->label.find(':') + 1) + " " + cell(c) : "-",
                     c && c->score ? fmt::format("{:.3f}", *c->score) : "-", tbs.empty() ? "-" : tbs, vd);
  }
  o << "\n## Where the time went\n\n| task | wall | builds | judges | of which goldens | other "
       "|\n|---|---|---|---|---|---|\n";
  double tw = 0, tb = 0, tg = 0, tr = 0;
  for (const auto& row : r.rows) {
    const double other = std::max(0.0, row.seconds - row.build_s - row.runner_s);
    o << fmt::format("| {} | {:.1f} s | {:.1f} s | {:.1f} s | {:.1f} s | {:.1f} s |\n", row.task, row.seconds,
                     row.build_s, row.runner_s, row.golden_s, other);
    tw += row.seconds;
    tb += row.build_s;
    tg += row.golden_s;
    tr += row.runner_s;
  }
  o << fmt::format("| **all** | {:.1f} s | {:.1f} s | {:.1f} s | {:.1f} s | {:.1f} s |\n", tw, tb, tr, tg,
                   std::max(0.0, tw - tb - tr));
  o << "\nbuilds: compiling the reference, candidates and vendor baselines (cached by content hash; after a parallel "
       "build "
       "phase they are cache hits); judges: the judge processes (the guard's checks and timing, PyTorch's and the "
       "vendors' "
       "runs), of which goldens: the reference's calls that made the outputs to compare against; other: symbol scans, "
       "profile, bookkeeping.\n";
  o << bench_ab_markdown(r);
  bool details = false;
  for (const auto& row : r.rows)
    for (const auto& m : row.impls)
      if (!m.accepted && m.kind != "pytorch") {
        if (!details) o << "\n## Rejections and errors\n\n";
        details = true;
        o << fmt::format("- {} / {}: {}\n", row.task, m.label, m.verdict);
      }
  for (const auto& row : r.rows)
    if (!row.error.empty()) {
      if (!details) o << "\n## Rejections and errors\n\n";
      details = true;
      o << fmt::format("- {}: {}\n", row.task, row.error);
    }
  return o.str();
}

void write_bench(const BenchReport& r, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  write_file_atomic(dir / "bench.json", bench_json(r).dump(2) + "\n");
  write_file_atomic(dir / "bench.md", bench_markdown(r));
}

int bench_command(const BenchCommand& c) {
  if (!std::filesystem::is_directory(c.suite)) {
    std::cerr << "khive bench: " << c.suite << ": not a directory\n";
    return 2;
  }
  if (!c.kernels.empty() && !std::filesystem::is_directory(c.kernels)) {
    std::cerr << "khive bench: --kernels " << c.kernels << ": not a directory\n";
    return 2;
  }
  BenchOptions o;
  o.eval.backend = c.backend;
  o.eval.seeds = c.seeds;
  if (c.seed) o.eval.seed = c.seed;
  if (!c.profile.empty()) o.eval.profile = c.profile;
  o.eval.use_pytorch = !c.no_pytorch;
  if (!c.pytorch_ruler.empty()) o.eval.pytorch_on_judge = c.pytorch_ruler == "judge";
  o.ab_vendor = c.ab_vendor;
  o.perf_workloads = c.perf_workloads;
  o.build_jobs = c.build_jobs > 0 ? c.build_jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  o.eval.judge.timeout_s = c.timeout > 0 ? c.timeout : (c.backend == Backend::cuda ? 300 : 60);
  if (c.time_cap > 0)
    o.eval.timing.time_cap_s = c.time_cap;
  else if (c.backend == Backend::cpu)
    o.eval.timing.time_cap_s = 0.5;
  if (!c.kernels.empty()) o.kernels = std::filesystem::absolute(c.kernels);
  for (std::size_t a = 0; a < c.tasks.size();) {
    auto b = c.tasks.find(',', a);
    if (b == std::string::npos) b = c.tasks.size();
    if (b > a) o.only.push_back(c.tasks.substr(a, b - a));
    a = b + 1;
  }
  std::string suite_name = std::filesystem::absolute(c.suite).lexically_normal().filename().string();
  if (suite_name.empty())
    suite_name = std::filesystem::absolute(c.suite).lexically_normal().parent_path().filename().string();
  std::filesystem::path out =
      c.out.empty() ? std::filesystem::path(".khive/bench") / (suite_name + "-" + utc_now("%Y%m%d-%H%M%S"))
                    : std::filesystem::path(c.out);
  // The report is rewritten after every task (atomically): a run cut short keeps what it measured. The first Ctrl-C
  // or SIGTERM finishes the task in hand and stops; the second leaves at once (support/interrupt.hpp).
  InterruptGuard interrupts;
  o.stop = &interrupt_requested();
  o.on_progress = [&](const BenchReport& so_far) {
    BenchReport w = so_far;
    w.command = c.command_line;
    write_bench(w, out);
  };
  std::ostream& live = c.json ? std::cerr : std::cout;
  live << bench_table_header() << std::flush;
  auto r = run_bench(c.suite, o, [&](const BenchRow& row) { live << bench_row_line(row) << std::flush; });
  r.command = c.command_line;
  write_bench(r, out);
  if (c.json) {
    std::cout << bench_json(r).dump(2) << "\n";
  } else {
    std::cout << "\n" << bench_table_header();
    for (const auto& row : r.rows) std::cout << bench_row_line(row);
    if (r.prebuilt)
      std::cout << fmt::format("\nbuild phase: {} sources in {:.1f} s ({} at a time)", r.prebuilt, r.prebuild_s,
                               o.build_jobs);
    std::cout << fmt::format("\n{} task(s) in {:.1f} s on {}; wrote {} and {}\n", r.rows.size(), r.seconds, r.device,
                             (out / "bench.json").string(), (out / "bench.md").string());
  }
  if (r.partial) {
    std::cerr << fmt::format("khive bench: interrupted after {} task(s); what was measured is kept in {}\n",
                             r.rows.size(), out.string());
    return 130;  // cli/conventions.hpp: interrupted
  }
  return r.failed() ? 1 : 0;
}

}  // namespace khive
