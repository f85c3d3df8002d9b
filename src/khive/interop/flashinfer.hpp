// A FlashInfer-Bench dataset (definitions/**/*.json, workloads/**/*.jsonl of Trace records, blob/ with
// safetensors) as khive task directories: one <out>/<definition name>/ with definition.json (as it is) and
// workload.jsonl (the definition's workload records, safetensors paths made absolute under the dataset root).
//
//   auto r = import_flashinfer_dataset("flashinfer-trace", "tasks/fib");
//   for (auto& t : r.tasks) t.name, t.dir, t.error   // error: why load_task refused it ("" = loaded)
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace khive {

struct ImportedTask {
  std::string name;  // the definition's name (or the file name when it has none)
  std::filesystem::path source;
  std::filesystem::path dir;  // written task directory (empty when nothing was written)
  std::string error;          // "" when the task loads
};

struct DatasetImport {
  std::vector<ImportedTask> tasks;
  std::vector<std::string> orphans;  // workload files whose definition is absent
};

// Throws std::runtime_error when root has no definitions/ folder.
DatasetImport import_flashinfer_dataset(const std::filesystem::path& root, const std::filesystem::path& out);

}  // namespace khive
