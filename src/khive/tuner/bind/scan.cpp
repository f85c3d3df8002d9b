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
  const int rank = static_cast<int>(x.shape.size());
  if (rank == 0) c.fail("x", "a tensor with at least one dimension", "a 0-D tensor");
  if (y.dtype != x.dtype || y.shape != x.shape) c.fail("y", "an output with x's dtype and shape", "\"" + y.name + "\"");
  if (!c.has("dim") || !c.b.spec["dim"].is_number_integer())
    c.fail("dim", "the index of the scanned axis in x's shape (negative counts from the end)",
           c.has("dim") ? c.b.spec["dim"].dump() : "nothing");
  int dim = c.b.spec["dim"].get<int>();
  if (dim < -rank || dim >= rank)
    c.fail("dim", fmt::format("an axis index of x {} (-{} to {})", shape_text(x.shape), rank, rank - 1),
           std::to_string(dim));
  if (dim < 0) dim += rank;
  auto flag = [&](const char* k) {
    if (!c.has(k)) return false;
    if (!c.b.spec[k].is_boolean()) c.fail(k, "true or false", c.b.spec[k].dump());
    return c.b.spec[k].get<bool>();
  };
  const bool reverse = flag("reverse"), exclusive = flag("exclusive");
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

  const std::vector<std::string> before(x.shape.begin(), x.shape.begin() + dim),
      after(x.shape.begin() + dim + 1, x.shape.end());
  const std::string& axis = x.shape[static_cast<std::size_t>(dim)];
  for (std::size_t i = 0; i < c.task.workloads.size(); ++i) {
    const auto ax = resolve_axes(c.task, c.task.workloads[i]);
    int64_t outer = 1, inner = 1;
    for (const auto& d : before) outer *= axis_value(ax, d);
    for (const auto& d : after) inner *= axis_value(ax, d);
    add_workload(bt, c, i,
                 {{"OUTER", outer},
                  {"R", axis_value(ax, axis)},
                  {"INNER", inner},
                  {"ELEM_BYTES", static_cast<int64_t>(dtype_size(x.dtype))}});
  }

  std::string p = typed_prologue(c, x.dtype);
  p += fmt::format("using khive_mask_t = {};\n", mask ? storage_type(mask->dtype, c.backend) : std::string("bool"));
  p += "enum { KHIVE_CUMSUM = 0, KHIVE_CUMPROD = 1 };\n";
  p += fmt::format("constexpr int KHIVE_OP = {};   // {}\n", bt.op == "cumsum" ? 0 : 1, bt.op);
  p += fmt::format("constexpr bool KHIVE_REVERSE = {}, KHIVE_EXCLUSIVE = {}, KHIVE_HAS_MASK = {};\n", reverse,
                   exclusive, mask != nullptr);
  std::string e = launch_signature(c.task, c.backend) + " {\n";
  e += fmt::format("  khive_run({}, {}, {}, {}, {}, {}{});\n}}\n", x.name, mask ? mask->name : "nullptr", y.name,
                   shape_product_cpp(c.task, before), axis_cpp(c.task, axis), shape_product_cpp(c.task, after),
                   launch_args_tail(c.backend));
  bt.placeholders["PROLOGUE"] = p;
  bt.placeholders["ENTRY"] = e;
  bt.dtype = std::string(dtype_name(x.dtype));
  bt.summary =
      fmt::format("{} = {}{}{}({}{}, dim {} = {}) ({})", y.name, reverse ? "reverse " : "",
                  exclusive ? "exclusive " : "", bt.op, x.name, mask ? " * " + mask->name : "", dim, axis, bt.dtype);
  return bt;
}

}  // namespace khive::tuner::bind_detail
