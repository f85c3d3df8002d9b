// Loading the template library: manifests (kernels/<family>/*.json) and bindings (kernels/bindings/*.json).
// Everything is checked when it loads, so that the search never meets a malformed space: parameter names and
// values, defaults, every expression (it must parse and name only known variables), strategies.
#include "khive/tuner/library.hpp"

#include <algorithm>
#include <cctype>
#include <deque>
#include <limits>
#include <mutex>

#include <fmt/format.h>

#include "khive/support/files.hpp"
#include "khive/support/json_fields.hpp"
#include "khive/support/text.hpp"
#include "khive/task/expr.hpp"
#include "khive/tuner/chain.hpp"

namespace khive::tuner {
namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace {

std::string rel(const fs::path& p) {
  // Errors name files as kernels/<family>/<file>: the library directory's own name and below.
  return (p.parent_path().parent_path().filename() / p.parent_path().filename() / p.filename()).string();
}

// How the library's errors show a value after "got": as describe_json, but a number as its JSON text ("1.0").
std::string show(const json& j) { return j.is_number() ? j.dump() : describe_json(j); }

// The shared reader for one library file; its errors are TaskFormatErrors naming the file as kernels/<family>/<file>.
OrderedJsonFields fields(const fs::path& file) {
  return OrderedJsonFields(rel(file), "", throw_task_format_error, show);
}

[[noreturn]] void fail(const fs::path& file, const std::string& field, const std::string& expected,
                       const std::string& got = "") {
  fields(file).fail(field, expected, got);
}

bool is_param_name(const std::string& s) {
  if (!is_identifier(s)) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_';
  });
}

bool is_integer_text(const std::string& s) {
  if (s.empty()) return false;
  std::size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  return std::all_of(s.begin() + i, s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

json parse_file(const fs::path& p) {
  std::string text;
  try {
    text = read_file(p);
  } catch (const std::exception&) {
    fail(p, "(file)", "a readable file", "missing");
  }
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    fail(p, "(syntax)", "valid JSON", std::string("parse error: ") + e.what());
  }
}

// Our own files are strict: a key outside allowed is an error (a typo is never silently ignored).
void check_keys(const fs::path& file, const std::string& field, const json& obj,
                std::initializer_list<const char*> allowed) {
  const std::vector<std::string> keys(allowed.begin(), allowed.end());
  if (const auto k = OrderedJsonFields::unknown_key(obj, keys))
    fail(file, field.empty() ? *k : field + "." + *k, "one of the keys " + join(keys), "an unknown key");
}

// obj[key] as a string (field + key names it); "" when it is absent or null and not required.
std::string get_string(const fs::path& file, const json& obj, const std::string& key, const std::string& field,
                       bool required) {
  const json* v = OrderedJsonFields::find(obj, key);
  if (!v) {
    if (required) fail(file, field + key, "a string", "nothing");
    return "";
  }
  return fields(file).string(*v, field + key, false);
}

std::string value_text(const fs::path& file, const std::string& field, const json& v) {
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  if (v.is_string() && is_identifier(v.get<std::string>())) return v.get<std::string>();
  fail(file, field, "an integer or an identifier", show(v));
}

Param parse_param(const fs::path& file, const std::string& name, const json& j) {
  const std::string f = "params." + name;
  if (!is_param_name(name)) fail(file, f, "an upper-case identifier ([A-Z_][A-Z0-9_]*)", "\"" + name + "\"");
  if (!j.is_object()) fail(file, f, "an object", show(j));
  check_keys(file, f, j, {"values", "range", "pow2", "default", "description"});
  Param p;
  p.name = name;
  p.description = get_string(file, j, "description", f + ".", false);
  const int forms = j.contains("values") + j.contains("range") + j.contains("pow2");
  if (forms != 1) fail(file, f, "exactly one of values, range, pow2", std::to_string(forms) + " of them");
  if (j.contains("values")) {
    const json& vs = j["values"];
    if (!vs.is_array() || vs.empty()) fail(file, f + ".values", "a non-empty array", show(vs));
    for (std::size_t i = 0; i < vs.size(); ++i)
      p.values.push_back(value_text(file, f + ".values[" + std::to_string(i) + "]", vs[i]));
  } else {
    const bool pow2 = j.contains("pow2");
    const json& r = pow2 ? j["pow2"] : j["range"];
    const std::string rf = f + (pow2 ? ".pow2" : ".range");
    if (!r.is_array() || r.size() < 2 || r.size() > (pow2 ? 2u : 3u))
      fail(file, rf, pow2 ? "[from, to]" : "[from, to] or [from, to, step]", show(r));
    for (const auto& x : r)
      if (!x.is_number_integer()) fail(file, rf, "integers", show(x));
    const int64_t from = r[0].get<int64_t>(), to = r[1].get<int64_t>();
    const int64_t step = (!pow2 && r.size() == 3) ? r[2].get<int64_t>() : 1;
    if (to < from) fail(file, rf, "from <= to", r.dump());
    if (step <= 0) fail(file, rf, "a positive step", std::to_string(step));
    if (pow2 && (from <= 0 || (from & (from - 1)) || (to & (to - 1)))) fail(file, rf, "powers of two", r.dump());
    for (int64_t v = from; v <= to && p.values.size() <= 4096; v = pow2 ? v * 2 : v + step)
      p.values.push_back(std::to_string(v));
    if (p.values.size() > 4096) fail(file, rf, "at most 4096 values", "more");
  }
  std::set<std::string> seen;
  for (const auto& v : p.values) {
    if (!seen.insert(v).second) fail(file, f, "distinct values", "\"" + v + "\" twice");
  }
  p.numeric = std::all_of(p.values.begin(), p.values.end(), is_integer_text);
  if (!p.numeric && std::any_of(p.values.begin(), p.values.end(), is_integer_text))
    fail(file, f + ".values", "all integers or all identifiers", "a mix");
  if (j.contains("default")) {
    p.default_value = value_text(file, f + ".default", j["default"]);
    if (!seen.count(p.default_value))
      fail(file, f + ".default", "one of the parameter's values", "\"" + p.default_value + "\"");
  } else {
    p.default_value = p.values.front();
  }
  return p;
}

// Names a rule or derived expression may use: parameters (numeric ones by name, identifier-valued ones as
// NAME_value flags), derived values defined before, the family's task variables.
void check_expression(const fs::path& file, const std::string& field, const std::string& expr,
                      const std::set<std::string>& known) {
  std::vector<std::string> ids;
  try {
    ids = expr_identifiers(expr);
  } catch (const ExprError& e) {
    fail(file, field, "a valid expression", "\"" + expr + "\" (" + e.what() + ")");
  }
  for (const auto& id : ids)
    if (!known.count(id))
      fail(file, field, "names of parameters, derived values or task variables", "\"" + id + "\" in \"" + expr + "\"");
}

}  // namespace

