// The elementwise family's binder: y = f(inputs...) per element, broadcast inputs read along a run of the output's
// axes: found by axis name, or ("broadcast": "torch", what the tuner infers for a recognised reference) by torch's
// rule (the input's axes aligned with the output's last ones, each the output's or 1); an input with a "views" entry
// read through a strided view of the output's flat index (transposes, heads split or merged, expands, slices).
#include "khive/tuner/bind/common.hpp"

#include <algorithm>
#include <cctype>
#include <functional>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "khive/task/expr.hpp"

namespace khive::tuner::bind_detail {

namespace {

// How an elementwise input is read at the output's flat index i: at i (full), or at (i / inner) % extent when its
// axes are a contiguous run of the output's (a broadcast input: A[N] against C[N, M] is one value per row).
struct EwInput {
  const TensorSpec* t = nullptr;
  std::string name;  // the op's name for it: the tensor's, or an alias (another view of the same tensor)
  bool broadcast = false;
  std::size_t first = 0;  // broadcast: the output axis its first axis lines up with
  std::size_t len = 0;    // broadcast: how many output axes the run spans (extent: their product)
  bool viewed = false;    // "views" names it (read at i when the view is the identity on every workload)
  bool view = false;      // read through its view: the output's flat index as `shape` (row-major), `strides`, `offset`
  std::vector<std::string> shape, strides;  // view: axis expressions (in0.., out0.., task axes)
  std::string offset = "0";
};

}  // namespace

// The view's symbols on one workload: in<k> = the input's axis k, out<d> = the output's axis d, and the task's axes.
AxisValues view_symbols(const TensorSpec& in, const TensorSpec& out, const AxisValues& ax) {
  AxisValues v = ax;
  for (std::size_t k = 0; k < in.shape.size(); ++k) v[fmt::format("in{}", k)] = axis_value(ax, in.shape[k]);
  for (std::size_t d = 0; d < out.shape.size(); ++d) v[fmt::format("out{}", d)] = axis_value(ax, out.shape[d]);
  return v;
}

// One workload's view: the element of the input that output element (c_0, .., c_{r-1}) of the view's shape reads is
// offset + sum c_d * strides[d]; fails (through c) naming the field when it is malformed, does not cover the output's
// elements exactly, or reads outside the input.
ViewOnWorkload eval_view(const Ctx& c, const std::string& field, const TensorSpec& in, const TensorSpec& out,
                         const std::vector<std::string>& shape, const std::vector<std::string>& strides,
                         const std::string& offset, const AxisValues& ax, const std::string& workload) {
  const AxisValues sym = view_symbols(in, out, ax);
  auto value = [&](const std::string& f, const std::string& e) {
    try {
      return eval_int_expr(e, sym);
    } catch (const std::exception& ex) {
      c.fail(f, "an integer expression of in0.. (the input's axes), out0.. (the output's) and the task's axes",
             fmt::format("\"{}\" ({})", e, ex.what()));
    }
  };
  ViewOnWorkload v;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    v.shape.push_back(value(fmt::format("{}.shape[{}]", field, d), shape[d]));
    if (v.shape.back() < 0)
      c.fail(fmt::format("{}.shape[{}]", field, d), "a size >= 0",
             fmt::format("{} = {} on workload {}", shape[d], v.shape.back(), workload));
  }
  for (std::size_t d = 0; d < strides.size(); ++d) {
    v.strides.push_back(value(fmt::format("{}.strides[{}]", field, d), strides[d]));
    if (v.strides.back() < 0)
      c.fail(fmt::format("{}.strides[{}]", field, d), "a stride >= 0",
             fmt::format("{} = {} on workload {}", strides[d], v.strides.back(), workload));
  }
  v.offset = value(field + ".offset", offset);
  if (v.offset < 0)
    c.fail(field + ".offset", "an offset >= 0", fmt::format("{} = {} on workload {}", offset, v.offset, workload));
  int64_t count = 1, last = v.offset;
  for (std::size_t d = 0; d < v.shape.size(); ++d) {
    count *= v.shape[d];
    last += (v.shape[d] - 1) * v.strides[d];
  }
  const int64_t n_out = element_count(out, ax), n_in = element_count(in, ax);
  if (count != n_out)
    c.fail(field + ".shape", fmt::format("sizes whose product is {}'s element count {}", out.name, n_out),
           fmt::format("{} (product {}) on workload {}", shape_text(shape), count, workload));
  if (count > 0 && last >= n_in)
    c.fail(field, fmt::format("a view inside {}'s {} elements", in.name, n_in),
           fmt::format("its last element at {} on workload {}", last, workload));
  return v;
}

