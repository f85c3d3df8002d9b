#!/usr/bin/env bash
# The tuner's CUDA templates on the GPU: for each task, render the first N proposals of every strategy (as the
# agent makes them, no leader), build them, and run each through `khive eval --backend cuda`. Writes
# OUT/<task>/*.cu, OUT/<task>/*.json (khive.eval/1 reports) and OUT/summary.tsv
# (task, kernel, exit code, accepted, task score, median of the first perf workload).
#
# usage: bench/tuner_cuda.sh BUILD_DIR OUT_DIR PER_STRATEGY TASK_DIR...
#   e.g. bench/tuner_cuda.sh build-device "$OUT/tuner" 2 tasks/demo-cuda/vector_add_large tasks/sol/softmax \
#        tasks/sol/add_rmsnorm tasks/sol/gemm_residual tasks/cutegen26/kb23_softmax tasks/cutegen26/kb01_matmul_square
set -u
build=$1 out=$2 per=$3
shift 3
mkdir -p "$out"
summary="$out/summary.tsv"
printf 'task\tkernel\texit\taccepted\tscore\tmedian_s\n' > "$summary"
for task in "$@"; do
  name=$(basename "$task")
  dir="$out/$name"
  mkdir -p "$dir"
  "$build/bin/khive-tune" render "$task" --backend cuda --out "$dir" --per-strategy "$per" --build 2>&1 | tee "$dir/render.log"
  while IFS=$'\t' read -r file strategy point; do
    "$build/bin/khive" eval "$task" "$dir/$file" --backend cuda --json --out "$dir/${file%.cu}.json" > /dev/null 2> "$dir/${file%.cu}.err"
    rc=$?
    python3 - "$dir/${file%.cu}.json" "$name" "$file" "$rc" >> "$summary" <<'PY'
import json, sys
path, task, kernel, rc = sys.argv[1:5]
try:
    r = json.load(open(path))
    w = r.get("workloads") or [{}]
    med = (w[0].get("kernel") or {}).get("median_s")
    print(f"{task}\t{kernel}\t{rc}\t{r.get('accepted')}\t{r.get('task_score')}\t{med}")
except Exception as e:
    print(f"{task}\t{kernel}\t{rc}\tNone\tNone\tNone")
PY
    tail -n 1 "$summary"
  done < "$dir/list.tsv"
done
