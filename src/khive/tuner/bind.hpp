// Binding a task to a family: what the task computes in the family's terms, checked against the task's
// tensors, and the code that adapts the task's khive_launch to the family's internal entry (khive_run).
//
//   BoundTask bt = bind_task(task, Backend::cpu, *lib.binding_for(task));
//   bt.placeholders["PROLOGUE"]  types, the op (functor / row op / epilogue), argument structs
//   bt.placeholders["ENTRY"]     extern "C" khive_launch(...) { ... khive_run(...); }
//   bt.workload_vars[i]          COUNT / ROWS, COLS / M, N, K, ... of workload i, for the validity rules
//
// Families and their binding fields: docs/tuner.md.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "khive/task/expr.hpp"
#include "khive/task/task.hpp"
#include "khive/tuner/library.hpp"

namespace khive::tuner {

struct BoundTask {
  std::string key;  // "demo-cpu/softmax"
  std::string family;
  std::string op;     // elementwise: "map"; rowop: softmax, ...; gemm: "gemm"
  std::string dtype;  // element type of the main tensors (definition.json spelling)
  Backend backend = Backend::cpu;
  std::string summary;                              // one line: "y = softmax(x) over D, rows B (float32)"
  std::map<std::string, std::string> placeholders;  // PROLOGUE, ENTRY, LAUNCH, ...
  std::vector<AxisValues> workload_vars;            // per workload (all roles), the family's variables
  std::vector<std::string> workload_names;          // their uuids
  std::vector<bool> workload_perf;                  // timed on this backend (role perf or both, runs on it)
  std::vector<BoundTask> stages;                    // a chain's stages, each bound against its stage task
};

// Throws TaskFormatError naming the bindings file and the field ("tasks.softmax.weight").
BoundTask bind_task(const Task& task, Backend backend, const Binding& binding);

// Whether a template can serve a bound task: family, backend, dtype and op (a chain template: each stage's template
// serves that stage).
bool template_applies(const Template& t, const BoundTask& bt);

// The templates that serve a bound task: those of the library that apply, or for a chain, the chain templates of
// every combination of templates that serve its stages (at most `max_chains`).
std::vector<const Template*> applicable_templates(const Library& lib, const BoundTask& bt, std::size_t max_chains = 64);

}  // namespace khive::tuner
