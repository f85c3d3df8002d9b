// The norm family's binder: y = (x - shift) * scale of each group of x's elements, then * weight + bias:
//   stat "var"       shift = the group's mean, scale = 1 / sqrt(biased variance + eps)   batch / instance / group /
//                                                                                       layer norm
//   stat "rms"       shift 0, scale = 1 / sqrt(mean(x^2) + eps)                          RMSNorm over any axes
//   stat "l2"        shift 0, scale = 1 / sqrt(sum(x^2) + eps)                           x / ||x||_2 (Frobenius)
//   stat "mean_abs"  shift 0, scale = 1 / (mean(|x|) + eps)                              x / mean(|x|)
// A group is the elements of x over `axes` at one index of the others; `groups` splits the first of `axes` into that
// many consecutive groups kept apart (group norm). weight and bias are shaped as x's `affine_axes`.
//
//   {"family": "norm", "stat": "var", "x": "x", "y": "y", "axes": [0, 2, 3], "eps": 1e-5, "weight": "w",
//    "bias": "b", "affine_axes": [1]}                       batch norm (training): x[N, C, H, W], w[C], b[C]
//   {"family": "norm", "stat": "var", "x": "x", "y": "y", "axes": [1, 2, 3], "groups": 8, "eps": 1e-5, ...}  group norm
//
// The kernels see x as [OUTER, MID, INNER]: `axes` a run of x's axes that ends with the last one, or all but one
// run (batch norm's [0, 2, 3]: the kept run is MID): a group per MID index over OUTER x INNER (runs of INNER
// contiguous elements); `axes` a run followed by kept axes (RMSNorm over the channels of [N, C, H, W]): a group per
// (OUTER, INNER) index over MID, with a stride of INNER (STRIDED; no weight there: a run whose complement is a run
// too, BatchNorm1d's [0] of [N, C], is read the first way when there is one). The weight's element of x's element e is
// w[(e / WDIV) % WMOD] (WMOD: the affine axes' size, WDIV: the size of the axes after them); the binder requires,
// on every workload, that this index is constant over a group or runs through whole in it, so the kernels take it
// per group plus i / WDIV (i: the element's index in its run).
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "khive/tuner/bind/common.hpp"

