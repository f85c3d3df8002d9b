#!/usr/bin/env python3
"""`khive optimize --replay RECORDING` (hive/recorded_evaluator.hpp), on this machine with no GPU: the tuner's search
over an H200 run's recorded verdicts, as a user runs it.
- every curated recording replays (exit 0) into an ordinary run directory (run.db, events.jsonl, best.cu, report)
  whose leader is a recorded candidate, with the recorded run's seed and options, and says how many candidates the
  recording answered and how many it did not;
- with one agent, the same replay twice gives the same candidates and verdicts (the search is deterministic on a
  recording; several agents race on their threads);
- bad input exits 2 naming what was wrong: a missing or malformed recording, --backend other than the recording's,
  --resume with --replay, a TASK that is not the recording's.
Usage: optimize_replay.py KHIVE ROOT"""
import json, pathlib, sqlite3, subprocess, sys, tempfile

from checks import check, finish

khive, root = sys.argv[1], pathlib.Path(sys.argv[2])
tmp = pathlib.Path(tempfile.mkdtemp(prefix="khive-replay-it-"))


def run(*args, cwd=root):
    r = subprocess.run([khive, *map(str, args)], capture_output=True, text=True, timeout=300, cwd=cwd)
    print(f"$ khive {' '.join(map(str, args))}  -> exit {r.returncode}\n{r.stdout[-1200:]}{r.stderr[-800:]}")
    return r


def candidates(run_dir):
    db = sqlite3.connect(run_dir / "run.db")
    rows = db.execute("SELECT id, verdict FROM candidates ORDER BY id").fetchall()
    db.close()
    return rows


recs = sorted((root / "tests/recordings").glob("h200-*.json"))
check(len(recs) >= 3, f"the curated recordings are there ({len(recs)})")
for rec in recs:
    data = json.loads(rec.read_text())
    out = tmp / rec.stem
    r = run("optimize", "--replay", rec, "--quiet", "--out", out)
    check(r.returncode == 0, f"{rec.name}: the replay exits 0")
    for f in ("run.db", "events.jsonl", "best.cu", "report.html"):
        check((out / f).is_file(), f"{rec.name}: the run directory holds {f}")
    check(f"seed {data['run']['seed']}" in r.stdout, f"{rec.name}: the recorded run's seed is used")
    check(f"{data['run']['agents']} agent(s)" in r.stdout, f"{rec.name}: the recorded run's agents are used")
    check("replay: " in r.stdout and "answered from the recording" in r.stdout, f"{rec.name}: the replay counts what it answered")
    meta = json.loads((out / "events.jsonl").read_text().splitlines()[0])
    check("replay" in json.dumps(meta), f"{rec.name}: the run's meta names the recording")
    leader = [line for line in r.stdout.splitlines() if line.startswith("leader ")]
    check(len(leader) == 1, f"{rec.name}: one leader")
    # One agent is deterministic: two replays propose the same candidates with the same verdicts (with several, the
    # agents' threads race to the instant answers and the order varies).
    one = [run("optimize", "--replay", rec, "--agents", "1", "--quiet", "--out", tmp / f"{rec.stem}-one{i}") for i in (1, 2)]
    check(all(x.returncode == 0 for x in one) and candidates(tmp / f"{rec.stem}-one1") == candidates(tmp / f"{rec.stem}-one2"),
          f"{rec.name}: two one-agent replays give the same candidates and verdicts")
    check(len(candidates(tmp / f"{rec.stem}-one1")) >= 3, f"{rec.name}: the one-agent replay evaluated candidates")

softmax = root / "tests/recordings/h200-softmax-dispatch.json"
r = run("optimize", "--replay", tmp / "missing.json")
check(r.returncode == 2 and "--replay" in r.stderr, "a missing recording exits 2 naming --replay")
bad = tmp / "bad.json"
bad.write_text('{"schema": "khive.recording/1", "task": 3}')
r = run("optimize", "--replay", bad)
check(r.returncode == 2 and "bad.json" in r.stderr, "a malformed recording exits 2 naming the file")
r = run("optimize", "--replay", softmax, "--backend", "cpu")
check(r.returncode == 2 and "was made on cuda" in r.stderr, "--backend other than the recording's exits 2")
r = run("optimize", "--replay", softmax, "--resume", tmp / "h200-softmax-dispatch")
check(r.returncode == 2 and "--resume" in r.stderr, "--replay with --resume exits 2")
r = run("optimize", "--replay", softmax, "--perf-workloads", "R1-")
check(r.returncode == 2 and "--perf-workloads" in r.stderr, "--perf-workloads other than the recording's exits 2")
r = run("optimize", root / "tasks/sol/rmsnorm", "--replay", softmax)
check(r.returncode == 2 and "not the recording's task" in r.stderr, "a TASK that is not the recording's exits 2")

finish("optimize_replay")
