#!/usr/bin/env python3
"""The tuner's templates through the real pipeline: for every task of a suite that has a binding, render the first N
proposals of every strategy (khive-tune render --build: each must compile), then run each through `khive eval`: the
guard must accept every one (an honest template instance is never rejected). CPU by default; on a GPU machine
`--backend cuda` puts the CUDA templates through the GPU judge (scripts/device.sh, step `fixtures`).

usage: tuner_cpu.py KHIVE_TUNE KHIVE REPO SUITE [PER_STRATEGY [TASK ...]] [--backend cpu|cuda]
       (TASK: only these tasks of the suite)"""
import os
import subprocess
import sys
import tempfile


def main():
    args = sys.argv[1:]
    backend = "cpu"
    if "--backend" in args:
        i = args.index("--backend")
        backend = args[i + 1] if i + 1 < len(args) else ""
        del args[i:i + 2]
        if backend not in ("cpu", "cuda"):
            sys.exit(f"tuner_cpu.py: --backend: expected cpu or cuda, got {backend!r}")
    tune, khive, repo, suite = args[0:4]
    per = args[4] if len(args) > 4 else "2"
    only = set(args[5:])
    suite_dir = os.path.join(repo, suite)
    failures, total = [], 0
    with tempfile.TemporaryDirectory(prefix="khive-tuner-") as tmp:
        for task in sorted(os.listdir(suite_dir)):
            tdir = os.path.join(suite_dir, task)
            if not os.path.isfile(os.path.join(tdir, "definition.json")) or (only and task not in only):
                continue
            out = os.path.join(tmp, task)
            r = subprocess.run([tune, "render", tdir, "--backend", backend, "--out", out, "--per-strategy", per, "--build"],
                               capture_output=True, text=True)
            print(r.stdout, end="")
            if r.returncode == 2 and "no binding" in r.stderr:
                print(f"{task}: no binding, skipped")
                continue
            if r.returncode != 0:
                failures.append(f"{task}: render/build failed: {r.stderr.strip()[-2000:]}")
                continue
            for line in open(os.path.join(out, "list.tsv")):
                name = line.split("\t")[0]
                total += 1
                e = subprocess.run([khive, "eval", tdir, os.path.join(out, name), "--backend", backend, "--no-baselines",
                                    "--no-reference", "--no-pytorch"],
                                   capture_output=True, text=True)
                verdict = [l for l in e.stdout.splitlines() if l.startswith("verdict") or "ERROR" in l]
                print(f"{task}/{name}: exit {e.returncode} {verdict[-1] if verdict else ''}")
                if e.returncode != 0:
                    failures.append(f"{task}/{name}: exit {e.returncode}\n{e.stdout[-1500:]}{e.stderr[-500:]}")
    print(f"{total} template instances evaluated, {len(failures)} not accepted")
    for f in failures:
        print("FAIL", f)
    return 1 if failures or total == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
