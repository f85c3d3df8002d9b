#!/usr/bin/env bash
# The README's main job: set up, build, and optimize the embedded default with the hive (`khive optimize`):
# on a GPU the suite of tasks/main-cuda.txt (softmax, add+RMSNorm, a bf16 GEMM at 4096^3 and prefill attention from
# tasks/sol, each on a few perf workloads within a time budget: a few minutes in all), else the CPU demo suite
# (tasks/demo-cpu). Each task gets the built-in tuner (no model needed) plus a replay agent over the task's
# candidates/ when it has one.
# Per task: a run directory under $KHIVE_OUT (default .khive/main) with best.<ext>, run.db, events.jsonl,
# report.html. Knobs: KHIVE_SUITE (a folder of tasks, instead of the default list), KHIVE_BUDGET (candidates per
# task), KHIVE_AGENTS (tuner agents), KHIVE_PREBUILT (no setup or build: below).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# KHIVE_PREBUILT=1: the binaries are already in $BUILD_DIR/bin (the lent GPU machine, which has no network for the
# packages the build needs, runs binaries built here: scripts/device.sh step main): no setup, no build.
if [ -z "${KHIVE_PREBUILT:-}" ]; then
  "$root/scripts/setup.sh"
  "$root/scripts/build.sh"
elif [ ! -x "${BUILD_DIR:-$root/build}/bin/khive" ]; then
  echo "main.sh: KHIVE_PREBUILT is set but ${BUILD_DIR:-$root/build}/bin/khive is not there: build it first (scripts/build.sh)" >&2
  exit 2
fi
khive="${BUILD_DIR:-$root/build}/bin/khive"
# The tasks, one "FOLDER PERF-REGEX BUDGET-S" line each ("-" for none): a list file's lines, or every task of a folder.
tasks=()
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  backend=cuda; ext=cu; budget=${KHIVE_BUDGET:-40}; list=$root/tasks/main-cuda.txt
else
  backend=cpu; ext=cpp; budget=${KHIVE_BUDGET:-12}; list=""
fi
suite=${KHIVE_SUITE:-${list:-$root/tasks/demo-cpu}}
if [ -f "$suite" ]; then
  while read -r t pat secs rest; do
    [ -z "$t" ] || [ "${t:0:1}" = "#" ] && continue
    if [ -z "$secs" ] || [ -n "$rest" ] || ! [[ "$secs" =~ ^[0-9]+$ ]] || [ ! -f "$root/tasks/$t/definition.json" ]; then
      echo "main.sh: $suite: expected 'TASK PERF-REGEX BUDGET-S' with tasks/TASK/definition.json, got: $t $pat $secs $rest" >&2
      exit 2
    fi
    tasks+=("$root/tasks/$t $pat $secs")
  done < "$suite"
else
  for def in "$suite"/*/definition.json; do tasks+=("$(dirname "$def") - -"); done
fi
agents=${KHIVE_AGENTS:-2}
out=${KHIVE_OUT:-$root/.khive/main}
stamp=$(date +%Y%m%d-%H%M%S)
echo "khive main job: backend $backend, suite $suite (${#tasks[@]} tasks), $agents tuner agent(s), $budget candidates per task"
summary=()
for spec in "${tasks[@]}"; do
  read -r task pat secs <<< "$spec"; name=$(basename "$task")
  specs=(--agent tuner)
  n=$agents
  if compgen -G "$task/candidates/*.$ext" >/dev/null; then specs+=(--agent "replay:$task/candidates"); n=$((agents + 1)); fi
  limits=(--budget-candidates "$budget")
  [ "$pat" != "-" ] && limits+=(--perf-workloads "$pat")
  [ "$secs" != "-" ] && limits+=(--budget-time "$secs")
  run="$out/$name-$stamp"
  label=""; [ "$pat" != "-" ] && label=" (perf workloads $pat, at most $secs s)"
  echo; echo "=== $name$label ==="
  if "$khive" optimize "$task" --backend "$backend" "${specs[@]}" --agents "$n" "${limits[@]}" --out "$run"; then
    summary+=("$name: $(grep -m1 '^leader' <("$khive" report "$run") || echo 'no leader')   [$run]")
  else
    summary+=("$name: FAILED (see above)")
  fi
done
echo; echo "khive main job done ($backend):"
printf '  %s\n' "${summary[@]}"
