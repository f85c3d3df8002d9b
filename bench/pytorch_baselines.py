#!/usr/bin/env python3
"""PyTorch baselines: times the PyTorch equivalent of every task of a suite with the guard's method.

  pytorch_baselines.py SUITE [--device cuda|cpu] [--out FILE] [--tasks a,b] [--time-cap S] [--seed N] [--compile [MODE]]
                      [--no-host-ahead] [--gap-ms MS]

khive times PyTorch on the judge's clock itself (`khive eval/bench --pytorch-ruler judge`, the GPU's default); this
file is the fallback where that cannot run, and the independent in-process check of the judge's numbers
(bench/pytorch_ruler.py).

For every task under SUITE (a directory holding definition.json, as `khive tasks` finds them) whose
definition.json has a "reference" field (SOL-ExecBench: Python source defining run(*inputs)), and every
perf workload that runs on the device (workload field khive.backends, default ["cpu", "cuda"]):
  - axes are resolved (const, the workload's var values, expr axes with Python's arithmetic — the task
    format's expression language is Python's, with && || ! as aliases);
  - inputs are drawn from the workload's or else the task's distributions (khive.inputs; defaults normal(0.5, 1) for floats,
    integers(-8, 8) for integers, 0/1 for bool), scalars from the workload's "scalar" value;
  - run(*inputs) is called once and must return the outputs (one tensor or a tuple, in definition order)
    with the declared shapes and dtypes (timing only: the values are not checked);
  - it is timed like khive's runner (src/khive/runner/session.cpp, TimingPlan in job/protocol.hpp):
    3 warm-ups, then samples, each after writing a buffer of 2x the L2 (CPU: last-level cache) size and a
    device-wide synchronize, between CUDA events on the current stream, the call enqueued while the GPU sleeps
    1 ms (--host-ahead, the default: the GPU's work alone) (CPU: a monotonic clock); stop
    after at least 10 samples once 1.4826*MAD/median < 0.5 %, at 200 samples, or at the time cap
    (default 2 s on CUDA, 0.5 s on the CPU, as `khive eval`); report the median and that spread.

Writes SUITE/baselines/pytorch-<gpu>.json (gpu: "h200", "h100", else the sanitized device name; the CPU
gets "cpu-<sanitized model name>"), which `khive eval` and `khive bench` read as T_b (docs/bench.md).
The file is rewritten after every task, so an interrupted run keeps what it measured. A task whose
reference is missing or fails is recorded with its error and the run goes on.
Exit: 0 every task measured, 1 some task failed, 2 bad arguments or no task found.
"""
import argparse
import ast
import datetime
import json
import math
import os
import pathlib
import platform
import re
import subprocess
import sys
import tempfile
import time

SCHEMA = "khive.pytorch-baselines/1"
MAD_TO_SIGMA = 1.4826


# ---------------------------------------------------------------- names shared with khive (score/pytorch_baselines.cpp)

def slug(name):
    """GPU slug of a device name: h200 / h100, else lower-case alphanumerics joined by '_'."""
    low = name.lower()
    for known in ("h200", "h100"):
        if known in low:
            return known
    return re.sub(r"[^a-z0-9]+", "_", low).strip("_") or "unknown"


def cpu_model():
    """The name khive's CPU runner reports (first "model name" line of /proc/cpuinfo)."""
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip() if ":" in line else line
    except OSError:
        pass
    return "unknown CPU"


# ---------------------------------------------------------------- task files

class TaskError(Exception):
    pass


def find_tasks(root):
    """Directories holding definition.json under root, sorted; hidden ones and those inside a task skipped."""
    root = pathlib.Path(root)
    if (root / "definition.json").is_file():
        return [root]
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        if "definition.json" in filenames and pathlib.Path(dirpath) != root:
            found.append(pathlib.Path(dirpath))
            dirnames[:] = []
    return sorted(found)