namespace {
const std::vector<std::string>& family_list() {  // in the order error messages name them
  static const std::vector<std::string> f{"elementwise", "gated", "rowop", "gemm", "attention", "rope", "router",
                                          "reduce",      "scan",  "conv",  "pool", "norm",      "chain"};
  return f;
}
}  // namespace

const std::set<std::string>& known_families() {
  static const std::set<std::string> f(family_list().begin(), family_list().end());
  return f;
}

std::string known_families_text() {
  const auto& f = family_list();
  std::string s;
  for (std::size_t i = 0; i < f.size(); ++i) s += (i == 0 ? "" : i + 1 == f.size() ? " or " : ", ") + f[i];
  return s;
}

const std::vector<std::string>& family_variables(const std::string& family) {
  // ELEM_BYTES: bytes per stored element. Every row/count/shape variable is taken per workload.
  static const std::map<std::string, std::vector<std::string>> vars{
      {"elementwise", {"COUNT", "NIN", "ELEM_BYTES"}},
      {"rowop", {"ROWS", "COLS", "ELEM_BYTES"}},
      {"gated", {"ROWS", "COLS", "ELEM_BYTES"}},  // COLS: the output's row length (half the input's)
      // BATCH: the batch entries (the product of its axes); BATCH_AXES: the axes the kernels index them by (1: one
      // batch stride per tensor; more: an operand broadcast along an inner batch axis, per-axis strides)
      {"gemm",
       {"M", "N", "K", "BATCH", "BATCH_AXES", "ELEM_BYTES", "A_ROW", "B_ROW", "HAS_RESIDUAL", "HAS_ACTIVATION"}},
      {"router", {"TOKENS", "HIDDEN", "EXPERTS", "TOPK", "ELEM_BYTES"}},  // TOPK: experts chosen per token
      {"rope", {"TOKENS", "HQ", "HKV", "D", "ELEM_BYTES"}},  // D: the head dim (D / 2 rotation pairs per head)
      {"reduce", {"OUTER", "R", "INNER", "ELEM_BYTES"}},     // x as [OUTER, R, INNER], R the reduced axis
      {"scan", {"OUTER", "R", "INNER", "ELEM_BYTES"}},       // x as [OUTER, R, INNER], R the scanned axis
      // channels, groups, spatial sizes as products of their axes (KSIZE: the kernel's taps)
      {"conv", {"N", "C_IN", "C_OUT", "GROUPS", "OUT_SPATIAL", "IN_SPATIAL", "KSIZE", "ELEM_BYTES"}},
      {"pool", {"PLANES", "IN_SPATIAL", "OUT_SPATIAL", "WINDOW", "ELEM_BYTES"}},  // x as PLANES pooled planes
      // x as [OUTER, MID, INNER]; STRIDED 1: a group per (outer, inner) over MID, else a group per MID index
      {"norm", {"OUTER", "MID", "INNER", "GROUPS", "GROUP_SIZE", "STRIDED", "ELEM_BYTES"}},
      // SQ = 1 for decode; CAUSAL 0/1; GROUP = HQ / HKV (query heads per KV head)
      {"attention", {"BATCH", "SQ", "SKV", "HQ", "HKV", "D", "ELEM_BYTES", "CAUSAL", "GROUP"}},
  };
  static const std::vector<std::string> none;
  auto it = vars.find(family);
  return it == vars.end() ? none : it->second;
}

