// Solutions in and out: the SOL-ExecBench / FlashInfer-Bench Solution JSON (docs/solutions.md).
//
//   Out:  json s = solution_json(task, Backend::cuda, kernel_source, meta, SolutionFormat::sol_execbench);
//         sources: khive_prelude.h (includes + the khive_launch declaration), kernel.cu (the kernel, as built),
//         binding.cu (the torch binding, binding.hpp); spec: entry point binding.cu::run, binding torch,
//         destination_passing_style true, the compile options khive builds with.
//   In:   ImportedSolution c = import_solution(json, task, Backend::cuda);   // one candidate source
//         C/C++/CUDA sources whose entry function takes khive_launch's parameters (khive's own exports, or any
//         kernel written to `khive signature`): the files are amalgamated into one candidate (local includes
//         inlined, other .cu/.cpp appended) and, when the entry is not khive_launch itself, a khive_launch that
//         calls it is added. A value-returning entry (destination_passing_style false) takes the inputs (then the
//         var axes, then the stream on CUDA) and returns T*, std::vector<T> (CPU) or a std::tuple / std::pair of
//         them, one per output: the khive_launch added calls it, checks each result (element type at import and at
//         compile time, null pointers and std::vector sizes at run time: std::abort with the reason on stderr) and
//         copies it into the preallocated output (memcpy; cudaMemcpyAsync on the stream), one extra write and read
//         of each output per call (ImportedSolution::note says so). Python languages, torch-tensor entries and
//         spec.binding other than "torch"/none (TVM-FFI) are refused at import with the file and field.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "khive/task/task.hpp"

namespace khive {

enum class SolutionFormat { sol_execbench, flashinfer_bench };

struct SolutionMeta {
  std::string name;  // "rmsnorm_h4096_khive_c0012"
  std::string author = "khive";
  std::string description;
  std::string target_hardware = "LOCAL";  // SOL-ExecBench: B200 | LOCAL; FlashInfer-Bench: free text ("NVIDIA_H200")
};

nlohmann::ordered_json solution_json(const Task& t, Backend b, const std::string& kernel_source,
                                     const SolutionMeta& meta, SolutionFormat format);

// Why a Solution cannot become a candidate; what() names the field ("spec.languages: ...").
struct SolutionError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct ImportedSolution {
  std::string name;    // the solution's name
  std::string source;  // one file, ready for the builder
  std::string ext;     // ".cu" or ".cpp"
  std::string note;    // what the import did that costs something ("" when nothing): the value-returning wrap
};
ImportedSolution import_solution(const nlohmann::json& solution, const Task& t, Backend b);

}  // namespace khive
