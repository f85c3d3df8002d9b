"""The PyTorch oracle over a task's correctness workloads, without a kernel: does the reference run?

    report = evaluate_task(torch, "tasks/kb/kb1_019_relu", backend="cpu")
    report["ok"], report["workloads"][0]["status"]

For every correctness workload (khive.role correctness or both) that runs on the backend (khive.backends):
inputs are made (inputs.py), every constraint is checked on them (constraints.py), run() is called and its
outputs checked against the declared shapes (reference.py); outputs must be finite where they are floats.
A workload larger than max_elements (2^28: 1 GiB of float32) is skipped with that reason. Used by `khive import` (a task is kept
only when its reference runs) and by scripts/check_upstream.py.
"""
import math
import time

from .inputs import make_inputs, reference_namespace
from .reference import run_reference
from .task import TaskError, load_task

__all__ = ["evaluate_task"]


def _runs_on(w, backend):
    k = w.get("khive") or {}
    return backend in (k.get("backends") or ["cpu", "cuda"])


def _checks(w):
    return ((w.get("khive") or {}).get("role") or "both") != "perf"


def _elements(task, axes):
    n = 0
    for group in (task.inputs, task.outputs):
        for spec in group.values():
            shape = task.shape(spec, axes)
            if shape is not None:
                n += math.prod(shape)
    return n


def evaluate_task(torch, task_dir, backend="cpu", seed=1, max_elements=1 << 28):
    device = "cuda" if backend == "cuda" else "cpu"
    report = {"task": str(task_dir), "ok": False, "workloads": [], "error": None}
    try:
        task = load_task(task_dir)
        if not task.reference:
            raise TaskError(f"{task.def_file}: reference: expected PyTorch source with run(), got none")
        ns = reference_namespace(task)
        fn = ns.get("run")
        if not callable(fn):
            raise TaskError(f"{task.def_file}: reference: expected a top-level function run(...), got none")
    except TaskError as e:
        report["error"] = str(e)
        return report
    ran = 0
    for w in task.workloads:
        if not _checks(w) or not _runs_on(w, backend):
            continue
        entry = {"uuid": w["uuid"], "status": "ok"}
        report["workloads"].append(entry)
        try:
            axes = task.resolve_axes(w)
            n = _elements(task, axes)
            if n > max_elements:
                entry["status"] = "skipped"
                entry["reason"] = f"{n} elements (limit {max_elements})"
                continue
            t0 = time.monotonic()
            inputs = make_inputs(torch, task, w, axes, seed=seed, device=device, ns=ns)
            task.check_constraints(axes, inputs)
            outs = run_reference(torch, task, axes, inputs, device=device, fn=fn)
            for name, o in zip(task.outputs, outs):
                if o.is_floating_point() and not bool(torch.isfinite(o.float()).all()):
                    raise TaskError(f"{task.def_file}: outputs.{name}: expected finite values from the reference, got NaN or Inf")
            entry["seconds"] = round(time.monotonic() - t0, 4)
            ran += 1
        except TaskError as e:
            entry["status"] = "failed"
            entry["reason"] = str(e)
        except Exception as e:   # the reference is the task's code: any failure is that workload's
            entry["status"] = "failed"
            entry["reason"] = f"{task.def_file}: reference: run() raised {type(e).__name__}: {e}"
    failed = [e for e in report["workloads"] if e["status"] == "failed"]
    if not report["workloads"]:
        report["error"] = f"no correctness workload runs on {backend}"
    elif failed:
        report["error"] = failed[0]["reason"]
    elif ran == 0:
        report["error"] = "every correctness workload was skipped: " + report["workloads"][0].get("reason", "")
    report["ok"] = report["error"] is None
    return report
