#!/usr/bin/env python3
"""PyTorch on the judge's ruler against PyTorch timed in-process: are the two T_b the same numbers?

  pytorch_ruler.py BENCH_JSON INPROCESS_JSON [--out FILE.md]

BENCH_JSON: bench.json of `khive bench SUITE --pytorch-ruler judge` (each task's PyTorch reference timed by the judge
as a kernel: python/khive_torch/timed.py). INPROCESS_JSON: bench/pytorch_baselines.py's file for the same suite and
device (CUDA events around run() in one process, L2 flushed per sample). One row per perf workload that both have:
judge, in-process, judge / in-process, |diff|, within max(3 %, 1 us) (the judge's fidelity target, issue 21).

Rows whose PyTorch column did not come from the judge (its run was rejected, or torch was missing: the bench then fell
back to the file) are listed with the reason. Exit 0 when every row is within, 1 otherwise, 2 on bad input.
"""
import argparse
import json
import sys


def load(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"pytorch_ruler.py: {path}: cannot read the {what}: {e}", file=sys.stderr)
        sys.exit(2)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bench_json")
    ap.add_argument("inprocess_json")
    ap.add_argument("--out")
    a = ap.parse_args()
    bench = load(a.bench_json, "khive bench report")
    inproc = load(a.inprocess_json, "PyTorch baselines file")
    if not isinstance(bench.get("rows"), list) or not isinstance(inproc.get("tasks"), dict):
        print(f"pytorch_ruler.py: expected {a.bench_json}: rows[] and {a.inprocess_json}: tasks{{}}", file=sys.stderr)
        return 2
    rows, others = [], []
    for row in bench["rows"]:
        task = row.get("task", "?")
        pt = next((m for m in row.get("impls", []) if m.get("kind") == "pytorch"), None)
        if pt is None:
            others.append((task, row.get("error") or "no PyTorch column"))
            continue
        if not str(pt.get("source", "")).startswith("timed by the judge"):
            others.append((task, f"PyTorch from {pt.get('source') or '?'} (not the judge)"))
            continue
        ref = inproc["tasks"].get(task, {}).get("workloads", {})
        for uuid, t in sorted(pt.get("times", {}).items()):
            if uuid not in ref:
                others.append((task, f"{uuid}: no in-process number"))
                continue
            j, i = t["median_s"], ref[uuid]["median_s"]
            diff = abs(j - i)
            rows.append((task, uuid, j, i, j / i, diff, diff <= max(0.03 * i, 1e-6)))
    out = [f"# PyTorch's T_b: the judge's clock against in-process CUDA events",
           "",
           f"Bench: `{a.bench_json}` ({bench.get('device', '?')}, {bench.get('date', '?')}); in-process: `{a.inprocess_json}` "
           f"(torch {inproc.get('torch', '?')}, {inproc.get('date', '?')}). Within: |judge - in-process| <= max(3 %, 1 us).",
           "",
           "| task | workload | judge (us) | in-process (us) | judge / in-process | abs diff (us) | within |",
           "|---|---|---|---|---|---|---|"]
    for task, uuid, j, i, r, d, ok in rows:
        out.append(f"| {task} | {uuid} | {j * 1e6:.2f} | {i * 1e6:.2f} | {r:.3f} | {d * 1e6:.2f} | {'yes' if ok else 'NO'} |")
    n_ok = sum(1 for r in rows if r[6])
    out += ["", f"Within: {n_ok} of {len(rows)} rows."]
    if others:
        out += ["", "Not compared:", ""] + [f"- {t}: {why}" for t, why in others]
    text = "\n".join(out) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    print(text)
    return 0 if rows and n_ok == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
