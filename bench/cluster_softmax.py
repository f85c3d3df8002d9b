#!/usr/bin/env python3
"""Chosen points of rowop.cuda_softmax_cluster through the guard, on the GPU.

khive-tune renders the agent's proposals, not a given point; the first proposal under a strategy is the
template's default point. So for each point this writes a one-template library whose manifest defaults are that
point, renders the first rowop.cluster proposal, checks it is exactly the point asked for (a point the rules rule
out for a task is skipped, not silently replaced by its nearest valid neighbour), and runs `khive eval` on it.

usage: bench/cluster_softmax.py --build build-device --out "$OUT/cluster" \\
           [--task tasks/cutegen26/kb23_softmax ...] [--point CLUSTER=16,LOAD=bulk ...]
Writes OUT/<task>/<n>.cu, OUT/<task>/<n>.json (khive.eval/1) and OUT/summary.tsv; prints one line per run
(task, point, accepted, median per perf workload, speed-up vs PyTorch).
"""
import argparse
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parent.parent
TEMPLATE = "rowop.cuda_softmax_cluster"
DEFAULT_TASKS = ["tasks/cutegen26/kb23_softmax", "tasks/cutegen26/kb24_log_softmax", "tasks/sol/softmax"]
DEFAULT_POINTS = [
    "",                                                  # the manifest's default
    "CLUSTER=16",                                        # fit: 16 only for few rows
    "CLUSTER=16,SPLIT=fixed",                            # kb23: 16 x 96 KB slices, 2 CTAs per SM
    "CLUSTER=16,LOAD=bulk",                              # kb23: 16 x 2 x 96 KB, the next row's copy overlaps
    "CLUSTER=8,LOAD=bulk",                               # kb23: 8 x 192 KB, one buffer
    "THREADS=512,UNROLL=2",
    "CLUSTER=16,SPLIT=fixed,THREADS=512,UNROLL=4,HINT=stream",
    "VEC=8,CLUSTER=16",                                  # bf16 only (16-byte accesses)
    "VEC=8,CLUSTER=16,LOAD=bulk",
]


def parse_point(text, manifest, where):
    point = {}
    for item in filter(None, text.split(",")):
        if "=" not in item:
            sys.exit(f"{where}: expected NAME=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        if k not in manifest["params"]:
            sys.exit(f"{where}: {k} is not a parameter of {TEMPLATE} (one of {', '.join(manifest['params'])})")
        values = [str(x) for x in manifest["params"][k]["values"]]
        if v not in values:
            sys.exit(f"{where}: {k}={v}: expected one of {', '.join(values)}")
        point[k] = v
    return point


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="build directory with bin/khive and bin/khive-tune")
    ap.add_argument("--out", required=True)
    ap.add_argument("--task", action="append", help="task directory (repeatable; default: kb23, kb24, sol/softmax)")
    ap.add_argument("--point", action="append", help="NAME=VALUE,... over the manifest's default (repeatable)")
    ap.add_argument("--perf-workloads", help="regex passed to khive eval (time only those perf workloads)")
    a = ap.parse_args()

    build = pathlib.Path(a.build)
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    manifest_path = REPO / "kernels/rowop/cuda_softmax_cluster.json"
    manifest = json.loads(manifest_path.read_text())
    points = [(p, parse_point(p, manifest, f"--point {p!r}")) for p in (a.point or DEFAULT_POINTS)]
    tasks = a.task or DEFAULT_TASKS
    summary = out / "summary.tsv"
    rows = ["task\tpoint\taccepted\tscore\tworkload\tmedian_s\tspeedup_vs_pytorch"]

    for n, (text, point) in enumerate(points):
        lib = pathlib.Path(tempfile.mkdtemp(prefix="khive-cluster-lib-"))
        try:
            (lib / "rowop").mkdir()
            shutil.copy(REPO / "kernels/rowop/cuda_rowop_cluster.cu.in", lib / "rowop")
            m = json.loads(json.dumps(manifest))
            for k, v in point.items():
                m["params"][k]["default"] = int(v) if v.lstrip("-").isdigit() else v
            (lib / "rowop/cuda_softmax_cluster.json").write_text(json.dumps(m, indent=1))
            shutil.copytree(REPO / "kernels/bindings", lib / "bindings")
            want = {k: str(spec.get("default", spec["values"][0])) for k, spec in m["params"].items()}
            label = " ".join(f"{k}={v}" for k, v in sorted(want.items()))
            for task in tasks:
                name = pathlib.Path(task).name
                tdir = out / name / f"p{n}"
                shutil.rmtree(tdir, ignore_errors=True)
                r = subprocess.run([str(build / "bin/khive-tune"), "--kernels", str(lib), "render", task, "--backend", "cuda",
                                    "--out", str(tdir), "--per-strategy", "1"], capture_output=True, text=True)
                if r.returncode != 0:
                    print(f"{name}\t{label}\trender failed: {r.stderr.strip()}", flush=True)
                    continue
                chosen = None
                for line in (tdir / "list.tsv").read_text().splitlines():
                    f, strategy, pt = line.split("\t")
                    got = dict(kv.split("=", 1) for kv in pt.split())
                    if strategy == "rowop.cluster" and got.get("template") == TEMPLATE:
                        chosen = (f, got)
                        break
                if not chosen or {k: chosen[1].get(k) for k in want} != want:
                    print(f"{name}\t{label}\tskipped: not a valid point for this task", flush=True)
                    continue
                src = tdir / chosen[0]
                dst = out / name / f"p{n}.cu"
                shutil.copy(src, dst)
                cmd = [str(build / "bin/khive"), "eval", task, str(dst), "--backend", "cuda", "--json", "--out", str(out / name / f"p{n}.json")]
                if a.perf_workloads:
                    cmd += ["--perf-workloads", a.perf_workloads]
                rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=open(out / name / f"p{n}.err", "w")).returncode
                try:
                    rep = json.loads((out / name / f"p{n}.json").read_text())
                except (OSError, json.JSONDecodeError):
                    print(f"{name}\t{label}\teval exit {rc}, no report (see {out / name / f'p{n}.err'})", flush=True)
                    continue
                verdict = rep.get("verdict") or {}
                if rep.get("harness_error"):
                    print(f"{name}\t{label}\tharness error: {rep['harness_error']}", flush=True)
                    continue
                for w in rep.get("workloads") or []:
                    med = (w.get("kernel") or {}).get("median_s")
                    line = f"{name}\t{label}\t{rep.get('accepted')}\t{rep.get('task_score')}\t{w.get('workload')}\t{med}\t{w.get('speedup_vs_pytorch')}"
                    rows.append(line)
                    print(line, flush=True)
                if not rep.get("accepted"):
                    print(f"{name}\t{label}\trejected: check {verdict.get('check')} {verdict.get('reason')}: {verdict.get('message')}", flush=True)
        finally:
            shutil.rmtree(lib, ignore_errors=True)
    summary.write_text("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