namespace {

// Torch's broadcast of input `in` against output `out` (aligned at the end; an input axis is the output's, by name or
// by its size on every workload, or 1), as one run of output axes [first, first + len) the input's elements follow
// (axes that are 1 on both sides count either way). nullopt with `why` when an axis neither matches nor is 1, or the
// matching axes are not one run (an input [C, 1, W] against [N, C, H, W]).
std::optional<std::pair<std::size_t, std::size_t>> torch_run(const std::vector<std::string>& in,
                                                             const std::vector<std::string>& out,
                                                             const std::vector<AxisValues>& axes, std::string* why) {
  if (in.size() > out.size()) {
    *why = "more axes than the output";
    return std::nullopt;
  }
  auto always = [&](const std::string& a, const std::function<bool(int64_t)>& f) {
    return std::all_of(axes.begin(), axes.end(), [&](const AxisValues& ax) { return f(axis_value(ax, a)); });
  };
  auto one = [&](const std::string& a) { return always(a, [](int64_t v) { return v == 1; }); };
  const std::size_t off = out.size() - in.size();
  std::optional<std::size_t> lo, hi;
  bool gap = false;  // a broadcast axis after the run began
  for (std::size_t p = 0; p < out.size(); ++p) {
    if (one(out[p]) && (p < off || one(in[p - off]))) continue;  // 1 on both sides (or absent and 1)
    bool full = false;
    if (p >= off) {
      const std::string& a = in[p - off];
      full = a == out[p] || std::all_of(axes.begin(), axes.end(), [&](const AxisValues& ax) {
               return axis_value(ax, a) == axis_value(ax, out[p]);
             });
      if (!full && !one(a)) {
        *why = fmt::format("its axis {} ({}) is neither the output's axis {} ({}) nor 1", p - off, a, p, out[p]);
        return std::nullopt;
      }
    }
    if (!full) {
      gap = gap || lo.has_value();
      continue;
    }
    if (gap) {
      *why = "the axes it has of the output's are not one run (a broadcast axis between them)";
      return std::nullopt;
    }
    if (!lo) lo = p;
    hi = p;
  }
  if (!lo) return std::make_pair(out.size(), std::size_t(0));  // one value for every element
  return std::make_pair(*lo, *hi - *lo + 1);
}

// Where input t's axes occur as a contiguous run of the output's axes (by axis name).
std::vector<std::size_t> runs_in(const std::vector<std::string>& in, const std::vector<std::string>& out) {
  std::vector<std::size_t> at;
  if (in.empty() || in.size() > out.size()) return at;
  for (std::size_t p = 0; p + in.size() <= out.size(); ++p)
    if (std::equal(in.begin(), in.end(), out.begin() + static_cast<std::ptrdiff_t>(p))) at.push_back(p);
  return at;
}

// The suffix of an input storage type's conversions (khive_to_float_f32, _bf16, _f16).
std::string dtype_tag(DType d) { return d == DType::f32 ? "f32" : d == DType::bf16 ? "bf16" : "f16"; }

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; });
}

// The tensor inputs ("inputs"), each of a float storage type (float32, bfloat16, float16: the output's or another),
// then the aliases ("aliases": {alias: one of the inputs}, another name of that tensor with its own view); adds the
// tensors' names to covered.
std::vector<EwInput> read_inputs(const Ctx& c, const TensorSpec& out, std::set<std::string>& covered) {
  if (!c.has("inputs") || !c.b.spec["inputs"].is_array() || c.b.spec["inputs"].empty())
    c.fail("inputs", "a non-empty array of input tensor names",
           c.has("inputs") ? c.b.spec["inputs"].dump() : "nothing");
  std::vector<EwInput> ins;
  if (c.b.spec["inputs"].size() > 64)
    c.fail("inputs", "at most 64 input tensors", std::to_string(c.b.spec["inputs"].size()));
  for (std::size_t i = 0; i < c.b.spec["inputs"].size(); ++i) {
    const json& n = c.b.spec["inputs"][i];
    const TensorSpec* t = n.is_string() ? c.task.find_input(n.get<std::string>()) : nullptr;
    const std::string f = "inputs[" + std::to_string(i) + "]";
    if (!t || t->scalar) c.fail(f, "an input tensor of task '" + c.task.name + "'", n.dump());
    // Another float storage type than the output's (a bf16 gradient read by a float32 reference's stage): read as
    // its own type and converted to float like the others (khive_read).
    if (!is_float_storage(t->dtype))
      c.fail(f, "a float32, bfloat16 or float16 tensor (read as float)",
             fmt::format("\"{}\" of dtype {}", t->name, dtype_name(t->dtype)));
    EwInput e;
    e.t = t;
    e.name = t->name;
    ins.push_back(std::move(e));
    covered.insert(t->name);
  }
  if (c.has("aliases")) {
    const json& aj = c.b.spec["aliases"];
    if (!aj.is_object())
      c.fail("aliases", "an object {alias: the name of one of the binding's inputs} (another view of that input)",
             aj.dump());
    for (auto it = aj.begin(); it != aj.end(); ++it) {
      const std::string f = "aliases." + it.key();
      if (!is_identifier(it.key()) || c.task.find_input(it.key()) || c.task.find_output(it.key()))
        c.fail(f, "a C identifier that names no tensor of the task", "\"" + it.key() + "\"");
      auto target = std::find_if(ins.begin(), ins.end(), [&](const EwInput& e) {
        return it.value().is_string() && e.name == it.value().get<std::string>() && e.name == e.t->name;
      });
      if (target == ins.end()) c.fail(f, "the name of one of the binding's inputs", it.value().dump());
      if (ins.size() >= 64) c.fail("aliases", "at most 64 input tensors and aliases", std::to_string(ins.size() + 1));
      EwInput e;
      e.t = target->t;
      e.name = it.key();
      ins.push_back(std::move(e));
    }
  }
  return ins;
}

