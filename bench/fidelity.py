#!/usr/bin/env python3
"""Fidelity of khive's ruler: khive eval's medians against an independent in-process timing of the same kernel.

  fidelity.py [SUITE ...] [--tasks REGEX] [--kernels ref,best|none] [--file LABEL=PATH ...] [--seeds N|SUITE=N,...,*=N]
              [--max-workloads N] [--time-limit S] [--out FILE.md] [--dry-run]

For every task of the suites (default tasks/sol tasks/cutegen26) and every kernel to measure (`ref`: the task's
reference.cu; `best`: the best tuner point on record, bench/fidelity_kernels.json, rendered with khive-tune, else
the tuner's default point; `--file LABEL=PATH`: any kernel file, `{task}` in PATH standing for the task's directory
name, e.g. a composite rendered elsewhere, to see whether a time khive reports is the kernel's own), on the task's
perf workloads that run on CUDA (--max-workloads picks evenly spaced ones):

1. khive's number: `khive eval TASK KERNEL --backend cuda --json --no-reference --no-baselines --no-pytorch --seed S
   --perf-workloads ^(picked)$` once per seed; per workload `workloads[].kernel.median_s` (else the median of
   `candidate.timing[].samples_s`), the executor's own clock (median of `in_process_s`) as a diagnostic, and the
   evaluation's cost (wall time of the command, `seconds`, `candidate.guard_seconds`).
2. The harness's number, in this process: the very library khive built (`$KHIVE_CACHE/build/<key[:2]>/<key>/cand.so`,
   the key from the eval JSON's `candidate.build.key`; if it is gone, the .cu is compiled with nvcc the way
   src/khive/compile/builder.cpp does, and the row says so), loaded with ctypes; `khive_launch(inputs..., outputs...,
   var axes..., stream)` called on torch tensors of the workload's shapes, drawn from the task's distributions.
   Per sample: a buffer of 2x the L2 size is zeroed (flush), a CUDA event recorded, khive_launch called on the current
   stream, a second event recorded; the median of --samples samples after --warmup calls. Up to 4 input sets are
   rotated when one set fits in L2. The sets are made --placements times (default 4), each copy behind a spacer of
   another size, and the samples go round-robin over the copies: where the tensors land moves a kernel's own time by
   up to ~5 % on an H100 (a bandwidth-bound kernel's DRAM channels, a small kernel's L2 slices), so the harness
   median is the kernel's time over placements, not one placement's draw; the row lists each placement's median. Outputs are pre-filled with NaN (integers: 0xA5 bytes) and checked once per set
   to be written and finite, so a broken harness is reported as an error, never as a timing.
3. One row per (task, kernel, workload): khive's median per seed, the harness median, khive / harness, |diff|,
   within max(3 %, 1 us), and the spread of khive's medians over the seeds ((max - min) / min; flagged above 2 % for
   kernels of 20 us or more). Markdown to --out, JSON lines beside it (same stem, .jsonl), a summary at the end.

Order (so that --time-limit trims what matters least): every kernel's khive builds first, in parallel (`khive
build`, as `khive bench` does); then pass 1, every (task, kernel) with its first seed and the harness; then pass 2,
the remaining seeds. Once --time-limit seconds have passed no new evaluation or harness measurement starts, and what
was skipped is listed. The report is rewritten after every step and on SIGTERM.

--dry-run needs no GPU and no torch: it resolves every case (tasks, kernels, workloads with their axes, the
khive_launch arguments it would pass, the khive commands it would run) and prints them; with khive-tune found it
also renders the best kernels (no build) and checks the signature against `khive signature`.

Exit: 0 every case measured, 1 some case failed or was skipped, 2 bad arguments or nothing to do, 130 SIGTERM.
"""
import argparse
import ctypes
import datetime
import json
import math
import os
import pathlib
import random
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))   # khive_torch: the task format as the PyTorch side reads it (no torch needed)
sys.path.insert(0, str(REPO / "bench"))    # pytorch_baselines.find_tasks: how khive finds tasks

from khive_torch.task import TaskError, load_task  # noqa: E402
from pytorch_baselines import find_tasks  # noqa: E402

TOL_REL, TOL_ABS_S = 0.03, 1e-6            # a row agrees when |khive - harness| <= max(3 % of the harness, 1 us)
SPREAD_FLAG, SPREAD_MIN_S = 0.02, 20e-6    # seeds spread flagged above 2 %, for kernels of 20 us or more
ASSUMED_L2 = 50 << 20                      # H100/H200 L2, only for the dry run's rotation estimate
MAX_SETS = 4
# Where the harness's tensors land: placement j's sets are made behind a spacer of this many bytes (odd multiples of
# the 2 MiB granule), all placements alive at once. On the H100 the same kernel in plain torch memory read 1.000 /
# 1.044 / 1.045 / 1.015 (add_rmsnorm T16384), 1.000 / 0.949 (attention_causal S128) with the spacers of this list
# (bench/ruler_probe.py torch_s1..s3, docs/results/2026-12-06-h100-s6): a kernel's own time is a distribution over
# placements, and one placement is one draw from it.
PLACEMENT_SHIFTS = (0, 2 << 20, 34 << 20, 258 << 20)
PLACEMENT_MEMORY = 0.6                     # placements take at most this share of the device's free memory
SENTINEL_BYTE = 0xA5                       # integer outputs are pre-filled with this byte (floats with NaN)

# definition.json dtype -> (CUDA type of khive_launch, bytes per element); docs/task-format.md, "The entry point".
DTYPES = {
    "float64": ("double", 8), "float32": ("float", 4), "float16": ("__half", 2), "bfloat16": ("__nv_bfloat16", 2),
    "float8_e4m3fn": ("__nv_fp8_e4m3", 1), "float8_e5m2": ("__nv_fp8_e5m2", 1), "float4_e2m1": ("__nv_fp4_e2m1", 1),
    "float4_e2m1fn_x2": ("__nv_fp4x2_e2m1", 1), "int64": ("int64_t", 8), "int32": ("int32_t", 4),
    "int16": ("int16_t", 2), "int8": ("int8_t", 1), "bool": ("bool", 1),
}
INT_DTYPES = {"int64", "int32", "int16", "int8", "bool"}
# A scalar input is passed by value: its ctypes type. 16- and 8-bit floats travel as their bits (x86-64 passes a
# 2- or 1-byte struct such as __nv_bfloat16 in an integer register, like an unsigned integer of that size).
SCALAR_CTYPES = {
    "float64": "c_double", "float32": "c_float", "float16": "c_uint16", "bfloat16": "c_uint16",
    "float8_e4m3fn": "c_uint8", "float8_e5m2": "c_uint8", "int64": "c_int64", "int32": "c_int32",
    "int16": "c_int16", "int8": "c_int8", "bool": "c_bool",
}


class Interrupted(Exception):
    """SIGTERM (the device step's time limit): write what was measured and stop."""


# ---------------------------------------------------------------- the plan: tasks, workloads, kernels, arguments

@dataclass
class Arg:
    """One khive_launch parameter, in order: kind input | scalar | output | axis | stream."""
    kind: str
    name: str
    dtype: str = ""
    shape: tuple = None
    value: int = None        # axis value
    source: dict = None      # input: the workload's {"type": ...} entry
    dist: tuple = None       # input drawn at random: (kind, params)

    def nbytes(self):
        if self.kind not in ("input", "output"):
            return 0
        return math.prod(self.shape or (1,)) * DTYPES[self.dtype][1]


@dataclass
class Case:
    """One perf workload of a task, resolved."""
    uuid: str
    where: str
    axes: dict
    args: list

    def set_bytes(self):
        return sum(a.nbytes() for a in self.args)


@dataclass
class Kernel:
    label: str               # "ref", "best" or a --file label
    what: str                # the whole kernel, for the kernel table: "reference.cu", "recorded gemm.cuda_sm90 TILE_M=..."
    path: pathlib.Path = None
    source: str = ""         # where the point comes from
    command: list = None     # the khive-tune command that renders it
    error: str = ""
    short: str = ""          # the row's kernel column: "ref", "best: recorded rope.cuda", "best: tuner-default ..."


@dataclass
class Plan:
    key: str                 # <suite>/<task directory>
    dir: pathlib.Path
    suite: str
    name: str = ""
    task: object = None
    cases: list = field(default_factory=list)
    n_perf: int = 0
    kernels: list = field(default_factory=list)
    seeds: list = field(default_factory=list)
    policy: list = field(default_factory=list)
    error: str = ""