const Param* Template::find_param(std::string_view n) const {
  for (const auto& p : params)
    if (p.name == n) return &p;
  return nullptr;
}

Point Template::default_point() const {
  Point pt;
  for (const auto& p : params) pt[p.name] = p.default_value;
  return pt;
}

std::size_t Template::space_size() const {
  std::size_t n = 1;
  for (const auto& p : params) {
    if (n > std::numeric_limits<std::size_t>::max() / p.values.size()) return std::numeric_limits<std::size_t>::max();
    n *= p.values.size();
  }
  return n;
}

// A line "// khive:include NAME" in a template source is replaced by the file NAME next to it (itself expanded,
// to a depth of 4), so templates share code (the GEMM templates' K = 0 and generic paths) instead of copying it;
// "// khive:include common/NAME" takes NAME from the library's common/ folder (code every family uses: the
// device queries). Placeholders in the included text are rendered like the template's own.
static std::string expand_includes(const fs::path& file, const std::string& text, int depth) {
  static const std::string kDirective = "// khive:include ";
  std::string out;
  std::size_t line_no = 0;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t end = text.find('\n', i);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(i, end - i);
    ++line_no;
    const std::size_t at = line.find_first_not_of(" \t");
    if (at != std::string::npos && line.compare(at, kDirective.size(), kDirective) == 0) {
      std::string name = line.substr(at + kDirective.size());
      while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
      const std::string field = "line " + std::to_string(line_no) + ": khive:include";
      // A file of the template's own folder, or common/<file> of the library (whose root is that folder's
      // parent, or the folder itself for a file already in common/).
      static const std::string kCommon = "common/";
      const bool common = name.compare(0, kCommon.size(), kCommon) == 0;
      const std::string base = common ? name.substr(kCommon.size()) : name;
      if (base.empty() || base.find('/') != std::string::npos || base.find("..") != std::string::npos)
        fail(file, field, "a file name in the template's directory or common/<file name>", "\"" + name + "\"");
      if (depth >= 4) fail(file, field, "includes nested at most 4 deep", "\"" + name + "\" at depth 5");
      const fs::path dir = file.parent_path();
      const fs::path inc =
          common ? (dir.filename() == "common" ? dir : dir.parent_path() / "common") / base : dir / base;
      std::string body;
      try {
        body = read_file(inc);
      } catch (const std::exception&) {
        fail(file, field,
             common ? "an existing file in the library's common/ folder" : "an existing file next to the template",
             "\"" + name + "\" (missing)");
      }
      out += expand_includes(inc, body, depth + 1);
      if (!out.empty() && out.back() != '\n') out += '\n';
    } else {
      out += line;
      if (end < text.size()) out += '\n';
    }
    i = end + 1;
  }
  return out;
}

