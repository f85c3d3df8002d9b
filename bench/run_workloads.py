#!/usr/bin/env python3
"""Per-workload view of hive runs against PyTorch: for each timed workload, the leader's time, the fastest correct
candidate of the run (leader or backup) and its label, PyTorch's time on the same workload (the suite's
tasks/<suite>/baselines/pytorch-<gpu>.json, matched by uuid), and the leader's TFLOP/s and GB/s from the task's
cost formulas (the task's least-work counts: docs/task-format.md).

  bench/run_workloads.py RUN [RUN ...] [--gpu h200] [--md out.md] [--khive build/bin/khive]

Numbers are the run's recorded guard medians, read through `khive export`; nothing is re-measured. The run must have
recorded its task directory (run.db does; a folder that kept only events.jsonl does not).
"""
import argparse, json, math, pathlib, sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import pytorch_baselines as pb  # noqa: E402  (the task format's expression language and axis resolution)
import run_export  # noqa: E402  (a run's records, read by khive)

ap = argparse.ArgumentParser()
ap.add_argument("runs", nargs="+")
ap.add_argument("--gpu", default="h200")
ap.add_argument("--md", default=None)
ap.add_argument("--khive", default="build/bin/khive", help="khive executable (reads the runs: khive export)")
a = ap.parse_args()


def cost(definition, workload_axes, formula):
    """A cost formula over the workload's axes; None (a blank cell) where it cannot be evaluated."""
    try:
        return pb.eval_expr(formula, pb.resolve_axes(definition, {"axes": workload_axes}, definition.get("name", "")))
    except (pb.TaskError, ValueError, SyntaxError, TypeError, ArithmeticError):
        return None


lines = []
for run in map(pathlib.Path, a.runs):
    try:
        rec = run_export.load(a.khive, run)
    except run_export.Error as e:
        sys.exit(f"run_workloads: {e}")
    meta = rec["meta"]
    if not meta["task_dir"] and not meta["task_dir_from_run"]:
        sys.exit(f"run_workloads: {run}: the run recorded no task directory (read from {rec['source']})")
    if not meta["leader"]:
        sys.exit(f"run_workloads: {run}: the run recorded no leader (cut short before its reference was measured)")
    task_dir = pathlib.Path(meta["task_dir"])
    if not meta["task_dir"] or not task_dir.exists():
        task_dir = (run / meta["task_dir_from_run"]).resolve()
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
    by_id = {c["id"]: (c["label"] or c["id"], c["workloads"]) for c in rec["candidates"] if c["verdict"] in ("leader", "backup")}
    leader = meta["leader"]
    lead_w = by_id[leader][1]
    options = meta["options"]
    lines += [f"## {definition['name']} ({run.name})", "",
              f"Leader {leader}: {by_id[leader][0]}" + (f"; timed workloads: `{options['perf_workloads']}`" if options.get("perf_workloads") else ""), "",
              "| workload | leader | PyTorch | leader vs PyTorch | TFLOP/s | GB/s | fastest correct candidate | its time | it vs PyTorch |",
              "|---|---|---|---|---|---|---|---|---|"]
    for uuid, t in lead_w.items():
        formulas = definition.get("khive", {}).get("cost", {})
        flops = cost(definition, workloads.get(uuid, {}), formulas["flops"]) if formulas.get("flops") else None
        nbytes = cost(definition, workloads.get(uuid, {}), formulas["bytes"]) if formulas.get("bytes") else None
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
