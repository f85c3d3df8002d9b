// The conv family's binder: y = epilogue(conv(x, weight) + bias, b = vector[channel]), a 1-, 2- or 3-D convolution
// or transposed convolution (torch's aten.convolution: stride, padding, dilation, groups, output_padding), x and y
// [N, C, *spatial] contiguous.
//
//   {"family": "conv", "x": "x", "weight": "w", "y": "y", "stride": [1, 1], "padding": [0, 0], "dilation": [1, 1],
//    "groups": 1}                                  x[N, 16, H, W], w[128, 16, 3, 3] -> y[N, 128, H - 2, W - 2]
//   + "transposed": true, "output_padding": [1, 1]      w[C_in, C_out / groups, kH, kW]
//   + "bias": "b" ([C_out], added to the sum), "vector": "s" (one value per output channel: b in the epilogue),
//     "epilogue": "fmaxf(x, 0.0f) * b"         a float expression of x (the sum plus bias) and b
//   + "vectors": ["t", "u"] (more of them: b1, b2 in the epilogue; KernelBench's `x * scale + bias`); a vector may
//     also be one value for every element (a 0-d parameter, or [1, 1, 1]), read at [0]
//
// The kernels see every shape as 3-D (a 1-D conv is D = H = 1, its kernel 1 x 1 x kW): one code path for the three.
// Every workload's output size is checked against torch's formula, so a binding that disagrees with the task's
// shapes fails here with the workload named, not in the guard.
#include <fmt/format.h>

#include "khive/tuner/bind/common.hpp"

