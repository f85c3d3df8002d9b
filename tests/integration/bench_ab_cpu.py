#!/usr/bin/env python3
"""`khive bench --ab-vendor --perf-workloads` end to end on the CPU: a copy of demo-cpu/vector_add with a
plain CPU "vendor" baseline (the reference's source) and two candidates: the vendor's own source (A/B must
find no difference beyond noise) and a kernel that does the work eight times (A/B must find it slower).

  bench_ab_cpu.py KHIVE ROOT

Asserts bench.json's per-candidate A/B entries, that only the selected perf workload was timed, the A/B
section of bench.md, and that a pattern matching no perf workload is the row's error.

"Not faster" for the vendor's own source is a statistical claim: check 11 judges an equally fast B faster in 6-9 %
of comparisons by design (guard/stats.hpp: k = 2, ~1.6 standard errors), and on a noisy 2-core CI machine the
fresh-clone run saw it once (6.5 % "faster" under 13 % noise). So that one claim gets up to three independent
benches (new timing, new seed) and fails only if every one calls the same source faster: ~0.05 % by the documented
rate for an honest guard, every time for a guard that favours candidates.
"""
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile

khive, root = sys.argv[1], pathlib.Path(sys.argv[2])
from checks import check, failures, finish  # noqa: E402


def bench(suite, kernels, out, pattern, seed=7):
    cmd = [khive, "bench", str(suite), "--backend", "cpu", "--kernels", str(kernels), "--ab-vendor",
           "--perf-workloads", pattern, "--seed", str(seed), "--out", str(out), "--build-jobs", "2"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    print(" ".join(cmd), "->", r.returncode)
    print(r.stdout[-1500:], r.stderr[-1500:])
    return r


with tempfile.TemporaryDirectory(prefix="khive_bench_ab_") as tmp:
    tmp = pathlib.Path(tmp)
    suite = tmp / "suite"
    # The task directory is named apart from the task (vector_add): the candidates' folder is found by either.
    shutil.copytree(root / "tasks/demo-cpu/vector_add", suite / "va_dir", ignore=shutil.ignore_patterns("candidates"))
    (suite / "va_dir/baselines").mkdir(exist_ok=True)
    shutil.copy(root / "tasks/demo-cpu/vector_add/reference.cpp", suite / "va_dir/baselines/plain.cpp")
    kernels = tmp / "kernels"
    (kernels / "va_dir").mkdir(parents=True)
    shutil.copy(root / "tasks/demo-cpu/vector_add/reference.cpp", kernels / "va_dir/same.cpp")
    (kernels / "va_dir/fourfold.cpp").write_text(
        "// correct, but computes every element eight times (volatile: not folded away)\n"
        "#include <cstdint>\n"
        'extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {\n'
        "  for (int r = 0; r < 8; ++r)\n"
        "    for (int64_t i = 0; i < N; ++i) { volatile float s = a[i] + b[i]; c[i] = s; }\n}\n")

    out = tmp / "out"
    r = bench(suite, kernels, out, "n4194304$")
    check(r.returncode == 0, f"bench exit {r.returncode}")
    j = json.loads((out / "bench.json").read_text())
    row = j["rows"][0]
    check([w["workload"] for w in row["workloads"]] == ["vector_add-n4194304"], f"timed workloads {row['workloads']}")
    impls = {m["label"]: m for m in row["impls"]}
    check("baseline:plain" in impls and impls["baseline:plain"]["accepted"], "the vendor baseline was accepted")
    check("ab" not in impls.get("baseline:plain", {}), "no A/B on the vendor itself")
    for name in ("candidate:same.cpp", "candidate:fourfold.cpp"):
        m = impls.get(name, {})
        check(m.get("accepted"), f"{name} accepted ({m.get('verdict')})")
        a = m.get("ab", {}).get("baseline:plain", {}).get("vector_add-n4194304")
        check(a is not None, f"{name}: an A/B entry against baseline:plain ({m.get('ab')}, {m.get('ab_error')})")
        if a:
            check(a["pairs"] >= 10, f"{name}: {a['pairs']} pairs")
            check(0 < a["vendor_over_this"] < 100, f"{name}: ratio {a['vendor_over_this']}")
            check(list(m["times"]) == ["vector_add-n4194304"], f"{name}: times {list(m['times'])}")
    def ab_of(impls, name):
        return impls.get(name, {}).get("ab", {}).get("baseline:plain", {}).get("vector_add-n4194304")

    same = ab_of(impls, "candidate:same.cpp")
    slow = ab_of(impls, "candidate:fourfold.cpp")
    if same:
        check(0.5 < same["vendor_over_this"] < 2.0, f"same source: ratio {same['vendor_over_this']}")
        verdicts = [same]
        for retry in range(2):   # see the docstring: an equal kernel is called faster in 6-9 % of comparisons
            if not verdicts[-1]["faster"]:
                break
            print(f"the vendor's own source was called faster ({verdicts[-1]}): an independent bench, {retry + 1} of 2")
            again = tmp / f"out-same-{retry}"
            r = bench(suite, kernels, again, "n4194304$", seed=8 + retry)
            check(r.returncode == 0, f"bench exit {r.returncode} (retry {retry + 1})")
            a = ab_of({m["label"]: m for m in json.loads((again / "bench.json").read_text())["rows"][0]["impls"]}, "candidate:same.cpp")
            check(a is not None, f"retry {retry + 1}: an A/B entry for same.cpp")
            if a is None:
                break
            verdicts.append(a)
        check(not verdicts[-1]["faster"], f"the vendor's own source is not faster than the vendor in {len(verdicts)} independent benches: {verdicts}")
    if slow:
        check(slow["slower"] and slow["vendor_over_this"] < 0.6, f"eight times the work is slower: {slow}")
    md = (out / "bench.md").read_text()
    check("## Interleaved A/B against the vendor baselines" in md, "bench.md has the A/B section")
    check("| vector_add | fourfold.cpp | plain | vector_add-n4194304 |" in md, "bench.md has fourfold's A/B row")

    out2 = tmp / "out2"
    r = bench(suite, kernels, out2, "no-such-workload")
    check(r.returncode == 1, f"a pattern matching nothing fails the row (exit {r.returncode})")
    j = json.loads((out2 / "bench.json").read_text())
    check("no-such-workload" in (j["rows"][0]["error"] or ""), f"the row's error names the pattern: {j['rows'][0]['error']}")

finish("bench_ab_cpu")