// The floating-point scalar inputs ("scalars"); adds their names to covered.
std::vector<const TensorSpec*> read_scalars(const Ctx& c, std::set<std::string>& covered) {
  std::vector<const TensorSpec*> scalars;
  if (!c.has("scalars")) return scalars;
  if (!c.b.spec["scalars"].is_array()) c.fail("scalars", "an array of scalar input names", c.b.spec["scalars"].dump());
  for (std::size_t i = 0; i < c.b.spec["scalars"].size(); ++i) {
    const json& n = c.b.spec["scalars"][i];
    const TensorSpec* t = n.is_string() ? c.task.find_input(n.get<std::string>()) : nullptr;
    if (!t || !t->scalar || !dtype_is_float(t->dtype))
      c.fail("scalars[" + std::to_string(i) + "]", "a floating-point scalar input (shape null)", n.dump());
    scalars.push_back(t);
    covered.insert(t->name);
  }
  return scalars;
}

// "broadcast": "torch": every input placed by torch's rule (torch_run), not by axis name.
bool torch_rule(const Ctx& c) { return c.has("broadcast") && c.b.spec["broadcast"] == json("torch"); }

// "broadcast": {"name": first output axis}: only needed where an input's axes occur at more than one place
// of the output's (A[N] against C[N, N]); otherwise the binder finds the place itself.
std::map<std::string, std::size_t> read_placements(const Ctx& c, const std::vector<EwInput>& ins,
                                                   const TensorSpec& out) {
  std::map<std::string, std::size_t> placed;
  if (!c.has("broadcast") || torch_rule(c)) return placed;
  const json& bj = c.b.spec["broadcast"];
  if (!bj.is_object())
    c.fail("broadcast",
           "an object {input name: index of the output axis its first axis lines up with}, or \"torch\" (torch's "
           "rule: aligned at the end, each axis the output's or 1)",
           bj.dump());
  for (auto it = bj.begin(); it != bj.end(); ++it) {
    const std::string f = "broadcast." + it.key();
    if (std::none_of(ins.begin(), ins.end(), [&](const EwInput& e) { return e.name == it.key(); }))
      c.fail(f, "the name of one of the binding's inputs", "\"" + it.key() + "\"");
    if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0 ||
        it.value().get<int64_t>() >= static_cast<int64_t>(out.shape.size()))
      c.fail(f,
             fmt::format("an output axis index 0..{} of {} {}", out.shape.size() - 1, out.name, shape_text(out.shape)),
             it.value().dump());
    placed[it.key()] = it.value().get<std::size_t>();
  }
  return placed;
}

