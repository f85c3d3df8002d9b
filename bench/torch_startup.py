#!/usr/bin/env python3
"""Where a PyTorch executor's start goes: each variant is a fresh interpreter, timed from the parent (fork to exit).

khive-judge starts python/khive_torch/executor.py for every PyTorch run (T_b on the judge's clock, goldens for a task
with no native reference); on the H200 that start cost ~9 s a task (docs/results/2026-12-03-h200/session6). This
separates its parts: the import (cold, then warm page cache), the judge's environment (PYTHONDONTWRITEBYTECODE, a
HOME that does not exist), the CUDA context with the kernel's module loading (EAGER) against PyTorch's default (LAZY),
and khive-jail around it. Each variant runs --repeat times, interleaved; the table shows the median and the range.

  python3 bench/torch_startup.py [--jail build/bin/khive-jail] [--repeat 3] [--out F.md]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

IMPORT = "import torch"
CONTEXT = "import torch; torch.empty(1, device='cuda'); torch.cuda.synchronize()"
MATMUL = ("import torch; a = torch.randn(256, 256, device='cuda', dtype=torch.bfloat16); "
          "(a @ a).sum().item()")


def judge_env(extra):
    # As ExecutorProcess builds it (src/khive/judge/executor_process.cpp), plus the interpreter's PYTHONPATH.
    env = {"PATH": "/usr/bin:/bin", "LANG": "C", "HOME": "/nonexistent", "OMP_PROC_BIND": "false",
           "GOMP_SPINCOUNT": "10000", "CUDA_CACHE_DISABLE": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    for v in ("PYTHONPATH", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES"):
        if v in os.environ:
            env[v] = os.environ[v]
    env.update(extra)
    return env


def read_paths():
    # What khive gives the jailed interpreter (src/khive/interop/python.cpp, python_read_paths).
    out = subprocess.run([sys.executable, "-c", "import os, sys\nfor x in [sys.executable, sys.prefix, sys.exec_prefix] + sys.path:\n"
                          "    if x and os.path.exists(x): print(x); print(os.path.realpath(x))"],
                         capture_output=True, text=True, check=True).stdout.split()
    return sorted(set(out))


def variants(jail):
    # The judge's environment first: it writes no .pyc (PYTHONDONTWRITEBYTECODE), so if torch's install has none, its
    # first run shows what every judge pays; the next variant (own env) may write them for the later runs.
    v = [("import, judge env", IMPORT, {}, []),
         ("import, own env", IMPORT, None, []),
         ("import + context, judge env, EAGER", CONTEXT, {"CUDA_MODULE_LOADING": "EAGER"}, []),
         ("import + context, judge env, LAZY", CONTEXT, {"CUDA_MODULE_LOADING": "LAZY"}, []),
         ("import + context + bf16 matmul, LAZY", MATMUL, {"CUDA_MODULE_LOADING": "LAZY"}, [])]
    if jail:
        pre = [jail] + sum((["--read", p] for p in read_paths()), []) + ["--cuda", "--"]
        v += [("import + context, khive-jail, EAGER", CONTEXT, {"CUDA_MODULE_LOADING": "EAGER"}, pre),
              ("import + context, khive-jail, LAZY", CONTEXT, {"CUDA_MODULE_LOADING": "LAZY"}, pre)]
    return v


def bytecode_census():
    """torch's .py files and the compiled .pyc beside them (for this interpreter's tag), and whether the folder is
    writable: with no .pyc and PYTHONDONTWRITEBYTECODE set, every import compiles every module again."""
    r = subprocess.run([sys.executable, "-c", "import importlib.util, sys; s = importlib.util.find_spec('torch'); "
                        "print(s.submodule_search_locations[0]); print(sys.implementation.cache_tag)"],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        return "torch not found"
    root, tag = r.stdout.split()
    py = pyc = 0
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith(".py"):
                py += 1
            elif f.endswith(f".{tag}.pyc"):
                pyc += 1
    return f"{root}: {py} .py files, {pyc} .pyc ({tag}); writable: {os.access(root, os.W_OK)}"


def run_once(code, env, prefix):
    t0 = time.perf_counter()
    r = subprocess.run(prefix + [sys.executable, "-c", code], env=os.environ.copy() if env is None else judge_env(env),
                       capture_output=True, text=True, timeout=300)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        return None, (r.stderr or r.stdout).strip().splitlines()[-1:]
    return dt, None


def importtime_top(n=12):
    # -X importtime: each module's cumulative microseconds; the slowest top-level packages under torch.
    r = subprocess.run([sys.executable, "-X", "importtime", "-c", IMPORT], capture_output=True, text=True, timeout=300,
                       env=judge_env({}))
    rows = []
    for line in r.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        parts = [p.strip() for p in line[len("import time:"):].split("|")]
        if len(parts) == 3 and parts[1].isdigit():
            rows.append((int(parts[1]), parts[2]))
    rows.sort(reverse=True)
    return rows[:n]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jail", help="khive-jail's path: also time the variants inside it")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", help="also write the markdown here")
    a = ap.parse_args()
    census = bytecode_census()
    vs = variants(a.jail)
    times = {name: [] for name, *_ in vs}
    errors = {}
    first = {}
    for rep in range(a.repeat):
        for name, code, env, prefix in vs:
            dt, err = run_once(code, env, prefix)
            if err:
                errors[name] = err
            else:
                times[name].append(dt)
                first.setdefault(name, (rep, dt))
    lines = [f"python {sys.version.split()[0]}, {a.repeat} runs per variant, interleaved; seconds from fork to exit", "",
             f"Before the runs: {census}; after: {bytecode_census()}", "",
             "| variant | median | min | max | first run |", "|---|---|---|---|---|"]
    for name, *_ in vs:
        t = times[name]
        if not t:
            lines.append(f"| {name} | failed: {' '.join(errors.get(name, []))[:120]} | | | |")
            continue
        lines.append(f"| {name} | {statistics.median(t):.2f} s | {min(t):.2f} s | {max(t):.2f} s | {first[name][1]:.2f} s |")
    lines += ["", "Slowest imports (cumulative, -X importtime, judge env):", "", "| module | cumulative |", "|---|---|"]
    lines += [f"| {m} | {us / 1e6:.2f} s |" for us, m in importtime_top()]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
