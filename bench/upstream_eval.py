#!/usr/bin/env python3
"""The upstream evaluators on khive's exported kernels, for the side-by-side table of issue 14 (run on the GPU).

  upstream_eval.py kernelbench --src KERNELBENCH_CHECKOUT --problem level1/19_ReLU.py --modelnew OUT/ModelNew.py
  upstream_eval.py sol --problem SOL_PROBLEM_DIR --solution OUT/solution.json [--sol-cli sol-execbench]

kernelbench: KernelBench's own eval_kernel_against_ref (from SRC/src, installed or not: only its eval module and
its imports are needed: torch, numpy, pydantic, requests) on the problem's source and khive's ModelNew, 5
correctness trials and 100 timed ones on cuda:0. sol: SOL-ExecBench's CLI on the problem folder and khive's
solution.json (--json). Prints one JSON line: {"tool", "problem", "compiled", "correct", "runtime_ms",
"ref_runtime_ms", "speedup", "raw"}; exit 0 when the tool ran (whatever its verdict), 2 when it could not.
Put it beside `khive export RUN --solution`'s verdict and speed-up, task by task (docs/interop.md).
"""
import argparse
import json
import pathlib
import subprocess
import sys


def kernelbench(a):
    sys.path.insert(0, str(pathlib.Path(a.src) / "src"))
    try:
        from kernelbench.eval import eval_kernel_against_ref
    except ImportError as e:
        print(json.dumps({"tool": "kernelbench", "error": f"cannot import kernelbench.eval from {a.src}/src: {e}"}))
        return 2
    ref = pathlib.Path(a.problem).read_text()
    new = pathlib.Path(a.modelnew).read_text()
    r = eval_kernel_against_ref(ref, new, num_correct_trials=a.trials, num_perf_trials=a.perf_trials, measure_performance=True,
                                device=0, backend="cuda")
    raw = r.model_dump() if hasattr(r, "model_dump") else dict(r)
    rt = raw.get("runtime") or -1
    ref_rt = raw.get("ref_runtime") or -1
    out = {"tool": "kernelbench", "problem": a.problem, "compiled": raw.get("compiled"), "correct": raw.get("correctness"),
           "runtime_ms": rt, "ref_runtime_ms": ref_rt, "speedup": ref_rt / rt if rt and rt > 0 and ref_rt and ref_rt > 0 else None,
           "raw": raw}
    print(json.dumps(out, default=str))
    return 0


def sol(a):
    r = subprocess.run([a.sol_cli, a.problem, "--solution", a.solution, "--json"], capture_output=True, text=True)
    traces = []
    for line in r.stdout.splitlines():
        line = line.strip()
        if line.startswith("{") or line.startswith("["):
            try:
                j = json.loads(line)
                traces += j if isinstance(j, list) else [j]
            except json.JSONDecodeError:
                pass
    if not traces:
        print(json.dumps({"tool": "sol-execbench", "problem": a.problem, "error": f"exit {r.returncode}: {r.stderr[-600:]}"}))
        return 2
    ev = [t.get("evaluation") or {} for t in traces]
    passed = [e for e in ev if e.get("status") == "PASSED"]
    lat = [e["performance"]["latency_ms"] for e in passed if e.get("performance")]
    ref = [e["performance"]["reference_latency_ms"] for e in passed if e.get("performance")]
    out = {"tool": "sol-execbench", "problem": a.problem, "compiled": not any(e.get("status") == "COMPILE_ERROR" for e in ev),
           "correct": len(passed) == len(ev), "statuses": sorted({e.get("status") for e in ev}),
           "runtime_ms": sum(lat) / len(lat) if lat else None, "ref_runtime_ms": sum(ref) / len(ref) if ref else None,
           "speedup": (sum(r_ / l_ for r_, l_ in zip(ref, lat)) / len(lat)) if lat else None, "workloads": len(ev)}
    print(json.dumps(out))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="tool", required=True)
    k = sub.add_parser("kernelbench")
    k.add_argument("--src", required=True)
    k.add_argument("--problem", required=True)
    k.add_argument("--modelnew", required=True)
    k.add_argument("--trials", type=int, default=5)
    k.add_argument("--perf-trials", type=int, default=100)
    s = sub.add_parser("sol")
    s.add_argument("--problem", required=True)
    s.add_argument("--solution", required=True)
    s.add_argument("--sol-cli", default="sol-execbench")
    a = ap.parse_args()
    return kernelbench(a) if a.tool == "kernelbench" else sol(a)


if __name__ == "__main__":
    sys.exit(main())
