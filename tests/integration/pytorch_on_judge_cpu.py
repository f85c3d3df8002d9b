#!/usr/bin/env python3
"""PyTorch's T_b on the judge's clock, on the CPU (issue 21: "PyTorch's T_b and the vendor baselines are measured on the
same ruler as the candidates"). `khive eval --pytorch-ruler judge` times the task's PyTorch reference as a kernel
under test (python/khive_torch/timed.py) in a judge of its own:

  1. tasks/demo-cpu/vector_add: the PyTorch run is accepted (its outputs checked against the native reference's
     goldens like a kernel's), timed on every perf workload, and is T_b there (baseline_label "pytorch",
     pytorch_baselines.ruler "judge"); its samples are the judge's (they exclude the copy of run()'s result into the
     output slots, which the executor times apart: each sample <= the executor's own time of the call);
  2. a copy of the task whose PyTorch reference is wrong (a - b): the PyTorch run is rejected at the correctness check,
     its numbers are not used (no workload has a PyTorch T_b) and the report says why;
  3. a destination-passing reference (run(a, b, c) writing c): accepted, no copy (every copy_s is 0);
  4. --pytorch-ruler file keeps the old source: no PyTorch run;
  5. a task whose only reference is PyTorch (issue 24): `khive eval` times it by default on the CPU too (no suite file
     has its numbers) and scores against it; `khive bench` accepts the task (its reference row is PyTorch on the
     judge); `khive optimize` scores its candidates against it ("T_b: pytorch" in the run's score basis).

  pytorch_on_judge_cpu.py KHIVE ROOT
Exit 0, or 77 (skipped) when PyTorch is not installed (scripts/setup.sh installs it into .deps/torch).
"""
import json
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile

khive, root = sys.argv[1], pathlib.Path(sys.argv[2])
sys.path.insert(0, str(root / "tests/integration"))
from checks import check, finish, torch_env  # noqa: E402

env = torch_env(root)


def evaluate(task, kernel, *extra):
    args = ["eval", str(task), str(kernel), "--backend", "cpu", "--no-reference", "--time-cap", "0.2", "--seed", "7", "--json", *extra]
    r = subprocess.run([khive, *args], capture_output=True, text=True, timeout=900, env=env)
    print(f"$ khive {' '.join(args)}  -> exit {r.returncode}\n{r.stderr[-1500:]}")
    try:
        return r, json.loads(r.stdout)
    except ValueError:
        return r, {}


def copy_task(tmp, name, reference_py):
    dst = pathlib.Path(tmp) / name
    shutil.copytree(root / "tasks/demo-cpu/vector_add", dst)
    d = json.loads((dst / "definition.json").read_text())
    d["reference"] = reference_py
    (dst / "definition.json").write_text(json.dumps(d, indent=2))
    return dst


