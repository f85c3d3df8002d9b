#!/usr/bin/env python3
"""Untrusted input runs confined (issue 25, items 1 and 2): khive-jail, the compiler and a task's Python.

  1. khive-jail itself: a Python probe may write its --write folder and nothing else, reads no file outside the
     system's folders and its --read paths, has no network and cannot signal khive; bad flags exit 125, named;
  2. the compiler: a candidate that includes a host file (relative or absolute) or `.incbin`s it gets a build error,
     and not one byte of the file shows in the diagnostics;
  3. a KernelBench problem file whose top-level code and forward() delete a marker file and write beside it: it is
     imported and evaluated (an honest ReLU accepted), and the marker is still there;
  4. controls, so that the checks above can fail: with KHIVE_JAIL=off the same file does delete the marker, and the
     same build does show the host file's text.

  jail_cpu.py KHIVE ROOT
Exit 0, or 1 with the failed checks. Part 3 is skipped (said so) when PyTorch is not installed.
"""
import os
import pathlib
import signal
import subprocess
import sys
import tempfile

khive, root = sys.argv[1], pathlib.Path(sys.argv[2])
jail = pathlib.Path(khive).parent / "khive-jail"
sys.path.insert(0, str(root / "tests/integration"))
from checks import check, finish  # noqa: E402
from problems import kernelbench_relu  # noqa: E402

env = dict(os.environ, PYTHONPATH=f"{root}/python:{root}/.deps/torch")
env.pop("KHIVE_JAIL", None)
has_torch = subprocess.run([sys.executable, "-c", "import torch"], env=env, capture_output=True).returncode == 0


def run(*args, timeout=900, extra_env=None):
    r = subprocess.run([khive, *map(str, args)], capture_output=True, text=True, timeout=timeout, env=dict(env, **(extra_env or {})))
    print(f"$ khive {' '.join(map(str, args))}  -> exit {r.returncode}\n{r.stdout[-1200:]}{r.stderr[-1200:]}")
    return r


