#!/usr/bin/env python3
"""Guard overhead per candidate, and timing trust, measured through `khive eval`.

  guard_overhead.py KHIVE ROOT BACKEND [--reps N] [--suites demo-cpu,sol] [--out table.md]

For each task of the suites (default tasks/demo-cpu), one honest candidate is evaluated REPS times with a fixed seed
(build and goldens cached after the first run, as in a hive run). Reported per task:
  - wall: the whole `khive eval` (build cached, goldens cached, reference/baselines not timed)
  - guard: the judge process's time minus the kernel's exchanges and the reference's golden calls (the guard's work:
    executors' start and sandbox, fresh inputs for every call, poisoning, golden comparisons, cache flushes)
  - the kernel's median and its spread within a run, and the spread of the medians across runs
    (how small a difference the guard can trust).
"""
import json, pathlib, statistics, subprocess, sys, time

khive, root, backend = sys.argv[1:4]
root = pathlib.Path(root)
reps = int(sys.argv[sys.argv.index("--reps") + 1]) if "--reps" in sys.argv else 5
out = sys.argv[sys.argv.index("--out") + 1] if "--out" in sys.argv else None
ext = "cu" if backend == "cuda" else "cpp"
suites = [root / "tasks" / s for s in (sys.argv[sys.argv.index("--suites") + 1] if "--suites" in sys.argv else "demo-cpu").split(",")]

def pick(task):
    c = sorted((task / "candidates").glob(f"*.{ext}"))
    return c[0] if c else task / f"reference.{ext}"

rows = []
for suite in suites:
    for task in sorted(p for p in suite.iterdir() if (p / "definition.json").exists()):
        k = pick(task)
        walls, guards, medians, spreads, gbs, sol, phases = [], [], [], [], [], [], []
        for i in range(reps + 1):   # run 0 warms the build and golden caches
            t0 = time.time()
            r = subprocess.run([khive, "eval", str(task), str(k), "--backend", backend, "--json", "--seed", "4242",
                                "--no-reference", "--no-baselines"], capture_output=True, text=True)
            wall = time.time() - t0
            try:
                j = json.loads(r.stdout)
            except json.JSONDecodeError:
                print(f"{task.name}: eval failed: {r.stderr[:300]}")
                break
            if not j["accepted"]:
                print(f"{task.name}: {k.name} not accepted: {j.get('verdict') or j.get('harness_error')}")
                break
            if i == 0:
                continue
            walls.append(wall)
            guards.append(j["candidate"]["guard_seconds"])
            phases.append(j["candidate"].get("phases", {}))
            w = max((w for w in j["workloads"] if w["kernel"]), key=lambda w: w["bytes"])
            medians.append(w["kernel"]["median_s"])
            spreads.append(w["kernel"]["rel_spread"])
            gbs.append(w["bytes"] / w["kernel"]["median_s"] / 1e9)
            sol.append(w["fraction_of_sol"] or 0)
            largest = w["workload"]
        if medians:
            across = (statistics.pstdev(medians) / statistics.mean(medians)) if len(medians) > 1 else 0
            # where the guard's own time went (median per phase over the runs; "kernel" is the kernel's)
            names = {n for p in phases for n in p if n != "kernel"}
            ph = sorted(((statistics.median(p.get(n, 0.0) for p in phases), n) for n in names), reverse=True)
            where = ", ".join(f"{n} {v:.2f}" for v, n in ph[:4] if v >= 0.005)
            rows.append((task.name, k.name, largest, statistics.median(walls), statistics.median(guards),
                         statistics.median(medians), statistics.median(spreads), across,
                         max(medians) / min(medians) - 1, statistics.median(gbs), statistics.median(sol), where))

hdr = ("| task | kernel | workload | eval wall (s) | guard overhead (s) | kernel median | spread in run | "
       "spread of medians across runs | max/min - 1 across runs | GB/s | fraction of SOL | guard time by phase (s) |")
lines = [hdr, "|" + "---|" * 12]
for r in rows:
    lines.append(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:.2f} | {r[4]:.3f} | {r[5]*1e3:.4f} ms | {r[6]*100:.2f}% | "
                 f"{r[7]*100:.2f}% | {r[8]*100:.2f}% | {r[9]:.0f} | {r[10]*100:.1f}% | {r[11]} |")
print("\n".join(lines))
if out:
    pathlib.Path(out).write_text(f"backend {backend}, {reps} runs per task after one warm run, command: "
                                 f"bench/guard_overhead.py khive . {backend} --reps {reps}\n\n" + "\n".join(lines) + "\n")
