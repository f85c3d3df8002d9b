// Running python/khive_torch (the PyTorch side of khive) from khive: which interpreter, which PYTHONPATH.
//
//   ProcessResult r = run_khive_torch({"import-kernelbench", file, "--out", dir}, 600);
//
// Interpreter: $KHIVE_PYTHON, else python3 on PATH. PYTHONPATH: <repo>/python, then <repo>/.deps/torch (where
// scripts/setup.sh installs PyTorch's CPU-usable build), then the caller's PYTHONPATH. <repo> is
// $KHIVE_SOURCE_DIR when set, else the source tree khive was built from.
#pragma once
#include <string>
#include <vector>

#include "khive/jail/jail.hpp"
#include "khive/support/subprocess.hpp"

namespace khive {

std::string khive_python();
std::string khive_pythonpath();
// Runs `python -m khive_torch ARGS` in khive-jail (jail.hpp): it reads the interpreter's own paths
// (python_read_paths) and `jail.read`, writes only `jail.write` and a scratch folder of its own (HOME and TMPDIR,
// removed after), has no network, and is limited to half the physical memory unless `jail.memory_bytes` says
// otherwise. A KernelBench problem file's top-level code runs in here, never with the user's rights.
ProcessResult run_khive_torch(const std::vector<std::string>& args, double timeout_s, JailPolicy jail = {});
// What a jailed interpreter must read: its executable, sys.prefix and every folder on its sys.path (khive_torch, the
// project's torch, site-packages), resolved through symbolic links. Asked once per process; empty when there is no
// interpreter (the caller's own run then fails with the interpreter's error).
const std::vector<std::string>& python_read_paths();

// The interpreter the judge starts a PyTorch reference with (python/khive_torch/executor.py): khive_python()
// resolved to the real executable (sys.executable: the judge execs it directly, with a minimal environment, so a
// PATH shim would not do), the PYTHONPATH above, and the torch version it imports (part of the goldens' cache key).
// Asked once per process. Throws std::runtime_error naming what to install when there is no interpreter or no torch.
struct TorchPython {
  std::string executable, pythonpath, torch_version;
};
const TorchPython& torch_python();

}  // namespace khive
