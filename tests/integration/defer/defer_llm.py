#!/usr/bin/env python3
"""Models here, GPU there, end to end on the CPU backend (docs/hive.md): `khive optimize --defer-eval` with an
LLM agent (command provider, canned replies) builds here — a build error is repaired here, after an edit that
does not apply — and pauses with the repaired kernel awaiting evaluation; the whole tree (task and run) is then
moved, as a run directory is carried to the device; `khive evaluate-pending` finds the task relative to the run
and gives the verdicts; `khive optimize --resume` restores the agent's loop, which observes the verdict and
optimizes (pausing again); a second evaluate-pending and a resume without deferral finish the run.
Usage: defer_llm.py KHIVE ROOT"""
import json, os, pathlib, shutil, sqlite3, subprocess, sys, tempfile

khive, root = sys.argv[1], pathlib.Path(sys.argv[2])
tmp = pathlib.Path(tempfile.mkdtemp(prefix="khive-defer-it-"))
here = tmp / "here"
task = here / "tasks" / "vector_add"
shutil.copytree(root / "tasks/demo-cpu/vector_add", task)
run = here / "runs" / "va"
canned = tmp / "canned"
canned.mkdir()
# The kernel line is the reference's (tasks/demo-cpu/vector_add/reference.cpp), so that the optimization edit
# applies to whichever of the two the guard finds faster (the agent optimizes the leader).
loop = "  for (int64_t i = 0; i < N; ++i) c[i] = a[i] + b[i];"
broken = ("// vector_add, first version\n"
          "extern \"C\" void khive_launch(const float* a, const float* b, float* c, int64_t N) {\n"
          + loop[:-1] + "\n}\n")
replies = [
    "NOTE: plain loop\n```cpp\n" + broken + "```\n",
    "NOTE: fix\n<<<<<<< SEARCH\n" + loop[:-1].replace("b[i]", "b[j]") + "\n=======\n" + loop + "\n>>>>>>> REPLACE\n",   # does not apply
    "NOTE: add the missing semicolon\n<<<<<<< SEARCH\n" + loop[:-1] + "\n=======\n" + loop + "\n>>>>>>> REPLACE\n",
    "CLASS: elementwise\nOPTIMIZATION: OpenMP threads + SIMD\nNOTE: split the loop over the cores, vectorized\n"
    "<<<<<<< SEARCH\n" + loop + "\n=======\n#pragma omp parallel for simd schedule(static) if (N > 65536)\n" + loop + "\n>>>>>>> REPLACE\n",
]
for i, r in enumerate(replies, 1):
    (canned / f"{i:02d}.txt").write_text(r)
env = dict(os.environ, CANNED_DIR=str(canned))
agent = f"cmd:sh {root}/tests/integration/llm/canned-model.sh {{prompt_file}}"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def khive_run(*args, cwd=None):
    r = subprocess.run([khive, *map(str, args)], capture_output=True, text=True, timeout=300, env=env, cwd=cwd)
    print(f"$ khive {' '.join(map(str, args))}  -> exit {r.returncode}\n{r.stdout[-2500:]}{r.stderr[-2000:]}")
    return r


def rows(run_dir):
    db = sqlite3.connect(str(run_dir / "run.db"))
    try:
        return {r[0]: r for r in db.execute("SELECT id, verdict, check_name, reason, parent, agent FROM candidates ORDER BY seq")}
    finally:
        db.close()


def events(run_dir):
    return [json.loads(l) for l in (run_dir / "events.jsonl").read_text().splitlines()]


# 1. Here: generate -> build error (a real verdict) -> repair (one edit that does not apply, re-asked) -> builds -> pending.
r = khive_run("optimize", task, "--backend", "cpu", "--defer-eval", "--agent", agent, "--out", run, "--seed", "4242",
              "--time-cap", "0.3", "--quiet")
check(r.returncode == 3, "a paused run exits 3")
check("paused: 2 candidate(s) await GPU evaluation" in r.stdout and "khive evaluate-pending" in r.stdout,
      "the pause says what awaits (the reference and the repaired kernel) and what to run")
