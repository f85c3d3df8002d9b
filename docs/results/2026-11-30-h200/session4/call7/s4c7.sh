#!/usr/bin/env bash
# Session 4, call 7 (nvidia-h200): kb13 (symmetric operands, new binding) as hand-picked points against cuBLAS
# (interleaved A/B), then the tuner with a longer budget on the two fp32 GEMMs still under 0.9x (kb08, kb17).
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/deps && tar xzf .device2/cutlass.tgz -C /tmp/deps
export KHIVE_KERNELS=$PWD/kernels KHIVE_CACHE=/tmp/khive-cache KHIVE_CUTLASS=/tmp/deps/cutlass
K=$PWD/.device2/bin/khive R=$OUT/res KD=$PWD/.device2/kernels-c7
mkdir -p $R; START=$(date +%s)
left() { echo $(( ${T0:-250} - $(date +%s) + START )); }
cap() { local l=$(left); [ "$1" -lt "$l" ] && echo "$1" || echo "$(( l > 1 ? l : 1 ))"; }
st() { local n=$1 t=$2; shift 2; local s=$(date +%s); timeout $(cap $t) "$@" > $R/$n.txt 2>&1; echo "$n rc=$? $(( $(date +%s) - s )) s" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $R/gpus.txt
git log -1 --format='%H %s' > $R/commit.txt 2>/dev/null
st calibrate 30 $K calibrate --backend cuda
cp $KHIVE_CACHE/profiles/*.json $R/ 2>/dev/null
st kb13 60 $K bench tasks/cutegen26 --backend cuda --tasks kb13_matmul_symmetric --kernels $KD --seed 87 --ab-vendor --out $R/bench-kb13
TS="python3 bench/tune_suite.py --khive $K --backend cuda --agents 3 --budget 24 --time-cap 0.5 --gpus 1 --backups-per-family 4"
st suite_cg 150 $TS tasks/cutegen26 --budget-time 70 --out $R/suite-cutegen26 --tasks kb08_matmul_irregular,kb17_matmul_transposed_b --md $R/suite-cutegen26.md
for d in $R/suite-cutegen26/*-cuda; do python3 bench/run_workloads.py "$d" --khive $K --md "$d-workloads.md" > /dev/null 2>&1; done
cd $OUT && tar czf res.tgz res && rm -rf res
