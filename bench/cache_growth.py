#!/usr/bin/env python3
"""How khive's cache grows over repeated runs (issue 25: a task's golden set grew to 3.3-3.8 GB after ~15 runs).

  cache_growth.py KHIVE [--tasks tasks/demo-cpu] [--runs 10] [--budget 4] [--backend cpu] [--out FILE.md]

Runs `khive optimize TASK --agent tuner --budget-candidates B --seed <run>` RUNS times for every task of the suite,
each run with a new seed (so each makes its own timed goldens, as separate user runs do), all on one private cache
(KHIVE_CACHE under a temporary folder, the default caps). After every run it reads `khive cache --json` and the size
of each task's golden set on disk. Prints, and writes to --out, one row per run: the cache's total, goldens and builds,
and the largest golden set, against the bounds (KHIVE_GOLDENS_MAX_GB per task, KHIVE_CACHE_MAX_GB in all).
Exit 0 when every task's golden set stayed within its bound after every run, 1 otherwise.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time


def du(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


def gib(n):
    return f"{n / 2**30:.2f} GiB"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("khive")
    p.add_argument("--tasks", default="tasks/demo-cpu")
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--budget", type=int, default=4)
    p.add_argument("--backend", default="cpu")
    p.add_argument("--out")
    a = p.parse_args()
    tasks = sorted(d for d in pathlib.Path(a.tasks).iterdir() if (d / "definition.json").is_file())
    if not tasks:
        print(f"cache_growth: no task under {a.tasks}", file=sys.stderr)
        return 2
    goldens_max = float(os.environ.get("KHIVE_GOLDENS_MAX_GB", "2")) * 1e9
    rows, over = [], []
    with tempfile.TemporaryDirectory(prefix="khive-cache-growth-") as t:
        env = dict(os.environ, KHIVE_CACHE=str(pathlib.Path(t) / "cache"))
        t0 = time.time()
        for run in range(1, a.runs + 1):
            for task in tasks:
                out = pathlib.Path(t) / f"run-{task.name}-{run}"
                r = subprocess.run([a.khive, "optimize", str(task), "--backend", a.backend, "--agent", "tuner", "--agents", "1",
                                    "--budget-candidates", str(a.budget), "--seed", str(1000 + run), "--quiet", "--out", str(out)],
                                   capture_output=True, text=True, env=env, timeout=1800)
                if r.returncode not in (0, 1):
                    print(f"run {run} {task.name}: exit {r.returncode}: {r.stderr[-400:]}", file=sys.stderr)
            c = subprocess.run([a.khive, "cache", "--json"], capture_output=True, text=True, env=env)
            info = json.loads(c.stdout) if c.returncode == 0 else {}
            gdir = pathlib.Path(env["KHIVE_CACHE"]) / "goldens"
            sets = {}
            if gdir.is_dir():
                for version in gdir.iterdir():
                    for unit in version.iterdir() if version.is_dir() else []:
                        sets[unit.name] = du(unit)
            largest = max(sets.values(), default=0)
            if largest > goldens_max:
                over.append(run)
            rows.append((run, du(env["KHIVE_CACHE"]), du(gdir), du(pathlib.Path(env["KHIVE_CACHE"]) / "build"), largest, len(sets),
                         info.get("cap_bytes") or info.get("cap"), time.time() - t0))
            print(f"after run {run}: cache {gib(rows[-1][1])}, goldens {gib(rows[-1][2])} in {len(sets)} set(s), largest {gib(largest)}, "
                  f"builds {gib(rows[-1][3])}", flush=True)
    lines = [f"Cache growth: `bench/cache_growth.py KHIVE --tasks {a.tasks} --runs {a.runs} --budget {a.budget} --backend {a.backend}` "
             f"({len(tasks)} tasks per run, one private cache; bound per golden set {gib(goldens_max)})", "",
             "| after run | cache | goldens | golden sets | largest set | builds | elapsed |", "|---|---|---|---|---|---|---|"]
    for run, total, g, b, largest, n, _, el in rows:
        lines.append(f"| {run} | {gib(total)} | {gib(g)} | {n} | {gib(largest)} | {gib(b)} | {el:.0f} s |")
    lines += ["", "every golden set within its bound after every run" if not over else f"a golden set over its bound after runs {over}"]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        pathlib.Path(a.out).write_text(text)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
