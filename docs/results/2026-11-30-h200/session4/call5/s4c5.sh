#!/usr/bin/env bash
# Session 4, call 5 (nvidia-h200): the tuner (bench/tune_suite.py) after the tuner changes of call 4's findings:
# strategies round robin over templates, opportunistic per-shape composites, sm80 parallel split-K by default, the
# sm80 register rule: sol/softmax and cutegen26's fp32 GEMMs kb06, kb01, kb08, kb17.
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/deps && tar xzf .device2/cutlass.tgz -C /tmp/deps
export KHIVE_KERNELS=$PWD/kernels KHIVE_CACHE=/tmp/khive-cache KHIVE_CUTLASS=/tmp/deps/cutlass
K=$PWD/.device2/bin/khive R=$OUT/res
mkdir -p $R; START=$(date +%s)
left() { echo $(( ${T0:-560} - $(date +%s) + START )); }
cap() { local l=$(left); [ "$1" -lt "$l" ] && echo "$1" || echo "$(( l > 1 ? l : 1 ))"; }
st() { local n=$1 t=$2; shift 2; local s=$(date +%s); timeout $(cap $t) "$@" > $R/$n.txt 2>&1; echo "$n rc=$? $(( $(date +%s) - s )) s" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $R/gpus.txt
git log -1 --format='%H %s' > $R/commit.txt 2>/dev/null
st calibrate 60 $K calibrate --backend cuda
cp $KHIVE_CACHE/profiles/*.json $R/ 2>/dev/null
TS="python3 bench/tune_suite.py --khive $K --backend cuda --agents 3 --budget 16 --time-cap 0.5 --gpus 1 --backups-per-family 4"
st suite_sol 85 $TS tasks/sol --budget-time 60 --out $R/suite-sol --tasks softmax --md $R/suite-sol.md
st suite_cg 400 $TS tasks/cutegen26 --budget-time 60 --out $R/suite-cutegen26 --tasks kb06_matmul_large_k,kb01_matmul_square,kb08_matmul_irregular,kb17_matmul_transposed_b --md $R/suite-cutegen26.md
for d in $R/suite-sol/*-cuda $R/suite-cutegen26/*-cuda; do python3 bench/run_workloads.py "$d" --khive $K --md "$d-workloads.md" > /dev/null 2>&1; done
cd $OUT && tar czf res.tgz res && rm -rf res
