#!/usr/bin/env python3
"""`khive optimize --warm-start RUN` end to end on the CPU: a first tuner run on demo-cpu/softmax, then a second run
warm-started from it must propose the first run's fastest accepted points before anything else (and record where it
started from); a warm start from a directory that is not a run is refused (exit 2) without creating anything there.

  hive_warm_start.py KHIVE ROOT
"""
import json
import pathlib
import sqlite3
import subprocess
import sys
import tempfile

khive, root = sys.argv[1], pathlib.Path(sys.argv[2])
from checks import check, failures, finish  # noqa: E402


def optimize(out, budget, *extra):
    cmd = [khive, "optimize", str(root / "tasks/demo-cpu/softmax"), "--backend", "cpu", "--agent", "tuner", "--agents", "2",
           "--budget-candidates", str(budget), "--time-cap", "0.2", "--seed", "9", "--out", str(out), "--quiet", *extra]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    print(" ".join(cmd), "->", r.returncode)
    print(r.stdout[-1500:], r.stderr[-1500:])
    return r


def candidates(run):
    db = sqlite3.connect(run / "run.db")
    return db.execute("SELECT id, verdict, params, note, time_s FROM candidates ORDER BY seq").fetchall()


with tempfile.TemporaryDirectory(prefix="khive_warm_") as tmp:
    tmp = pathlib.Path(tmp)
    a, b = tmp / "a", tmp / "b"
    check(optimize(a, 4).returncode == 0, "first run")
    ok = [c for c in candidates(a) if c[1] in ("leader", "backup") and "template" in json.loads(c[2] or "{}")]
    check(ok, "the first run has accepted tuner points")
    if ok:
        best = min(ok, key=lambda c: c[4])
        check(optimize(b, 2, "--warm-start", str(a)).returncode == 0, "warm-started run")
        tuned = [c for c in candidates(b) if "template" in json.loads(c[2] or "{}")]
        # The fastest may be a per-shape composite (tuner.dispatch): a warm start then proposes its points, v0 first.
        want = json.loads(best[2])
        if want.get("template") == "tuner.dispatch":
            name, *kvs = want["v0"].split("|")
            want = {"template": name, **dict(kv.split("=", 1) for kv in kvs)}
        # Two agents propose at once: the fastest point is one of the first two (the other is the next warm point).
        check(any(json.loads(c[2]) == want for c in tuned[:2]),
              f"the warm-started run starts with the first run's fastest point {want} (of {best[2]}): got {[c[2] for c in tuned[:2]]}")
        check(tuned and tuned[0][3].startswith("warm start"), f"its note says so: {tuned[0][3] if tuned else None}")
        meta = dict(sqlite3.connect(b / "run.db").execute("SELECT key, value FROM meta").fetchall())
        check(json.loads(meta.get("options", "{}")).get("warm_start") == [str(a)], f"recorded: {meta.get('options')}")
    bad = tmp / "not-a-run"
    bad.mkdir()
    r = optimize(tmp / "c", 2, "--warm-start", str(bad))
    check(r.returncode == 2 and "--warm-start" in r.stderr and "events.jsonl" in r.stderr, f"a non-run is refused: {r.returncode} {r.stderr[-300:]}")
    check(not (bad / "run.db").exists(), "nothing created in it")

finish("hive_warm_start")
