"""The integration scripts' list of failed checks: check(cond, what) records and prints a failure, finish(name)
prints the tally and exits 1 when anything failed (the scripts run as `python3 tests/integration/X.py`, so this
module is found next to them)."""
import os
import subprocess
import sys

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return bool(cond)


def finish(name):
    print(f"{name}:", "FAIL" if failures else "ok", len(failures))
    sys.exit(1 if failures else 0)


def torch_env(root, modules="torch", keep_path=False):
    """os.environ with PYTHONPATH = the repository's python/ and .deps/torch (then the caller's, with keep_path); exits
    77 (ctest: skipped) when `modules` ("torch", "torch, safetensors") do not import there."""
    path = f"{root}/python:{root}/.deps/torch" + (":" + os.environ.get("PYTHONPATH", "") if keep_path else "")
    env = dict(os.environ, PYTHONPATH=path)
    if subprocess.run([sys.executable, "-c", f"import {modules}"], env=env, capture_output=True).returncode != 0:
        print("skipped: PyTorch is not installed (scripts/setup.sh installs it into .deps/torch)")
        sys.exit(77)
    return env


def run_khive(khive, env, *args, timeout=900, tail=1500):
    """khive ARGS with env, its command line, exit code and output tails printed (the scripts' logs)."""
    r = subprocess.run([khive, *map(str, args)], capture_output=True, text=True, timeout=timeout, env=env)
    print(f"$ khive {' '.join(map(str, args))}  -> exit {r.returncode}\n{r.stdout[-tail:]}{r.stderr[-1500:]}")
    return r
