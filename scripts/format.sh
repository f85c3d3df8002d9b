#!/usr/bin/env bash
# Formats khive's own C++/CUDA sources with .clang-format; --check only lists the files that are not formatted
# (exit 1), as ctest's format_check does. Kernel templates, task references and red-team kernels are left alone.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
command -v clang-format >/dev/null || { echo "format: clang-format is not installed (apt-get install clang-format)" >&2; exit 2; }
mapfile -t files < <(git ls-files 'src/*.cpp' 'src/*.hpp' 'src/*.cu' 'src/*.cuh' 'tests/unit/*.cpp' 'tests/unit/*.hpp')
if [ "${1:-}" = "--check" ]; then
  bad=0
  for f in "${files[@]}"; do
    if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then echo "not formatted: $f"; bad=1; fi
  done
  [ $bad = 0 ] && echo "format: ${#files[@]} files formatted"
  exit $bad
fi
clang-format -i "${files[@]}"
