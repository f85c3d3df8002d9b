#!/usr/bin/env python3
"""The tuner over a whole suite (issue 4: "for each suite the mean score and how many tasks the tuner improved
over the reference and over PyTorch"). Runs `khive optimize TASK --agent tuner` on every task of the suite that
the tuner has a template for, reads each run through `khive export` (run.db, or events.jsonl where a results folder
kept only the log), and prints a Markdown table (also written to --md).

  bench/tune_suite.py tasks/sol --khive build/bin/khive --backend cuda --agents 3 --budget 16 --md out.md
  bench/tune_suite.py tasks/cutegen26 ... --gpus 4     # four tasks at a time, one GPU each (CUDA_VISIBLE_DEVICES)

Per task: the reference's and the leader's weighted geometric mean time (from the same run), the leader's task
score (against T_b: PyTorch on this device where the suite has its numbers), and the leader against PyTorch over
the workloads PyTorch was measured on (tasks/<suite>/baselines/pytorch-<gpu>.json, matched by workload uuid).
A task the tuner has no template for is listed as such; a failed run is listed with its error and the suite goes on.
"""
import argparse, concurrent.futures, datetime, json, math, os, pathlib, queue, shutil, subprocess, sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import run_export  # noqa: E402  (a run's records, read by khive)

ap = argparse.ArgumentParser()
ap.add_argument("suite")
ap.add_argument("--khive", default="build/bin/khive", help="khive executable: runs the tuner, reads runs (khive export), rescores")
ap.add_argument("--backend", default="cpu")
ap.add_argument("--agents", type=int, default=3)
ap.add_argument("--budget", type=int, default=12, help="evaluated candidates per task")
ap.add_argument("--budget-time", type=float, default=0, help="seconds per task (0: no limit)")
ap.add_argument("--time-cap", type=float, default=0.5)
ap.add_argument("--seed", type=int, default=20261130)
ap.add_argument("--backups-per-family", type=int, default=0,
                help="khive optimize --backups-per-family (0: its default); more backups give tuner.dispatch more points to compose")
ap.add_argument("--tasks", default="", help="comma-separated task directory names, run in this order (default: all, sorted)")
ap.add_argument("--pytorch", default="", help="PyTorch baselines file (default: the suite's pytorch-h200.json on cuda)")
ap.add_argument("--out", default=".khive/tune-suite", help="run directories go here")
ap.add_argument("--md", default=None)
ap.add_argument("--collect", action="store_true",
                help="run nothing: build the table from the run directories already under --out (e.g. a suite run cut short)")
ap.add_argument("--rescore-profile", default="",
                help="score column from `khive rescore RUN --profile FILE` (T_b: PyTorch where the suite has numbers) instead of "
                     "the score the run recorded (runs made before the hive scored against PyTorch recorded the reference's or a vendor's)")
ap.add_argument("--warm-from", default="",
                help="an earlier --out directory: each task's run there (TASK-BACKEND) warm-starts this one (khive optimize --warm-start)")
ap.add_argument("--gpus", type=int, default=1,
                help="cuda: tune this many tasks at once, each run seeing one GPU (CUDA_VISIBLE_DEVICES=i), so timing stays exclusive per GPU")
a = ap.parse_args()

if not pathlib.Path(a.khive).is_file():
    sys.exit(f"tune_suite: --khive {a.khive}: no such file (build khive, or give --khive PATH: --collect reads the runs through it too)")
suite = pathlib.Path(a.suite)
tasks = sorted(p.parent for p in suite.glob("*/definition.json"))
if a.tasks:   # in the order given (the tasks that matter most first, in case the run is cut)
    by_name = {t.name: t for t in tasks}
    want = [n for n in a.tasks.split(",") if n]
    unknown = [n for n in want if n not in by_name]
    if unknown:
        sys.exit(f"tune_suite: --tasks: no task {', '.join(unknown)} under {suite} (have: {', '.join(sorted(by_name))})")
    tasks = [by_name[n] for n in dict.fromkeys(want)]
if not tasks:
    sys.exit(f"tune_suite: no task under {suite}")

pt_file = pathlib.Path(a.pytorch) if a.pytorch else (suite / "baselines" / "pytorch-h200.json" if a.backend == "cuda" else None)
pytorch = {}
if pt_file and pt_file.exists():
    pytorch = json.loads(pt_file.read_text()).get("tasks", {})


