#!/usr/bin/env python3
"""Ablation of the hive (issue 4, item 8): one agent vs N agents sharing the board vs N agents without it,
at an equal candidate budget, on several tasks. Runs `khive optimize` for each (task, configuration), reads
each run's run.db, and prints a Markdown table (also written to --md).

  bench/ablation.py --khive build/bin/khive --backend cpu --budget 9 --agents 3 \
      tasks/demo-cpu/softmax tasks/demo-cpu/gelu tasks/demo-cpu/gemm --md docs/results/DATE-cpu/ablation.md

Per run: the leader's speedup over the reference measured in the same run (both timed under the same
load, so runs are comparable), its task score, when the final leader was found (candidate number and
seconds), candidates by verdict, strategy switches and wall time."""
import argparse, datetime, json, os, pathlib, platform, shutil, sqlite3, subprocess, sys, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("tasks", nargs="+")
ap.add_argument("--khive", default="build/bin/khive")
ap.add_argument("--backend", default="cpu")
ap.add_argument("--agent", default="tuner", help="agent spec for every agent (default tuner)")
ap.add_argument("--agents", type=int, default=3)
ap.add_argument("--budget", type=int, default=9, help="evaluated candidates per run (equal for every configuration)")
ap.add_argument("--plateau", type=int, default=3)
ap.add_argument("--seed", type=int, default=20261130)
ap.add_argument("--time-cap", type=float, default=0.3)
ap.add_argument("--out", default=None, help="keep the run directories here (default: a temporary directory)")
ap.add_argument("--md", default=None, help="write the Markdown table here too")
a = ap.parse_args()

configs = [("1 agent", 1, []), (f"{a.agents} agents + board", a.agents, []), (f"{a.agents} agents, no board", a.agents, ["--no-board"])]
root = pathlib.Path(a.out) if a.out else pathlib.Path(tempfile.mkdtemp(prefix="khive-ablation-"))
root.mkdir(parents=True, exist_ok=True)
rows = []
for task in a.tasks:
    name = pathlib.Path(task).name
    for label, n, extra in configs:
        run = root / f"{name}-{n}{'-noboard' if extra else ''}"
        if run.exists():
            shutil.rmtree(run)
        cmd = [a.khive, "optimize", task, "--backend", a.backend, "--agent", a.agent, "--agents", str(n), "--budget-candidates",
               str(a.budget), "--plateau", str(a.plateau), "--seed", str(a.seed), "--time-cap", str(a.time_cap), "--out", str(run), "--quiet", *extra]
        print("$", " ".join(cmd), flush=True)
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stdout[-2000:], r.stderr[-2000:])
            rows.append((name, label, None))
            continue
        db = sqlite3.connect(str(run / "run.db"))
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        cands = db.execute("SELECT id, seq, verdict, time_s, score, t FROM candidates ORDER BY seq").fetchall()
        ref = next(c for c in cands if c[0] == meta["reference"])
        lead = next(c for c in cands if c[0] == meta["leader"])
        verdicts = {}
        for c in cands[1:]:
            verdicts[c[2]] = verdicts.get(c[2], 0) + 1
        order = [c[0] for c in cands[1:]]
        rows.append((name, label, {
            "speedup": ref[3] / lead[3] if lead[3] > 0 else 0, "score": lead[4], "leader_at": order.index(lead[0]) + 1 if lead[0] in order else 0,
            "leader_t": lead[5], "verdicts": verdicts, "switches": db.execute("SELECT COUNT(*) FROM switches").fetchone()[0],
            "wall": float(meta.get("wall_s", 0)), "board": db.execute("SELECT COUNT(*) FROM board").fetchone()[0]}))
        print(f"  leader {lead[0]}: {rows[-1][2]['speedup']:.2f}x the reference", flush=True)

lines = [f"Hive ablation, {a.backend} backend, agent `{a.agent}`, budget {a.budget} evaluated candidates per run, plateau {a.plateau}, "
         f"seed {a.seed}, time cap {a.time_cap} s ({datetime.date.today()}, {platform.node()}, {os.cpu_count()} CPUs).", "",
         "| task | configuration | leader vs reference | leader score | leader found at (candidate, s) | leader / backup / rejected / error | switches | board entries | wall s |",
         "|---|---|---|---|---|---|---|---|---|"]
for name, label, d in rows:
    if d is None:
        lines.append(f"| {name} | {label} | run failed | | | | | | |")
        continue
    v = d["verdicts"]
    lines.append(f"| {name} | {label} | {d['speedup']:.2f}x | {d['score']:.3f} | {d['leader_at'] or 'reference'}, {d['leader_t']:.0f} | "
                 f"{v.get('leader', 0)} / {v.get('backup', 0)} / {v.get('rejected', 0)} / {v.get('error', 0)} | {d['switches']} | {d['board']} | {d['wall']:.0f} |"
                 if d['score'] is not None else
                 f"| {name} | {label} | {d['speedup']:.2f}x | - | {d['leader_at'] or 'reference'}, {d['leader_t']:.0f} | "
                 f"{v.get('leader', 0)} / {v.get('backup', 0)} / {v.get('rejected', 0)} / {v.get('error', 0)} | {d['switches']} | {d['board']} | {d['wall']:.0f} |")
lines += ["", "Command: `" + " ".join([sys.argv[0]] + sys.argv[1:]) + "`"]
md = "\n".join(lines) + "\n"
print(md)
if a.md:
    pathlib.Path(a.md).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(a.md).write_text(md)
