// The pool family's binder: y = max or average pooling of x over its last 1, 2 or 3 axes (torch's max_pool /
// avg_pool: kernel, stride, padding, dilation (max), ceil_mode, count_include_pad and divisor_override (avg)).
//
//   {"family": "pool", "op": "max", "x": "x", "y": "y", "kernel": [3, 3], "stride": [2, 2], "padding": [1, 1],
//    "dilation": [1, 1], "ceil_mode": false}              x[N, C, H, W] -> y[N, C, OH, OW]
//
// The kernels see x as PLANES planes of [D, H, W] (fewer pooled axes are leading 1s). Every workload's output size is
// checked against torch's formula (ceil_mode's last window included), the workload named in the error.
#include <fmt/format.h>

#include "khive/tuner/bind/common.hpp"

namespace khive::tuner::bind_detail {

BoundTask bind_pool(const Ctx& c) {
  c.check_keys({"description", "op", "x", "y", "kernel", "stride", "padding", "dilation", "ceil_mode",
                "count_include_pad", "divisor_override"});
  BoundTask bt;
  const std::string op = c.str("op", true);
  if (op != "max" && op != "avg") c.fail("op", "max or avg", "\"" + op + "\"");
  const TensorSpec& x = c.input("x");
  const TensorSpec& y = c.output("y");
  if (!is_float_storage(x.dtype))
    c.fail("x", "a float32, bfloat16 or float16 tensor", std::string(dtype_name(x.dtype)));
  if (y.dtype != x.dtype)
    c.fail("y", fmt::format("x's dtype {}", dtype_name(x.dtype)), std::string(dtype_name(y.dtype)));
  if (!c.has("kernel") || !c.b.spec["kernel"].is_array() || c.b.spec["kernel"].empty() || c.b.spec["kernel"].size() > 3)
    c.fail("kernel", "a list of 1 to 3 window sizes, one per pooled axis",
           c.has("kernel") ? c.b.spec["kernel"].dump() : "nothing");
  const std::size_t dims = c.b.spec["kernel"].size();
  if (x.shape.size() < dims + 1 || y.shape.size() != x.shape.size())
    c.fail("y", fmt::format("x's rank {} with its last {} axes pooled", x.shape.size(), dims), shape_text(y.shape));
  auto list = [&](const char* k, int64_t lo, int64_t dflt) { return axis_ints(c, k, dims, lo, dflt, "pooled axis"); };
  const auto kernel = list("kernel", 1, 1), padding = list("padding", 0, 0), dilation = list("dilation", 1, 1);
  const auto stride = c.has("stride") ? list("stride", 1, 1) : kernel;
  const bool ceil = c.flag("ceil_mode"), count_pad = c.flag("count_include_pad", true);
  int64_t divisor = 0;
  if (c.has("divisor_override")) {
    if (!c.b.spec["divisor_override"].is_number_integer() || c.b.spec["divisor_override"].get<int64_t>() < 1)
      c.fail("divisor_override", "an integer >= 1", c.b.spec["divisor_override"].dump());
    divisor = c.b.spec["divisor_override"].get<int64_t>();
  }
  if (op == "max" && (c.has("count_include_pad") || divisor))
    c.fail(c.has("count_include_pad") ? "count_include_pad" : "divisor_override", "nothing (an average pool's)",
           "a value for a max pool");
  for (std::size_t a = 0; a < dims; ++a) {
    if (op == "avg" && dilation[a] != 1) c.fail("dilation", "1 on every axis (an average pool has none)", "more");
    // torch refuses more padding than half the (dilated) window
    if (2 * padding[a] > dilation[a] * (kernel[a] - 1) + 1)
      c.fail("padding", "at most half the window on every axis (torch refuses more)",
             fmt::format("{} with a window of {}", padding[a], dilation[a] * (kernel[a] - 1) + 1));
  }
  for (const auto& t : c.task.inputs)
    if (t.name != x.name) c.fail("x", "the task's only input", "\"" + t.name + "\" left out");
  for (const auto& t : c.task.outputs)
    if (t.name != y.name) c.fail("y", "the task's only output", "\"" + t.name + "\" left out");

  const std::size_t lead = x.shape.size() - dims;  // axes before the pooled ones: planes
  for (std::size_t i = 0; i < c.task.workloads.size(); ++i) {
    const auto ax = resolve_axes(c.task, c.task.workloads[i]);
    int64_t planes = 1, in_px = 1, out_px = 1;
    for (std::size_t a = 0; a < lead; ++a) {
      if (axis_value(ax, y.shape[a]) != axis_value(ax, x.shape[a]))
        c.fail("y", fmt::format("x's axis {} ({}) unpooled (workload {})", a, x.shape[a], c.task.workloads[i].uuid),
               shape_text(y.shape));
      planes *= axis_value(ax, x.shape[a]);
    }
    for (std::size_t a = 0; a < dims; ++a) {
      const int64_t in = axis_value(ax, x.shape[lead + a]), out = axis_value(ax, y.shape[lead + a]);
      const int64_t want = pool_out(in, kernel[a], stride[a], padding[a], dilation[a], ceil);
      if (want < 1 || out != want)
        c.fail("y",
               fmt::format("pooled axis {} of size {} (torch's for input {}, kernel {}, stride {}, padding {}, "
                           "dilation {}{}) (workload {})",
                           a, want, in, kernel[a], stride[a], padding[a], dilation[a], ceil ? ", ceil_mode" : "",
                           c.task.workloads[i].uuid),
               std::to_string(out));
      in_px *= in;
      out_px *= out;
    }
    int64_t window = 1;
    for (auto k : kernel) window *= k;
    add_workload(bt, c, i,
                 {{"PLANES", planes},
                  {"IN_SPATIAL", in_px},
                  {"OUT_SPATIAL", out_px},
                  {"WINDOW", window},
                  {"ELEM_BYTES", static_cast<int64_t>(dtype_size(x.dtype))}});
  }

  bt.op = op + "_pool";
  std::string p = typed_prologue(c, x.dtype);
  p += "// x as PLANES planes of [D, H, W], y of [OD, OH, OW] (fewer pooled axes are leading 1s).\n"
       "struct khive_pool_shape {\n  int64_t planes, d, h, w, od, oh, ow;\n};\n";
  p += per_axis_cpp("khive_kernel", kernel, 1) + per_axis_cpp("khive_stride", stride, 1) +
       per_axis_cpp("khive_pad", padding, 0) + per_axis_cpp("khive_dil", dilation, 1);
  p += fmt::format("constexpr bool KHIVE_MAX = {}, KHIVE_CEIL = {}, KHIVE_COUNT_PAD = {};\n", op == "max", ceil,
                   count_pad);
  p += fmt::format("constexpr int64_t KHIVE_DIVISOR = {};   // 0: none (divisor_override)\n", divisor);
  p += "// torch's pooling_output_shape of an axis of `in`.\n"
       "KHIVE_HD constexpr int64_t khive_pool_out(int64_t in, int a) {\n"
       "  const int64_t reach = in + 2 * khive_pad(a) - khive_dil(a) * (khive_kernel(a) - 1) - 1 +\n"
       "                        (KHIVE_CEIL ? khive_stride(a) - 1 : 0);\n"
       "  const int64_t out = reach < 0 ? 0 : reach / khive_stride(a) + 1;\n"
       "  return KHIVE_CEIL && out > 0 && (out - 1) * khive_stride(a) >= in + khive_pad(a) ? out - 1 : out;\n}\n";
  std::vector<std::string> in3(3, "int64_t(1)");
  for (std::size_t a = 0; a < dims; ++a) in3[3 - dims + a] = axis_cpp(c.task, x.shape[lead + a]);
  std::vector<std::string> lead_dims(x.shape.begin(), x.shape.begin() + static_cast<std::ptrdiff_t>(lead));
  std::string e = launch_signature(c.task, c.backend) + " {\n";
  e += fmt::format(
      "  const khive_pool_shape s{{{}, {}, {}, {}, khive_pool_out({}, 0), khive_pool_out({}, 1), "
      "khive_pool_out({}, 2)}};\n",
      shape_product_cpp(c.task, lead_dims), in3[0], in3[1], in3[2], in3[0], in3[1], in3[2]);
  e += fmt::format("  khive_run({}, {}, s{});\n}}\n", x.name, y.name, launch_args_tail(c.backend));
  bt.placeholders["PROLOGUE"] = p;
  bt.placeholders["ENTRY"] = e;
  bt.dtype = std::string(dtype_name(x.dtype));
  bt.summary = fmt::format("{} = {}_pool{}d({}, kernel [{}], stride [{}], padding [{}]{}{}) ({})", y.name, op, dims,
                           x.name, fmt::join(kernel, ", "), fmt::join(stride, ", "), fmt::join(padding, ", "),
                           op == "max" ? fmt::format(", dilation [{}]", fmt::join(dilation, ", ")) : "",
                           ceil ? ", ceil_mode" : "", bt.dtype);
  return bt;
}

}  // namespace khive::tuner::bind_detail