namespace {

// "dtypes" and "ops": which tasks the template serves.
void read_dtypes_and_ops(const fs::path& manifest, const json& j, Template& t) {
  if (!j.contains("dtypes") || !j["dtypes"].is_array() || j["dtypes"].empty())
    fail(manifest, "dtypes", "a non-empty array of dtype names", j.contains("dtypes") ? show(j["dtypes"]) : "nothing");
  for (std::size_t i = 0; i < j["dtypes"].size(); ++i) {
    const json& d = j["dtypes"][i];
    if (!d.is_string() || !parse_dtype(d.get<std::string>()))
      fail(manifest, "dtypes[" + std::to_string(i) + "]", "a dtype name (float32, bfloat16, ...)", show(d));
    t.dtypes.insert(d.get<std::string>());
  }
  if (j.contains("ops")) {
    if (!j["ops"].is_array()) fail(manifest, "ops", "an array of op names", show(j["ops"]));
    for (std::size_t i = 0; i < j["ops"].size(); ++i) {
      if (!j["ops"][i].is_string()) fail(manifest, "ops[" + std::to_string(i) + "]", "a string", show(j["ops"][i]));
      t.ops.insert(j["ops"][i].get<std::string>());
    }
  }
}

// "params"; adds the names a rule may use (numeric parameters, NAME_value flags of the others) to known.
void read_params(const fs::path& manifest, const json& j, Template& t, std::set<std::string>& known) {
  if (!j.contains("params") || !j["params"].is_object() || j["params"].empty())
    fail(manifest, "params", "a non-empty object of parameters", j.contains("params") ? show(j["params"]) : "nothing");
  for (const auto& v : family_variables(t.family)) known.insert(v);
  for (auto it = j["params"].begin(); it != j["params"].end(); ++it) {
    if (known.count(it.key()))
      fail(manifest, "params." + it.key(), "a name that is not a task variable of the family", "\"" + it.key() + "\"");
    Param p = parse_param(manifest, it.key(), it.value());
    if (p.numeric) {
      known.insert(p.name);
    } else {
      for (const auto& v : p.values) known.insert(p.name + "_" + v);
    }
    t.params.push_back(std::move(p));
  }
  if (t.params.size() > 24) fail(manifest, "params", "at most 24 parameters", std::to_string(t.params.size()));
}

// "derived", "rules" and "fast_path": expressions over known (derived names join it in order).
void read_derived_and_rules(const fs::path& manifest, const json& j, Template& t, std::set<std::string>& known) {
  if (j.contains("derived")) {
    if (!j["derived"].is_object()) fail(manifest, "derived", "an object of name: expression", show(j["derived"]));
    for (auto it = j["derived"].begin(); it != j["derived"].end(); ++it) {
      const std::string f = "derived." + it.key();
      if (!is_param_name(it.key())) fail(manifest, f, "an upper-case identifier", "\"" + it.key() + "\"");
      if (known.count(it.key()))
        fail(manifest, f, "a new name", "\"" + it.key() + "\" (already a parameter or variable)");
      if (!it.value().is_string()) fail(manifest, f, "an expression (string)", show(it.value()));
      check_expression(manifest, f, it.value().get<std::string>(), known);
      known.insert(it.key());
      t.derived.emplace_back(it.key(), it.value().get<std::string>());
    }
  }
  for (const char* key : {"rules", "fast_path"}) {
    if (!j.contains(key)) continue;
    if (!j[key].is_array()) fail(manifest, key, "an array of {require, message}", show(j[key]));
    for (std::size_t i = 0; i < j[key].size(); ++i) {
      const json& r = j[key][i];
      const std::string f = std::string(key) + "[" + std::to_string(i) + "]";
      if (!r.is_object()) fail(manifest, f, "an object {require, message}", show(r));
      check_keys(manifest, f, r, {"require", "message"});
      Rule rule{get_string(manifest, r, "require", f + ".", true), get_string(manifest, r, "message", f + ".", true)};
      check_expression(manifest, f + ".require", rule.require, known);
      (std::string(key) == "rules" ? t.rules : t.fast_path).push_back(std::move(rule));
    }
  }
}

// "strategies": "<family>.<direction>" -> {description, params (this template's)}.
void read_strategies(const fs::path& manifest, const json& j, Template& t) {
  if (!j.contains("strategies") || !j["strategies"].is_object() || j["strategies"].empty())
    fail(manifest, "strategies", "a non-empty object of strategies",
         j.contains("strategies") ? show(j["strategies"]) : "nothing");
  for (auto it = j["strategies"].begin(); it != j["strategies"].end(); ++it) {
    const std::string f = "strategies." + it.key();
    if (it.key().rfind(t.family + ".", 0) != 0 || it.key().size() == t.family.size() + 1)
      fail(manifest, f, "a name \"" + t.family + ".<direction>\"", "\"" + it.key() + "\"");
    if (!it.value().is_object()) fail(manifest, f, "an object {description, params}", show(it.value()));
    check_keys(manifest, f, it.value(), {"description", "params"});
    StrategySpec s{it.key(), get_string(manifest, it.value(), "description", f + ".", true), {}};
    const json& ps = it.value().contains("params") ? it.value()["params"] : json();
    if (!ps.is_array() || ps.empty()) fail(manifest, f + ".params", "a non-empty array of parameter names", show(ps));
    for (std::size_t i = 0; i < ps.size(); ++i) {
      if (!ps[i].is_string() || !t.find_param(ps[i].get<std::string>()))
        fail(manifest, f + ".params[" + std::to_string(i) + "]", "a parameter of this template", show(ps[i]));
      s.params.push_back(ps[i].get<std::string>());
    }
    t.strategies.push_back(std::move(s));
  }
}

}  // namespace

