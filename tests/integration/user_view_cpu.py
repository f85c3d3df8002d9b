#!/usr/bin/env python3
"""Issue 17 on the CPU backend, what the user sees:
- item 10: kernels planted to pass on narrow test data (tests/integration/data_kernels: softmax that subtracts a
  constant 100 instead of the row max; GELU from a table clamped to [-8, 8]) are rejected on the demo tasks' data;
- item 5: an LLM agent whose provider cannot be reached ends the run with exit 2, the cause on the console and in
  the summary; an agent whose replies are not UTF-8 keeps working (its candidate is evaluated);
- item 8: a tuner with no applicable template says so (exit 2: no agent can work); a calibration taken while other
  processes load the machine warns.
Usage: user_view_cpu.py KHIVE ROOT"""
import json, os, pathlib, shutil, socket, subprocess, sys, tempfile

from checks import check, finish

khive, root = sys.argv[1], pathlib.Path(sys.argv[2])
tmp = pathlib.Path(tempfile.mkdtemp(prefix="khive-view-it-"))


def run(*args, timeout=900, env=None):
    r = subprocess.run([khive, *map(str, args)], capture_output=True, text=True, timeout=timeout, env=env)
    print(f"$ khive {' '.join(map(str, args))}  -> exit {r.returncode}\n{r.stdout[-2500:]}{r.stderr[-2500:]}")
    return r


# ---- item 10: planted kernels that pass on narrow data are rejected on the tasks' regimes
data = root / "tests/integration/data_kernels"
for task, kernel in [("softmax", "softmax_const_shift.cpp"), ("gelu", "gelu_clamped_table.cpp")]:
    for seed in ("1", "2"):
        r = run("eval", root / "tasks/demo-cpu" / task, data / kernel, "--seed", seed, "--no-reference", "--no-baselines")
        check(r.returncode == 1 and "verdict: REJECTED" in r.stdout, f"{kernel} is rejected on {task}'s data (seed {seed})")
        check("nonfinite" in r.stdout or "wrong" in r.stdout, f"{kernel}: the verdict says what was wrong")

# ---- item 5: an unreachable provider
s = socket.socket()
s.bind(("127.0.0.1", 0))
port = s.getsockname()[1]
s.close()   # nothing listens there now
cfg = tmp / "down.json"
cfg.write_text(json.dumps({"provider": "openai", "base_url": f"http://127.0.0.1:{port}/v1", "model": "m", "name": "down"}))
r = run("optimize", root / "tasks/demo-cpu/vector_add", "--backend", "cpu", "--agent", f"llm:{cfg}", "--out", tmp / "down",
        "--seed", "3", "--time-cap", "0.2")
check(r.returncode == 2, f"a run whose only agent cannot reach its provider exits 2 (got {r.returncode})")
check("stopped: its model provider failed 3 times in a row" in r.stdout and "cannot be reached" in r.stdout,
      "the console says the provider cannot be reached")
check("no agent could work" in r.stderr and f"127.0.0.1:{port}" in r.stderr, "the exit message names the agent and the provider")
check("agent a0 (llm:down-a0) failed: its model provider failed" in r.stdout, "the summary lists the failed agent")
check("all strategies exhausted" not in r.stdout, "the run does not claim its strategies were exhausted")

# ---- item 5: replies that are not UTF-8 (a command provider)
reply = tmp / "reply.txt"
reply.write_bytes(b"NOTE: caf\xe9 version \xff\n```cpp\n"
                  + (root / "tasks/demo-cpu/vector_add/reference.cpp").read_bytes().replace(b"deliberately plain", b"plain \xfe")
                  + b"\n```\n")
r = run("optimize", root / "tasks/demo-cpu/vector_add", "--backend", "cpu", "--agent", f"cmd:cat {reply}", "--out", tmp / "utf8",
        "--seed", "4", "--time-cap", "0.2", "--budget-candidates", "1")
