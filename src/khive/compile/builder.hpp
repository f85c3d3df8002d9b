// Builder: candidate source -> shared object an executor loads, with parsed diagnostics and a
// content-hash cache.
//
//   BuildOptions o; o.backend = Backend::cuda;
//   BuildResult r = build_candidate(task, "kernel.cu", o);
//   if (!r.ok) for (auto& d : r.diagnostics) ...   // file, line, column, severity, message, source line
//   else r.library is what khive-exec loads (symbol khive_entry)
//
// The generated translation unit is: a prelude (dtype types), the exact khive_launch declaration,
// `#include "<candidate>"`, then `extern "C" void khive_entry(void* const* args, void* stream)`, which
// unpacks args (inputs, outputs, var axes, in signature order) and calls khive_launch. Compiling the
// candidate in the same unit as the declaration makes a wrong signature a compile error.
//
// Runner ABI ("khive-entry-v1", exported as `extern "C" const char khive_abi[]`):
//   args[i] for each input : the device (CUDA) or host (CPU) buffer; for a scalar input (shape null) a
//                            pointer to the HOST value of the task's dtype (the shim dereferences it)
//   then each output       : the preallocated buffer
//   then each var axis     : a pointer to a host int64_t
//   stream                 : the cudaStream_t (CUDA); ignored on the CPU
// The library is linked with --no-undefined, so a dlopen(RTLD_NOW) of a library that built never fails
// on a missing symbol of the candidate's own making.
//
// Fixed flags (both backends get -O3 -DNDEBUG):
//   CPU : g++ -std=c++20 -O3 -DNDEBUG -march=native -fopenmp -fPIC -shared -Wl,--no-undefined
//   CUDA: nvcc -std=c++17 -O3 -DNDEBUG <arch> -Xcompiler -fPIC -shared --cudart shared -Xptxas -v
//         --expt-relaxed-constexpr -DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL=1 -I<cutlass>/include
//         -I<cutlass>/util-include -Xlinker --no-undefined -lcuda [-lcublas] [-lcublasLt]
//   CUTLASS's TMA descriptors otherwise come through cudaGetDriverEntryPoint, which the symbol policy
//   forbids (dynamic loading); with the define they call cuTensorMapEncodeTiled from libcuda directly.
#pragma once
#include <atomic>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "khive/task/task.hpp"

namespace khive {

struct Diagnostic {
  enum class Severity { error, warning, note };
  Severity severity = Severity::error;
  std::string tool;          // "g++", "nvcc", "ptxas", "ld", "khive"
  std::string file;          // as the compiler printed it, mapped to the candidate's own name when it is the candidate
  int line = 0, column = 0;  // 0 = unknown
  std::string message;
  std::string code;           // e.g. "C7511" for ptxas, "20011-D" for nvcc, empty if none
  std::string source_line;    // the offending line of the candidate's source, when file/line point into it
  bool in_candidate = false;  // true when the location is in the candidate's source
};
std::string_view severity_name(Diagnostic::Severity s);
// As JSON (the build cache's meta, `khive eval --json`): every field; an unknown severity reads as an error.
NLOHMANN_JSON_SERIALIZE_ENUM(Diagnostic::Severity, {{Diagnostic::Severity::error, "error"},
                                                    {Diagnostic::Severity::warning, "warning"},
                                                    {Diagnostic::Severity::note, "note"}})
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Diagnostic, severity, tool, file, line, column, message, code,
                                                source_line, in_candidate)

// Parses g++ / nvcc / ptxas / ld output into records. `candidate_path` (as passed to the compiler) maps
// locations to the candidate; `candidate_source` fills source_line.
std::vector<Diagnostic> parse_diagnostics(const std::string& compiler_output, const std::string& candidate_path,
                                          const std::string& candidate_source);
// The first `max_errors` errors with their source lines, for people and for the LLM agent's repair prompt.
std::string format_diagnostics(const std::vector<Diagnostic>& ds, std::size_t max_errors = 5);

