// Builder: candidate source -> shared object the runner loads, with parsed diagnostics and a
// content-hash cache.
//
//   BuildOptions o; o.backend = Backend::cuda;
//   BuildResult r = build_candidate(task, "kernel.cu", o);
//   if (!r.ok) for (auto& d : r.diagnostics) ...   // file, line, column, severity, message, source line
//   else load r.library in the runner (symbol khive_entry)
//
// The generated translation unit is: a prelude (dtype types), the exact khive_launch declaration,
// `#include "<candidate>"`, then `extern "C" void khive_entry(void* const* args, void* stream)`, which
// unpacks args (inputs, outputs, var axes, in signature order) and calls khive_launch. Compiling the
// candidate in the same unit as the declaration makes a wrong signature a compile error.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "khive/task/task.hpp"

namespace khive {

struct Diagnostic {
  enum class Severity { error, warning, note };
  Severity severity = Severity::error;
  std::string tool;          // "g++", "nvcc", "ptxas", "ld", "khive"
  std::string file;          // as the compiler printed it, mapped to the candidate's own name when it is the candidate
  int line = 0, column = 0;  // 0 = unknown
  std::string message;
  std::string code;          // e.g. "C7511" for ptxas, "20011-D" for nvcc, empty if none
  std::string source_line;   // the offending line of the candidate's source, when file/line point into it
  bool in_candidate = false; // true when the location is in the candidate's source
};
std::string_view severity_name(Diagnostic::Severity s);

// Parses g++ / nvcc / ptxas / ld output into records. `candidate_path` (as passed to the compiler) maps
// locations to the candidate; `candidate_source` fills source_line.
std::vector<Diagnostic> parse_diagnostics(const std::string& compiler_output, const std::string& candidate_path,
                                          const std::string& candidate_source);
// The first `max_errors` errors with their source lines, for people and for the LLM agent's repair prompt.
std::string format_diagnostics(const std::vector<Diagnostic>& ds, std::size_t max_errors = 5);

struct BuildOptions {
  Backend backend = Backend::cpu;
  std::string cuda_arch = "-gencode=arch=compute_90a,code=sm_90a";   // $KHIVE_CUDA_ARCH overrides
  double timeout_s = 180;
  std::filesystem::path cache_dir;       // empty = cache_root()/build
  std::filesystem::path cutlass_include; // empty = autodetect (<repo>/.deps/cutlass, $KHIVE_CUTLASS)
  std::vector<std::string> extra_flags;  // part of the cache key
  bool use_cache = true;
};

struct BuildResult {
  bool ok = false;
  bool cached = false;
  bool timed_out = false;
  std::filesystem::path library;          // the built .so (inside the cache)
  std::string key;                        // sha256(source, prelude+shim, flags, toolchain version)
  std::vector<std::string> command;       // the compiler command line
  std::string log;                        // raw compiler output (stdout+stderr)
  std::vector<Diagnostic> diagnostics;
  double seconds = 0;                     // 0 when cached
  std::string summary() const;            // one line: "ok (cached)" | "3 errors; first: kernel.cu:12:5: ..."
};

// The generated translation unit for a candidate (exposed for tests and `khive signature --shim`).
std::string generate_unit(const Task& t, Backend b, const std::filesystem::path& candidate_source);

BuildResult build_candidate(const Task& t, const std::filesystem::path& source, const BuildOptions& o);

// Compiler identity string ("g++ (Debian 12.2.0-14) 12.2.0 | march=..."), computed once per process.
std::string toolchain_identity(Backend b);

}  // namespace khive
