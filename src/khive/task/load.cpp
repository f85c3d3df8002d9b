// Loading and validating a task directory (docs/task-format.md is the user-facing reference).
//
// Every problem is reported as a TaskFormatError naming the file (relative to the task's parent
// directory), the field path ("inputs.A.dtype", "line 3: axes.M") and what was expected, so a user can
// fix a task without reading this code. Fields that belong to the FlashInfer-Bench / SOL-ExecBench schema
// tolerate unknown keys (their tools add fields over time); keys inside our own "khive" blocks must be
// known, so that a typo is not silently ignored.
#include <algorithm>
#include <fstream>

#include "khive/support/hash.hpp"
#include "khive/task/expr.hpp"
#include "khive/task/parse_common.hpp"
#include "khive/task/task.hpp"

namespace khive {
namespace fs = std::filesystem;
using namespace task_parse;

namespace {

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

// An imported task (khive import) records the SHA-256 of the problem file it was made from and of the reference it
// wrote (khive.source.sha256, khive.source.reference_sha256): its reference is that file's Python, run at every
// evaluation, so a reference or a copy of the file changed since the import is refused, not run.
void check_imported_source(const Ctx& c, const json& root, const fs::path& dir, const Task& t) {
  if (!root.contains("khive") || !root["khive"].is_object() || !root["khive"].contains("source")) return;
  const json& src = root["khive"]["source"];
  if (!src.is_object()) return;
  if (src.contains("reference_sha256")) {
    const std::string want = c.string(src["reference_sha256"], "khive.source.reference_sha256");
    const std::string got = sha256_hex(t.pytorch_reference);
    if (got != want)
      c.fail("reference", "the reference as imported (khive.source.reference_sha256 " + want.substr(0, 12) + "...)",
             "a changed text (sha256 " + got.substr(0, 12) +
                 "...): import the problem file again rather than edit its reference");
  }
  if (src.contains("sha256") && src.contains("file")) {
    const std::string want = c.string(src["sha256"], "khive.source.sha256");
    const std::string file = c.string(src["file"], "khive.source.file");
    const fs::path p = dir / file;
    if (fs::path(file).is_absolute() || file.find("..") != std::string::npos)
      c.fail("khive.source.file", "a file name inside the task's folder", quote(file));
    std::string got;
    try {
      got = sha256_file(p);
    } catch (const std::exception&) {
      c.fail("khive.source.file", "the imported problem file " + quote(file) + " in the task's folder",
             "none readable there");
    }
    if (got != want)
      c.fail("khive.source.sha256", "the SHA-256 of " + quote(file) + " as imported (" + want.substr(0, 12) + "...)",
             "a changed file (sha256 " + got.substr(0, 12) + "...): import it again");
  }
}

}  // namespace

Task load_task(const fs::path& dir_in) {
  Task t;
  t.dir = normalize_dir(dir_in);
  const fs::path& dir = t.dir;
  const std::string def_file = file_label(dir, "definition.json");
  if (!fs::is_directory(dir))
    throw TaskFormatError(def_file, "(file)", "a task directory", quote(dir_in.string()) + " (not a directory)");
  fs::path def_path = dir / "definition.json";
  if (!fs::is_regular_file(def_path)) throw TaskFormatError(def_file, "(file)", "a definition.json file", "none found");

  const Ctx c = task_fields(def_file);
  json root;
  try {
    root = json::parse(read_text(def_path));
  } catch (const json::parse_error& e) {
    c.fail("(syntax)", "valid JSON", json_error_text(e));
  }
  parse_definition(c, root, t);
  check_imported_source(c, root, dir, t);

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
      it.disable_recursion_pending();  // a task holds no tasks
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
