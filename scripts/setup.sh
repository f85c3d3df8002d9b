#!/usr/bin/env bash
# One-time set-up on a fresh Debian 12 machine: system packages and the CUTLASS/CuTe headers.
# Idempotent: re-running it only installs what is missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

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
  python3 -m pip install -q --no-deps --disable-pip-version-check --target "$deps/pip" nvidia-cutlass==4.2.0.0
  src="$deps/pip/cutlass_library/source"
  mkdir -p "$deps/cutlass"
  rm -rf "$deps/cutlass/include" "$deps/cutlass/util-include"
  cp -r "$src/include" "$deps/cutlass/include"
  cp -r "$src/tools/util/include" "$deps/cutlass/util-include"
  rm -rf "$deps/pip"   # only the headers are needed; keeps the folder small enough to carry to the GPU
fi
echo "setup: ok (CUTLASS headers in $inc)"
