// The rowop family's binder: softmax, log_softmax, rmsnorm, layernorm and residual_rmsnorm over each row. Softmax and
// log_softmax may also normalise over another axis than the last ("dim": the channels of an NCDHW tensor): x is then
// viewed as [OUTER, COLS, INNER] and the op is strided_softmax / strided_log_softmax, served by the templates whose
// khive_run takes (args, outer, cols, inner).
#include "khive/tuner/bind/common.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace khive::tuner::bind_detail {

namespace {

// eps of a norm: a number (a float literal in the ENTRY) or the name of a scalar input (that parameter, as float).
std::string read_eps(const Ctx& c, const std::string& op, bool norm) {
  if (!norm) {
    if (c.has("eps")) c.fail("eps", "no eps for " + op, "one");
    return "0.0f";
  }
  if (!c.has("eps")) c.fail("eps", "a number or a scalar input's name for " + op, "nothing");
  const json& e = c.b.spec["eps"];
  if (e.is_number()) {
    if (!(e.get<double>() >= 0)) c.fail("eps", "a number >= 0", e.dump());
    return fmt::format("{:.9g}f", e.get<double>());
  }
  if (e.is_string()) {
    const TensorSpec* s = c.task.find_input(e.get<std::string>());
    if (!s || !s->scalar) c.fail("eps", "a scalar input (shape null)", e.dump());
    return fmt::format("static_cast<float>({})", s->name);
  }
  c.fail("eps", "a number or a scalar input's name", e.dump());
}

std::string rowop_prologue(const Ctx& c, DType x, DType w, int op_index, const std::string& op, bool has_weight,
                           bool has_bias, bool has_res, bool has_res_out) {
  std::string p = common_prologue(c);
  p += fmt::format("using khive_t = {};\nusing khive_w_t = {};\n", storage_type(x, c.backend),
                   storage_type(w, c.backend));
  p += conversions("t", x, c.backend);
  p += conversions("w", w, c.backend);
  p += "enum { KHIVE_SOFTMAX = 0, KHIVE_LOG_SOFTMAX = 1, KHIVE_RMSNORM = 2, KHIVE_LAYERNORM = 3, "
       "KHIVE_RESIDUAL_RMSNORM = 4 };\n";
  p += fmt::format("constexpr int KHIVE_OP = {};   // {}\n", op_index, op);
  p += fmt::format(
      "constexpr bool KHIVE_HAS_WEIGHT = {}, KHIVE_HAS_BIAS = {}, KHIVE_HAS_RESIDUAL = {}, KHIVE_HAS_RESIDUAL_OUT = "
      "{};\n",
      has_weight, has_bias, has_res, has_res_out);
  p += "struct khive_rowargs {\n  const khive_t* x; const khive_t* residual; const khive_w_t* weight; const khive_w_t* "
       "bias;\n"
       "  khive_t* y; khive_t* residual_out; float eps;\n};\n";
  return p;
}

}  // namespace

