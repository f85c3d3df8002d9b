// Binding tasks to families (docs/tuner.md, "Bindings"). The generated PROLOGUE gives a template everything it
// needs in the family's own terms (storage type, conversions, the op), and ENTRY adapts the task's exact
// khive_launch signature to the family's internal khive_run, so a template never mentions a task's tensor names.
#include "khive/tuner/bind.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <sstream>

#include <fmt/format.h>

namespace khive::tuner {
namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace {

struct Ctx {
  const Task& task;
  Backend backend;
  const Binding& b;
  std::string field(const std::string& f) const { return "tasks." + b.key.substr(b.key.find('/') + 1) + "." + f; }
  std::string file() const {
    return (b.file.parent_path().parent_path().filename() / b.file.parent_path().filename() / b.file.filename()).string();
  }
  [[noreturn]] void fail(const std::string& f, const std::string& expected, const std::string& got) const {
    throw TaskFormatError(file(), field(f), expected, got);
  }
  void check_keys(std::initializer_list<const char*> allowed) const {
    for (auto it = b.spec.begin(); it != b.spec.end(); ++it) {
      bool ok = it.key() == "family";
      for (const char* a : allowed) ok = ok || it.key() == a;
      if (!ok) {
        std::string list = "family";
        for (const char* a : allowed) list += std::string(", ") + a;
        fail(it.key(), "one of the keys " + list, "an unknown key");
      }
    }
  }
  bool has(const char* k) const { return b.spec.contains(k) && !b.spec[k].is_null(); }
  std::string str(const char* k, bool required) const {
    if (!has(k)) {
      if (required) fail(k, "a string", "nothing");
      return "";
    }
    if (!b.spec[k].is_string()) fail(k, "a string", b.spec[k].dump());
    return b.spec[k].get<std::string>();
  }
  const TensorSpec& input(const char* k) const {
    const std::string n = str(k, true);
    const TensorSpec* t = task.find_input(n);
    if (!t || t->scalar) fail(k, "an input tensor of task '" + task.name + "'", "\"" + n + "\"");
    return *t;
  }
  const TensorSpec& output(const char* k) const {
    const std::string n = str(k, true);
    const TensorSpec* t = task.find_output(n);
    if (!t) fail(k, "an output of task '" + task.name + "'", "\"" + n + "\"");
    return *t;
  }
};

bool is_float_storage(DType d) { return d == DType::f32 || d == DType::bf16 || d == DType::f16; }

// C++ for an axis: its launch parameter (var), its value (const), or its expression (expr; + - * only, so
// the C++ integer arithmetic means the same as the task's Python-like language).
std::string axis_cpp(const Task& t, const std::string& name, int depth = 0) {
  if (depth > 32) throw std::runtime_error("axis expression nesting too deep at " + name);
  for (const auto& a : t.axes) {
    if (a.name != name) continue;
    if (a.kind == Axis::Kind::var) return name;
    if (a.kind == Axis::Kind::constant) return fmt::format("int64_t({})", a.value);
    std::string out = "(";
    const std::string& e = a.expression;
    for (std::size_t i = 0; i < e.size();) {
      const char c = e[i];
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        std::size_t j = i;
        while (j < e.size() && (std::isalnum(static_cast<unsigned char>(e[j])) || e[j] == '_')) ++j;
        out += axis_cpp(t, e.substr(i, j - i), depth + 1);
        i = j;
      } else if (std::isdigit(static_cast<unsigned char>(c)) || c == ' ' || c == '+' || c == '-' || c == '(' || c == ')' ||
                 (c == '*' && !(i + 1 < e.size() && e[i + 1] == '*'))) {
        out += c;
        ++i;
      } else {
        throw std::runtime_error("axis '" + name + "' = \"" + e + "\" uses an operator other than + - * (not supported by the tuner)");
      }
    }
    return out + ")";
  }
  // A decimal literal in a shape is a fixed size.
  if (!name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    return "int64_t(" + name + ")";
  throw std::runtime_error("unknown axis '" + name + "'");
}

std::string shape_product_cpp(const Task& t, const std::vector<std::string>& dims) {
  std::string s = "int64_t(1)";
  for (const auto& d : dims) s += " * " + axis_cpp(t, d);
  return s;
}

std::string storage_type(DType d, Backend b) { return std::string(dtype_c_type(d, b)); }

// khive_to_float_<tag> / khive_from_float_<tag> for one storage type.
std::string conversions(const std::string& tag, DType d, Backend b) {
  const std::string T = storage_type(d, b);
  std::string to, from;
  if (d == DType::f32) {
    to = "v";
    from = "v";
  } else if (b == Backend::cuda) {
    to = d == DType::bf16 ? "__bfloat162float(v)" : "__half2float(v)";
    from = d == DType::bf16 ? "__float2bfloat16_rn(v)" : "__float2half_rn(v)";
  } else {
    to = d == DType::bf16 ? "khive_bf16_to_float(v)" : "khive_f16_to_float(v)";
    from = d == DType::bf16 ? "khive_float_to_bf16(v)" : "khive_float_to_f16(v)";
  }
  return fmt::format("KHIVE_HD float khive_to_float_{0}({1} v) {{ return {2}; }}\nKHIVE_HD {1} khive_from_float_{0}(float v) {{ return {3}; }}\n",
                     tag, T, to, from);
}

std::string common_prologue(const Ctx& c) {
  std::string p = fmt::format("// binding {} ({}): generated by the khive tuner from kernels/bindings\n", c.b.key, c.b.family);
  p += "#include <cmath>\n#include <cstdint>\n";
  if (c.backend == Backend::cuda)
    p += "#define KHIVE_HD static __host__ __device__ __forceinline__\n";
  else
    p += "#define KHIVE_HD static inline\n";
  return p;
}

// The common prologue plus the storage type khive_t of dtype d and its float conversions (khive_to_float_t,
// khive_from_float_t): what every family's PROLOGUE starts with.
std::string typed_prologue(const Ctx& c, DType d) {
  return common_prologue(c) + fmt::format("using khive_t = {};\n", storage_type(d, c.backend)) + conversions("t", d, c.backend);
}

std::string launch_args_tail(Backend b) { return b == Backend::cuda ? ", stream" : ""; }

// A shape as error messages print it: "[T, Hq, D]".
std::string shape_text(const std::vector<std::string>& s) {
  std::string o;
  for (const auto& d : s) o += (o.empty() ? "" : ", ") + d;
  return "[" + o + "]";
}

// One axis of a workload's resolved axes: an axis name, a literal size ("128"), or "" (an absent axis: 1).
int64_t axis_value(const AxisValues& ax, const std::string& n) {
  if (n.empty()) return 1;
  auto it = ax.find(n);
  return it != ax.end() ? it->second : std::stoll(n);
}

// Records workload w's family variables, its uuid and whether it is timed on the binding's backend.
void add_workload(BoundTask& bt, const Ctx& c, std::size_t w, AxisValues vars) {
  bt.workload_vars.push_back(std::move(vars));
  bt.workload_names.push_back(c.task.workloads[w].uuid);
  bt.workload_perf.push_back(c.task.workloads[w].timed_on(c.backend));
}

// Per workload: all resolved axes (for the family's variables).
std::vector<std::map<std::string, int64_t>> resolved(const Task& t) {
  std::vector<std::map<std::string, int64_t>> out;
  for (const auto& w : t.workloads) out.push_back(resolve_axes(t, w));
  return out;
}

std::string op_text(const Ctx& c, const char* key) {
  if (!c.has(key)) c.fail(key, "a C++ expression, or {\"cpu\": ..., \"cuda\": ...}", "nothing");
  const json& o = c.b.spec[key];
  if (o.is_string()) return o.get<std::string>();
  if (o.is_object()) {
    const char* be = c.backend == Backend::cuda ? "cuda" : "cpu";
    if (!o.contains(be) || !o[be].is_string()) c.fail(std::string(key) + "." + be, "a C++ expression for this backend", o.contains(be) ? o[be].dump() : "nothing");
    return o[be].get<std::string>();
  }
  c.fail(key, "a C++ expression, or {\"cpu\": ..., \"cuda\": ...}", o.dump());
}

// ------------------------------------------------------------------------------------------- elementwise

// How an elementwise input is read at the output's flat index i: at i (full), or at (i / inner) % extent when its
// axes are a contiguous run of the output's (a broadcast input: A[N] against C[N, M] is one value per row).
struct EwInput {
  const TensorSpec* t = nullptr;
  bool broadcast = false;
  std::size_t first = 0;   // broadcast: the output axis its first axis lines up with
};

// Where input t's axes occur as a contiguous run of the output's axes (by axis name).
std::vector<std::size_t> runs_in(const std::vector<std::string>& in, const std::vector<std::string>& out) {
  std::vector<std::size_t> at;
  if (in.empty() || in.size() > out.size()) return at;
  for (std::size_t p = 0; p + in.size() <= out.size(); ++p)
    if (std::equal(in.begin(), in.end(), out.begin() + static_cast<std::ptrdiff_t>(p))) at.push_back(p);
  return at;
}

BoundTask bind_elementwise(const Ctx& c) {
  c.check_keys({"description", "inputs", "output", "scalars", "op", "broadcast"});
  BoundTask bt;
  bt.op = "map";
  const TensorSpec& out = c.output("output");
  if (c.task.outputs.size() != 1) c.fail("output", "a task with exactly one output", std::to_string(c.task.outputs.size()) + " outputs");
  if (!is_float_storage(out.dtype)) c.fail("output", "a float32, bfloat16 or float16 tensor", std::string(dtype_name(out.dtype)));
  if (!c.has("inputs") || !c.b.spec["inputs"].is_array() || c.b.spec["inputs"].empty())
    c.fail("inputs", "a non-empty array of input tensor names", c.has("inputs") ? c.b.spec["inputs"].dump() : "nothing");
  std::vector<EwInput> ins;
  std::set<std::string> covered;
  if (c.b.spec["inputs"].size() > 64) c.fail("inputs", "at most 64 input tensors", std::to_string(c.b.spec["inputs"].size()));
  for (std::size_t i = 0; i < c.b.spec["inputs"].size(); ++i) {
    const json& n = c.b.spec["inputs"][i];
    const TensorSpec* t = n.is_string() ? c.task.find_input(n.get<std::string>()) : nullptr;
    const std::string f = "inputs[" + std::to_string(i) + "]";
    if (!t || t->scalar) c.fail(f, "an input tensor of task '" + c.task.name + "'", n.dump());
    if (t->dtype != out.dtype) c.fail(f, std::string("the output's dtype ") + std::string(dtype_name(out.dtype)), std::string(dtype_name(t->dtype)));
    ins.push_back({t});
    covered.insert(t->name);
  }
  std::vector<const TensorSpec*> scalars;
  if (c.has("scalars")) {
    if (!c.b.spec["scalars"].is_array()) c.fail("scalars", "an array of scalar input names", c.b.spec["scalars"].dump());
    for (std::size_t i = 0; i < c.b.spec["scalars"].size(); ++i) {
      const json& n = c.b.spec["scalars"][i];
      const TensorSpec* t = n.is_string() ? c.task.find_input(n.get<std::string>()) : nullptr;
      if (!t || !t->scalar || !dtype_is_float(t->dtype))
        c.fail("scalars[" + std::to_string(i) + "]", "a floating-point scalar input (shape null)", n.dump());
      scalars.push_back(t);
      covered.insert(t->name);
    }
  }
  for (const auto& in : c.task.inputs)
    if (!covered.count(in.name)) c.fail("inputs", "every input of the task in inputs or scalars", "\"" + in.name + "\" left out");
  const std::string op = op_text(c, "op");

  // "broadcast": {"name": first output axis}: only needed where an input's axes occur at more than one place
  // of the output's (A[N] against C[N, N]); otherwise the binder finds the place itself.
  std::map<std::string, std::size_t> placed;
  if (c.has("broadcast")) {
    const json& bj = c.b.spec["broadcast"];
    if (!bj.is_object()) c.fail("broadcast", "an object {input name: index of the output axis its first axis lines up with}", bj.dump());
    for (auto it = bj.begin(); it != bj.end(); ++it) {
      const std::string f = "broadcast." + it.key();
      if (std::none_of(ins.begin(), ins.end(), [&](const EwInput& e) { return e.t->name == it.key(); }))
        c.fail(f, "the name of one of the binding's inputs", "\"" + it.key() + "\"");
      if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0 || it.value().get<int64_t>() >= static_cast<int64_t>(out.shape.size()))
        c.fail(f, fmt::format("an output axis index 0..{} of {} {}", out.shape.size() - 1, out.name, shape_text(out.shape)), it.value().dump());
      placed[it.key()] = it.value().get<std::size_t>();
    }
  }

  // Each input: the output's shape (or, as before broadcasting, its element count on every workload) is read at i;
  // otherwise its axes must be a contiguous run of the output's.
  const auto axes = resolved(c.task);
  for (std::size_t k = 0; k < ins.size(); ++k) {
    EwInput& in = ins[k];
    const std::string f = "inputs[" + std::to_string(k) + "]";
    bool same_count = true;
    for (const auto& ax : axes) same_count = same_count && element_count(*in.t, ax) == element_count(out, ax);
    const auto pl = placed.find(in.t->name);
    if (in.t->shape == out.shape || (same_count && pl == placed.end())) {
      if (pl != placed.end() && pl->second != 0)
        c.fail("broadcast." + in.t->name, "0 (the input has the output's shape " + shape_text(out.shape) + ")", std::to_string(pl->second));
      continue;
    }
    const auto at = runs_in(in.t->shape, out.shape);
    if (at.empty())
      c.fail(f, fmt::format("an input of the output's shape {}, or a broadcast input whose axes are a contiguous run of the output's (one value per row: the leading axes; per column: the trailing ones)", shape_text(out.shape)),
             fmt::format("\"{}\" of shape {}", in.t->name, shape_text(in.t->shape)));
    if (pl != placed.end()) {
      if (std::find(at.begin(), at.end(), pl->second) == at.end())
        c.fail("broadcast." + in.t->name, fmt::format("an output axis where {} {} lines up with {}'s axes", in.t->name, shape_text(in.t->shape), out.name),
               fmt::format("{} (axes {} of {})", pl->second, shape_text(std::vector<std::string>(out.shape.begin() + static_cast<std::ptrdiff_t>(pl->second), out.shape.end())), shape_text(out.shape)));
      in.first = pl->second;
    } else if (at.size() > 1) {
      c.fail("broadcast", fmt::format("\"broadcast\": {{\"{}\": first output axis}}: {} {} lines up with {} {} at axes {} and {}", in.t->name, in.t->name,
                                      shape_text(in.t->shape), out.name, shape_text(out.shape), at[0], at[1]), "nothing");
    } else {
      in.first = at[0];
    }
    in.broadcast = true;
  }

  // The map of a broadcast input: extent = the product of its axes, inner = the product of the output's axes
  // after them (C++ for the ENTRY; values per workload for the checks below).
  auto dims = [&](const EwInput& in, bool inner) {
    const auto b = out.shape.begin() + static_cast<std::ptrdiff_t>(in.first);
    const auto e = b + static_cast<std::ptrdiff_t>(in.t->shape.size());
    return inner ? std::vector<std::string>(e, out.shape.end()) : std::vector<std::string>(b, e);
  };
  int nbcast = 0;
  for (const auto& in : ins) nbcast += in.broadcast;
  for (std::size_t w = 0; w < axes.size(); ++w) {
    const int64_t n = element_count(out, axes[w]);
    for (const auto& in : ins)
      if (!in.broadcast && element_count(*in.t, axes[w]) != n)
        c.fail("inputs", "inputs with the output's element count", fmt::format("\"{}\" has {} elements, the output {} on workload {}", in.t->name, element_count(*in.t, axes[w]), n, c.task.workloads[w].uuid));
    add_workload(bt, c, w, {{"COUNT", n}, {"NIN", static_cast<int64_t>(ins.size())}, {"NBCAST", nbcast}, {"ELEM_BYTES", static_cast<int64_t>(dtype_size(out.dtype))}});
  }

  std::string p = typed_prologue(c, out.dtype);
  p += fmt::format("constexpr int KHIVE_NIN = {};\n", ins.size());
  p += "// Input k is read at the output's flat index i, or (khive_bcast(k), a broadcast input) at (i / inner[k]) % extent[k].\n";
  p += "// A bit mask, not a constexpr array: device code can use constexpr scalars only.\n";
  uint64_t mask = 0;
  for (std::size_t k = 0; k < ins.size(); ++k) mask |= uint64_t(ins[k].broadcast) << k;
  p += fmt::format("constexpr unsigned long long KHIVE_BCAST_MASK = 0x{:x}ull;\nconstexpr bool KHIVE_ANY_BCAST = {};\n", mask, nbcast > 0);
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

  std::string in_list, inner_list, extent_list, sc_list;
  for (const auto& in : ins) {
    const char* sep = in_list.empty() ? "" : ", ";
    in_list += sep + in.t->name;
    inner_list += sep + (in.broadcast ? shape_product_cpp(c.task, dims(in, true)) : std::string("int64_t(1)"));
    extent_list += sep + (in.broadcast ? shape_product_cpp(c.task, dims(in, false)) : std::string("khive_n"));
  }
  for (const auto* s : scalars) sc_list += (sc_list.empty() ? "" : ", ") + fmt::format("static_cast<float>({})", s->name);
  if (scalars.empty()) sc_list = "0";
  std::string e = launch_signature(c.task, c.backend) + " {\n";
  e += fmt::format("  const int64_t khive_n = {};\n", shape_product_cpp(c.task, out.shape));
  e += fmt::format("  const khive_ins khive_in{{ {{{}}}, {{{}}}, {{{}}} }};\n", in_list, inner_list, extent_list);
  e += fmt::format("  const khive_scalars khive_sc{{{}}};\n", sc_list);
  e += fmt::format("  khive_run(khive_in, {}, khive_n, khive_sc{});\n}}\n", out.name, launch_args_tail(c.backend));
  bt.placeholders["PROLOGUE"] = p;
  bt.placeholders["ENTRY"] = e;
  bt.dtype = std::string(dtype_name(out.dtype));
  std::string ins_s;
  for (const auto& in : ins)
    ins_s += (ins_s.empty() ? "" : ", ") + in.t->name +
             (in.broadcast ? fmt::format(" (broadcast {} over {} axes {}..{})", shape_text(in.t->shape), out.name, in.first, in.first + in.t->shape.size() - 1) : "");
  bt.summary = fmt::format("{} = f({}) elementwise, f = {} ({})", out.name, ins_s, op, bt.dtype);
  return bt;
}

// ------------------------------------------------------------------------------------------------ gated

// A gated activation (SwiGLU, GeGLU): x [rows..., 2 * cols] holds gate = x[..., :cols] and up = x[..., cols:] of
// each row; y [rows..., cols] = op(gate, up). The template sees rows and cols only, so the halves' order is fixed
// here: gate first, as vLLM's SiluAndMul and torch's chunk(2) take it.
BoundTask bind_gated(const Ctx& c) {
  c.check_keys({"description", "input", "output", "op"});
  BoundTask bt;
  bt.op = "gated";
  const TensorSpec& x = c.input("input");
  const TensorSpec& y = c.output("output");
  if (!is_float_storage(x.dtype)) c.fail("input", "a float32, bfloat16 or float16 tensor", std::string(dtype_name(x.dtype)));
  if (y.dtype != x.dtype) c.fail("output", std::string("the input's dtype ") + std::string(dtype_name(x.dtype)), std::string(dtype_name(y.dtype)));
  if (x.shape.empty()) c.fail("input", "a tensor with at least one dimension (gate and up halve its last one)", "a 0-D tensor");
  const std::vector<std::string> row_axes(x.shape.begin(), x.shape.end() - 1);
  if (y.shape.size() != x.shape.size() || !std::equal(row_axes.begin(), row_axes.end(), y.shape.begin()))
    c.fail("output", "a tensor with the input's leading axes " + shape_text(row_axes) + " and a last axis half the input's", "\"" + y.name + "\" of shape " + shape_text(y.shape));
  if (c.task.inputs.size() != 1)
    for (const auto& t : c.task.inputs)
      if (t.name != x.name) c.fail("input", "a task whose only input is the concatenated gate and up", "\"" + t.name + "\" left out");
  if (c.task.outputs.size() != 1) c.fail("output", "a task with exactly one output", std::to_string(c.task.outputs.size()) + " outputs");
  const std::string op = op_text(c, "op");

  const auto axes = resolved(c.task);
  for (std::size_t w = 0; w < axes.size(); ++w) {
    auto v = [&](const std::string& n) { return axis_value(axes[w], n); };
    int64_t rows = 1;
    for (const auto& r : row_axes) rows *= v(r);
    const int64_t cols = v(y.shape.back()), in_cols = v(x.shape.back());
    if (in_cols != 2 * cols)
      c.fail("output", "a last axis half the input's (gate and up are its two halves)",
             fmt::format("{} = {} for {} = {} on workload {}", y.shape.back(), cols, x.shape.back(), in_cols, c.task.workloads[w].uuid));
    add_workload(bt, c, w, {{"ROWS", rows}, {"COLS", cols}, {"ELEM_BYTES", static_cast<int64_t>(dtype_size(x.dtype))}});
  }

  std::string p = typed_prologue(c, x.dtype);
  p += "// The task's function of one output element: gate = x[row, col], up = x[row, cols + col], as float.\n";
  p += fmt::format("KHIVE_HD float khive_op(float gate, float up) {{\n  return {};\n}}\n", op);
  std::string e = launch_signature(c.task, c.backend) + " {\n";
  e += fmt::format("  khive_run({}, {}, {}, {}{});\n}}\n", x.name, y.name, shape_product_cpp(c.task, row_axes), axis_cpp(c.task, y.shape.back()),
                   launch_args_tail(c.backend));
  bt.placeholders["PROLOGUE"] = p;
  bt.placeholders["ENTRY"] = e;
  bt.dtype = std::string(dtype_name(x.dtype));
  bt.summary = fmt::format("{} = op(gate, up) over the halves of {}'s last axis {}, op = {} ({})", y.name, x.name, x.shape.back(), op, bt.dtype);
  return bt;
}

// ------------------------------------------------------------------------------------------------- rope

// Rotary position embedding, rotate-half form (GPT-NeoX, HF Llama), out of place on q and k together: x [T, H, D]
// per head splits into x1 = x[..., :D/2] and x2 = x[..., D/2:]; cos and sin [T, D/2] fp32 hold one value per
// rotation pair (already gathered per token): out1 = x1·cos - x2·sin, out2 = x2·cos + x1·sin. q and k share the
// token and head-dim axes and cos/sin, so one template call rotates both (one launch on the GPU).
BoundTask bind_rope(const Ctx& c) {
  c.check_keys({"description", "q", "k", "cos", "sin", "q_out", "k_out"});
  BoundTask bt;
  bt.op = "rope";
  const TensorSpec& q = c.input("q");
  const TensorSpec& k = c.input("k");
  const TensorSpec& cs = c.input("cos");
  const TensorSpec& sn = c.input("sin");
  const TensorSpec& qo = c.output("q_out");
  const TensorSpec& ko = c.output("k_out");
  if (q.name == k.name || cs.name == sn.name)
    c.fail(q.name == k.name ? "k" : "sin", "a tensor of its own (q, k, cos and sin are four inputs)", "\"" + (q.name == k.name ? k.name : sn.name) + "\"");
  if (!is_float_storage(q.dtype)) c.fail("q", "a float32, bfloat16 or float16 tensor", std::string(dtype_name(q.dtype)));
  if (q.shape.size() != 3) c.fail("q", "shape [T, Hq, D] (tokens, heads, head dim)", "\"" + q.name + "\" of shape " + shape_text(q.shape));
  if (k.dtype != q.dtype) c.fail("k", std::string("q's dtype ") + std::string(dtype_name(q.dtype)), std::string(dtype_name(k.dtype)));
  const std::string T = q.shape[0], Hq = q.shape[1], D = q.shape[2];
  if (k.shape.size() != 3 || k.shape[0] != T || k.shape[2] != D)
    c.fail("k", "shape [" + T + ", Hkv, " + D + "] (q's token and head-dim axes)", "\"" + k.name + "\" of shape " + shape_text(k.shape));
  const std::string Hkv = k.shape[1];
  for (const auto& [key, t] : {std::pair<const char*, const TensorSpec*>{"cos", &cs}, {"sin", &sn}}) {
    if (t->dtype != DType::f32) c.fail(key, "a float32 tensor (one value per token and rotation pair)", std::string(dtype_name(t->dtype)));
    if (t->shape.size() != 2 || t->shape[0] != T)
      c.fail(key, "shape [" + T + ", " + D + " / 2] (per token, one value per rotation pair)", "\"" + t->name + "\" of shape " + shape_text(t->shape));
  }
  if (cs.shape != sn.shape) c.fail("sin", "cos's shape " + shape_text(cs.shape), "\"" + sn.name + "\" of shape " + shape_text(sn.shape));
  if (qo.dtype != q.dtype || qo.shape != q.shape)
    c.fail("q_out", "an output with q's dtype and shape " + shape_text(q.shape), "\"" + qo.name + "\" of shape " + shape_text(qo.shape) + ", " + std::string(dtype_name(qo.dtype)));
  if (ko.dtype != k.dtype || ko.shape != k.shape)
    c.fail("k_out", "an output with k's dtype and shape " + shape_text(k.shape), "\"" + ko.name + "\" of shape " + shape_text(ko.shape) + ", " + std::string(dtype_name(ko.dtype)));
  if (qo.name == ko.name) c.fail("k_out", "an output other than q_out", "\"" + ko.name + "\"");
  if (c.task.inputs.size() != 4)
    for (const auto& t : c.task.inputs)
      if (t.name != q.name && t.name != k.name && t.name != cs.name && t.name != sn.name)
        c.fail("q", "a task whose only inputs are q, k, cos and sin", "\"" + t.name + "\" left out");
  if (c.task.outputs.size() != 2) c.fail("q_out", "a task with exactly two outputs (q_out, k_out)", std::to_string(c.task.outputs.size()) + " outputs");

  const auto axes = resolved(c.task);
  for (std::size_t w = 0; w < axes.size(); ++w) {
    auto v = [&](const std::string& n) { return axis_value(axes[w], n); };
    const int64_t d = v(D), h = v(cs.shape[1]);
    const std::string at = " on workload " + c.task.workloads[w].uuid;
    if (d < 2 || d % 2 != 0) c.fail("q", "an even head dim >= 2 (rotate-half pairs x[i] with x[i + D/2])", fmt::format("{} = {}{}", D, d, at));
    if (h != d / 2) c.fail("cos", "a last axis of D / 2 (one value per rotation pair)", fmt::format("{} = {} for {} = {}{}", cs.shape[1], h, D, d, at));
    add_workload(bt, c, w, {{"TOKENS", v(T)}, {"HQ", v(Hq)}, {"HKV", v(Hkv)}, {"D", d}, {"ELEM_BYTES", static_cast<int64_t>(dtype_size(q.dtype))}});
  }

  std::string p = typed_prologue(c, q.dtype);
  p += "// Rotate-half RoPE: per token t, head and pair i < D/2, with c = cos[t*D/2 + i], s = sin[t*D/2 + i]:\n"
       "// out[i] = x[i]*c - x[i + D/2]*s, out[i + D/2] = x[i + D/2]*c + x[i]*s (fp32, one rounding to khive_t).\n";
  std::string e = launch_signature(c.task, c.backend) + " {\n";
  e += fmt::format("  khive_run({}, {}, {}, {}, {}, {}, {}, {}, {}, {}{});\n}}\n", q.name, k.name, cs.name, sn.name, qo.name, ko.name, axis_cpp(c.task, T),
                   axis_cpp(c.task, Hq), axis_cpp(c.task, Hkv), axis_cpp(c.task, D), launch_args_tail(c.backend));
  bt.placeholders["PROLOGUE"] = p;
  bt.placeholders["ENTRY"] = e;
  bt.dtype = std::string(dtype_name(q.dtype));
  bt.summary = fmt::format("{}, {} = rope({}, {}; {}, {}) rotate-half over {}, {} / {} heads ({})", qo.name, ko.name, q.name, k.name, cs.name, sn.name, D, Hq,
                           Hkv, bt.dtype);
  return bt;
}

// ------------------------------------------------------------------------------------------------ rowop

BoundTask bind_rowop(const Ctx& c) {
  c.check_keys({"description", "op", "x", "y", "weight", "bias", "residual", "residual_out", "eps"});
  static const std::vector<std::string> ops{"softmax", "log_softmax", "rmsnorm", "layernorm", "residual_rmsnorm"};
  BoundTask bt;
  bt.op = c.str("op", true);
  const auto op_it = std::find(ops.begin(), ops.end(), bt.op);
  if (op_it == ops.end()) c.fail("op", "softmax, log_softmax, rmsnorm, layernorm or residual_rmsnorm", "\"" + bt.op + "\"");
  const int op_index = static_cast<int>(op_it - ops.begin());
  const TensorSpec& x = c.input("x");
  const TensorSpec& y = c.output("y");
  if (!is_float_storage(x.dtype)) c.fail("x", "a float32, bfloat16 or float16 tensor", std::string(dtype_name(x.dtype)));
  if (x.shape.empty()) c.fail("x", "a tensor with at least one dimension (rows are its last one)", "a 0-D tensor");
  if (y.dtype != x.dtype || y.shape != x.shape) c.fail("y", "an output with x's dtype and shape", "\"" + y.name + "\"");
  const bool norm = bt.op == "rmsnorm" || bt.op == "layernorm" || bt.op == "residual_rmsnorm";
  const std::string col_axis = x.shape.back();
  std::vector<std::string> row_axes(x.shape.begin(), x.shape.end() - 1);

  const TensorSpec *w = nullptr, *bias = nullptr, *res = nullptr, *res_out = nullptr;
  auto vec_of_cols = [&](const char* k) -> const TensorSpec* {
    if (!c.has(k)) return nullptr;
    const TensorSpec& t = c.input(k);
    if (t.shape.size() != 1 || t.shape[0] != col_axis) c.fail(k, "a tensor of shape [" + col_axis + "]", "\"" + t.name + "\"");
    if (!is_float_storage(t.dtype)) c.fail(k, "a float32, bfloat16 or float16 tensor", std::string(dtype_name(t.dtype)));
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
    if (res->dtype != x.dtype || res->shape != x.shape) c.fail("residual", "an input with x's dtype and shape", "\"" + res->name + "\"");
  } else if (bt.op == "residual_rmsnorm") {
    c.fail("residual", "the residual input of residual_rmsnorm", "nothing");
  }
  if (c.has("residual_out")) {
    if (bt.op != "residual_rmsnorm") c.fail("residual_out", "no residual_out for " + bt.op, "one");
    res_out = &c.output("residual_out");
    if (res_out->dtype != x.dtype || res_out->shape != x.shape) c.fail("residual_out", "an output with x's dtype and shape", "\"" + res_out->name + "\"");
  }
  // eps: a number, or the name of a scalar input.
  std::string eps_decl = "0.0f", eps_arg;
  if (norm) {
    if (!c.has("eps")) c.fail("eps", "a number or a scalar input's name for " + bt.op, "nothing");
    const json& e = c.b.spec["eps"];
    if (e.is_number()) {
      if (!(e.get<double>() >= 0)) c.fail("eps", "a number >= 0", e.dump());
      eps_decl = fmt::format("{:.9g}f", e.get<double>());
    } else if (e.is_string()) {
      const TensorSpec* s = c.task.find_input(e.get<std::string>());
      if (!s || !s->scalar) c.fail("eps", "a scalar input (shape null)", e.dump());
      eps_decl = fmt::format("static_cast<float>({})", s->name);
    } else {
      c.fail("eps", "a number or a scalar input's name", e.dump());
    }
  } else if (c.has("eps")) {
    c.fail("eps", "no eps for " + bt.op, "one");
  }
  // Every task tensor must be accounted for, so the template writes every output.
  std::set<std::string> covered{x.name, y.name};
  for (const auto* t : {w, bias, res, res_out})
    if (t) covered.insert(t->name);
  if (c.has("eps") && c.b.spec["eps"].is_string()) covered.insert(c.b.spec["eps"].get<std::string>());
  for (const auto& t : c.task.inputs)
    if (!covered.count(t.name)) c.fail("op", "every input of the task bound (x, weight, bias, residual, eps)", "\"" + t.name + "\" left out");
  for (const auto& t : c.task.outputs)
    if (!covered.count(t.name)) c.fail("op", "every output of the task bound (y, residual_out)", "\"" + t.name + "\" left out");

  for (std::size_t i = 0; i < c.task.workloads.size(); ++i) {
    const auto ax = resolve_axes(c.task, c.task.workloads[i]);
    int64_t rows = 1;
    for (const auto& r : row_axes) rows *= axis_value(ax, r);
    const int64_t cols = axis_value(ax, col_axis);
    add_workload(bt, c, i, {{"ROWS", rows}, {"COLS", cols}, {"ELEM_BYTES", static_cast<int64_t>(dtype_size(x.dtype))}});
  }

  const DType wd = w ? w->dtype : (bias ? bias->dtype : DType::f32);
  std::string p = common_prologue(c);
  p += fmt::format("using khive_t = {};\nusing khive_w_t = {};\n", storage_type(x.dtype, c.backend), storage_type(wd, c.backend));
  p += conversions("t", x.dtype, c.backend);
  p += conversions("w", wd, c.backend);
  p += "enum { KHIVE_SOFTMAX = 0, KHIVE_LOG_SOFTMAX = 1, KHIVE_RMSNORM = 2, KHIVE_LAYERNORM = 3, KHIVE_RESIDUAL_RMSNORM = 4 };\n";
  p += fmt::format("constexpr int KHIVE_OP = {};   // {}\n", op_index, bt.op);
  p += fmt::format("constexpr bool KHIVE_HAS_WEIGHT = {}, KHIVE_HAS_BIAS = {}, KHIVE_HAS_RESIDUAL = {}, KHIVE_HAS_RESIDUAL_OUT = {};\n",
                   w != nullptr, bias != nullptr, res != nullptr, res_out != nullptr);
  p += "struct khive_rowargs {\n  const khive_t* x; const khive_t* residual; const khive_w_t* weight; const khive_w_t* bias;\n"
       "  khive_t* y; khive_t* residual_out; float eps;\n};\n";
  std::string e = launch_signature(c.task, c.backend) + " {\n";
  e += fmt::format("  const khive_rowargs khive_a{{{}, {}, {}, {}, {}, {}, {}}};\n", x.name, res ? res->name : "nullptr", w ? w->name : "nullptr",
                   bias ? bias->name : "nullptr", y.name, res_out ? res_out->name : "nullptr", eps_decl);
  e += fmt::format("  khive_run(khive_a, {}, {}{});\n}}\n", shape_product_cpp(c.task, row_axes), axis_cpp(c.task, col_axis), launch_args_tail(c.backend));
  bt.placeholders["PROLOGUE"] = p;
  bt.placeholders["ENTRY"] = e;
  bt.dtype = std::string(dtype_name(x.dtype));
  bt.summary = fmt::format("{} = {}({}) over {} ({})", y.name, bt.op, x.name, col_axis, bt.dtype);
  return bt;
}

// ----------------------------------------------------------------------------------------------- router

// MoE top-k router: logits[t, e] = x[t, :] . w[e, :] (x [T, H], w [E, H], fp32 accumulation), p[t, :] = softmax
// over the E experts, and per token the K experts of largest p in descending order, ties toward the lower expert
// index: topk_ids [T, K] int32, topk_weights [T, K] float32 = p[t, id] (not renormalized over the K).
BoundTask bind_router(const Ctx& c) {
  c.check_keys({"description", "x", "w", "topk_weights", "topk_ids"});
  BoundTask bt;
  bt.op = "router";
  const TensorSpec& x = c.input("x");
  const TensorSpec& w = c.input("w");
  const TensorSpec& tw = c.output("topk_weights");
  const TensorSpec& ti = c.output("topk_ids");
  if (!is_float_storage(x.dtype)) c.fail("x", "a float32, bfloat16 or float16 tensor", std::string(dtype_name(x.dtype)));
  if (x.shape.size() != 2) c.fail("x", "a tensor of shape [tokens, hidden]", "\"" + x.name + "\" of shape " + shape_text(x.shape));
  if (w.name == x.name) c.fail("w", "the router weight, an input other than x", "\"" + w.name + "\"");
  if (w.dtype != x.dtype) c.fail("w", std::string("x's dtype ") + std::string(dtype_name(x.dtype)), std::string(dtype_name(w.dtype)));
  if (w.shape.size() != 2 || w.shape[1] != x.shape[1])
    c.fail("w", "a tensor of shape [experts, " + x.shape[1] + "] (x's hidden axis last)", "\"" + w.name + "\" of shape " + shape_text(w.shape));
  if (tw.dtype != DType::f32) c.fail("topk_weights", "a float32 tensor", std::string(dtype_name(tw.dtype)));
  if (tw.shape.size() != 2 || tw.shape[0] != x.shape[0])
    c.fail("topk_weights", "a tensor of shape [" + x.shape[0] + ", topk] (x's token axis first)", "\"" + tw.name + "\" of shape " + shape_text(tw.shape));
  if (ti.name == tw.name) c.fail("topk_ids", "an output other than topk_weights", "\"" + ti.name + "\"");
  if (ti.dtype != DType::i32) c.fail("topk_ids", "an int32 tensor", std::string(dtype_name(ti.dtype)));
  if (ti.shape != tw.shape) c.fail("topk_ids", "topk_weights' shape " + shape_text(tw.shape), "\"" + ti.name + "\" of shape " + shape_text(ti.shape));
  for (const auto& t : c.task.inputs)
    if (t.name != x.name && t.name != w.name) c.fail("x", "a task whose inputs are x and w only", "\"" + t.name + "\" left out");
  for (const auto& t : c.task.outputs)
    if (t.name != tw.name && t.name != ti.name) c.fail("topk_ids", "a task whose outputs are topk_weights and topk_ids only", "\"" + t.name + "\" left out");

  const auto axes = resolved(c.task);
  for (std::size_t i = 0; i < axes.size(); ++i) {
    auto v = [&](const std::string& n) { return axis_value(axes[i], n); };
    const int64_t T = v(x.shape[0]), H = v(x.shape[1]), E = v(w.shape[0]), K = v(tw.shape[1]);
    // K > E would leave slots no expert can fill: the family has no value to write there.
    if (K < 1 || K > E)
      c.fail("topk_ids", "a top-k axis of 1 to the number of experts",
             fmt::format("{} = {} with {} = {} experts on workload {}", tw.shape[1], K, w.shape[0], E, c.task.workloads[i].uuid));
    add_workload(bt, c, i, {{"TOKENS", T}, {"HIDDEN", H}, {"EXPERTS", E}, {"TOPK", K}, {"ELEM_BYTES", static_cast<int64_t>(dtype_size(x.dtype))}});
  }

  std::string p = typed_prologue(c, x.dtype);
  std::string e = launch_signature(c.task, c.backend) + " {\n";
  e += fmt::format("  khive_run({}, {}, {}, {}, {}, {}, {}, {}{});\n}}\n", x.name, w.name, tw.name, ti.name, axis_cpp(c.task, x.shape[0]),
                   axis_cpp(c.task, x.shape[1]), axis_cpp(c.task, w.shape[0]), axis_cpp(c.task, tw.shape[1]), launch_args_tail(c.backend));
  bt.placeholders["PROLOGUE"] = p;
  bt.placeholders["ENTRY"] = e;
  bt.dtype = std::string(dtype_name(x.dtype));
  bt.summary = fmt::format("{}, {} = the top k = {} experts of softmax({} @ {}^T) over {} per token ({})", ti.name, tw.name, tw.shape[1], x.name, w.name,
                           w.shape[0], bt.dtype);
  return bt;
}

// ------------------------------------------------------------------------------------------------- gemm

// The PROLOGUE part of a symmetric binding: khive_symm_prepare(g) writes S(A) and S(B) as full [N, N] matrices into
// a buffer kept between calls and points g at them; the template then runs a plain GEMM. S is its own transpose,
// so the copies read the same whichever layout the binding gives A and B.
std::string symmetric_prologue(const Ctx& c, bool upper) {
  std::string p = fmt::format(
      "// Symmetric operands (binding \"symmetric\": {0}): A and B store one triangle each, S(X)[i, k] = {1}; the other\n"
      "// triangle is not part of the input and is never read as data. khive_symm_prepare writes the full S(A), S(B)\n"
      "// into a buffer kept between calls (O(N^2) next to the product's O(N^3)) and points the GEMM at them.\n"
      "constexpr bool KHIVE_SYMM_UPPER = {2};\n",
      upper ? "upper" : "lower", upper ? "X[min(i, k), max(i, k)]" : "X[max(i, k), min(i, k)]", upper ? "true" : "false");
  if (c.backend == Backend::cpu) {
    p += R"KH(#include <vector>
// Y = S(X) for one n x n stored matrix, in 32 x 32 blocks so that the mirrored reads stay in cache.
static void khive_symmetrize(const khive_t* X, khive_t* Y, int64_t n) {
  constexpr int64_t kB = 32;
  for (int64_t i0 = 0; i0 < n; i0 += kB)
    for (int64_t k0 = 0; k0 < n; k0 += kB)
      for (int64_t i = i0; i < i0 + kB && i < n; ++i)
        for (int64_t k = k0; k < k0 + kB && k < n; ++k) {
          const bool stored = KHIVE_SYMM_UPPER ? i <= k : i >= k;
          Y[i * n + k] = stored ? X[i * n + k] : X[k * n + i];
        }
}
static void khive_symm_prepare(khive_gemm_args& g) {
  static std::vector<khive_t> sa, sb;
  const int64_t n = g.M;
  const size_t elems = static_cast<size_t>(n) * static_cast<size_t>(n);
  if (sa.size() < elems) {
    sa.resize(elems);
    sb.resize(elems);
  }
  khive_symmetrize(g.A, sa.data(), n);
  khive_symmetrize(g.B, sb.data(), n);
  g.A = sa.data();
  g.B = sb.data();
}
)KH";
    return p;
  }
  p += R"KH(// S(X)[r, c] read from the stored triangle.
KHIVE_HD float khive_symm_at(const khive_t* X, int64_t r, int64_t c, int64_t n) {
  const bool stored = KHIVE_SYMM_UPPER ? r <= c : r >= c;
  return khive_to_float_t(stored ? X[r * n + c] : X[c * n + r]);
}
// Y = S(X) for A (blockIdx.z 0) and B (1). A 32 x 32 block of Y is its stored block or the transpose of the mirrored
// one: staged through shared memory, so both are read and written coalesced; only diagonal blocks load entries of
// the other triangle, and those are never written out.
static __global__ void __launch_bounds__(256) khive_symm_copy(const khive_t* __restrict__ A, const khive_t* __restrict__ B,
                                                            khive_t* __restrict__ SA, khive_t* __restrict__ SB, int64_t n) {
  __shared__ alignas(16) unsigned char raw[32 * 33 * sizeof(khive_t)];   // raw bytes: khive_t may have a constructor
  khive_t (*tile)[33] = reinterpret_cast<khive_t (*)[33]>(raw);
  const khive_t* X = blockIdx.z ? B : A;
  khive_t* Y = blockIdx.z ? SB : SA;
  const int64_t blocks = (n + 31) / 32;
  for (int64_t bi = blockIdx.y; bi < blocks; bi += gridDim.y)
    for (int64_t bk = blockIdx.x; bk < blocks; bk += gridDim.x) {
      const bool direct = KHIVE_SYMM_UPPER ? bi <= bk : bi >= bk;   // block (bi, bk) is stored itself
      const int64_t r0 = (direct ? bi : bk) * 32, c0 = (direct ? bk : bi) * 32;
      for (int j = threadIdx.y; j < 32; j += 8)
        if (r0 + j < n && c0 + threadIdx.x < n) tile[j][threadIdx.x] = X[(r0 + j) * n + c0 + threadIdx.x];
      __syncthreads();
      for (int j = threadIdx.y; j < 32; j += 8) {
        const int64_t i = bi * 32 + j, k = bk * 32 + threadIdx.x;
        const bool stored = KHIVE_SYMM_UPPER ? i <= k : i >= k;
        if (i < n && k < n) Y[i * n + k] = stored ? tile[j][threadIdx.x] : tile[threadIdx.x][j];
      }
      __syncthreads();
    }
}
// C = act(S(A) S(B) + R) straight from the stored triangles, one thread per element: only when the buffer for the
// copies cannot be had (slow, but the call is still served).
static __global__ void khive_symm_direct(khive_gemm_args g) {
  const int64_t n = g.M;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n * n; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = e / n, j = e % n;
    float acc = 0.0f;
    for (int64_t k = 0; k < n; ++k) acc = fmaf(khive_symm_at(g.A, i, k, n), khive_symm_at(g.B, k, j, n), acc);
    if constexpr (KHIVE_HAS_RESIDUAL) acc += khive_to_float_t(g.R[i * n + j]);
    g.C[i * g.ldc + j] = khive_from_float_t(khive_act(acc));
  }
}
// Points g at full copies of S(A), S(B) (false: no memory for them; C was computed by khive_symm_direct instead).
// The buffer grows on demand and is kept; growing frees the old one first (cudaFree waits for its last reader).
static bool khive_symm_prepare(khive_gemm_args& g, cudaStream_t stream) {
  static khive_t* buf = nullptr;
  static size_t cap = 0;   // elements
  const int64_t n = g.M;
  if (n <= 0) return true;
  const size_t elems = size_t(n) * size_t(n);
  if (2 * elems > cap) {
    if (buf) cudaFree(buf);
    buf = nullptr;
    cap = 0;
    if (cudaMalloc(&buf, 2 * elems * sizeof(khive_t)) == cudaSuccess) cap = 2 * elems;
    else {
      buf = nullptr;
      (void)cudaGetLastError();   // the failed allocation is not the kernel's error
    }
  }
  if (!buf) {
    const int64_t want = (int64_t(elems) + 255) / 256;
    khive_symm_direct<<<unsigned(want < 8192 ? want : 8192), 256, 0, stream>>>(g);
    return false;
  }
  const int64_t blocks = (n + 31) / 32;
  const unsigned gb = unsigned(blocks < 65535 ? blocks : 65535);
  khive_symm_copy<<<dim3(gb, gb, 2), dim3(32, 8), 0, stream>>>(g.A, g.B, buf, buf + elems, n);
  g.A = buf;
  g.B = buf + elems;
  return true;
}
)KH";
  return p;
}