c = rows(run)
check(c.get("c0001", (None,) * 4)[1:4] == ("rejected", "build", "build_error"), f"the broken kernel is rejected at build here: {c.get('c0001')}")
check(c.get("c0002", (None,) * 2)[1] == "pending" and c["c0002"][4] == "c0001", f"the repair awaits evaluation: {c.get('c0002')}")
check(c.get("c0000", (None,) * 2)[1] == "pending", "the reference awaits evaluation too")
check((canned / ".next").read_text().strip() == "4", "three model calls (generate, a non-applying edit, the fix)")
check(sum(e["type"] == "pause" for e in events(run)) == 1, "the pause is an event")

# 2. The tree travels (its absolute path changes); there: evaluate-pending finds the task relative to the run.
there = tmp / "there"
here.rename(there)
run = there / "runs" / "va"
r = khive_run("evaluate-pending", run, "--quiet")
check(r.returncode == 0, "evaluate-pending exits 0")
c = rows(run)
check(c["c0000"][1] == "leader" or c["c0002"][1] == "leader", "the reference or the repair leads")
check(c["c0002"][1] in ("leader", "backup"), f"the repaired kernel is accepted: {c['c0002']}")
db = sqlite3.connect(str(run / "run.db"))
n_board = db.execute("SELECT COUNT(*) FROM board").fetchone()[0]
check(n_board == 1, f"evaluate-pending invents no board entries (only the build failure's): {n_board}")
db.close()

# 3. Back here (still deferred): the agent's loop is restored, it observes the verdict, and optimizes.
r = khive_run("optimize", "--resume", run, "--defer-eval", "--quiet")
check(r.returncode == 3, "the resumed run pauses again on its next kernel")
c = rows(run)
check(c.get("c0003", (None,) * 2)[1] == "pending", f"an optimization awaits evaluation: {c.get('c0003')}")
check(c.get("c0003", (None,) * 5)[4] in ("c0002", "c0000"), f"derived from the measured kernel: {c.get('c0003')}")
check("Optimize" in (canned / "prompt-4.md").read_text(), "the fourth model call is an optimization, not a new generation")
ev = events(run)
check(any(e["type"] == "deliver" and e["candidate"] == "c0002" for e in ev), "the agent observed c0002's deferred verdict")
llm_events = [json.loads(l) for l in (run / "llm" / "events.jsonl").read_text().splitlines()] if (run / "llm" / "events.jsonl").exists() else []
check(any("state restored" in e.get("reason", "") for e in llm_events) or not (run / "llm" / "events.jsonl").exists(),
      "the LLM agent says its state was restored")
tdir = next((run / "llm").rglob("0001-generate.reply.txt"), None)
check(tdir is not None and (tdir.parent / "0004-optimize.reply.txt").exists(),
      "transcripts continue their numbering across sessions (0001 kept, 0004 added)")
db = sqlite3.connect(str(run / "run.db"))
posted = [t for (t,) in db.execute("SELECT candidate FROM board")]
db.close()
check("c0002" in posted, f"the agent posted its conclusion on c0002 when it observed it: {posted}")

# 4. There again, then here without deferral: the last verdict is observed and the budget ends the run.
r = khive_run("evaluate-pending", run, "--task", there / "tasks" / "vector_add", "--backend", "cpu", "--quiet")
check(r.returncode == 0, "second evaluate-pending (with --task) exits 0")
r = khive_run("optimize", "--resume", run, "--budget-candidates", "3", "--quiet")
check(r.returncode == 0, "the final resume exits 0")
c = rows(run)
check(all(v[1] != "pending" for v in c.values()), f"nothing left pending: {[(k, v[1]) for k, v in c.items()]}")
check(any(e["type"] == "deliver" and e["candidate"] == "c0003" for e in events(run)), "the agent observed c0003's verdict")
r = khive_run("evaluate-pending", run, "--backend", "cuda")
check(r.returncode == 2 and "cpu backend" in r.stderr, "evaluate-pending refuses another backend, naming the run's")

if failures:
    print(f"{len(failures)} failure(s); kept in {tmp}")
    sys.exit(1)
shutil.rmtree(tmp)
print("ok")
