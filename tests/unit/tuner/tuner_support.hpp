// Fixtures shared by the tuner's unit tests: the repository's template library and tasks, copies of a task with an
// edited definition, a binding with an edited spec, the error a binding raises, and tasks described by their
// workloads' family variables only (for rules, without a task directory), and a rendered CPU kernel compiled and run.
//
//   const Template& t = repo_template("rope.cuda");
//   Task odd = edited_task("sol/rope", [](json& d) { d["inputs"]["q"]["dtype"] = "float32"; });
//   Task fx = edited_copy(repo() / "tests/tuner-fixtures/scan_masked_cumsum", [](json& d) { ... });
//   EXPECT_NE(std::string(bind_error(odd, *repo_library().binding_for(odd)).what()).find("q"), std::string::npos);
//   BoundTask bt = synthetic_task("rope", "bfloat16", {{{{"TOKENS", 512}, {"D", 10}}, true}});
//   TunerUnder u = tuner_under(task, Backend::cuda, "rowop.ring", {"rowop.ring", "rowop.ring_access"});
//   auto p = u.agent->propose(u.ctx);   // the tuner's first proposal under rowop.ring
//
// It also says once what every tuner test file said first: the tuner's and these fixtures' names, fs and json
// (a header for the tuner's test files only, included last).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "khive/support/files.hpp"
#include "khive/support/subprocess.hpp"
#include "khive/tuner/bind.hpp"
#include "khive/tuner/library.hpp"
#include "khive/tuner/space.hpp"
#include "khive/tuner/tuner.hpp"