def geomean(times, weights):
    keys = [k for k in times if k in weights and times[k] > 0]
    if not keys:
        return None
    ws = sum(weights[k] for k in keys)
    return math.exp(sum(weights[k] * math.log(times[k]) for k in keys) / ws)


def weights_of(task):
    w = {}
    for line in (task / "workload.jsonl").read_text().splitlines():
        if line.strip():
            j = json.loads(line)
            w[j.get("uuid", "")] = float(j.get("khive", {}).get("weight", 1))
    return w


out = pathlib.Path(a.out)
out.mkdir(parents=True, exist_ok=True)
free_gpus = queue.Queue()
for i in range(max(1, a.gpus) if a.backend == "cuda" else 1):
    free_gpus.put(i)


def tune(task):
    """One task's run; returns (name, row). Holds one GPU for the run when --gpus > 1."""
    definition = json.loads((task / "definition.json").read_text())
    run = out / f"{task.name}-{a.backend}"
    if a.collect:
        log = out / f"{task.name}-{a.backend}.log"
        text = log.read_text() if log.exists() else ""
        if not (run / "run.db").exists() and not (run / "events.jsonl").exists():
            return task.name, {"error": "not run"}
        return read_run(task, definition, run, text)
    if run.exists():
        shutil.rmtree(run)   # a fresh run per invocation (an existing run directory would be refused)
    cmd = [a.khive, "optimize", str(task), "--backend", a.backend, "--agent", "tuner", "--agents", str(a.agents),
           "--budget-candidates", str(a.budget), "--time-cap", str(a.time_cap), "--seed", str(a.seed), "--out", str(run), "--quiet"]
    if a.budget_time:
        cmd += ["--budget-time", str(a.budget_time)]
    if a.backups_per_family:
        cmd += ["--backups-per-family", str(a.backups_per_family)]
    warm = pathlib.Path(a.warm_from) / f"{task.name}-{a.backend}" if a.warm_from else None
    if warm and ((warm / "run.db").exists() or (warm / "events.jsonl").exists()):
        cmd += ["--warm-start", str(warm)]
    gpu = free_gpus.get()
    env = dict(os.environ)
    if a.backend == "cuda" and a.gpus > 1:
        env["CUDA_VISIBLE_DEVICES"] = str(gpu)
    print(f"$ {'CUDA_VISIBLE_DEVICES=%d ' % gpu if 'CUDA_VISIBLE_DEVICES' in env and a.gpus > 1 else ''}{' '.join(cmd)}", flush=True)
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    finally:
        free_gpus.put(gpu)
    text = r.stdout + r.stderr
    (out / f"{task.name}-{a.backend}.log").write_text(text)
    if not (run / "run.db").exists():
        return task.name, {"error": text.strip().splitlines()[-1] if text.strip() else f"exit {r.returncode}"}
    return read_run(task, definition, run, text)


