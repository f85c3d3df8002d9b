#!/usr/bin/env bash
# Session 5, call 5 (nvidia-h200): the tuner (3 agents, 20 candidates, 55 s per task) after gemm.operand_relayout moved to second place,
# on the five fp32 GEMMs still under cuBLAS in call 4 or whose RELAYOUT point was not reached (kb08, kb07, kb03, kb02, kb17).
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:$PWD/.device2/lib:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/deps && tar xzf .device2/cutlass.tgz -C /tmp/deps
export KHIVE_KERNELS=$PWD/kernels KHIVE_CACHE=/tmp/khive-cache KHIVE_CUTLASS=/tmp/deps/cutlass
tar xzf .device2/bin.tgz -C /tmp && K=/tmp/bin/khive R=$OUT/res
mkdir -p $R; START=$(date +%s)
left() { echo $(( ${T0:-400} - $(date +%s) + START )); }
cap() { local l=$(left); [ "$1" -lt "$l" ] && echo "$1" || echo "$(( l > 1 ? l : 1 ))"; }
st() { local n=$1 t=$2; shift 2; local s=$(date +%s); timeout $(cap $t) "$@" > $R/$n.txt 2>&1; echo "$n rc=$? $(( $(date +%s) - s )) s" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $R/gpus.txt
git log -1 --format='%H %s' > $R/commit.txt 2>/dev/null
st calibrate 40 $K calibrate --backend cuda
cp $KHIVE_CACHE/profiles/*.json $R/ 2>/dev/null
TS="python3 bench/tune_suite.py --khive $K --backend cuda --agents 3 --budget 20 --time-cap 0.5 --gpus 1 --backups-per-family 4"
st suite_cg 380 $TS tasks/cutegen26 --budget-time 55 --out $R/suite-cutegen26 --tasks kb08_matmul_irregular,kb07_matmul_small_k,kb03_matmul_batched,kb02_matmul_standard,kb17_matmul_transposed_b --md $R/suite-cutegen26.md
for d in $R/suite-cutegen26/*-cuda; do timeout $(cap 10) python3 bench/run_workloads.py "$d" --khive $K --md "$d-workloads.md" > /dev/null 2>&1; done
cd $OUT && tar czf res.tgz res && rm -rf res
