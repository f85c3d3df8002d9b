#!/usr/bin/env bash
# call 4 (2 GPUs). GPU 0: hand-picked points vs cuBLAS(Lt)/PyTorch (gemm plan cache, kb06, router and flash rework),
# then part of the sol suite; GPU 1: the rest of the sol suite. One table for the suite at the end.
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:$PWD/.device2/lib:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/deps && tar xzf .device2/cutlass.tgz -C /tmp/deps
export KHIVE_KERNELS=$PWD/kernels KHIVE_CACHE=/tmp/khive-cache KHIVE_CUTLASS=/tmp/deps/cutlass
K=$PWD/.device2/bin/khive R=$OUT/res KD=$PWD/.device2/kernels4
mkdir -p $R; START=$(date +%s)
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $R/gpus.txt
CUDA_VISIBLE_DEVICES=0 $K calibrate --backend cuda --out $R/profile-h200.json > $R/calibrate.txt 2>&1
SUITE="python3 bench/tune_suite.py tasks/sol --khive $K --backend cuda --agents 3 --budget 12 --budget-time ${ST:-38} --gpus 1 --out $R/suite-sol"
left() { echo $(( ${T0:-540} - $(date +%s) + START )); }   # seconds left of this call's GPU time
cap() { local l=$(left); [ "$1" -lt "$l" ] && echo "$1" || echo "$(( l > 1 ? l : 1 ))"; }
(export CUDA_VISIBLE_DEVICES=0
 timeout $(cap 290) $SUITE --tasks rmsnorm,add_rmsnorm,layernorm,softmax,swiglu --md $R/suite-a.md > $R/suite-a.txt 2>&1
 timeout $(cap 100) $K bench tasks/sol --backend cuda --tasks gemm_bf16 --kernels $KD --ab-vendor --perf-workloads 'M4096-N4096-K4096' --seed 80 --out $R/bench-gemm > $R/bench-gemm.txt 2>&1
 timeout $(cap 110) $K bench tasks/sol --backend cuda --tasks attention,attention_causal --kernels $KD --perf-workloads 'S2048-Hq32|S4096-Hq64|B16-S512' --seed 80 --out $R/bench-attn > $R/bench-attn.txt 2>&1
 timeout $(cap 80) $K bench tasks/sol --backend cuda --tasks moe_router --kernels $KD --perf-workloads 'T2048-|T4096-|T16384-H7168' --seed 80 --out $R/bench-router > $R/bench-router.txt 2>&1) &
(export CUDA_VISIBLE_DEVICES=1
 timeout $(cap 540) $SUITE --tasks rope,moe_router,attention,attention_causal,attention_decode,gemm_bf16,gemm_residual,attn_o_proj_residual --md $R/suite-b.md > $R/suite-b.txt 2>&1) &
wait
python3 bench/tune_suite.py tasks/sol --collect --out $R/suite-sol --md $R/suite-sol.md > $R/suite-collect.txt 2>&1
cd $OUT && tar czf res.tgz res && rm -rf res