BoundTask bind_rowop(const Ctx& c) {
  c.check_keys({"description", "op", "x", "y", "weight", "bias", "residual", "residual_out", "eps", "dim"});
  static const std::vector<std::string> ops{"softmax", "log_softmax", "rmsnorm", "layernorm", "residual_rmsnorm"};
  BoundTask bt;
  bt.op = c.str("op", true);
  const auto op_it = std::find(ops.begin(), ops.end(), bt.op);
  if (op_it == ops.end())
    c.fail("op", "softmax, log_softmax, rmsnorm, layernorm or residual_rmsnorm", "\"" + bt.op + "\"");
  const int op_index = static_cast<int>(op_it - ops.begin());
  const TensorSpec& x = c.input("x");
  const TensorSpec& y = c.output("y");
  if (!is_float_storage(x.dtype))
    c.fail("x", "a float32, bfloat16 or float16 tensor", std::string(dtype_name(x.dtype)));
  if (x.shape.empty()) c.fail("x", "a tensor with at least one dimension (rows are its last one)", "a 0-D tensor");
  if (y.dtype != x.dtype || y.shape != x.shape) c.fail("y", "an output with x's dtype and shape", "\"" + y.name + "\"");
  const bool norm = bt.op == "rmsnorm" || bt.op == "layernorm" || bt.op == "residual_rmsnorm";
  // The normalised axis: the last, or (softmax, log_softmax) the one "dim" names.
  int dim = static_cast<int>(x.shape.size()) - 1;
  if (c.has("dim")) {
    if (norm) c.fail("dim", "no dim for " + bt.op + " (it normalises the last axis)", c.b.spec["dim"].dump());
    dim = split_at_axis(c, x, "normalised").dim;
  }
  const bool strided = dim + 1 < static_cast<int>(x.shape.size());
  const std::string col_axis = x.shape[static_cast<std::size_t>(dim)];
  std::vector<std::string> row_axes(x.shape.begin(), x.shape.begin() + dim);
  const std::vector<std::string> inner_axes(x.shape.begin() + dim + 1, x.shape.end());

  const TensorSpec *w = nullptr, *bias = nullptr, *res = nullptr, *res_out = nullptr;
  auto vec_of_cols = [&](const char* k) -> const TensorSpec* {
    if (!c.has(k)) return nullptr;
    const TensorSpec& t = c.input(k);
    if (t.shape.size() != 1 || t.shape[0] != col_axis)
      c.fail(k, "a tensor of shape [" + col_axis + "]", "\"" + t.name + "\"");
    if (!is_float_storage(t.dtype))
      c.fail(k, "a float32, bfloat16 or float16 tensor", std::string(dtype_name(t.dtype)));
    return &t;
  };
  w = vec_of_cols("weight");
  bias = vec_of_cols("bias");
  if (w && bias && w->dtype != bias->dtype) c.fail("bias", "the weight's dtype", std::string(dtype_name(bias->dtype)));
  if (!norm && (w || bias)) c.fail(w ? "weight" : "bias", "no weight or bias for " + bt.op, "one");
  if (bt.op == "rmsnorm" || bt.op == "residual_rmsnorm") {
    if (bias) c.fail("bias", "no bias for " + bt.op, "one");
  }
  if (c.has("residual")) {
    if (bt.op != "residual_rmsnorm") c.fail("residual", "no residual for " + bt.op, "one");
    res = &c.input("residual");
    if (res->dtype != x.dtype || res->shape != x.shape)
      c.fail("residual", "an input with x's dtype and shape", "\"" + res->name + "\"");
  } else if (bt.op == "residual_rmsnorm") {
    c.fail("residual", "the residual input of residual_rmsnorm", "nothing");
  }
  if (c.has("residual_out")) {
    if (bt.op != "residual_rmsnorm") c.fail("residual_out", "no residual_out for " + bt.op, "one");
    res_out = &c.output("residual_out");
    if (res_out->dtype != x.dtype || res_out->shape != x.shape)
      c.fail("residual_out", "an output with x's dtype and shape", "\"" + res_out->name + "\"");
  }
  const std::string eps_decl = read_eps(c, bt.op, norm);
  // Every task tensor must be accounted for, so the template writes every output.
  std::set<std::string> covered{x.name, y.name};
  for (const auto* t : {w, bias, res, res_out})
    if (t) covered.insert(t->name);
  if (c.has("eps") && c.b.spec["eps"].is_string()) covered.insert(c.b.spec["eps"].get<std::string>());
  for (const auto& t : c.task.inputs)
    if (!covered.count(t.name))
      c.fail("op", "every input of the task bound (x, weight, bias, residual, eps)", "\"" + t.name + "\" left out");
  for (const auto& t : c.task.outputs)
    if (!covered.count(t.name))
      c.fail("op", "every output of the task bound (y, residual_out)", "\"" + t.name + "\" left out");

  for (std::size_t i = 0; i < c.task.workloads.size(); ++i) {
    const auto ax = resolve_axes(c.task, c.task.workloads[i]);
    int64_t rows = 1;
    for (const auto& r : row_axes) rows *= axis_value(ax, r);
    for (const auto& r : inner_axes) rows *= axis_value(ax, r);
    const int64_t cols = axis_value(ax, col_axis);
    add_workload(bt, c, i, {{"ROWS", rows}, {"COLS", cols}, {"ELEM_BYTES", static_cast<int64_t>(dtype_size(x.dtype))}});
  }

  const DType wd = w ? w->dtype : (bias ? bias->dtype : DType::f32);
  const std::string p = rowop_prologue(c, x.dtype, wd, op_index, bt.op, w != nullptr, bias != nullptr, res != nullptr,
                                       res_out != nullptr);
  std::string e = launch_signature(c.task, c.backend) + " {\n";
  e += fmt::format("  const khive_rowargs khive_a{{{}, {}, {}, {}, {}, {}, {}}};\n", x.name,
                   res ? res->name : "nullptr", w ? w->name : "nullptr", bias ? bias->name : "nullptr", y.name,
                   res_out ? res_out->name : "nullptr", eps_decl);
  if (strided)
    e += fmt::format("  khive_run(khive_a, {}, {}, {}{});\n}}\n", shape_product_cpp(c.task, row_axes),
                     axis_cpp(c.task, col_axis), shape_product_cpp(c.task, inner_axes), launch_args_tail(c.backend));
  else
    e += fmt::format("  khive_run(khive_a, {}, {}{});\n}}\n", shape_product_cpp(c.task, row_axes),
                     axis_cpp(c.task, col_axis), launch_args_tail(c.backend));
  bt.placeholders["PROLOGUE"] = p;
  bt.placeholders["ENTRY"] = e;
  bt.dtype = std::string(dtype_name(x.dtype));
  bt.summary = fmt::format("{} = {}({}) over {}{} ({})", y.name, bt.op, x.name, col_axis,
                           strided ? fmt::format(" (axis {} of {})", dim, shape_text(x.shape)) : "", bt.dtype);
  if (strided) bt.op = "strided_" + bt.op;  // the templates that walk a strided axis
  return bt;
}

}  // namespace khive::tuner::bind_detail
