#!/usr/bin/env bash
# Session 4, call 3 (nvidia-h200): calibration into the cache; PyTorch re-measured for the tasks compared here; the
# helpers' new templates as hand-picked points (softmax ring, kb06 parallel split-K variants, kb12 broadcast row
# scale, kb14/kb15 triangular SIMT GEMM); then the tuner on sol/softmax (new defaults, ring template, tuner.dispatch).
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/deps && tar xzf .device2/cutlass.tgz -C /tmp/deps
export KHIVE_KERNELS=$PWD/kernels KHIVE_CACHE=/tmp/khive-cache KHIVE_CUTLASS=/tmp/deps/cutlass
K=$PWD/.device2/bin/khive R=$OUT/res KD=$PWD/.device2/kernels-c3
mkdir -p $R; START=$(date +%s)
left() { echo $(( ${T0:-570} - $(date +%s) + START )); }
cap() { local l=$(left); [ "$1" -lt "$l" ] && echo "$1" || echo "$(( l > 1 ? l : 1 ))"; }
st() { local n=$1 t=$2; shift 2; local s=$(date +%s); timeout $(cap $t) "$@" > $R/$n.txt 2>&1; echo "$n rc=$? $(( $(date +%s) - s )) s" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $R/gpus.txt
git log -1 --format='%H %s' > $R/commit.txt 2>/dev/null
st calibrate 90 $K calibrate --backend cuda
cp $KHIVE_CACHE/profiles/*.json $R/ 2>/dev/null
st pt_sol 40 python3 bench/pytorch_baselines.py tasks/sol --device cuda --tasks softmax --out $R/pytorch-sol.json
st pt_cg 60 python3 bench/pytorch_baselines.py tasks/cutegen26 --device cuda --tasks kb06_matmul_large_k,kb12_matmul_diag,kb14_matmul_upper_triangular,kb15_matmul_lower_triangular --out $R/pytorch-cg.json
st softmax 100 $K bench tasks/sol --backend cuda --tasks softmax --kernels $KD --seed 83 --out $R/bench-softmax
st kb06 90 $K bench tasks/cutegen26 --backend cuda --tasks kb06_matmul_large_k --kernels $KD --seed 83 --ab-vendor --out $R/bench-kb06
st tri 150 $K bench tasks/cutegen26 --backend cuda --tasks kb12_matmul_diag,kb14_matmul_upper_triangular,kb15_matmul_lower_triangular --kernels $KD --seed 83 --ab-vendor --out $R/bench-tri
st tune_softmax 150 $K optimize tasks/sol/softmax --backend cuda --agent tuner --agents 3 --budget-candidates 24 --budget-time 130 --backups-per-family 8 --time-cap 0.5 --seed 43 --quiet --out $R/tune-softmax
python3 bench/run_workloads.py $R/tune-softmax --khive $K --md $R/tune-softmax-workloads.md > /dev/null 2>&1
cd $OUT && tar czf res.tgz res && rm -rf res
