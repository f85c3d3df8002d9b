// definition.json: the task's name, axes, tensors, constraints and "khive" block (docs/task-format.md).
// Fields that belong to the FlashInfer-Bench / SOL-ExecBench schema tolerate unknown keys (their tools add fields
// over time); keys inside our own "khive" blocks must be known, so that a typo is not silently ignored.
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "khive/task/data_constraint.hpp"
#include "khive/task/derive_cost.hpp"
#include "khive/task/expr.hpp"
#include "khive/task/parse_common.hpp"

namespace khive::task_parse {
namespace fs = std::filesystem;

namespace {

// Text of a cost formula given as a string or a number.
std::string formula_text(const Ctx& c, const json& j, const std::string& field) {
  if (j.is_string()) {
    std::string s = j.get<std::string>();
    if (s.empty()) c.fail(field, "a formula (string) or a number", "\"\"");
    return s;
  }
  if (j.is_number_integer() || j.is_number_unsigned()) return j.dump();
  if (j.is_number_float()) {
    double v = j.get<double>();
    std::string s = real_text(v);
    if (s.find_first_of(".en") == std::string::npos) s += ".0";
    return s;
  }
  c.fail(field, "a formula (string) or a number", describe_json(j));
}

void parse_tensors(const Ctx& c, const json& root, const char* key, std::vector<TensorSpec>& out,
                   const std::vector<Axis>& axes) {
  std::set<std::string> axis_kinds;
  for (const auto& a : axes) axis_kinds.insert(a.name);
  if (!root.contains(key)) c.fail(key, "an object of tensors (name -> {shape, dtype})", "none");
  const json& obj = c.object(root[key], key);
  for (const auto& [name, spec] : obj.items()) {
    std::string field = std::string(key) + "." + name;
    if (!is_identifier(name) || is_reserved_name(name))
      c.fail(field, "a C identifier that is not a C++ keyword or \"stream\" (tensor names are parameter names)",
             quote(name));
    if (axis_kinds.count(name)) c.fail(field, "a name that is not also an axis name", quote(name));
    c.object(spec, field);
    TensorSpec t;
    t.name = name;
    if (!spec.contains("dtype")) c.fail(field + ".dtype", kDTypeList, "none");
    std::string dt = c.string(spec["dtype"], field + ".dtype");
    auto parsed = parse_dtype(dt);
    if (!parsed) c.fail(field + ".dtype", kDTypeList, quote(dt));
    t.dtype = *parsed;
    if (!spec.contains("shape")) c.fail(field + ".shape", "an array of axis names, or null for a scalar", "none");
    const json& shape = spec["shape"];
    if (shape.is_null()) {
      t.scalar = true;
    } else {
      if (!shape.is_array())
        c.fail(field + ".shape", "an array of axis names, or null for a scalar", describe_json(shape));
      for (std::size_t i = 0; i < shape.size(); ++i) {
        std::string f = field + ".shape[" + std::to_string(i) + "]";
        if (!shape[i].is_string()) c.fail(f, "an axis name (string)", describe_json(shape[i]));
        std::string dim = shape[i].get<std::string>();
        if (!is_literal_size(dim) && !axis_kinds.count(dim)) {
          std::vector<std::string> names;
          for (const auto& a : axes) names.push_back(a.name);
          c.fail(f,
                 names.empty() ? "a declared axis name (no axes are declared)"
                               : "a declared axis name (" + join(names) + ")",
                 quote(dim));
        }
        t.shape.push_back(dim);
      }
    }
    if (spec.contains("description") && !spec["description"].is_null())
      c.string(spec["description"], field + ".description", false);
    out.push_back(std::move(t));
  }
}

void parse_axes(const Ctx& c, const json& root, Task& t) {
  if (!root.contains("axes") || root["axes"].is_null()) return;
  const json& axes = c.object(root["axes"], "axes");
  for (const auto& [name, spec] : axes.items()) {
    std::string field = "axes." + name;
    if (!is_identifier(name) || is_reserved_name(name))
      c.fail(field, "an identifier that is not a keyword (axis names appear in expressions and signatures)",
             quote(name));
    c.object(spec, field);
    Axis a;
    a.name = name;
    if (!spec.contains("type")) c.fail(field + ".type", "one of const, var, expr", "none");
    std::string type = c.string(spec["type"], field + ".type");
    if (type == "const") {
      a.kind = Axis::Kind::constant;
      if (!spec.contains("value")) c.fail(field + ".value", "an integer >= 0", "none");
      a.value = c.integer(spec["value"], field + ".value");
      if (a.value < 0) c.fail(field + ".value", "an integer >= 0", describe_json(spec["value"]));
    } else if (type == "var") {
      a.kind = Axis::Kind::var;
    } else if (type == "expr") {
      a.kind = Axis::Kind::expr;
      if (!spec.contains("expression")) c.fail(field + ".expression", "an expression over other axes", "none");
      a.expression = c.string(spec["expression"], field + ".expression");
    } else {
      c.fail(field + ".type", "one of const, var, expr", quote(type));
    }
    if (spec.contains("description") && !spec["description"].is_null())
      c.string(spec["description"], field + ".description", false);
    t.axes.push_back(std::move(a));
  }
}

// Checks expr axes: names declared, no self reference, no cycle.
void check_expr_axes(const Ctx& c, const Task& t, const std::set<std::string>& axis_names) {
  std::map<std::string, std::vector<std::string>> deps;
  for (const auto& a : t.axes) {
    if (a.kind != Axis::Kind::expr) continue;
    deps[a.name] = check_formula(c, a.expression, "axes." + a.name + ".expression", axis_names, "expression");
  }
  // DFS; colour 1 = on the stack, 2 = done.
  std::map<std::string, int> colour;
  std::vector<std::string> stack;
  std::function<void(const std::string&)> visit = [&](const std::string& n) {
    colour[n] = 1;
    stack.push_back(n);
    for (const auto& d : deps[n]) {
      if (!deps.count(d)) continue;  // const or var: a leaf
      if (colour[d] == 1) {
        auto from = std::find(stack.begin(), stack.end(), d);
        std::vector<std::string> cycle(from, stack.end());
        cycle.push_back(d);
        c.fail("axes." + cycle.front() + ".expression", "expr axes without a cycle", join(cycle, " -> "));
      }
      if (colour[d] == 0) visit(d);
    }
    stack.pop_back();
    colour[n] = 2;
  };
  for (const auto& a : t.axes)
    if (a.kind == Axis::Kind::expr && colour[a.name] == 0) visit(a.name);
}

fs::path task_file(const Ctx& c, const fs::path& dir, const json& j, const std::string& field) {
  std::string rel = c.string(j, field);
  fs::path p(rel);
  if (p.is_absolute()) c.fail(field, "a path relative to the task directory", quote(rel));
  fs::path full = (dir / p).lexically_normal();
  fs::path back = full.lexically_relative(dir);
  if (back.empty() || *back.begin() == "..") c.fail(field, "a path inside the task directory", quote(rel));
  if (!fs::is_regular_file(full))
    c.fail(field, "an existing file (relative to the task directory)", quote(rel) + " (not found)");
  return full;
}

struct CostGiven {
  bool flops = false, bytes = false, unit = false;
};

// obj[key] (field prefix + key) as a list of 1 to 3 integers >= lo, one per `axis` ("spatial axis", "pooled axis");
// every list of one record has the same length (dims: 0 until the first is read).
std::vector<int64_t> axis_list(const Ctx& c, const json& obj, const std::string& prefix, const char* key, int64_t lo,
                               const char* axis, std::size_t& dims) {
  const std::string field = prefix + key;
  const std::string expected = "a list of 1 to 3 integers >= " + std::to_string(lo) + ", one per " + axis;
  if (!obj.contains(key)) c.fail(field, expected, "nothing");
  const json& a = obj[key];
  if (!a.is_array() || a.empty() || a.size() > 3 || (dims && a.size() != dims)) c.fail(field, expected, a.dump());
  std::vector<int64_t> v;
  for (const auto& e : a) {
    if (!e.is_number_integer() || e.get<int64_t>() < lo) c.fail(field, expected, a.dump());
    v.push_back(e.get<int64_t>());
  }
  dims = a.size();
  return v;
}

// khive.op.attention (python/khive_torch/recognize_attention.py) into t.op_attention.
void parse_attention_reading(const Ctx& c, const json& aj, Task& t, const std::string& P) {
  const json& a = c.object(aj, P);
  c.known_keys(a, P, {"q", "k", "v", "layout", "gqa", "causal", "scale", "head_dim"});
  Task::AttentionReading r;
  auto input = [&](const char* key) {
    if (!a.contains(key)) c.fail(P + "." + key, input_name_expected(t), "nothing");
    const std::string name = c.string(a[key], P + "." + key);
    if (!t.find_input(name)) c.fail(P + "." + key, input_name_expected(t), a[key].dump());
    return name;
  };
  r.q = input("q");
  r.k = input("k");
  r.v = input("v");
  auto one_of = [&](const json& v, const std::string& field, const std::vector<std::string>& allowed) {
    std::string expected;
    for (const auto& s : allowed) expected += (expected.empty() ? "" : ", ") + quote(s);
    if (!v.is_string() || std::find(allowed.begin(), allowed.end(), v.get<std::string>()) == allowed.end())
      c.fail(field, "one of " + expected, v.dump());
    return v.get<std::string>();
  };
  if (!a.contains("layout")) c.fail(P + ".layout", "the layouts of q, k, v and o", "nothing");
  const json& lay = c.object(a["layout"], P + ".layout");
  c.known_keys(lay, P + ".layout", {"q", "k", "v", "o"});
  for (const char* role : {"q", "k", "v", "o"}) {
    if (!lay.contains(role)) c.fail(P + ".layout." + role, "its layout", "nothing");
    r.layout[role] = one_of(lay[role], P + ".layout." + role, {"bshd", "bhsd", "bhd", "bsd", "bs(hd)"});
  }
  if (a.contains("gqa")) r.gqa = one_of(a["gqa"], P + ".gqa", {"none", "interleave", "tile"});
  if (a.contains("causal")) {
    if (a["causal"].is_boolean() && !a["causal"].get<bool>())
      r.causal = "none";
    else
      r.causal = one_of(a["causal"], P + ".causal", {"bottom_right", "top_left"});
  }
  if (!a.contains("scale") || (!a["scale"].is_number() && a["scale"] != "1/sqrt(D)") ||
      (a["scale"].is_number() && !(a["scale"].get<double>() > 0)))
    c.fail(P + ".scale", "\"1/sqrt(D)\" or a number > 0", a.contains("scale") ? a["scale"].dump() : "nothing");
  if (a["scale"].is_number()) r.scale = a["scale"].get<double>();
  if (!a.contains("head_dim") || !a["head_dim"].is_number_integer() || a["head_dim"].get<int64_t>() < 1)
    c.fail(P + ".head_dim", "the head dim where the reading was traced (an integer >= 1)",
           a.contains("head_dim") ? a["head_dim"].dump() : "nothing");
  r.head_dim = a["head_dim"].get<int64_t>();
  t.op_attention = r;
}

// khive.op (python/khive_torch/recognize.py) into t's op_* fields, its fields named under P ("khive.op",
// "khive.op.stages[1]" for a chain's stage, whose operands may name the chain's intermediates: t's inputs then).
void parse_recognised_op(const Ctx& c, const json& opj, Task& t, const std::string& P) {
  const json& op = c.object(opj, P);
  c.known_keys(op, P,
               {"op",   "family",        "expression", "eps",   "dim",     "flags",  "operands", "ops",
                "from", "conv",          "pool",       "norm",  "stages",  "inputs", "output",   "attention",
                "why",  "wrote_op_type", "views",      "shape", "aliases", "select", "dtype",    "unread_scalars"});
  // "dtype" (a chain's pointwise stage): the storage type the reference holds the intermediate it writes in (float32
  // where a bf16 reference computes in float32); the chain (tuner/chain.hpp) stores the intermediate so.
  if (op.contains("dtype")) {
    const auto d = op["dtype"].is_string() ? parse_dtype(op["dtype"].get<std::string>()) : std::nullopt;
    if (!d || (*d != DType::f32 && *d != DType::bf16 && *d != DType::f16))
      c.fail(P + ".dtype", "float32, bfloat16 or float16 (the intermediate's storage type)", op["dtype"].dump());
  }
  // A chain's stages (khive.op.stages): each an op object read the same way when the tuner binds the chain, against
  // its stage's tensors (tuner/chain.hpp); here only their form.
  if (op.contains("stages")) {
    const std::string f = P + ".stages";
    if (!op["stages"].is_array() || op["stages"].size() < 2 || op["stages"].size() > Task::kMaxStages)
      c.fail(f, "a list of 2 to " + std::to_string(Task::kMaxStages) + " stage objects", op["stages"].dump());
    for (std::size_t i = 0; i < op["stages"].size(); ++i) {
      const json& st = c.object(op["stages"][i], f + "[" + std::to_string(i) + "]");
      if (!st.contains("family") || !st["family"].is_string())
        c.fail(f + "[" + std::to_string(i) + "].family", "the stage's family",
               st.contains("family") ? st["family"].dump() : "nothing");
      t.op_stages.push_back(st.dump());
    }
  }
  std::set<std::string> aliases;
  if (op.contains("aliases")) {  // {alias: input}: a second name of an input, read through its own view
    const json& a = c.object(op["aliases"], P + ".aliases");
    for (const auto& [name, target] : a.items()) {
      const std::string field = P + ".aliases." + name;
      if (!target.is_string() || !t.find_input(target.get<std::string>()))
        c.fail(field, input_name_expected(t), target.dump());
      if (t.find_input(name)) c.fail(field, "a name that is no input of the task", "\"" + name + "\"");
      aliases.insert(name);
    }
    t.op_aliases = a.dump();
  }
  if (op.contains("select")) {  // {axis, pieces}: the elementwise binder checks them against the output
    const json& s = c.object(op["select"], P + ".select");
    c.known_keys(s, P + ".select", {"axis", "pieces"});
    for (const char* k : {"axis", "pieces"})
      if (!s.contains(k) || !s[k].is_number_integer())
        c.fail(P + ".select." + k, "an integer", s.contains(k) ? s[k].dump() : "nothing");
    t.op_select = s.dump();
  }
  if (op.contains("unread_scalars")) {  // [scalar input]: read by no stage, the same stages with another value
    const std::string f = P + ".unread_scalars";
    if (!op["unread_scalars"].is_array())
      c.fail(f, "a list of the task's scalar input names", op["unread_scalars"].dump());
    for (std::size_t i = 0; i < op["unread_scalars"].size(); ++i) {
      const json& n = op["unread_scalars"][i];
      const TensorSpec* s = n.is_string() ? t.find_input(n.get<std::string>()) : nullptr;
      if (!s || !s->scalar) c.fail(f + "[" + std::to_string(i) + "]", "a scalar input of the task", n.dump());
      t.op_unread_scalars.push_back(s->name);
    }
  }
  if (op.contains("views")) {  // {input: {shape, strides, offset}}: the elementwise binder checks the expressions
    const json& v = c.object(op["views"], P + ".views");
    for (const auto& [name, view] : v.items()) {
      const std::string field = P + ".views." + name;
      if (!t.find_input(name) && !aliases.count(name)) c.fail(field, input_name_expected(t), "\"" + name + "\"");
      const json& o = c.object(view, field);
      c.known_keys(o, field, {"shape", "strides", "offset"});
      for (const char* k : {"shape", "strides"})
        if (!o.contains(k) || !o[k].is_array())
          c.fail(field + "." + k, "a list of axis expressions", o.contains(k) ? o[k].dump() : "nothing");
    }
    t.op_views = v.dump();
  }
  if (op.contains("shape")) {
    if (!op["shape"].is_array()) c.fail(P + ".shape", "a list of axis expressions", op["shape"].dump());
    for (std::size_t i = 0; i < op["shape"].size(); ++i)
      t.op_shape.push_back(c.string(op["shape"][i], P + ".shape[" + std::to_string(i) + "]"));
  }
  if (op.contains("op")) t.op_recognized = c.string(op["op"], P + ".op");
  if (op.contains("family")) t.op_family = c.string(op["family"], P + ".family");
  if (op.contains("expression")) t.op_expression = c.string(op["expression"], P + ".expression");
  if (op.contains("why")) t.op_why = c.string(op["why"], P + ".why");
  if (op.contains("attention")) parse_attention_reading(c, op["attention"], t, P + ".attention");
  if (op.contains("eps")) {
    if (!op["eps"].is_number() || op["eps"].get<double>() < 0) c.fail(P + ".eps", "a number >= 0", op["eps"].dump());
    t.op_eps = op["eps"].get<double>();
  }
  if (op.contains("dim")) {
    // One axis, or (a reduction over several) a list of 2 or more.
    const char* expected =
        "the reduced axis' index in the input's shape (an integer, negative from the end), or a list of 2 or more";
    auto axis = [&](const json& v) {
      if (!v.is_number_integer() || v.get<int64_t>() < -64 || v.get<int64_t>() > 63)
        c.fail(P + ".dim", expected, op["dim"].dump());
      return v.get<int>();
    };
    if (op["dim"].is_array()) {
      if (op["dim"].size() < 2) c.fail(P + ".dim", expected, op["dim"].dump());
      for (const auto& v : op["dim"]) t.op_dims.push_back(axis(v));
    } else {
      t.op_dim = axis(op["dim"]);
    }
  }
  if (op.contains("flags")) {
    static const std::vector<std::string> known = {
        "reverse", "exclusive", "masked", "operands_reinterpreted", "named_inputs", "keepdim", "torch_broadcast"};
    const char* expected =
        "a list of \"reverse\", \"exclusive\", \"masked\", \"operands_reinterpreted\", \"named_inputs\", "
        "\"keepdim\", \"torch_broadcast\"";
    if (!op["flags"].is_array()) c.fail(P + ".flags", expected, op["flags"].dump());
    for (const auto& f : op["flags"]) {
      if (!f.is_string() || std::find(known.begin(), known.end(), f.get<std::string>()) == known.end())
        c.fail(P + ".flags", expected, op["flags"].dump());
      t.op_flags.push_back(f.get<std::string>());
    }
  }
  if (op.contains("operands")) {
    const json& o = c.object(op["operands"], P + ".operands");
    c.known_keys(o, P + ".operands",
                 {"A", "B", "bias", "residual", "layout_a", "layout_b", "x", "weight", "vector", "vectors", "eps"});
    for (const auto& [role, v] : o.items()) {
      const std::string field = P + ".operands." + role;
      if (role == "vectors") {  // b1, b2, ... of the epilogue, after "vector" / "bias" (b)
        if (!v.is_array() || v.empty()) c.fail(field, "a non-empty list of input names", v.dump());
        if (!o.contains("vector") && !o.contains("bias"))
          c.fail(field, "nothing without a \"vector\" or \"bias\" (b, the first vector)", v.dump());
        for (std::size_t k = 0; k < v.size(); ++k) {
          const std::string name = c.string(v[k], field + "[" + std::to_string(k) + "]");
          if (!t.find_input(name)) c.fail(field + "[" + std::to_string(k) + "]", input_name_expected(t), v[k].dump());
          t.op_vectors.push_back(name);
        }
        continue;
      }
      const std::string name = c.string(v, field);
      if (role.rfind("layout_", 0) == 0) {
        if (name != "row" && name != "col") c.fail(field, "\"row\" or \"col\"", v.dump());
      } else if (!t.find_input(name)) {
        c.fail(field, input_name_expected(t), v.dump());
      }
      t.op_operands[role] = name;
    }
  }
  if (op.contains("conv")) {
    const json& cv = c.object(op["conv"], P + ".conv");
    c.known_keys(cv, P + ".conv", {"stride", "padding", "dilation", "output_padding", "groups", "transposed"});
    Task::ConvOptions o;
    std::size_t dims = 0;
    auto list = [&](const char* key, int64_t lo) {
      return axis_list(c, cv, P + ".conv.", key, lo, "spatial axis", dims);
    };
    o.stride = list("stride", 1);
    o.padding = list("padding", 0);
    o.dilation = list("dilation", 1);
    o.output_padding = list("output_padding", 0);
    if (!cv.contains("groups") || !cv["groups"].is_number_integer() || cv["groups"].get<int64_t>() < 1)
      c.fail(P + ".conv.groups", "an integer >= 1", cv.contains("groups") ? cv["groups"].dump() : "nothing");
    o.groups = cv["groups"].get<int64_t>();
    if (!cv.contains("transposed")) c.fail(P + ".conv.transposed", "true or false", "nothing");
    o.transposed = c.boolean(cv["transposed"], P + ".conv.transposed");
    t.op_conv = o;
  }
  if (op.contains("pool")) {
    const json& pl = c.object(op["pool"], P + ".pool");
    c.known_keys(
        pl, P + ".pool",
        {"op", "kernel", "stride", "padding", "dilation", "ceil_mode", "count_include_pad", "divisor_override"});
    Task::PoolOptions o;
    if (!pl.contains("op") || !pl["op"].is_string() || (pl["op"] != "max" && pl["op"] != "avg"))
      c.fail(P + ".pool.op", "\"max\" or \"avg\"", pl.contains("op") ? pl["op"].dump() : "nothing");
    o.op = pl["op"].get<std::string>();
    std::size_t dims = 0;
    auto list = [&](const char* key, int64_t lo) {
      return axis_list(c, pl, P + ".pool.", key, lo, "pooled axis", dims);
    };
    o.kernel = list("kernel", 1);
    o.stride = list("stride", 1);
    o.padding = list("padding", 0);
    o.dilation = list("dilation", 1);
    auto flag = [&](const char* key, bool dflt) {
      return pl.contains(key) ? c.boolean(pl[key], P + ".pool." + key) : dflt;
    };
    o.ceil_mode = flag("ceil_mode", false);
    o.count_include_pad = flag("count_include_pad", true);
    if (pl.contains("divisor_override") && !pl["divisor_override"].is_null()) {
      if (!pl["divisor_override"].is_number_integer() || pl["divisor_override"].get<int64_t>() < 1)
        c.fail(P + ".pool.divisor_override", "null or an integer >= 1", pl["divisor_override"].dump());
      o.divisor_override = pl["divisor_override"].get<int64_t>();
    }
    t.op_pool = o;
  }
  if (op.contains("norm")) {
    const json& nm = c.object(op["norm"], P + ".norm");
    c.known_keys(nm, P + ".norm", {"stat", "axes", "groups", "eps", "affine_axes"});
    Task::NormOptions o;
    static const std::vector<std::string> stats = {"var", "rms", "l2", "mean_abs"};
    if (!nm.contains("stat") || !nm["stat"].is_string() ||
        std::find(stats.begin(), stats.end(), nm["stat"].get<std::string>()) == stats.end())
      c.fail(P + ".norm.stat", "\"var\", \"rms\", \"l2\" or \"mean_abs\"",
             nm.contains("stat") ? nm["stat"].dump() : "nothing");
    o.stat = nm["stat"].get<std::string>();
    // The rank of x (operands.x, else the only input), when known: the axes must be its.
    const TensorSpec* x = t.op_operands.count("x") ? t.find_input(t.op_operands.at("x"))
                          : t.inputs.size() == 1   ? &t.inputs[0]
                                                   : nullptr;
    auto axes = [&](const char* key) {
      const std::string field = P + ".norm." + key;
      const std::string expected = "a list of increasing axes of x (integers >= 0" +
                                   (x ? ", below its rank " + std::to_string(x->shape.size()) : std::string()) + ")";
      const json& a = nm[key];
      if (!a.is_array() || a.empty()) c.fail(field, expected, a.dump());
      std::vector<int64_t> v;
      for (const auto& e : a) {
        if (!e.is_number_integer() || e.get<int64_t>() < 0 || (!v.empty() && e.get<int64_t>() <= v.back()) ||
            (x && e.get<int64_t>() >= static_cast<int64_t>(x->shape.size())))
          c.fail(field, expected, a.dump());
        v.push_back(e.get<int64_t>());
      }
      return v;
    };
    if (!nm.contains("axes")) c.fail(P + ".norm.axes", "the axes the statistics are taken over", "nothing");
    o.axes = axes("axes");
    if (nm.contains("groups")) {
      if (!nm["groups"].is_number_integer() || nm["groups"].get<int64_t>() < 1)
        c.fail(P + ".norm.groups", "an integer >= 1", nm["groups"].dump());
      o.groups = nm["groups"].get<int64_t>();
    }
    if (!nm.contains("eps") || !nm["eps"].is_number() || !(nm["eps"].get<double>() >= 0))
      c.fail(P + ".norm.eps", "a number >= 0", nm.contains("eps") ? nm["eps"].dump() : "nothing");
    o.eps = nm["eps"].get<double>();
    const bool affine = t.op_operands.count("weight") || t.op_operands.count("bias");
    if (nm.contains("affine_axes")) {
      if (!affine)
        c.fail(P + ".norm.affine_axes", "nothing without a weight or bias in khive.op.operands",
               nm["affine_axes"].dump());
      o.affine_axes = axes("affine_axes");
    } else if (affine) {
      c.fail(P + ".norm.affine_axes", "the axes of x the weight and bias (khive.op.operands) are shaped as", "nothing");
    }
    t.op_norm = o;
  }
}

void parse_khive_block(const Ctx& c, const json& root, Task& t, const std::set<std::string>& axis_names,
                       CostGiven& given) {
  if (!root.contains("khive") || root["khive"].is_null()) {
    t.upstream = true;
    return;
  }
  const json& k = c.object(root["khive"], "khive");
  c.known_keys(k, "khive", {"cost", "tolerance", "inputs", "policy", "reference", "baselines", "source", "op"});

  // khive.op: what the PyTorch reference computes, recognised from its graph (python/khive_torch/recognize.py).
  if (k.contains("op") && !k["op"].is_null()) parse_recognised_op(c, k["op"], t, "khive.op");

  if (k.contains("source") && !k["source"].is_null()) {
    const json& src = c.object(k["source"], "khive.source");
    if (!src.contains("kind")) c.fail("khive.source.kind", "where the task came from (kernelbench, ...)", "none");
    t.source_kind = c.string(src["kind"], "khive.source.kind");
    t.source_json = src.dump();
  }

  if (k.contains("cost")) {
    const json& cost = c.object(k["cost"], "khive.cost");
    c.known_keys(cost, "khive.cost", {"flops", "bytes", "unit"});
    for (const char* key : {"flops", "bytes"}) {
      if (!cost.contains(key)) continue;
      std::string field = std::string("khive.cost.") + key;
      std::string f = formula_text(c, cost[key], field);
      check_formula(c, f, field, axis_names, "formula");
      (std::string(key) == "flops" ? t.cost.flops : t.cost.bytes) = f;
      (std::string(key) == "flops" ? given.flops : given.bytes) = true;
    }
    if (cost.contains("unit")) {
      given.unit = true;
      std::string u = c.string(cost["unit"], "khive.cost.unit");
      auto unit = parse_compute_unit(u);
      if (!unit) c.fail("khive.cost.unit", "one of bf16, fp16, tf32, fp8, int8, fp32, fp64", quote(u));
      t.cost.unit = *unit;
    }
  }

  if (k.contains("tolerance")) {
    const json& tol = c.object(k["tolerance"], "khive.tolerance");
    for (const auto& [out, spec] : tol.items()) {
      std::string field = "khive.tolerance." + out;
      const TensorSpec* o = t.find_output(out);
      if (!o) c.fail(field, output_name_expected(t), quote(out));
      Tolerance base = default_tolerance(o->dtype);
      apply_tolerance(c, spec, field, base, false);
      t.tolerance[out] = base;
    }
  }

  if (k.contains("inputs")) {
    const json& ins = c.object(k["inputs"], "khive.inputs");
    for (const auto& [in, spec] : ins.items()) {
      std::string field = "khive.inputs." + in;
      const TensorSpec* s = t.find_input(in);
      if (!s) c.fail(field, input_name_expected(t), quote(in));
      t.distributions[in] = parse_distribution(c, spec, field, *s);
    }
  }

  if (k.contains("policy")) {
    const json& pol = c.object(k["policy"], "khive.policy");
    c.known_keys(pol, "khive.policy", {"libraries"});
    if (pol.contains("libraries")) {
      auto libs = c.strings(pol["libraries"], "khive.policy.libraries");
      for (std::size_t i = 0; i < libs.size(); ++i)
        if (libs[i] != "cublas" && libs[i] != "cublasLt")
          c.fail("khive.policy.libraries[" + std::to_string(i) + "]", "one of cublas, cublasLt", quote(libs[i]));
      t.policy.libraries = libs;
    }
  }

  if (k.contains("reference")) {
    const json& ref = c.object(k["reference"], "khive.reference");
    c.known_keys(ref, "khive.reference", {"cuda", "cpu"});
    if (ref.contains("cuda") && !ref["cuda"].is_null())
      t.reference_cuda = task_file(c, t.dir, ref["cuda"], "khive.reference.cuda");
    if (ref.contains("cpu") && !ref["cpu"].is_null())
      t.reference_cpu = task_file(c, t.dir, ref["cpu"], "khive.reference.cpu");
  }

  if (k.contains("baselines")) {
    const json& b = c.array(k["baselines"], "khive.baselines");
    for (std::size_t i = 0; i < b.size(); ++i)
      t.baselines.push_back(task_file(c, t.dir, b[i], "khive.baselines[" + std::to_string(i) + "]"));
  }
}

// Whether Python source defines `name` at the top level ("def name(" at the start of a line).
bool defines_function(const std::string& src, const std::string& name) {
  const std::string want = "def " + name + "(";
  for (std::size_t at = src.find(want); at != std::string::npos; at = src.find(want, at + 1))
    if (at == 0 || src[at - 1] == '\n') return true;
  return false;
}

// Constraints over axes are checked for every workload at load; those that read input data (FlashInfer-Bench:
// "num_kv_indices == kv_indptr[-1].item()") are checked for the safe subset and kept for the PyTorch side.
void parse_constraints(const Ctx& c, const json& j, Task& t, const std::set<std::string>& axis_names) {
  std::vector<std::string> all = c.strings(j, "constraints");
  std::set<std::string> inputs;
  for (const auto& s : t.inputs) inputs.insert(s.name);
  for (std::size_t i = 0; i < all.size(); ++i) {
    std::string field = "constraints[" + std::to_string(i) + "]";
    if (!is_data_constraint(all[i], inputs)) {
      check_formula(c, all[i], field, axis_names, "condition");
      t.constraints.push_back(all[i]);
      continue;
    }
    try {
      check_data_constraint(all[i], axis_names, inputs);
    } catch (const ExprError& e) {
      c.fail(field,
             "a condition over axes and inputs in the safe subset (numbers, + - * / // % **, comparisons, and/or/not, "
             "indexing, .item(), .shape, .numel(), len/min/max/abs/int)",
             quote(all[i]) + " (" + e.what() + ")");
    }
    t.data_constraints.push_back(all[i]);
  }
}

}  // namespace

void parse_definition(const Ctx& c, const json& root, Task& t) {
  if (!root.is_object()) c.fail("(root)", "a JSON object", describe_json(root));
  if (!root.contains("name")) c.fail("name", "a non-empty string", "none");
  t.name = c.string(root["name"], "name");
  auto opt_string = [&](const char* key, std::string& dst) {
    if (root.contains(key) && !root[key].is_null()) dst = c.string(root[key], key, false);
  };
  opt_string("description", t.description);
  opt_string("op_type", t.op_type);
  opt_string("reference", t.pytorch_reference);
  if (root.contains("tags") && !root["tags"].is_null()) t.tags = c.strings(root["tags"], "tags");
  if (!t.pytorch_reference.empty() && !defines_function(t.pytorch_reference, "run"))
    c.fail("reference", "Python source that defines a top-level function run(...)",
           "no \"def run(\" at the start of a line");
  opt_string("custom_inputs_entrypoint", t.custom_inputs_entrypoint);
  if (!t.custom_inputs_entrypoint.empty()) {
    if (!is_identifier(t.custom_inputs_entrypoint))
      c.fail("custom_inputs_entrypoint", "a Python function name", quote(t.custom_inputs_entrypoint));
    if (!defines_function(t.pytorch_reference, t.custom_inputs_entrypoint))
      c.fail("custom_inputs_entrypoint", "a function defined at the top level of \"reference\"",
             quote(t.custom_inputs_entrypoint) + " (no \"def " + t.custom_inputs_entrypoint + "(\" there)");
  }

  parse_axes(c, root, t);
  std::set<std::string> axis_names;
  for (const auto& a : t.axes) axis_names.insert(a.name);
  check_expr_axes(c, t, axis_names);

  parse_tensors(c, root, "inputs", t.inputs, t.axes);
  parse_tensors(c, root, "outputs", t.outputs, t.axes);
  if (t.outputs.empty()) c.fail("outputs", "at least one output", "an empty object");
  for (const auto& o : t.outputs)
    if (t.find_input(o.name)) c.fail("outputs." + o.name, "a name that is not also an input", quote(o.name));

  if (root.contains("constraints") && !root["constraints"].is_null())
    parse_constraints(c, root["constraints"], t, axis_names);

  CostGiven given;
  parse_khive_block(c, root, t, axis_names, given);
  if (!given.flops || !given.bytes) derive_cost(t, given.flops, given.bytes, given.unit);
}

}  // namespace khive::task_parse

namespace khive {

void read_recognised_op(const std::string& file, const std::string& field, const std::string& op_json, Task& t) {
  task_parse::json j;
  try {
    j = task_parse::json::parse(op_json);
  } catch (const task_parse::json::parse_error& e) {
    khive::throw_task_format_error(file, field, "a JSON object", task_parse::json_error_text(e));
  }
  task_parse::parse_recognised_op(task_parse::task_fields(file), j, t, field);
}

}  // namespace khive
