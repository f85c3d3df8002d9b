// The chain family's binder (chain.hpp): each stage bound by its own family's binder against its stage task, then
// the glue: one khive_run that keeps an intermediate buffer per stage boundary and calls the stages in order.
//
//   {"family": "chain", "stages": [
//     {"family": "gemm", "A": "x", "B": "w", "C": "t1", "bias": "b", "M": "batch", "N": "512", "K": "1024",
//      "layout_a": "row", "layout_b": "col", "epilogue": "x + b"},
//     {"family": "norm", "stat": "var", "x": "t1", "y": "out", "axes": [1], "eps": 1e-5}]}
#include <fmt/format.h>

#include <map>
#include <set>

#include "khive/tuner/bind/common.hpp"
#include "khive/tuner/chain.hpp"

namespace khive::tuner::bind_detail {

namespace {

// "(const float* x, ..., int64_t N[, cudaStream_t stream])" of a launch signature, and its argument names.
std::string params_of(const std::string& signature) { return signature.substr(signature.find('(')); }

std::vector<std::string> arg_names(const Task& t, Backend b) {
  std::vector<std::string> n;
  for (const auto& i : t.inputs) n.push_back(i.name);
  for (const auto& o : t.outputs) n.push_back(o.name);
  for (const auto& a : t.axes)
    if (a.kind == Axis::Kind::var) n.push_back(a.name);
  if (b == Backend::cuda) n.push_back("stream");
  return n;
}

}  // namespace

BoundTask bind_chain(const Ctx& c) {
  c.check_keys({"description", "stages", "unread"});
  if (!c.has("stages") || !c.b.spec["stages"].is_array() || c.b.spec["stages"].size() < 2 ||
      c.b.spec["stages"].size() > Task::kMaxStages)
    c.fail("stages", fmt::format("a list of 2 to {} stage bindings ({})", Task::kMaxStages, stage_families_text()),
           c.has("stages") ? c.b.spec["stages"].dump() : "nothing");
  const auto& specs = c.b.spec["stages"];
  // unread: inputs of the task that the computation does not read (a backward pass handed the forward's bias, or a
  // saved activation it recomputes from another): no stage may read them, and every other input is read.
  std::map<std::string, std::size_t> unread;
  if (c.has("unread")) {
    const auto& u = c.b.spec["unread"];
    if (!u.is_array()) c.fail("unread", "a list of the task's input names that no stage reads", u.dump());
    for (std::size_t i = 0; i < u.size(); ++i) {
      const std::string f = fmt::format("unread[{}]", i);
      if (!u[i].is_string() || !c.task.find_input(u[i].get<std::string>()))
        c.fail(f, "an input of the task", u[i].dump());
      if (!unread.emplace(u[i].get<std::string>(), i).second)
        c.fail(f, "an input not listed before in unread", u[i].dump());
    }
  }
  ChainLayout layout(c.task);
  BoundTask bt;
  std::set<std::string> read;
  std::map<std::string, std::size_t> wrote;  // a task output or intermediate -> the stage that wrote it
  std::string run_calls, ops, summary;
  auto outputs_left = [&] {
    std::string s;
    for (const auto& o : c.task.outputs)
      if (!wrote.count(o.name)) s += (s.empty() ? "\"" : ", \"") + o.name + "\"";
    return s;
  };
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const std::string f = fmt::format("stages[{}]", i);
    std::vector<std::string> inputs;
    std::string output, family;
    try {
      inputs = ChainLayout::stage_inputs(specs[i]);
      output = ChainLayout::stage_output(specs[i]);
      family = specs[i]["family"].get<std::string>();
    } catch (const std::exception& e) {
      c.fail(f, "a stage binding (" + stage_families_text() + ")", e.what());
    }
    const bool last = i + 1 == specs.size();
    for (const auto& n : inputs) {
      const bool task_input = c.task.find_input(n) != nullptr;
      const bool output_before = c.task.find_output(n) != nullptr && wrote.count(n);
      if (!task_input && !layout.is_intermediate(n) && !output_before)
        c.fail(f,
               "inputs that are the task's, an intermediate an earlier stage wrote or a task output an earlier stage "
               "wrote",
               "\"" + n + "\"" + (c.task.find_output(n) ? " (an output no earlier stage wrote)" : ""));
      if (unread.count(n))
        c.fail(fmt::format("unread[{}]", unread.at(n)), "an input no stage reads",
               fmt::format("\"{}\", which {} reads", n, f));
      read.insert(n);
    }
    const std::string of = f + "." + stage_tensor_fields(family).output;
    const bool task_output = c.task.find_output(output) != nullptr;
    if (task_output && wrote.count(output))
      c.fail(of, "a task output no other stage writes (each is written exactly once)",
             fmt::format("\"{}\", which stages[{}] wrote before", output, wrote.at(output)));
    if (!task_output && last)
      c.fail(of,
             c.task.outputs.size() == 1 ? "the task's output \"" + c.task.outputs[0].name + "\""
                                        : "a task output (left to write: " + outputs_left() + ")",
             "\"" + output + "\"");
    if (!task_output && (c.task.find_input(output) || layout.is_intermediate(output)))
      c.fail(of, "a new name for the intermediate (no tensor of the task)", "\"" + output + "\"");
    try {
      if (!task_output) layout.shape_output(family, specs[i], output, i);
    } catch (const std::exception& e) {
      c.fail(f, "a stage whose output sizes its family gives", e.what());
    }
    Task st = layout.stage_task(inputs, output, i);
    Binding sb;
    sb.key = c.b.key + "." + f;
    sb.family = family;
    sb.spec = specs[i];
    sb.file = c.b.file;
    BoundTask s = bind_task(st, c.backend, sb);  // the family's own checks, errors naming tasks.<task>.stages[i]
    // The stage's khive_launch becomes an internal function of its namespace, called by the chain's khive_run.
    const std::string sig = launch_signature(st, c.backend);
    std::string& entry = s.placeholders["ENTRY"];
    if (entry.compare(0, sig.size(), sig) != 0)
      c.fail(f, "a family whose ENTRY starts with the stage's khive_launch", s.family);
    entry = "static void khive_stage" + params_of(sig) + entry.substr(sig.size());
    s.placeholders["LAUNCH"] = "static void khive_stage" + params_of(sig);
    std::string args;
    for (const auto& a : arg_names(st, c.backend)) args += (args.empty() ? "" : ", ") + a;
    run_calls += fmt::format("  khive_s{}::khive_stage({});\n", i + 1, args);
    ops += (ops.empty() ? "" : ">") + s.op;
    summary += (summary.empty() ? "" : "; then ") + s.summary;
    wrote[output] = i;
    if (task_output) layout.mark_written(output);
    bt.stages.push_back(std::move(s));
  }
  for (const auto& t : c.task.inputs)
    if (!read.count(t.name) && !unread.count(t.name))
      c.fail("stages", "every input of the task read by a stage or listed in unread", "\"" + t.name + "\" left out");
  // Every intermediate is read by a later stage, every output written (by exactly one stage: checked above).
  for (const auto& m : layout.intermediates())
    if (!read.count(m.name)) {
      const std::size_t w = wrote.at(m.name);
      c.fail(fmt::format("stages[{}].{}", w, stage_tensor_fields(specs[w]["family"].get<std::string>()).output),
             "an intermediate a later stage reads, or a task output", "\"" + m.name + "\", which no later stage reads");
    }
  if (!outputs_left().empty())
    c.fail("stages", "every output of the task written by a stage", outputs_left() + " left unwritten");

