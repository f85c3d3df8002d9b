// PyTorch baselines file: reading, validation, lookup (pytorch_baselines.hpp, docs/bench.md).
#include "khive/eval/pytorch_baselines.hpp"

#include <cctype>
#include <cmath>

#include <nlohmann/json.hpp>

#include "khive/support/files.hpp"

namespace khive {
namespace {

using json = nlohmann::json;

std::string show(const json& j) {
  std::string s = j.dump();
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

double positive_number(const json& j, const std::string& file, const std::string& field) {
  if (!j.is_number() || !std::isfinite(j.get<double>()) || j.get<double>() <= 0)
    throw TaskFormatError(file, field, "a positive number", show(j));
  return j.get<double>();
}

std::optional<double> optional_number(const json& o, const char* key, const std::string& file, const std::string& field,
                                      bool allow_zero) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return std::nullopt;
  if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0 || (!allow_zero && it->get<double>() == 0))
    throw TaskFormatError(file, field + "." + key, allow_zero ? "a number >= 0" : "a positive number", show(*it));
  return it->get<double>();
}

std::string string_field(const json& root, const char* key, const std::string& file, bool required) {
  auto it = root.find(key);
  if (it == root.end() || it->is_null()) {
    if (required) throw TaskFormatError(file, key, "a string", "nothing");
    return "";
  }
  if (!it->is_string()) throw TaskFormatError(file, key, "a string", show(*it));
  return it->get<std::string>();
}

PytorchWorkload read_workload(const json& j, const std::string& file, const std::string& field) {
  if (!j.is_object()) throw TaskFormatError(file, field, "an object {median_s, spread, samples}", show(j));
  PytorchWorkload w;
  if (!j.contains("median_s")) throw TaskFormatError(file, field + ".median_s", "a positive number", "nothing");
  w.summary.median = positive_number(j["median_s"], file, field + ".median_s");
  auto s = j.find("samples");
  if (s == j.end() || !s->is_number_integer() || s->get<int64_t>() < 1)
    throw TaskFormatError(file, field + ".samples", "an integer >= 1", s == j.end() ? "nothing" : show(*s));
  w.summary.n = static_cast<std::size_t>(s->get<int64_t>());
  w.summary.rel_spread = optional_number(j, "spread", file, field, true).value_or(0.0);
  w.summary.min = optional_number(j, "min_s", file, field, false).value_or(w.summary.median);
  w.summary.p10 = optional_number(j, "p10_s", file, field, false).value_or(w.summary.median);
  w.summary.p90 = optional_number(j, "p90_s", file, field, false).value_or(w.summary.median);
  w.summary.mean = w.summary.median;
  w.summary.max = w.summary.p90;
  if (auto a = j.find("axes"); a != j.end() && !a->is_null()) {
    if (!a->is_object()) throw TaskFormatError(file, field + ".axes", "an object of var axis -> integer", show(*a));
    for (const auto& [name, v] : a->items()) {
      if (!v.is_number_integer()) throw TaskFormatError(file, field + ".axes." + name, "an integer", show(v));
      w.axes[name] = v.get<int64_t>();
    }
  }
  return w;
}

}  // namespace

std::string device_slug(const std::string& device_name, Backend b) {
  std::string low;
  for (char c : device_name) low += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
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
  if (dir.filename().empty()) dir = dir.parent_path();   // "tasks/demo/gemm/" names the task, not "gemm/"
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
  if (!root.is_object()) throw TaskFormatError(file, "(root)", "a JSON object", show(root));
  PytorchBaselines p;
  p.file = path;
  std::string schema = string_field(root, "schema", file, true);
  if (schema != kPytorchBaselinesSchema) throw TaskFormatError(file, "schema", std::string("\"") + kPytorchBaselinesSchema + "\"", show(root["schema"]));
  p.gpu = string_field(root, "gpu", file, true);
  p.device = string_field(root, "device", file, false);
  p.torch = string_field(root, "torch", file, false);
  p.date = string_field(root, "date", file, false);
  auto tasks = root.find("tasks");
  if (tasks == root.end() || !tasks->is_object())
    throw TaskFormatError(file, "tasks", "an object of task name -> {workloads, error}", tasks == root.end() ? "nothing" : show(*tasks));
  for (const auto& [name, t] : tasks->items()) {
    const std::string tf = "tasks." + name;
    if (!t.is_object()) throw TaskFormatError(file, tf, "an object {workloads, error}", show(t));
    if (auto e = t.find("error"); e != t.end() && !e->is_null()) {
      if (!e->is_string()) throw TaskFormatError(file, tf + ".error", "a string", show(*e));
      p.errors[name] = e->get<std::string>();
    }
    auto& dest = p.tasks[name];
    auto ws = t.find("workloads");
    if (ws == t.end() || ws->is_null()) continue;
    if (!ws->is_object()) throw TaskFormatError(file, tf + ".workloads", "an object of uuid -> {median_s, spread, samples}", show(*ws));
    for (const auto& [uuid, w] : ws->items()) dest[uuid] = read_workload(w, file, tf + ".workloads." + uuid);
  }
  return p;
}

std::optional<PytorchBaselines> find_pytorch_baselines(const Task& task, Backend b, const std::string& device_name) {
  auto path = pytorch_baselines_path(task, b, device_name);
  if (!std::filesystem::exists(path)) return std::nullopt;
  auto p = load_pytorch_baselines(path);
  const std::string want = device_slug(device_name, b);
  if (p.gpu != want) throw TaskFormatError(path.filename().string(), "gpu", "\"" + want + "\" (the device this file is named for)", "\"" + p.gpu + "\"");
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