def parse_seeds(text):
    """"3" -> every suite 3 seeds; "sol=3,cutegen26=1,*=1" -> per suite (the suite directory's name), * the rest."""
    out = {}
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        suite, _, n = part.rpartition("=")
        try:
            v = int(n)
        except ValueError:
            raise ValueError(f"--seeds: expected N or SUITE=N,..., got {text!r}") from None
        if v < 1:
            raise ValueError(f"--seeds: expected a count >= 1, got {part!r}")
        out[suite or "*"] = v
    out.setdefault("*", 1)
    return out


def pick_evenly(items, n):
    """n items spread evenly over the list (first and last included): small and large shapes both get a row."""
    if not n or len(items) <= n:
        return list(items)
    if n == 1:
        return [items[len(items) // 2]]
    idx = sorted({round(i * (len(items) - 1) / (n - 1)) for i in range(n)})
    return [items[i] for i in idx]


def perf_on_cuda(w):
    k = w.get("khive") or {}
    return k.get("role", "both") in ("perf", "both") and "cuda" in k.get("backends", ["cpu", "cuda"])


def distribution(task, w, name, dtype):
    """The workload's own distribution (workload.jsonl khive.inputs), else the task's, else the format's default."""
    own = ((w.get("khive") or {}).get("inputs") or {}).get(name)
    d = dict(own if own is not None else (task.khive.get("inputs") or {}).get(name) or {})
    kind = d.get("dist") or ("integers" if dtype in INT_DTYPES else "normal")
    if kind == "normal":
        return ("normal", {"mean": float(d.get("mean", 0.5)), "std": float(d.get("std", 1.0))})
    if kind == "uniform":
        return ("uniform", {"low": float(d.get("low", -1.0)), "high": float(d.get("high", 1.0))})
    if kind == "integers":
        lo, hi = (0, 1) if dtype == "bool" else (-8, 8)
        return ("integers", {"low": int(d.get("low", lo)), "high": int(d.get("high", hi))})
    if kind == "constant":
        return ("constant", {"value": d["value"]})
    raise TaskError(f"{task.def_file}: khive.inputs.{name}.dist: expected normal, uniform, integers or constant, got {kind!r}")


def describe_dist(dist):
    kind, p = dist
    if kind == "normal":
        return f"normal({p['mean']:g}, {p['std']:g})"
    if kind == "uniform":
        return f"uniform[{p['low']:g}, {p['high']:g}]"
    if kind == "integers":
        return f"integers[{p['low']}, {p['high']}]"
    return f"constant {p['value']}"


def launch_args(task, w, axes):
    """khive_launch's parameters for one workload: inputs, outputs, var axes, stream (docs/task-format.md)."""
    args = []
    for name, spec in task.inputs.items():
        dtype = spec["dtype"]
        if dtype not in DTYPES:
            raise TaskError(f"{task.def_file}: inputs.{name}.dtype: unknown dtype {dtype!r}")
        shape = task.shape(spec, axes)
        src = (w.get("inputs") or {}).get(name) or {"type": "random"}
        kind = src.get("type", "random")
        if kind not in ("random", "scalar", "safetensors", "custom"):
            raise TaskError(f"{task.dir.name}/workload.jsonl: {w.get('_where')}: inputs.{name}.type: unknown {kind!r}")
        dist = distribution(task, w, name, dtype) if kind == "random" else None
        args.append(Arg("scalar" if shape is None else "input", name, dtype, shape, source=src, dist=dist))
    for name, spec in task.outputs.items():
        if spec["dtype"] not in DTYPES:
            raise TaskError(f"{task.def_file}: outputs.{name}.dtype: unknown dtype {spec['dtype']!r}")
        shape = task.shape(spec, axes)
        args.append(Arg("output", name, spec["dtype"], () if shape is None else shape))
    for name, a in task.axes.items():
        if a.get("type") == "var":
            args.append(Arg("axis", name, "int64", value=axes[name]))
    args.append(Arg("stream", "stream"))
    return args


def signature(task):
    """The CUDA khive_launch declaration, as `khive signature TASK --backend cuda` prints it."""
    parts = []
    for name, spec in task.inputs.items():
        t = DTYPES[spec["dtype"]][0]
        parts.append(f"{t} {name}" if spec.get("shape") is None else f"const {t}* {name}")
    parts += [f"{DTYPES[s['dtype']][0]}* {n}" for n, s in task.outputs.items()]
    parts += [f"int64_t {n}" for n, a in task.axes.items() if a.get("type") == "var"]
    parts.append("cudaStream_t stream")
    return 'extern "C" void khive_launch(' + ", ".join(parts) + ")"


def describe_arg(a):
    if a.kind == "stream":
        return "stream"
    if a.kind == "axis":
        return f"{a.name}={a.value}"
    ctype = DTYPES[a.dtype][0]
    dims = "[" + ", ".join(str(d) for d in a.shape) + "]" if a.shape is not None else ""
    if a.kind == "output":
        return f"{a.name}: {ctype}* {dims} pre-filled {'with NaN' if a.dtype not in INT_DTYPES else f'0x{SENTINEL_BYTE:02X} bytes'}"
    src = a.source.get("type", "random")
    what = describe_dist(a.dist) if src == "random" else (f"value {a.source.get('value')}" if src == "scalar" else src)
    return f"{a.name}: {ctype} {what} (by value)" if a.kind == "scalar" else f"{a.name}: const {ctype}* {dims} {what}"


def reference_cu(task):
    rel = ((task.khive.get("reference") or {}).get("cuda")) or "reference.cu"
    p = task.dir / rel
    return p if p.is_file() else None


def plan_task(task_dir, suite, args, seeds_by_suite):
    key = f"{suite}/{task_dir.name}"
    p = Plan(key=key, dir=task_dir, suite=suite)
    p.seeds = [args.seed_base + i for i in range(seeds_by_suite.get(suite, seeds_by_suite["*"]))]
    try:
        t = load_task(task_dir)
        p.task, p.name = t, t.name
        p.policy = list((t.khive.get("policy") or {}).get("libraries") or [])
        perf = [w for w in t.workloads if perf_on_cuda(w)]
        p.n_perf = len(perf)
        for w in pick_evenly(perf, args.max_workloads):
            axes = t.resolve_axes(w)
            p.cases.append(Case(w["uuid"], w.get("_where", ""), axes, launch_args(t, w, axes)))
        if not p.cases:
            p.error = "no perf workload runs on cuda"
    except (TaskError, KeyError, ValueError, OSError) as e:
        p.error = f"{type(e).__name__}: {e}"
    return p


def perf_regex(cases):
    """An anchored alternation of the picked uuids for --perf-workloads (std::regex ECMAScript, regex_search)."""
    esc = [re.sub(r"([.^$|?*+()\[\]{}\\])", r"\\\1", c.uuid) for c in cases]
    return "^(?:" + "|".join(esc) + ")$"


# ---------------------------------------------------------------- the "best" kernels (khive-tune)

def load_best_points(path):
    try:
        return (json.loads(pathlib.Path(path).read_text()).get("tasks") or {}) if path else {}
    except (OSError, json.JSONDecodeError) as e:
        raise SystemExit(f"fidelity: {path}: {e}")


def point_arg(p):
    sets = ",".join(f"{k}={v}" for k, v in (p.get("set") or {}).items())
    return p["template"] + (":" + sets if sets else "")


def tune_command(tune, kernels_dir, plan, entry, out):
    """The khive-tune command that renders a recorded point or composite (routes to workloads the task no longer
    times are dropped: compose refuses them)."""
    base = [tune, "--kernels", str(kernels_dir)]
    if "compose" in entry:
        timed = {w["uuid"] for w in plan.task.workloads if perf_on_cuda(w)}
        cmd = base + ["compose", str(plan.dir), "--backend", "cuda", "--out", str(out)]
        for p in entry["compose"]:
            cmd += ["--point", point_arg(p)]
        for w, i in (entry.get("route") or {}).items():
            if w in timed:
                cmd += ["--route", f"{w}={i}"]
        return cmd
    cmd = base + ["point", str(plan.dir), "--backend", "cuda", "--template", entry["template"], "--out", str(out)]
    for k, v in (entry.get("set") or {}).items():
        cmd += ["--set", f"{k}={v}"]
    return cmd


def describe_entry(entry):
    if "compose" in entry:
        return "recorded composite of " + " + ".join(point_arg(p) for p in entry["compose"])
    sets = " ".join(f"{k}={v}" for k, v in (entry.get("set") or {}).items())
    return f"recorded {entry['template']} {sets or '(its default point)'}".rstrip()


def run_quiet(cmd, timeout=120):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return r.returncode, (r.stdout or "") + (r.stderr or "")
    except (OSError, subprocess.TimeoutExpired) as e:
        return -1, str(e)


def tuner_default(tune, kernels_dir, plan):
    """The first applicable template of `khive-tune show` whose default point is valid: where the tuner starts."""
    rc, text = run_quiet([tune, "--kernels", str(kernels_dir), "show", str(plan.dir), "--backend", "cuda"])
    if rc != 0:
        return None, f"khive-tune show failed (rc {rc}): {text.strip()[-300:]}"
    for line in text.splitlines():
        m = re.match(r"^  template (\S+) \(.*\); default (.*)$", line)
        if m and "INVALID" not in m.group(2):
            return m.group(1), m.group(2)
    return None, "khive-tune show lists no template with a valid default point"


def make_best(plan, best_points, tune, kernels_dir, scratch, render):
    """The 'best' kernel of a task: its recorded point, else the tuner's default point. render=False: only say how."""
    out = scratch / plan.key.replace("/", "__") / "best.cu"
    entry = best_points.get(plan.key)
    if entry:
        k = Kernel("best", describe_entry(entry), source=entry.get("source", ""),
                   short=f"best: recorded composite of {len(entry['compose'])} points" if "compose" in entry
                   else f"best: recorded {entry['template']}")
        if tune:
            k.command = tune_command(tune, kernels_dir, plan, entry, out)
    else:
        k = Kernel("best", "tuner-default", source="no recorded point: the tuner's first template, default point",
                   short="best: tuner-default")
        if tune and render:
            name, default = tuner_default(tune, kernels_dir, plan)
            if not name:
                k.error = default
                return k
            k.what, k.short = f"tuner-default {name} {default}", f"best: tuner-default {name}"
            k.command = [tune, "--kernels", str(kernels_dir), "point", str(plan.dir), "--backend", "cuda", "--template", name,
                         "--out", str(out)]
    if not tune:
        if render:
            k.error = "khive-tune not found (--khive-tune)"
        else:
            k.what += " (khive-tune not found here: chosen and rendered on the device)"
        return k
    if render:
        out.parent.mkdir(parents=True, exist_ok=True)
        rc, text = run_quiet(k.command)
        if rc != 0 or not out.is_file():
            k.error = f"khive-tune failed (rc {rc}): {text.strip()[-400:]}"
        else:
            k.path = out
    return k


def plan_kernels(plan, want, best_points, tune, kernels_dir, scratch, render, files=None):
    if "ref" in want:
        ref = reference_cu(plan.task)
        plan.kernels.append(Kernel("ref", ref.name if ref else "reference.cu", path=ref, source="the task's reference",
                                   error="" if ref else "the task has no CUDA reference", short="ref"))
    if "best" in want:
        plan.kernels.append(make_best(plan, best_points, tune, kernels_dir, scratch, render))
    for label, pattern in files or []:
        path = pathlib.Path(pattern.replace("{task}", plan.dir.name))
        found = path.is_file()
        plan.kernels.append(Kernel(label, path.name, path=path if found else None, source=f"--file {label}={pattern}",
                                   error="" if found else f"--file {label}: no file {path}", short=label))


# ---------------------------------------------------------------- khive's side: build, eval, JSON

def khive_command(khive, plan, kernel_path, seed, time_cap):
    cmd = [khive, "eval", str(plan.dir), str(kernel_path), "--backend", "cuda", "--json", "--no-reference", "--no-baselines",
           "--no-pytorch", "--seed", str(seed), "--perf-workloads", perf_regex(plan.cases)]
    if time_cap:
        cmd += ["--time-cap", f"{time_cap:g}"]
    return cmd


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def khive_times(report):
    """{uuid: {median_s, events_s, samples, batch}} from a khive.eval/1 report (docs/eval-json.md)."""
    out = {}
    timing = {t.get("workload"): t for t in ((report.get("candidate") or {}).get("timing") or [])}
    for w in report.get("workloads") or []:
        uuid = w.get("workload")
        t = timing.get(uuid) or {}
        k = w.get("kernel") or {}
        m = k.get("median_s")
        if m is None:   # the summary is missing: the judge's samples themselves
            m = median(t.get("samples_s") or [])
        ev = median([x for x in (t.get("in_process_s") or []) if x and x > 0])
        out[uuid] = {"median_s": m, "events_s": ev, "samples": len(t.get("samples_s") or []) or k.get("samples"),
                     "batch": t.get("batch")}
    for uuid, t in timing.items():   # a workload timed but not summarised
        if uuid not in out and t.get("samples_s"):
            out[uuid] = {"median_s": median(t["samples_s"]), "events_s": median([x for x in t.get("in_process_s") or [] if x]),
                         "samples": len(t["samples_s"]), "batch": t.get("batch")}
    return out


def parse_eval_output(stdout):
    s = stdout.strip()
    try:
        return json.loads(s)
    except json.JSONDecodeError:
        i = s.find("{")   # anything printed before the report
        return json.loads(s[i:]) if i >= 0 else None


def run_group(cmd, timeout):
    """Runs cmd in a process group of its own (khive starts a judge and executors) and ends that group, by its id,
    when cmd runs past timeout or this script is interrupted: no judge is left on the GPU. (rc, stdout, stderr);
    rc None on timeout."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)

    def end_group():
        for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                proc.wait(timeout=wait)
                return
            except subprocess.TimeoutExpired:
                pass
    try:
        out, err = proc.communicate(timeout=timeout)
        return proc.returncode, out, err
    except subprocess.TimeoutExpired:
        end_group()
        out, err = proc.communicate()
        return None, out, err
    except BaseException:
        end_group()
        raise


def run_eval(khive, plan, kernel, seed, a, save_dir):
    cmd = khive_command(khive, plan, kernel.path, seed, a.eval_time_cap)
    t0 = time.monotonic()
    res = {"task": plan.key, "kernel": kernel.label, "seed": seed, "command": cmd,
           "started_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    rc, stdout, stderr = run_group(cmd, a.eval_timeout)
    res["rc"] = rc
    if rc is None:
        res["error"] = f"khive eval ran past --eval-timeout {a.eval_timeout:g} s"
    res["wall_s"] = time.monotonic() - t0
    report = None
    if stdout.strip():
        try:
            report = parse_eval_output(stdout)
        except json.JSONDecodeError as e:
            res.setdefault("error", f"khive eval printed no JSON report ({e}); stderr: {stderr.strip()[-300:]}")
    if report is None:
        res.setdefault("error", f"khive eval rc {res.get('rc')}: {stderr.strip()[-400:] or 'no output'}")
        return res
    if save_dir:
        save_dir.mkdir(parents=True, exist_ok=True)
        (save_dir / f"{plan.key.replace('/', '__')}-{kernel.label}-s{seed}.json").write_text(json.dumps(report, indent=1))
    cand = report.get("candidate") or {}
    res.update(seconds=report.get("seconds"), guard_seconds=cand.get("guard_seconds"), judge_seconds=cand.get("judge_seconds"),
               golden_seconds=report.get("golden_seconds"), accepted=report.get("accepted"),
               build_key=(cand.get("build") or {}).get("key"), times=khive_times(report),
               device=report.get("device"), clocks=report.get("clocks"))
    if report.get("harness_error"):
        res["error"] = f"harness error: {report['harness_error']}"
    elif not report.get("accepted"):
        v = report.get("verdict") or {}
        res["error"] = f"rejected at check {v.get('check')} ({v.get('reason')}): {v.get('message', '')[:300]}"
    return res


def prebuild(khive, kernels, jobs):
    """Every kernel built once, in parallel, into khive's cache (the evaluations then find them built)."""
    def one(item):
        plan, k = item
        t0 = time.monotonic()
        rc, text = run_quiet([khive, "build", str(plan.dir), str(k.path), "--backend", "cuda"], timeout=900)
        return plan.key, k.label, rc, text.strip().splitlines()[0][:300] if text.strip() else "", time.monotonic() - t0
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, kernels))