BoundTask bind_gemm(const Ctx& c) {
  c.check_keys({"description", "A", "B", "C", "layout_a", "layout_b", "M", "N", "K", "batch", "residual", "activation", "triangular", "symmetric"});
  BoundTask bt;
  bt.op = "gemm";
  // triangular: A and B are upper (lower) triangular, their other triangle holds arbitrary values that are not part
  // of the input, and C = triu(A·B) (tril) with its zero triangle written: op gemm_triu / gemm_tril, served only by
  // templates that restrict k per tile and mask the operands (their manifests' "ops").
  // "triangular" and "symmetric" each say none, upper or lower.
  auto upper_lower = [&](const char* key, const std::string& expected) {
    const std::string v = c.has(key) ? c.str(key, true) : "none";
    if (v != "none" && v != "upper" && v != "lower") c.fail(key, expected, "\"" + v + "\"");
    return v;
  };
  const std::string tri = upper_lower("triangular", "none, upper (A, B upper triangular, C = triu(A·B)) or lower");
  if (tri != "none") bt.op = tri == "upper" ? "gemm_triu" : "gemm_tril";
  // symmetric: A and B are symmetric matrices stored as one triangle (BLAS SYMM style), S(X)[i, k] =
  // X[min(i, k), max(i, k)] for upper; the other triangle holds arbitrary values. The ENTRY first writes full
  // copies S(A), S(B) into a buffer kept between calls (O(N^2) against the product's O(N^3)) and runs khive_run on
  // them, so every GEMM template serves the task as a plain GEMM (op gemm) and none reads the other triangle.
  const std::string sym = upper_lower("symmetric", "none, upper (S(X)[i, k] = X[min(i, k), max(i, k)]) or lower (X[max(i, k), min(i, k)])");
  if (sym != "none" && tri != "none") c.fail("triangular", "none with symmetric " + sym, "\"" + tri + "\"");
  const TensorSpec& A = c.input("A");
  const TensorSpec& B = c.input("B");
  const TensorSpec& C = c.output("C");
  const std::string la = c.has("layout_a") ? c.str("layout_a", true) : "row";
  const std::string lb = c.has("layout_b") ? c.str("layout_b", true) : "row";
  if (la != "row" && la != "col") c.fail("layout_a", "row (A is [M, K]) or col (A is stored [K, M])", "\"" + la + "\"");
  if (lb != "row" && lb != "col") c.fail("layout_b", "row (B is [K, N]) or col (B is stored [N, K])", "\"" + lb + "\"");
  // The symmetric copies read the stored triangle row-major (X[min(i, k), max(i, k)] at X[min * n + max]).
  if (sym != "none" && la != "row") c.fail("layout_a", "row with symmetric " + sym + " (the stored triangle is read row-major)", "\"" + la + "\"");
  if (sym != "none" && lb != "row") c.fail("layout_b", "row with symmetric " + sym + " (the stored triangle is read row-major)", "\"" + lb + "\"");
  // The layout the kernel reads A in: the task's, except for symmetric operands on CUDA. There the kernel reads the
  // full copy S(A), whose row-major storage is its column-major storage (S(A)[i, k] = S(A)[k, i]), so it is read as
  // column-major: M-contiguous, what the SIMT mainloops want, at no cost (S(B) read row-major is N-contiguous
  // already). The CPU template stays on the row-major read its loops are written for.
  const std::string la_read = sym != "none" && c.backend == Backend::cuda ? "col" : la;
  const std::string M = c.str("M", true), N = c.str("N", true), K = c.str("K", true), batch = c.str("batch", false);
  for (const auto* t : {&A, &B, &C})
    if (t->dtype != C.dtype || !is_float_storage(t->dtype))
      c.fail(t == &A ? "A" : t == &B ? "B" : "C", "float32, bfloat16 or float16 tensors of one dtype", std::string(dtype_name(t->dtype)));
  // Shapes: [batch?, rows, cols]; A and B may be shared across the batch (no batch dimension).
  auto expect = [&](const char* key, const TensorSpec& t, std::vector<std::string> dims, bool batch_optional) -> bool {
    std::vector<std::string> with = dims;
    if (!batch.empty()) with.insert(with.begin(), batch);
    if (t.shape == with) return !batch.empty();
    if ((batch.empty() || batch_optional) && t.shape == dims) return false;
    std::string want;
    for (const auto& d : with) want += (want.empty() ? "" : ", ") + d;
    std::string got;
    for (const auto& d : t.shape) got += (got.empty() ? "" : ", ") + d;
    c.fail(key, "shape [" + want + "]", "[" + got + "]");
  };
  const bool a_batched = expect("A", A, la == "row" ? std::vector<std::string>{M, K} : std::vector<std::string>{K, M}, true);
  const bool b_batched = expect("B", B, lb == "row" ? std::vector<std::string>{K, N} : std::vector<std::string>{N, K}, true);
  expect("C", C, {M, N}, false);
  const TensorSpec* R = nullptr;
  bool r_batched = false;
  if (c.has("residual")) {
    R = &c.input("residual");
    if (R->dtype != C.dtype) c.fail("residual", "C's dtype", std::string(dtype_name(R->dtype)));
    r_batched = expect("residual", *R, {M, N}, true);
  }
  static const std::vector<std::string> acts{"none", "relu", "gelu", "gelu_tanh", "silu"};
  const std::string act = c.has("activation") ? c.str("activation", true) : "none";
  const auto act_it = std::find(acts.begin(), acts.end(), act);
  if (act_it == acts.end()) c.fail("activation", "none, relu, gelu, gelu_tanh or silu", "\"" + act + "\"");
  std::set<std::string> covered{A.name, B.name, C.name};
  if (R) covered.insert(R->name);
  for (const auto& t : c.task.inputs)
    if (!covered.count(t.name)) c.fail("residual", "every input of the task bound (A, B, residual)", "\"" + t.name + "\" left out");
  if (c.task.outputs.size() != 1) c.fail("C", "a task with exactly one output", std::to_string(c.task.outputs.size()) + " outputs");

  // A triangular product has no epilogue: act(0) + residual would fill the zero triangle with something else.
  if (tri != "none" && R) c.fail("residual", "no residual with triangular " + tri, "\"" + R->name + "\"");
  if (tri != "none" && act != "none") c.fail("activation", "none with triangular " + tri, "\"" + act + "\"");
  // The symmetric copies are per matrix: one [N, N] operand each, not a batch of them.
  if (sym != "none" && !batch.empty()) c.fail("batch", "no batch with symmetric " + sym, "\"" + batch + "\"");

  for (std::size_t i = 0; i < c.task.workloads.size(); ++i) {
    const auto ax = resolve_axes(c.task, c.task.workloads[i]);
    auto v = [&](const std::string& n) { return axis_value(ax, n); };
    // Triangular and symmetric operands (never both) are square.
    if ((tri != "none" || sym != "none") && (v(M) != v(N) || v(K) != v(N)))
      c.fail(tri != "none" ? "triangular" : "symmetric",
             tri != "none" ? "square operands (M = N = K) for a triangular product" : "square operands (M = N = K) for symmetric operands",
             fmt::format("{} = {}, {} = {}, {} = {} on workload {}", M, v(M), N, v(N), K, v(K), c.task.workloads[i].uuid));
    add_workload(bt, c, i, {{"M", v(M)}, {"N", v(N)}, {"K", v(K)}, {"BATCH", v(batch)}, {"ELEM_BYTES", static_cast<int64_t>(dtype_size(C.dtype))},
                            {"A_ROW", la_read == "row"}, {"B_ROW", lb == "row"}, {"HAS_RESIDUAL", R != nullptr}, {"HAS_ACTIVATION", act != "none"},
                            {"TRI", tri == "upper" ? 1 : tri == "lower" ? 2 : 0}});
  }

  std::string p = typed_prologue(c, C.dtype);
  p += fmt::format("constexpr bool KHIVE_A_ROW = {}, KHIVE_B_ROW = {}, KHIVE_HAS_RESIDUAL = {};\n", la_read == "row", lb == "row", R != nullptr);
  p += "enum { KHIVE_ACT_NONE = 0, KHIVE_ACT_RELU = 1, KHIVE_ACT_GELU = 2, KHIVE_ACT_GELU_TANH = 3, KHIVE_ACT_SILU = 4 };\n";
  p += fmt::format("constexpr int KHIVE_ACT = {};   // {}\n", act_it - acts.begin(), act);
  p += "// Triangular operands (op gemm_triu / gemm_tril): A[i, k], B[k, j] outside the triangle read as 0, C's other\n"
       "// triangle written as 0. Upper: C[i, j] = sum over i <= k <= j; lower: over j <= k <= i.\n";
  p += "enum { KHIVE_TRI_NONE = 0, KHIVE_TRI_UPPER = 1, KHIVE_TRI_LOWER = 2 };\n";
  p += fmt::format("constexpr int KHIVE_TRI = {};   // {}\n", tri == "upper" ? 1 : tri == "lower" ? 2 : 0, tri);
  p += "// The epilogue's activation, applied to acc (+ residual when the task has one).\n"
       "KHIVE_HD float khive_act(float v) {\n"
       "  if constexpr (KHIVE_ACT == KHIVE_ACT_RELU) return v > 0.0f ? v : 0.0f;\n"
       "  else if constexpr (KHIVE_ACT == KHIVE_ACT_GELU) return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));\n"
       "  else if constexpr (KHIVE_ACT == KHIVE_ACT_GELU_TANH) return 0.5f * v * (1.0f + tanhf(0.79788456080286536f * (v + 0.044715f * v * v * v)));\n"
       "  else if constexpr (KHIVE_ACT == KHIVE_ACT_SILU) return v / (1.0f + expf(-v));\n"
       "  else return v;\n}\n";
  p += "// Element (i, k) of A is A[i * a_rs + k * a_cs] (and so on): any layout, one code path.\n"
       "struct khive_gemm_args {\n  const khive_t* A; const khive_t* B; const khive_t* R; khive_t* C;\n"
       "  int64_t M, N, K, batch;\n  int64_t a_rs, a_cs, b_rs, b_cs, ldc;   // strides in elements\n"
       "  int64_t a_bs, b_bs, c_bs, r_bs;       // batch strides (0: shared across the batch)\n};\n";
  if (sym != "none") p += symmetric_prologue(c, sym == "upper");
  const std::string m = axis_cpp(c.task, M), n = axis_cpp(c.task, N), k = axis_cpp(c.task, K);
  std::string e = launch_signature(c.task, c.backend) + " {\n";
  e += fmt::format("  const int64_t khive_M = {}, khive_N = {}, khive_K = {}, khive_batch = {};\n", m, n, k, batch.empty() ? "int64_t(1)" : axis_cpp(c.task, batch));
  e += "  khive_gemm_args khive_g{};\n";
  e += fmt::format("  khive_g.A = {}; khive_g.B = {}; khive_g.R = {}; khive_g.C = {};\n", A.name, B.name, R ? R->name : "nullptr", C.name);
  e += "  khive_g.M = khive_M; khive_g.N = khive_N; khive_g.K = khive_K; khive_g.batch = khive_batch;\n";
  e += la_read == "row" ? "  khive_g.a_rs = khive_K; khive_g.a_cs = 1;\n" : "  khive_g.a_rs = 1; khive_g.a_cs = khive_M;\n";
  e += lb == "row" ? "  khive_g.b_rs = khive_N; khive_g.b_cs = 1;\n" : "  khive_g.b_rs = 1; khive_g.b_cs = khive_K;\n";
  e += "  khive_g.ldc = khive_N;\n";
  e += fmt::format("  khive_g.a_bs = {}; khive_g.b_bs = {}; khive_g.c_bs = khive_M * khive_N; khive_g.r_bs = {};\n", a_batched ? "khive_M * khive_K" : "0",
                   b_batched ? "khive_K * khive_N" : "0", r_batched ? "khive_M * khive_N" : "0");
  if (sym != "none")
    e += c.backend == Backend::cuda ? "  if (!khive_symm_prepare(khive_g, stream)) return;   // no buffer: C computed directly through S\n"
                                    : "  khive_symm_prepare(khive_g);\n";
  e += fmt::format("  khive_run(khive_g{});\n}}\n", launch_args_tail(c.backend));
  bt.placeholders["PROLOGUE"] = p;
  bt.placeholders["ENTRY"] = e;
  bt.dtype = std::string(dtype_name(C.dtype));
  // CUTLASS's element type and layouts, for the CUTLASS templates.
  bt.placeholders["CUTLASS_ELEMENT"] = C.dtype == DType::bf16 ? "cutlass::bfloat16_t" : C.dtype == DType::f16 ? "cutlass::half_t" : "float";
  bt.placeholders["CUTLASS_LAYOUT_A"] = la_read == "row" ? "cutlass::layout::RowMajor" : "cutlass::layout::ColumnMajor";
  bt.placeholders["CUTLASS_LAYOUT_B"] = lb == "row" ? "cutlass::layout::RowMajor" : "cutlass::layout::ColumnMajor";
  bt.summary = fmt::format("{} = {}{}{} @ {}{}{} ({}x{}x{}{}, {})", C.name, act == "none" ? "" : act + "(", A.name, la == "col" ? "^T" : "", B.name,
                           lb == "col" ? "^T" : "", R ? " + " + R->name : std::string(), M, N, K, batch.empty() ? "" : ", batch " + batch, bt.dtype);
  if (act != "none") bt.summary.insert(bt.summary.find(" ("), ")");
  if (sym != "none") bt.summary = fmt::format("{} = {}S({}) @ S({}){}{} of symmetric operands stored as their {} triangles ({}x{}x{}, {})", C.name,
                                              act == "none" ? "" : act + "(", A.name, B.name, R ? " + " + R->name : std::string(),
                                              act == "none" ? "" : ")", sym, M, N, K, bt.dtype);
  if (tri != "none") bt.summary = fmt::format("{} = {}({}{} @ {}{}) of {} triangular operands ({}x{}x{}{}, {})", C.name, tri == "upper" ? "triu" : "tril", A.name,
                                              la == "col" ? "^T" : "", B.name, lb == "col" ? "^T" : "", tri, M, N, K, batch.empty() ? "" : ", batch " + batch, bt.dtype);
  return bt;
}

