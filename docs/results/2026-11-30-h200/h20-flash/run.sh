#!/bin/bash
# GPU check of attention.cuda_flash after 2fe68cc: every hand-rendered point through the guard, JSON reports under
# ${OUT:-/tmp/h20-flash-out}. Run from the repository root with a built khive (KHIVE_BIN, default build/bin/khive).
set -u
KHIVE_BIN=${KHIVE_BIN:-build/bin/khive}
OUT=${OUT:-/tmp/h20-flash-out}
DIR=$(dirname "$0")
mkdir -p "$OUT"
for f in "$DIR"/*.cu; do
  name=$(basename "$f" .cu)
  case "$name" in causal-*) task=tasks/sol/attention_causal ;; *) task=tasks/sol/attention ;; esac
  echo "== $name ($task)"
  "$KHIVE_BIN" eval "$task" "$f" --backend cuda --out "$OUT/$name.json" 2>&1 | tail -15
done
