#!/usr/bin/env python3
"""Evaluate every candidate kernel of every task in a suite through the guard and keep the fastest
correct one per task (the leader), with its evidence. Usage: select-best.py KHIVE BACKEND EXT SUITE OUTDIR"""
import json, os, pathlib, shutil, subprocess, sys

khive, backend, ext, suite, out = sys.argv[1:6]
out = pathlib.Path(out)
out.mkdir(parents=True, exist_ok=True)
rows = []
for task in sorted(p for p in pathlib.Path(suite).iterdir() if (p / "definition.json").exists()):
    cands = sorted((task / "candidates").glob(f"*.{ext}")) if (task / "candidates").exists() else []
    ref = task / f"reference.{ext}"
    leader = None
    for k in [ref] + cands:
        rep = out / f"{task.name}.{k.stem}.json"
        cmd = [khive, "eval", str(task), str(k), "--backend", backend, "--out", str(rep)]
        if leader is not None:
            cmd += ["--leader", str(leader[0])]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode == 2 or not rep.exists():
            print(f"{task.name:12} {k.name:28} harness error: {(r.stderr or r.stdout).strip()[:300]}")
            continue
        j = json.loads(rep.read_text())
        if not j["accepted"]:
            v = j["verdict"] or {}
            print(f"{task.name:12} {k.name:28} rejected: check {v.get('check')} {v.get('reason')}: {v.get('message','')[:120]}")
            continue
        t = sum(w["kernel"]["median_s"] * w["weight"] for w in j["workloads"] if w["kernel"])
        tag = "leader" if leader is None or j.get("new_leader") else "backup"
        print(f"{task.name:12} {k.name:28} accepted, weighted median {t*1e3:9.3f} ms  score {j['task_score'] if j['task_score'] is not None else '-'}  -> {tag}")
        if tag == "leader":
            leader = (k, t, j)
    if leader:
        shutil.copy(leader[0], out / f"{task.name}.best.{ext}")
        rows.append((task.name, leader[0].name, leader[1], leader[2].get("task_score")))
print("\nbest kernel per task (copied to %s):" % out)
for name, k, t, s in rows:
    print(f"  {name:12} {k:28} {t*1e3:9.3f} ms  score {s if s is not None else '-'}")