check(r.returncode == 0, f"an agent with non-UTF-8 replies works (exit {r.returncode})")
check("json.exception" not in r.stdout + r.stderr and "invalid UTF-8" not in r.stdout, "no internal JSON error")
check("1 candidate evaluated" in r.stdout, "its candidate was evaluated")
events = (tmp / "utf8/llm/events.jsonl").read_text(encoding="utf-8")
check("that are not UTF-8; they were replaced with U+FFFD" in events, "the agent notes the repaired reply")

# ---- issue 25, item 9: a read-only run directory can still be read (board, export, report --out); report says
# where to write instead. Root reads through any permission, so as root this part runs as nobody (setpriv).
ro = tmp / "ro"
shutil.copytree(tmp / "utf8", ro)
for p in [ro, *ro.rglob("*")]:
    p.chmod(p.stat().st_mode & ~0o222)
tmp.chmod(0o755)
as_user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []
probe = subprocess.run([*as_user, khive, "--version"], capture_output=True, text=True) if (not as_user or shutil.which("setpriv")) else None
if probe is None or probe.returncode != 0:
    print("read-only run directory: not checked (no setpriv, or khive not executable by nobody here)")
else:
    env = dict(os.environ, HOME=str(tmp), KHIVE_CACHE=str(tmp / "ro-cache"))
    (tmp / "ro-cache").mkdir()
    (tmp / "ro-cache").chmod(0o777)
    def ro_run(*args):
        r = subprocess.run([*as_user, khive, *map(str, args)], capture_output=True, text=True, env=env, timeout=300)
        print(f"$ khive {' '.join(map(str, args))} (read-only run)  -> exit {r.returncode}\n{r.stdout[-1500:]}{r.stderr[-1500:]}")
        return r
    r = ro_run("board", ro)
    check(r.returncode == 0 and "unable to open database file" not in r.stderr, "board reads a read-only run")
    r = ro_run("export", ro)
    check(r.returncode == 0 and json.loads(r.stdout).get("candidates"), "export reads a read-only run from its run.db")
    r = ro_run("report", ro)
    check(r.returncode == 2 and "give the report a place with --out FILE" in r.stderr, "report on a read-only run says where to write")
    (tmp / "ro-out").mkdir()
    (tmp / "ro-out").chmod(0o777)
    r = ro_run("report", ro, "--out", tmp / "ro-out" / "r.html")
    check(r.returncode == 0 and (tmp / "ro-out" / "r.html").stat().st_size > 1000, "report --out writes the report elsewhere")
for p in [ro, *ro.rglob("*")]:
    p.chmod(p.stat().st_mode | 0o200)

# ---- item 8: a tuner with nothing to try says so (an op it neither has a binding for nor recognises by itself)
other = tmp / "mysuite" / "blend"
shutil.copytree(root / "tasks/demo-cpu/softmax", other)
d = json.loads((other / "definition.json").read_text())
d["name"], d["op_type"] = "blend", "blend"
(other / "definition.json").write_text(json.dumps(d, indent=1))
r = run("optimize", other, "--backend", "cpu", "--out", tmp / "idle", "--seed", "5")
check(r.returncode == 2, f"a run whose only agent has nothing to try exits 2 (got {r.returncode})")
check("the tuner has no template for this task: op 'blend'" in r.stdout and "no bindings file names task mysuite/blend" in r.stdout,
      "the tuner says it has no template for the task")

# ---- item 8: a calibration on a loaded machine warns
burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(max(2, os.cpu_count() or 2))]
try:
    r = run("calibrate", "--backend", "cpu", "--out", tmp / "busy.json", timeout=600)
finally:
    for b in burners:
        b.kill()
        b.wait()
check(r.returncode == 0, "calibrate works on a busy machine")
check("khive calibrate: warning: the machine was busy while it was measured" in r.stderr, "calibrate warns that the machine was busy")

shutil.rmtree(tmp, ignore_errors=True)
finish("user_view_cpu")
