// FlashInfer-Bench dataset layout -> task directories (flashinfer.hpp).
#include "khive/interop/flashinfer.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "khive/task/task.hpp"

namespace khive {
namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace {

std::string read_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<fs::path> files_with(const fs::path& dir, const std::string& ext) {
  std::vector<fs::path> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ext) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// A workload line with its safetensors paths made absolute (they are relative to the dataset root).
std::string rebase_line(const std::string& line, const fs::path& root) {
  json j;
  try {
    j = json::parse(line);
  } catch (const json::parse_error&) {
    return line;  // the task loader reports it, with its line number
  }
  json* w = j.contains("workload") && j["workload"].is_object() ? &j["workload"] : &j;
  if (!w->contains("inputs") || !(*w)["inputs"].is_object()) return line;
  bool changed = false;
  for (auto& [name, spec] : (*w)["inputs"].items()) {
    if (!spec.is_object() || spec.value("type", "") != "safetensors" || !spec.contains("path") ||
        !spec["path"].is_string())
      continue;
    fs::path p = spec["path"].get<std::string>();
    if (p.is_relative() && fs::exists(root / p)) {
      spec["path"] = (root / p).lexically_normal().string();
      changed = true;
    }
  }
  return changed ? j.dump() : line;
}

}  // namespace

DatasetImport import_flashinfer_dataset(const fs::path& root_in, const fs::path& out) {
  const fs::path root = fs::absolute(root_in).lexically_normal();
  if (!fs::is_directory(root / "definitions"))
    throw std::runtime_error(root.string() + ": expected a FlashInfer-Bench dataset (a definitions/ folder), got none");
  // Workload lines grouped by their "definition" (a Trace record's field), file order kept.
  std::map<std::string, std::vector<std::string>> lines;
  for (const auto& f : files_with(root / "workloads", ".jsonl")) {
    std::istringstream in(read_text(f));
    std::string line;
    while (std::getline(in, line)) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      std::string def = f.stem().string();
      try {
        json j = json::parse(line);
        if (j.contains("definition") && j["definition"].is_string()) def = j["definition"].get<std::string>();
      } catch (const json::parse_error&) {
      }
      lines[def].push_back(rebase_line(line, root));
    }
  }
  DatasetImport r;
  std::map<std::string, bool> used;
  for (const auto& f : files_with(root / "definitions", ".json")) {
    ImportedTask t;
    t.source = f;
    t.name = f.stem().string();
    try {
      json d = json::parse(read_text(f));
      if (d.contains("name") && d["name"].is_string()) t.name = d["name"].get<std::string>();
    } catch (const json::parse_error& e) {
      t.error = f.filename().string() + ": (syntax): expected valid JSON, got " + e.what();
      r.tasks.push_back(t);
      continue;
    }
    t.dir = out / t.name;
    fs::create_directories(t.dir);
    fs::copy_file(f, t.dir / "definition.json", fs::copy_options::overwrite_existing);
    std::ofstream w(t.dir / "workload.jsonl", std::ios::binary | std::ios::trunc);
    for (const auto& l : lines[t.name]) w << l << "\n";
    w.close();
    used[t.name] = true;
    try {
      load_task(t.dir);
    } catch (const std::exception& e) {
      t.error = e.what();
    }
    r.tasks.push_back(t);
  }
  for (const auto& [def, ls] : lines)
    if (!used.count(def)) r.orphans.push_back(def);
  return r;
}

}  // namespace khive