namespace khive::tuner::fixtures {

inline const std::filesystem::path& repo() {
  static const std::filesystem::path p = KHIVE_SOURCE_DIR;
  return p;
}

inline const Library& repo_library() {
  static const Library l = load_library(repo() / "kernels");
  return l;
}

inline const Template& repo_template(const std::string& name) {
  const Template* t = repo_library().find_template(name);
  if (!t) throw std::runtime_error(name + " is not in kernels/");
  return *t;
}

inline Task repo_task(const std::string& suite_task) { return load_task(repo() / "tasks" / suite_task); }

// A repository task ("cutegen26/kb02_matmul_standard") bound on CUDA by the repository's binding.
inline BoundTask bound_cuda(const std::string& suite_task) {
  const Task t = repo_task(suite_task);
  return bind_task(t, Backend::cuda, *repo_library().binding_for(t));
}

// p with some parameters set: with_set(t.default_point(), {{"TILE_N", "256"}, {"PROMOTE", "0"}}).
inline Point with_set(Point p, std::initializer_list<std::pair<const char*, const char*>> changes) {
  for (const auto& [k, v] : changes) p[k] = v;
  return p;
}

// A copy of the task folder `src` in a fresh temporary <suite>/<task> folder (the same key, so the repository's
// binding applies; `as`: another "<suite>/<task>", e.g. one no bindings file names) with its definition edited and,
// when given, its workload.jsonl text edited.
inline Task edited_copy(const std::filesystem::path& src, const std::function<void(nlohmann::ordered_json&)>& edit,
                        const std::function<void(std::string&)>& edit_workloads = {}, const std::string& as = "") {
  namespace fs = std::filesystem;
  const fs::path d = make_temp_dir(fs::temp_directory_path(), "khive-tuner-test") /
                     (as.empty() ? src.parent_path().filename() / src.filename() : fs::path(as));
  fs::create_directories(d);
  for (const auto& e : fs::directory_iterator(src))
    if (e.is_regular_file()) fs::copy_file(e.path(), d / e.path().filename());
  auto def = nlohmann::ordered_json::parse(read_file(d / "definition.json"));
  edit(def);
  std::ofstream(d / "definition.json", std::ios::trunc) << def.dump(2);
  if (edit_workloads) {
    std::string w = read_file(d / "workload.jsonl");
    edit_workloads(w);
    std::ofstream(d / "workload.jsonl", std::ios::trunc) << w;
  }
  return load_task(d);
}

// The same for tasks/<suite>/<task>.
inline Task edited_task(const std::string& suite_task, const std::function<void(nlohmann::ordered_json&)>& edit,
                        const std::function<void(std::string&)>& edit_workloads = {}) {
  return edited_copy(repo() / "tasks" / suite_task, edit, edit_workloads);
}

// cutegen26/kb12 reshaped into an elementwise task C [N, K, H] = f(A, B), A and B stored with the given shapes, on two
// workloads (N K H = 3 5 7, correctness; 2 4 70, both); `more_axes` (expressions of N, K, H) follow H.
inline Task nkh_elementwise_task(const nlohmann::ordered_json& a, const nlohmann::ordered_json& b,
                                 const nlohmann::ordered_json& more_axes = nlohmann::ordered_json::object()) {
  return edited_task(
      "cutegen26/kb12_matmul_diag",
      [&](nlohmann::ordered_json& d) {
        d["axes"] = {{"N", {{"type", "var"}}}, {"K", {{"type", "var"}}}, {"H", {{"type", "var"}}}};
        for (auto it = more_axes.begin(); it != more_axes.end(); ++it) d["axes"][it.key()] = it.value();
        d["inputs"]["A"]["shape"] = a;
        d["inputs"]["B"]["shape"] = b;
        d["outputs"]["C"]["shape"] = nlohmann::ordered_json::array({"N", "K", "H"});
        d["khive"].erase("cost");
        d.erase("constraints");
      },
      [](std::string& w) {
        w = "{\"uuid\": \"a\", \"axes\": {\"N\": 3, \"K\": 5, \"H\": 7}, \"khive\": {\"role\": \"correctness\"}}\n"
            "{\"uuid\": \"b\", \"axes\": {\"N\": 2, \"K\": 4, \"H\": 70}, \"khive\": {\"role\": \"both\"}}\n";
      });
}

// The repository's binding of `task` with its spec replaced.
inline Binding binding_with(const Task& task, const nlohmann::ordered_json& spec) {
  Binding b = *repo_library().binding_for(task);
  b.spec = spec;
  return b;
}

// A chain binding of `spec` under `key`, as a bindings file `file` would give it (a task no bindings file names).
template <class Spec>
inline Binding chain_binding_of(const std::string& key, const std::string& file, const Spec& spec) {
  Binding b;
  b.key = key;
  b.family = "chain";
  b.spec = spec;
  b.file = file;
  return b;
}

// What binding `task` with `b` on the CPU says: the error's message, or "bound".
inline std::string refusal_of(const Task& task, const Binding& b) {
  try {
    bind_task(task, Backend::cpu, b);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "bound";
}

// "" when m contains every part, else what is missing (for EXPECT_EQ(has_all(msg, {...}), "")).
inline std::string has_all(const std::string& m, std::initializer_list<const char*> parts) {
  for (const char* p : parts)
    if (m.find(p) == std::string::npos) return std::string("missing \"") + p + "\" in: " + m;
  return "";
}

// The error binding `task` with `b` raises (a test failure when it binds).
inline TaskFormatError bind_error(const Task& task, const Binding& b, Backend be = Backend::cpu) {
  try {
    bind_task(task, be, b);
  } catch (const TaskFormatError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a binding error";
  return TaskFormatError("", "", "", "");
}

// A task of `family` described by its workloads only: each one's family variables and whether it is timed.
inline BoundTask synthetic_task(const std::string& family, const std::string& dtype,
                                const std::vector<std::pair<AxisValues, bool>>& workloads, const std::string& op = "",
                                Backend be = Backend::cuda) {
  BoundTask bt;
  bt.key = "synthetic/" + family;
  bt.family = family;
  bt.op = op.empty() ? family : op;
  bt.dtype = dtype;
  bt.backend = be;
  for (std::size_t i = 0; i < workloads.size(); ++i) {
    bt.workload_vars.push_back(workloads[i].first);
    bt.workload_names.push_back("w" + std::to_string(i));
    bt.workload_perf.push_back(workloads[i].second);
  }
  return bt;
}

// An attention task (prefill, or causal) described by its workloads only: (SQ, SKV, HQ, HKV, D, perf) each, batch 1,
// bf16 (the attention templates' tests).
inline BoundTask synthetic_attention(bool causal, const std::vector<std::array<int64_t, 6>>& ws,
                                     Backend be = Backend::cuda) {
  std::vector<std::pair<AxisValues, bool>> vars;
  for (const auto& w : ws)
    vars.push_back({{{"BATCH", 1},
                     {"SQ", w[0]},
                     {"SKV", w[1]},
                     {"HQ", w[2]},
                     {"HKV", w[3]},
                     {"D", w[4]},
                     {"ELEM_BYTES", 2},
                     {"CAUSAL", causal ? 1 : 0},
                     {"GROUP", w[2] / w[3]}},
                    w[5] != 0});
  return synthetic_task("attention", "bfloat16", vars, causal ? "causal" : "prefill", be);
}

// Compiles a rendered CPU kernel followed by a harness (its main) with g++ and OpenMP, runs it and returns what it
// printed; a build or run failure fails the test (with the compiler's or program's output).
inline std::string run_cpu_kernel(const std::string& kernel, const std::string& harness, const std::string& tag) {
  namespace fs = std::filesystem;
  const fs::path d = make_temp_dir(fs::temp_directory_path(), "khive-tuner-" + tag);
  std::ofstream(d / "k.cpp") << kernel << "\n" << harness;
  ProcessSpec ps;
  ps.cwd = d;
  ps.timeout_s = 300;
  ps.argv = {"g++", "-std=c++20", "-O2", "-fopenmp", "k.cpp", "-o", "k"};
  ProcessResult r = run_process(ps);
  EXPECT_TRUE(r.ok()) << r.describe() << "\n" << r.out << r.err;
  ps.argv = {(d / "k").string()};
  r = run_process(ps);
  EXPECT_TRUE(r.ok()) << r.describe() << "\n" << r.err;
  return r.out;
}

// A tuner agent over the repository's library with its context on `strategy` for `task` (kept alive by the caller).
// The test fails when the tuner does not offer each of `offered` for the task.
struct TunerUnder {
  std::unique_ptr<Agent> agent;
  AgentContext ctx;
};
inline TunerUnder tuner_under(const Task& task, Backend be, const std::string& strategy,
                              const std::vector<std::string>& offered) {
  TunerOptions o;
  o.kernels_dir = repo() / "kernels";
  TunerUnder u{make_tuner_agent(o), {}};
  const auto strategies = u.agent->strategies(task, be);
  for (const auto& name : offered)
    EXPECT_TRUE(std::any_of(strategies.begin(), strategies.end(), [&](const Strategy& s) { return s.name == name; }))
        << name << " not offered";
  u.ctx.task = &task;
  u.ctx.backend = be;
  for (const auto& s : strategies)
    if (s.name == strategy) u.ctx.strategy = s;
  return u;
}

}  // namespace khive::tuner::fixtures

namespace fs = std::filesystem;
using namespace khive;
using namespace khive::tuner;
using namespace khive::tuner::fixtures;
using json = nlohmann::ordered_json;
