// The elementwise family's binder: y = f(inputs...) per element, broadcast inputs read along a run of the output's
// axes: found by axis name, or ("broadcast": "torch", what the tuner infers for a recognised reference) by torch's
// rule (the input's axes aligned with the output's last ones, each the output's or 1).
#include "khive/tuner/bind/common.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <set>

#include <fmt/format.h>

namespace khive::tuner::bind_detail {

namespace {

// How an elementwise input is read at the output's flat index i: at i (full), or at (i / inner) % extent when its
// axes are a contiguous run of the output's (a broadcast input: A[N] against C[N, M] is one value per row).
struct EwInput {
  const TensorSpec* t = nullptr;
  bool broadcast = false;
  std::size_t first = 0;  // broadcast: the output axis its first axis lines up with
  std::size_t len = 0;    // broadcast: how many output axes the run spans (extent: their product)
};

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

// The tensor inputs ("inputs"), each of the output's dtype; adds their names to covered.
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
    if (t->dtype != out.dtype)
      c.fail(f, std::string("the output's dtype ") + std::string(dtype_name(out.dtype)),
             std::string(dtype_name(t->dtype)));
    ins.push_back({t});
    covered.insert(t->name);
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
    if (std::none_of(ins.begin(), ins.end(), [&](const EwInput& e) { return e.t->name == it.key(); }))
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

// Each input: the output's shape (or, as before broadcasting, its element count on every workload) is read at i;
// otherwise its axes must be a contiguous run of the output's, and it is marked broadcast at that run.
void place_inputs(const Ctx& c, std::vector<EwInput>& ins, const TensorSpec& out, const std::vector<AxisValues>& axes,
                  const std::map<std::string, std::size_t>& placed) {
  for (std::size_t k = 0; k < ins.size(); ++k) {
    EwInput& in = ins[k];
    const std::string f = "inputs[" + std::to_string(k) + "]";
    bool same_count = true;
    for (const auto& ax : axes) same_count = same_count && element_count(*in.t, ax) == element_count(out, ax);
    const auto pl = placed.find(in.t->name);
    if (in.t->shape == out.shape || (same_count && pl == placed.end())) {
      if (pl != placed.end() && pl->second != 0)
        c.fail("broadcast." + in.t->name, "0 (the input has the output's shape " + shape_text(out.shape) + ")",
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
        c.fail("broadcast." + in.t->name,
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

std::string elementwise_prologue(const Ctx& c, const TensorSpec& out, const std::vector<EwInput>& ins,
                                 const std::vector<const TensorSpec*>& scalars, const std::string& op) {
  int nbcast = 0;
  for (const auto& in : ins) nbcast += in.broadcast;
  std::string p = typed_prologue(c, out.dtype);
  p += fmt::format("constexpr int KHIVE_NIN = {};\n", ins.size());
  p += "// Input k is read at the output's flat index i, or (khive_bcast(k), a broadcast input) at (i / inner[k]) % "
       "extent[k].\n";
  p += "// A bit mask, not a constexpr array: device code can use constexpr scalars only.\n";
  uint64_t mask = 0;
  for (std::size_t k = 0; k < ins.size(); ++k) mask |= uint64_t(ins[k].broadcast) << k;
  p += fmt::format("constexpr unsigned long long KHIVE_BCAST_MASK = 0x{:x}ull;\nconstexpr bool KHIVE_ANY_BCAST = {};\n",
                   mask, nbcast > 0);
  p += "KHIVE_HD constexpr bool khive_bcast(int k) { return ((KHIVE_BCAST_MASK >> k) & 1ull) != 0; }\n";
  p += "struct khive_ins { const khive_t* p[KHIVE_NIN]; int64_t inner[KHIVE_NIN]; int64_t extent[KHIVE_NIN]; };\n";
  p += "struct khive_scalars { ";
  for (const auto* s : scalars) p += fmt::format("float {}; ", s->name);
  p += scalars.empty() ? "int unused_; };\n" : "};\n";
  p += "// The task's function of one element (inputs as float, in binding order).\n";
  p += "KHIVE_HD float khive_op(const float* khive_v, const khive_scalars& khive_s) {\n";
  for (std::size_t i = 0; i < ins.size(); ++i) p += fmt::format("  const float {} = khive_v[{}];\n", ins[i].t->name, i);
  for (const auto* s : scalars) p += fmt::format("  const float {0} = khive_s.{0};\n", s->name);
  p += "  (void)khive_s;\n";
  p += fmt::format("  return {};\n}}\n", op);
  return p;
}

std::string elementwise_entry(const Ctx& c, const TensorSpec& out, const std::vector<EwInput>& ins,
                              const std::vector<const TensorSpec*>& scalars) {
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
    in_list += sep + in.t->name;
    inner_list += sep + (in.broadcast ? shape_product_cpp(c.task, dims(in, true)) : std::string("int64_t(1)"));
    extent_list += sep + (in.broadcast ? shape_product_cpp(c.task, dims(in, false)) : std::string("khive_n"));
  }
  for (const auto* s : scalars)
    sc_list += (sc_list.empty() ? "" : ", ") + fmt::format("static_cast<float>({})", s->name);
  if (scalars.empty()) sc_list = "0";
  std::string e = launch_signature(c.task, c.backend) + " {\n";
  e += fmt::format("  const int64_t khive_n = {};\n", shape_product_cpp(c.task, out.shape));
  e += fmt::format("  const khive_ins khive_in{{ {{{}}}, {{{}}}, {{{}}} }};\n", in_list, inner_list, extent_list);
  e += fmt::format("  const khive_scalars khive_sc{{{}}};\n", sc_list);
  e += fmt::format("  khive_run(khive_in, {}, khive_n, khive_sc{});\n}}\n", out.name, launch_args_tail(c.backend));
  return e;
}

}  // namespace

BoundTask bind_elementwise(const Ctx& c) {
  c.check_keys({"description", "inputs", "output", "scalars", "op", "broadcast"});
  BoundTask bt;
  bt.op = "map";
  const TensorSpec& out = c.output("output");
  if (c.task.outputs.size() != 1)
    c.fail("output", "a task with exactly one output", std::to_string(c.task.outputs.size()) + " outputs");
  if (!is_float_storage(out.dtype))
    c.fail("output", "a float32, bfloat16 or float16 tensor", std::string(dtype_name(out.dtype)));
  std::set<std::string> covered;
  std::vector<EwInput> ins = read_inputs(c, out, covered);
  const std::vector<const TensorSpec*> scalars = read_scalars(c, covered);
  for (const auto& in : c.task.inputs)
    if (!covered.count(in.name))
      c.fail("inputs", "every input of the task in inputs or scalars", "\"" + in.name + "\" left out");
  const std::string op = op_text(c, "op");
  const auto placed = read_placements(c, ins, out);
  const auto axes = resolved(c.task);
  place_inputs(c, ins, out, axes, placed);

  int nbcast = 0;
  for (const auto& in : ins) nbcast += in.broadcast;
  for (std::size_t w = 0; w < axes.size(); ++w) {
    const int64_t n = element_count(out, axes[w]);
    for (const auto& in : ins)
      if (!in.broadcast && element_count(*in.t, axes[w]) != n)
        c.fail("inputs", "inputs with the output's element count",
               fmt::format("\"{}\" has {} elements, the output {} on workload {}", in.t->name,
                           element_count(*in.t, axes[w]), n, c.task.workloads[w].uuid));
    add_workload(bt, c, w,
                 {{"COUNT", n},
                  {"NIN", static_cast<int64_t>(ins.size())},
                  {"NBCAST", nbcast},
                  {"ELEM_BYTES", static_cast<int64_t>(dtype_size(out.dtype))}});
  }

  bt.placeholders["PROLOGUE"] = elementwise_prologue(c, out, ins, scalars, op);
  bt.placeholders["ENTRY"] = elementwise_entry(c, out, ins, scalars);
  bt.dtype = std::string(dtype_name(out.dtype));
  std::string ins_s;
  for (const auto& in : ins)
    ins_s += (ins_s.empty() ? "" : ", ") + in.t->name +
             (!in.broadcast ? ""
              : in.len == 0 ? fmt::format(" (broadcast {}: one value for all of {})", shape_text(in.t->shape), out.name)
                            : fmt::format(" (broadcast {} over {} axes {}..{})", shape_text(in.t->shape), out.name,
                                          in.first, in.first + in.len - 1));
  bt.summary = fmt::format("{} = f({}) elementwise, f = {} ({})", out.name, ins_s, op, bt.dtype);
  return bt;
}

}  // namespace khive::tuner::bind_detail
