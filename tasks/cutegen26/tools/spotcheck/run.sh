#!/bin/bash
# Spot check of the cutegen26 guards on the CPU: honest fp32 variants accepted, shortcuts rejected.
#   tasks/cutegen26/tools/spotcheck/run.sh [KHIVE]   (default build/bin/khive); prints one line per kernel
cd "$(dirname "$0")/../../../.."
KHIVE=${1:-build/bin/khive}
S=tasks/cutegen26/tools/spotcheck
for pair in kb02_matmul_standard:gemm_fp32_sequential kb02_matmul_standard:gemm_tf32 kb23_softmax:softmax_fp32 \
            kb23_softmax:softmax_no_max kb29_softplus:softplus_fp32 kb29_softplus:softplus_no_threshold; do
  t=${pair%%:*}; k=${pair##*:}
  out=$($KHIVE eval tasks/cutegen26/$t $S/$k.cpp --backend cpu --no-reference --time-cap 0.3 --seed 11 2>&1)
  rc=$?
  echo "$t $k rc=$rc: $(echo "$out" | grep -E "^verdict|REJECTED|HARNESS" | head -2 | tr '\n' ' ')"
done
