#!/usr/bin/env bash
# The README's main job: set up, build, and optimize the embedded default with the hive (`khive optimize`):
# on a GPU the CUDA demo suite (tasks/demo-cuda), else the CPU demo suite (tasks/demo-cpu). Each task gets
# the built-in tuner (no model needed) plus a replay agent over the task's candidates/ when it has one.
# Per task: a run directory under $KHIVE_OUT (default .khive/main) with best.<ext>, run.db, events.jsonl,
# report.html. Knobs: KHIVE_SUITE, KHIVE_BUDGET (candidates per task), KHIVE_AGENTS (tuner agents).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
khive="${BUILD_DIR:-$root/build}/bin/khive"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  backend=cuda; ext=cu; suite=${KHIVE_SUITE:-$root/tasks/demo-cuda}; budget=${KHIVE_BUDGET:-40}
else
  backend=cpu; ext=cpp; suite=${KHIVE_SUITE:-$root/tasks/demo-cpu}; budget=${KHIVE_BUDGET:-12}
fi
agents=${KHIVE_AGENTS:-2}
out=${KHIVE_OUT:-$root/.khive/main}
stamp=$(date +%Y%m%d-%H%M%S)
echo "khive main job: backend $backend, suite $suite, $agents tuner agent(s), $budget candidates per task"
summary=()
for def in "$suite"/*/definition.json; do
  task=$(dirname "$def"); name=$(basename "$task")
  specs=(--agent tuner)
  n=$agents
  if compgen -G "$task/candidates/*.$ext" >/dev/null; then specs+=(--agent "replay:$task/candidates"); n=$((agents + 1)); fi
  run="$out/$name-$stamp"
  echo; echo "=== $name ==="
  if "$khive" optimize "$task" --backend "$backend" "${specs[@]}" --agents "$n" --budget-candidates "$budget" --out "$run"; then
    summary+=("$name: $(grep -m1 '^leader' <("$khive" report "$run") || echo 'no leader')   [$run]")
  else
    summary+=("$name: FAILED (see above)")
  fi
done
echo; echo "khive main job done ($backend):"
printf '  %s\n' "${summary[@]}"