// ------------------------------------------------------------------------------------------- attention

// Scaled dot-product attention with grouped-query heads: q [B, Sq, Hq, D], k and v [B, Skv, Hkv, D], o like q
// (decode: q and o [B, Hq, D], one query per sequence, Sq = 1 with the same memory layout). The scale 1/sqrt(D) is
// fixed (SDPA's default) and query head h reads KV head h / (Hq / Hkv); causal: query i sees keys
// j <= i + (Skv - Sq), the last query row seeing every key (the bottom-right alignment of flash-attention).
BoundTask bind_attention(const Ctx& c) {
  c.check_keys({"description", "q", "k", "v", "o", "causal", "decode"});
  BoundTask bt;
  auto flag = [&](const char* k) {
    if (!c.has(k)) return false;
    if (!c.b.spec[k].is_boolean()) c.fail(k, "true or false", c.b.spec[k].dump());
    return c.b.spec[k].get<bool>();
  };
  const bool causal = flag("causal"), decode = flag("decode");
  if (causal && decode) c.fail("causal", "false with decode (one query sees every cached key)", "true");
  bt.op = decode ? "decode" : causal ? "causal" : "prefill";
  const TensorSpec& q = c.input("q");
  const TensorSpec& k = c.input("k");
  const TensorSpec& v = c.input("v");
  const TensorSpec& o = c.output("o");
  if (q.dtype != DType::bf16 && q.dtype != DType::f16) c.fail("q", "a bfloat16 or float16 tensor", std::string(dtype_name(q.dtype)));
  for (const auto& [key, t] : {std::pair<const char*, const TensorSpec*>{"k", &k}, {"v", &v}, {"o", &o}})
    if (t->dtype != q.dtype) c.fail(key, std::string("q's dtype ") + std::string(dtype_name(q.dtype)), std::string(dtype_name(t->dtype)));
  const std::size_t q_rank = decode ? 3 : 4;
  if (q.shape.size() != q_rank)
    c.fail("q", decode ? "shape [B, Hq, D] (decode: one query per sequence)" : "shape [B, Sq, Hq, D]", "\"" + q.name + "\" of shape " + shape_text(q.shape));
  if (k.shape.size() != 4) c.fail("k", "shape [B, Skv, Hkv, D]", "\"" + k.name + "\" of shape " + shape_text(k.shape));
  if (v.shape != k.shape) c.fail("v", "k's shape " + shape_text(k.shape), "\"" + v.name + "\" of shape " + shape_text(v.shape));
  if (o.shape != q.shape) c.fail("o", "q's shape " + shape_text(q.shape), "\"" + o.name + "\" of shape " + shape_text(o.shape));
  const std::string B = q.shape[0], Hq = q.shape[q_rank - 2], D = q.shape[q_rank - 1];
  const std::string Sq = decode ? "" : q.shape[1], Skv = k.shape[1], Hkv = k.shape[2];
  if (k.shape[0] != B) c.fail("k", "q's batch axis " + B + " first", "\"" + k.name + "\" of shape " + shape_text(k.shape));
  if (k.shape[3] != D) c.fail("k", "q's head dim axis " + D + " last", "\"" + k.name + "\" of shape " + shape_text(k.shape));
  if (c.task.inputs.size() != 3)
    for (const auto& t : c.task.inputs)
      if (t.name != q.name && t.name != k.name && t.name != v.name) c.fail("q", "a task whose only inputs are q, k and v", "\"" + t.name + "\" left out");
  if (c.task.outputs.size() != 1) c.fail("o", "a task with exactly one output", std::to_string(c.task.outputs.size()) + " outputs");

  const auto axes = resolved(c.task);
  for (std::size_t w = 0; w < axes.size(); ++w) {
    auto val = [&](const std::string& n) { return axis_value(axes[w], n); };
    const int64_t hq = val(Hq), hkv = val(Hkv), sq = val(Sq), skv = val(Skv);
    const std::string at = " on workload " + c.task.workloads[w].uuid;
    if (hkv <= 0 || hq % hkv != 0)
      c.fail("k", "KV heads dividing the query heads (GQA: query head h reads KV head h / (Hq / Hkv))", fmt::format("{} = {}, {} = {}{}", Hq, hq, Hkv, hkv, at));
    if (causal && sq > skv)
      c.fail("causal", "at most as many queries as keys (query i sees keys j <= i + Skv - Sq)", fmt::format("{} = {} > {} = {}{}", Sq, sq, Skv, skv, at));
    add_workload(bt, c, w, {{"BATCH", val(B)}, {"SQ", sq}, {"SKV", skv}, {"HQ", hq}, {"HKV", hkv}, {"D", val(D)},
                            {"ELEM_BYTES", static_cast<int64_t>(dtype_size(q.dtype))}, {"CAUSAL", causal ? 1 : 0}, {"GROUP", hq / hkv}});
  }

  std::string p = typed_prologue(c, q.dtype);
  p += "// Causal: query i of Sq sees keys j <= i + (Skv - Sq). Decode: Sq = 1 (q and o are [B, Hq, D]).\n";
  p += fmt::format("#define KHIVE_CAUSAL {}\n#define KHIVE_DECODE {}\n", causal ? 1 : 0, decode ? 1 : 0);
  p += fmt::format("#define KHIVE_ELEM_BF16 {}\n", q.dtype == DType::bf16 ? 1 : 0);
  std::string e = launch_signature(c.task, c.backend) + " {\n";
  e += fmt::format("  khive_run({}, {}, {}, {}, {}, {}, {}, {}, {}, {}{});\n}}\n", q.name, k.name, v.name, o.name, axis_cpp(c.task, B),
                   decode ? std::string("int64_t(1)") : axis_cpp(c.task, Sq), axis_cpp(c.task, Skv), axis_cpp(c.task, Hq), axis_cpp(c.task, Hkv),
                   axis_cpp(c.task, D), launch_args_tail(c.backend));
  bt.placeholders["PROLOGUE"] = p;
  bt.placeholders["ENTRY"] = e;
  bt.dtype = std::string(dtype_name(q.dtype));
  bt.summary = fmt::format("{} = softmax({}·{}^T / sqrt({}){})·{} ({}, GQA {} / {} heads, {})", o.name, q.name, k.name, D, causal ? ", causal" : "",
                           v.name, bt.op, Hq, Hkv, bt.dtype);
  return bt;
}

}  // namespace

