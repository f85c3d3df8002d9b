#!/usr/bin/env bash
# Session 4, call 1 (nvidia-h200): PyTorch re-measured in the same call for the three gap tasks, then hand-picked
# template points (khive-tune point, .device2/kernels-c1) through khive bench: softmax bf16 (all workloads),
# hardsigmoid fp32, kb06 fp32 split-K (interleaved A/B against cuBLAS).
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/deps && tar xzf .device2/cutlass.tgz -C /tmp/deps
export KHIVE_KERNELS=$PWD/kernels KHIVE_CACHE=/tmp/khive-cache KHIVE_CUTLASS=/tmp/deps/cutlass
K=$PWD/.device2/bin/khive R=$OUT/res KD=$PWD/.device2/kernels-c1
mkdir -p $R; START=$(date +%s)
left() { echo $(( ${T0:-560} - $(date +%s) + START )); }
cap() { local l=$(left); [ "$1" -lt "$l" ] && echo "$1" || echo "$(( l > 1 ? l : 1 ))"; }
st() { local n=$1 t=$2; shift 2; local s=$(date +%s); timeout $(cap $t) "$@" > $R/$n.txt 2>&1; echo "$n rc=$? $(( $(date +%s) - s )) s" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $R/gpus.txt
git log -1 --format='%H %s' > $R/commit.txt 2>/dev/null
st pt_sol 60 python3 bench/pytorch_baselines.py tasks/sol --device cuda --tasks softmax --out $R/pytorch-sol.json
st pt_cg 90 python3 bench/pytorch_baselines.py tasks/cutegen26 --device cuda --tasks kb28_hardsigmoid,kb31_elu,kb06_matmul_large_k --out $R/pytorch-cg.json
st softmax 150 $K bench tasks/sol --backend cuda --tasks softmax --kernels $KD --seed 81 --out $R/bench-softmax
st hardsigmoid 120 $K bench tasks/cutegen26 --backend cuda --tasks kb28_hardsigmoid --kernels $KD --seed 81 --out $R/bench-hardsigmoid
st kb06 150 $K bench tasks/cutegen26 --backend cuda --tasks kb06_matmul_large_k --kernels $KD --seed 81 --ab-vendor --out $R/bench-kb06
cd $OUT && tar czf res.tgz res && rm -rf res
