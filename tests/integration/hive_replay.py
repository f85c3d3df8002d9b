#!/usr/bin/env python3
"""A real `khive optimize` on tasks/demo-cpu/softmax with two replay agents over the task's honest candidates
plus planted kernels (tests/integration/hive/softmax: one that does not build, one that overflows, one correct
but slow). Asserts: the leader is the fastest correct kernel (or, where check 11's A/B could not separate the two
fast ones, the other fast one with the summary's note) and best.cpp is its source; broken kernels are
rejected at the right check; every candidate is in run.db and events.jsonl; `khive board` and `khive report`
work; `--resume` re-evaluates nothing. Usage: hive_replay.py KHIVE ROOT"""
import json, pathlib, re, shutil, sqlite3, subprocess, sys, tempfile

khive, root = sys.argv[1], pathlib.Path(sys.argv[2])
task = root / "tasks/demo-cpu/softmax"
tmp = pathlib.Path(tempfile.mkdtemp(prefix="khive-hive-it-"))
replay = tmp / "replay"
replay.mkdir()
for src in list((task / "candidates").glob("*.cpp")) + list((root / "tests/integration/hive/softmax").glob("*.cpp")):
    shutil.copy(src, replay / src.name)
run = tmp / "run"
from checks import check, failures  # noqa: E402


def khive_run(*args):
    r = subprocess.run([khive, *args], capture_output=True, text=True, timeout=600)
    print(f"$ khive {' '.join(map(str, args))}  -> exit {r.returncode}\n{r.stdout[-3000:]}{r.stderr[-2000:]}")
    return r


r = khive_run("optimize", str(task), "--backend", "cpu", "--agent", f"replay:{replay}", "--agents", "2", "--out", str(run),
              "--seed", "1234", "--time-cap", "1.0")
check(r.returncode == 0, "khive optimize exits 0")
db = sqlite3.connect(str(run / "run.db"))
rows = db.execute("SELECT id, label, verdict, check_name, reason, time_s FROM candidates ORDER BY seq").fetchall()
by_label = {row[1]: row for row in rows}
meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
expected = sorted(p.stem for p in replay.glob("*.cpp"))
check(sorted(l for l in by_label if l != "reference") == expected, f"every replayed kernel evaluated once: {sorted(by_label)}")
check(by_label.get("broken_syntax", [None] * 6)[2:5] == ("rejected", "build", "build_error"), f"broken_syntax rejected at build: {by_label.get('broken_syntax')}")
# Its overflow shows on whichever correctness-phase call first draws a large enough input (the data are keyed by the
# run's secret): check 5, or check 7's new data at the same addresses.
check(by_label.get("broken_no_max", [None] * 6)[2] == "rejected" and by_label["broken_no_max"][3] in ("correctness", "anti-caching", "run"),
      f"broken_no_max rejected: {by_label.get('broken_no_max')}")
accepted = [row for row in rows if row[2] in ("leader", "backup")]
fastest = min(accepted, key=lambda row: row[5])
leader = [row for row in rows if row[0] == meta.get("leader")]
# The leader is chosen by check 11's interleaved A/B, not by own-run medians: where the fastest by its own run is
# not the leader, the two must be close (online and two_pass are ~10 % apart; everything else is 2x slower) and the
# summary must say why the faster-looking kernel is not the leader.
if len(leader) == 1 and leader[0][0] != fastest[0]:
    print(f"note: the fastest own run {fastest[:2]} is not the leader {leader[0][:2]}; check 11 could not separate them")
    check(leader[0][5] <= 1.25 * fastest[5] and re.search(r"note: c\d{4} \((online|two_pass)\) has a higher task score than the leader", r.stdout),
          f"the leader {leader[0][:2]} ({leader[0][5]*1e3:.3f} ms) is within 25 % of the fastest correct kernel {fastest[:2]} "
          f"({fastest[5]*1e3:.3f} ms) and the summary notes the faster one")
check(len(leader) == 1 and leader[0][1] in ("online", "two_pass") and (leader[0][0] == fastest[0] or fastest[1] in ("online", "two_pass")),
      f"the leader {meta.get('leader')} is one of the two fast kernels and the fastest correct kernel {fastest[:2]} ({fastest[5]*1e3:.3f} ms) is too")
check(by_label.get("slow_serial", [None] * 6)[2] in ("backup", "leader") and meta.get("leader") != by_label.get("slow_serial", [None])[0],
      "the slow correct kernel is kept as a backup, not the leader")
if leader:
    check((run / "best.cpp").read_text() == (replay / f"{leader[0][1]}.cpp").read_text() if leader[0][1] != "reference" else True,
          "best.cpp is the leader's source")
# One source of truth for faster/slower (issue 17): every accepted verdict line gives its own-run median and its
# comparison with the leader of its time (check 11's A/B), never a median beside an A/B percentage.
accepted_lines = [l for l in r.stdout.splitlines() if re.search(r" (leader|backup) +own run ", l)]
check(len(accepted_lines) == len(accepted), f"one verdict line per accepted kernel: {len(accepted_lines)} vs {len(accepted)}")
for l in accepted_lines:
    check("the first leader" in l or re.search(r"; (A/B|own-run medians) vs c\d{4}: [+-]\d", l), f"the line words its comparison: {l}")
check(not re.search(r"ms +[+-][0-9.]+% vs leader", r.stdout), "no median set beside an A/B percentage")
if meta.get("leader") != "c0000":
    check("it took the lead by " in r.stdout, "the summary says how the leader took the lead")
check("leader (check 11)" in (run / "report.html").read_text(), "report.html charts the leader chosen by check 11")
events = [json.loads(l) for l in (run / "events.jsonl").read_text().splitlines()]
check(sum(e["type"] == "candidate" for e in events) == len(rows), "one candidate event per recorded candidate")
check(events[-1]["type"] == "end", "the event log ends with the end event")
check((run / "report.html").exists() and "<svg" in (run / "report.html").read_text(), "report.html with inline SVG")

b = khive_run("board", str(run))
check(b.returncode == 0 and "broken_syntax" in b.stdout, "khive board prints the conclusions")
(run / "report.html").unlink()
rep = khive_run("report", str(run))
check(rep.returncode == 0 and (run / "report.html").exists(), "khive report rebuilds report.html")

n_before = len(rows)
res = khive_run("optimize", "--resume", str(run), "--quiet")
check(res.returncode == 0, "resume exits 0")
n_after = db.execute("SELECT COUNT(*) FROM candidates").fetchone()[0]
events = [json.loads(l) for l in (run / "events.jsonl").read_text().splitlines()]
check(n_after == n_before, f"resume evaluated nothing again ({n_before} -> {n_after} candidates)")
check(sum(e["type"] == "reuse" for e in events) == len(expected), "resume reused every recorded verdict")

if failures:
    print(f"{len(failures)} failure(s); run kept in {run}")
    sys.exit(1)
shutil.rmtree(tmp)
print("ok")
