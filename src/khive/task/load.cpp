// Loading and validating a task directory (docs/task-format.md is the user-facing reference).
//
// Every problem is reported as a TaskFormatError naming the file (relative to the task's parent
// directory), the field path ("inputs.A.dtype", "line 3: axes.M") and what was expected, so a user can
// fix a task without reading this code. Fields that belong to the FlashInfer-Bench / SOL-ExecBench schema
// tolerate unknown keys (their tools add fields over time); keys inside our own "khive" blocks must be
// known, so that a typo is not silently ignored.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "khive/support/hash.hpp"
#include "khive/task/data_constraint.hpp"
#include "khive/task/derive_cost.hpp"
#include "khive/task/expr.hpp"
#include "khive/task/task.hpp"

namespace khive {
namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace {

// ------------------------------------------------------------------------------------- small helpers

std::string fmt_real(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  // Prefer the shortest spelling that round-trips.
  for (int prec = 1; prec <= 17; ++prec) {
    char shorter[64];
    std::snprintf(shorter, sizeof shorter, "%.*g", prec, v);
    if (std::strtod(shorter, nullptr) == v) return shorter;
  }
  return buf;
}

// How a JSON value is shown after "got".
std::string describe(const json& j) {
  switch (j.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return j.get<bool>() ? "true" : "false";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return j.dump();
    case json::value_t::number_float: return fmt_real(j.get<double>());
    case json::value_t::string: {
      std::string s = j.dump();
      if (s.size() > 60) s = s.substr(0, 57) + "...\"";
      return s;
    }
    case json::value_t::array: return j.empty() ? "an empty array" : "an array";
    case json::value_t::object: return j.empty() ? "an empty object" : "an object";
    default: return "an unsupported JSON value";
  }
}

std::string quote(const std::string& s) { return "\"" + s + "\""; }

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

bool is_identifier(const std::string& s) {
  if (s.empty()) return false;
  auto start = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!start(s[0])) return false;
  for (char c : s)
    if (!start(c) && !(c >= '0' && c <= '9')) return false;
  return true;
}

bool is_literal_size(const std::string& s) {
  return !s.empty() && s.size() <= 18 && s.find_first_not_of("0123456789") == std::string::npos;
}

// Names that cannot be parameters of khive_launch or names in an expression.
bool is_reserved_name(const std::string& s) {
  static const std::set<std::string> words = {
      // expression keywords
      "and", "or", "not", "True", "False",
      // the stream parameter
      "stream",
      // C++ keywords and alternative tokens
      "alignas", "alignof", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch", "char",
      "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr",
      "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete",
      "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
      "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not_eq",
      "nullptr", "operator", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
      "requires", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
      "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename",
      "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq"};
  return words.count(s) > 0;
}

std::string read_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + p.string());
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

fs::path normalize_dir(const fs::path& dir) {
  fs::path p = fs::absolute(dir).lexically_normal();
  if (p.filename().empty() && p.has_parent_path() && p != p.root_path()) p = p.parent_path();
  return p;
}

// "gemm/definition.json": the file relative to the task's parent directory.
std::string file_label(const fs::path& task_dir, const char* file) {
  fs::path d = normalize_dir(task_dir);
  std::string name = d.filename().string();
  return name.empty() ? std::string(file) : name + "/" + file;
}

const char* kDTypeList =
    "one of float64, float32, float16, bfloat16, float8_e4m3fn, float8_e5m2, float4_e2m1, float4_e2m1fn_x2, "
    "int64, int32, int16, int8, bool";

// --------------------------------------------------------------------------- typed access with paths

// Carries the file label and a prefix for field paths ("" for definition.json, "line N: " for workloads).
struct Ctx {
  std::string file;
  std::string prefix;

  [[noreturn]] void fail(const std::string& field, const std::string& expected, const std::string& got = "") const {
    throw TaskFormatError(file, prefix + field, expected, got);
  }

  const json& object(const json& j, const std::string& field) const {
    if (!j.is_object()) fail(field, "an object", describe(j));
    return j;
  }
  const json& array(const json& j, const std::string& field) const {
    if (!j.is_array()) fail(field, "an array", describe(j));
    return j;
  }
  std::string string(const json& j, const std::string& field, bool non_empty = true) const {
    if (!j.is_string()) fail(field, non_empty ? "a non-empty string" : "a string", describe(j));
    std::string s = j.get<std::string>();
    if (non_empty && s.empty()) fail(field, "a non-empty string", "\"\"");
    return s;
  }
  double number(const json& j, const std::string& field) const {
    if (!j.is_number()) fail(field, "a number", describe(j));
    return j.get<double>();
  }
  // Integers; an integral float (4096.0) is accepted as pydantic does.
  int64_t integer(const json& j, const std::string& field) const {
    if (j.is_number_integer() && !j.is_number_unsigned()) return j.get<int64_t>();
    if (j.is_number_unsigned()) {
      uint64_t u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX)) fail(field, "an integer that fits in int64", describe(j));
      return static_cast<int64_t>(u);
    }
    if (j.is_number_float()) {
      double d = j.get<double>();
      if (std::floor(d) == d && std::fabs(d) < 9.2e18) return static_cast<int64_t>(d);
    }
    fail(field, "an integer", describe(j));
  }
  std::vector<std::string> strings(const json& j, const std::string& field) const {
    if (!j.is_array()) fail(field, "an array of strings", describe(j));
    std::vector<std::string> out;
    for (std::size_t i = 0; i < j.size(); ++i) out.push_back(string(j[i], field + "[" + std::to_string(i) + "]", false));
    return out;
  }
  // For our own blocks: every key must be known.
  void known_keys(const json& obj, const std::string& field, const std::vector<std::string>& allowed) const {
    for (const auto& [k, v] : obj.items()) {
      if (std::find(allowed.begin(), allowed.end(), k) == allowed.end())
        fail(field.empty() ? k : field + "." + k,
             "a known key" + std::string(field.empty() ? "" : " of " + field) + " (" + join(allowed) + ")",
             quote(k));
    }
  }
};

