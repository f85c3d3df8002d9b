#!/usr/bin/env python3
"""`khive optimize` scores against T_b as docs/architecture.md defines it: PyTorch on this device where the suite has its
numbers (the same rule as khive eval and khive bench), not the task's own reference.

  hive_pytorch_tb.py KHIVE ROOT

A copy of the demo-cpu suite's vector_add with synthetic PyTorch numbers for this CPU (1 s per perf workload,
far slower than the reference): the reference's score must then be close to 1, not the 0.5 it gets when T_b is
the reference itself.
"""
import json
import pathlib
import shutil
import sqlite3
import subprocess
import sys
import tempfile

khive, root = sys.argv[1], pathlib.Path(sys.argv[2])
sys.path.insert(0, str(root / "bench"))
import pytorch_baselines as pb  # noqa: E402  (the device slug rule khive shares)

from checks import check, failures, finish  # noqa: E402


with tempfile.TemporaryDirectory(prefix="khive_hive_tb_") as tmp:
    tmp = pathlib.Path(tmp)
    suite = tmp / "demo-cpu"   # the suite's name keeps the repository's tuner binding for vector_add
    shutil.copytree(root / "tasks/demo-cpu/vector_add", suite / "vector_add", ignore=shutil.ignore_patterns("candidates"))
    ws = [json.loads(l) for l in (suite / "vector_add/workload.jsonl").read_text().splitlines() if l.strip()]
    perf = [w for w in ws if w.get("khive", {}).get("role") in ("perf", "both")]
    doc = {"schema": "khive.pytorch-baselines/1", "gpu": "cpu-" + pb.slug(pb.cpu_model()), "torch": "synthetic",
           "date": "2026-01-01T00:00:00Z",
           "tasks": {"vector_add": {"workloads": {w["uuid"]: {"median_s": 1.0, "spread": 0.01, "samples": 10, "axes": w["axes"]}
                                                  for w in perf}}}}
    (suite / "baselines").mkdir()
    (suite / "baselines" / f"pytorch-{doc['gpu']}.json").write_text(json.dumps(doc))
    run = tmp / "run"
    r = subprocess.run([khive, "optimize", str(suite / "vector_add"), "--backend", "cpu", "--agent", "tuner", "--agents", "1",
                        "--budget-candidates", "1", "--time-cap", "0.2", "--seed", "5", "--out", str(run), "--quiet"],
                       capture_output=True, text=True, timeout=600)
    print(r.stdout[-2000:], r.stderr[-2000:])
    check(r.returncode == 0, f"optimize exit {r.returncode}")
    check("scores: T_b: pytorch on 3 workloads; T_sol: hardware profile" in r.stdout,
          f"the summary says where the scores come from: {[l for l in r.stdout.splitlines() if l.startswith('scores')]}")
    db = sqlite3.connect(run / "run.db")
    basis = db.execute("select value from meta where key = 'score_basis'").fetchone()
    check(basis is not None and basis[0].startswith("T_b: pytorch on 3 workloads"), f"the run records it: {basis}")
    ref = db.execute("select value from meta where key = 'reference'").fetchone()
    check(ref is not None, "the run names its reference")
    if ref:
        score = db.execute("select score from candidates where id = ?", (ref[0],)).fetchone()
        check(score is not None and score[0] is not None and score[0] > 0.9,
              f"the reference scored against PyTorch's 1 s (expected > 0.9; 0.5 would mean T_b = the reference): {score}")

finish("hive_pytorch_tb")