with tempfile.TemporaryDirectory(prefix="khive-jail-test-") as t:
    tmp = pathlib.Path(t)
    os.environ["KHIVE_CACHE"] = env["KHIVE_CACHE"] = str(tmp / "cache")
    secret_dir = tmp / "home"
    secret_dir.mkdir()
    secret = secret_dir / "secret.txt"
    secret.write_text("SECRET-4f1c9e\n")

    # ------------------------------------------------------------------------------------------- 1. khive-jail
    scratch = tmp / "scratch"
    scratch.mkdir()
    marker = tmp / "marker"
    marker.write_text("keep me\n")
    probe = tmp / "probe.py"
    probe.write_text(f"""import os, socket, signal
def attempt(name, f):
    try:
        f()
        print(name, "ALLOWED")
    except Exception as e:
        print(name, "denied", type(e).__name__)
attempt("write-scratch", lambda: open({str(scratch / 'x')!r}, "w").write("ok"))
attempt("remove-marker", lambda: os.remove({str(marker)!r}))
attempt("write-beside", lambda: open({str(tmp / 'evil')!r}, "w").write("x"))
attempt("read-secret", lambda: open({str(secret)!r}).read())
attempt("read-shadow", lambda: open("/etc/shadow").read())
attempt("network", lambda: socket.create_connection(("1.1.1.1", 53), timeout=2))
attempt("signal-parent", lambda: os.kill(os.getppid(), 0))
""")
    # The interpreter may live outside the system's folders (pyenv under /root): it is named, as khive names its own.
    r = subprocess.run([str(jail), "--read", str(probe), "--read", sys.prefix, "--read", os.path.realpath(sys.executable),
                        "--write", str(scratch), "--", sys.executable, str(probe)],
                       capture_output=True, text=True, timeout=120)
    print(r.stdout, r.stderr)
    got = dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)
    check(r.returncode == 0, f"the probe runs in khive-jail (exit {r.returncode}: {r.stderr.strip()[-300:]})")
    check(got.get("write-scratch") == "ALLOWED", "the jailed program writes its --write folder")
    for name in ("remove-marker", "write-beside", "read-secret", "read-shadow", "network", "signal-parent"):
        check(got.get(name, "").startswith("denied"), f"khive-jail denies {name}: {got.get(name)}")
    check(marker.exists() and not (tmp / "evil").exists(), "nothing outside the --write folder changed")
    r = subprocess.run([str(jail), "--memory", "lots", "--", "true"], capture_output=True, text=True, timeout=30)
    check(r.returncode == 125 and "--memory" in r.stderr and "expected a number of bytes" in r.stderr, f"a bad flag is named, exit 125: {r.stderr.strip()}")
    r = subprocess.run([str(jail), "--read", "/usr"], capture_output=True, text=True, timeout=30)
    check(r.returncode == 125 and "expected -- and the command" in r.stderr, f"no command is named, exit 125: {r.stderr.strip()}")

    # ------------------------------------------------------------------------------------------- 2. the compiler
    task = root / "tasks" / "demo-cpu" / "vector_add"
    cand_dir = tmp / "cands"
    cand_dir.mkdir()
    rel = os.path.relpath(secret, cand_dir)
    body = 'extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) { for (int64_t i = 0; i < N; ++i) c[i] = a[i] + b[i]; }\n'
    cases = {
        "relative": f'#include "{rel}"\n' + body,
        "absolute": f'#include "{secret}"\n' + body,
        "incbin": f'__asm__(".section .rodata\\n.incbin \\"{secret}\\"\\n.text");\n' + body,
        # khive's own environment (a provider's API key) through the compiler's /proc/self/environ: the compiler gets a
        # toolchain's variables only (builder.cpp, compiler_env)
        "environ": '#include "/proc/self/environ"\n' + body,
    }
    for name, text in cases.items():
        (cand_dir / f"{name}.cpp").write_text(text)
        r = run("build", task, cand_dir / f"{name}.cpp", "--backend", "cpu", extra_env={"KHIVE_TEST_API_KEY": "SECRET-in-env"})
        out = r.stdout + r.stderr
        if name != "environ":  # gcc reads a /proc file by its size, 0: it builds, with nothing in it
            check(r.returncode != 0, f"a candidate that reads a host file ({name}) does not build")
        check("SECRET" not in out, f"the host file's text is not in the build's diagnostics ({name})")
        if name not in ("incbin", "environ"):  # the assembler's message is in the build log; environ is readable, but empty of secrets
            check("Permission denied" in out or "No such file" in out, f"the build says the file could not be read ({name})")
    ok = run("build", task, task / "reference.cpp", "--backend", "cpu")
    check(ok.returncode == 0, "an honest candidate builds in the jail")
    off = run("build", task, cand_dir / "absolute.cpp", "--backend", "cpu", extra_env={"KHIVE_JAIL": "off"})
    check("SECRET" in off.stdout + off.stderr, "control: unconfined (KHIVE_JAIL=off), the compiler does show the file's text")

    # ------------------------------------------------------------------------------ 3. a hostile problem file
    if not has_torch:
        print("part 3 skipped: PyTorch is not installed (scripts/setup.sh installs it into .deps/torch)")
    else:
        src = tmp / "KernelBench" / "level1"
        src.mkdir(parents=True)
        harm = f"""import os

def _harm():
    for f in (lambda: os.remove({str(marker)!r}), lambda: open({str(tmp / 'planted')!r}, "w").write("x")):
        try:
            f()
        except OSError:
            pass

_harm()
"""
        (src / "19_ReLU.py").write_text(kernelbench_relu(prelude=harm, in_forward="_harm()"))
        kb = tmp / "tasks" / "kb"
        r = run("import", "kernelbench", src, "--out", kb)
        relu = kb / "kb1_019_relu"
        check(r.returncode == 0 and relu.is_dir(), "the problem file imports (its top-level code ran, confined)")
        check(marker.exists() and not (tmp / "planted").exists(), "import: the problem file's top-level code changed nothing outside the task")
        sig = run("signature", relu, "--backend", "cpu")
        line = next((l for l in sig.stdout.splitlines() if "khive_launch" in l), "")
        params = line[line.find("(") + 1:line.rfind(")")]
        axes = [a.strip().split()[-1] for a in params.split(",") if "int64_t" in a]
        count = " * ".join(axes) if axes else "16000"
        (tmp / "relu.cpp").write_text(f'extern "C" void khive_launch({params}) {{\n  const int64_t n = {count};\n'
                                      f'  for (int64_t i = 0; i < n; ++i) output[i] = x[i] > 0.f ? x[i] : 0.f;\n}}\n')
        r = run("eval", relu, tmp / "relu.cpp", "--backend", "cpu", "--no-baselines", "--no-pytorch", "--time-cap", "0.1")
        check(r.returncode == 0, "an honest ReLU is accepted: the reference runs in the jail")
        check(marker.exists() and not (tmp / "planted").exists(), "eval: the reference's forward() changed nothing outside")
        r = run("import", "kernelbench", src, "--out", tmp / "tasks" / "kb-off", extra_env={"KHIVE_JAIL": "off"})
        check(not marker.exists(), "control: unconfined (KHIVE_JAIL=off), the same file does delete the marker")

finish("jail_cpu")
