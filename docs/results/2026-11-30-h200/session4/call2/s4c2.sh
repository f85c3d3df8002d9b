#!/usr/bin/env bash
# Session 4, call 2 (nvidia-h200): PyTorch re-measured for hardsigmoid, then hand-picked
# template points (khive-tune point, .device2/kernels-c2) through khive bench: softmax bf16 (all workloads),
# hardsigmoid fp32, kb06 fp32 split-K (interleaved A/B against cuBLAS).
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/deps && tar xzf .device2/cutlass.tgz -C /tmp/deps
export KHIVE_KERNELS=$PWD/kernels KHIVE_CACHE=/tmp/khive-cache KHIVE_CUTLASS=/tmp/deps/cutlass
K=$PWD/.device2/bin/khive R=$OUT/res KD=$PWD/.device2/kernels-c2
mkdir -p $R; START=$(date +%s)
left() { echo $(( ${T0:-560} - $(date +%s) + START )); }
cap() { local l=$(left); [ "$1" -lt "$l" ] && echo "$1" || echo "$(( l > 1 ? l : 1 ))"; }
st() { local n=$1 t=$2; shift 2; local s=$(date +%s); timeout $(cap $t) "$@" > $R/$n.txt 2>&1; echo "$n rc=$? $(( $(date +%s) - s )) s" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $R/gpus.txt
git log -1 --format='%H %s' > $R/commit.txt 2>/dev/null
st pt_cg 60 python3 bench/pytorch_baselines.py tasks/cutegen26 --device cuda --tasks kb28_hardsigmoid --out $R/pytorch-cg.json
st softmax 120 $K bench tasks/sol --backend cuda --tasks softmax --kernels $KD --seed 82 --out $R/bench-softmax
st demo_softmax 60 $K bench tasks/demo-cpu --backend cuda --tasks softmax --kernels $KD/demo --seed 82 --out $R/bench-demo-softmax
st hardsigmoid 90 $K bench tasks/cutegen26 --backend cuda --tasks kb28_hardsigmoid --kernels $KD --seed 82 --out $R/bench-hardsigmoid
st kb06 150 $K bench tasks/cutegen26 --backend cuda --tasks kb06_matmul_large_k --kernels $KD --seed 82 --ab-vendor --out $R/bench-kb06
st gemm 200 $K bench tasks/sol --backend cuda --tasks gemm_bf16 --kernels $KD --seed 82 --ab-vendor --perf-workloads 'M4096-N4096-K4096' --out $R/bench-gemm
cd $OUT && tar czf res.tgz res && rm -rf res
