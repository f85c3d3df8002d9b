#!/usr/bin/env bash
# One-time set-up on a fresh Debian 12 machine: system packages and the CUTLASS/CuTe headers.
# Idempotent: re-running it only installs what is missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# Free space where the build and the dependencies go, and in $TMPDIR: a CI log then says how much room there was.
free_gb() { df -Pk "$1" 2>/dev/null | awk 'NR==2 {printf "%d", $4 / 1048576}'; }
echo "setup: free disk: $(free_gb "$root") GB at $root, $(free_gb "${TMPDIR:-/tmp}") GB in ${TMPDIR:-/tmp}"

pkgs=(build-essential cmake pkg-config git python3 python3-pip
      nlohmann-json3-dev libcli11-dev libfmt-dev libssl-dev libseccomp-dev
      libsqlite3-dev libgtest-dev libgmock-dev binutils util-linux
      libcurl4-openssl-dev libcpp-httplib-dev libtomlplusplus-dev)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# CUTLASS/CuTe headers from the nvidia-cutlass wheel, into a project-local ignored folder.
deps="$root/.deps"
inc="$deps/cutlass/include"
if [ ! -f "$inc/cute/layout.hpp" ]; then
  echo "setup: installing nvidia-cutlass==4.2.0.0 headers into .deps/"
  mkdir -p "$deps"
  python3 -m pip install -q --no-cache-dir --no-deps --disable-pip-version-check --target "$deps/pip" nvidia-cutlass==4.2.0.0
  src="$deps/pip/cutlass_library/source"
  mkdir -p "$deps/cutlass"
  rm -rf "$deps/cutlass/include" "$deps/cutlass/util-include"
  cp -r "$src/include" "$deps/cutlass/include"
  cp -r "$src/tools/util/include" "$deps/cutlass/util-include"
  rm -rf "$deps/pip"   # only the headers are needed; keeps the folder small enough to carry to the GPU
fi
# PyTorch for the PyTorch side of khive (python/khive_torch: the reference as the oracle, KernelBench import),
# into a project-local ignored folder. PyPI's Linux wheel is the CUDA build: it runs on the CPU too, but needs a few
# NVIDIA libraries to import: cuSPARSELt, NVSHMEM, cuFile and a recent NCCL come from their PyPI wheels (about
# 400 MB), cuBLAS, cuDNN, cuFFT, ... from the CUDA toolkit this machine has (/usr/local/cuda/lib64).
# KHIVE_NO_TORCH=1 skips it (the tests that need torch are then skipped). It takes about 2 GB, and up to 5 GB while
# it installs; the build and the tests need about 4 GB more. With less than KHIVE_TORCH_MIN_FREE_GB (default 10)
# free, torch is skipped with a warning rather than filling the disk under the build (a CI machine once ran out
# of disk compiling after torch went in).
tdir="$deps/torch"
torch_ok() { PYTHONPATH="$tdir" python3 -c "import torch, safetensors" >/dev/null 2>&1; }
min_free=${KHIVE_TORCH_MIN_FREE_GB:-10}
# Importing torch takes seconds: it is tried once, and after an install only the install's own check runs.
torch_where="no PyTorch (KHIVE_NO_TORCH=1)"
if [ "${KHIVE_NO_TORCH:-0}" != 1 ]; then
  if torch_ok; then
    torch_where="PyTorch in $tdir"
  elif [ "$(free_gb "$root")" -lt "$min_free" ]; then
    echo "setup: WARNING: not installing torch: $(free_gb "$root") GB free at $root, less than the ${min_free} GB torch," \
         "the build and the tests need (KHIVE_TORCH_MIN_FREE_GB). The tests that need torch will be skipped." >&2
    torch_where="no PyTorch (too little disk)"
  else
    echo "setup: installing torch==2.15.0 (PyPI) into .deps/torch"
    # --no-cache-dir: the wheels are not kept a second time in ~/.cache/pip (about 1 GB).
    pipq=(python3 -m pip install -q --no-cache-dir --disable-pip-version-check --target "$tdir")
    "${pipq[@]}" --no-deps torch==2.15.0
    # One call for all nvidia-* wheels: pip --target does not merge into an existing nvidia/ folder.
    "${pipq[@]}" --no-deps --upgrade nvidia-cusparselt-cu13==0.8.1 nvidia-nvshmem-cu13==3.7.2 nvidia-nccl-cu13==2.30.7 nvidia-cufile
    "${pipq[@]}" --upgrade filelock "typing-extensions>=4.13" "sympy>=1.13.3" "networkx>=2.5.1" jinja2 "fsspec>=0.8.5" numpy safetensors
    PYTHONPATH="$tdir" python3 -c "import torch, safetensors; torch.zeros(1)" || { echo "setup: torch does not import from .deps/torch" >&2; exit 1; }
    torch_where="PyTorch in $tdir"
  fi
fi
echo "setup: ok (CUTLASS headers in $inc; $torch_where)"
