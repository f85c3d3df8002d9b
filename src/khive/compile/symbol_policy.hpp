// Guard check 1 (second half): what a built candidate may call. Read from the shared object's dynamic
// symbol table (imports and exports), so nothing the candidate writes in its source can hide it short
// of raw system-call instructions or functions resolved by hand, which the executor's sandbox covers: the scan is a
// first filter with clear messages, not the defence.
//
//   auto v = scan_symbols("cand.so", task.policy, Backend::cuda);
//   if (!v.empty()) reject: v[0].symbol, v[0].rule ("thread creation"), v[0].imported
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "khive/task/task.hpp"

namespace khive {

struct SymbolViolation {
  std::string symbol;    // demangled when C++
  std::string rule;      // "thread creation", "process creation", "dynamic loading", "memory protection",
                         // "timer or event", "file or network I/O", "signal handling", "device limit / L2 persistence",
                         // "stream creation", "host callback", "device selection", "profiling control",
                         // "raw system call", "debugging", "process control", "environment",
                         // "inter-process communication",
                         // "library not allowed by the task: cublas", "redefines a runtime symbol"
  bool imported = true;  // false: the candidate *defines* this symbol (an attempt to replace it)
  std::string mangled;   // the raw name from the symbol table (version suffix removed)
};

struct SymbolTable {
  std::vector<std::string> imported, exported;  // raw (mangled) names, "@VERSION" suffixes removed
};
// Reads the dynamic symbol table with `nm -D --undefined-only` (weak undefined included) and
// `nm -D --defined-only` (binutils). Throws std::runtime_error if unreadable.
SymbolTable read_symbols(const std::filesystem::path& so);

// The rules are tables in symbol_policy.cpp. A pattern is an fnmatch(3) glob on the raw name
// ("fork", "cudaEvent*", "cu[A-Z]*") or, written "~text", a whole-word substring of the demangled
// name ("~std::thread"). Deliberately allowed (they look close to forbidden ones): __cxa_atexit, abort,
// raise, GOMP_* / omp_* except omp_get_wtime (the CPU backend builds with OpenMP), cudaFuncSetAttribute,
// cudaDeviceSetCacheConfig, cudaDeviceSetSharedMemConfig, cudaStreamSynchronize / cudaStreamWaitEvent, mmap,
// std::cerr / std::clog and std::basic_ostream members (CUTLASS's sm90 TMA GEMMs import std::cerr for
// host-side error reports; stderr is captured for the log only, never parsed).
std::vector<SymbolViolation> check_symbols(const SymbolTable& syms, const LibraryPolicy& policy, Backend b);
std::vector<SymbolViolation> scan_symbols(const std::filesystem::path& so, const LibraryPolicy& policy, Backend b);

// abi::__cxa_demangle, or the name unchanged when it is not a C++ mangled name.
std::string demangle_symbol(const std::string& name);

}  // namespace khive
