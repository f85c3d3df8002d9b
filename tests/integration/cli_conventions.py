#!/usr/bin/env python3
"""Issue 17, item 9: the command line's conventions (docs/cli.md), on the CPU backend.
- usage errors exit 2 (not CLI11's 105-109), name the option and what was expected (no 300-digit range), and
  suggest the command or option meant;
- `khive help CMD` and `khive CMD --help` show every option's default; `khive --help` lists the exit codes and
  the environment variables (KHIVE_KERNELS, KHIVE_CUTLASS, KHIVE_JUDGE, KHIVE_EXEC, KHIVE_CUDA_ARCH, ...);
- --arch is checked and reaches the CUDA build command (when nvcc is here);
- input errors exit 2, a rejected kernel 1, an accepted one 0.
Usage: cli_conventions.py KHIVE ROOT"""
import os, pathlib, shutil, subprocess, sys, tempfile

from checks import check, finish

khive, root = sys.argv[1], pathlib.Path(sys.argv[2])
tmp = pathlib.Path(tempfile.mkdtemp(prefix="khive-cli-it-"))


def run(*args, timeout=600):
    r = subprocess.run([khive, *map(str, args)], capture_output=True, text=True, timeout=timeout)
    print(f"$ khive {' '.join(map(str, args))}  -> exit {r.returncode}\n{r.stdout[-1500:]}{r.stderr[-1500:]}")
    return r


softmax = root / "tasks/demo-cpu/softmax"

r = run("optimise", softmax)
check(r.returncode == 2, "an unknown command exits 2")
check("did you mean 'optimize'?" in r.stderr, "an unknown command gets a did-you-mean")
r = run("optimize", softmax, "--budget-candidate", "3")
check(r.returncode == 2 and "did you mean '--budget-candidates'?" in r.stderr, "a misspelt option exits 2 with a did-you-mean")
r = run("optimize", softmax, "--budget-time", "-1")
check(r.returncode == 2 and "--budget-time: expected a number >= 0, got '-1'" in r.stderr, "a negative budget names the option and the rule")
check(len(r.stderr) < 400 and "1797693" not in r.stderr, "no 300-digit range in the error")
r = run("eval", softmax, "k.cpp", "--seeds", "0")
check(r.returncode == 2 and "expected an integer from 1 to 100, got '0'" in r.stderr, "an out-of-range integer names the range")
r = run("eval")
check(r.returncode == 2 and "khive eval" in r.stderr and "--help" in r.stderr, "a missing argument exits 2 and points at the help")
# Issue 25: input errors name the command and point at its help; no raw library text.
for cmd in ("eval", "optimize", "build", "signature"):
    args = (cmd, softmax, "k.cpp") if cmd in ("eval", "build") else (cmd, softmax)
    r = run(*args, "--backend", "tpu")
    check(r.returncode == 2 and "--backend: expected cpu or cuda, got 'tpu'" in r.stderr and f"khive {cmd} --help" in r.stderr,
          f"{cmd} --backend tpu names the option, the values and the help")
r = run("eval", tmp / "no-such-task", "k.cpp", "--backend", "cpu")
check(r.returncode == 2 and r.stderr.startswith("khive eval: ") and "khive eval --help" in r.stderr, "a missing task path names the command")
loop = tmp / "loop"
os.symlink(loop, loop)
r = run("eval", loop, "k.cpp", "--backend", "cpu")
check(r.returncode == 2 and "too many levels of symbolic links" in r.stderr and "filesystem error" not in r.stderr,
      "a link to itself is said plainly")
# A seed outside 0..2^64-1 was read as 2^64-1, silently (issue 25).
for cmd, bad in (("eval", "-1"), ("optimize", "99999999999999999999999"), ("bench", "12abc")):
    args = (cmd, softmax, "k.cpp") if cmd == "eval" else (cmd, softmax)
    r = run(*args, "--seed=" + bad)
    check(r.returncode == 2 and f"--seed: expected a whole number from 0 to 18446744073709551615, got '{bad}'" in r.stderr,
          f"{cmd} --seed {bad} exits 2 naming the range")

r = run("help", "optimize")
check(r.returncode == 0, "khive help CMD exits 0")
for part in ["--seeds INT (1 to 100, default 3)", "--plateau INT (1 to 100000, default 6)", "--max-backups INT (0 to 1000, default 8)",
             "--arch TEXT"]:
    check(part in r.stdout, f"help shows '{part}'")
r2 = run("optimize", "--help")
check(r2.returncode == 0 and r2.stdout == r.stdout, "`khive optimize --help` is the same text")
r = run("help", "cache", "prune")
check(r.returncode == 0 and "--max-gb" in r.stdout, "khive help reaches subcommands of subcommands")
r = run("help", "optimze")
check(r.returncode == 2 and "did you mean 'optimize'?" in r.stderr, "khive help of an unknown command suggests one")
r = run("--help")
check(r.returncode == 0, "khive --help exits 0")
for part in ["Exit codes", "130  interrupted", "3    paused", "KHIVE_KERNELS", "KHIVE_CUTLASS", "KHIVE_JUDGE", "KHIVE_EXEC", "KHIVE_CUDA_ARCH",
             "KHIVE_CACHE_MAX_GB", "KHIVE_PROMPTS"]:
    check(part in r.stdout, f"the top-level help lists '{part}'")

r = run("build", softmax, softmax / "reference.cpp", "--arch", "gpu9000")
check(r.returncode == 2 and "--arch: expected a GPU architecture such as sm_90a" in r.stderr, "a bad --arch exits 2 naming what was expected")
if shutil.which("nvcc"):
    r = run("build", root / "tasks/demo-cpu/vector_add", root / "tasks/demo-cpu/vector_add/reference.cu", "--arch", "sm_80", "--json")
    check("-gencode=arch=compute_80,code=sm_80" in r.stdout, "--arch sm_80 reaches nvcc's command line")
else:
    print("nvcc not here: --arch's effect on the build command is not checked")

bad = tmp / "bad"
shutil.copytree(softmax, bad)
(bad / "definition.json").write_text("{ not json")
r = run("eval", bad, softmax / "reference.cpp")
check(r.returncode == 2 and "definition.json" in r.stderr, "a bad task file exits 2 naming the file")
r = run("eval", softmax, tmp / "missing.cpp")
check(r.returncode == 2 and "no such file" in r.stderr, "a missing kernel exits 2")

shutil.rmtree(tmp, ignore_errors=True)
finish("cli_conventions")
