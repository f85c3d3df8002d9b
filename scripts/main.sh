#!/usr/bin/env bash
# The README's main job: set up, build, and run an optimization on the embedded default —
# a GPU task when a GPU is present, the CPU demo suite otherwise.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
khive="${BUILD_DIR:-$root/build}/bin/khive"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  backend=cuda; ext=cu
else
  backend=cpu; ext=cpp
fi
echo "khive main job: backend $backend, suite tasks/demo-cpu"
"$root/scripts/select-best.py" "$khive" "$backend" "$ext" "$root/tasks/demo-cpu" "${KHIVE_OUT:-$root/.khive/main}"
