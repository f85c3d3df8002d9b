// `khive bench SUITE`: every task of a suite through the guard — its reference, its vendor baselines and
// (optionally) a directory of candidate kernels — against PyTorch's numbers; one leaderboard row a task.
//
//   BenchOptions o; o.eval.backend = Backend::cuda; o.kernels = "runs/best";   // runs/best/<task>/*.cu
//   BenchReport r = run_bench("tasks/cutegen26", o, [](const BenchRow& row) { std::cout << bench_row_line(row); });
//   write_bench(r, ".khive/bench/cutegen26-20261130-120000");                  // bench.json + bench.md
//
// Per task: the reference is evaluated as a kernel (its own guard, baselines timed in the same evaluation);
// each candidate is evaluated with those reference and baseline runs reused (EvalOptions::measured), so
// they are timed once per task, not once per candidate. One seed base per bench run: goldens are made once
// per task and shared by every kernel of it. T_b per workload: PyTorch on this device (the suite's
// baselines/pytorch-<gpu>.json), else the fastest accepted vendor baseline, else the reference.
#pragma once
#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "khive/eval/evaluate.hpp"

namespace khive {

struct BenchReport;

struct BenchOptions {
  EvalOptions eval;                              // backend, timing, runner, profile; seed: one per bench run
  std::optional<std::filesystem::path> kernels;  // DIR/<task name>/*.cu (cuda) or *.cpp (cpu)
  std::vector<std::string> only;                 // task names or directory names; empty = every task
  // Build every reference, baseline and candidate of the run first, this many at a time (the builder's
  // cache is shared and race-safe); the evaluations then find them built. 1: build as they come.
  int build_jobs = 1;
  // Each candidate is also timed interleaved with each accepted vendor baseline under one judge (the
  // guard's check-11 A/B, the vendor as A): the fair "faster than cuBLAS?" answer, free of the drift between
  // processes and calls that separate medians carry.
  bool ab_vendor = false;
  std::string perf_workloads;  // time only the perf workloads whose uuid matches this regex (checks stay)
  // Checked before each task: once set, the remaining tasks are not started and the report says it was cut short.
  const std::atomic<bool>* stop = nullptr;
  // After each task's row: the report so far (rows, seconds), e.g. to write it, so that a run cut short (Ctrl-C, a
  // time limit's SIGTERM) keeps every finished task.
  std::function<void(const BenchReport&)> on_progress;
};

// One implementation of a task (reference, PyTorch, a vendor baseline, a candidate) over its perf workloads.
struct BenchImpl {
  std::string label;   // "reference", "pytorch", "baseline:cublas", "candidate:fast.cu"
  std::string kind;    // "reference" | "pytorch" | "vendor" | "candidate"
  std::string source;  // file (the PyTorch baselines file for "pytorch")
  bool accepted = false;
  std::string verdict;                         // "accepted" | "rejected at check 5 (wrong_output): ..." | "error: ..."
  std::map<std::string, SampleSummary> times;  // per perf workload uuid
  // Over the task's perf workloads, only when every one has a time: weighted geometric mean of the medians,
  // the same mean of T_sol / median, and the SOL-ExecBench task score against T_b.
  std::optional<double> gmean_s, fraction_of_sol, score;
  // Its own time: a candidate's whole evaluation; for the reference, PyTorch and each vendor, its judge (and build)
  // within the evaluation they share.
  double seconds = 0;
  // With BenchOptions::ab_vendor: vendor label -> perf workload -> interleaved A/B with A = that vendor
  // baseline, B = this candidate (test.ratio = T_vendor / T_this: above 1 when this one is faster).
  std::map<std::string, std::map<std::string, AbReport>> ab;
  std::string ab_error;  // why an A/B could not be made (the vendor's or this build failed, the judge failed)
};

struct BenchWorkload {
  std::string workload;
  double weight = 1, flops = 0, bytes = 0, t_sol = 0;  // t_sol: calibrated ceilings (the "% of SOL" column)
  std::optional<double> t_b;
  std::string t_b_label;   // "pytorch", "baseline:cublas", "reference"
  double t_sol_score = 0;  // the score's T_sol: datasheet roofline (score_t_sol, issue 14); 0 = use t_sol
};

struct BenchRow {
  std::string task, dir;
  std::string error;                          // the task could not be benched (bad task, no reference, harness error)
  std::vector<BenchWorkload> workloads;       // perf workloads on this backend
  std::vector<BenchImpl> impls;               // reference first, then PyTorch, vendors, candidates (file order)
  int best_vendor = -1, best_candidate = -1;  // indices into impls
  // Where the wall time went: builds (reference, candidates, baselines), judge processes (checks and timing) and, of
  // those, the reference's golden runs; the rest is symbol scans, profile, bookkeeping.
  double seconds = 0, build_s = 0, golden_s = 0, runner_s = 0;
  const BenchImpl* find(const std::string& kind) const;  // the first impl of that kind
};

struct BenchReport {
  std::string suite, backend, device, command, date, profile;
  nlohmann::json clocks, pytorch;  // nvidia-smi at the first task; the PyTorch file's {file, gpu, torch, date}
  uint64_t seed_base = 0;
  double prebuild_s = 0;  // the parallel build phase before any evaluation (build_jobs > 1)
  int prebuilt = 0;       // sources it built or found cached
  std::vector<BenchRow> rows;
  double seconds = 0;
  // Written before the last task finished: cut short by BenchOptions::stop, or a report in progress (on_progress).
  bool partial = false;
  bool failed() const;  // a task with an error or a rejected reference
};

BenchReport run_bench(const std::filesystem::path& suite, const BenchOptions& o,
                      const std::function<void(const BenchRow&)>& on_row = {});

// Computes a row's aggregates (gmean_s, fraction_of_sol, score, best_vendor, best_candidate) from the
// impls' per-workload times and the workloads' T_sol and T_b. run_bench calls it; exposed for tests.
void finish_row(BenchRow& row);

nlohmann::json bench_json(const BenchReport& r);  // schema khive.bench/1 (docs/bench.md)
std::string bench_markdown(const BenchReport& r);
std::string bench_ab_markdown(const BenchReport& r);  // the A/B section of bench.md ("" without --ab-vendor)
std::string bench_table_header();
std::string bench_row_line(const BenchRow& row);  // one line of the live table
// bench.json and bench.md under dir (created).
void write_bench(const BenchReport& r, const std::filesystem::path& dir);

// `khive bench` as the command line gives it (cli/main.cpp fills it).
struct BenchCommand {
  std::string suite, kernels, out, tasks, profile, command_line;
  Backend backend = Backend::cpu;
  bool json = false, no_pytorch = false, ab_vendor = false;
  std::string pytorch_ruler;  // "judge" | "file"; empty: EvalOptions::pytorch_on_judge's default
  std::string perf_workloads;
  int seeds = 3;
  uint64_t seed = 0;                 // 0: random
  double timeout = 0, time_cap = 0;  // 0: as `khive eval` (per call 300 s cuda / 60 s cpu; cap 2 s cuda / 0.5 s cpu)
  int build_jobs = 0;                // 0: the number of cores
};
// Runs the bench, prints the table live (stdout; stderr with --json, which prints bench.json at the end),
// writes bench.json and bench.md under out (default .khive/bench/<suite>-<UTC date>).
// Returns 0 when every task ran and every reference was accepted, 1 otherwise, 2 on bad input.
int bench_command(const BenchCommand& c);

}  // namespace khive