BoundTask bind_task(const Task& task, Backend backend, const Binding& binding) {
  Ctx c{task, backend, binding};
  BoundTask bt;
  try {
    if (binding.family == "elementwise") bt = bind_elementwise(c);
    else if (binding.family == "gated") bt = bind_gated(c);
    else if (binding.family == "rope") bt = bind_rope(c);
    else if (binding.family == "rowop") bt = bind_rowop(c);
    else if (binding.family == "gemm") bt = bind_gemm(c);
    else if (binding.family == "attention") bt = bind_attention(c);
    else if (binding.family == "router") bt = bind_router(c);
    else c.fail("family", known_families_text(), "\"" + binding.family + "\"");
  } catch (const TaskFormatError&) {
    throw;
  } catch (const std::exception& e) {   // axis translation, resolve_axes
    throw TaskFormatError(c.file(), c.field("family"), "a task the " + binding.family + " family can bind", e.what());
  }
  bt.key = binding.key;
  bt.family = binding.family;
  bt.backend = backend;
  bt.placeholders["LAUNCH"] = launch_signature(task, backend);
  return bt;
}

bool template_applies(const Template& t, const BoundTask& bt) {
  return t.family == bt.family && t.backend == bt.backend && t.dtypes.count(bt.dtype) && (t.ops.empty() || t.ops.count(bt.op));
}

}  // namespace khive::tuner