# ---------------------------------------------------------------- the harness (GPU, in this process)

def cache_root():
    """khive's cache_root() (src/khive/support/files.cpp)."""
    for var, sub in (("KHIVE_CACHE", ""), ("XDG_CACHE_HOME", "khive")):
        v = os.environ.get(var)
        if v:
            return pathlib.Path(v) / sub if sub else pathlib.Path(v)
    home = os.environ.get("HOME")
    return pathlib.Path(home) / ".cache" / "khive" if home else pathlib.Path(f"/tmp/khive-cache-{os.getuid()}")


def cached_library(key):
    if not key:
        return None
    p = cache_root() / "build" / key[:2] / key / "cand.so"
    return p if p.is_file() else None


def prelude(task):
    """The generated unit's prelude (src/khive/compile/unit.cpp, generate_prelude): includes and the declaration."""
    used = {s["dtype"] for s in list(task.inputs.values()) + list(task.outputs.values())}
    inc = ["#include <cstdint>", "#include <cstddef>", "#include <cuda_runtime.h>"]
    if "float16" in used:
        inc.append("#include <cuda_fp16.h>")
    if "bfloat16" in used:
        inc.append("#include <cuda_bf16.h>")
    if used & {"float8_e4m3fn", "float8_e5m2"}:
        inc.append("#include <cuda_fp8.h>")
    if used & {"float4_e2m1", "float4_e2m1fn_x2"}:
        inc.append("#include <cuda_fp4.h>")
    return "\n".join(inc) + "\n" + signature(task) + ";\n"


