#!/usr/bin/env bash
# Runs on the lent GPU machine (the `device` tool), in one call: checks the carried build, calibrates,
# runs the GPU tests and the benchmarks, and writes everything under $OUT.
#
# Here (no GPU):  BUILD_DIR=build-device BUILD_TYPE=Release scripts/build.sh, then copy bin/khive* and tests/unit_numerics
#                 into .device/ and strip them (a whole build folder is over the device tool's 64 MiB)
# Then:           device run, carry [.device, .deps/cutlass], command "BUILD_DIR=.device scripts/device.sh"
# Issue 23's GEMMs (step gemm23, below): DEVICE_STEPS=gemm23 SKIP_CAL=1 SKIP_UNIT=1 SKIP_SANDBOX=1 BUILD_DIR=.device
#                 scripts/device.sh (the GPU test, then khive bench of the GEMV and 3xTF32 points against the vendors)
# Issue 22's Hopper attention (step attn22, below): DEVICE_STEPS=attn22 SKIP_CAL=1 SKIP_UNIT=1 SKIP_SANDBOX=1
#                 BUILD_DIR=.device scripts/device.sh (tests/gpu/attention_sm90.py, then khive bench of attention.cuda_sm90's
#                 points beside attention.cuda_flash's default on sol/attention and attention_causal against PyTorch)
# Issue 23's speculative builds (step prebuild_ab, below): DEVICE_STEPS=prebuild_ab SKIP_CAL=1 SKIP_UNIT=1 SKIP_SANDBOX=1
#                 BUILD_DIR=.device scripts/device.sh (the tuner from scratch on gemm_bf16 4096^3, --prebuild 0 against 8)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${OUT:-$root/.device-out}
mkdir -p "$out"
bin=${BUILD_DIR:-$root/build-device}/bin
log() { echo "== $*" | tee -a "$out/device.log"; }

log "machine: $(date -u +%FT%TZ) $(uname -r) $(nproc) cores"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu --format=csv | tee -a "$out/device.log"
# The binaries were built on the developers' image: find the CUDA libraries they need here.
if ldd "$bin/khive-judge" | grep -q "not found"; then
  for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib $(dirname "$(find / -name 'libcublas.so.13' -print -quit 2>/dev/null)"); do
    [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"
  done
fi
ldd "$bin/khive-judge" "$bin/khive-exec" | grep -E "cuda|cublas|not found" | tee -a "$out/device.log"
export KHIVE_CACHE=/tmp/khive-cache
export KHIVE_CUTLASS="${KHIVE_CUTLASS:-$root/.deps/cutlass}"   # or a copy unpacked from a carried tarball
export PATH="$bin:$PATH"
nvcc --version | tail -1 | tee -a "$out/device.log"
# Binaries carried from an older tree than this one misread it (a template family they do not know fails the whole
# library): stop before any step spends device time on that.
if ! err=$(khive-tune --kernels kernels show tasks/demo-cpu/vector_add --backend cuda 2>&1 >/dev/null); then
  log "the carried binaries cannot read this tree's kernels/ (built from an older tree? rebuild them): $err"
  exit 2
fi

step() {  # step NAME TIMEOUT CMD...: run with a time limit, keep its output
  local name=$1 t=$2; shift 2
  log "$name"
  local s=$(date +%s%N)
  # SIGTERM at the limit (khive bench then finishes the task in hand and keeps every finished one), SIGKILL 30 s on
  timeout -k "${STEP_KILL_AFTER:-30}" "$t" "$@" >"$out/$name.txt" 2>&1
  local rc=$?
  local ms=$(( ($(date +%s%N) - s) / 1000000 ))
  echo "$name rc=$rc ${ms} ms" | tee -a "$out/device.log"
  tail -n "${TAIL:-25}" "$out/$name.txt"
  return $rc
}

# compose_routes WORKLOAD_JSONL PREDICATE: `khive-tune compose`'s --route arguments for every timed CUDA workload,
# variant 1 where the Python PREDICATE over the workload's axes `a` holds, else 0.
compose_routes() {
  python3 -c 'import json, sys
for w in map(json.loads, open(sys.argv[1])):
    k, a = w["khive"], w["axes"]
    if k["role"] in ("perf", "both") and "cuda" in k.get("backends", ["cuda"]):
        print("--route", w["uuid"] + "=" + str(int(bool(eval(sys.argv[2], {}, {"a": a})))))' "$1" "$2"
}

# eval_row REPORT WORKLOAD TASK LABEL RUN: one table row of a khive eval report's judge median, the executor events'
# median, the calibrated overhead and the gate's time for WORKLOAD.
eval_row() {
  python3 -c 'import json,sys; sys.path.insert(0,"bench"); import fidelity as F; r=json.load(open(sys.argv[1])); t=F.khive_times(r).get(sys.argv[2]) or {}; g=[x for x in (r.get("candidate") or {}).get("timing") or [] if x.get("workload")==sys.argv[2]] or [{}]; m, e, o, q=(1e6*(v or 0) for v in (t.get("median_s"), t.get("events_s"), g[0].get("overhead_s"), g[0].get("gate_s"))); print(f"| {sys.argv[3]} | {sys.argv[2]} | {sys.argv[4]} | run {sys.argv[5]} | judge {m:.2f} us | events {e:.2f} us | overhead {o:.2f} us | gate {q:.2f} us |")' "$@"
}

# eval_case TASK SOURCE WORKLOAD REPORT [LIMIT_S]: khive eval of SOURCE on one perf workload, seed 11, no reference,
# baselines or PyTorch timed, its JSON report written to REPORT (within LIMIT_S seconds when given).
eval_case() {
  ${5:+timeout "$5"} khive eval "$1" "$2" --backend cuda --json --no-reference --no-baselines --no-pytorch --seed 11 \
    --perf-workloads "^$3\$" --out "$4"
}

# with_load SPEC CMD...: CMD while bench/context_load.py holds more CUDA contexts (SPEC: none, idleN or pendingN,
# with :M for a spacer of M MiB held by the first of them, e.g. idle1:34).
with_load() {
  local spec=$1 mib=0; shift
  case $spec in *:*) mib=${spec#*:}; spec=${spec%%:*} ;; esac
  case $spec in
    none) "$@"; return ;;
    idle*) set -- --idle "${spec#idle}" -- "$@" ;;
    pending*) set -- --pending "${spec#pending}" -- "$@" ;;
    *) log "with_load: '$spec' is not none, idleN or pendingN (with :MiB)"; return 2 ;;
  esac
  local flag=$1 n=$2; shift 3
  rm -f /tmp/context-load.txt
  python3 bench/context_load.py "$flag" "$n" --spacer-mib "$mib" --timeout-s 300 < <(sleep 300) > /tmp/context-load.txt 2>&1 & local lp=$!
  for _ in $(seq 1 300); do grep -q '^ready' /tmp/context-load.txt 2>/dev/null && break; kill -0 $lp 2>/dev/null || break; sleep 0.1; done
  grep -q '^ready' /tmp/context-load.txt || { log "with_load $spec: $(cat /tmp/context-load.txt)"; kill $lp 2>/dev/null; return 1; }
  "$@"; local rc=$?
  kill $lp 2>/dev/null; wait $lp 2>/dev/null
  return $rc
}

