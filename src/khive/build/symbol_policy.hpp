// Guard check 1 (second half): what a built candidate may call. Read from the shared object's dynamic
// symbol table (imports and exports), so nothing the candidate writes in its source can hide it short
// of raw system-call instructions, which the runner's seccomp filter covers.
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
  std::string symbol;     // demangled when C++
  std::string rule;       // "thread creation", "process creation", "dynamic loading", "memory protection",
                          // "timer or event", "file or network I/O", "signal handling", "device limit / L2 persistence",
                          // "stream creation", "library not allowed by the task: cublas",
                          // "redefines a runtime symbol"
  bool imported = true;   // false: the candidate *defines* this symbol (an attempt to replace it)
};

struct SymbolTable {
  std::vector<std::string> imported, exported;   // raw (mangled) names
};
// Reads the dynamic symbol table with `nm -D` (binutils). Throws std::runtime_error if unreadable.
SymbolTable read_symbols(const std::filesystem::path& so);

std::vector<SymbolViolation> check_symbols(const SymbolTable& syms, const LibraryPolicy& policy, Backend b);
std::vector<SymbolViolation> scan_symbols(const std::filesystem::path& so, const LibraryPolicy& policy, Backend b);

}  // namespace khive