// "views": {"name": {"shape": [...], "strides": [...], "offset": ...}}: the inputs read through a strided view of the
// output's flat index (checked on every workload: eval_view); a view that is the plain row-major read on every
// workload reads the input at i.
void read_views(const Ctx& c, std::vector<EwInput>& ins, const TensorSpec& out, const std::vector<AxisValues>& axes) {
  if (!c.has("views")) return;
  const json& vj = c.b.spec["views"];
  if (!vj.is_object())
    c.fail("views",
           "an object {input name: {\"shape\": [sizes], \"strides\": [one per size], \"offset\": number}} of "
           "axis expressions",
           vj.dump());
  auto exprs = [&](const std::string& f, const json& j, bool list) {
    std::vector<std::string> v;
    for (const json& e : list ? j : json::array({j})) {
      if (e.is_number_integer())
        v.push_back(std::to_string(e.get<int64_t>()));
      else if (e.is_string())
        v.push_back(e.get<std::string>());
      else
        c.fail(f, "an integer or an axis expression (a string)", e.dump());
    }
    return v;
  };
  for (auto it = vj.begin(); it != vj.end(); ++it) {
    const std::string f = "views." + it.key();
    auto in = std::find_if(ins.begin(), ins.end(), [&](const EwInput& e) { return e.name == it.key(); });
    if (in == ins.end()) c.fail(f, "the name of one of the binding's inputs", "\"" + it.key() + "\"");
    const json& v = it.value();
    if (!v.is_object() || !v.contains("shape") || !v.contains("strides") || !v["shape"].is_array() ||
        !v["strides"].is_array())
      c.fail(f, "an object with \"shape\" and \"strides\" (lists of axis expressions) and an optional \"offset\"",
             v.dump());
    for (auto k = v.begin(); k != v.end(); ++k)
      if (k.key() != "shape" && k.key() != "strides" && k.key() != "offset")
        c.fail(f + "." + k.key(), "no such key (shape, strides, offset)", k.value().dump());
    in->shape = exprs(f + ".shape", v["shape"], true);
    in->strides = exprs(f + ".strides", v["strides"], true);
    if (v.contains("offset")) in->offset = exprs(f + ".offset", v["offset"], false)[0];
    if (in->shape.empty() || in->shape.size() > static_cast<std::size_t>(kMaxViewRank))
      c.fail(f + ".shape", fmt::format("1 to {} sizes", kMaxViewRank), v["shape"].dump());
    if (in->strides.size() != in->shape.size())
      c.fail(f + ".strides", fmt::format("{} strides, one per size of the shape", in->shape.size()),
             v["strides"].dump());
    in->viewed = true;
    bool plain = true;  // the row-major read at i on every workload
    for (std::size_t w = 0; w < axes.size(); ++w) {
      const ViewOnWorkload vw =
          eval_view(c, f, *in->t, out, in->shape, in->strides, in->offset, axes[w], c.task.workloads[w].uuid);
      int64_t step = 1;
      plain = plain && vw.offset == 0;
      for (std::size_t d = vw.shape.size(); d-- > 0;) {
        plain = plain && (vw.shape[d] == 1 || vw.strides[d] == step);
        step *= vw.shape[d];
      }
    }
    in->view = !plain;
  }
}

// Each input: the output's shape (or, as before broadcasting, its element count on every workload) is read at i;
// otherwise its axes must be a contiguous run of the output's, and it is marked broadcast at that run.
void place_inputs(const Ctx& c, std::vector<EwInput>& ins, const TensorSpec& out, const std::vector<AxisValues>& axes,
                  const std::map<std::string, std::size_t>& placed) {
  for (std::size_t k = 0; k < ins.size(); ++k) {
    EwInput& in = ins[k];
    const std::string f = "inputs[" + std::to_string(k) + "]";
    if (in.viewed) {
      if (placed.count(in.name))
        c.fail("broadcast." + in.name, "nothing for an input read through its view (views." + in.name + ")",
               std::to_string(placed.at(in.name)));
      continue;
    }
    bool same_count = true;
    for (const auto& ax : axes) same_count = same_count && element_count(*in.t, ax) == element_count(out, ax);
    const auto pl = placed.find(in.name);
    if (in.t->shape == out.shape || (same_count && pl == placed.end())) {
      if (pl != placed.end() && pl->second != 0)
        c.fail("broadcast." + in.name, "0 (the input has the output's shape " + shape_text(out.shape) + ")",
               std::to_string(pl->second));
      continue;
    }
    in.broadcast = true;
    if (torch_rule(c)) {
      std::string why;
      const auto run = torch_run(in.t->shape, out.shape, axes, &why);
      if (!run)
        c.fail(f,
               fmt::format("an input that broadcasts against the output's shape {} by torch's rule (\"broadcast\": "
                           "\"torch\": aligned at the end, each axis the output's or 1, those of the output's one "
                           "run)",
                           shape_text(out.shape)),
               fmt::format("\"{}\" of shape {}: {}", in.t->name, shape_text(in.t->shape), why));
      in.first = run->first;
      in.len = run->second;
      continue;
    }
    in.len = in.t->shape.size();
    const auto at = runs_in(in.t->shape, out.shape);
    if (at.empty())
      c.fail(f,
             fmt::format("an input of the output's shape {}, or a broadcast input whose axes are a contiguous run of "
                         "the output's (one value per "
                         "row: the leading axes; per column: the trailing ones)",
                         shape_text(out.shape)),
             fmt::format("\"{}\" of shape {}", in.t->name, shape_text(in.t->shape)));
    if (pl != placed.end()) {
      if (std::find(at.begin(), at.end(), pl->second) == at.end())
        c.fail("broadcast." + in.name,
               fmt::format("an output axis where {} {} lines up with {}'s axes", in.t->name, shape_text(in.t->shape),
                           out.name),
               fmt::format("{} (axes {} of {})", pl->second,
                           shape_text(std::vector<std::string>(
                               out.shape.begin() + static_cast<std::ptrdiff_t>(pl->second), out.shape.end())),
                           shape_text(out.shape)));
      in.first = pl->second;
    } else if (at.size() > 1) {
      c.fail(
          "broadcast",
          fmt::format("\"broadcast\": {{\"{}\": first output axis}}: {} {} lines up with {} {} at axes {} and {}",
                      in.t->name, in.t->name, shape_text(in.t->shape), out.name, shape_text(out.shape), at[0], at[1]),
          "nothing");
    } else {
      in.first = at[0];
    }
  }
}

