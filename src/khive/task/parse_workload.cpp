// workload.jsonl: one workload a line (FlashInfer-Bench / SOL-ExecBench, or a FlashInfer Trace record), with an
// optional "khive" block; every workload is checked against the definition (axes, inputs, sizes, cost formulas).
#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "khive/task/expr.hpp"
#include "khive/task/parse_common.hpp"

namespace khive::task_parse {
namespace fs = std::filesystem;

namespace {

// A workload's own input distributions (khive.inputs, the definition's schema): ops whose behaviour depends on
// the range of their inputs (softmax's overflow, GELU's tails) are checked on several regimes, one per workload.
void parse_workload_distributions(const Ctx& c, const Task& t, const json& ins_json, Workload& w) {
  const json& ins = c.object(ins_json, "khive.inputs");
  for (const auto& [in, spec] : ins.items()) {
    const std::string field = "khive.inputs." + in;
    const TensorSpec* s = t.find_input(in);
    if (!s) c.fail(field, input_name_expected(t), quote(in));
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

// A workload's var axes ("axes"): only var axes of the definition, each an integer >= 0.
void parse_workload_axes(const Ctx& c, const json& j, const Task& t, Workload& w) {
  const json& axes = c.object(j, "axes");
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
    if (value < 0) c.fail(field, "an integer >= 0", describe_json(v));
    w.axes[name] = value;
  }
}

// Where one input's data comes from: random, a scalar value, a safetensors file or the custom entry point.
InputSource input_source(const Ctx& c, const json& spec, const std::string& field, const TensorSpec& in,
                         const Task& t) {
  const TensorSpec* s = &in;
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
      c.fail(field + ".value", "an integer for an input of dtype " + std::string(dtype_name(s->dtype)),
             describe_json(v));
    if (s->dtype == DType::boolean && src.value != 0.0 && src.value != 1.0)
      c.fail(field + ".value", "true, false, 0 or 1 for a bool input", describe_json(v));
  } else if (type == "safetensors") {
    src = safetensors_source(c, spec, field, t);
  } else if (type == "custom") {
    src.kind = InputSource::Kind::custom;
    if (t.custom_inputs_entrypoint.empty())
      c.fail(field + ".type",
             "random, scalar or safetensors (\"custom\" needs the definition's custom_inputs_entrypoint)", quote(type));
  } else {
    c.fail(field + ".type", "one of random, scalar, safetensors, custom", quote(type));
  }
  return src;
}

// A workload's "inputs": {name: {type, ...}} for inputs of the definition.
void parse_workload_inputs(const Ctx& c, const json& j, const Task& t, Workload& w) {
  const json& ins = c.object(j, "inputs");
  for (const auto& [name, spec] : ins.items()) {
    std::string field = "inputs." + name;
    const TensorSpec* s = t.find_input(name);
    if (!s) c.fail(field, input_name_expected(t), quote(name));
    w.inputs[name] = input_source(c, spec, field, *s, t);
  }
}

// A workload's "khive" block (role, weight, backends, inputs, per-output tolerance); returns the per-output
// tolerance object, or nullptr.
const json* parse_workload_khive(const Ctx& c, const json& j, const Task& t, Workload& w) {
  const json* per = nullptr;
  const json& k = c.object(j, "khive");
  c.known_keys(k, "khive", {"role", "weight", "tolerance", "backends", "inputs"});
  if (k.contains("role")) {
    std::string role = c.string(k["role"], "khive.role");
    if (role == "correctness")
      w.role = WorkloadRole::correctness;
    else if (role == "perf")
      w.role = WorkloadRole::perf;
    else if (role == "both")
      w.role = WorkloadRole::both;
    else
      c.fail("khive.role", "one of correctness, perf, both", quote(role));
  }
  if (k.contains("weight")) {
    double weight = c.number(k["weight"], "khive.weight");
    if (!(weight > 0) || !std::isfinite(weight))
      c.fail("khive.weight", "a finite number > 0", describe_json(k["weight"]));
    w.weight = weight;
  }
  if (k.contains("backends") && !k["backends"].is_null()) {
    const json& b = k["backends"];
    if (!b.is_array()) c.fail("khive.backends", "an array of backend names (cpu, cuda)", describe_json(b));
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
      if (!t.find_output(out)) c.fail("khive.tolerance." + out, output_name_expected(t), quote(out));
  }
  return per;
}

Workload parse_workload(const Ctx& c, const json& line_json, int line, const Task& t) {
  const json* jp = &line_json;
  if (!jp->is_object()) c.fail("(root)", "a JSON object (one workload)", describe_json(*jp));
  // A FlashInfer Trace record {"definition", "workload": {...}, "solution", "evaluation"} holds the
  // workload one level down.
  if (jp->contains("workload") && !jp->contains("axes") && (*jp)["workload"].is_object()) {
    if (jp->contains("definition") && (*jp)["definition"].is_string() &&
        (*jp)["definition"].get<std::string>() != t.name)
      c.fail("definition", quote(t.name) + " (the definition's name)", describe_json((*jp)["definition"]));
    jp = &(*jp)["workload"];
  }
  const json& j = *jp;

  Workload w;
  w.line = line;
  w.uuid = "w" + std::to_string(line);
  if (j.contains("uuid") && !j["uuid"].is_null()) w.uuid = c.string(j["uuid"], "uuid");

  if (j.contains("axes") && !j["axes"].is_null()) parse_workload_axes(c, j["axes"], t, w);
  if (j.contains("inputs") && !j["inputs"].is_null()) parse_workload_inputs(c, j["inputs"], t, w);

  // Tolerance: the top-level one (SOL-ExecBench "correctness" spelling, or "tolerance") applies to every
  // output, a khive per-output one on top; each is merged field by field over the task's tolerance.
  const json* sol = (j.contains("correctness") && !j["correctness"].is_null()) ? &j["correctness"] : nullptr;
  const json* top = (j.contains("tolerance") && !j["tolerance"].is_null()) ? &j["tolerance"] : nullptr;
  const json* per = j.contains("khive") && !j["khive"].is_null() ? parse_workload_khive(c, j["khive"], t, w) : nullptr;

  if (!sol && !top && !per) return w;
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
                            quote(f) + " = " + real_text(v) + where);
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
      c.fail(field,
             "tensors that fit on one device (at most " + bytes_text(kMaxWorkloadBytes) +
                 " for a workload's inputs and outputs)",
             dims_text(s, axes) + " = " + bytes_text(bytes) +
                 (bytes == total ? "" : ", " + bytes_text(total) + " with the tensors before it"));
  };
  for (const auto& s : t.inputs) check(s, "inputs");
  for (const auto& s : t.outputs) check(s, "outputs");
  check_workload_cost(t, w, axes);
}

}  // namespace

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
    const Ctx c = task_fields(file, "line " + std::to_string(line) + ": ");
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
  bool any_check =
      std::any_of(t.workloads.begin(), t.workloads.end(), [](const Workload& w) { return w.checks_correctness(); });
  if (!any_check)
    throw TaskFormatError(file, "khive.role", "at least one workload with role correctness or both",
                          "only perf workloads");
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
                            "at least one perf workload (role perf or both) that runs on " + be + " (the task has a " +
                                be + " reference)",
                            "none");
  }
}

}  // namespace khive::task_parse