def load_workloads(task_dir):
    out = []
    path = task_dir / "workload.jsonl"
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            w = json.loads(line)
        except json.JSONDecodeError as e:
            raise TaskError(f"{task_dir.name}/workload.jsonl: line {i}: (syntax): expected valid JSON, got {e}")
        if isinstance(w, dict) and isinstance(w.get("workload"), dict) and "definition" in w:
            w = w["workload"]   # a FlashInfer Trace record
        if not isinstance(w, dict):
            raise TaskError(f"{task_dir.name}/workload.jsonl: line {i}: (root): expected a JSON object")
        w.setdefault("uuid", f"w{i}")
        w["_line"] = i
        out.append(w)
    return out


_ALLOWED = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Constant, ast.Name, ast.Load,
            ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.USub, ast.UAdd, ast.Not,
            ast.And, ast.Or, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def eval_expr(text, values):
    """The task format's expression language is Python's arithmetic; && || ! are aliases of and/or/not."""
    py = text.replace("&&", " and ").replace("||", " or ")
    py = re.sub(r"!(?!=)", " not ", py)
    tree = ast.parse(py.strip(), mode="eval")
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            raise ValueError(f"unsupported syntax {type(node).__name__} in {text!r}")
        if isinstance(node, ast.Name) and node.id not in values and node.id not in ("True", "False"):
            raise ValueError(f"unknown axis {node.id!r} in {text!r}")
    return eval(compile(tree, "<expr>", "eval"), {"__builtins__": {}, "True": True, "False": False}, dict(values))


def resolve_axes(defn, w, where):
    axes = defn.get("axes") or {}
    values = {}
    for name, a in axes.items():
        kind = a.get("type")
        if kind == "const":
            values[name] = int(a["value"])
        elif kind == "var":
            if name not in (w.get("axes") or {}):
                raise TaskError(f"{where}: axes.{name}: expected a value for the var axis")
            values[name] = int(w["axes"][name])
    pending = {n: a["expression"] for n, a in axes.items() if a.get("type") == "expr"}
    while pending:   # dependency order, whatever the file order (khive rejects cycles when it loads the task)
        progressed = False
        for name, text in list(pending.items()):
            try:
                v = eval_expr(text, values)
            except ValueError as e:
                if "unknown axis" in str(e) and any(n in text for n in pending):
                    continue
                raise TaskError(f"{where}: axes.{name}.expression: {e}")
            if isinstance(v, float) and v.is_integer():
                v = int(v)
            if isinstance(v, bool) or not isinstance(v, int):
                raise TaskError(f"{where}: axes.{name}: expected an integer, got {v!r}")
            values[name] = v
            del pending[name]
            progressed = True
        if not progressed:
            raise TaskError(f"{where}: axes: expected expr axes without a cycle, got {sorted(pending)}")
    return values


def shape_of(spec, axes):
    if spec.get("shape") is None:
        return None
    dims = []
    for d in spec["shape"]:
        dims.append(int(d) if isinstance(d, str) and d.isdigit() else axes[d])
    return tuple(dims)


# ---------------------------------------------------------------- torch side

def torch_dtypes(torch):
    m = {"float64": torch.float64, "float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
         "int64": torch.int64, "int32": torch.int32, "int16": torch.int16, "int8": torch.int8, "bool": torch.bool}
    for name in ("float8_e4m3fn", "float8_e5m2"):
        if hasattr(torch, name):
            m[name] = getattr(torch, name)
    return m


INT_DTYPES = {"int64", "int32", "int16", "int8", "bool"}


def distribution(defn, name, dtype, w=None):
    # The workload's own distribution (workload.jsonl khive.inputs) wins over the task's, as in khive.
    own = (((w or {}).get("khive") or {}).get("inputs") or {}).get(name)
    d = dict(own if own is not None else ((defn.get("khive") or {}).get("inputs") or {}).get(name) or {})
    kind = d.get("dist") or ("integers" if dtype in INT_DTYPES else "normal")
    if kind == "normal":
        return ("normal", float(d.get("mean", 0.5)), float(d.get("std", 1.0)))
    if kind == "uniform":
        return ("uniform", float(d.get("low", -1.0)), float(d.get("high", 1.0)))
    if kind == "integers":
        lo, hi = (0, 1) if dtype == "bool" else (-8, 8)
        return ("integers", int(d.get("low", lo)), int(d.get("high", hi)))
    if kind == "constant":
        return ("constant", float(d["value"]), 0.0)
    raise TaskError(f"definition.json: khive.inputs.{name}.dist: expected normal, uniform, integers or constant, got {kind!r}")