// "select": {"axis": d, "pieces": P}: the output's axis d cut into P equal parts (a cat's), the op telling them apart
// by khive_piece (0..P-1): element i's part is (i / pinner) % P, pinner = (size of axis d / P) x the sizes after d.
struct Select {
  std::size_t axis = 0;
  int64_t pieces = 0;  // 0: none
};

Select read_select(const Ctx& c, const TensorSpec& out, const std::vector<AxisValues>& axes) {
  Select sel;
  if (!c.has("select")) return sel;
  const json& sj = c.b.spec["select"];
  const std::string want = fmt::format(
      "{{\"axis\": an output axis index 0..{}, \"pieces\": 2..64}} (the axis cut into equal parts, told apart by "
      "khive_piece)",
      out.shape.empty() ? 0 : out.shape.size() - 1);
  if (!sj.is_object() || !sj.contains("axis") || !sj.contains("pieces") || !sj["axis"].is_number_integer() ||
      !sj["pieces"].is_number_integer() || sj.size() != 2)
    c.fail("select", want, sj.dump());
  const int64_t a = sj["axis"].get<int64_t>(), n = sj["pieces"].get<int64_t>();
  if (a < 0 || a >= static_cast<int64_t>(out.shape.size())) c.fail("select.axis", want, sj["axis"].dump());
  if (n < 2 || n > 64) c.fail("select.pieces", want, sj["pieces"].dump());
  sel.axis = static_cast<std::size_t>(a);
  sel.pieces = n;
  for (std::size_t w = 0; w < axes.size(); ++w) {
    const int64_t size = axis_value(axes[w], out.shape[sel.axis]);
    if (size % n != 0)
      c.fail("select.pieces",
             fmt::format("a count that divides {}'s axis {} ({})", out.name, sel.axis, out.shape[sel.axis]),
             fmt::format("{} against {} = {} on workload {}", n, out.shape[sel.axis], size, c.task.workloads[w].uuid));
  }
  return sel;
}