// The parser's message without its "[json.exception.parse_error.101] " tag, with the byte offset.
std::string json_error_text(const json::parse_error& e) {
  std::string m = e.what();
  if (!m.empty() && m[0] == '[') {
    auto close = m.find("] ");
    if (close != std::string::npos) m = m.substr(close + 2);
  }
  return m + " (byte " + std::to_string(e.byte) + ")";
}

// ----------------------------------------------------------------------------------------- tolerance

// Applies the fields present in obj onto tol (the fields absent keep their inherited values).
// sol = the SOL-ExecBench spelling (max_atol, max_rtol, required_matched_ratio), whose other keys are
// tolerated as in the rest of the upstream schema; khive's spelling (atol, rtol, matched_ratio) is strict.
// Both accept max_error_cap and allow_negative_inf.
void apply_tolerance(const Ctx& c, const json& obj, const std::string& field, Tolerance& tol, bool sol) {
  c.object(obj, field);
  const std::string atol_key = sol ? "max_atol" : "atol";
  const std::string rtol_key = sol ? "max_rtol" : "rtol";
  const std::string ratio_key = sol ? "required_matched_ratio" : "matched_ratio";
  if (!sol) c.known_keys(obj, field, {"atol", "rtol", "matched_ratio", "max_error_cap", "allow_negative_inf"});
  auto nonneg = [&](const std::string& key, double& dst) {
    if (!obj.contains(key)) return;
    double v = c.number(obj[key], field + "." + key);
    if (!(v >= 0) || !std::isfinite(v)) c.fail(field + "." + key, "a finite number >= 0", describe(obj[key]));
    dst = v;
  };
  nonneg(atol_key, tol.atol);
  nonneg(rtol_key, tol.rtol);
  if (obj.contains(ratio_key)) {
    double v = c.number(obj[ratio_key], field + "." + ratio_key);
    if (!(v > 0 && v <= 1)) c.fail(field + "." + ratio_key, "a number in (0, 1]", describe(obj[ratio_key]));
    tol.matched_ratio = v;
  }
  if (obj.contains("max_error_cap")) {
    const json& cap = obj["max_error_cap"];
    if (cap.is_null()) {
      tol.max_error_cap.reset();
    } else {
      double v = c.number(cap, field + ".max_error_cap");
      if (!(v > 0) || !std::isfinite(v)) c.fail(field + ".max_error_cap", "a finite number > 0 (or null)", describe(cap));
      tol.max_error_cap = v;
    }
  }
  if (obj.contains("allow_negative_inf") && !obj["allow_negative_inf"].is_null()) {
    if (!obj["allow_negative_inf"].is_boolean())
      c.fail(field + ".allow_negative_inf", "true or false", describe(obj["allow_negative_inf"]));
    tol.allow_negative_inf = obj["allow_negative_inf"].get<bool>();
  }
}

// A workload's top-level "tolerance": SOL-ExecBench writes max_atol / max_rtol / required_matched_ratio,
// khive's own files atol / rtol / matched_ratio. Returns whether it is the SOL spelling (one of its own keys
// is present: its other keys are then tolerated); mixing fails. Otherwise khive's strict spelling applies, so
// a typo ("atl") is still an error.
bool sol_spelling(const Ctx& c, const json& obj, const std::string& field) {
  c.object(obj, field);
  bool sol = false, ours = false;
  for (const char* k : {"max_atol", "max_rtol", "required_matched_ratio"}) sol = sol || obj.contains(k);
  for (const char* k : {"atol", "rtol", "matched_ratio"}) ours = ours || obj.contains(k);
  if (sol && ours)
    c.fail(field, "one spelling: SOL-ExecBench's (max_atol, max_rtol, required_matched_ratio) or khive's (atol, rtol, matched_ratio)",
           "both");
  return sol;
}

// ------------------------------------------------------------------------------------- distributions