struct BuildOptions {
  Backend backend = Backend::cpu;
  // $KHIVE_CUDA_ARCH replaces this value when the caller left it at the default. Several flags may be
  // given, separated by spaces ("-gencode=... -gencode=...").
  std::string cuda_arch = "-gencode=arch=compute_90a,code=sm_90a";
  double timeout_s = 180;
  std::filesystem::path cache_dir;        // empty = cache_root()/build
  std::filesystem::path cutlass_include;  // empty = autodetect (<repo>/.deps/cutlass, $KHIVE_CUTLASS)
  std::vector<std::string> extra_flags;   // appended after the source file; part of the cache key
  // false: neither read nor fill the cache; the build lands in <cache>/uncached/b-XXXXXX (left there).
  bool use_cache = true;
  // When set and it becomes true, the compiler is killed and nothing is cached (a speculative build the run no longer
  // needs: hive/prebuild.hpp). Not part of the key.
  const std::atomic<bool>* cancel = nullptr;
};

// What ptxas reported (-Xptxas -v) for one entry function (kernel) and architecture.
struct KernelResources {
  std::string kernel;                     // mangled name, as ptxas prints it
  std::string arch;                       // "sm_90a"
  int registers = 0;                      // per thread
  int shared_bytes = 0;                   // static shared memory (dynamic shared memory is a launch parameter)
  int stack_bytes = 0;                    // stack frame
  int spill_stores = 0, spill_loads = 0;  // bytes
  int barriers = 0;
  // ptxas performance advisories naming this kernel, e.g. "C7511" (wgmma.mma_async serialized for lack
  // of registers: 42 instead of ~740 TFLOP/s that FlashAttention-3 reports), "C7510" (serialized across a call).
  std::vector<std::string> advisories;
  bool wgmma_serialized = false;  // an advisory says wgmma.mma_async instructions are serialized
};
// Parses the ptxas lines of a build log ("Compiling entry function", "Function properties for",
// "Used N registers, used N barriers, N bytes smem", "(C7511) ... in the function 'X'").
std::vector<KernelResources> parse_ptxas_resources(const std::string& log);
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(KernelResources, kernel, arch, registers, shared_bytes, stack_bytes,
                                                spill_stores, spill_loads, barriers, advisories, wgmma_serialized)

struct BuildResult {
  bool ok = false;
  bool cached = false;
  bool timed_out = false;
  bool cancelled = false;            // BuildOptions::cancel stopped it (nothing cached)
  std::filesystem::path library;     // the built .so (inside the cache)
  std::string key;                   // sha256(source, prelude+shim, flags, toolchain version)
  std::vector<std::string> command;  // the compiler command line
  std::string log;                   // raw compiler output (stdout+stderr)
  std::vector<Diagnostic> diagnostics;
  std::vector<KernelResources> resources;  // CUDA: per kernel, from ptxas -v (empty on the CPU)
  double seconds = 0;                      // 0 when cached
  std::string summary() const;             // one line: "ok (cached)" | "3 errors; first: kernel.cu:12:5: ..."
  std::size_t error_count() const;
  std::size_t warning_count() const;
};

// The generated translation unit for a candidate (exposed for tests and `khive signature --shim`).
// The candidate is included by its absolute path, so the compiler reports its errors at the candidate's
// own lines (build_candidate then shows the path as the bare file name).
std::string generate_unit(const Task& t, Backend b, const std::filesystem::path& candidate_source);
// What the unit puts before the candidate: the includes and storage types the task's dtypes need and the exact
// khive_launch declaration. `khive export --solution` ships it as khive_prelude.h so the kernel builds alone.
std::string generate_prelude(const Task& t, Backend b);

// The compiler command build_candidate runs (in the scratch dir: "unit.cpp|unit.cu" -> "cand.so").
std::vector<std::string> build_command(const Task& t, const BuildOptions& o);

BuildResult build_candidate(const Task& t, const std::filesystem::path& source, const BuildOptions& o);

// Compiler identity string, computed once per process (thread-safe):
//   CPU : "g++ (Debian 12.2.0-14+deb12u1) 12.2.0 | -march=sapphirerapids | target <sha256[0:16]>"
//         (the hash covers all of `g++ -march=native -Q --help=target`: the enabled ISA extensions)
//   CUDA: "Build cuda_13.0.r13.0/compiler.36424714_0 | g++ (Debian 12.2.0-14+deb12u1) 12.2.0"
// "unavailable: <why>" when the compiler cannot be run.
std::string toolchain_identity(Backend b);

}  // namespace khive