Template load_template(const fs::path& manifest) {
  const json j = parse_file(manifest);
  if (!j.is_object()) fail(manifest, "(root)", "an object", show(j));
  check_keys(manifest, "", j,
             {"name", "family", "backend", "description", "source", "dtypes", "ops", "params", "derived", "rules",
              "fast_path", "strategies"});
  Template t;
  t.manifest = manifest;
  t.name = get_string(manifest, j, "name", "", true);
  t.family = get_string(manifest, j, "family", "", true);
  if (!known_families().count(t.family)) fail(manifest, "family", known_families_text(), "\"" + t.family + "\"");
  const std::string be = get_string(manifest, j, "backend", "", true);
  auto b = parse_backend(be);
  if (!b) fail(manifest, "backend", "cpu or cuda", "\"" + be + "\"");
  t.backend = *b;
  t.description = get_string(manifest, j, "description", "", false);
  const std::string src = get_string(manifest, j, "source", "", true);
  t.source_path = manifest.parent_path() / src;
  if (src.find("..") != std::string::npos || fs::path(src).is_absolute())
    fail(manifest, "source", "a file name next to the manifest", "\"" + src + "\"");
  try {
    t.source = read_file(t.source_path);
  } catch (const std::exception&) {
    fail(manifest, "source", "an existing template source", "\"" + src + "\" (missing)");
  }
  t.source = expand_includes(t.source_path, t.source, 0);

  read_dtypes_and_ops(manifest, j, t);
  std::set<std::string> known;
  read_params(manifest, j, t, known);
  read_derived_and_rules(manifest, j, t, known);
  read_strategies(manifest, j, t);
  return t;
}

std::map<std::string, Binding> load_bindings(const fs::path& file) {
  const json j = parse_file(file);
  if (!j.is_object()) fail(file, "(root)", "an object", show(j));
  check_keys(file, "", j, {"suite", "description", "tasks"});
  const std::string suite = get_string(file, j, "suite", "", true);
  if (!j.contains("tasks") || !j["tasks"].is_object())
    fail(file, "tasks", "an object: task directory name -> binding",
         j.contains("tasks") ? show(j["tasks"]) : "nothing");
  std::map<std::string, Binding> out;
  for (auto it = j["tasks"].begin(); it != j["tasks"].end(); ++it) {
    const std::string f = "tasks." + it.key();
    if (!it.value().is_object()) fail(file, f, "an object with a family", show(it.value()));
    Binding b;
    b.key = suite + "/" + it.key();
    b.family = get_string(file, it.value(), "family", f + ".", true);
    if (!known_families().count(b.family)) fail(file, f + ".family", known_families_text(), "\"" + b.family + "\"");
    b.spec = it.value();
    b.file = file;
    out.emplace(b.key, std::move(b));
  }
  return out;
}

