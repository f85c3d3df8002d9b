#!/usr/bin/env python3
"""Makes a curated run recording (schema khive.recording/1, tests/recordings/README.md) from a hive run: what a
replay through khive's RecordedEvaluator needs, and nothing else (no sources, no board, no report).

  make_recording.py RUN --task tasks/sol/softmax --out tests/recordings/NAME.json --what "one line" [--device D]
                    [--git-rev REV] [--made-with COMMIT] [--noise 0.01] [--min-gain 0.005]

RUN is a run directory (its events.jsonl is read; run.db too when present, for the task hash and the score basis).
With --git-rev REV, RUN is a path inside the repository as it was at REV (the raw runs were taken out of the tree on
2026-12-01: `--git-rev 48f7071 docs/results/2026-11-30-h200/...`): the files are read with `git show REV:PATH`.

Checks before writing: every candidate event has a verdict other than "pending", the task's timed workloads on the
run's backend (after the run's --perf-workloads pattern) are exactly the workloads of the recorded reference, and
every accepted candidate has a median on each of them. Exits 1 with the reason otherwise.
"""
import argparse
import json
import os
import pathlib
import re
import sqlite3
import subprocess
import sys
import tempfile

SCHEMA = "khive.recording/1"


def fail(msg):
    print(f"make_recording: {msg}", file=sys.stderr)
    sys.exit(1)


def read_run_file(run, name, rev):
    """The bytes of RUN/name (None when absent)."""
    if rev is None:
        p = pathlib.Path(run) / name
        return p.read_bytes() if p.is_file() else None
    r = subprocess.run(["git", "show", f"{rev}:{run}/{name}"], capture_output=True)
    return r.stdout if r.returncode == 0 else None


def run_meta(run, rev):
    """run.db's meta table, or {} when the run kept only its event log."""
    raw = read_run_file(run, "run.db", rev)
    if raw is None:
        return {}
    with tempfile.TemporaryDirectory() as d:
        p = pathlib.Path(d) / "run.db"
        p.write_bytes(raw)
        con = sqlite3.connect(str(p))
        try:
            return dict(con.execute("select key, value from meta").fetchall())
        finally:
            con.close()


def timed_workloads(task_dir, backend, pattern):
    """The uuids the run timed: perf (or both) workloads that run on the backend, narrowed by the run's pattern."""
    out = []
    for line in (task_dir / "workload.jsonl").read_text().splitlines():
        if not line.strip():
            continue
        w = json.loads(line)
        k = w.get("khive", {})
        if k.get("role", "both") not in ("perf", "both"):
            continue
        if backend not in k.get("backends", ["cpu", "cuda"]):
            continue
        if pattern and not re.search(pattern, w["uuid"]):
            continue
        out.append(w["uuid"])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("--task", required=True, help="the task directory, relative to the repository root")
    ap.add_argument("--out", required=True)
    ap.add_argument("--what", required=True, help="one line: what the run was")
    ap.add_argument("--device", default="NVIDIA H200")
    ap.add_argument("--made-with", default=None, help="the khive commit the run's binaries and kernels/ came from")
    ap.add_argument("--git-rev", default=None)
    ap.add_argument("--noise", type=float, default=0.01)
    ap.add_argument("--min-gain", type=float, default=0.005)
    a = ap.parse_args()

    raw = read_run_file(a.run, "events.jsonl", a.git_rev)
    if raw is None:
        fail(f"{a.run}: no events.jsonl" + (f" at {a.git_rev}" if a.git_rev else ""))
    start, cands, stop = None, {}, None
    for n, line in enumerate(raw.decode().splitlines(), 1):
        if not line.strip():
            continue
        ev = json.loads(line)
        if ev.get("type") == "start" and start is None:
            start = ev
        elif ev.get("type") == "candidate":
            cands[ev["id"]] = ev   # the last event of an id wins (a deferred candidate's verdict)
        elif ev.get("type") in ("stop", "end") and stop is None:
            stop = ev.get("reason")
    if start is None:
        fail(f"{a.run}: the event log has no start event")
    meta = run_meta(a.run, a.git_rev)
    options = start.get("options", {})
    pattern = options.get("perf_workloads", "") or ""
    backend = start.get("backend", "")
    root = pathlib.Path(__file__).resolve().parents[2]
    task_dir = root / a.task
    definition = json.loads((task_dir / "definition.json").read_text())
    if definition.get("name") != start.get("task"):
        fail(f"{a.task} defines task {definition.get('name')!r}, the run was of {start.get('task')!r}")

    order = sorted(cands.values(), key=lambda c: int(c["id"][1:]))
    ref = [c for c in order if c.get("strategy") == "reference"]
    if len(ref) != 1:
        fail(f"{a.run}: {len(ref)} reference candidates recorded (expected one)")
    ref = ref[0]
    timed = timed_workloads(task_dir, backend, pattern)
    if sorted(timed) != sorted(ref.get("workloads", {})):
        fail(f"the task's timed workloads {sorted(timed)} are not the recorded reference's {sorted(ref.get('workloads', {}))}")

    def entry(c):
        e = {"id": c["id"], "agent": c.get("agent", ""), "strategy": c.get("strategy", ""), "hash": c.get("hash", ""),
             "params": c.get("params", {}), "verdict": c["verdict"]}
        for k in ("check", "reason", "message"):
            if c.get(k):
                e[k] = c[k]
        e["t"] = c.get("t", 0.0)          # seconds since the run started, when the verdict was recorded
        e["eval_s"] = c.get("eval_s", 0.0)   # wall time of its evaluation: it was proposed at about t - eval_s
        if c["verdict"] in ("leader", "backup"):
            e["score"] = c.get("score")
            e["time_s"] = c["time_s"]
            e["delta"] = c.get("delta", 0.0)
            e["workloads"] = c["workloads"]
            missing = sorted(set(timed) - set(c["workloads"]))
            if missing:
                fail(f"{c['id']} was accepted without medians on {missing}")
        return e

    out_cands = []
    for c in order:
        if c is ref:
            continue
        if c.get("verdict") in (None, "pending"):
            fail(f"{c['id']} has no verdict in the log ({c.get('verdict')})")
        out_cands.append(entry(c))
    rec = {
        "schema": SCHEMA,
        "what": a.what,
        "source": {
            "run": a.run,
            "git": f"git show {a.git_rev}:{a.run}/events.jsonl" if a.git_rev else None,
            "device": a.device,
            "made_with": a.made_with,
            "score_basis": meta.get("score_basis"),
        },
        "task": {"dir": a.task, "name": start["task"], "hash_at_recording": meta.get("task_hash"), "backend": backend,
                 "perf_workloads": pattern, "timed": timed},
        "run": {"seed": int(start.get("seed", 0)), "agents": start.get("agents"), "options": options,
                "leader": meta.get("leader") or next((c["id"] for c in reversed(order) if c.get("verdict") == "leader"), None),
                "stop_reason": meta.get("stop_reason", stop)},
        "rule": {"noise": a.noise, "min_gain": a.min_gain},
        "reference": entry(ref),
        "candidates": out_cands,
    }
    pathlib.Path(a.out).write_text(json.dumps(rec, indent=1, sort_keys=False) + "\n")
    print(f"{a.out}: {len(out_cands)} candidates + the reference, {os.path.getsize(a.out)} bytes")


if __name__ == "__main__":
    main()