Distribution parse_distribution(const Ctx& c, const json& obj, const std::string& field, const TensorSpec& in) {
  c.object(obj, field);
  const bool int_type = dtype_is_integer(in.dtype);
  const bool is_bool = in.dtype == DType::boolean;
  Distribution d;
  std::string dist = int_type ? "integers" : "normal";
  if (obj.contains("dist")) dist = c.string(obj["dist"], field + ".dist");
  if (dist == "normal") {
    d.kind = Distribution::Kind::normal;
  } else if (dist == "uniform") {
    d.kind = Distribution::Kind::uniform;
  } else if (dist == "constant") {
    d.kind = Distribution::Kind::constant;
  } else if (dist == "integers") {
    d.kind = Distribution::Kind::integers;
    d.low = is_bool ? 0 : -8;
    d.high = is_bool ? 1 : 8;
  } else {
    c.fail(field + ".dist", "one of normal, uniform, constant, integers", quote(dist));
  }
  if (int_type && (d.kind == Distribution::Kind::normal || d.kind == Distribution::Kind::uniform))
    c.fail(field + ".dist", "integers or constant for an input of dtype " + std::string(dtype_name(in.dtype)),
           quote(dist));

  auto num = [&](const char* key, double& dst) {
    if (!obj.contains(key)) return;
    dst = c.number(obj[key], field + "." + key);
    if (!std::isfinite(dst)) c.fail(field + "." + key, "a finite number", describe(obj[key]));
  };
  auto integral = [&](const char* key, double v) {
    if (std::floor(v) != v) c.fail(field + "." + key, "an integer", describe(obj[key]));
  };
  switch (d.kind) {
    case Distribution::Kind::normal:
      c.known_keys(obj, field, {"dist", "mean", "std"});
      num("mean", d.mean);
      num("std", d.stddev);
      if (d.stddev < 0) c.fail(field + ".std", "a number >= 0", describe(obj["std"]));
      break;
    case Distribution::Kind::uniform:
      c.known_keys(obj, field, {"dist", "low", "high"});
      num("low", d.low);
      num("high", d.high);
      if (d.low > d.high)
        c.fail(field + ".high", "a number >= low (" + fmt_real(d.low) + ")", fmt_real(d.high));
      break;
    case Distribution::Kind::integers:
      c.known_keys(obj, field, {"dist", "low", "high"});
      num("low", d.low);
      num("high", d.high);
      if (obj.contains("low")) integral("low", d.low);
      if (obj.contains("high")) integral("high", d.high);
      if (d.low > d.high)
        c.fail(field + ".high", "an integer >= low (" + fmt_real(d.low) + ")", fmt_real(d.high));
      if (is_bool && (d.low < 0 || d.high > 1))
        c.fail(field + (d.low < 0 ? ".low" : ".high"), "a bound within 0..1 for a bool input",
               fmt_real(d.low < 0 ? d.low : d.high));
      break;
    case Distribution::Kind::constant:
      c.known_keys(obj, field, {"dist", "value"});
      if (!obj.contains("value")) c.fail(field + ".value", "a number (the constant)", "none");
      if (is_bool && obj["value"].is_boolean()) {
        d.value = obj["value"].get<bool>() ? 1 : 0;
      } else {
        num("value", d.value);
      }
      if (int_type) integral("value", d.value);
      if (is_bool && d.value != 0 && d.value != 1) c.fail(field + ".value", "0 or 1 for a bool input", describe(obj["value"]));
      break;
  }
  return d;
}

// ------------------------------------------------------------------------------------- expressions

// Offset of the first whole-word occurrence of name in expr (for "unknown axis 'X' at N").
std::size_t find_word(const std::string& expr, const std::string& name) {
  auto ident = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
  for (std::size_t at = expr.find(name); at != std::string::npos; at = expr.find(name, at + 1)) {
    bool left = at == 0 || !ident(expr[at - 1]);
    bool right = at + name.size() >= expr.size() || !ident(expr[at + name.size()]);
    if (left && right) return at;
  }
  return 0;
}

// Parses expr and checks that every identifier is an axis; fails on field with the ExprError text.
std::vector<std::string> check_formula(const Ctx& c, const std::string& expr, const std::string& field,
                                       const std::set<std::string>& axis_names, const char* what) {
  std::vector<std::string> ids;
  try {
    ids = expr_identifiers(expr);
  } catch (const ExprError& e) {
    c.fail(field, std::string("a valid ") + what, quote(expr) + " (" + e.what() + ")");
  }
  for (const auto& id : ids) {
    if (!axis_names.count(id)) {
      std::size_t at = find_word(expr, id);
      c.fail(field, std::string("a ") + what + " over declared axes",
             quote(expr) + " (unknown axis '" + id + "' at " + std::to_string(at) + ")");
    }
  }
  return ids;
}

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
    std::string s = fmt_real(v);
    if (s.find_first_of(".en") == std::string::npos) s += ".0";
    return s;
  }
  c.fail(field, "a formula (string) or a number", describe(j));
}