# kernel_source TASK KIND: the path of a kernel to evaluate: best (bench/fidelity_kernels.json's tuner point for the
# task, rendered by khive-tune into /tmp), ref (the task's reference.cu) or KIND itself (a .cu path).
kernel_source() {
  local t=$1 k=$2
  case $k in
    # best: the recorded point, else (as bench/fidelity.py) the default point of the tuner's first template.
    best) local src=/tmp/best-$(basename "$t").cu args
          args=$(python3 -c 'import json,sys; p=json.load(open("bench/fidelity_kernels.json"))["tasks"].get(sys.argv[1]); print(*(["--template", p["template"], *[f"--set {k}={v}" for k, v in p["set"].items()]] if p else []))' "${t#tasks/}")
          [ -n "$args" ] || args="--template $(khive-tune --kernels kernels show "$t" --backend cuda | awk '$1 == "template" {print $2; exit}')"
          khive-tune --kernels kernels point "$t" --backend cuda $args --out "$src" > /dev/null
          echo "$src" ;;
    ref)  echo "$t/reference.cu" ;;
    *)    echo "$k" ;;
  esac
}

# Saved into khive's cache (not --out), where every later eval/bench/optimize of this call finds it: T_sol from the
# measured ceilings, as DESIGN says; a copy goes to $out for the record.
[ -z "${SKIP_CAL:-}" ] && step calibrate ${CAL_T:-300} khive calibrate --backend cuda
cp "$KHIVE_CACHE"/profiles/*.json "$out/" 2>/dev/null
if [ -z "${SKIP_UNIT:-}" ] && [ -x "${BUILD_DIR:-$root/build-device}/tests/unit_numerics" ]; then
  step unit_numerics_gpu 300 "${BUILD_DIR:-$root/build-device}/tests/unit_numerics" --gtest_filter='*Device*:*device*'
fi
# The executor's sandbox under the CUDA driver: the layers each executor reported (a layer off says why).
[ -z "${SKIP_SANDBOX:-}" ] && step sandbox_cuda 120 khive eval tasks/demo-cpu/vector_add tasks/demo-cpu/vector_add/reference.cu --backend cuda --json \
  --no-reference --no-baselines --out "$out/sandbox-cuda.json"
# One eval at a time on the GPU: two judges on one device see each other's work (check 8's drain, the timing).
for s in ${DEVICE_STEPS:-honest redteam null_ab bench}; do
  case $s in
    # The gated clock's raw numbers (bench/gate_probe: two processes, no khive), then one solo eval and one A/B of
    # the demo's vector add, with their clocks side by side (bench/eval_summary.py).
    smoke)   if [ "${PROBE:-1}" = 1 ]; then step gate_probe ${PROBE_T:-150} "$bin/../gate_probe" 200; cp "$out/gate_probe.txt" "$out/gate-probe.json"; fi
             # A solo eval that gives no verdict means the clock itself is broken: every later step would only wait.
             step eval_solo ${SMOKE_T:-150} khive eval tasks/demo-cpu/vector_add tasks/demo-cpu/vector_add/reference.cu --backend cuda --json \
               --no-reference --no-baselines --out "$out/eval-solo.json" || { log "smoke: no verdict, later steps skipped"; break; }
             step eval_ab ${SMOKE_T:-200} khive eval tasks/demo-cpu/vector_add tasks/demo-cpu/vector_add/candidates/float4.cu \
               --leader tasks/demo-cpu/vector_add/reference.cu --backend cuda --json --no-reference --no-baselines --out "$out/eval-ab.json"
             python3 bench/eval_summary.py "$out/eval-solo.json" "$out/eval-ab.json" | tee -a "$out/device.log" ;;
    # A task whose only reference is PyTorch (an imported KernelBench ReLU): its reference runs in khive-jail with the
    # CUDA driver, nvcc builds in the jail (tests/gpu/pytorch_reference_cuda.py).
    jail)    step jail_cuda ${JAIL_T:-300} python3 tests/gpu/pytorch_reference_cuda.py "$bin/khive" "$root" ;;
    # PyTorch on the judge's ruler (python/khive_torch/timed.py): one eval whose T_b is PyTorch timed by the judge, then
    # the suite's bench so (--pytorch-ruler judge) against PyTorch timed in-process (bench/pytorch_baselines.py), side by
    # side (bench/pytorch_ruler.py). PT_SUITE: a suite name; PT_TASKS: comma-separated task names (default: all).
    # PT_SMOKE_TASK: the smoke's task (its reference.cu is the candidate); PT_INPROC_ARGS: pytorch_baselines.py's further
    # arguments (--host-ahead, --gap-ms); PT_BENCH=0 skips the bench and compares with PT_JUDGE_JSON (an earlier bench.json).
    # pt_smoke alone: the smoke's eval (PyTorch's run on the judge, its phases), nothing else.
    pytorch_judge|pt_smoke)
             pt_task=${PT_SMOKE_TASK:-tasks/demo-cpu/vector_add}
             step pt_smoke ${PT_SMOKE_T:-150} khive eval "$pt_task" "$pt_task/reference.cu" --backend cuda --json \
               --no-reference --pytorch-ruler judge --out "$out/pt-smoke.json"
             python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d.get("pytorch_run") or {}; print("pytorch_baselines", d.get("pytorch_baselines")); print("pytorch_run accepted", r.get("accepted"), "rejection", r.get("rejection"), "harness", r.get("harness_error"), "judge_s", r.get("judge_seconds"), "phases", r.get("phases")); [print(" ", w["workload"], w["baseline_label"], w["pytorch"] and w["pytorch"]["median_s"]) for w in d["workloads"]]' \
               "$out/pt-smoke.json" 2>&1 | tee -a "$out/device.log"
             [ "$s" = pt_smoke ] && continue
             if [ -n "${PT_INPROC_JSON:-}" ]; then  # an in-process file measured before (e.g. the suite's baselines file)
               cp "$PT_INPROC_JSON" /tmp/pt-inproc.json
             else
               step pt_inproc ${PT_INPROC_T:-240} python3 bench/pytorch_baselines.py tasks/${PT_SUITE:-sol} --device cuda --out /tmp/pt-inproc.json \
                 ${PT_TASKS:+--tasks "$PT_TASKS"} ${PT_INPROC_ARGS:-}
               cp /tmp/pt-inproc.json "$out/pt-inproc-${PT_SUITE:-sol}.json"
             fi
             pt_judge=${PT_JUDGE_JSON:-$out/bench-pt-${PT_SUITE:-sol}/bench.json}
             if [ "${PT_BENCH:-1}" != 0 ]; then
               TAIL=${TAIL:-40} step pt_bench ${PT_BENCH_T:-420} khive bench tasks/${PT_SUITE:-sol} --backend cuda --pytorch-ruler judge \
                 --out "$out/bench-pt-${PT_SUITE:-sol}" ${PT_TASKS:+--tasks "$PT_TASKS"}
             fi
             step pt_ruler 60 python3 bench/pytorch_ruler.py "$pt_judge" /tmp/pt-inproc.json --out "$out/pytorch-ruler-${PT_SUITE:-sol}.md" ;;
    # A task's new reference against its old one (AGREE="task=old.cu task2=old2.cu"): the old file evaluated as the
    # candidate, goldens from the new one, every correctness workload; AGREE_PERF limits the timed workloads.
    agree)   for pair in ${AGREE:-}; do
               t=${pair%%=*}; f=${pair#*=}
               step "agree_$(basename "$t")" ${AGREE_T:-240} khive eval "$t" "$f" --backend cuda --json --no-baselines --no-pytorch \
                 ${AGREE_PERF:+--perf-workloads "$AGREE_PERF"} --out "$out/agree-$(basename "$t").json"
             done ;;
    # Which of khive's differences from the in-process harness slows a kernel (bench/ruler_probe.py). PROBE_CASES:
    # "task@workload@kernel@samples@gap_ms" separated by spaces; kernel: best (bench/fidelity_kernels.json's point),
    # ref (the task's reference.cu) or a .cu path. A clock log (100 ms) runs alongside.
    probe)   nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active \
               --format=csv -lms 100 > "$out/probe-clocks.csv" 2>&1 & smi=$!
             last=""
             for c in ${PROBE_CASES:-}; do
               IFS=@ read -r t w k n g <<< "$c"; name=$(basename "$t")-$(echo "$w" | tr -c 'A-Za-z0-9\n-' _)-$(basename "$k" .cu)-gap$g
               src=$(kernel_source "$t" "$k")
               # the same task, workload and kernel as the case before (another gap): its eval and build stand
               # (a failed eval must not leave the previous case's report behind: the probe would time that library)
               if [ "$t@$w@$k" != "$last" ]; then
                 rm -f /tmp/probe-eval.json
                 eval_case "$t" "$src" "$w" /tmp/probe-eval.json > "$out/probe-eval-$name.txt" 2>&1
               fi
               last="$t@$w@$k"
               [ -s /tmp/probe-eval.json ] || { log "probe $name: khive eval wrote no report (probe-eval-$name.txt)"; continue; }
               TAIL=${TAIL:-16} step "probe_$name" ${PROBE_T:-200} python3 bench/ruler_probe.py --eval-json /tmp/probe-eval.json --task "$t" --workload "$w" \
                 --samples "$n" --gap-ms "$g" ${PROBE_ARGS:-} --out "$out/probe-$name.md" --json "$out/probe-$name.json"
             done
             kill $smi ;;
    # The executor's primer experiment (KHIVE_EXEC_PRIMER, executor/device_cuda.cu): each PRIMER_CASES entry
    # "task@workload@best|ref|path" evaluated with the primer off and on (PRIMER_BLOCKS per SM, default 2), alternating
    # PRIMER_REPS times (default 2); per run in $out/primer.md the judge's and the executor events' medians, and the
    # gate's calibrated overhead (the primer's time shows there: it runs inside the gate, in the calibrations too).
    # PRIMER_VAR=KHIVE_EXEC_TLB PRIMER_VALUES="0 1": the same alternation for another of the executor's switches.
    primer)  : > "$out/primer.md"; pv=${PRIMER_VAR:-KHIVE_EXEC_PRIMER}
             for c in ${PRIMER_CASES:-}; do
               IFS=@ read -r t w k <<< "$c"; src=$(kernel_source "$t" "$k")
               for r in $(seq 1 "${PRIMER_REPS:-2}"); do
                 for p in ${PRIMER_VALUES:-0 ${PRIMER_BLOCKS:-2}}; do
                   f="$out/primer-$(basename "$t")-$r-$p.json"
                   (export "$pv=$p"; eval_case "$t" "$src" "$w" "$f" 200) > "$out/primer-$(basename "$t")-$r-$p.txt" 2>&1
                   rc=$?
                   # exit 0 accepted; anything else: the line says so (the .txt holds khive's output)
                   [ -s "$f" ] || { echo "| $(basename "$t") | $w | primer $p | run $r | khive eval exit $rc, no report |" | tee -a "$out/primer.md"; continue; }
                   [ $rc = 0 ] || echo "| $(basename "$t") | $w | primer $p | run $r | khive eval exit $rc (not accepted) |" | tee -a "$out/primer.md"
                   eval_row "$f" "$w" "$(basename "$t")" "$pv=$p" "$r" | tee -a "$out/primer.md"
                 done
               done
             done ;;
    # What in khive's surroundings slows a kernel (issue 21): ENVPROBE_CASES "task@workload@best|ref|path" evaluated
    # under each of ENVPROBE_CONDS in turn, ENVPROBE_REPS rounds: base, pin0 (KHIVE_CPU_PIN=0), primer0, trial=WORDS
    # (KHIVE_EXEC_TRIAL, executor/gate.hpp), idleN / pendingN (N more processes holding a CUDA context, idle or with a
    # stream blocked on a device wait: bench/context_load.py; idleN:M also holds M MiB ahead of the judge's arena,
    # which then lands elsewhere: the place, not the context). Then
    # bench/ruler_probe.py's ENVPROBE_VARIANTS under each of ENVPROBE_LOADS (a load, +l2zero: --persisting-l2-zero,
    # +eager: CUDA_MODULE_LOADING=EAGER as khive's executors). All rows in $out/envprobe.md.
    envprobe) : > "$out/envprobe.md"
             # the SM clock alongside (50 ms), and when each evaluation and probe ran, to line the two up
             nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active \
               --format=csv -lms 50 > "$out/envprobe-clocks.csv" 2>&1 & smi=$!
             stamp() { echo "$(date -u +%H:%M:%S.%3N) $*" >> "$out/envprobe-times.txt"; }
             for c in ${ENVPROBE_CASES:-}; do
               IFS=@ read -r t w k <<< "$c"; src=$(kernel_source "$t" "$k")
               for r in $(seq 1 "${ENVPROBE_REPS:-3}"); do
                 for cond in ${ENVPROBE_CONDS:-base pin0 idle2 pending1}; do
                   f=/tmp/envprobe-$r-$cond.json; rm -f "$f"; load=none; pin=1; trial=; primer=${KHIVE_EXEC_PRIMER:-}
                   case $cond in base) ;; pin0) pin=0 ;; primer0) primer=0 ;; trial=*) trial=${cond#trial=} ;; *) load=$cond ;; esac
                   stamp "eval $cond run $r start"
                   KHIVE_CPU_PIN=$pin KHIVE_EXEC_TRIAL=$trial KHIVE_EXEC_PRIMER=$primer with_load "$load" eval_case "$t" "$src" "$w" "$f" 200 \
                     > /tmp/envprobe-eval.txt 2>&1
                   rc=$?; stamp "eval $cond run $r end"
                   [ -s "$f" ] || { echo "| $(basename "$t") | $w | $cond | run $r | khive eval exit $rc, no report: $(tail -c 300 /tmp/envprobe-eval.txt | tr '\n|' '  ') |" | tee -a "$out/envprobe.md"; continue; }
                   eval_row "$f" "$w" "$(basename "$t")" "$cond" "$r" | tee -a "$out/envprobe.md"
                 done
               done
               [ -s "$f" ] || continue
               for spec in ${ENVPROBE_LOADS:-none idle2 pending1}; do
                 load=${spec%%+*}; l2=
                 case $spec in *+l2zero*) l2=--persisting-l2-zero ;; esac
                 case $spec in *+eager*) export CUDA_MODULE_LOADING=EAGER ;; esac
                 echo "### ruler_probe with load $spec" >> "$out/envprobe.md"; stamp "probe $spec start"
                 with_load "$load" timeout ${PROBE_T:-120} python3 bench/ruler_probe.py $l2 --eval-json "$f" --task "$t" --workload "$w" \
                   --samples ${ENVPROBE_SAMPLES:-150} --gap-ms 2 --lead-us 300 --variants ${ENVPROBE_VARIANTS:-plain,foreign_judge} \
                   --out /tmp/envprobe-probe.md > /tmp/envprobe-probe.txt 2>&1 || tail -5 /tmp/envprobe-probe.txt >> "$out/envprobe.md"
                 grep -E '^\| (variant|---|[a-z_+0-9]+ \|)' /tmp/envprobe-probe.md >> "$out/envprobe.md" 2>/dev/null
                 grep -E '^khive eval' /tmp/envprobe-probe.md >> "$out/envprobe.md" 2>/dev/null
                 unset CUDA_MODULE_LOADING; stamp "probe $spec end"
               done
             done
             kill $smi; cat "$out/envprobe.md" ;;
    # The same kernel profiled by ncu in khive's executor and in ruler_probe's plain variant (issue 21: does the kernel
    # itself run differently there, cycles and instructions, or only its surroundings?). NCU_CASE "task@workload@kernel";
    # no cache or clock control, so each process's own surroundings stay; khive's sandbox off (ncu must attach), ncu
    # around khive's executor only (KHIVE_EXEC_PROFILER).
    ncu_compare) IFS=@ read -r t w k <<< "${NCU_CASE:?}"; src=$(kernel_source "$t" "$k"); kn=${NCU_KERNEL:-regex:.}
             m=gpu__time_duration.sum,sm__cycles_elapsed.max,smsp__inst_executed.sum,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,dram__bytes_write.sum,sm__cycles_active.avg,launch__grid_size,launch__block_size,launch__registers_per_thread,launch__shared_mem_per_block_dynamic,launch__shared_mem_config_size
             ncu_run() { timeout ${NCU_T:-200} ncu --target-processes all --cache-control none --clock-control none -k "$kn" \
                           -c ${NCU_COUNT:-60} --metrics $m --csv "$@"; }
             rm -f /tmp/ncu-eval.json
             eval_case "$t" "$src" "$w" /tmp/ncu-eval.json 200 > "$out/ncu-eval-plain.txt" 2>&1
             [ -s /tmp/ncu-eval.json ] || { log "ncu_compare: khive eval wrote no report"; continue; }
             # ncu around the executor alone (KHIVE_EXEC_PROFILER, executor/gate.hpp): following the whole `khive eval`
             # crashed the judge (session 11). The CSV goes to a file: the executor's stdout is the judge's log pipe.
             rm -f /tmp/ncu-khive-exec.csv
             KHIVE_EXEC_TRIAL=no_sandbox KHIVE_EXEC_PROFILER="$(command -v ncu) --target-processes all --cache-control none \
               --clock-control none -k $kn -c ${NCU_COUNT:-60} --metrics $m --csv --log-file /tmp/ncu-khive-exec.csv" \
               timeout ${NCU_T:-200} khive eval "$t" "$src" --backend cuda --json --no-reference --no-baselines --no-pytorch \
               --seed 11 --perf-workloads "^$w\$" --timeout ${NCU_EVAL_TIMEOUT:-150} --out /tmp/ncu-eval2.json > "$out/ncu-khive-eval.txt" 2>&1
             tail -5 "$out/ncu-khive-eval.txt"; cp /tmp/ncu-khive-exec.csv "$out/ncu-khive.csv" 2>/dev/null || log "ncu_compare: no CSV from the executor's ncu"
             ncu_run python3 bench/ruler_probe.py --eval-json /tmp/ncu-eval.json --task "$t" --workload "$w" --samples 40 \
               --gap-ms 2 --variants plain --out /tmp/ncu-probe.md > "$out/ncu-probe.csv" 2>&1
             python3 - "$out/ncu-khive.csv" "$out/ncu-probe.csv" <<'PY' | tee "$out/ncu-compare.md"
import csv, statistics, sys
for path in sys.argv[1:]:
    rows = [r for r in csv.reader(l for l in open(path, errors="replace") if l.startswith('"'))]
    if not rows: print(f"{path}: no ncu rows"); continue
    head, by = rows[0], {}
    ix = {c: head.index(c) for c in ("Process Name", "Kernel Name", "Metric Name", "Metric Value") if c in head}
    for r in rows[1:]:
        key = (r[ix["Process Name"]], r[ix["Kernel Name"]][:40], r[ix["Metric Name"]])
        try: by.setdefault(key, []).append(float(r[ix["Metric Value"]].replace(",", "") or 0))
        except ValueError: by.setdefault(key, [])  # a metric this GPU or ncu does not give: "n/a"
    print(f"### {path.split('/')[-1]}")
    for (proc, kern, met), v in sorted(by.items()):
        if not v: print(f"| {proc} | {kern} | {met} | n/a |"); continue
        print(f"| {proc} | {kern} | {met} | n {len(v)} | median {statistics.median(v):.6g} | min {min(v):.6g} | max {max(v):.6g} |")
PY
             ;;
    # What starting PyTorch costs on this machine, part by part (bench/torch_startup.py: the import cold and warm, the
    # judge's environment, the CUDA context with EAGER and LAZY module loading, khive-jail around it).
    torch_startup) step torch_startup ${TORCH_STARTUP_T:-240} python3 bench/torch_startup.py --jail "$bin/khive-jail" \
                     --repeat ${TORCH_STARTUP_REPEAT:-3} --out "$out/torch-startup.md" ;;
    # Check 11's power: a kernel 3.3 % faster than the leader must be called the new leader.
    # Both stop starting evaluations 40 s before their step's limit, so the table is written (NULL_AB_ARGS / POWER_ARGS:
    # more options, e.g. --first-seed to extend an earlier run with new seeds).
    power)   step power_cuda ${POWER_T:-400} python3 bench/null_ab.py "$bin/khive" "$root" cuda --mode power --seeds ${POWER_SEEDS:-10} \
               --classes ${POWER_CLASSES:-20us,500us,5ms} --time-limit $(( ${POWER_T:-400} - 40 )) ${POWER_ARGS:-} --out "$out/power-cuda.md" ;;
    # The README's main job on the GPU (scripts/main.sh: tasks/main-cuda.txt through `khive optimize` with the tuner),
    # with the carried binaries (KHIVE_PREBUILT: the device cannot reach the package registries to set up and build).
    main)    KHIVE_PREBUILT=1 BUILD_DIR="${BUILD_DIR:-$root/build-device}" KHIVE_OUT=/tmp/khive-main TAIL=${TAIL:-30} \
               step main_job ${MAIN_T:-540} scripts/main.sh
             for r in /tmp/khive-main/*/; do
               [ -d "$r" ] && khive report "$r" > "$out/main-$(basename "$r").txt" 2>&1
             done ;;
    honest)  HONEST_JOBS=${HONEST_JOBS:-1} step honest_cuda ${HONEST_T:-900} python3 tests/guard_cases.py honest "$bin/khive" "$root" cuda tasks/demo-cpu ;;
    redteam) REDTEAM_JOBS=${REDTEAM_JOBS:-1} step redteam_cuda ${REDTEAM_T:-900} python3 tests/guard_cases.py redteam "$bin/khive" "$root" cuda --table "$out/redteam-cuda.md" ;;
    bench)   step bench_cuda ${BENCH_T:-900} python3 bench/guard_overhead.py "$bin/khive" "$root" cuda --reps ${BENCH_REPS:-5} --out "$out/bench-cuda.md" ;;
    # Check 11's false-leader rate: identical kernels against each other (bench/null_ab.py), three call durations.
    null_ab) step null_ab_cuda ${NULL_AB_T:-580} python3 bench/null_ab.py "$bin/khive" "$root" cuda --seeds ${NULL_AB_SEEDS:-40} --classes ${NULL_AB_CLASSES:-5us,20us,500us,5ms} \
               --time-limit $(( ${NULL_AB_T:-580} - 40 )) ${NULL_AB_ARGS:-} --out "$out/null-ab-cuda.md" ;;
    # PyTorch baselines of the suites (docs/bench.md): written into tasks/<suite>/baselines/ here, so a
    # later `suites` step in the same call uses them as T_b, and copied to $out for committing.
    pytorch) for s in ${BENCH_SUITES:-cutegen26 sol}; do
               step pytorch_$s ${PYTORCH_T:-540} python3 bench/pytorch_baselines.py tasks/$s --device cuda
               for f in tasks/$s/baselines/pytorch-*.json; do [ -f "$f" ] && cp "$f" "$out/$s-$(basename "$f")"; done
             done ;;
    # khive bench of the suites: reference, PyTorch, vendor baselines (and $BENCH_KERNELS/<task>/*.cu).
    suites)  for s in ${BENCH_SUITES:-cutegen26 sol}; do
               TAIL=${TAIL:-40} step bench_$s ${SUITE_T:-540} khive bench tasks/$s --backend cuda --out "$out/bench-$s" \
                 ${BENCH_KERNELS:+--kernels "$BENCH_KERNELS"} ${BENCH_ARGS:-}
             done ;;
    # The hive with the tuner on chosen tasks (docs/hive.md): TUNE_TASKS="sol/softmax cutegen26/kb01_matmul_square
    # sol/gemm_bf16@M4096-N4096-K4096|M8192" (after @: --perf-workloads); per-workload tables against PyTorch.
    tune) for spec in ${TUNE_TASKS:-}; do
            t=${spec%%@*}; pat=""; [ "$spec" != "$t" ] && pat=${spec#*@}
            n=$(echo "$t" | tr / _)
            TAIL=${TAIL:-12} step tune_$n ${TUNE_T:-300} khive optimize "tasks/$t" --backend cuda --agent tuner --agents ${TUNE_AGENTS:-4} \
              --budget-candidates ${TUNE_BUDGET:-16} --budget-time ${TUNE_TIME:-240} --time-cap 0.5 --seed ${TUNE_SEED:-41} --quiet \
              --out "$out/tune/$n" ${pat:+--perf-workloads "$pat"}
            python3 bench/run_workloads.py "$out/tune/$n" --md "$out/tune/$n-workloads.md" > /dev/null 2>&1
          done ;;
    # Speculative builds against none (issue 23): the tuner from scratch on PREBUILD_TASK ("suite/task@perf-regex"),
    # twice with the same seed, agents and time budget, each with its own empty build cache: --prebuild 0, then
    # --prebuild PREBUILD_JOBS. The summaries' lines (candidates, slot busy and per minute, builds ahead, leader) go to
    # prebuild-ab.md.
    prebuild_ab) spec=${PREBUILD_TASK:-sol/gemm_bf16@M4096-N4096-K4096\$}; t=${spec%%@*}; pat=${spec#*@}
                 : > "$out/prebuild-ab.md"
                 for j in 0 ${PREBUILD_JOBS:-8}; do
                   KHIVE_CACHE=/tmp/khive-cache-pb$j TAIL=14 step prebuild_ab_$j $(( ${PREBUILD_TIME:-150} + 60 )) khive optimize "tasks/$t" \
                     --backend cuda --agent tuner --agents ${PREBUILD_AGENTS:-4} --prebuild $j --budget-time ${PREBUILD_TIME:-150} \
                     --time-cap 0.5 --seed ${TUNE_SEED:-41} --quiet --out /tmp/prebuild-ab-$j ${pat:+--perf-workloads "$pat"}
                   { echo "### --prebuild $j (tasks/$t, perf workloads '$pat', ${PREBUILD_AGENTS:-4} agents, ${PREBUILD_TIME:-150} s)"
                     grep -E "^run |^leader |^device slot|^speculative" "$out/prebuild_ab_$j.txt"; echo; } >> "$out/prebuild-ab.md"
                 done
                 cat "$out/prebuild-ab.md" ;;
    # Fidelity of khive's timing (bench/fidelity.py): khive eval's medians against the same library timed in-process
    # (CUDA events, L2 flushed per sample). FIDELITY_SUITES are suite names; no new evaluation starts after
    # FIDELITY_T - 60 s, so the report is written before the step's limit (docs/bench.md, "Fidelity of the ruler").
    # FIDELITY_KHIVE: another khive binary (its judge and executor still found beside it, or through KHIVE_JUDGE,
    # KHIVE_EXEC, KHIVE_JAIL_BIN). Its rendered kernels and eval JSONs stay outside $OUT: the device tool returns only so many files, and with them
    # there it dropped the other steps' tables (2026-12-03).
    # A clock log (200 ms) runs alongside: each evaluation's start is in fidelity.jsonl (started_utc).
    fidelity) ft=${FIDELITY_T:-360}
              nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
                --format=csv -lms 200 > "$out/fidelity-clocks.csv" 2>&1 & smi=$!
              TAIL=${TAIL:-30} step fidelity "$ft" python3 bench/fidelity.py $(for s in ${FIDELITY_SUITES:-sol cutegen26}; do echo "tasks/$s"; done) \
                --khive "${FIDELITY_KHIVE:-$bin/khive}" --seeds "${FIDELITY_SEEDS:-sol=3,*=1}" --kernels "${FIDELITY_KERNELS:-ref,best}" \
                ${FIDELITY_TASKS:+--tasks "$FIDELITY_TASKS"} --time-limit $(( ft > 120 ? ft - 60 : ft / 2 )) \
                --out "$out/fidelity.md" --scratch /tmp/khive-fidelity-files ${FIDELITY_ARGS:-}
              kill $smi ;;
    # The tuner's fixtures through the GPU judge (tests/tuner-fixtures; FIXTURES_TASKS, default the reduce and scan
    # families' two and the gemm bias-epilogue one): every strategy's first FIXTURES_PER proposals (default 2) built and
    # evaluated.
    fixtures) TAIL=${TAIL:-30} step fixtures_cuda ${FIXTURES_T:-300} python3 tests/integration/tuner_cpu.py "$bin/khive-tune" "$bin/khive" \
                "$root" tests/tuner-fixtures ${FIXTURES_PER:-2} ${FIXTURES_TASKS:-reduce_argmax_dim1 scan_masked_cumsum gemm_bias_epilogue} --backend cuda ;;
    # The tuner over whole suites (bench/tune_suite.py), one task per visible GPU at a time.
    tune_suite) for s in ${TUNE_SUITES:-sol cutegen26}; do
            TAIL=${TAIL:-45} step tune_suite_$s ${TUNE_SUITE_T:-580} python3 bench/tune_suite.py tasks/$s --khive "$bin/khive" --backend cuda \
              --agents ${TUNE_AGENTS:-3} --budget ${TUNE_BUDGET:-8} ${TUNE_TIME:+--budget-time $TUNE_TIME} --gpus "$(nvidia-smi -L | wc -l)" \
              ${TUNE_SUITE_TASKS:+--tasks $TUNE_SUITE_TASKS} --out "$out/tune-$s" --md "$out/tune-suite-$s.md"
          done ;;
    # Issue 23's tensor-core GEMM templates (docs/tuner.md: gemm.cuda_tc_gemv, gemm.cuda_sm80_3xtf32), never run on a
    # GPU before: tests/gpu/gemm_cuda.py first (ctest gemm_cuda: every checked output against an fp64 reference under the
    # task's tolerance, two calls bitwise equal, in-process CUDA-event times, 3xTF32's error and time beside cuBLAS SGEMM),
    # then khive bench with the points rendered into GEMM23_KERNELS (default /tmp/gemm23): the bf16 sol GEMMs
    # (GEMM23_SOL) with the GEMV default, SPLIT 1, ROW_BLOCKS 4 x WARPS 8, B_LOAD bulk and a tuner.dispatch composite of the sm90
    # default with the GEMV default on M <= 16, timed on the decode shapes (GEMM23_SOL_PERF, a --perf-workloads regex)
    # and interleaved with cuBLASLt (--ab-vendor); then the cutegen26 fp32 GEMMs (GEMM23_FP32) with the 3xTF32 default
    # (ALIGN 1 where the perf shape's pitches are odd: kb08) and SPLIT_K 4, against cuBLAS (--ab-vendor) and PyTorch;
    # GEMM23_FP32_KERNELS (words: tf32x3, sm90x3, rs3x, smallk; default tf32x3) picks those, gemm.cuda_sm90_3xtf32 points,
    # three gemm.cuda_sm90_rs3xtf32 points
    # and/or up to seven gemm.cuda_smallk_3xtf32 points (EPILOGUE bulk and lines), GEMM23_FP32_PICK (a grep -E regex over their file names) keeps only
    # the matching ones; GEMM23_TEST_ONLY passes --only to gemm_cuda.py (gemv, tf32x3, smallk, sm90x3, rs3x; comma list),
    # GEMM23_TEST_PICK its --pick (a regex over the case names, e.g. EPILOGUEbulk); GEMM23_NCU (a --pick regex) runs
    # those cases again under ncu (throughput, memory, warp stalls, occupancy of each kernel's first call).
    # Limits: GEMM23_TEST_T, GEMM23_SOL_T, GEMM23_FP32_T (seconds; the defaults fit one 600 s call).
    gemm23) k=${GEMM23_KERNELS:-/tmp/gemm23}; rm -rf "$k"; mkdir -p "$k"
            TAIL=${TAIL:-60} step gemm_cuda ${GEMM23_TEST_T:-260} python3 tests/gpu/gemm_cuda.py "$bin/khive-tune" "$root" \
              ${GEMM23_TEST_ONLY:+--only "$GEMM23_TEST_ONLY"} ${GEMM23_TEST_PICK:+--pick "$GEMM23_TEST_PICK"}
            # ncu on the test's cases matching GEMM23_NCU (a --pick regex): the first call of each kernel whose name
            # matches GEMM23_NCU_KERNEL (ours, the write-floor kernel, cuBLAS's), which is the case's first size.
            if [ -n "${GEMM23_NCU:-}" ] && command -v ncu > /dev/null; then
              TAIL=${TAIL:-40} step gemm23_ncu ${GEMM23_NCU_T:-200} ncu --target-processes all \
                --kernel-id "::regex:${GEMM23_NCU_KERNEL:-khive_smallk|khive_test_fill|gemm}:1" --section SpeedOfLight \
                --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats \
                --section SchedulerStats python3 tests/gpu/gemm_cuda.py "$bin/khive-tune" "$root" --pick "$GEMM23_NCU"
            fi
            sol=${GEMM23_SOL:-gemm_bf16,gemm_residual,attn_o_proj_residual}
            for t in ${sol//,/ }; do
              mkdir -p "$k/$t"
              tp() { khive-tune --kernels kernels point "tasks/sol/$t" --backend cuda --template gemm.cuda_tc_gemv "$@" > /dev/null; }
              tp --out "$k/$t/gemv-default.cu"
              tp --set SPLIT=1 --out "$k/$t/gemv-split1.cu"
              tp --set ROW_BLOCKS=4 --set WARPS=8 --out "$k/$t/gemv-rb4-w8.cu"
              tp --set B_LOAD=bulk --out "$k/$t/gemv-bulk.cu"
              # every timed shape routed: M (or T) <= 16 to the GEMV point (v1), the rest to the sm90 default (v0)
              routes=$(compose_routes "tasks/sol/$t/workload.jsonl" 'a.get("M", a.get("T", 99)) <= 16')
              khive-tune --kernels kernels compose "tasks/sol/$t" --backend cuda --point gemm.cuda_sm90 --point gemm.cuda_tc_gemv \
                $routes --out "$k/$t/dispatch-sm90-gemv.cu" > /dev/null
            done
            TAIL=${TAIL:-60} step bench_gemm23_sol ${GEMM23_SOL_T:-170} khive bench tasks/sol --backend cuda --tasks "$sol" --kernels "$k" \
              --ab-vendor --seeds 1 --perf-workloads "${GEMM23_SOL_PERF:--M(1|4|8|16)-N|-T(1|8)-H}" --out "$out/bench-gemm23-sol"
            fp32=${GEMM23_FP32:-kb02_matmul_standard,kb17_matmul_transposed_b,kb06_matmul_large_k,kb08_matmul_irregular}
            for t in ${fp32//,/ }; do
              mkdir -p "$k/$t"
              a=(); [ "$t" = kb08_matmul_irregular ] && a=(--set ALIGN=1)
              tp() { khive-tune --kernels kernels point "tasks/cutegen26/$t" --backend cuda "$@" > /dev/null ||
                       echo "gemm23: $t: point $* refused" | tee -a "$out/device.log"; }
              case " ${GEMM23_FP32_KERNELS:-tf32x3} " in *" tf32x3 "*)
                tp --template gemm.cuda_sm80_3xtf32 "${a[@]}" --out "$k/$t/tf32x3-default.cu"
                tp --template gemm.cuda_sm80_3xtf32 "${a[@]}" --set SPLIT_K=4 --out "$k/$t/tf32x3-splitk4.cu" ;; esac
              # 3xTF32 as one Sm90 TF32 GEMM of depth 3K: its default (128x128 cooperative, promoted every 4 wgmmas),
              # ping-pong 64x128, 128x256 without promotion, and stream-K with 4 splits where K is deep (kb06).
              case " ${GEMM23_FP32_KERNELS:-tf32x3} " in *" sm90x3 "*)
                tp --template gemm.cuda_sm90_3xtf32 --out "$k/$t/sm90x3-default.cu"
                tp --template gemm.cuda_sm90_3xtf32 --set SCHEDULE=pingpong --set TILE_M=64 --out "$k/$t/sm90x3-pingpong.cu"
                tp --template gemm.cuda_sm90_3xtf32 --set PROMOTE=0 --set TILE_N=256 --out "$k/$t/sm90x3-p0-n256.cu"
                [ "$t" = kb06_matmul_large_k ] && tp --template gemm.cuda_sm90_3xtf32 --set SCHEDULER=streamk --set SPLITS=4 \
                  --out "$k/$t/sm90x3-streamk4.cu" ;; esac
              # The register-A 3xTF32 kernel: its default (promoted every k-tile), PROMOTE 4, one chain on 128x256.
              case " ${GEMM23_FP32_KERNELS:-tf32x3} " in *" rs3x "*)
                tp --template gemm.cuda_sm90_rs3xtf32 --out "$k/$t/rs3x-default.cu"
                tp --template gemm.cuda_sm90_rs3xtf32 --set PROMOTE=4 --out "$k/$t/rs3x-p4.cu"
                tp --template gemm.cuda_sm90_rs3xtf32 --set PROMOTE=0 --set TILE_N=256 --set STAGES=2 --out "$k/$t/rs3x-p0-n256.cu" ;; esac
              # The short-K template (K <= KMAX: kb07, kb09): its default (128x256 tiles of 64x64 warp tiles), the
              # earlier default's 128x128 of 64x32, two 64x128 CTAs per SM.
              case " ${GEMM23_FP32_KERNELS:-tf32x3} " in *" smallk "*)
                tp --template gemm.cuda_smallk_3xtf32 --out "$k/$t/smallk-default.cu"
                tp --template gemm.cuda_smallk_3xtf32 --set TB_N=128 --set W_N=32 --out "$k/$t/smallk-n128.cu"
                tp --template gemm.cuda_smallk_3xtf32 --set TB_M=64 --set TB_N=128 --set W_M=32 --set W_N=32 --set MIN_BLOCKS=2 \
                  --out "$k/$t/smallk-m64-2cta.cu"
                # C staged in shared memory and copied out by the TMA unit (EPILOGUE bulk): 128x128, and 64x256.
                tp --template gemm.cuda_smallk_3xtf32 --set EPILOGUE=bulk --set TB_N=128 --set W_N=32 --out "$k/$t/smallk-bulk.cu"
                tp --template gemm.cuda_smallk_3xtf32 --set EPILOGUE=bulk --set KMAX=32 --set TB_M=64 --set TB_N=256 \
                  --set W_M=32 --set W_N=64 --out "$k/$t/smallk-bulk-m64n256.cu"
                # Whole 128-byte lines per store (EPILOGUE lines): 128x256 on 32-deep panels (K <= 32: kb09), 64x256.
                [ "$t" = kb09_matmul_tall_skinny ] && tp --template gemm.cuda_smallk_3xtf32 --set EPILOGUE=lines --set KMAX=32 \
                  --out "$k/$t/smallk-lines-k32.cu"
                tp --template gemm.cuda_smallk_3xtf32 --set EPILOGUE=lines --set TB_M=64 --set W_M=32 --out "$k/$t/smallk-lines-m64.cu" ;; esac
            done
            if [ -n "${GEMM23_FP32_PICK:-}" ]; then
              for f in "$k"/kb*/*.cu; do [ -e "$f" ] && { basename "$f" .cu | grep -Eq "$GEMM23_FP32_PICK" || rm -f "$f"; }; done
            fi
            TAIL=${TAIL:-60} step bench_gemm23_fp32 ${GEMM23_FP32_T:-160} khive bench tasks/cutegen26 --backend cuda --tasks "$fp32" \
              --kernels "$k" --ab-vendor --seeds 1 --out "$out/bench-gemm23-fp32" ;;
    # Issue 23's decode GEMMs outside khive (bench/gemv_profile.py): gemm.cuda_tc_gemv points (GEMV_POINTS: lines of
    # NAME:KEY=VALUE ...) against torch F.linear (cuBLASLt) in one process, L2 flushed, against the HBM floor; then
    # (unless GEMV_NCU=0) ncu's throughput, occupancy and stall sections for the default point and cuBLASLt on the
    # three gemm_bf16 decode shapes (GEMV_NCU_SHAPES): why ours streams below cuBLASLt (GEMV_NCU_POINT: another of the
    # points, e.g. bulk).
    gemv_profile) k=/tmp/gemv-profile; rm -rf "$k"; mkdir -p "$k"
              while IFS=: read -r name sets; do
                [ -z "$name" ] && continue
                a=(); for kv in $sets; do a+=(--set "$kv"); done
                khive-tune --kernels kernels point tasks/sol/gemm_bf16 --backend cuda --template gemm.cuda_tc_gemv "${a[@]}" \
                  --out "$k/$name.cu" > /dev/null || echo "gemv_profile: point $name ($sets) refused" | tee -a "$out/device.log"
              done <<< "${GEMV_POINTS:-default:
rb1-w8:ROW_BLOCKS=1
w16:WARPS=16
bulk:B_LOAD=bulk
bulk-s8:B_LOAD=bulk STAGES=8
bulk-k512:B_LOAD=bulk KSTAGE=512
bulk-rb4-w4:B_LOAD=bulk ROW_BLOCKS=4 WARPS=4
bulk-rb1-s8-k512:B_LOAD=bulk ROW_BLOCKS=1 STAGES=8 KSTAGE=512}"
              TAIL=${TAIL:-40} step gemv_profile ${GEMV_T:-240} python3 bench/gemv_profile.py "$k"/*.cu \
                --samples ${GEMV_SAMPLES:-40} --out "$out/gemv-profile.md"
              if [ "${GEMV_NCU:-1}" = 1 ] && command -v ncu > /dev/null; then
                TAIL=${TAIL:-20} step gemv_ncu ${GEMV_NCU_T:-240} ncu --target-processes all --kernel-name "regex:khive_gemv|gemm|gemv|nvjet|xmma|cutlass|splitK" --section SpeedOfLight \
                  --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats --section LaunchStats \
                  python3 bench/gemv_profile.py "$k/${GEMV_NCU_POINT:-default}.cu" --once --shapes "${GEMV_NCU_SHAPES:-16x28672x4096,16x4096x14336,1x6144x4096}"
              fi ;;
    # Issue 22's Hopper attention template (docs/tuner.md: attention.cuda_sm90, TMA + wgmma, FlashAttention-3 style):
    # tests/gpu/attention_sm90.py first (ctest attention_sm90: 11 points x non-causal/causal, bf16 and fp16, odd S,
    # GQA 1-4, D 64/128/96, sampled rows against an fp64 softmax, two calls bitwise equal; perf shapes timed with the
    # L2 flushed, beside PyTorch SDPA when torch imports). A failing point says which switch to suspect: default
    # (OVERLAP 0, the simple schedule), overlap, n176-overlap, one-wg (no setmaxnreg), stages3, fp16, and the SCHEDULE
    # persistent points (persistent, persistent-overlap, persistent-n176-overlap, persistent-stages3: one CTA per SM
    # looping over items, barrier phases carried across items; never run on a GPU before: a hang is a phase mistake,
    # ATTN22_RUN_T bounds each binary, default 120 s); ATTN22_ONLY=SUBSTRING runs only the matching cases (e.g.
    # persistent, default-full). Then khive bench with the points rendered into ATTN22_KERNELS (default /tmp/attn22):
    # the sm90 default, OVERLAP 1, OVERLAP 1 with 176-key tiles, the same three with SCHEDULE persistent
    # (sm90-persistent*), OVERLAP 1 with PINGPONG 1 (grid, grid 176-key tiles, persistent: sm90-*pingpong*), a tuner.dispatch composite of grid n176-overlap (S >= 8192) and persistent-overlap (the rest),
    # and attention.cuda_flash's default (the FA2 template, for the comparison), on the perf
    # workloads of sol/attention and attention_causal (ATTN22_PERF: a --perf-workloads regex, default all) against
    # PyTorch; ATTN22_POINTS (a grep -E regex over those file names, default all) keeps only the matching kernels.
    # Limits: ATTN22_TEST_T, ATTN22_BENCH_T (seconds; the defaults fit one 600 s call with ATTN22_ONLY or
    # ATTN22_POINTS narrowing the work: all 29 test kernels and 10 bench kernels (9 causal) need two calls).
    attn22) k=${ATTN22_KERNELS:-/tmp/attn22}; rm -rf "$k"; mkdir -p "$k"
            TAIL=${TAIL:-90} step attention_sm90 ${ATTN22_TEST_T:-300} env PYTHONPATH="$root/.deps/torch${PYTHONPATH:+:$PYTHONPATH}" \
              python3 tests/gpu/attention_sm90.py "$bin/khive-tune" "$root" ${ATTN22_ONLY:+--only "$ATTN22_ONLY"} \
              --timeout "${ATTN22_RUN_T:-120}"
            for t in attention attention_causal; do
              mkdir -p "$k/$t"
              tp() { khive-tune --kernels kernels point "tasks/sol/$t" --backend cuda "$@" > /dev/null; }
              tp --template attention.cuda_sm90 --out "$k/$t/sm90-default.cu"
              tp --template attention.cuda_sm90 --set OVERLAP=1 --out "$k/$t/sm90-overlap.cu"
              tp --template attention.cuda_sm90 --set OVERLAP=1 --set BLOCK_N=176 --out "$k/$t/sm90-n176-overlap.cu"
              tp --template attention.cuda_sm90 --set SCHEDULE=persistent --out "$k/$t/sm90-persistent.cu"
              tp --template attention.cuda_sm90 --set SCHEDULE=persistent --set OVERLAP=1 --out "$k/$t/sm90-persistent-overlap.cu"
              tp --template attention.cuda_sm90 --set SCHEDULE=persistent --set OVERLAP=1 --set BLOCK_N=176 \
                --out "$k/$t/sm90-persistent-n176-overlap.cu"
              # PINGPONG 1 (FA3's inter-warpgroup ping-pong), grid and persistent, with the overlap
              tp --template attention.cuda_sm90 --set OVERLAP=1 --set PINGPONG=1 --out "$k/$t/sm90-pingpong-overlap.cu"
              [ "$t" = attention ] && tp --template attention.cuda_sm90 --set OVERLAP=1 --set PINGPONG=1 --set BLOCK_N=176 \
                --out "$k/$t/sm90-pingpong-n176-overlap.cu"   # the rules refuse it on causal (registers)
              tp --template attention.cuda_sm90 --set SCHEDULE=persistent --set OVERLAP=1 --set PINGPONG=1 \
                --out "$k/$t/sm90-persistent-pingpong-overlap.cu"
              tp --template attention.cuda_flash --out "$k/$t/flash-default.cu"
              # Per shape (session 12, H100): grid n176-overlap on the long sequences (S >= 8192: 0.97-0.98x SDPA, where
              # persistent loses 2-5 %), persistent-overlap on the rest (0.80-0.99x, the many-CTA shapes +0.1-0.3x).
              routes=$(compose_routes "tasks/sol/$t/workload.jsonl" 'a.get("S", 0) < 8192')
              khive-tune --kernels kernels compose "tasks/sol/$t" --backend cuda \
                --point attention.cuda_sm90:OVERLAP=1,BLOCK_N=176 --point attention.cuda_sm90:SCHEDULE=persistent,OVERLAP=1 \
                $routes --out "$k/$t/sm90-dispatch.cu" > /dev/null || echo "attn22: the dispatch composite for $t failed" | tee -a "$out/device.log"
              if [ -n "${ATTN22_POINTS:-}" ]; then
                for f in "$k/$t"/*.cu; do basename "$f" .cu | grep -Eq "$ATTN22_POINTS" || rm -f "$f"; done
              fi
            done
            TAIL=${TAIL:-60} step bench_attn22 ${ATTN22_BENCH_T:-280} khive bench tasks/sol --backend cuda --tasks attention,attention_causal \
              --kernels "$k" --seeds 1 ${ATTN22_PERF:+--perf-workloads "$ATTN22_PERF"} --out "$out/bench-attn22" ;;
  esac
done
log "done"