def make_tensor(torch, shape, dtype_name, dist, gen, device):
    dt = torch_dtypes(torch)[dtype_name]
    kind, a, b = dist
    if kind == "integers":
        t = torch.randint(int(a), int(b) + 1, shape, generator=gen, device=device, dtype=torch.int64)
        return t.to(dt)
    if kind == "constant":
        return torch.full(shape, a, device=device, dtype=torch.float32).to(dt)
    t = torch.empty(shape, device=device, dtype=torch.float32)
    if kind == "normal":
        t.normal_(a, b, generator=gen)
    else:
        t.uniform_(a, b, generator=gen)
    return t.to(dt)


def make_inputs(torch, defn, w, axes, gen, device):
    args = []
    for name, spec in defn["inputs"].items():
        dtype = spec["dtype"]
        if dtype not in torch_dtypes(torch):
            raise TaskError(f"inputs.{name}.dtype: {dtype} has no torch equivalent here")
        src = (w.get("inputs") or {}).get(name) or {"type": "random"}
        shape = shape_of(spec, axes)
        if src.get("type") == "scalar":
            v = src["value"]
            if shape is None:
                args.append(bool(v) if dtype == "bool" else int(v) if dtype in INT_DTYPES else float(v))
            else:
                args.append(torch.full(shape, float(v), device=device).to(torch_dtypes(torch)[dtype]))
            continue
        if src.get("type") not in ("random", None):
            raise TaskError(f"workload {w['uuid']}: inputs.{name}.type: {src.get('type')!r} is not supported")
        t = make_tensor(torch, () if shape is None else shape, dtype, distribution(defn, name, dtype, w), gen, device)
        args.append(t.item() if shape is None else t)
    return args


def check_outputs(torch, defn, result, axes):
    outs = list(defn["outputs"].items())
    got = list(result) if isinstance(result, (tuple, list)) else [result]
    if len(got) != len(outs):
        raise TaskError(f"run() returned {len(got)} output(s), expected {len(outs)} ({', '.join(n for n, _ in outs)})")
    for (name, spec), g in zip(outs, got):
        shape = shape_of(spec, axes)
        want = torch_dtypes(torch)[spec["dtype"]]
        if shape is None:
            if isinstance(g, (int, float, bool)):
                continue
            shape = ()
        if not isinstance(g, torch.Tensor):
            raise TaskError(f"output {name}: run() returned {type(g).__name__}, expected a tensor")
        if tuple(g.shape) != tuple(shape):
            raise TaskError(f"output {name}: shape {tuple(g.shape)}, expected {tuple(shape)}")
        if g.dtype != want:
            raise TaskError(f"output {name}: dtype {g.dtype}, expected {want} ({spec['dtype']})")


def last_level_cache_bytes():
    best = 0
    base = pathlib.Path("/sys/devices/system/cpu/cpu0/cache")
    for idx in base.glob("index*"):
        try:
            s = (idx / "size").read_text().strip()
        except OSError:
            continue
        mult = {"K": 1024, "M": 1 << 20, "G": 1 << 30}.get(s[-1:], 1)
        try:
            best = max(best, int(s.rstrip("KMG")) * mult)
        except ValueError:
            pass
    return best or 32 << 20