// --------------------------------------------------------------------------------------- definition

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
      if (!shape.is_array()) c.fail(field + ".shape", "an array of axis names, or null for a scalar", describe(shape));
      for (std::size_t i = 0; i < shape.size(); ++i) {
        std::string f = field + ".shape[" + std::to_string(i) + "]";
        if (!shape[i].is_string()) c.fail(f, "an axis name (string)", describe(shape[i]));
        std::string dim = shape[i].get<std::string>();
        if (!is_literal_size(dim) && !axis_kinds.count(dim)) {
          std::vector<std::string> names;
          for (const auto& a : axes) names.push_back(a.name);
          c.fail(f, names.empty() ? "a declared axis name (no axes are declared)"
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
      if (a.value < 0) c.fail(field + ".value", "an integer >= 0", describe(spec["value"]));
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
      if (!deps.count(d)) continue;   // const or var: a leaf
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
  if (!fs::is_regular_file(full)) c.fail(field, "an existing file (relative to the task directory)", quote(rel) + " (not found)");
  return full;
}

struct CostGiven {
  bool flops = false, bytes = false, unit = false;
};

void parse_khive_block(const Ctx& c, const json& root, Task& t, const std::set<std::string>& axis_names, CostGiven& given) {
  if (!root.contains("khive") || root["khive"].is_null()) {
    t.upstream = true;
    return;
  }
  const json& k = c.object(root["khive"], "khive");
  c.known_keys(k, "khive", {"cost", "tolerance", "inputs", "policy", "reference", "baselines", "source"});

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
      if (!o) {
        std::vector<std::string> names;
        for (const auto& s : t.outputs) names.push_back(s.name);
        c.fail(field, "the name of an output (" + join(names) + ")", quote(out));
      }
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
      if (!s) {
        std::vector<std::string> names;
        for (const auto& x : t.inputs) names.push_back(x.name);
        c.fail(field, names.empty() ? "the name of an input (the task has none)" : "the name of an input (" + join(names) + ")",
               quote(in));
      }
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

void parse_definition(const Ctx& c, const json& root, Task& t) {
  if (!root.is_object()) c.fail("(root)", "a JSON object", describe(root));
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
    c.fail("reference", "Python source that defines a top-level function run(...)", "no \"def run(\" at the start of a line");
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

  if (root.contains("constraints") && !root["constraints"].is_null()) parse_constraints(c, root["constraints"], t, axis_names);

  CostGiven given;
  parse_khive_block(c, root, t, axis_names, given);
  if (!given.flops || !given.bytes) derive_cost(t, given.flops, given.bytes, given.unit);
}

// ---------------------------------------------------------------------------------------- workloads


// A workload's own input distributions (khive.inputs, the definition's schema): ops whose behaviour depends on
// the range of their inputs (softmax's overflow, GELU's tails) are checked on several regimes, one per workload.
void parse_workload_distributions(const Ctx& c, const Task& t, const json& ins_json, Workload& w) {
  const json& ins = c.object(ins_json, "khive.inputs");
  for (const auto& [in, spec] : ins.items()) {
    const std::string field = "khive.inputs." + in;
    const TensorSpec* s = t.find_input(in);
    if (!s) {
      std::vector<std::string> names;
      for (const auto& x : t.inputs) names.push_back(x.name);
      c.fail(field, names.empty() ? "the name of an input (the task has none)" : "the name of an input (" + join(names) + ")", quote(in));
    }
    w.distributions[in] = parse_distribution(c, spec, field, *s);
  }
}

// {"type": "safetensors", "path": "blob/x.safetensors", "tensor_key": "k"}: the path is relative to the
// dataset root (FlashInfer-Bench) or the problem (SOL-ExecBench); it is looked for in the task directory and
// then in each parent directory.
InputSource safetensors_source(const Ctx& c, const json& spec, const std::string& field, const Task& t) {
  InputSource src;
  src.kind = InputSource::Kind::safetensors;
  if (!spec.contains("path")) c.fail(field + ".path", "the path of a .safetensors file", "none");
  src.path = c.string(spec["path"], field + ".path");
  if (!spec.contains("tensor_key")) c.fail(field + ".tensor_key", "the key of a tensor in the file", "none");
  src.tensor_key = c.string(spec["tensor_key"], field + ".tensor_key");
  fs::path rel(src.path);
  if (rel.is_absolute()) {
    if (fs::is_regular_file(rel)) src.file = rel;
  } else {
    for (fs::path d = t.dir; !d.empty(); d = d.parent_path()) {
      if (fs::is_regular_file(d / rel)) {
        src.file = (d / rel).lexically_normal();
        break;
      }
      if (d == d.root_path()) break;
    }
  }
  if (src.file.empty())
    c.fail(field + ".path", "an existing .safetensors file (relative to the task directory or a parent of it)",
           quote(src.path) + " (not found)");
  return src;
}

Workload parse_workload(const Ctx& c, const json& line_json, int line, const Task& t) {
  const json* jp = &line_json;
  if (!jp->is_object()) c.fail("(root)", "a JSON object (one workload)", describe(*jp));
  // A FlashInfer Trace record {"definition", "workload": {...}, "solution", "evaluation"} holds the
  // workload one level down.
  if (jp->contains("workload") && !jp->contains("axes") && (*jp)["workload"].is_object()) {
    if (jp->contains("definition") && (*jp)["definition"].is_string() &&
        (*jp)["definition"].get<std::string>() != t.name)
      c.fail("definition", quote(t.name) + " (the definition's name)", describe((*jp)["definition"]));
    jp = &(*jp)["workload"];
  }
  const json& j = *jp;

  Workload w;
  w.line = line;
  w.uuid = "w" + std::to_string(line);
  if (j.contains("uuid") && !j["uuid"].is_null()) w.uuid = c.string(j["uuid"], "uuid");

  if (j.contains("axes") && !j["axes"].is_null()) {
    const json& axes = c.object(j["axes"], "axes");
    std::vector<std::string> vars = t.var_axes();
    std::string var_list = vars.empty() ? "no axes (the task has no var axes)" : "only var axes (" + join(vars) + ")";
    for (const auto& [name, v] : axes.items()) {
      std::string field = "axes." + name;
      const Axis* a = nullptr;
      for (const auto& x : t.axes)
        if (x.name == name) a = &x;
      if (!a) c.fail(field, var_list, quote(name) + " (not an axis)");
      if (a->kind != Axis::Kind::var)
        c.fail(field, var_list, quote(name) + (a->kind == Axis::Kind::constant ? " (a const axis)" : " (an expr axis)"));
      int64_t value = c.integer(v, field);
      if (value < 0) c.fail(field, "an integer >= 0", describe(v));
      w.axes[name] = value;
    }
  }

  if (j.contains("inputs") && !j["inputs"].is_null()) {
    const json& ins = c.object(j["inputs"], "inputs");
    for (const auto& [name, spec] : ins.items()) {
      std::string field = "inputs." + name;
      const TensorSpec* s = t.find_input(name);
      if (!s) {
        std::vector<std::string> names;
        for (const auto& x : t.inputs) names.push_back(x.name);
        c.fail(field, names.empty() ? "the name of an input (the task has none)" : "the name of an input (" + join(names) + ")",
               quote(name));
      }
      c.object(spec, field);
      if (!spec.contains("type")) c.fail(field + ".type", "one of random, scalar, safetensors, custom", "none");
      std::string type = c.string(spec["type"], field + ".type");
      InputSource src;
      if (type == "random") {
        src.kind = InputSource::Kind::random;
      } else if (type == "scalar") {
        src.kind = InputSource::Kind::scalar;
        if (!s->scalar && !s->shape.empty())
          c.fail(field + ".type", "random for a tensor input (scalar only for shape null or [])", quote(type));
        if (!spec.contains("value")) c.fail(field + ".value", "a number", "none");
        const json& v = spec["value"];
        if (v.is_boolean()) {
          src.value = v.get<bool>() ? 1.0 : 0.0;
        } else {
          src.value = c.number(v, field + ".value");
        }
        if (dtype_is_integer(s->dtype) && std::floor(src.value) != src.value)
          c.fail(field + ".value", "an integer for an input of dtype " + std::string(dtype_name(s->dtype)), describe(v));
        if (s->dtype == DType::boolean && src.value != 0.0 && src.value != 1.0)
          c.fail(field + ".value", "true, false, 0 or 1 for a bool input", describe(v));
      } else if (type == "safetensors") {
        src = safetensors_source(c, spec, field, t);
      } else if (type == "custom") {
        src.kind = InputSource::Kind::custom;
        if (t.custom_inputs_entrypoint.empty())
          c.fail(field + ".type", "random, scalar or safetensors (\"custom\" needs the definition's custom_inputs_entrypoint)",
                 quote(type));
      } else {
        c.fail(field + ".type", "one of random, scalar, safetensors, custom", quote(type));
      }
      w.inputs[name] = src;
    }
  }

  // Tolerance: the top-level one (SOL-ExecBench "correctness" spelling, or "tolerance") applies to every
  // output, a khive per-output one on top; each is merged field by field over the task's tolerance.
  const json* sol = (j.contains("correctness") && !j["correctness"].is_null()) ? &j["correctness"] : nullptr;
  const json* top = (j.contains("tolerance") && !j["tolerance"].is_null()) ? &j["tolerance"] : nullptr;
  const json* per = nullptr;

  if (j.contains("khive") && !j["khive"].is_null()) {
    const json& k = c.object(j["khive"], "khive");
    c.known_keys(k, "khive", {"role", "weight", "tolerance", "backends", "inputs"});
    if (k.contains("role")) {
      std::string role = c.string(k["role"], "khive.role");
      if (role == "correctness") w.role = WorkloadRole::correctness;
      else if (role == "perf") w.role = WorkloadRole::perf;
      else if (role == "both") w.role = WorkloadRole::both;
      else c.fail("khive.role", "one of correctness, perf, both", quote(role));
    }
    if (k.contains("weight")) {
      double weight = c.number(k["weight"], "khive.weight");
      if (!(weight > 0) || !std::isfinite(weight)) c.fail("khive.weight", "a finite number > 0", describe(k["weight"]));
      w.weight = weight;
    }
    if (k.contains("backends") && !k["backends"].is_null()) {
      const json& b = k["backends"];
      if (!b.is_array()) c.fail("khive.backends", "an array of backend names (cpu, cuda)", describe(b));
      if (b.empty()) c.fail("khive.backends", "at least one backend (cpu, cuda)", "an empty array");
      w.on_cpu = w.on_cuda = false;
      for (std::size_t i = 0; i < b.size(); ++i) {
        std::string field = "khive.backends[" + std::to_string(i) + "]";
        std::string name = c.string(b[i], field);
        auto be = parse_backend(name);
        if (!be) c.fail(field, "one of cpu, cuda", quote(name));
        bool& on = *be == Backend::cpu ? w.on_cpu : w.on_cuda;
        if (on) c.fail(field, "each backend once", quote(name) + " (listed twice)");
        on = true;
      }
    }
    if (k.contains("inputs") && !k["inputs"].is_null()) parse_workload_distributions(c, t, k["inputs"], w);
    if (k.contains("tolerance") && !k["tolerance"].is_null()) {
      per = &c.object(k["tolerance"], "khive.tolerance");
      for (const auto& [out, spec] : per->items())
        if (!t.find_output(out)) {
          std::vector<std::string> names;
          for (const auto& s : t.outputs) names.push_back(s.name);
          c.fail("khive.tolerance." + out, "the name of an output (" + join(names) + ")", quote(out));
        }
    }
  }

  if (sol || top || per) {
    Workload none;
    for (const auto& o : t.outputs) {
      bool has_own = per && per->contains(o.name);
      if (!sol && !top && !has_own) continue;
      Tolerance tol = t.tolerance_for(o.name, none);
      if (sol) apply_tolerance(c, *sol, "correctness", tol, true);
      if (top) apply_tolerance(c, *top, "tolerance", tol, sol_spelling(c, *top, "tolerance"));
      if (has_own) apply_tolerance(c, (*per)[o.name], "khive.tolerance." + o.name, tol, false);
      w.tolerance[o.name] = tol;
    }
  }
  return w;
}

// "A [4096 x 393216] float32" for size errors.
std::string dims_text(const TensorSpec& s, const std::map<std::string, int64_t>& axes) {
  std::string d;
  for (const auto& dim : s.shape) {
    auto it = axes.find(dim);
    d += (d.empty() ? "" : " x ") + (it == axes.end() ? dim : std::to_string(it->second));
  }
  return s.name + " [" + d + "] " + std::string(dtype_name(s.dtype));
}

// "256 GiB", "4 TiB", "1.5e+20 bytes".
std::string size_text(int64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 6) {
    v /= 1024;
    ++u;
  }
  return fmt_real(std::round(v * 10) / 10) + " " + units[u];
}

// The cost formulas live in definition.json; an error for one workload names the formula's field there and
// the workload (issue 17: a division by zero used to surface after a whole evaluation, without file or field).
void check_workload_cost(const Task& t, const Workload& w, const std::map<std::string, int64_t>& axes) {
  const std::string def_file = file_label(t.dir, "definition.json");
  for (const char* key : {"flops", "bytes"}) {
    const std::string& f = std::string(key) == "flops" ? t.cost.flops : t.cost.bytes;
    bool derived = std::string(key) == "flops" ? t.cost.derived_flops : t.cost.derived_bytes;
    std::string field = std::string("khive.cost.") + key + (derived ? " (derived)" : "");
    std::string where = " for workload " + quote(w.uuid) + " (workload.jsonl line " + std::to_string(w.line) + ")";
    double v = 0;
    try {
      v = eval_expr(f, axes);
    } catch (const ExprError& e) {
      throw TaskFormatError(def_file, field, "a formula that gives a finite number >= 0 for every workload",
                            quote(f) + ": " + e.what() + where);
    }
    if (!std::isfinite(v) || v < 0)
      throw TaskFormatError(def_file, field, "a formula that gives a finite number >= 0 for every workload",
                            quote(f) + " = " + fmt_real(v) + where);
  }
}

void check_workload_sizes(const Ctx& c, const Task& t, const Workload& w) {
  std::map<std::string, int64_t> axes = resolve_axes(t, w);
  int64_t total = 0;
  auto check = [&](const TensorSpec& s, const char* group) {
    if (s.scalar) return;
    std::string field = std::string(group) + "." + s.name + ".shape";
    for (const auto& dim : s.shape) {
      if (is_literal_size(dim)) continue;
      int64_t v = axes.at(dim);
      if (v < 0) c.fail(field, "non-negative dimensions", dim + " = " + std::to_string(v));
    }
    try {
      element_count(s, axes);
    } catch (const std::overflow_error&) {
      c.fail(field, "an element count that fits in int64", "more than 2^63 elements (" + dims_text(s, axes) + ")");
    }
    int64_t bytes = 0;
    try {
      bytes = tensor_bytes(s, axes);
    } catch (const std::overflow_error&) {
      c.fail(field, "a byte size that fits in int64", "more than 2^63 bytes (" + dims_text(s, axes) + ")");
    }
    if (__builtin_add_overflow(total, bytes, &total) || total > kMaxWorkloadBytes)
      c.fail(field, "tensors that fit on one device (at most " + size_text(kMaxWorkloadBytes) + " for a workload's inputs and outputs)",
             dims_text(s, axes) + " = " + size_text(bytes) + (bytes == total ? "" : ", " + size_text(total) + " with the tensors before it"));
  };
  for (const auto& s : t.inputs) check(s, "inputs");
  for (const auto& s : t.outputs) check(s, "outputs");
  check_workload_cost(t, w, axes);
}

void load_workloads(const fs::path& dir, Task& t) {
  const std::string file = file_label(dir, "workload.jsonl");
  fs::path p = dir / "workload.jsonl";
  if (!fs::is_regular_file(p)) throw TaskFormatError(file, "(file)", "a workload.jsonl file", "none found");
  std::string text = read_text(p);
  std::istringstream in(text);
  std::string line_text;
  int line = 0;
  std::map<std::string, int> seen;
  while (std::getline(in, line_text)) {
    ++line;
    if (line_text.find_first_not_of(" \t\r\n") == std::string::npos) continue;
    Ctx c{file, "line " + std::to_string(line) + ": "};
    json j;
    try {
      j = json::parse(line_text);
    } catch (const json::parse_error& e) {
      c.fail("(syntax)", "valid JSON", json_error_text(e));
    }
    Workload w = parse_workload(c, j, line, t);
    if (auto it = seen.find(w.uuid); it != seen.end())
      c.fail("uuid", "a unique uuid", quote(w.uuid) + " (also on line " + std::to_string(it->second) + ")");
    seen[w.uuid] = line;
    check_workload_sizes(c, t, w);
    t.workloads.push_back(std::move(w));
  }
  if (t.workloads.empty()) throw TaskFormatError(file, "(workloads)", "at least one workload", "none");
  bool any_check = std::any_of(t.workloads.begin(), t.workloads.end(), [](const Workload& w) { return w.checks_correctness(); });
  if (!any_check)
    throw TaskFormatError(file, "khive.role", "at least one workload with role correctness or both", "only perf workloads");
  // Every backend the task has a reference for must be able to check and to time a kernel; otherwise
  // `khive eval` on that backend would accept anything untested or have nothing to score.
  for (Backend b : {Backend::cpu, Backend::cuda}) {
    if (!t.reference_for(b)) continue;
    bool check = false, perf = false;
    for (const auto& w : t.workloads) {
      if (!w.runs_on(b)) continue;
      check = check || w.checks_correctness();
      perf = perf || w.is_perf();
    }
    std::string be(backend_name(b));
    if (!check)
      throw TaskFormatError(file, "khive.backends",
                            "at least one correctness workload (role correctness or both) that runs on " + be +
                                " (the task has a " + be + " reference)",
                            "none");
    if (!perf)
      throw TaskFormatError(file, "khive.backends",
                            "at least one perf workload (role perf or both) that runs on " + be + " (the task has a " + be +
                                " reference)",
                            "none");
  }
}

// sha256 over (relative path, content) of every regular file, sorted by path. candidates/ (kernels
// people or agents try on the task) is not part of the task's identity, so adding one does not
// invalidate cached goldens.
std::string hash_task_dir(const fs::path& dir) {
  std::vector<std::pair<std::string, fs::path>> files;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_directory() && it.depth() == 0 && it->path().filename() == "candidates") {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file()) files.emplace_back(it->path().lexically_relative(dir).generic_string(), it->path());
  }
  std::sort(files.begin(), files.end());
  Sha256 h;
  for (const auto& [rel, full] : files) {
    h.field(rel);
    h.field(read_text(full));
  }
  return h.hex();
}

}  // namespace

