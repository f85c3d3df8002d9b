// The gated family's binder: SwiGLU / GeGLU-style op(gate, up) over the two halves of the last axis.
#include "khive/tuner/bind/common.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace khive::tuner::bind_detail {

// A gated activation (SwiGLU, GeGLU): x [rows..., 2 * cols] holds gate = x[..., :cols] and up = x[..., cols:] of
// each row; y [rows..., cols] = op(gate, up). The template sees rows and cols only, so the halves' order is fixed
// here: gate first, as vLLM's SiluAndMul and torch's chunk(2) take it.
BoundTask bind_gated(const Ctx& c) {
  c.check_keys({"description", "input", "output", "op"});
  BoundTask bt;
  bt.op = "gated";
  const TensorSpec& x = c.input("input");
  const TensorSpec& y = c.output("output");
  if (!is_float_storage(x.dtype))
    c.fail("input", "a float32, bfloat16 or float16 tensor", std::string(dtype_name(x.dtype)));
  if (y.dtype != x.dtype)
    c.fail("output", std::string("the input's dtype ") + std::string(dtype_name(x.dtype)),
           std::string(dtype_name(y.dtype)));
  if (x.shape.empty())
    c.fail("input", "a tensor with at least one dimension (gate and up halve its last one)", "a 0-D tensor");
  const std::vector<std::string> row_axes(x.shape.begin(), x.shape.end() - 1);
  if (y.shape.size() != x.shape.size() || !std::equal(row_axes.begin(), row_axes.end(), y.shape.begin()))
    c.fail("output",
           "a tensor with the input's leading axes " + shape_text(row_axes) + " and a last axis half the input's",
           "\"" + y.name + "\" of shape " + shape_text(y.shape));
  if (c.task.inputs.size() != 1)
    for (const auto& t : c.task.inputs)
      if (t.name != x.name)
        c.fail("input", "a task whose only input is the concatenated gate and up", "\"" + t.name + "\" left out");
  if (c.task.outputs.size() != 1)
    c.fail("output", "a task with exactly one output", std::to_string(c.task.outputs.size()) + " outputs");
  const std::string op = op_text(c, "op");

  const auto axes = resolved(c.task);
  for (std::size_t w = 0; w < axes.size(); ++w) {
    auto v = [&](const std::string& n) { return axis_value(axes[w], n); };
    int64_t rows = 1;
    for (const auto& r : row_axes) rows *= v(r);
    const int64_t cols = v(y.shape.back()), in_cols = v(x.shape.back());
    if (in_cols != 2 * cols)
      c.fail("output", "a last axis half the input's (gate and up are its two halves)",
             fmt::format("{} = {} for {} = {} on workload {}", y.shape.back(), cols, x.shape.back(), in_cols,
                         c.task.workloads[w].uuid));
    add_workload(bt, c, w, {{"ROWS", rows}, {"COLS", cols}, {"ELEM_BYTES", static_cast<int64_t>(dtype_size(x.dtype))}});
  }

  std::string p = typed_prologue(c, x.dtype);
  p += "// The task's function of one output element: gate = x[row, col], up = x[row, cols + col], as float.\n";
  p += fmt::format("KHIVE_HD float khive_op(float gate, float up) {{\n  return {};\n}}\n", op);
  std::string e = launch_signature(c.task, c.backend) + " {\n";
  e += fmt::format("  khive_run({}, {}, {}, {}{});\n}}\n", x.name, y.name, shape_product_cpp(c.task, row_axes),
                   axis_cpp(c.task, y.shape.back()), launch_args_tail(c.backend));
  bt.placeholders["PROLOGUE"] = p;
  bt.placeholders["ENTRY"] = e;
  bt.dtype = std::string(dtype_name(x.dtype));
  bt.summary = fmt::format("{} = op(gate, up) over the halves of {}'s last axis {}, op = {} ({})", y.name, x.name,
                           x.shape.back(), op, bt.dtype);
  return bt;
}

}  // namespace khive::tuner::bind_detail