std::string elementwise_prologue(const Ctx& c, const TensorSpec& out, const std::vector<EwInput>& ins,
                                 const std::vector<const TensorSpec*>& scalars, const std::string& op,
                                 const Select& sel) {
  int nbcast = 0;
  for (const auto& in : ins) nbcast += in.broadcast;
  std::string p = typed_prologue(c, out.dtype);
  p += fmt::format("constexpr int KHIVE_NIN = {};\n", ins.size());
  p += "// Input k is read at the output's flat index i, or (khive_bcast(k), a broadcast input) at (i / inner[k]) % "
       "extent[k],\n// or (khive_view(k)) through its strided view.\n";
  p += "// A bit mask, not a constexpr array: device code can use constexpr scalars only.\n";
  uint64_t mask = 0;
  for (std::size_t k = 0; k < ins.size(); ++k) mask |= uint64_t(ins[k].broadcast) << k;
  p += fmt::format("constexpr unsigned long long KHIVE_BCAST_MASK = 0x{:x}ull;\nconstexpr bool KHIVE_ANY_BCAST = {};\n",
                   mask, nbcast > 0);
  p += "KHIVE_HD constexpr bool khive_bcast(int k) { return ((KHIVE_BCAST_MASK >> k) & 1ull) != 0; }\n";
  // Inputs read through a view (khive_view(k)): slot khive_vslot(k) of vdim / vstride / voff; the output's flat index
  // i as coordinates of vdim (row-major), the element offset + sum c_d * vstride[d].
  uint64_t vmask = 0;
  std::size_t nview = 0, vrank = 1;
  for (std::size_t k = 0; k < ins.size(); ++k)
    if (ins[k].view) {
      vmask |= uint64_t(1) << k;
      ++nview;
      vrank = std::max(vrank, ins[k].shape.size());
    }
  p += fmt::format(
      "constexpr unsigned long long KHIVE_VIEW_MASK = 0x{:x}ull;\nconstexpr bool KHIVE_ANY_VIEW = {};\n"
      "constexpr int KHIVE_NVIEW = {}, KHIVE_VRANK = {};\n",
      vmask, nview > 0, std::max<std::size_t>(nview, 1), vrank);
  p += "KHIVE_HD constexpr bool khive_view(int k) { return ((KHIVE_VIEW_MASK >> k) & 1ull) != 0; }\n";
  p += "KHIVE_HD constexpr int khive_vslot(int k) {\n  int s = 0;\n  for (int j = 0; j < k; ++j) s += khive_view(j);\n"
       "  return s;\n}\n";
  p += "struct khive_ins {\n  const khive_t* p[KHIVE_NIN];\n  int64_t inner[KHIVE_NIN];\n  int64_t extent[KHIVE_NIN];\n"
       "  int64_t vdim[KHIVE_NVIEW][KHIVE_VRANK];\n  int64_t vstride[KHIVE_NVIEW][KHIVE_VRANK];\n"
       "  int64_t voff[KHIVE_NVIEW];\n  int64_t pinner = 1;  // select: element i is in part (i / pinner) % "
       "KHIVE_PIECES\n};\n";
  // Inputs of another float storage type than the output's (khive_foreign(k)): their pointer kept in p[k] as
  // khive_t's, read through khive_read as their own type; the others read as khive_t.
  uint64_t fmask = 0;
  std::set<DType> others;
  for (std::size_t k = 0; k < ins.size(); ++k)
    if (ins[k].t->dtype != out.dtype) {
      fmask |= uint64_t(1) << k;
      others.insert(ins[k].t->dtype);
    }
  p += fmt::format(
      "// Inputs of another storage type than the output's, read as their own type (khive_read).\n"
      "constexpr unsigned long long KHIVE_FOREIGN_MASK = 0x{:x}ull;\nconstexpr bool KHIVE_ANY_FOREIGN = {};\n",
      fmask, fmask != 0);
  p += "KHIVE_HD constexpr bool khive_foreign(int k) { return ((KHIVE_FOREIGN_MASK >> k) & 1ull) != 0; }\n";
  for (DType d : others) p += conversions(dtype_tag(d), d, c.backend);
  p += "// Input k's element j as float, in its own storage type.\n"
       "KHIVE_HD float khive_read(const khive_ins& in, int k, int64_t j) {\n";
  if (fmask) {
    p += "  switch (k) {\n";
    for (std::size_t k = 0; k < ins.size(); ++k)
      if (ins[k].t->dtype != out.dtype)
        p += fmt::format(
            "    case {0}: return khive_to_float_{1}(reinterpret_cast<const {2}*>(in.p[{0}])[j]);  // {3}\n", k,
            dtype_tag(ins[k].t->dtype), storage_type(ins[k].t->dtype, c.backend), ins[k].name);
    p += "    default: break;\n  }\n";
  }
  p += "  return khive_to_float_t(in.p[k][j]);\n}\n";
  p += fmt::format(
      "// The output's axis {} cut into KHIVE_PIECES equal parts (a cat's) that the op tells apart by khive_piece.\n"
      "constexpr bool KHIVE_HAS_PIECE = {};\nconstexpr int64_t KHIVE_PIECES = {};\n",
      sel.pieces ? std::to_string(sel.axis) : std::string("-"), sel.pieces > 0, std::max<int64_t>(sel.pieces, 1));
  p += "struct khive_scalars { ";
  for (const auto* s : scalars) p += fmt::format("float {}; ", s->name);
  p += scalars.empty() ? "int unused_; };\n" : "};\n";
  p += "// The task's function of one element (inputs as float, in binding order).\n";
  p += "KHIVE_HD float khive_op(const float* khive_v, const khive_scalars& khive_s, int khive_piece) {\n";
  for (std::size_t i = 0; i < ins.size(); ++i) p += fmt::format("  const float {} = khive_v[{}];\n", ins[i].name, i);
  for (const auto* s : scalars) p += fmt::format("  const float {0} = khive_s.{0};\n", s->name);
  p += "  (void)khive_s;\n  (void)khive_piece;\n";
  p += fmt::format("  return {};\n}}\n", op);
  return p;
}