Task load_task(const fs::path& dir_in) {
  Task t;
  t.dir = normalize_dir(dir_in);
  const fs::path& dir = t.dir;
  const std::string def_file = file_label(dir, "definition.json");
  if (!fs::is_directory(dir)) throw TaskFormatError(def_file, "(file)", "a task directory", quote(dir_in.string()) + " (not a directory)");
  fs::path def_path = dir / "definition.json";
  if (!fs::is_regular_file(def_path)) throw TaskFormatError(def_file, "(file)", "a definition.json file", "none found");

  Ctx c{def_file, ""};
  json root;
  try {
    root = json::parse(read_text(def_path));
  } catch (const json::parse_error& e) {
    c.fail("(syntax)", "valid JSON", json_error_text(e));
  }
  parse_definition(c, root, t);

  // Defaults: reference.cu / reference.cpp and baselines/*.cu|cpp when present.
  if (!t.reference_cuda && fs::is_regular_file(dir / "reference.cu")) t.reference_cuda = dir / "reference.cu";
  if (!t.reference_cpu && fs::is_regular_file(dir / "reference.cpp")) t.reference_cpu = dir / "reference.cpp";
  bool baselines_given = root.contains("khive") && root["khive"].is_object() && root["khive"].contains("baselines");
  if (!baselines_given && fs::is_directory(dir / "baselines")) {
    for (const auto& e : fs::directory_iterator(dir / "baselines")) {
      auto ext = e.path().extension();
      if (e.is_regular_file() && (ext == ".cu" || ext == ".cpp")) t.baselines.push_back(e.path());
    }
    std::sort(t.baselines.begin(), t.baselines.end());
  }

  load_workloads(dir, t);
  t.hash = hash_task_dir(dir);
  return t;
}

