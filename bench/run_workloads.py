#!/usr/bin/env python3
"""Per-workload view of hive runs against PyTorch: for each timed workload, the leader's time, the fastest correct
candidate of the run (leader or backup) and its label, PyTorch's time on the same workload (the suite's
tasks/<suite>/baselines/pytorch-<gpu>.json, matched by uuid), and the leader's TFLOP/s and GB/s from the task's
cost formulas (the task's least-work counts: docs/task-format.md).

  bench/run_workloads.py RUN [RUN ...] [--gpu h200] [--md out.md]

Numbers come from run.db only (the guard's medians); nothing is re-measured.
"""
import argparse, json, math, pathlib, re, sqlite3, sys

ap = argparse.ArgumentParser()
ap.add_argument("runs", nargs="+")
ap.add_argument("--gpu", default="h200")
ap.add_argument("--md", default=None)
a = ap.parse_args()


def axes_of(definition, workload_axes):
    """Constants, the workload's vars and expr axes, in definition order (expr axes may use earlier ones)."""
    ax = dict(workload_axes)
    for name, spec in definition.get("axes", {}).items():
        if spec.get("type") == "const":
            ax[name] = spec["value"]
        elif spec.get("type") == "expr":
            ax[name] = evaluate(spec["expression"], ax)
    return ax


def evaluate(expr, ax):
    # The cost language is integer arithmetic over axis names (+ - * / % parentheses, min/max); Python evaluates it
    # the same for these operators. Anything else is reported as unknown rather than guessed.
    if not re.fullmatch(r"[\w\s+\-*/%().,]*", expr):
        return None
    try:
        return eval(expr, {"__builtins__": {}, "min": min, "max": max}, dict(ax))
    except Exception:
        return None


lines = []
for run in map(pathlib.Path, a.runs):
    db = sqlite3.connect(str(run / "run.db"))
    meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
    task_dir = pathlib.Path(meta["task_dir"])
    if not task_dir.exists():
        task_dir = (run / meta.get("task_dir_from_run", "")).resolve()
    definition = json.loads((task_dir / "definition.json").read_text())
    workloads = {}
    for line in (task_dir / "workload.jsonl").read_text().splitlines():
        if line.strip():
            j = json.loads(line)
            workloads[j.get("uuid", "")] = j.get("axes", {})
    pt_file = task_dir.parent / "baselines" / f"pytorch-{a.gpu}.json"
    pt = {}
    if pt_file.exists():
        pt = json.loads(pt_file.read_text()).get("tasks", {}).get(definition["name"], {}).get("workloads", {})
    cands = db.execute("SELECT id, verdict, label, workloads FROM candidates WHERE verdict IN ('leader', 'backup')").fetchall()
    by_id = {c[0]: (c[2] or c[0], json.loads(c[3] or "{}")) for c in cands}
    leader = meta["leader"]
    lead_w = by_id[leader][1]
    options = json.loads(meta.get("options", "{}"))
    lines += [f"## {definition['name']} ({run.name})", "",
              f"Leader {leader}: {by_id[leader][0]}" + (f"; timed workloads: `{options['perf_workloads']}`" if options.get("perf_workloads") else ""), "",
              "| workload | leader | PyTorch | leader vs PyTorch | TFLOP/s | GB/s | fastest correct candidate | its time | it vs PyTorch |",
              "|---|---|---|---|---|---|---|---|---|"]
    for uuid, t in lead_w.items():
        ax = axes_of(definition, workloads.get(uuid, {}))
        cost = definition.get("khive", {}).get("cost", {})
        flops = evaluate(cost.get("flops", ""), ax) if cost.get("flops") else None
        nbytes = evaluate(cost.get("bytes", ""), ax) if cost.get("bytes") else None
        best_id = min(by_id, key=lambda i: by_id[i][1].get(uuid, math.inf))
        best_t = by_id[best_id][1].get(uuid)
        p = pt.get(uuid, {}).get("median_s")
        f = lambda s: f"{s * 1e6:.1f} us" if s else "-"
        lines.append(f"| {uuid} | {f(t)} | {f(p)} | {f'{p / t:.2f}x' if p else '-'} | {f'{flops / t / 1e12:.4g}' if flops else ''} | "
                     f"{f'{nbytes / t / 1e9:.4g}' if nbytes else ''} | {by_id[best_id][0]} | {f(best_t)} | {f'{p / best_t:.2f}x' if p and best_t else '-'} |")
    lines.append("")
md = "\n".join(lines) + "\n"
print(md)
if a.md:
    pathlib.Path(a.md).write_text(md)