namespace khive::tuner::bind_detail {

namespace {

// The binding's list field k as x's axes (negative from the end), sorted; distinct, at least one.
std::vector<int64_t> read_axes(const Ctx& c, const char* k, const TensorSpec& x) {
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  const std::string expected = fmt::format("a list of distinct axes of x {} ({} to {}, negative from the end)",
                                           shape_text(x.shape), -rank, rank - 1);
  if (!c.has(k)) c.fail(k, expected, "nothing");
  const json& a = c.b.spec[k];
  if (!a.is_array() || a.empty()) c.fail(k, expected, a.dump());
  std::vector<int64_t> v;
  for (const auto& e : a) {
    if (!e.is_number_integer() || e.get<int64_t>() < -rank || e.get<int64_t>() >= rank) c.fail(k, expected, a.dump());
    v.push_back((e.get<int64_t>() + rank) % rank);
  }
  std::sort(v.begin(), v.end());
  if (std::adjacent_find(v.begin(), v.end()) != v.end()) c.fail(k, expected, a.dump());
  return v;
}

bool contiguous(const std::vector<int64_t>& v) { return !v.empty() && v.back() - v.front() + 1 == int64_t(v.size()); }

std::vector<std::string> axes_range(const TensorSpec& x, int64_t from, int64_t to) {  // x's axes [from, to)
  return {x.shape.begin() + from, x.shape.begin() + to};
}

}  // namespace

BoundTask bind_norm(const Ctx& c) {
  c.check_keys({"description", "stat", "x", "y", "axes", "groups", "eps", "weight", "bias", "affine_axes"});
  static const std::vector<std::string> stats{"var", "rms", "l2", "mean_abs"};
  BoundTask bt;
  const std::string stat = c.str("stat", true);
  const auto stat_it = std::find(stats.begin(), stats.end(), stat);
  if (stat_it == stats.end()) c.fail("stat", "var, rms, l2 or mean_abs", "\"" + stat + "\"");
  const TensorSpec& x = c.input("x");
  const TensorSpec& y = c.output("y");
  if (!is_float_storage(x.dtype))
    c.fail("x", "a float32, bfloat16 or float16 tensor", std::string(dtype_name(x.dtype)));
  if (x.shape.empty()) c.fail("x", "a tensor with at least one axis", "a 0-D tensor");
  if (y.dtype != x.dtype || y.shape != x.shape)
    c.fail("y", fmt::format("an output of x's dtype {} and shape {}", dtype_name(x.dtype), shape_text(x.shape)),
           fmt::format("{} {}", dtype_name(y.dtype), shape_text(y.shape)));
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  const std::vector<int64_t> axes = read_axes(c, "axes", x);
  std::vector<int64_t> kept;
  for (int64_t a = 0; a < rank; ++a)
    if (!std::binary_search(axes.begin(), axes.end(), a)) kept.push_back(a);
  int64_t groups = 1;
  if (c.has("groups")) {
    if (!c.b.spec["groups"].is_number_integer() || c.b.spec["groups"].get<int64_t>() < 1)
      c.fail("groups", "an integer >= 1", c.b.spec["groups"].dump());
    groups = c.b.spec["groups"].get<int64_t>();
  }
  // eps: a number, or the name of a scalar input (read per call: a reference's eps argument, which workloads vary)
  std::string eps_cpp;
  const TensorSpec* eps_in = nullptr;
  if (c.has("eps") && c.b.spec["eps"].is_string()) {
    eps_in = c.task.find_input(c.b.spec["eps"].get<std::string>());
    if (!eps_in || !eps_in->scalar || !dtype_is_float(eps_in->dtype))
      c.fail("eps", "a number >= 0 or the name of a float scalar input", c.b.spec["eps"].dump());
    eps_cpp = fmt::format("static_cast<float>({})", eps_in->name);
  } else {
    if (!c.has("eps") || !c.b.spec["eps"].is_number() || !(c.b.spec["eps"].get<double>() >= 0))
      c.fail("eps", "a number >= 0 or the name of a float scalar input",
             c.has("eps") ? c.b.spec["eps"].dump() : "nothing");
    eps_cpp = fmt::format("static_cast<float>({:.17g})", c.b.spec["eps"].get<double>());
  }

  // x as [OUTER, MID, INNER] (axes before, in, after the middle run), and whether a group is a MID index (runs of
  // INNER) or an (OUTER, INNER) index (strided over MID).
  // A run of axes followed by kept ones, when the kept axes are one run too (BatchNorm1d's [N, C] over axis 0), is
  // read as the kept run's groups when there is a weight (the strided groups take none), else as strided groups.
  std::vector<std::string> before, middle, after;
  bool strided = false;
  const bool affine_given = c.has("weight") || c.has("bias");
  if (contiguous(axes) && axes.back() == rank - 1) {  // trailing run: a group per index of the leading axes
    middle = axes_range(x, 0, axes.front());
    after = axes_range(x, axes.front(), rank);
  } else if (contiguous(kept) && (!contiguous(axes) || (affine_given && groups == 1))) {
    // all but one run (batch norm): a group per index of the kept run
    before = axes_range(x, 0, kept.front());
    middle = axes_range(x, kept.front(), kept.back() + 1);
    after = axes_range(x, kept.back() + 1, rank);
  } else if (contiguous(axes)) {  // a run followed by kept axes
    strided = true;
    before = axes_range(x, 0, axes.front());
    middle = axes_range(x, axes.front(), axes.back() + 1);
    after = axes_range(x, axes.back() + 1, rank);
  } else {
    c.fail("axes", "a run of x's axes, or all of them but one run (batch norm's [0, 2, 3])", c.b.spec["axes"].dump());
  }
  if (groups > 1 && !contiguous(axes))
    c.fail("groups", "1 unless the axes are one run (the first of them is split into the groups)",
           std::to_string(groups));

  // weight and bias: inputs shaped as x's affine_axes (one run).
  const TensorSpec* w = c.has("weight") ? &c.input("weight") : nullptr;
  const TensorSpec* b = c.has("bias") ? &c.input("bias") : nullptr;
  for (const auto* t : {w, b})
    if (t && !is_float_storage(t->dtype))
      c.fail(t == w ? "weight" : "bias", "a float32, bfloat16 or float16 tensor", std::string(dtype_name(t->dtype)));
  if (w && b && w->dtype != b->dtype)
    c.fail("bias", fmt::format("the weight's dtype {}", dtype_name(w->dtype)), std::string(dtype_name(b->dtype)));
  std::vector<int64_t> affine;
  if (w || b) {
    if (!c.has("affine_axes"))
      c.fail("affine_axes", "the axes of x the weight and bias are shaped as (one run)", "nothing");
    affine = read_axes(c, "affine_axes", x);
    if (!contiguous(affine))
      c.fail("affine_axes", "one run of x's axes (the weight's shape)", c.b.spec["affine_axes"].dump());
    if (strided)
      c.fail(w ? "weight" : "bias",
             "no weight or bias when each group is strided over a middle run of axes (the templates scale those "
             "groups only)",
             "\"" + (w ? w : b)->name + "\"");
    for (const auto* t : {w, b})
      if (t && t->shape.size() != affine.size())
        c.fail(t == w ? "weight" : "bias",
               fmt::format("x's affine axes {}: {} axes", c.b.spec["affine_axes"].dump(), affine.size()),
               shape_text(t->shape));
  } else if (c.has("affine_axes")) {
    c.fail("affine_axes", "nothing without a weight or a bias", c.b.spec["affine_axes"].dump());
  }
  for (const auto& t : c.task.inputs)
    if (t.name != x.name && !(w && t.name == w->name) && !(b && t.name == b->name) &&
        !(eps_in && t.name == eps_in->name))
      c.fail("x", "every input of the task bound (x, weight, bias, eps)", "\"" + t.name + "\" left out");
  for (const auto& t : c.task.outputs)
    if (t.name != y.name) c.fail("y", "the task's only output", "\"" + t.name + "\" left out");

  // Per workload: the groups divide their axis, the weight's sizes are x's, and its index is per group or runs
  // whole through each group's runs.
  const std::vector<std::string> affine_axes =
      affine.empty() ? std::vector<std::string>{} : axes_range(x, affine.front(), affine.back() + 1);
  const std::vector<std::string> after_affine =
      affine.empty() ? std::vector<std::string>{} : axes_range(x, affine.back() + 1, rank);
  auto product = [](const AxisValues& ax, const std::vector<std::string>& dims) {
    int64_t p = 1;
    for (const auto& d : dims) p *= axis_value(ax, d);
    return p;
  };
  for (std::size_t i = 0; i < c.task.workloads.size(); ++i) {
    const auto ax = resolve_axes(c.task, c.task.workloads[i]);
    const std::string at = " (workload " + c.task.workloads[i].uuid + ")";
    int64_t outer = product(ax, before), mid = product(ax, middle), inner = product(ax, after);
    if (groups > 1) {
      const int64_t split = axis_value(ax, x.shape[static_cast<std::size_t>(axes.front())]);
      if (split % groups != 0)
        c.fail("groups",
               fmt::format("a divisor of x's axis {} ({} = {}){}", axes.front(),
                           x.shape[static_cast<std::size_t>(axes.front())], split, at),
               std::to_string(groups));
      // the split axis's groups join the index of a group: trailing run (mid, inner), else (outer, mid)
      if (strided)
        outer *= groups, mid /= groups;
      else
        mid *= groups, inner /= groups;
    }
    for (const auto* t : {w, b}) {
      if (!t) continue;
      for (std::size_t a = 0; a < affine.size(); ++a)
        if (axis_value(ax, t->shape[a]) != axis_value(ax, affine_axes[a]))
          c.fail(t == w ? "weight" : "bias",
                 fmt::format("x's sizes on its affine axes {}: [{}]{}", c.b.spec["affine_axes"].dump(),
                             fmt::join(affine_axes, ", "), at),
                 shape_text(t->shape));
    }
    if (!affine.empty() && outer * mid * inner > 0) {
      const int64_t wdiv = product(ax, after_affine), wmod = product(ax, affine_axes);
      const bool whole = outer == 1 || (mid * inner) % (wdiv * wmod) == 0;
      const bool per_group = wdiv % inner == 0;
      const bool runs = inner % wdiv == 0 && wmod % (inner / wdiv) == 0;
      if (!whole || !(per_group || runs))
        c.fail("affine_axes",
               fmt::format("axes whose weight index is constant over each group or runs whole through its "
                           "elements (per channel, or the normalised axes themselves){}",
                           at),
               c.b.spec["affine_axes"].dump());
    }
    const int64_t group_size = strided ? mid : outer * inner, n_groups = strided ? outer * inner : mid;
    add_workload(bt, c, i,
                 {{"OUTER", outer},
                  {"MID", mid},
                  {"INNER", inner},
                  {"GROUPS", n_groups},
                  {"GROUP_SIZE", group_size},
                  {"STRIDED", strided ? 1 : 0},
                  {"ELEM_BYTES", static_cast<int64_t>(dtype_size(x.dtype))}});
  }

  bt.op = "norm";
  const DType wd = w ? w->dtype : b ? b->dtype : DType::f32;
  std::string p = common_prologue(c);
  p += fmt::format("using khive_t = {};\nusing khive_w_t = {};\n", storage_type(x.dtype, c.backend),
                   storage_type(wd, c.backend));
  p += conversions("t", x.dtype, c.backend);
  p += conversions("w", wd, c.backend);
  p += "enum { KHIVE_VAR = 0, KHIVE_RMS = 1, KHIVE_L2 = 2, KHIVE_MEAN_ABS = 3 };\n";
  p += fmt::format("constexpr int KHIVE_STAT = {};   // {}\n", stat_it - stats.begin(), stat);
  p += fmt::format(
      "// true: a group per (outer, inner) index over mid (stride inner); false: a group per mid index over (outer, "
      "inner)\nconstexpr bool KHIVE_REDUCE_MID = {};\n",
      strided);
  p += fmt::format("constexpr bool KHIVE_HAS_WEIGHT = {}, KHIVE_HAS_BIAS = {};\n", w != nullptr, b != nullptr);
  p += "// x and y as [outer, mid, inner]; element e's weight and bias: w[(e / wdiv) % wmod].\n"
       "struct khive_norm_args {\n  const khive_t* x;\n  const khive_w_t* w;\n  const khive_w_t* b;\n  khive_t* y;\n"
       "  int64_t outer, mid, inner, wdiv, wmod;\n  float eps;\n};\n";
  p += "// y = (x - shift) * scale: scale from a group's n elements and m2, their summed squared deviations from the\n"
       "// mean (var) or their summed x^2 (rms, l2) or |x| (mean_abs).\n"
       "KHIVE_HD float khive_norm_scale(float n, float m2, float eps) {\n"
       "  if (KHIVE_STAT == KHIVE_L2) return 1.0f / sqrtf(m2 + eps);\n"
       "  if (KHIVE_STAT == KHIVE_MEAN_ABS) return 1.0f / (m2 / n + eps);\n"
       "  return 1.0f / sqrtf(m2 / n + eps);\n}\n";

  auto prod_cpp = [&](const std::vector<std::string>& dims, const char* op) {
    const std::string s = shape_product_cpp(c.task, dims);
    return groups > 1 && op ? fmt::format("({}) {} {}", s, op, groups) : s;
  };
  const std::string outer_cpp = prod_cpp(before, strided ? "*" : nullptr);
  const std::string mid_cpp = prod_cpp(middle, strided ? "/" : "*");
  const std::string inner_cpp = prod_cpp(after, strided ? nullptr : "/");
  std::string e = launch_signature(c.task, c.backend) + " {\n";
  e += fmt::format("  const khive_norm_args khive_a{{{}, {}, {}, {}, {}, {}, {}, {}, {}, {}}};\n", x.name,
                   w ? w->name : "nullptr", b ? b->name : "nullptr", y.name, outer_cpp, mid_cpp, inner_cpp,
                   affine.empty() ? "int64_t(1)" : shape_product_cpp(c.task, after_affine),
                   affine.empty() ? "int64_t(1)" : shape_product_cpp(c.task, affine_axes), eps_cpp);
  e += fmt::format("  khive_run(khive_a{});\n}}\n", launch_args_tail(c.backend));
  bt.placeholders["PROLOGUE"] = p;
  bt.placeholders["ENTRY"] = e;
  bt.dtype = std::string(dtype_name(x.dtype));
  bt.summary = fmt::format(
      "{} = {} norm of {} over axes [{}]{}{}{}{} ({})", y.name, stat, x.name, fmt::join(axes, ", "),
      groups > 1 ? fmt::format(" in {} groups", groups) : "", w ? ", * " + w->name : "", b ? ", + " + b->name : "",
      affine.empty() ? "" : fmt::format(" (shaped as axes [{}])", fmt::join(affine, ", ")), bt.dtype);
  return bt;
}

}  // namespace khive::tuner::bind_detail