std::vector<fs::path> find_tasks(const fs::path& root) {
  if (!fs::is_directory(root)) throw std::runtime_error("find_tasks: not a directory: " + root.string());
  if (fs::is_regular_file(root / "definition.json")) return {root};
  std::vector<fs::path> out;
  auto opts = fs::directory_options::skip_permission_denied;
  for (auto it = fs::recursive_directory_iterator(root, opts); it != fs::recursive_directory_iterator(); ++it) {
    if (!it->is_directory()) continue;
    std::string name = it->path().filename().string();
    if (!name.empty() && name[0] == '.') {
      it.disable_recursion_pending();
      continue;
    }
    if (fs::is_regular_file(it->path() / "definition.json")) {
      out.push_back(it->path());
      it.disable_recursion_pending();   // a task holds no tasks
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::map<std::string, int64_t> resolve_axes(const Task& t, const Workload& w) {
  const std::string file = file_label(t.dir, "workload.jsonl");
  const std::string prefix = "line " + std::to_string(w.line) + ": ";
  auto fail = [&](const std::string& field, const std::string& expected, const std::string& got) {
    throw TaskFormatError(file, prefix + field, expected, got);
  };

  std::map<std::string, int64_t> values;
  std::vector<const Axis*> pending;
  for (const auto& a : t.axes) {
    switch (a.kind) {
      case Axis::Kind::constant: values[a.name] = a.value; break;
      case Axis::Kind::var: {
        auto it = w.axes.find(a.name);
        if (it == w.axes.end()) fail("axes." + a.name, "a value for var axis " + a.name, "none");
        values[a.name] = it->second;
        break;
      }
      case Axis::Kind::expr: pending.push_back(&a); break;
    }
  }
  for (const auto& [name, v] : w.axes) {
    bool is_var = false;
    for (const auto& a : t.axes)
      if (a.name == name && a.kind == Axis::Kind::var) is_var = true;
    if (!is_var) fail("axes." + name, "only var axes", quote(name));
  }

  // Expr axes in dependency order: evaluate whatever has all its inputs, until nothing is left.
  while (!pending.empty()) {
    bool progress = false;
    for (auto it = pending.begin(); it != pending.end();) {
      const Axis& a = **it;
      std::vector<std::string> ids;
      try {
        ids = expr_identifiers(a.expression);
      } catch (const ExprError& e) {
        fail("axes." + a.name, "a valid expression", quote(a.expression) + " (" + e.what() + ")");
      }
      bool ready = std::all_of(ids.begin(), ids.end(), [&](const std::string& id) { return values.count(id) > 0; });
      bool known = std::all_of(ids.begin(), ids.end(), [&](const std::string& id) {
        return std::any_of(t.axes.begin(), t.axes.end(), [&](const Axis& x) { return x.name == id; });
      });
      if (!ready && known) {
        ++it;
        continue;
      }
      try {
        values[a.name] = eval_int_expr(a.expression, values);
      } catch (const ExprError& e) {
        fail("axes." + a.name, "an integer from " + quote(a.expression), e.what());
      }
      it = pending.erase(it);
      progress = true;
    }
    if (!progress) {
      std::vector<std::string> names;
      for (const Axis* a : pending) names.push_back(a->name);
      fail("axes." + names.front(), "expr axes without a cycle", join(names, ", ") + " depend on each other");
    }
  }

  for (std::size_t i = 0; i < t.constraints.size(); ++i) {
    const std::string& cond = t.constraints[i];
    std::string field = "constraints[" + std::to_string(i) + "]";
    bool ok = false;
    try {
      ok = eval_condition(cond, values);
    } catch (const ExprError& e) {
      fail(field, quote(cond) + " to hold", e.what());
    }
    if (!ok) {
      std::vector<std::string> shown;
      try {
        for (const auto& id : expr_identifiers(cond))
          if (values.count(id)) shown.push_back(id + "=" + std::to_string(values[id]));
      } catch (const ExprError&) {
      }
      fail(field, quote(cond) + " to hold", "false with " + join(shown));
    }
  }
  return values;
}

}  // namespace khive