Library load_library(const fs::path& dir) {
  if (!fs::is_directory(dir))
    throw std::runtime_error("template library " + dir.string() + ": expected a directory (kernels/), got none");
  Library lib;
  lib.dir = dir;
  std::vector<fs::path> manifests, binding_files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_directory() || e.path().filename().string().starts_with(".")) continue;
    const bool bindings = e.path().filename() == "bindings";
    for (const auto& f : fs::directory_iterator(e.path()))
      if (f.is_regular_file() && f.path().extension() == ".json")
        (bindings ? binding_files : manifests).push_back(f.path());
  }
  std::sort(manifests.begin(), manifests.end());
  std::sort(binding_files.begin(), binding_files.end());
  for (const auto& m : manifests) {
    Template t = load_template(m);
    if (lib.find_template(t.name))
      fail(m, "name", "a template name unique in the library", "\"" + t.name + "\" (twice)");
    if (m.parent_path().filename() != t.family)
      fail(m, "family", "the folder's family \"" + m.parent_path().filename().string() + "\"", "\"" + t.family + "\"");
    lib.templates.push_back(std::move(t));
  }
  std::sort(lib.templates.begin(), lib.templates.end(),
            [](const Template& a, const Template& b) { return a.name < b.name; });
  // The chains' glue (chain.hpp): no manifest, the stages' templates give the parameters.
  for (const auto& [be, file] : {std::pair{Backend::cpu, "cpu.cpp.in"}, std::pair{Backend::cuda, "cuda.cu.in"}}) {
    const fs::path p = dir / "chain" / file;
    if (fs::is_regular_file(p)) lib.chain_glue[be] = {p, expand_includes(p, read_file(p), 0)};
  }
  for (const auto& f : binding_files)
    for (auto& [k, b] : load_bindings(f)) {
      if (lib.bindings.count(k))
        fail(f, "tasks", "each task bound once", "\"" + k + "\" also in " + rel(lib.bindings.at(k).file));
      lib.bindings.emplace(k, std::move(b));
    }
  return lib;
}

std::string task_key(const Task& t) {
  fs::path d = t.dir;
  if (d.filename().empty()) d = d.parent_path();
  return d.parent_path().filename().string() + "/" + d.filename().string();
}

const Binding* Library::binding_for(const Task& t) const {
  auto it = bindings.find(task_key(t));
  return it == bindings.end() ? nullptr : &it->second;
}

const Template* Library::find_template(std::string_view n) const {
  auto named = [&](std::string_view m) -> const Template* {
    for (const auto& t : templates)
      if (t.name == m) return &t;
    return nullptr;
  };
  if (const Template* t = named(n)) return t;
  const std::string_view prefix = kChainPrefix;
  if (n.substr(0, prefix.size()) != prefix) return nullptr;
  std::vector<const Template*> stages;
  std::vector<std::string> parts;
  for (std::size_t i = prefix.size(); i <= n.size();) {
    std::size_t e = n.find('+', i);
    if (e == std::string_view::npos) e = n.size();
    parts.emplace_back(n.substr(i, e - i));
    i = e + 1;
  }
  for (const auto& part : parts) {
    const Template* t = named(part);
    if (!t) return nullptr;
    stages.push_back(t);
  }
  try {
    return &chain_template(stages);
  } catch (const std::exception&) {
    return nullptr;
  }
}

const Template& Library::chain_template(const std::vector<const Template*>& stages) const {
  const std::string name = chain_template_name(stages);
  std::lock_guard<std::mutex> l(chains->mu);
  for (const auto& t : chains->made)
    if (t.name == name) return t;
  if (stages.empty()) throw std::runtime_error("a chain template needs at least one stage");
  auto g = chain_glue.find(stages.front()->backend);
  if (g == chain_glue.end())
    throw std::runtime_error(fmt::format("{}: no chain glue for the {} backend ({}/chain/{})", name,
                                         backend_name(stages.front()->backend), dir.string(),
                                         stages.front()->backend == Backend::cuda ? "cuda.cu.in" : "cpu.cpp.in"));
  chains->made.push_back(make_chain_template(stages, g->second.second, g->second.first));
  return chains->made.back();
}

}  // namespace khive::tuner