namespace khive::tuner::bind_detail {

namespace {

// The binding's list field k (one integer >= lo per spatial axis, default `pad`) padded at the front to the 3-D view's
// three axes with `pad`.
std::vector<int64_t> triple(const Ctx& c, const char* k, std::size_t dims, int64_t lo, int64_t pad) {
  std::vector<int64_t> v = axis_ints(c, k, dims, lo, pad, "spatial axis");
  v.insert(v.begin(), 3 - dims, pad);
  return v;
}

std::string list_text(const std::vector<int64_t>& v) { return fmt::format("{}, {}, {}", v[0], v[1], v[2]); }

}  // namespace

BoundTask bind_conv(const Ctx& c) {
  c.check_keys({"description", "x", "weight", "bias", "vector", "vectors", "y", "stride", "padding", "dilation",
                "groups", "transposed", "output_padding", "epilogue"});
  BoundTask bt;
  const TensorSpec& x = c.input("x");
  const TensorSpec& w = c.input("weight");
  const TensorSpec& y = c.output("y");
  if (!is_float_storage(x.dtype))
    c.fail("x", "a float32, bfloat16 or float16 tensor", std::string(dtype_name(x.dtype)));
  if (w.dtype != x.dtype)
    c.fail("weight", fmt::format("x's dtype {}", dtype_name(x.dtype)), std::string(dtype_name(w.dtype)));
  if (y.dtype != x.dtype)
    c.fail("y", fmt::format("x's dtype {}", dtype_name(x.dtype)), std::string(dtype_name(y.dtype)));
  const std::size_t rank = x.shape.size();
  if (rank < 3 || rank > 5) c.fail("x", "[N, C, *spatial] with 1, 2 or 3 spatial axes", shape_text(x.shape));
  const std::size_t dims = rank - 2;
  if (w.shape.size() != rank) c.fail("weight", fmt::format("{} axes, as x", rank), shape_text(w.shape));
  if (y.shape.size() != rank) c.fail("y", fmt::format("{} axes, as x", rank), shape_text(y.shape));
  if (y.shape[0] != x.shape[0]) c.fail("y", "x's batch axis " + x.shape[0] + " first", shape_text(y.shape));
  const bool transposed = c.flag("transposed");
  const auto stride = triple(c, "stride", dims, 1, 1), padding = triple(c, "padding", dims, 0, 0),
             dilation = triple(c, "dilation", dims, 1, 1), out_pad = triple(c, "output_padding", dims, 0, 0);
  if (!transposed && c.has("output_padding"))
    for (auto v : out_pad)
      if (v != 0)
        c.fail("output_padding", "zeros (only a transposed convolution has one)", c.b.spec["output_padding"].dump());
  int64_t groups = 1;
  if (c.has("groups")) {
    if (!c.b.spec["groups"].is_number_integer() || c.b.spec["groups"].get<int64_t>() < 1)
      c.fail("groups", "an integer >= 1", c.b.spec["groups"].dump());
    groups = c.b.spec["groups"].get<int64_t>();
  }
  const TensorSpec* bias = c.has("bias") ? &c.input("bias") : nullptr;
  const std::vector<EpilogueVector> vecs = epilogue_vectors(c, "vector", x.dtype);
  std::string epilogue = "x";
  if (c.has("epilogue")) {
    epilogue = op_text(c, "epilogue");
    if (epilogue.find_first_not_of(" \t") == std::string::npos)
      c.fail("epilogue", "a C++ expression of x and b", "\"\"");
  }

  // Per workload: the channels and groups agree, and y's spatial sizes are torch's for x's.
  for (std::size_t i = 0; i < c.task.workloads.size(); ++i) {
    const auto ax = resolve_axes(c.task, c.task.workloads[i]);
    auto dim = [&](const TensorSpec& t, std::size_t a) { return axis_value(ax, t.shape[a]); };
    const std::string at = " (workload " + c.task.workloads[i].uuid + ")";
    const int64_t n = dim(x, 0), cin = dim(x, 1), cout = dim(y, 1);
    if (cin % groups || cout % groups)
      c.fail("groups", fmt::format("a divisor of the channels (in {}, out {}){}", cin, cout, at),
             std::to_string(groups));
    const int64_t w0 = dim(w, 0), w1 = dim(w, 1);
    if (transposed ? (w0 != cin || w1 != cout / groups) : (w0 != cout || w1 != cin / groups))
      c.fail("weight",
             transposed ? fmt::format("[C_in = {}, C_out / groups = {}, *kernel]{}", cin, cout / groups, at)
                        : fmt::format("[C_out = {}, C_in / groups = {}, *kernel]{}", cout, cin / groups, at),
             fmt::format("[{}, {}, ...]", w0, w1));
    // bias: aten.convolution's own, [C_out]. vector: broadcast against y as torch does (aligned at the end), one
    // value per channel: [C_out, 1, ...] with an axis per spatial one, or [1, C_out, 1, ...].
    if (bias && (bias->shape.size() != 1 || dim(*bias, 0) != cout))
      c.fail("bias", fmt::format("[C_out = {}]{}", cout, at), shape_text(bias->shape));
    for (const auto& v : vecs) {
      if (v.one) continue;
      const std::size_t r = v.t->shape.size();
      bool ok = r + 1 >= rank && r <= rank;
      for (std::size_t j = 0; ok && j < r; ++j) ok = dim(*v.t, j) == (j + rank == r + 1 ? cout : 1);
      std::string ones;
      for (std::size_t j = 0; j + 2 < rank; ++j) ones += ", 1";
      if (!ok)
        c.fail(v.field,
               fmt::format("one value per output channel, broadcast over y: [{}{}], or one value for all of y "
                           "(every axis 1){}",
                           cout, ones, at),
               shape_text(v.t->shape));
    }
    std::vector<int64_t> in(3, 1), out(3, 1), kern(3, 1);
    for (std::size_t a = 0; a < dims; ++a) {
      in[3 - dims + a] = dim(x, 2 + a);
      out[3 - dims + a] = dim(y, 2 + a);
      kern[3 - dims + a] = dim(w, 2 + a);
    }
    for (std::size_t a = 3 - dims; a < 3; ++a) {
      const int64_t want = conv_out(in[a], kern[a], stride[a], padding[a], dilation[a], out_pad[a], transposed);
      if (out_pad[a] >= std::max(stride[a], dilation[a]))
        c.fail("output_padding", "values smaller than the stride or the dilation of their axis", list_text(out_pad));
      if (want < 1 || out[a] != want)
        c.fail("y",
               fmt::format("spatial axis {} of size {} (torch's for input {}, kernel {}, stride {}, padding {}, "
                           "dilation {}{}){}",
                           a - (3 - dims), want, in[a], kern[a], stride[a], padding[a], dilation[a],
                           transposed ? fmt::format(", output padding {}", out_pad[a]) : "", at),
               std::to_string(out[a]));
    }
    add_workload(bt, c, i,
                 {{"N", n},
                  {"C_IN", cin},
                  {"C_OUT", cout},
                  {"GROUPS", groups},
                  {"OUT_SPATIAL", out[0] * out[1] * out[2]},
                  {"IN_SPATIAL", in[0] * in[1] * in[2]},
                  {"KSIZE", kern[0] * kern[1] * kern[2]},
                  {"ELEM_BYTES", static_cast<int64_t>(dtype_size(x.dtype))}});
  }

  for (const auto& t : c.task.inputs)
    if (t.name != x.name && t.name != w.name && !(bias && t.name == bias->name) &&
        std::none_of(vecs.begin(), vecs.end(), [&](const EpilogueVector& v) { return v.t->name == t.name; }))
      c.fail("x", "every input of the task bound (x, weight, bias, vector, vectors)", "\"" + t.name + "\" left out");
  for (const auto& t : c.task.outputs)
    if (t.name != y.name) c.fail("y", "the task's only output", "\"" + t.name + "\" left out");

  bt.op = transposed ? "conv_transpose" : "conv";
  std::string p = typed_prologue(c, x.dtype);
  p += "// x [N, C_IN, D, H, W], y [N, C_OUT, OD, OH, OW], weight [C_OUT, C_IN / G, KD, KH, KW] (transposed:\n"
       "// [C_IN, C_OUT / G, KD, KH, KW]); fewer spatial axes are leading 1s.\n"
       "struct khive_conv_shape {\n  int64_t n, cin, d, h, w, cout, od, oh, ow, kd, kh, kw;\n};\n";
  p += per_axis_cpp("khive_stride", stride, 1) + per_axis_cpp("khive_pad", padding, 0) +
       per_axis_cpp("khive_dil", dilation, 1) + per_axis_cpp("khive_out_pad", out_pad, 0);
  p += fmt::format("constexpr int64_t KHIVE_GROUPS = {};\n", groups);
  p += fmt::format("constexpr bool KHIVE_TRANSPOSED = {}, KHIVE_HAS_BIAS = {}, KHIVE_HAS_VECTOR = {};\n", transposed,
                   bias != nullptr, !vecs.empty());
  p += "// torch's output size of an axis of `in` with a kernel of k taps.\n"
       "KHIVE_HD constexpr int64_t khive_conv_out(int64_t in, int64_t k, int a) {\n"
       "  return KHIVE_TRANSPOSED ? (in - 1) * khive_stride(a) - 2 * khive_pad(a) + khive_dil(a) * (k - 1) + "
       "khive_out_pad(a) + 1\n"
       "                          : (in + 2 * khive_pad(a) - khive_dil(a) * (k - 1) - 1) / khive_stride(a) + 1;\n}\n";
  // The epilogue's values of a channel: b = vector[oc] (0 without one), b1, b2, ... = vectors[k][oc] ([0]: one value
  // for all); the templates read them once per channel (khive_conv_vals_at) and pass them to every element's epilogue.
  const std::size_t nv = std::max<std::size_t>(vecs.size(), 1);
  p += epilogue_vals_cpp(vecs);
  p += fmt::format("struct khive_conv_vecs {{ const khive_t* p[{}]; }};\n", nv);
  p += "KHIVE_HD khive_epi_vals khive_conv_vals_at(const khive_conv_vecs& vs, int64_t oc) {\n"
       "  khive_epi_vals v{};\n  (void)vs; (void)oc;\n";
  for (std::size_t k = 0; k < vecs.size(); ++k)
    p += fmt::format("  v.b[{0}] = khive_to_float_t(vs.p[{0}][{1}]);\n", k, vecs[k].one ? "0" : "oc");
  p += "  return v;\n}\n";
  p += "// y from x = the sum (plus bias) and the channel's b, b1, ...\n"
       "KHIVE_HD float khive_conv_epi(float x, const khive_epi_vals& v) {\n  (void)x;\n" +
       epilogue_names_cpp(vecs.size(), "v") + "  return " + epilogue + ";\n}\n";
  std::vector<std::string> sz(12, "int64_t(1)");
  sz[0] = axis_cpp(c.task, x.shape[0]);
  sz[1] = axis_cpp(c.task, x.shape[1]);
  sz[5] = axis_cpp(c.task, y.shape[1]);
  // y's spatial sizes by the formula (checked against its shape per workload above): its axes may be expressions
  // the C++ spelling does not cover (an import's "(length - 6) // 3").
  for (std::size_t a = 0; a < dims; ++a) {
    const std::size_t k = 3 - dims + a;
    sz[2 + k] = axis_cpp(c.task, x.shape[2 + a]);
    sz[9 + k] = axis_cpp(c.task, w.shape[2 + a]);
    sz[6 + k] = fmt::format("khive_conv_out({}, {}, {})", sz[2 + k], sz[9 + k], k);
  }
  std::string e = launch_signature(c.task, c.backend) + " {\n";
  e += fmt::format("  const khive_conv_shape s{{{}}};\n", fmt::join(sz, ", "));
  std::string vec_list;
  for (std::size_t k = 0; k < nv; ++k)
    vec_list += (k ? ", " : "") + (k < vecs.size() ? vecs[k].t->name : std::string("nullptr"));
  e += fmt::format("  khive_run({}, {}, {}, khive_conv_vecs{{{{{}}}}}, {}, s{});\n}}\n", x.name, w.name,
                   bias ? bias->name : "nullptr", vec_list, y.name, launch_args_tail(c.backend));
  bt.placeholders["PROLOGUE"] = p;
  bt.placeholders["ENTRY"] = e;
  bt.dtype = std::string(dtype_name(x.dtype));
  auto given = [&](const std::vector<int64_t>& v) {  // the binding's own axes, without the leading padding
    return fmt::format("[{}]", fmt::join(v.end() - static_cast<std::ptrdiff_t>(dims), v.end(), ", "));
  };
  bt.summary = fmt::format("{} = {}{}d({}, {}{}, stride {}, padding {}, dilation {}, groups {}{}){}{} ({})", y.name,
                           transposed ? "conv_transpose" : "conv", dims, x.name, w.name,
                           bias ? ", bias " + bias->name : "", given(stride), given(padding), given(dilation), groups,
                           transposed ? ", output_padding " + given(out_pad) : "",
                           epilogue == "x" ? "" : ", then " + epilogue, vectors_text(vecs), bt.dtype);
  return bt;
}

}  // namespace khive::tuner::bind_detail