def read_run(task, definition, run, text):
    try:
        rec = run_export.load(a.khive, run)
    except run_export.Error as e:
        return task.name, {"error": str(e)}
    meta = rec["meta"]
    cands = {c["id"]: c for c in rec["candidates"]}
    tried = len(cands) - 1
    if not meta["reference"] or not meta["leader"]:
        return task.name, {"error": "run cut short before the reference was measured"}
    if tried == 0:
        # The tuner declares no strategy for a task none of its templates binds: the run ends at once.
        return task.name, {"error": "no tuner template for this task" if "strategies exhausted" in text or "no strategy" in text
                           else "no candidate: " + " / ".join(l for l in text.splitlines() if l.startswith("stopped"))}
    ref, lead = cands[meta["reference"]], cands[meta["leader"]]
    w = weights_of(task)
    lead_w = lead["workloads"]
    pt_w = {k: v["median_s"] for k, v in pytorch.get(definition["name"], {}).get("workloads", {}).items() if "median_s" in v}
    common = {k: lead_w[k] for k in lead_w if k in pt_w}
    lead_t_common = geomean(common, w) if common else None
    pt_t = geomean({k: pt_w[k] for k in common}, w) if common else None
    print(f"  {task.name}: leader {meta['leader']}, {ref['time_s'] / lead['time_s']:.2f}x the reference", flush=True)
    score = lead["score"]
    if a.rescore_profile:
        r = subprocess.run([a.khive, "rescore", str(run), "--task", str(task), "--profile", a.rescore_profile, "--json"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            return task.name, {"error": "khive rescore: " + (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1]}
        score = json.loads(r.stdout).get("leader_rescored")
    opts = meta["options"]
    per_task = f", {opts['budget_time_s']:.0f} s per task" if opts.get("budget_time_s") else ""
    made = (f"{opts.get('n_agents', '?')} tuner agents, {opts.get('budget_candidates', '?')} candidates per task{per_task}, "
            f"time cap {opts.get('time_cap_s', '?')} s, seed {meta['seed'] or '?'}"
            + (f", {opts['backups_per_family']} backups per strategy family" if opts.get("backups_per_family", 2) != 2 else ""))
    return task.name, {"made": made, "cut": meta["stop_reason"] is None, "ref": ref["time_s"], "lead": lead["time_s"], "score": score, "improved": meta["leader"] != meta["reference"],
                       "vs_pytorch": (pt_t / lead_t_common) if common else None, "tried": tried,
                       "verdicts": {v: sum(1 for c in cands.values() if c["verdict"] == v) for v in ("leader", "backup", "rejected", "error")}}


with concurrent.futures.ThreadPoolExecutor(max_workers=free_gpus.qsize()) as pool:
    rows = list(pool.map(tune, tasks))   # task order kept

# Collected runs say how they were made (their own options), not this invocation's defaults.
made_with = sorted({d["made"] for _, d in rows if "made" in d})
lines = [f"# The tuner over {suite} ({a.backend})", "",
         (f"Collected {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%dT%H:%MZ} from the runs under {out} (made with: "
          + ("; ".join(made_with) if made_with else "unknown") + "; PyTorch: " if a.collect else
          f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%dT%H:%MZ}; {a.agents} tuner agents, {a.budget} candidates per task"
          f"{f', {a.gpus} tasks at a time (one GPU each)' if a.backend == 'cuda' and a.gpus > 1 else ''}"
          f"{f', {a.budget_time:.0f} s per task' if a.budget_time else ''}, time cap {a.time_cap} s, seed {a.seed}; PyTorch: ") +
         f"{pt_file if pytorch else 'none'}" + (")." if a.collect else ".") +
         (f" Scores recomputed by `khive rescore --profile {a.rescore_profile}` (T_b: PyTorch where the suite has numbers,"
          " else the run's reference)." if a.rescore_profile else ""), "",
         "| task | reference | tuner's leader | vs reference | vs PyTorch (same workloads) | score | leader / backup / rejected / error |",
         "|---|---|---|---|---|---|---|"]
scores, improved, beat_pt, with_pt = [], 0, 0, 0
for name, d in rows:
    if "error" in d:
        lines.append(f"| {name} | | {d['error']} | | | | |")
        continue
    v = d["verdicts"]
    vs_pt = f"{d['vs_pytorch']:.2f}x" if d["vs_pytorch"] else "-"
    if d.get("cut"):
        name += " (run cut short: no stop reason recorded)"
    lines.append(f"| {name} | {d['ref'] * 1e3:.4g} ms | {d['lead'] * 1e3:.4g} ms | {d['ref'] / d['lead']:.2f}x | {vs_pt} | "
                 f"{d['score']:.3f} | {v['leader'] - 1} / {v['backup']} / {v['rejected']} / {v['error']} |" if d["score"] is not None else
                 f"| {name} | {d['ref'] * 1e3:.4g} ms | {d['lead'] * 1e3:.4g} ms | {d['ref'] / d['lead']:.2f}x | {vs_pt} | - | "
                 f"{v['leader'] - 1} / {v['backup']} / {v['rejected']} / {v['error']} |")
    if d["score"] is not None:
        scores.append(d["score"])
    improved += d["improved"]
    if d["vs_pytorch"]:
        with_pt += 1
        beat_pt += d["vs_pytorch"] > 1
ran = sum(1 for _, d in rows if "error" not in d)
lines += ["", f"Tasks tuned: {ran} of {len(rows)}; improved over the reference: {improved} of {ran}; faster than PyTorch: "
          f"{beat_pt} of {with_pt} with PyTorch numbers; mean score: {sum(scores) / len(scores):.3f} over {len(scores)} task(s)."
          if scores else f"Tasks tuned: {ran} of {len(rows)}; improved over the reference: {improved} of {ran}.",
          "", "(leader count excludes the reference, which is the first leader of every run)", "",
          "Command: `" + " ".join([sys.argv[0]] + sys.argv[1:]) + "`"]
md = "\n".join(lines) + "\n"
print(md)
if a.md:
    pathlib.Path(a.md).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(a.md).write_text(md)
