#!/usr/bin/env python3
"""`khive bench` end to end on the CPU demo suite: a correct, a wrong and a non-building candidate, and
synthetic PyTorch numbers for this CPU, so every column of a row is exercised.

  bench_demo_cpu.py KHIVE ROOT

The suite is copied to a scratch directory (the PyTorch file must sit in the suite's baselines/ folder,
and the repository is not written). Asserts the rows of bench.json, the live table and bench.md.
"""
import json
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time

khive, root = sys.argv[1], pathlib.Path(sys.argv[2])
sys.path.insert(0, str(root / "bench"))
import pytorch_baselines as pb  # noqa: E402  (the slug rule khive shares)

from checks import check, failures  # noqa: E402


with tempfile.TemporaryDirectory(prefix="khive_bench_it_") as tmp:
    tmp = pathlib.Path(tmp)
    suite = tmp / "demo-cpu"
    shutil.copytree(root / "tasks/demo-cpu", suite, ignore=shutil.ignore_patterns("candidates"))
    kernels = tmp / "kernels"
    (kernels / "vector_add").mkdir(parents=True)
    (kernels / "softmax").mkdir(parents=True)
    shutil.copy(root / "tasks/demo-cpu/vector_add/candidates/omp_simd.cpp", kernels / "vector_add/good.cpp")
    (kernels / "vector_add/wrong.cpp").write_text(
        "// subtracts instead of adding: check 5\n"
        'extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {\n'
        "  for (int64_t i = 0; i < N; ++i) c[i] = a[i] - b[i];\n}\n")
    (kernels / "softmax/nobuild.cpp").write_text(
        'extern "C" void khive_launch(const float* x, float* y, int64_t B, int64_t D) { undeclared(); }\n')
    (kernels / "softmax/notes.txt").write_text("not a kernel: ignored\n")

    # PyTorch numbers for this CPU: vector_add at its real shapes (slow on purpose: 1 s), gemm at a shape the
    # task no longer has (stale: must not be used).
    vw = [json.loads(l) for l in (suite / "vector_add/workload.jsonl").read_text().splitlines() if l.strip()]
    perf = [w for w in vw if w.get("khive", {}).get("role") in ("perf", "both")]
    doc = {"schema": "khive.pytorch-baselines/1", "gpu": "cpu-" + pb.slug(pb.cpu_model()), "torch": "synthetic",
           "date": "2026-01-01T00:00:00Z",
           "tasks": {"vector_add": {"workloads": {w["uuid"]: {"median_s": 1.0, "spread": 0.01, "samples": 10,
                                                              "axes": w["axes"]} for w in perf}},
                     "gemm": {"workloads": {"gemm-256x256x256": {"median_s": 1.0, "spread": 0.0, "samples": 10,
                                                                 "axes": {"M": 1, "N": 1, "K": 1}}}},
                     "gelu": {"workloads": {}, "error": "workload x: RuntimeError: synthetic"}}}
    (suite / "baselines").mkdir()
    (suite / "baselines" / f"pytorch-{doc['gpu']}.json").write_text(json.dumps(doc))

    out = tmp / "out"
    r = subprocess.run([khive, "bench", str(suite), "--backend", "cpu", "--kernels", str(kernels), "--out", str(out),
                        "--time-cap", "0.2", "--seeds", "2"], capture_output=True, text=True, timeout=600)
    print(r.stdout)
    print(r.stderr[-3000:], file=sys.stderr)
    check(r.returncode == 0, f"exit code 0 (every reference accepted), got {r.returncode}")
    j = json.loads((out / "bench.json").read_text())
    rows = {row["task"]: row for row in j["rows"]}
    check(sorted(rows) == ["gelu", "gemm", "softmax", "vector_add"], f"one row per task, got {sorted(rows)}")
    for name, row in rows.items():
        ref = next((m for m in row["impls"] if m["kind"] == "reference"), None)
        check(row["error"] is None, f"{name}: no error, got {row['error']}")
        check(ref is not None and ref["accepted"] and ref["gmean_s"] and ref["gmean_s"] > 0,
              f"{name}: reference accepted and timed")
        t = row["time"]
        check(row["seconds"] > 0 and t["runner_s"] > 0, f"{name}: wall and runner time recorded")
        # no second is counted twice: builds and judges are disjoint parts of the wall, goldens a part of the judges
        check(t["builds_s"] + t["runner_s"] <= row["seconds"] + 0.05 and 0 < t["goldens_s"] <= t["runner_s"],
              f"{name}: builds + judges within the wall, goldens within the judges, got {t} of {row['seconds']:.2f} s")
        # the live line, then the final table: each task's row printed twice
        check(sum(1 for l in r.stdout.splitlines() if l.startswith(name + " ")) == 2, f"{name}: live row and final row")

    va = rows["vector_add"]
    impls = {m["label"]: m for m in va["impls"]}
    check(impls.get("candidate:good.cpp", {}).get("accepted") is True, "vector_add: good.cpp accepted")
    check(va["best_candidate"] == "candidate:good.cpp", f"vector_add: best candidate good.cpp, got {va['best_candidate']}")
    wrong = impls.get("candidate:wrong.cpp", {})
    check(wrong.get("accepted") is False and "check 5 (wrong_output)" in wrong.get("verdict", ""),
          f"vector_add: wrong.cpp rejected at check 5, got {wrong.get('verdict')}")
    check("pytorch" in impls and impls["pytorch"]["gmean_s"] == 1.0, "vector_add: PyTorch column from the file")
    check(all(w["t_b_label"] == "pytorch" and w["t_b_s"] == 1.0 for w in va["workloads"]), "vector_add: T_b is PyTorch")
    good = impls.get("candidate:good.cpp", {})
    check(good.get("score") is not None and good["score"] > 0.5, f"vector_add: good.cpp beats a 1 s T_b, score {good.get('score')}")
    check(not any(m["kind"] == "candidate" for m in rows["gemm"]["impls"]), "gemm: no candidates")
    check(all(w["t_b_label"] == "reference" for w in rows["gemm"]["workloads"]), "gemm: stale PyTorch numbers not used")
    check(not any(m["kind"] == "pytorch" for m in rows["gelu"]["impls"]), "gelu: PyTorch error gives no column")
    sm = {m["label"]: m for m in rows["softmax"]["impls"]}
    nb = sm.get("candidate:nobuild.cpp", {})
    check(nb.get("accepted") is False and "check 1 (build_error)" in nb.get("verdict", ""),
          f"softmax: nobuild.cpp rejected at check 1, got {nb.get('verdict')}")
    check(len([m for m in rows["softmax"]["impls"] if m["kind"] == "candidate"]) == 1, "softmax: notes.txt ignored")
    md = (out / "bench.md").read_text()
    check("| vector_add |" in md and "## Where the time went" in md and "candidate:wrong.cpp" in md, "bench.md rows")
    check(j["pytorch"] and j["pytorch"]["torch"] == "synthetic", "bench.json names the PyTorch file")

    check(j["partial"] is False, "a finished run's bench.json is not partial")

    # Cut short (a time limit's SIGTERM, Ctrl-C): bench.json is rewritten after every task, the task in hand
    # finishes, the rest are not started, and the exit code is 130 with every finished row kept.
    cut = tmp / "cut"
    p = subprocess.Popen([khive, "bench", str(suite), "--backend", "cpu", "--out", str(cut), "--time-cap", "0.2",
                          "--seeds", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and p.poll() is None:
        try:
            if json.loads((cut / "bench.json").read_text())["rows"]:
                break
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.02)
    p.send_signal(signal.SIGTERM)
    out_text, err_text = p.communicate(timeout=300)
    check(p.returncode == 130, f"SIGTERM after the first task: exit 130, got {p.returncode}: {err_text[-500:]}")
    jc = json.loads((cut / "bench.json").read_text())
    check(jc["partial"] is True and 1 <= len(jc["rows"]) < 4,
          f"the cut run keeps its finished rows and says partial, got {len(jc['rows'])} rows, partial {jc['partial']}")
    check(all(row["error"] is None and any(m["kind"] == "reference" and m["accepted"] for m in row["impls"])
              for row in jc["rows"]), "every kept row is complete")
    check("**partial**" in (cut / "bench.md").read_text(), "bench.md says partial")
    check("interrupted after" in err_text, f"the run says it was interrupted: {err_text[-300:]}")

print(f"bench_demo_cpu: {len(failures)} of the checks failed" if failures else "bench_demo_cpu: all checks passed")
sys.exit(1 if failures else 0)
