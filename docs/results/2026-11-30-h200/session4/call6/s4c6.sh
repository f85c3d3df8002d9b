#!/usr/bin/env bash
# Session 4, call 6 (nvidia-h200): the tuner on sol/softmax again after the dispatcher's exact-shape fast path.
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/deps && tar xzf .device2/cutlass.tgz -C /tmp/deps
export KHIVE_KERNELS=$PWD/kernels KHIVE_CACHE=/tmp/khive-cache KHIVE_CUTLASS=/tmp/deps/cutlass
K=$PWD/.device2/bin/khive R=$OUT/res
mkdir -p $R
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $R/gpus.txt
git log -1 --format='%H %s' > $R/commit.txt 2>/dev/null
timeout 60 $K calibrate --backend cuda > $R/calibrate.txt 2>&1; cp $KHIVE_CACHE/profiles/*.json $R/ 2>/dev/null
timeout 100 python3 bench/tune_suite.py --khive $K --backend cuda --agents 3 --budget 16 --time-cap 0.5 --gpus 1 --backups-per-family 4 tasks/sol --budget-time 60 --out $R/suite-sol --tasks softmax --md $R/suite-sol.md > $R/suite_sol.txt 2>&1
python3 bench/run_workloads.py $R/suite-sol/softmax-cuda --khive $K --md $R/suite-sol/softmax-cuda-workloads.md > /dev/null 2>&1
cd $OUT && tar czf res.tgz res && rm -rf res