class Timer:
    """One sample = flush the cache, synchronize, time one call: the guard's timed_call.

    host_ahead (CUDA): the GPU sleeps (torch.cuda._sleep, 1 ms) between the flush and the start event while the host
    enqueues the call, so the events time the GPU's work alone, as the judge's gated clock does (the judge enqueues a
    whole batch ahead: python/khive_torch/timed.py). Without it the events also hold the host's dispatch of run()
    whenever it outlasts nothing (the device is synchronized right before), ~10-40 us for PyTorch eager.
    gap_s: the host idles this long between samples (the GPU cools between calls, as it does between the judge's)."""

    def __init__(self, torch, device, host_ahead=False, gap_s=0.0):
        self.torch, self.device, self.round = torch, device, 0
        self.host_ahead, self.gap_s = host_ahead and device == "cuda", gap_s
        self.sleep_cycles = 2_000_000   # ~1 ms at an H100/H200's 1.98 GHz: far more than run()'s dispatch
        if device == "cuda":
            # older torch lacks L2_cache_size: 128 MiB covers twice any current L2 (H100/H200: 50/60 MB)
            l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0) or (64 << 20)
            self.flush_bytes = 2 * l2
            self.start = torch.cuda.Event(enable_timing=True)
            self.end = torch.cuda.Event(enable_timing=True)
        else:
            self.flush_bytes = 2 * last_level_cache_bytes()
        self.buf = torch.empty(self.flush_bytes, dtype=torch.uint8, device=device)

    def flush(self):
        self.round += 1
        if self.device == "cuda":
            self.buf.fill_(self.round & 0xFF)   # a memset like the runner's cudaMemsetAsync
        else:
            self.buf[::64].add_(1)              # touch every cache line, like the CPU runner

    def sample(self, fn, args):
        torch = self.torch
        if self.gap_s > 0:
            time.sleep(self.gap_s)
        self.flush()
        if self.device == "cuda":
            torch.cuda.synchronize()
            if self.host_ahead:
                torch.cuda._sleep(self.sleep_cycles)
            self.start.record()
            fn(*args)
            self.end.record()
            self.end.synchronize()
            torch.cuda.synchronize()
            return self.start.elapsed_time(self.end) * 1e-3
        t0 = time.perf_counter()
        fn(*args)
        return time.perf_counter() - t0


def summarize(samples):
    s = sorted(samples)
    n = len(s)

    def median(v):
        return v[len(v) // 2] if len(v) % 2 else 0.5 * (v[len(v) // 2 - 1] + v[len(v) // 2])

    def pct(p):
        pos = p * (n - 1)
        lo = int(math.floor(pos))
        hi = min(lo + 1, n - 1)
        return s[lo] + (pos - lo) * (s[hi] - s[lo])

    m = median(s)
    spread = MAD_TO_SIGMA * median(sorted(abs(x - m) for x in s)) / m if n >= 2 and m > 0 else 0.0
    return {"median_s": m, "spread": spread, "samples": n, "min_s": s[0], "p10_s": pct(0.1), "p90_s": pct(0.9)}


def should_stop(samples, elapsed, a):
    n = len(samples)
    if n >= a.max_samples or elapsed >= a.time_cap:
        return True
    if n < max(a.min_samples, 2):
        return False
    return summarize(samples)["spread"] < a.target_noise


def time_call(timer, fn, args, a):
    for _ in range(a.warmup):
        timer.sample(fn, args)
    samples = []
    t0 = time.monotonic()
    while True:
        samples.append(timer.sample(fn, args))
        if should_stop(samples, time.monotonic() - t0, a):
            return summarize(samples)


def nvidia_smi():
    q = "name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw"
    try:
        r = subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader,nounits", "--id=0"],
                           capture_output=True, text=True, timeout=15)
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"error": str(e)}
    if r.returncode != 0:
        return {"error": (r.stderr or r.stdout).strip()[:300]}
    keys = ["name", "driver", "sm_clock_mhz", "mem_clock_mhz", "max_sm_clock_mhz", "temperature_c", "power_w"]
    return dict(zip(keys, (f.strip() for f in r.stdout.splitlines()[0].split(","))))


