// The reduce family's binder: x reduced over one of its axes, or a run of neighbouring ones (sum, mean, max, min,
// prod, argmax, argmin, logsumexp) into y, x viewed as [OUTER, R, INNER] (the axes before, the reduced ones, the axes
// after).
//
//   {"family": "reduce", "op": "argmax", "x": "x", "y": "idx", "dim": 1}   x[B, N, D] -> idx[B, D] (int64), or
//                                                                          idx[B, 1, D] (keepdim)
//   {"family": "reduce", "op": "mean", "x": "x", "y": "y", "dim": [2, 3]}  x[N, C, H, W] -> y[N, C] or [N, C, 1, 1]
//                                                                          (a global average pool; "keepdim": true
//                                                                          or false says which, else either)
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "khive/tuner/bind/common.hpp"

namespace khive::tuner::bind_detail {

namespace {

const std::vector<std::string>& reduce_ops() {  // in KHIVE_OP's order
  static const std::vector<std::string> ops{"sum", "mean", "max", "min", "prod", "argmax", "argmin", "logsumexp"};
  return ops;
}

}  // namespace

BoundTask bind_reduce(const Ctx& c) {
  c.check_keys({"description", "op", "x", "y", "dim", "keepdim"});
  BoundTask bt;
  bt.op = c.str("op", true);
  const auto& ops = reduce_ops();
  const auto it = std::find(ops.begin(), ops.end(), bt.op);
  if (it == ops.end()) c.fail("op", "sum, mean, max, min, prod, argmax, argmin or logsumexp", "\"" + bt.op + "\"");
  const bool arg = bt.op == "argmax" || bt.op == "argmin";
  const TensorSpec& x = c.input("x");
  const TensorSpec& y = c.output("y");
  if (!is_float_storage(x.dtype))
    c.fail("x", "a float32, bfloat16 or float16 tensor", std::string(dtype_name(x.dtype)));
  const AxisSplit sp = split_at_axis(c, x, "reduced", true);
  const int dim = sp.dim;
  if (arg ? y.dtype != DType::i64 : y.dtype != x.dtype)
    c.fail("y", arg ? "an int64 output (torch's index type)" : "an output of x's dtype",
           std::string(dtype_name(y.dtype)));
  // y is x without the reduced axes, or with them kept as literal 1s (keepdim).
  std::vector<std::string> dropped = x.shape, kept = x.shape;
  dropped.erase(dropped.begin() + dim, dropped.begin() + sp.last + 1);
  for (int a = dim; a <= sp.last; ++a) kept[static_cast<std::size_t>(a)] = "1";
  if (!c.has("keepdim")) {
    if (y.shape != dropped && y.shape != kept)
      c.fail("y", fmt::format("the shape {} (or {} with keepdim)", shape_text(dropped), shape_text(kept)),
             shape_text(y.shape));
  } else if (const bool keep = c.flag("keepdim"); y.shape != (keep ? kept : dropped)) {
    c.fail("y", fmt::format("the shape {} (keepdim {})", shape_text(keep ? kept : dropped), keep), shape_text(y.shape));
  }
  for (const auto& t : c.task.inputs)
    if (t.name != x.name) c.fail("x", "the task's only input", "\"" + t.name + "\" left out");
  for (const auto& t : c.task.outputs)
    if (t.name != y.name) c.fail("y", "the task's only output", "\"" + t.name + "\" left out");

  add_split_workloads(bt, c, sp, x);

  std::string p = typed_prologue(c, x.dtype);
  p += fmt::format("using khive_out_t = {};\n", storage_type(y.dtype, c.backend));
  p += "enum { KHIVE_SUM = 0, KHIVE_MEAN = 1, KHIVE_MAX = 2, KHIVE_MIN = 3, KHIVE_PROD = 4, KHIVE_ARGMAX = 5, "
       "KHIVE_ARGMIN = 6, KHIVE_LOGSUMEXP = 7 };\n";
  p += fmt::format("constexpr int KHIVE_OP = {};   // {}\n", it - ops.begin(), bt.op);
  std::string e = launch_signature(c.task, c.backend) + " {\n";
  e += fmt::format("  khive_run({}, {}, {}, {}, {}{});\n}}\n", x.name, y.name, sp.outer_cpp, sp.r_cpp, sp.inner_cpp,
                   launch_args_tail(c.backend));
  bt.placeholders["PROLOGUE"] = p;
  bt.placeholders["ENTRY"] = e;
  bt.dtype = std::string(dtype_name(x.dtype));
  bt.summary = sp.axes.size() == 1
                   ? fmt::format("{} = {}({}, dim {} = {}) ({})", y.name, bt.op, x.name, dim, sp.axis, bt.dtype)
                   : fmt::format("{} = {}({}, dims {}..{} = {}) ({})", y.name, bt.op, x.name, dim, sp.last,
                                 shape_text(sp.axes), bt.dtype);
  return bt;
}

}  // namespace khive::tuner::bind_detail