std::string elementwise_entry(const Ctx& c, const TensorSpec& out, const std::vector<EwInput>& ins,
                              const std::vector<const TensorSpec*>& scalars, const Select& sel) {
  // The map of a broadcast input: extent = the product of its axes, inner = the product of the output's axes
  // after them.
  auto dims = [&](const EwInput& in, bool inner) {
    const auto b = out.shape.begin() + static_cast<std::ptrdiff_t>(in.first);
    const auto e = b + static_cast<std::ptrdiff_t>(in.len);
    return inner ? std::vector<std::string>(e, out.shape.end()) : std::vector<std::string>(b, e);
  };
  std::string in_list, inner_list, extent_list, sc_list;
  for (const auto& in : ins) {
    const char* sep = in_list.empty() ? "" : ", ";
    // An input of another storage type: its address kept as khive_t's (khive_read reads it as its own type).
    in_list +=
        sep + (in.t->dtype != out.dtype ? fmt::format("reinterpret_cast<const khive_t*>({})", in.t->name) : in.t->name);
    inner_list += sep + (in.broadcast ? shape_product_cpp(c.task, dims(in, true)) : std::string("int64_t(1)"));
    extent_list += sep + (in.broadcast ? shape_product_cpp(c.task, dims(in, false)) : std::string("khive_n"));
  }
  for (const auto* s : scalars)
    sc_list += (sc_list.empty() ? "" : ", ") + fmt::format("static_cast<float>({})", s->name);
  if (scalars.empty()) sc_list = "0";
  // The views (padded to the widest with leading size-1 axes): their sizes, strides and offsets in C++.
  std::size_t vrank = 1;
  for (const auto& in : ins)
    if (in.view) vrank = std::max(vrank, in.shape.size());
  std::string vdim_list, vstride_list, voff_list;
  for (const auto& in : ins) {
    if (!in.view) continue;
    auto cpp = [&](const std::string& e) {
      return expr_to_cpp(e, [&](const std::string& n) {
        for (std::size_t k = 0; k < in.t->shape.size(); ++k)
          if (n == fmt::format("in{}", k)) return "(" + axis_cpp(c.task, in.t->shape[k]) + ")";
        for (std::size_t d = 0; d < out.shape.size(); ++d)
          if (n == fmt::format("out{}", d)) return "(" + axis_cpp(c.task, out.shape[d]) + ")";
        return "(" + axis_cpp(c.task, n) + ")";
      });
    };
    std::string dims, strides;
    for (std::size_t d = 0; d < vrank; ++d) {
      const bool pad = d < vrank - in.shape.size();
      const std::size_t at = d - (vrank - in.shape.size());
      dims += (d ? ", " : "") + (pad ? std::string("int64_t(1)") : cpp(in.shape[at]));
      strides += (d ? ", " : "") + (pad ? std::string("int64_t(0)") : cpp(in.strides[at]));
    }
    const char* sep = vdim_list.empty() ? "" : ", ";
    vdim_list += sep + ("{" + dims + "}");
    vstride_list += sep + ("{" + strides + "}");
    voff_list += sep + cpp(in.offset);
  }
  std::string e = launch_signature(c.task, c.backend) + " {\n";
  e += fmt::format("  const int64_t khive_n = {};\n", shape_product_cpp(c.task, out.shape));
  const char* cst = sel.pieces ? "" : "const ";
  if (vdim_list.empty())
    // (the views' arrays given empty: a CUDA host build with -Werror=missing-field-initializers refuses them left out)
    e += fmt::format("  {}khive_ins khive_in{{ {{{}}}, {{{}}}, {{{}}}, {{}}, {{}}, {{}} }};\n", cst, in_list,
                     inner_list, extent_list);
  else
    e += fmt::format("  {}khive_ins khive_in{{ {{{}}}, {{{}}}, {{{}}}, {{{}}}, {{{}}}, {{{}}} }};\n", cst, in_list,
                     inner_list, extent_list, vdim_list, vstride_list, voff_list);
  if (sel.pieces) {
    std::vector<std::string> after(out.shape.begin() + static_cast<std::ptrdiff_t>(sel.axis) + 1, out.shape.end());
    e += fmt::format("  khive_in.pinner = {} * (({}) / {});\n", shape_product_cpp(c.task, after),
                     axis_cpp(c.task, out.shape[sel.axis]), sel.pieces);
  }
  e += fmt::format("  const khive_scalars khive_sc{{{}}};\n", sc_list);
  e += fmt::format("  khive_run(khive_in, {}, khive_n, khive_sc{});\n}}\n", out.name, launch_args_tail(c.backend));
  return e;
}

}  // namespace

