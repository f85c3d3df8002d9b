// PyTorch baselines file: reading, validation, lookup (pytorch_baselines.hpp, docs/bench.md).
#include "khive/eval/pytorch_baselines.hpp"

#include <cctype>
#include <cmath>

#include <nlohmann/json.hpp>

#include "khive/support/files.hpp"
#include "khive/support/json_fields.hpp"
#include "khive/support/text.hpp"

namespace khive {
namespace {

using json = nlohmann::json;
using Fields = JsonFields;  // the shared reader; errors are TaskFormatErrors naming the baselines file

// How this file's errors show a value after "got": its JSON text, cut at 80 characters.
std::string show(const json& j) {
  std::string s = j.dump();
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

double positive_number(const Fields& r, const json& j, const std::string& field) {
  if (!j.is_number() || !std::isfinite(j.get<double>()) || j.get<double>() <= 0)
    r.fail(field, "a positive number", r.got(j));
  return j.get<double>();
}

std::optional<double> optional_number(const Fields& r, const json& o, const char* key, const std::string& field,
                                      bool allow_zero) {
  const json* v = Fields::find(o, key);
  if (!v) return std::nullopt;
  if (!v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() < 0 ||
      (!allow_zero && v->get<double>() == 0))
    r.fail(field + "." + key, allow_zero ? "a number >= 0" : "a positive number", r.got(*v));
  return v->get<double>();
}

std::string string_field(const Fields& r, const json& root, const char* key, bool required) {
  const json* v = Fields::find(root, key);
  if (!v) {
    if (required) r.fail(key, "a string", "nothing");
    return "";
  }
  return r.string(*v, key, false);
}

PytorchWorkload read_workload(const Fields& r, const json& j, const std::string& field) {
  if (!j.is_object()) r.fail(field, "an object {median_s, spread, samples}", r.got(j));
  PytorchWorkload w;
  if (!j.contains("median_s")) r.fail(field + ".median_s", "a positive number", "nothing");
  w.summary.median = positive_number(r, j["median_s"], field + ".median_s");
  auto s = j.find("samples");
  if (s == j.end() || !s->is_number_integer() || s->get<int64_t>() < 1)
    r.fail(field + ".samples", "an integer >= 1", s == j.end() ? "nothing" : r.got(*s));
  w.summary.n = static_cast<std::size_t>(s->get<int64_t>());
  w.summary.rel_spread = optional_number(r, j, "spread", field, true).value_or(0.0);
  w.summary.min = optional_number(r, j, "min_s", field, false).value_or(w.summary.median);
  w.summary.p10 = optional_number(r, j, "p10_s", field, false).value_or(w.summary.median);
  w.summary.p90 = optional_number(r, j, "p90_s", field, false).value_or(w.summary.median);
  w.summary.mean = w.summary.median;
  w.summary.max = w.summary.p90;
  if (const json* a = Fields::find(j, "axes")) {
    if (!a->is_object()) r.fail(field + ".axes", "an object of var axis -> integer", r.got(*a));
    for (const auto& [name, v] : a->items()) {
      if (!v.is_number_integer()) r.fail(field + ".axes." + name, "an integer", r.got(v));
      w.axes[name] = v.get<int64_t>();
    }
  }
  return w;
}

}  // namespace

std::string device_slug(const std::string& device_name, Backend b) {
  const std::string low = lower(device_name);
  std::string s;
  if (low.find("h200") != std::string::npos) {
    s = "h200";
  } else if (low.find("h100") != std::string::npos) {
    s = "h100";
  } else {
    bool gap = false;
    for (char c : low) {
      if (std::isalnum(static_cast<unsigned char>(c))) {
        if (gap && !s.empty()) s += '_';
        s += c;
        gap = false;
      } else {
        gap = true;
      }
    }
    if (s.empty()) s = "unknown";
  }
  return b == Backend::cpu ? "cpu-" + s : s;
}

std::filesystem::path pytorch_baselines_path(const Task& task, Backend b, const std::string& device_name) {
  auto dir = std::filesystem::absolute(task.dir).lexically_normal();
  if (dir.filename().empty()) dir = dir.parent_path();  // "tasks/demo/gemm/" names the task, not "gemm/"
  return dir.parent_path() / "baselines" / ("pytorch-" + device_slug(device_name, b) + ".json");
}

PytorchBaselines load_pytorch_baselines(const std::filesystem::path& path) {
  const std::string file = path.filename().string();
  json root;
  try {
    root = json::parse(read_file(path));
  } catch (const json::parse_error& e) {
    throw TaskFormatError(file, "(syntax)", "valid JSON", e.what());
  } catch (const std::runtime_error& e) {
    throw TaskFormatError(file, "(file)", "a readable file", e.what());
  }
  const Fields r(file, "", throw_task_format_error, show);
  if (!root.is_object()) r.fail("(root)", "a JSON object", r.got(root));
  PytorchBaselines p;
  p.file = path;
  std::string schema = string_field(r, root, "schema", true);
  if (schema != kPytorchBaselinesSchema)
    r.fail("schema", std::string("\"") + kPytorchBaselinesSchema + "\"", r.got(root["schema"]));
  p.gpu = string_field(r, root, "gpu", true);
  p.device = string_field(r, root, "device", false);
  p.torch = string_field(r, root, "torch", false);
  p.date = string_field(r, root, "date", false);
  auto tasks = root.find("tasks");
  if (tasks == root.end() || !tasks->is_object())
    r.fail("tasks", "an object of task name -> {workloads, error}", tasks == root.end() ? "nothing" : r.got(*tasks));
  for (const auto& [name, t] : tasks->items()) {
    const std::string tf = "tasks." + name;
    if (!t.is_object()) r.fail(tf, "an object {workloads, error}", r.got(t));
    if (const json* e = Fields::find(t, "error")) p.errors[name] = r.string(*e, tf + ".error", false);
    auto& dest = p.tasks[name];
    const json* ws = Fields::find(t, "workloads");
    if (!ws) continue;
    if (!ws->is_object()) r.fail(tf + ".workloads", "an object of uuid -> {median_s, spread, samples}", r.got(*ws));
    for (const auto& [uuid, w] : ws->items()) dest[uuid] = read_workload(r, w, tf + ".workloads." + uuid);
  }
  return p;
}

std::optional<PytorchBaselines> find_pytorch_baselines(const Task& task, Backend b, const std::string& device_name) {
  auto path = pytorch_baselines_path(task, b, device_name);
  if (!std::filesystem::exists(path)) return std::nullopt;
  auto p = load_pytorch_baselines(path);
  const std::string want = device_slug(device_name, b);
  if (p.gpu != want)
    throw TaskFormatError(path.filename().string(), "gpu", "\"" + want + "\" (the device this file is named for)",
                          "\"" + p.gpu + "\"");
  return p;
}

std::optional<SampleSummary> PytorchBaselines::lookup(const Task& task, const std::string& uuid) const {
  auto t = tasks.find(task.name);
  if (t == tasks.end()) return std::nullopt;
  auto w = t->second.find(uuid);
  if (w == t->second.end()) return std::nullopt;
  if (!w->second.axes.empty()) {
    for (const auto& tw : task.workloads)
      if (tw.uuid == uuid && tw.axes != w->second.axes) return std::nullopt;
  }
  return w->second.summary;
}

}  // namespace khive