with tempfile.TemporaryDirectory(prefix="khive-pt-judge-") as tmp:
    env["KHIVE_CACHE"] = str(pathlib.Path(tmp) / "cache")
    task = root / "tasks/demo-cpu/vector_add"
    kernel = task / "reference.cpp"

    # 1. The honest reference, timed by the judge.
    r, rep = evaluate(task, kernel, "--pytorch-ruler", "judge")
    run = rep.get("pytorch_run") or {}
    check(r.returncode == 0 and rep.get("accepted"), f"the candidate is accepted: {r.stderr[-300:]}")
    check(run.get("accepted") is True, f"the PyTorch run is accepted by the judge: {json.dumps(run.get('rejection'))[:300]}")
    check((rep.get("pytorch_baselines") or {}).get("ruler") == "judge", f"pytorch_baselines says the judge timed it: {rep.get('pytorch_baselines')}")
    perf = [w for w in rep.get("workloads", [])]
    check(perf and all(w.get("baseline_label") == "pytorch" and w.get("pytorch") for w in perf),
          f"every perf workload has PyTorch's time as T_b: {[(w['workload'], w.get('baseline_label')) for w in perf]}")
    timings = run.get("timing") or []
    check(len(timings) == len(perf), f"the PyTorch run has a timing per perf workload ({len(timings)} for {len(perf)})")
    # Each sample leaves out the copy of run()'s result, which the executor timed within its own time of the call.
    triples = [(s, i, c) for t in timings for s, i, c in zip(t.get("samples_s", []), t.get("in_process_s", []), t.get("copy_s", []))]
    check(triples and len(triples) == sum(len(t.get("samples_s", [])) for t in timings), "every PyTorch sample has its copy time")
    check(all(0 < c <= i for _, i, c in triples), "each copy took time, within its call")
    check(all(s >= i - c - 1e-9 for s, i, c in triples), "each sample is at least the call's own time less the copy (the CPU's floor)")
    for w in perf:
        t = next((t for t in timings if t.get("workload") == w["workload"]), None)
        if t:
            med = statistics.median(t["samples_s"])
            check(abs(w["pytorch"]["median_s"] - med) <= 1e-12 + 1e-6 * med,
                  f"{w['workload']}: T_b {w['pytorch']['median_s']} is the median of the judge's samples of the PyTorch run {med}")

    # 2. A wrong PyTorch reference: rejected, its numbers unused.
    wrong = copy_task(tmp, "vector_add_wrong_pt", "import torch\n\ndef run(a, b):\n    return a - b\n")
    r, rep = evaluate(wrong, wrong / "reference.cpp", "--pytorch-ruler", "judge")
    run = rep.get("pytorch_run") or {}
    rej = run.get("rejection") or {}
    check(r.returncode == 0 and rep.get("accepted"), "the candidate is still accepted (the native reference makes the goldens)")
    check(run.get("accepted") is False and rej.get("reason") == "wrong_output",
          f"the wrong PyTorch reference is rejected at correctness: {rej}")
    pb = rep.get("pytorch_baselines") or {}
    check(pb.get("accepted") is False and pb.get("why"), f"the report says why PyTorch has no time: {pb}")
    check(all(w.get("pytorch") is None and w.get("baseline_label") != "pytorch" for w in rep.get("workloads", [])),
          "no workload takes T_b from the rejected PyTorch run")

    # 3. Destination-passing style: run(a, b, c) writes c itself.
    dps = copy_task(tmp, "vector_add_dps", "import torch\n\ndef run(a, b, c):\n    torch.add(a, b, out=c)\n")
    r, rep = evaluate(dps, dps / "reference.cpp", "--pytorch-ruler", "judge")
    run = rep.get("pytorch_run") or {}
    check(run.get("accepted") is True, f"a destination-passing PyTorch reference is accepted: {json.dumps(run.get('rejection'))[:300]}")
    copies = [c for t in run.get("timing") or [] for c in t.get("copy_s", [])]
    check(copies and all(c == 0 for c in copies), f"it writes the output slots itself: nothing is copied, nothing taken off: {copies[:5]}")

    # 4. The file ruler: no PyTorch run.
    r, rep = evaluate(task, kernel, "--pytorch-ruler", "file")
    check(r.returncode == 0 and rep.get("pytorch_run") is None, "--pytorch-ruler file runs no PyTorch judge")

    # 5. PyTorch-only: native references removed (the suite folder keeps its name, so the tuner binds vector_add).
    only = pathlib.Path(tmp) / "demo-cpu" / "vector_add"
    shutil.copytree(task, only, ignore=shutil.ignore_patterns("candidates", "reference.cpp", "reference.cu"))
    d = json.loads((only / "definition.json").read_text())
    d.get("khive", {}).pop("reference", None)
    (only / "definition.json").write_text(json.dumps(d, indent=2))
    r, rep = evaluate(only, kernel)
    check(r.returncode == 0 and (rep.get("pytorch_baselines") or {}).get("ruler") == "judge",
          f"a PyTorch-only task's eval times PyTorch on the judge by default: {rep.get('pytorch_baselines')} {r.stderr[-300:]}")
    check(rep.get("workloads") and all(w.get("baseline_label") == "pytorch" and w.get("score") for w in rep["workloads"]),
          "and scores every perf workload against it")
    b = subprocess.run([khive, "bench", str(only.parent), "--backend", "cpu", "--time-cap", "0.2", "--json", "--out", str(pathlib.Path(tmp) / "bench")],
                       capture_output=True, text=True, timeout=900, env=env)
    try:
        rows = json.loads(b.stdout).get("rows", [])
    except ValueError:
        rows = []
    row = rows[0] if rows else {}
    kinds = {m.get("kind"): m for m in row.get("impls", [])}
    check(b.returncode == 0 and not row.get("error") and kinds.get("reference", {}).get("accepted") and kinds.get("pytorch", {}).get("accepted"),
          f"khive bench accepts a PyTorch-only task, its reference timed by the judge: {row.get('error')} {b.stderr[-300:]}")
    run_dir = pathlib.Path(tmp) / "run"
    o = subprocess.run([khive, "optimize", str(only), "--backend", "cpu", "--agent", "tuner", "--agents", "1", "--budget-candidates", "1",
                        "--time-cap", "0.2", "--seed", "3", "--out", str(run_dir), "--quiet"], capture_output=True, text=True, timeout=900, env=env)
    out = o.stdout + o.stderr
    check(o.returncode == 0 and "T_b: pytorch" in out, f"khive optimize scores a PyTorch-only task against PyTorch: {out[-600:]}")

finish("pytorch_on_judge_cpu")