BoundTask bind_elementwise(const Ctx& c) {
  c.check_keys({"description", "inputs", "output", "scalars", "op", "broadcast", "views", "shape", "aliases", "select",
                "dtype"});
  BoundTask bt;
  bt.op = "map";
  const TensorSpec& out = c.output("output");
  if (c.task.outputs.size() != 1)
    c.fail("output", "a task with exactly one output", std::to_string(c.task.outputs.size()) + " outputs");
  if (!is_float_storage(out.dtype))
    c.fail("output", "a float32, bfloat16 or float16 tensor", std::string(dtype_name(out.dtype)));
  // "dtype" (a chain's stage: the storage type its intermediate was given, ChainLayout::stored_dtype): the output's.
  if (c.has("dtype") && c.b.spec["dtype"] != json(std::string(dtype_name(out.dtype))))
    c.fail("dtype", fmt::format("{}'s storage type \"{}\"", out.name, dtype_name(out.dtype)), c.b.spec["dtype"].dump());
  std::set<std::string> covered;
  std::vector<EwInput> ins = read_inputs(c, out, covered);
  const std::vector<const TensorSpec*> scalars = read_scalars(c, covered);
  for (const auto& in : c.task.inputs)
    if (!covered.count(in.name))
      c.fail("inputs", "every input of the task in inputs or scalars", "\"" + in.name + "\" left out");
  const std::string op = op_text(c, "op");
  const auto placed = read_placements(c, ins, out);
  const auto axes = resolved(c.task);
  read_views(c, ins, out, axes);
  const Select sel = read_select(c, out, axes);
  // "shape" (a chain's copy stage, or a stage whose inputs are read through views of its result: the intermediate's
  // sizes, axis expressions of in0.. of its first input, by which the chain shaped it): each the output's size on
  // every workload.
  if (c.has("shape")) {
    const json& sj = c.b.spec["shape"];
    if (!sj.is_array() || sj.size() != out.shape.size())
      c.fail("shape", fmt::format("a list of {} axis expressions of in0.. (the first input's axes)", out.shape.size()),
             sj.dump());
    for (std::size_t w = 0; w < axes.size(); ++w) {
      const AxisValues sym = view_symbols(*ins[0].t, out, axes[w]);
      for (std::size_t d = 0; d < sj.size(); ++d) {
        const std::string e = sj[d].is_string() ? sj[d].get<std::string>() : sj[d].dump();
        int64_t v = -1;
        try {
          v = eval_int_expr(e, sym);
        } catch (const std::exception& ex) {
          c.fail(fmt::format("shape[{}]", d), "an integer axis expression of in0..",
                 fmt::format("\"{}\" ({})", e, ex.what()));
        }
        if (v != axis_value(axes[w], out.shape[d]))
          c.fail(fmt::format("shape[{}]", d),
                 fmt::format("{}'s axis {} ({} = {})", out.name, d, out.shape[d], axis_value(axes[w], out.shape[d])),
                 fmt::format("\"{}\" = {} on workload {}", e, v, c.task.workloads[w].uuid));
      }
    }
  }
  place_inputs(c, ins, out, axes, placed);

  int nbcast = 0, nview = 0;
  for (const auto& in : ins) nbcast += in.broadcast, nview += in.view;
  for (std::size_t w = 0; w < axes.size(); ++w) {
    const int64_t n = element_count(out, axes[w]);
    for (const auto& in : ins)
      if (!in.broadcast && !in.viewed && element_count(*in.t, axes[w]) != n)
        c.fail("inputs", "inputs with the output's element count",
               fmt::format("\"{}\" has {} elements, the output {} on workload {}", in.t->name,
                           element_count(*in.t, axes[w]), n, c.task.workloads[w].uuid));
    add_workload(bt, c, w,
                 {{"COUNT", n},
                  {"NIN", static_cast<int64_t>(ins.size())},
                  {"NBCAST", nbcast},
                  {"NVIEW", nview},
                  {"ELEM_BYTES", static_cast<int64_t>(dtype_size(out.dtype))}});
  }

  bt.placeholders["PROLOGUE"] = elementwise_prologue(c, out, ins, scalars, op, sel);
  bt.placeholders["ENTRY"] = elementwise_entry(c, out, ins, scalars, sel);
  bt.dtype = std::string(dtype_name(out.dtype));
  std::string ins_s;
  for (const auto& in : ins)
    ins_s += (ins_s.empty() ? "" : ", ") + in.name + (in.name != in.t->name ? " (" + in.t->name + ")" : "") +
             (in.t->dtype != out.dtype ? fmt::format(" ({})", dtype_name(in.t->dtype)) : "") +
             (in.view ? fmt::format(" (view {} strides {} offset {})", shape_text(in.shape), shape_text(in.strides),
                                    in.offset)
              : !in.broadcast ? ""
              : in.len == 0 ? fmt::format(" (broadcast {}: one value for all of {})", shape_text(in.t->shape), out.name)
                            : fmt::format(" (broadcast {} over {} axes {}..{})", shape_text(in.t->shape), out.name,
                                          in.first, in.first + in.len - 1));
  bt.summary = fmt::format("{} = f({}) elementwise, f = {} ({})", out.name, ins_s, op, bt.dtype);
  if (sel.pieces)
    bt.summary += fmt::format(", axis {} of {} in {} parts (khive_piece)", sel.axis, out.name, sel.pieces);
  return bt;
}

}  // namespace khive::tuner::bind_detail