  // The glue: the fresh sizes, a kept buffer per intermediate, the stages in order.
  std::string run = "// The stages in order, each intermediate in a buffer kept between calls (kernels/chain/).\n";
  run += "static void khive_run" + params_of(launch_signature(c.task, c.backend)) + " {\n";
  for (const auto& [n, cpp] : layout.fresh_axes())
    run += fmt::format("  [[maybe_unused]] const int64_t {} = {};\n", n, cpp);
  int slot = 0;
  for (const auto& m : layout.intermediates()) {
    std::string count = "int64_t(1)";
    for (const auto& a : m.shape) count += " * " + layout.cpp(a);
    const std::string T = storage_type(m.dtype, c.backend);
    run += fmt::format("  {0}* {1} = static_cast<{0}*>(khive_chain_buffer<{2}>(size_t({3}) * sizeof({0})));\n", T,
                       m.name, slot++, count);
    // No memory for it: the output stays unwritten, and the guard rejects the kernel as wrong (never a wrong result
    // from a half-run chain).
    run += fmt::format("  if (!{}) return;\n", m.name);
  }
  run += run_calls + "}\n";
  std::string p = common_prologue(c);
  p += "#include <cstddef>\n";
  std::string entry = launch_signature(c.task, c.backend) + " {\n  khive_run(";
  const auto names = arg_names(c.task, c.backend);
  for (std::size_t i = 0; i < names.size(); ++i) entry += (i ? ", " : "") + names[i];
  entry += ");\n}\n";
  bt.placeholders["PROLOGUE"] = p;
  bt.placeholders["RUN"] = run;
  bt.placeholders["ENTRY"] = entry;
  bt.op = ops;
  bt.dtype = bt.stages.front().dtype;
  bt.summary = summary;
  for (std::size_t w = 0; w < c.task.workloads.size(); ++w) {
    AxisValues vars;
    for (std::size_t i = 0; i < bt.stages.size(); ++i)
      for (const auto& [k, v] : bt.stages[i].workload_vars.at(w)) vars[fmt::format("S{}_{}", i + 1, k)] = v;
    add_workload(bt, c, w, vars);
  }
  return bt;
}

}  // namespace khive::tuner::bind_detail
