#!/usr/bin/env bash
# Session 5, call 1 (nvidia-h200): gemm.cuda_sm80_simt RELAYOUT_A / RELAYOUT_B (K-contiguous operands copied M- / N-
# contiguous first) as hand-picked points on kb17 (both operands K-contiguous), kb02 and kb01 (A K-contiguous), against
# cuBLAS in interleaved A/B; then the tuner (3 agents, 24 candidates) on kb17 and on kb13 (symmetric binding).
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:$PWD/.device2/lib:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/deps && tar xzf .device2/cutlass.tgz -C /tmp/deps
export KHIVE_KERNELS=$PWD/kernels KHIVE_CACHE=/tmp/khive-cache KHIVE_CUTLASS=/tmp/deps/cutlass
K=$PWD/.device2/bin/khive R=$OUT/res KD=$PWD/.device2/kernels-s5c1
mkdir -p $R; START=$(date +%s)
left() { echo $(( ${T0:-560} - $(date +%s) + START )); }
cap() { local l=$(left); [ "$1" -lt "$l" ] && echo "$1" || echo "$(( l > 1 ? l : 1 ))"; }
st() { local n=$1 t=$2; shift 2; local s=$(date +%s); timeout $(cap $t) "$@" > $R/$n.txt 2>&1; echo "$n rc=$? $(( $(date +%s) - s )) s" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $R/gpus.txt
git log -1 --format='%H %s' > $R/commit.txt 2>/dev/null
st calibrate 40 $K calibrate --backend cuda
cp $KHIVE_CACHE/profiles/*.json $R/ 2>/dev/null
st bench_gemm 200 $K bench tasks/cutegen26 --backend cuda --tasks kb17_matmul_transposed_b,kb02_matmul_standard,kb01_matmul_square --kernels $KD --seed 91 --ab-vendor --build-jobs 16 --out $R/bench-gemm
TS="python3 bench/tune_suite.py --khive $K --backend cuda --agents 3 --budget 24 --time-cap 0.5 --gpus 1 --backups-per-family 4"
st suite_cg 300 $TS tasks/cutegen26 --budget-time 80 --out $R/suite-cutegen26 --tasks kb17_matmul_transposed_b,kb13_matmul_symmetric --md $R/suite-cutegen26.md
for d in $R/suite-cutegen26/*-cuda; do python3 bench/run_workloads.py "$d" --khive $K --md "$d-workloads.md" > /dev/null 2>&1; done
cd $OUT && tar czf res.tgz res && rm -rf res
