// The runner's seccomp filter, installed before any candidate code is loaded (its static
// constructors included). Symbol scanning catches calls through libc; this catches raw system-call
// instructions, which no symbol table shows.
#pragma once
#include <string>

namespace khive {

// golden: the task's own reference, which writes golden files; cpu / cuda: candidates, no file writes.
enum class SandboxLevel { golden, cpu, cuda };
// Returns "" on success, else why it could not be installed (the runner then reports seccomp: false).
std::string install_seccomp(SandboxLevel level);

}  // namespace khive
