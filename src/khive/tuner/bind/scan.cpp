// The scan family's binder: y = cumsum or cumprod of x along one of its axes (x viewed as [OUTER, R, INNER]), walked
// forward or from the end (reverse), inclusive or exclusive, of x or of x * mask.
//
//   {"family": "scan", "op": "cumsum", "x": "x", "y": "y", "dim": 1, "reverse": false, "exclusive": false,
//    "mask": "mask"}                                         x[B, N] (mask[B, N], bool) -> y[B, N]
#include <fmt/format.h>

#include "khive/tuner/bind/common.hpp"

namespace khive::tuner::bind_detail {

BoundTask bind_scan(const Ctx& c) {
  c.check_keys({"description", "op", "x", "y", "dim", "reverse", "exclusive", "mask"});
  BoundTask bt;
  bt.op = c.str("op", true);
  if (bt.op != "cumsum" && bt.op != "cumprod") c.fail("op", "cumsum or cumprod", "\"" + bt.op + "\"");
  const TensorSpec& x = c.input("x");
  const TensorSpec& y = c.output("y");
  if (!is_float_storage(x.dtype))
    c.fail("x", "a float32, bfloat16 or float16 tensor", std::string(dtype_name(x.dtype)));
  const AxisSplit sp = split_at_axis(c, x, "scanned");
  const int dim = sp.dim;
  const bool reverse = c.flag("reverse"), exclusive = c.flag("exclusive");
  const TensorSpec* mask = nullptr;
  if (c.has("mask")) {
    mask = &c.input("mask");
    if (mask->shape != x.shape) c.fail("mask", "an input of x's shape " + shape_text(x.shape), shape_text(mask->shape));
  }
  for (const auto& t : c.task.inputs)
    if (t.name != x.name && !(mask && t.name == mask->name))
      c.fail("x", "every input of the task bound (x, mask)", "\"" + t.name + "\" left out");
  for (const auto& t : c.task.outputs)
    if (t.name != y.name) c.fail("y", "the task's only output", "\"" + t.name + "\" left out");

  add_split_workloads(bt, c, sp, x);

  std::string p = typed_prologue(c, x.dtype);
  p += fmt::format("using khive_mask_t = {};\n", mask ? storage_type(mask->dtype, c.backend) : std::string("bool"));
  p += "enum { KHIVE_CUMSUM = 0, KHIVE_CUMPROD = 1 };\n";
  p += fmt::format("constexpr int KHIVE_OP = {};   // {}\n", bt.op == "cumsum" ? 0 : 1, bt.op);
  p += fmt::format("constexpr bool KHIVE_REVERSE = {}, KHIVE_EXCLUSIVE = {}, KHIVE_HAS_MASK = {};\n", reverse,
                   exclusive, mask != nullptr);
  std::string e = launch_signature(c.task, c.backend) + " {\n";
  e += fmt::format("  khive_run({}, {}, {}, {}, {}, {}{});\n}}\n", x.name, mask ? mask->name : "nullptr", y.name,
                   sp.outer_cpp, sp.r_cpp, sp.inner_cpp, launch_args_tail(c.backend));
  bt.placeholders["PROLOGUE"] = p;
  bt.placeholders["ENTRY"] = e;
  bt.dtype = std::string(dtype_name(x.dtype));
  bt.summary =
      fmt::format("{} = {}{}{}({}{}, dim {} = {}) ({})", y.name, reverse ? "reverse " : "",
                  exclusive ? "exclusive " : "", bt.op, x.name, mask ? " * " + mask->name : "", dim, sp.axis, bt.dtype);
  return bt;
}

}  // namespace khive::tuner::bind_detail