def nvcc_fallback(plan, kernel, scratch):
    """Compile as builder.cpp does (same flags and CUTLASS include dirs; no khive_entry shim: khive_launch is called)."""
    d = scratch / plan.key.replace("/", "__") / f"nvcc-{kernel.label}"
    d.mkdir(parents=True, exist_ok=True)
    (d / "unit.cu").write_text(prelude(plan.task) + f'#include "{kernel.path.resolve()}"\n')
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    arch = (os.environ.get("KHIVE_CUDA_ARCH") or "-gencode=arch=compute_90a,code=sm_90a").split()
    cut = pathlib.Path(os.environ.get("KHIVE_CUTLASS") or REPO / ".deps" / "cutlass")
    cmd = [nvcc, "-std=c++17", "-O3", "-DNDEBUG", *arch, "-Xcompiler", "-fPIC", "-shared", "--cudart", "shared",
           "--expt-relaxed-constexpr", "-DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL=1"]
    if (cut / "include").is_dir():
        cmd.append(f"-I{cut / 'include'}")
        if (cut / "util-include").is_dir():
            cmd.append(f"-I{cut / 'util-include'}")
    cmd += ["-o", "cand.so", "unit.cu", "-Xlinker", "--no-undefined", "-lcuda"]
    cmd += [f"-l{lib}" for lib in plan.policy if lib in ("cublas", "cublasLt")]
    try:
        r = subprocess.run(cmd, cwd=d, capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"nvcc: {e}"
    if r.returncode != 0 or not (d / "cand.so").is_file():
        return None, f"nvcc failed: {(r.stdout + r.stderr).strip()[-400:]}"
    return d / "cand.so", " ".join(cmd)


class Harness:
    def __init__(self, torch, a, dev="cuda"):
        # dev "cpu" only for the self-test (bench/test_fidelity.py): inputs, arguments and output checks, no timing.
        self.torch, self.a, self.dev = torch, a, dev
        self.libs = {}
        self.broken = ""   # a CUDA error in this process: its context is gone, later measurements would lie
        if dev != "cuda":
            self.stream = None
            return
        props = torch.cuda.get_device_properties(0)
        self.device = props.name
        self.l2 = int(getattr(props, "L2_cache_size", 0) or ASSUMED_L2)
        self.flush_buf = torch.empty(2 * self.l2, dtype=torch.uint8, device="cuda")
        self.stream = torch.cuda.current_stream()
        self.start = torch.cuda.Event(enable_timing=True)
        self.stop = torch.cuda.Event(enable_timing=True)
        self.flush_s = self._time_flush()
        # torch.cuda._sleep counts SM cycles: --lead-us at the device's top clock (an H100/H200's 1.98 GHz)
        khz = getattr(torch.cuda.get_device_properties(0), "clock_rate", 0) or 0
        self.clock_ghz = khz / 1e6 if 0.5e6 <= khz <= 3e6 else 2.0

    def _time_flush(self):
        # How long the flush keeps the GPU busy: the host's call of khive_launch must fit in it, or the launch's host
        # time shows up between the start event and the kernel (rows flag it).
        ts = []
        for _ in range(10):
            self.start.record(self.stream)
            self.flush_buf.zero_()
            self.stop.record(self.stream)
            self.stop.synchronize()
            ts.append(self.start.elapsed_time(self.stop) * 1e-3)
        return statistics.median(ts)

    def entry(self, path):
        if path not in self.libs:
            lib = ctypes.CDLL(str(path), mode=os.RTLD_NOW | os.RTLD_LOCAL)
            self.libs[path] = lib.khive_launch   # exported by every candidate (compile/symbol_policy.cpp: own exports)
        return self.libs[path]

    def _scalar(self, a, gen_py):
        torch = self.torch
        src = a.source or {}
        if src.get("type") == "scalar":
            v = src["value"]
        else:
            kind, p = a.dist
            v = (gen_py.gauss(p["mean"], p["std"]) if kind == "normal" else gen_py.uniform(p["low"], p["high"])
                 if kind == "uniform" else gen_py.randint(p["low"], p["high"]) if kind == "integers" else p["value"])
        ct = getattr(ctypes, SCALAR_CTYPES[a.dtype])
        if a.dtype in ("float16", "bfloat16", "float8_e4m3fn", "float8_e5m2"):
            from khive_torch.dtypes import torch_dtype
            t = torch.tensor([float(v)], dtype=torch.float32).to(torch_dtype(torch, a.dtype))
            bits = t.view(torch.uint8 if t.element_size() == 1 else torch.int16).item() & (0xFF if t.element_size() == 1 else 0xFFFF)
            return ct(bits), v
        if a.dtype == "bool":
            return ct(bool(v)), bool(v)
        return ct(int(v) if a.dtype in INT_DTYPES else float(v)), v

    def _tensor(self, a, gen):
        from khive_torch.dtypes import torch_dtype
        torch = self.torch
        dt = torch_dtype(torch, a.dtype)
        kind, p = a.dist
        if kind == "integers":
            return torch.randint(p["low"], p["high"] + 1, a.shape, generator=gen, device=self.dev, dtype=torch.int64).to(dt)
        if kind == "constant":
            return torch.full(a.shape, float(p["value"]), device=self.dev, dtype=torch.float32).to(dt)
        t = torch.empty(a.shape, device=self.dev, dtype=torch.float32)
        (t.normal_(p["mean"], p["std"], generator=gen) if kind == "normal" else t.uniform_(p["low"], p["high"], generator=gen))
        return t.to(dt)

    def release(self):
        """khive's judge runs next: give the memory of this process's tensors back to the device."""
        try:
            self.torch.cuda.synchronize()
            self.torch.cuda.empty_cache()
        except RuntimeError as e:
            self.broken = self.broken or f"{type(e).__name__}: {str(e)[:300]}"

    def make_set(self, plan, case, seed):
        """One input set: (ctypes arguments, output tensors, keep-alive tensors)."""
        from khive_torch.dtypes import torch_dtype
        from khive_torch.inputs import custom_inputs, load_safetensors_input
        torch = self.torch
        gen = torch.Generator(device=self.dev)
        gen.manual_seed(seed)
        gen_py = random.Random(seed)
        vals, outs, keep, named, scalars, custom = [], [], [], {}, {}, None
        for a in case.args:
            if a.kind == "scalar":
                c, v = self._scalar(a, gen_py)
                vals.append(c)
                named[a.name] = scalars[a.name] = v
            elif a.kind == "input":
                src = a.source.get("type", "random")
                if src == "random":
                    t = self._tensor(a, gen)
                elif src == "scalar":
                    t = torch.full(a.shape, float(a.source["value"]), device=self.dev).to(torch_dtype(torch, a.dtype))
                elif src == "safetensors":
                    t = load_safetensors_input(plan.task, a.name, a.source, case.where).to(self.dev)
                else:   # SOL-ExecBench custom inputs: the reference's entry point makes them all at once
                    if custom is None:
                        custom = custom_inputs(torch, plan.task, case.axes, scalars, self.dev)
                    t = custom[a.name]
                t = t.contiguous()
                keep.append(t)
                named[a.name] = t
                vals.append(ctypes.c_void_p(t.data_ptr()))
            elif a.kind == "output":
                t = torch.empty(a.shape or (1,), device=self.dev, dtype=torch_dtype(torch, a.dtype))
                if a.dtype in INT_DTYPES:
                    t.view(torch.uint8).fill_(SENTINEL_BYTE)
                else:
                    t.view(torch.uint8).fill_(0xFF)   # all-ones bits: NaN in every float format khive has
                outs.append((a, t))
                keep.append(t)
                vals.append(ctypes.c_void_p(t.data_ptr()))
            elif a.kind == "axis":
                vals.append(ctypes.c_int64(a.value))
            else:   # the current stream: the events and the flush are on it too
                vals.append(ctypes.c_void_p(self.stream.cuda_stream if self.stream is not None else 0))
        plan.task.check_constraints(case.axes, named)   # data constraints (index ranges ...) on the inputs made
        return vals, outs, keep

    def check_outputs(self, outs):
        torch = self.torch
        for a, t in outs:
            if a.dtype == "bool":
                continue   # every byte pattern may be a written bool: nothing to check
            if a.dtype in INT_DTYPES:
                sentinel = torch.empty(1, dtype=t.dtype, device=self.dev)
                sentinel.view(torch.uint8).fill_(SENTINEL_BYTE)
                same = int((t == sentinel).sum().item())
                if (a.dtype == "int8" and same == t.numel()) or (a.dtype != "int8" and same):
                    return f"output {a.name}: {same} of {t.numel()} elements still hold the pre-fill (unwritten)"
                continue
            f = t.float()
            nan, inf = int(torch.isnan(f).sum().item()), int(torch.isinf(f).sum().item())
            if nan:
                return f"output {a.name}: {nan} of {t.numel()} elements NaN (unwritten: outputs are pre-filled with NaN)"
            if inf:
                return f"output {a.name}: {inf} of {t.numel()} elements infinite"
        return ""

    def placements(self, case, n_sets, free_b):
        """How many placements of n_sets sets fit in PLACEMENT_MEMORY of free_b bytes (at least one)."""
        want = max(1, min(getattr(self.a, "placements", 1), len(PLACEMENT_SHIFTS)))
        per = max(1, case.set_bytes() * n_sets)
        fit = 1 + int(max(0.0, PLACEMENT_MEMORY * free_b - per) // (per + PLACEMENT_SHIFTS[-1]))
        return max(1, min(want, fit))

    def measure(self, plan, case, fn, seed, gap_ms=0.0):
        torch, a = self.torch, self.a
        n_sets = MAX_SETS if case.set_bytes() <= self.l2 else 1
        groups = []   # per placement: (spacer, sets); every placement holds the same values (same seeds)
        try:
            n_place = self.placements(case, n_sets, torch.cuda.mem_get_info()[0])
            for j in range(n_place):
                spacer = torch.empty(PLACEMENT_SHIFTS[j], dtype=torch.uint8, device="cuda") if PLACEMENT_SHIFTS[j] else None
                groups.append((spacer, [self.make_set(plan, case, seed * 1000 + i) for i in range(n_sets)]))
            # What the device has left once this workload's sets are made: a kernel whose workspace cudaMalloc fails
            # takes its slower fallback here and not in khive's fresh executor. (kb06's 0.79 on the H100 was another
            # state of this long process: libraries sharing CUTLASS's template statics, fixed by -fno-gnu-unique in
            # khive's builds; docs/results/2026-12-06-h100-s4.)
            free_b = torch.cuda.mem_get_info()[0]
            fn.restype = None
            fn.argtypes = [type(v) for v in groups[0][1][0][0]]
            for _, sets in groups:   # the written/finite check, once per set, before any timing
                for vals, outs, _ in sets:
                    fn(*vals)
                    torch.cuda.synchronize()
                    bad = self.check_outputs(outs)
                    if bad:
                        return {"error": bad}
            order = [(j, i) for i in range(n_sets) for j in range(n_place)]   # round-robin: drift hits every placement
            for i in range(max(a.warmup, n_place)):
                self.flush_buf.zero_()
                j, k = order[i % len(order)]
                fn(*groups[j][1][k][0])
            torch.cuda.synchronize()
            times, host, by_place = [], [], [[] for _ in range(n_place)]
            t0 = time.monotonic()
            for i in range(max(a.samples, n_place)):
                j, k = order[i % len(order)]
                vals = groups[j][1][k][0]
                self.flush_buf.zero_()          # queued first: the GPU is busy while the host calls khive_launch
                if a.lead_us > 0:               # and longer than the flush alone, for a launch of a few hundred us
                    torch.cuda._sleep(int(a.lead_us * self.clock_ghz * 1e3))
                self.start.record(self.stream)
                h0 = time.perf_counter()
                fn(*vals)
                host.append(time.perf_counter() - h0)
                self.stop.record(self.stream)
                self.stop.synchronize()
                times.append(self.start.elapsed_time(self.stop) * 1e-3)
                by_place[j].append(times[-1])
                if gap_ms > 0:   # the GPU idles between samples, as between khive's batches (power and clocks)
                    time.sleep(gap_ms * 1e-3)
                if time.monotonic() - t0 > a.harness_cap and len(times) >= max(5, n_place):
                    break
            torch.cuda.synchronize()
        except RuntimeError as e:
            if "CUDA" not in str(e) and "cuda" not in str(e):
                raise
            self.broken = f"{type(e).__name__}: {str(e)[:300]}"   # a CUDA error: this context is unusable from here on
            return {"error": f"CUDA error in the harness: {self.broken}"}
        finally:
            groups = vals = None
        s = sorted(times)
        places = [statistics.median(x) for x in by_place if x]
        return {"median_s": statistics.median(s), "gap_ms": gap_ms, "min_s": s[0], "p10_s": s[len(s) // 10], "p90_s": s[(9 * len(s)) // 10],
                "samples": len(s), "sets": n_sets, "placements": places,
                "placement_spread": (max(places) - min(places)) / min(places) if places else 0.0,
                "host_call_s": statistics.median(host),
                "launch_exposed": statistics.median(host) > 0.8 * (self.flush_s + a.lead_us * 1e-6),
                "free_gb": free_b / 1e9}


# ---------------------------------------------------------------- rows, summary, report

def compare(khive_by_seed, harness_s):
    """khive's per-seed medians against the harness median: ratio, |diff|, tolerance, seeds spread. harness_s may be a
    list, one median per rhythm (--gap-ms): the row compares with the nearest ("harness_pick" says which), and says
    per rhythm whether it is within ("within_by_rhythm")."""
    ks = [k for k in khive_by_seed if k]
    hs = list(harness_s) if isinstance(harness_s, list) else [harness_s]
    k_med = statistics.median(ks) if ks else None
    ok = [h for h in hs if h]
    pick = min(range(len(hs)), key=lambda i: abs(math.log(k_med / hs[i])) if hs[i] else math.inf) if ok and k_med else 0
    harness_s = hs[pick] if hs else None
    row = {"khive_s": k_med, "harness_s": harness_s, "harness_pick": pick}
    if ks and ok:
        row["within_by_rhythm"] = [bool(h) and abs(k_med - h) <= max(TOL_REL * h, TOL_ABS_S) for h in hs]
    if ks and harness_s:
        row["ratio"] = row["khive_s"] / harness_s
        row["diff_us"] = abs(row["khive_s"] - harness_s) * 1e6
        row["within"] = abs(row["khive_s"] - harness_s) <= max(TOL_REL * harness_s, TOL_ABS_S)
    if len(ks) >= 2:
        row["seed_spread"] = (max(ks) - min(ks)) / min(ks)
        row["spread_flag"] = row["seed_spread"] > SPREAD_FLAG + 1e-9 and min(ks) >= SPREAD_MIN_S
    return row


def placement_range(row, h):
    """The compared rhythm's placements: their [min, max] median, and whether khive's median lies within tolerance of
    that range (the kernel's own time is a distribution over where its tensors land; see PLACEMENT_SHIFTS)."""
    pl, k = [x for x in h.get("placements") or [] if x], row.get("khive_s")
    if not pl:
        return {}
    lo, hi = min(pl), max(pl)
    out = {"placement_range": [lo, hi]}
    if k:
        out["within_placements"] = lo - max(TOL_REL * lo, TOL_ABS_S) <= k <= hi + max(TOL_REL * hi, TOL_ABS_S)
    return out


def build_rows(plans, state):
    rows = []
    for p in plans:
        for k in p.kernels:
            st = state.get((p.key, k.label)) or {}
            for c in p.cases:
                evs = [st.get("evals", {}).get(s) for s in p.seeds]
                per_seed = [((e or {}).get("times") or {}).get(c.uuid, {}).get("median_s") if e else None for e in evs]
                events = [((e or {}).get("times") or {}).get(c.uuid, {}).get("events_s") if e else None for e in evs]
                h = (st.get("harness") or {}).get(c.uuid) or {}
                row = {"type": "row", "task": p.key, "kernel": k.label, "kernel_short": k.short or k.label,
                       "kernel_what": k.what, "workload": c.uuid,
                       "axes": {n: v for n, v in c.axes.items()}, "seeds": p.seeds, "khive_median_s": per_seed,
                       "khive_events_s": median(events), "harness": h, "library": st.get("library"),
                       "library_how": st.get("library_how")}
                row.update(compare(per_seed, [h.get("median_s")] + [x.get("median_s") for x in h.get("rhythms") or []]))
                row.update(placement_range(row, ([h] + list(h.get("rhythms") or []))[row.get("harness_pick") or 0]))
                errs = [f"seed {e['seed']}: {e['error']}" for e in evs if e and e.get("error")]
                errs += [x for x in (k.error, st.get("error"), h.get("error")) if x]
                if errs:
                    row["errors"] = errs
                rows.append(row)
    return rows


def summarize(rows, evals, skipped):
    both = [r for r in rows if r.get("ratio")]
    worst = max(both, key=lambda r: abs(math.log(r["ratio"])), default=None)
    walls = [e["wall_s"] for e in evals if e.get("wall_s") is not None]
    guards = [e["guard_seconds"] for e in evals if e.get("guard_seconds") is not None]
    secs = [e["seconds"] for e in evals if e.get("seconds") is not None]

    def stat(xs):
        return {"mean": statistics.fmean(xs), "max": max(xs), "n": len(xs)} if xs else None
    return {"type": "summary", "rows": len(rows), "compared": len(both), "within": sum(1 for r in both if r["within"]),
            "worst": {k: worst[k] for k in ("task", "kernel", "workload", "ratio", "diff_us")} if worst else None,
            "seed_spread_flags": sum(1 for r in rows if r.get("spread_flag")),
            "seed_spread_rows": sum(1 for r in rows if "seed_spread" in r),
            "eval_wall_s": stat(walls), "eval_seconds": stat(secs), "guard_seconds": stat(guards),
            "within_by_rhythm": [sum(1 for r in both if (r.get("within_by_rhythm") or [])[i:i + 1] == [True])
                                 for i in range(max((len(r.get("within_by_rhythm") or []) for r in both), default=0))],
            "within_placements": sum(1 for r in both if r.get("within_placements")),
            "placement_rows": sum(1 for r in both if "within_placements" in r),
            "placement_spread_max": max((r["placement_range"][1] / r["placement_range"][0] - 1 for r in rows
                                         if r.get("placement_range")), default=None),
            "errors": sum(1 for r in rows if r.get("errors")), "skipped": skipped}


def cell(text):
    """Text for a Markdown table cell: a '|' (regexes of workloads, messages) would end the cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def us(s):
    return "-" if s is None else f"{s * 1e6:.2f}"


def markdown(meta, plans, rows, summary):
    gaps = meta.get("gap_ms") if isinstance(meta.get("gap_ms"), list) else [meta.get("gap_ms") or 0]
    L = [f"# Fidelity of khive's timing: khive eval vs an in-process harness ({meta['date']})", "",
         f"Device: {meta.get('device', '?')}; torch {meta.get('torch', '?')}; khive `{meta['khive']}`; cache `{meta['cache']}`.",
         f"Command: `{meta['command']}`", "",
         "khive = `workloads[].kernel.median_s` of `khive eval --json` (the judge's clock), one per seed; khive events = "
         "the executor's own clock (median of `in_process_s`, a diagnostic); harness = the same library called in-process "
         f"(flush 2x L2 = {meta.get('flush_mb', '?')} MB, {meta.get('flush_us', '?')} us; a {meta.get('lead_us', 0):g} us spin; start event; khive_launch; stop "
         f"event; idle {' ms, then '.join(f'{g:g}' for g in gaps)} ms after each sample; median of {meta['samples']} samples "
         f"after {meta['warmup']} warm-up calls)"
         + (f", once per idle time (the harness column lists them in that order; * marks the one compared: the nearest to "
            "khive, since a kernel's own time depends on the GPU's duty cycle)" if len(gaps) > 1 else "")
         + f". The harness's sets are made {meta.get('placements', 1)} times, each behind a spacer of another size, sampled "
         "round-robin (placements: the min-max of their medians; in = khive within tolerance of that range). "
         "Within: |khive - harness| <= max(3 %, 1 us). Seeds spread: (max - min) / min of khive's medians, flagged (!) above 2 % for kernels >= 20 us. "
         "L = the host's khive_launch call outlasted 80 % of the flush, so launch time may be in the harness sample.", ""]
    L += ["## Kernels", "", "| task | kernel | what | from |", "|---|---|---|---|"]
    for p in plans:
        for k in p.kernels:
            err = cell(f" (ERROR: {k.error})") if k.error else ""
            L.append(f"| {p.key} | {k.label} | {cell(k.what)}{err} | {cell(k.source)} |")
    L += ["", "## Rows", "",
          "| task | kernel | workload | khive per seed (us) | khive events (us) | harness (us) | khive/harness | abs diff (us) "
          "| within | placements (us) | seeds spread | library | note |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        per = " / ".join(us(x) for x in r["khive_median_s"])
        h = r["harness"]
        spread = "-" if "seed_spread" not in r else f"{100 * r['seed_spread']:.2f}%{' !' if r.get('spread_flag') else ''}"
        note = "; ".join(r.get("errors") or [])
        if h.get("free_gb") is not None and h["free_gb"] < 8:
            note = (note + f"; {h['free_gb']:.1f} GB free in the harness").strip("; ")
        if h.get("launch_exposed"):
            note = ("L " + note).strip()
        if h.get("samples") and h["samples"] < 50:
            note = (note + f"; harness n={h['samples']}").strip("; ")
        ratio = f"{r['ratio']:.3f}" if "ratio" in r else "-"
        diff = f"{r['diff_us']:.2f}" if "diff_us" in r else "-"
        within = "-" if "within" not in r else ("yes" if r["within"] else "NO")
        hs = [h] + list(h.get("rhythms") or [])
        hcell = " / ".join(us(x.get("median_s")) + ("*" if len(hs) > 1 and i == r.get("harness_pick") else "")
                           for i, x in enumerate(hs))
        pr = r.get("placement_range")
        pcell = "-" if not pr else (f"{us(pr[0])}-{us(pr[1])} ({100 * (pr[1] / pr[0] - 1):.1f}%)"
                                    + ("" if "within_placements" not in r else " in" if r["within_placements"] else " OUT"))
        L.append(f"| {r['task']} | {cell(r['kernel_short'])} | {cell(r['workload'])} | {per} | {us(r.get('khive_events_s'))} | "
                 f"{hcell} | {ratio} | {diff} | {within} | {pcell} | {spread} | {r.get('library_how') or '-'} | {cell(note)} |")
    s = summary
    L += ["", "## Summary", "",
          f"- rows within tolerance: {s['within']} / {s['compared']} compared ({s['rows']} rows, {s['errors']} with errors)"]
    if len(s.get("within_by_rhythm") or []) > 1:
        L.append("- within against one rhythm alone: " + ", ".join(
            f"idle {g:g} ms {n} / {s['compared']}" for g, n in zip(gaps, s["within_by_rhythm"])))
    if s.get("placement_rows"):
        L.append(f"- rows within tolerance of the harness's placement range (min-max of its placements' medians): "
                 f"{s['within_placements']} / {s['placement_rows']}; widest placement range "
                 f"{100 * (s.get('placement_spread_max') or 0):.1f} %")
    if s["worst"]:
        w = s["worst"]
        L.append(f"- worst ratio: {w['ratio']:.3f} ({w['task']} {w['kernel']} {w['workload']}, |diff| {w['diff_us']:.2f} us)")
    L.append(f"- seeds-spread violations: {s['seed_spread_flags']} of {s['seed_spread_rows']} rows with several seeds")
    for key, what in (("eval_wall_s", "khive eval wall seconds per candidate"), ("eval_seconds", "khive eval `seconds` per candidate"),
                      ("guard_seconds", "guard_seconds per candidate")):
        v = s[key]
        L.append(f"- {what}: " + (f"mean {v['mean']:.2f}, max {v['max']:.2f} (n={v['n']})" if v else "-"))
    if s["skipped"]:
        L += ["", f"Skipped (--time-limit {meta['time_limit']:g} s or an earlier failure):", ""]
        L += [f"- {x}" for x in s["skipped"]]
    if meta.get("interrupted"):
        L += ["", f"**Interrupted**: {meta['interrupted']}; the rows above are what was measured before."]
    return "\n".join(L) + "\n"


# ---------------------------------------------------------------- main

def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("suites", nargs="*", help="suite or task directories (default tasks/sol tasks/cutegen26)")
    p.add_argument("--tasks", help="regex over <suite>/<task directory> and the definition name (re.search)")
    p.add_argument("--kernels", default="ref,best", help="which kernels: ref, best, both or none (default ref,best)")
    p.add_argument("--file", action="append", default=[], metavar="LABEL=PATH",
                   help="also measure this kernel file on every task ({task} in PATH: the task's directory name); repeatable")
    p.add_argument("--seeds", default="sol=3,*=1", help="khive evals per kernel: N, or SUITE=N,...,*=N (default sol=3,*=1)")
    p.add_argument("--seed-base", type=int, default=11, help="first --seed passed to khive eval (then +1, +2, ...)")
    p.add_argument("--max-workloads", type=int, default=2, help="perf workloads per task, evenly spaced (0 = all; default 2)")
    p.add_argument("--time-limit", type=float, default=300, help="no new evaluation starts after this many seconds (default 300)")
    p.add_argument("--out", help="markdown report (default .khive/fidelity/fidelity-<UTC time>.md); JSON lines beside it")
    p.add_argument("--scratch", help="folder for rendered kernels and eval JSON (default: <out stem>-files)")
    p.add_argument("--khive", help="khive binary (default: on PATH, else build/bin/khive)")
    p.add_argument("--khive-tune", help="khive-tune binary (default: beside khive)")
    p.add_argument("--kernels-dir", default=str(REPO / "kernels"), help="the tuner's template library")
    p.add_argument("--best-points", default=str(REPO / "bench" / "fidelity_kernels.json"), help="recorded best points")
    p.add_argument("--eval-time-cap", type=float, help="khive eval --time-cap (default: khive's own, 2 s on cuda)")
    p.add_argument("--eval-timeout", type=float, default=300, help="seconds one khive eval may take (default 300)")
    p.add_argument("--build-jobs", type=int, default=os.cpu_count() or 4, help="parallel khive builds before timing")
    p.add_argument("--samples", type=int, default=60, help="harness samples per workload (default 60)")
    p.add_argument("--warmup", type=int, default=3, help="harness warm-up calls (default 3)")
    p.add_argument("--gap-ms", default="0",
                   help="harness: idle this long after every sample, ms (default 0: back to back); a list (0,2) measures "
                        "each workload once per rhythm. A GPU that runs a kernel back to back can clock down under its "
                        "power cap where khive's batches leave it gaps, and clock up after an idle: a kernel's own time "
                        "depends on the rhythm, so a row is within when khive agrees with one of the rhythms measured")
    p.add_argument("--lead-us", type=float, default=300,
                   help="harness: a spin of this many us queued after the flush, before the start event, so the host's "
                        "khive_launch is never inside a sample (a CUTLASS GEMM's host side can take a few hundred us, "
                        "longer than the flush's ~35 us). Default 300; 0: none")
    p.add_argument("--placements", type=int, default=len(PLACEMENT_SHIFTS),
                   help=f"harness: copies of the input sets, each behind a spacer of another size, sampled round-robin "
                        f"(1-{len(PLACEMENT_SHIFTS)}, default {len(PLACEMENT_SHIFTS)}; fewer when they would not fit in "
                        f"{PLACEMENT_MEMORY:.0%} of the free memory)")
    p.add_argument("--harness-cap", type=float, default=10, help="seconds of harness sampling per workload (default 10)")
    p.add_argument("--dry-run", action="store_true", help="no GPU: print the cases, arguments and commands")
    a = p.parse_args(argv)
    try:
        a.gaps = [float(g) for g in a.gap_ms.split(",") if g.strip()]
    except ValueError:
        p.error(f"--gap-ms {a.gap_ms!r}: expected milliseconds, or a comma-separated list of them (0,2)")
    if not a.gaps or any(g < 0 or g > 1000 for g in a.gaps):
        p.error(f"--gap-ms {a.gap_ms!r}: expected one or more idle times from 0 to 1000 ms")
    words = [k.strip() for k in a.kernels.split(",") if k.strip()]
    a.want = [] if words == ["none"] else words
    if not words or any(k not in ("ref", "best") for k in a.want):
        p.error(f"--kernels: expected ref, best, ref,best or none, got {a.kernels!r}")
    a.files = []
    for f in a.file:
        label, eq, path = f.partition("=")
        label = label.strip()
        if not eq or not path or not label.replace("-", "").replace("_", "").isalnum() or label in ("ref", "best") \
                or label in [x for x, _ in a.files]:
            p.error(f"--file {f!r}: expected LABEL=PATH with a new label of letters, digits, - and _ (not ref or best)")
        a.files.append((label, path))
    if not a.want and not a.files:
        p.error("nothing to measure: --kernels none and no --file")
    try:
        a.seeds_by_suite = parse_seeds(a.seeds)
    except ValueError as e:
        p.error(str(e))
    if a.samples < 1 or a.max_workloads < 0:
        p.error("--samples must be >= 1 and --max-workloads >= 0")
    if not 1 <= a.placements <= len(PLACEMENT_SHIFTS):
        p.error(f"--placements {a.placements}: expected 1 to {len(PLACEMENT_SHIFTS)}")
    return a


def find_binary(explicit, name, near=None):
    if explicit:
        return explicit
    if near:
        cand = pathlib.Path(near).parent / name
        if cand.is_file():
            return str(cand)
    found = shutil.which(name)
    if found:
        return found
    local = REPO / "build" / "bin" / name
    return str(local) if local.is_file() else None


def make_plans(a, tune, scratch, render):
    suites = [pathlib.Path(s) for s in (a.suites or [REPO / "tasks" / "sol", REPO / "tasks" / "cutegen26"])]
    best_points = load_best_points(a.best_points) if "best" in a.want else {}
    rx = re.compile(a.tasks) if a.tasks else None
    plans = []
    for s in suites:
        if not s.is_dir():
            raise SystemExit(f"fidelity: {s}: not a directory")
        for d in find_tasks(s):
            suite = d.parent.name
            key = f"{suite}/{d.name}"
            if rx and not rx.search(key):
                try:   # the definition name too (softmax_bf16)
                    if not rx.search(json.loads((d / "definition.json").read_text()).get("name", "")):
                        continue
                except (OSError, json.JSONDecodeError):
                    continue
            p = plan_task(d, suite, a, a.seeds_by_suite)
            if not p.error:
                plan_kernels(p, a.want, best_points, tune, a.kernels_dir, scratch, render, a.files)
            plans.append(p)
    return plans


def size_text(n):
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div:
            return f"{n / div:.1f} {unit}"
    return f"{n} B"


def print_plan(plans, a, khive, tune, check_signature):
    print(f"dry run: {len(plans)} task(s); khive {khive or '(not found)'}; khive-tune {tune or '(not found)'}; "
          f"--max-workloads {a.max_workloads or 'all'}; seeds {a.seeds}; time limit {a.time_limit:g} s")
    n_evals = 0
    for p in plans:
        if p.error:
            print(f"\n{p.key}: ERROR {p.error}")
            continue
        print(f"\n{p.key} ({p.name}): {p.n_perf} perf workload(s) on cuda, {len(p.cases)} picked; seeds {' '.join(map(str, p.seeds))}")
        sig = signature(p.task)
        note = ""
        if check_signature and khive:
            rc, text = run_quiet([khive, "signature", str(p.dir), "--backend", "cuda"], timeout=60)
            note = "  [= khive signature]" if rc == 0 and text.strip() == sig else (
                f"  [MISMATCH with khive signature: {text.strip()}]" if rc == 0 else f"  [khive signature failed: {text.strip()[:200]}]")
        print(f"  signature: {sig}{note}")
        for k in p.kernels:
            where = k.path if k.path else "(rendered on the device)"
            print(f"  kernel {k.label}: {k.what} -> {where}{'  ERROR: ' + k.error if k.error else ''}")
            if k.source:
                print(f"    from: {k.source}")
            if k.command:
                print(f"    render: {shlex.join(k.command)}")
        for c in p.cases:
            sets = MAX_SETS if c.set_bytes() <= ASSUMED_L2 else 1
            axes = " ".join(f"{n}={v}" for n, v in c.axes.items())
            print(f"  workload {c.uuid} ({c.where}): axes {axes}; {size_text(c.set_bytes())} per input set -> {sets} set(s)"
                  f" rotated (L2 assumed {ASSUMED_L2 >> 20} MiB here)")
            print("    khive_launch(" + ", ".join(describe_arg(x) for x in c.args) + ")")
        # One command line per (kernel, seed); shown once, with the kernels and seeds it is repeated for.
        n_evals += len(p.kernels) * len(p.seeds)
        if p.kernels:
            k = p.kernels[0]
            print("  $ " + shlex.join(khive_command(khive or "khive", p, k.path or f"<{k.label}.cu>", p.seeds[0], a.eval_time_cap)))
            print(f"    (for kernel {', '.join(x.label for x in p.kernels)} x --seed {' '.join(map(str, p.seeds))}; "
                  f"then the harness on each picked workload)")
    print(f"\n{n_evals} khive eval(s) and {sum(len(p.cases) * len(p.kernels) for p in plans if not p.error)} harness "
          "measurement(s) planned")


def main(argv=None):
    a = parse_args(argv)
    khive = find_binary(a.khive, "khive")
    tune = find_binary(a.khive_tune, "khive-tune", near=khive)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = pathlib.Path(a.out) if a.out else REPO / ".khive" / "fidelity" / f"fidelity-{stamp}.md"
    scratch = pathlib.Path(a.scratch) if a.scratch else out.with_name(out.stem + "-files")

    if a.dry_run:
        # Render the best kernels only when khive-tune runs here (no build): checks the recorded points too.
        dry_scratch = pathlib.Path(a.scratch) if a.scratch else pathlib.Path("/tmp") / f"khive-fidelity-dry-{os.getpid()}"
        plans = make_plans(a, tune, dry_scratch, render=bool(tune))
        if not plans:
            print("fidelity: no task matched", file=sys.stderr)
            return 2
        print_plan(plans, a, khive, tune, check_signature=True)
        return 0

    if not khive:
        print("fidelity: khive not found (--khive)", file=sys.stderr)
        return 2
    t_start = time.monotonic()

    def on_term(signum, frame):
        raise Interrupted(f"signal {signum}")
    signal.signal(signal.SIGTERM, on_term)
    try:
        plans = make_plans(a, tune, scratch, render=True)
    except Interrupted as e:
        print(f"fidelity: interrupted ({e}) while rendering the kernels; nothing measured", file=sys.stderr)
        return 130
    if not plans:
        print("fidelity: no task matched", file=sys.stderr)
        return 2
    try:
        import torch
    except ImportError:
        sys.path.insert(0, str(REPO / ".deps" / "torch"))
        import torch
    if not torch.cuda.is_available():
        print("fidelity: torch sees no GPU (use --dry-run here)", file=sys.stderr)
        return 2

    harness = Harness(torch, a)
    meta = {"date": stamp, "device": harness.device, "torch": torch.__version__, "khive": khive, "cache": str(cache_root()),
            "command": " ".join([pathlib.Path(sys.argv[0]).name] + (sys.argv[1:] if argv is None else list(argv))),
            "samples": a.samples, "warmup": a.warmup, "time_limit": a.time_limit, "gap_ms": a.gaps, "lead_us": a.lead_us, "placements": a.placements,
            "flush_mb": f"{2 * harness.l2 / 1e6:.0f}", "flush_us": f"{harness.flush_s * 1e6:.1f}"}
    state, evals, skipped = {}, [], []
    out.parent.mkdir(parents=True, exist_ok=True)

    def write():
        rows = build_rows(plans, state)
        summary = summarize(rows, evals, skipped)
        tmp = out.with_suffix(".md.tmp")
        tmp.write_text(markdown(meta, plans, rows, summary))
        os.replace(tmp, out)
        with open(out.with_suffix(".jsonl.tmp"), "w") as f:
            f.write(json.dumps({"type": "meta", **meta}) + "\n")
            for e in evals:
                f.write(json.dumps({"type": "eval", **{k: v for k, v in e.items() if k != "times"}}) + "\n")
            for r in rows:
                f.write(json.dumps(r) + "\n")
            f.write(json.dumps(summary) + "\n")
        os.replace(out.with_suffix(".jsonl.tmp"), out.with_suffix(".jsonl"))
        return rows, summary

    def over(what):
        if time.monotonic() - t_start > a.time_limit:
            skipped.append(what)
            print(f"skipped (time limit): {what}", flush=True)
            return True
        return False

    todo = [(p, k) for p in plans if not p.error for k in p.kernels if k.path and not k.error]
    try:
        print(f"building {len(todo)} kernel(s) with {a.build_jobs} jobs ...", flush=True)
        for key, label, rc, line, secs in prebuild(khive, todo, a.build_jobs):
            print(f"  build {key} {label}: rc {rc} {secs:.1f} s {line}", flush=True)
            if rc != 0:
                state.setdefault((key, label), {})["error"] = f"khive build failed (rc {rc}): {line}"
        write()
        for pass_no in (1, 2):
            for p, k in todo:
                st = state.setdefault((p.key, k.label), {})
                if st.get("error"):
                    continue
                for seed in (p.seeds[:1] if pass_no == 1 else p.seeds[1:]):
                    if over(f"khive eval {p.key} {k.label} seed {seed}"):
                        continue
                    e = run_eval(khive, p, k, seed, a, scratch / "evals")
                    evals.append(e)
                    st.setdefault("evals", {})[seed] = e
                    if e.get("build_key"):
                        st.setdefault("build_key", e["build_key"])
                    print(f"{p.key} {k.short or k.label} seed {seed}: {e.get('wall_s', 0):.1f} s wall"
                          + "".join(f"; {u} {us(t['median_s'])} us" for u, t in (e.get("times") or {}).items())
                          + (f"; ERROR {e['error']}" if e.get("error") else ""), flush=True)
                    write()
                if pass_no == 1 and not st.get("harness"):
                    print(f"harness {p.key} {k.short or k.label} from "
                          f"{datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')}", flush=True)
                    measure_kernel(harness, p, k, st, a, scratch, over)
                    write()
    except Interrupted as e:
        meta["interrupted"] = str(e)
    rows, summary = write()
    print(markdown(meta, plans, rows, summary).split("## Rows", 1)[1], flush=True)
    print(f"wrote {out} and {out.with_suffix('.jsonl')}")
    if meta.get("interrupted"):
        return 130
    return 0 if summary["errors"] == 0 and not skipped and all(not p.error for p in plans) else 1


def measure_kernel(harness, p, k, st, a, scratch, over):
    """The harness on every picked workload of one (task, kernel), with the library khive built."""
    if harness.broken:
        st["error"] = f"harness skipped: an earlier CUDA error ({harness.broken})"
        return
    if over(f"harness {p.key} {k.label}"):
        return
    lib = cached_library(st.get("build_key"))
    if lib:
        st["library"], st["library_how"] = str(lib), "khive cache"
    else:
        lib, how = nvcc_fallback(p, k, scratch)
        if not lib:
            st["error"] = f"no library: not in khive's cache (key {st.get('build_key')}) and {how}"
            return
        st["library"], st["library_how"] = str(lib), "nvcc (not khive's build)"
        st["nvcc_command"] = how
    try:
        fn = harness.entry(pathlib.Path(st["library"]))
    except (OSError, AttributeError) as e:
        st["error"] = f"cannot load {st['library']}: {e}"
        return
    st["harness"] = {}
    for c in p.cases:
        got = []
        for gap in a.gaps:   # the first rhythm's result is the row's; the others go under "rhythms"
            try:
                r = harness.measure(p, c, fn, seed=p.seeds[0], gap_ms=gap)
            except (TaskError, ValueError, KeyError, RuntimeError) as e:
                r = {"error": f"{type(e).__name__}: {str(e)[:300]}", "gap_ms": gap}
            harness.release()
            got.append(r)
            print(f"{p.key} {k.short or k.label} {c.uuid}: harness, idle {gap:g} ms: " +
                  (f"{us(r['median_s'])} us (n={r['samples']}, {r['sets']} set(s))" if "median_s" in r else f"ERROR {r['error']}"),
                  flush=True)
            if harness.broken:
                break
        st["harness"][c.uuid] = dict(got[0], rhythms=got[1:]) if len(got) > 1 else got[0]
        if harness.broken:
            break


if __name__ == "__main__":
    sys.exit(main())