def write_atomic(path, obj):
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".")
    with os.fdopen(fd, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def bench_task(torch, task_dir, a, timer, gen_device):
    """Returns {"workloads": {...}} plus "error" when something failed (the workloads measured before are kept)."""
    entry = {"workloads": {}}
    try:
        defn = json.loads((task_dir / "definition.json").read_text())
    except (OSError, json.JSONDecodeError) as e:
        return task_dir.name, {"workloads": {}, "error": f"{task_dir.name}/definition.json: {e}"}
    name = defn.get("name") or task_dir.name
    src = defn.get("reference")
    if not isinstance(src, str) or not src.strip():
        return name, {"workloads": {}, "error": "definition.json has no \"reference\" (PyTorch source with run())"}
    ns = {"__name__": "khive_reference"}
    try:
        exec(compile(src, f"{task_dir.name}/definition.json:reference", "exec"), ns)
    except Exception as e:  # the reference is third-party code: any failure is recorded, not fatal
        return name, {"workloads": {}, "error": f"reference does not load: {type(e).__name__}: {e}"}
    run = ns.get("run")
    if not callable(run):
        return name, {"workloads": {}, "error": "reference defines no callable run()"}
    if a.compile:
        run = torch.compile(run, mode=a.compile)   # the optional second baseline (issue 14): torch.compile of the reference
    try:
        workloads = load_workloads(task_dir)
    except (OSError, TaskError) as e:
        return name, {"workloads": {}, "error": str(e)}
    for w in workloads:
        k = w.get("khive") or {}
        if k.get("role", "both") == "correctness":
            continue
        if a.device not in k.get("backends", ["cpu", "cuda"]):
            continue
        where = f"{task_dir.name}/workload.jsonl: line {w['_line']}"
        try:
            axes = resolve_axes(defn, w, where)
            gen = torch.Generator(device=gen_device)
            gen.manual_seed(a.seed + w["_line"])
            args = make_inputs(torch, defn, w, axes, gen, a.device)
            with torch.inference_mode():
                check_outputs(torch, defn, run(*args), axes)
                if a.device == "cuda":
                    torch.cuda.synchronize()
                s = time_call(timer, run, args, a)
            var = {n: axes[n] for n, ax in (defn.get("axes") or {}).items() if ax.get("type") == "var"}
            entry["workloads"][w["uuid"]] = dict(s, axes=var)
            print(f"  {name} {w['uuid']}: {s['median_s'] * 1e6:.1f} us  spread {s['spread'] * 100:.2f}%  n={s['samples']}",
                  flush=True)
        except Exception as e:  # noqa: BLE001 - recorded per task; the run goes on with the next task
            entry["error"] = f"workload {w['uuid']}: {type(e).__name__}: {str(e)[:500]}"
            break
        finally:
            args = None
            if a.device == "cuda":
                torch.cuda.empty_cache()
    return name, entry


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("suite", help="suite directory (tasks/cutegen26) or one task directory")
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    p.add_argument("--out", help="output file (default SUITE/baselines/pytorch-<gpu>.json)")
    p.add_argument("--tasks", help="comma-separated task names (definition name or directory name) to run")
    p.add_argument("--seed", type=int, default=1000)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--min-samples", type=int, default=10)
    p.add_argument("--max-samples", type=int, default=200)
    p.add_argument("--target-noise", type=float, default=0.005)
    p.add_argument("--time-cap", type=float, help="seconds of sampling per workload (default 2 cuda, 0.5 cpu)")
    p.add_argument("--host-ahead", action=argparse.BooleanOptionalAction, default=True,
                   help="CUDA: the host enqueues each call while the GPU sleeps, so the events time the GPU's work alone, "
                        "as the judge's clock does (Timer's docstring); --no-host-ahead: the events also hold the host's "
                        "dispatch of run() (this script's method before 2026-12-03)")
    p.add_argument("--gap-ms", type=float, default=0.0, help="idle this long between samples (default 0)")
    p.add_argument("--compile", nargs="?", const="default", default=None, metavar="MODE",
                   help="time torch.compile(run, mode=MODE) instead (default mode 'default'); writes pytorch-compile-<gpu>.json, "
                        "a second baseline beside eager PyTorch (khive's T_b stays the eager file)")
    a = p.parse_args()
    if a.time_cap is None:
        a.time_cap = 2.0 if a.device == "cuda" else 0.5

    suite = pathlib.Path(a.suite)
    if not suite.is_dir():
        print(f"pytorch_baselines: {suite}: not a directory", file=sys.stderr)
        return 2
    tasks = find_tasks(suite)
    if a.tasks:
        keep = set(a.tasks.split(","))
        def name_of(t):
            try:
                return json.loads((t / "definition.json").read_text()).get("name")
            except (OSError, json.JSONDecodeError, AttributeError):
                return None   # kept out of the filter; a full run records its error
        tasks = [t for t in tasks if t.name in keep or name_of(t) in keep]
    if not tasks:
        print(f"pytorch_baselines: no task (a directory with definition.json) under {suite}", file=sys.stderr)
        return 2

    import torch
    if a.device == "cuda":
        if not torch.cuda.is_available():
            print("pytorch_baselines: --device cuda but torch sees no GPU", file=sys.stderr)
            return 2
        device_name = torch.cuda.get_device_name(0)
        gpu = slug(device_name)
        # fp32 tasks are checked at fp32 tolerance: PyTorch must not round matmul inputs to TF32.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    else:
        device_name = cpu_model()
        gpu = "cpu-" + slug(device_name)
    suite_dir = suite if not (suite / "definition.json").is_file() else suite.parent
    stem = "pytorch-compile" if a.compile else "pytorch"
    out = pathlib.Path(a.out) if a.out else suite_dir / "baselines" / f"{stem}-{gpu}.json"

    doc = {
        "schema": SCHEMA,
        "gpu": gpu,
        "device": device_name,
        "backend": a.device,
        "torch": torch.__version__,
        "cuda": torch.version.cuda if a.device == "cuda" else None,
        "python": platform.python_version(),
        "threads": torch.get_num_threads(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "clocks": nvidia_smi() if a.device == "cuda" else None,
        "command": " ".join([pathlib.Path(sys.argv[0]).name] + sys.argv[1:]),
        "method": {
            "warmup": a.warmup, "min_samples": a.min_samples, "max_samples": a.max_samples,
            "target_noise": a.target_noise, "time_cap_s": a.time_cap, "seed": a.seed,
            "flush": "a buffer of 2x the L2 size written before every sample" if a.device == "cuda"
                     else "a buffer of 2x the last-level cache touched before every sample",
            "timer": ("CUDA events on the current stream after a device synchronize"
                      + (", the call enqueued while the GPU sleeps 1 ms (--host-ahead: the GPU's work alone)" if a.host_ahead else "")
                      if a.device == "cuda" else "time.perf_counter around the call"),
            "gap_ms": a.gap_ms,
            "statistic": "median; spread = 1.4826 * MAD / median",
            "tf32": False,
            "inference_mode": True,
        },
        "tasks": {},
    }
    if out.exists():   # keep numbers of tasks not run this time (--tasks), replace those that are
        try:
            old = json.loads(out.read_text())
            if old.get("schema") == SCHEMA and old.get("gpu") == gpu:
                doc["tasks"].update(old.get("tasks") or {})
        except (OSError, json.JSONDecodeError):
            pass
    timer = Timer(torch, a.device, a.host_ahead, a.gap_ms / 1000)
    failed = 0
    t_start = time.monotonic()
    for task_dir in tasks:
        t0 = time.monotonic()
        name, entry = bench_task(torch, task_dir, a, timer, a.device)
        entry["seconds"] = round(time.monotonic() - t0, 3)
        doc["tasks"][name] = entry
        if "error" in entry:
            failed += 1
            print(f"{name}: ERROR {entry['error']}", flush=True)
        else:
            print(f"{name}: {len(entry['workloads'])} workload(s) in {entry['seconds']:.1f} s", flush=True)
        doc["seconds"] = round(time.monotonic() - t_start, 3)
        write_atomic(out, doc)
    if a.device == "cuda":
        doc["clocks_end"] = nvidia_smi()
        write_atomic(out, doc)
    print(f"wrote {out} ({len(tasks)} task(s), {failed} failed, {doc['seconds']:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
