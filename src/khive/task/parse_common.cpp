// What the task parsers share (parse_common.hpp).
#include "khive/task/parse_common.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include "khive/task/expr.hpp"

namespace khive::task_parse {
namespace fs = std::filesystem;

namespace {

// Offset of the first whole-word occurrence of name in expr (for "unknown axis 'X' at N").
std::size_t find_word(const std::string& expr, const std::string& name) {
  for (std::size_t at = expr.find(name); at != std::string::npos; at = expr.find(name, at + 1)) {
    bool left = at == 0 || !is_ident_char(expr[at - 1]);
    bool right = at + name.size() >= expr.size() || !is_ident_char(expr[at + name.size()]);
    if (left && right) return at;
  }
  return 0;
}

}  // namespace

bool is_literal_size(const std::string& s) {
  return !s.empty() && s.size() <= 18 && s.find_first_not_of("0123456789") == std::string::npos;
}

bool is_reserved_name(const std::string& s) {
  static const std::set<std::string> words = {
      // expression keywords
      "and", "or", "not", "True", "False",
      // the stream parameter
      "stream",
      // C++ keywords and alternative tokens
      "alignas", "alignof", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch", "char",
      "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr", "constinit",
      "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete", "do", "double",
      "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if",
      "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not_eq", "nullptr", "operator", "or_eq",
      "private", "protected", "public", "register", "reinterpret_cast", "requires", "return", "short", "signed",
      "sizeof", "static", "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
      "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void",
      "volatile", "wchar_t", "while", "xor", "xor_eq"};
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

std::string file_label(const fs::path& task_dir, const char* file) {
  fs::path d = normalize_dir(task_dir);
  std::string name = d.filename().string();
  return name.empty() ? std::string(file) : name + "/" + file;
}

const char* const kDTypeList =
    "one of float64, float32, float16, bfloat16, float8_e4m3fn, float8_e5m2, float4_e2m1, float4_e2m1fn_x2, "
    "int64, int32, int16, int8, bool";

std::string json_error_text(const json::parse_error& e) {
  std::string m = e.what();
  if (!m.empty() && m[0] == '[') {
    auto close = m.find("] ");
    if (close != std::string::npos) m = m.substr(close + 2);
  }
  return m + " (byte " + std::to_string(e.byte) + ")";
}

std::string input_name_expected(const Task& t) {
  std::vector<std::string> names;
  for (const auto& x : t.inputs) names.push_back(x.name);
  return names.empty() ? "the name of an input (the task has none)" : "the name of an input (" + join(names) + ")";
}

std::string output_name_expected(const Task& t) {
  std::vector<std::string> names;
  for (const auto& s : t.outputs) names.push_back(s.name);
  return "the name of an output (" + join(names) + ")";
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
    if (!(v >= 0) || !std::isfinite(v)) c.fail(field + "." + key, "a finite number >= 0", describe_json(obj[key]));
    dst = v;
  };
  nonneg(atol_key, tol.atol);
  nonneg(rtol_key, tol.rtol);
  if (obj.contains(ratio_key)) {
    double v = c.number(obj[ratio_key], field + "." + ratio_key);
    if (!(v > 0 && v <= 1)) c.fail(field + "." + ratio_key, "a number in (0, 1]", describe_json(obj[ratio_key]));
    tol.matched_ratio = v;
  }
  if (obj.contains("max_error_cap")) {
    const json& cap = obj["max_error_cap"];
    if (cap.is_null()) {
      tol.max_error_cap.reset();
    } else {
      double v = c.number(cap, field + ".max_error_cap");
      if (!(v > 0) || !std::isfinite(v))
        c.fail(field + ".max_error_cap", "a finite number > 0 (or null)", describe_json(cap));
      tol.max_error_cap = v;
    }
  }
  if (obj.contains("allow_negative_inf") && !obj["allow_negative_inf"].is_null()) {
    if (!obj["allow_negative_inf"].is_boolean())
      c.fail(field + ".allow_negative_inf", "true or false", describe_json(obj["allow_negative_inf"]));
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
    c.fail(field,
           "one spelling: SOL-ExecBench's (max_atol, max_rtol, required_matched_ratio) or khive's (atol, rtol, "
           "matched_ratio)",
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
    if (!std::isfinite(dst)) c.fail(field + "." + key, "a finite number", describe_json(obj[key]));
  };
  auto integral = [&](const char* key, double v) {
    if (std::floor(v) != v) c.fail(field + "." + key, "an integer", describe_json(obj[key]));
  };
  switch (d.kind) {
    case Distribution::Kind::normal:
      c.known_keys(obj, field, {"dist", "mean", "std"});
      num("mean", d.mean);
      num("std", d.stddev);
      if (d.stddev < 0) c.fail(field + ".std", "a number >= 0", describe_json(obj["std"]));
      break;
    case Distribution::Kind::uniform:
      c.known_keys(obj, field, {"dist", "low", "high"});
      num("low", d.low);
      num("high", d.high);
      if (d.low > d.high) c.fail(field + ".high", "a number >= low (" + real_text(d.low) + ")", real_text(d.high));
      break;
    case Distribution::Kind::integers:
      c.known_keys(obj, field, {"dist", "low", "high"});
      num("low", d.low);
      num("high", d.high);
      if (obj.contains("low")) integral("low", d.low);
      if (obj.contains("high")) integral("high", d.high);
      if (d.low > d.high) c.fail(field + ".high", "an integer >= low (" + real_text(d.low) + ")", real_text(d.high));
      if (is_bool && (d.low < 0 || d.high > 1))
        c.fail(field + (d.low < 0 ? ".low" : ".high"), "a bound within 0..1 for a bool input",
               real_text(d.low < 0 ? d.low : d.high));
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
      if (is_bool && d.value != 0 && d.value != 1)
        c.fail(field + ".value", "0 or 1 for a bool input", describe_json(obj["value"]));
      break;
  }
  return d;
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

}  // namespace khive::task_parse
