#!/usr/bin/env bash
# Session 5, call 2 (nvidia-h200): a map of gemm.cuda_sm80_simt points over the cutegen26 fp32 GEMMs (bigger warp
# tiles, deeper stages, with and without RELAYOUT of the K-contiguous operands; kb13 now reads S(A) column-major),
# medians only; then bf16 4096^3 (sol/gemm_bf16) cooperative 256x128 cluster 1x2 against cuBLASLt in interleaved A/B.
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:$PWD/.device2/lib:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/deps && tar xzf .device2/cutlass.tgz -C /tmp/deps
export KHIVE_KERNELS=$PWD/kernels KHIVE_CACHE=/tmp/khive-cache KHIVE_CUTLASS=/tmp/deps/cutlass
K=$PWD/.device2/bin/khive R=$OUT/res
mkdir -p $R; START=$(date +%s)
left() { echo $(( ${T0:-560} - $(date +%s) + START )); }
cap() { local l=$(left); [ "$1" -lt "$l" ] && echo "$1" || echo "$(( l > 1 ? l : 1 ))"; }
st() { local n=$1 t=$2; shift 2; local s=$(date +%s); timeout $(cap $t) "$@" > $R/$n.txt 2>&1; echo "$n rc=$? $(( $(date +%s) - s )) s" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $R/gpus.txt
git log -1 --format='%H %s' > $R/commit.txt 2>/dev/null
st calibrate 40 $K calibrate --backend cuda
cp $KHIVE_CACHE/profiles/*.json $R/ 2>/dev/null
st bench_map 400 $K bench tasks/cutegen26 --backend cuda --tasks kb01_matmul_square,kb02_matmul_standard,kb03_matmul_batched,kb07_matmul_small_k,kb08_matmul_irregular,kb17_matmul_transposed_b,kb13_matmul_symmetric --kernels $PWD/.device2/kernels-s5c2 --seed 92 --build-jobs 16 --out $R/bench-map
st bench_bf16 90 $K bench tasks/sol --backend cuda --tasks gemm_bf16 --kernels $PWD/.device2/kernels-s5c2sol --seed 93 --ab-vendor --perf-workloads 'M4096-N4096-K4096$' --build-jobs 16 --out $R/bench-bf16
cd $OUT && tar czf res.tgz res && rm -rf res
