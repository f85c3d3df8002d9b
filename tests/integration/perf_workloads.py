#!/usr/bin/env python3
"""`khive optimize --perf-workloads` end to end on the CPU: only the matching perf workloads are timed and scored
(the runner applies the same selection, so no golden of a dropped workload is ever needed), the pattern is recorded
in run.db and kept by --resume, a different pattern on resume and a pattern matching nothing are errors (exit 2)
that leave the run as it was.

  perf_workloads.py KHIVE ROOT
"""
import json, os, pathlib, sqlite3, subprocess, sys, tempfile

khive, root = sys.argv[1], pathlib.Path(sys.argv[2])
task = root / "tasks/demo-cpu/gemm"   # perf workloads gemm-256x256x256 and gemm-192x320x288


def fail(msg):
    sys.exit("FAIL: " + msg)


with tempfile.TemporaryDirectory(prefix="khive-perf-workloads-") as tmp:
    env = dict(os.environ, KHIVE_CACHE=os.path.join(tmp, "cache"))
    run_dir = pathlib.Path(tmp) / "run"

    def optimize(*args):
        return subprocess.run([khive, "optimize", *args], env=env, capture_output=True, text=True)

    r = optimize(str(task), "--backend", "cpu", "--agent", "tuner", "--agents", "1", "--budget-candidates", "2", "--seed", "7",
                 "--time-cap", "0.1", "--quiet", "--perf-workloads", "x256$", "--out", str(run_dir))
    if r.returncode != 0:
        fail(f"optimize exited {r.returncode}: {r.stdout[-1500:]} {r.stderr[-1500:]}")
    db = sqlite3.connect(str(run_dir / "run.db"))
    options = json.loads(dict(db.execute("SELECT key, value FROM meta").fetchall())["options"])
    if options.get("perf_workloads") != "x256$":
        fail(f"run.db options do not record the pattern: {options}")
    timed = [json.loads(w or "{}") for (w,) in db.execute("SELECT workloads FROM candidates WHERE verdict IN ('leader', 'backup')")]
    if not timed or any(set(t) != {"gemm-256x256x256"} for t in timed):
        fail(f"timed workloads are not exactly the selected one: {timed}")
    n_before = db.execute("SELECT COUNT(*) FROM candidates").fetchone()[0]
    db.close()

    r = optimize("--resume", str(run_dir), "--perf-workloads", "x288$", "--budget-candidates", "3")
    if r.returncode != 2 or "keeps it" not in r.stderr:
        fail(f"resume with another pattern: exit {r.returncode}, stderr {r.stderr[-800:]}")
    r = optimize(str(task), "--backend", "cpu", "--perf-workloads", "M9999", "--out", str(pathlib.Path(tmp) / "none"))
    if r.returncode != 2 or "its perf workloads: gemm-256x256x256, gemm-192x320x288" not in r.stderr:
        fail(f"a pattern matching nothing: exit {r.returncode}, stderr {r.stderr[-800:]}")

    r = optimize("--resume", str(run_dir), "--budget-candidates", "3", "--quiet")
    if r.returncode != 0:
        fail(f"resume with the recorded pattern exited {r.returncode}: {r.stdout[-1500:]} {r.stderr[-1500:]}")
    db = sqlite3.connect(str(run_dir / "run.db"))
    rows = db.execute("SELECT id, verdict, workloads FROM candidates").fetchall()
    if len(rows) <= n_before:
        fail(f"the resumed run evaluated nothing: {len(rows)} candidates")
    for cid, verdict, w in rows:
        if verdict in ("leader", "backup") and set(json.loads(w or "{}")) != {"gemm-256x256x256"}:
            fail(f"{cid} after resume timed {w}")
print(f"perf_workloads: ok ({len(rows)} candidates, all timed on gemm-256x256x256 only)")
