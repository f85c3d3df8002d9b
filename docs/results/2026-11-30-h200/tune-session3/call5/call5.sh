#!/usr/bin/env bash
# call 5 (1 GPU): the sol task call 4 cut (attn_o_proj_residual), with the binaries at the final code (hive scores against PyTorch).
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/deps && tar xzf .device2/cutlass.tgz -C /tmp/deps
export KHIVE_KERNELS=$PWD/kernels KHIVE_CACHE=/tmp/khive-cache KHIVE_CUTLASS=/tmp/deps/cutlass
K=$PWD/.device2/bin/khive R=$OUT/res
mkdir -p $R
$K calibrate --backend cuda --out $R/profile-h200.json > $R/calibrate.txt 2>&1
timeout 130 python3 bench/tune_suite.py tasks/sol --khive $K --backend cuda --agents 3 --budget 12 --budget-time 38 --gpus 1 \
  --out $R/suite-sol --tasks attn_o_proj_residual --md $R/suite-o-proj.md > $R/suite-o-proj.txt 2>&1
cd $OUT && tar czf res.tgz res && rm -rf res
