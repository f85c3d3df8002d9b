#!/usr/bin/env python3
"""The PyTorch reference as the guard's golden source, on the CPU (issue 14): tasks whose only reference is the
definition's `reference` go through the real judge, which runs it in `python3 -m khive_torch.executor`.

  1. tasks/demo-cpu/vector_add with its native references removed: an honest kernel is accepted, a wrong one is
     rejected at the correctness check; the goldens the PyTorch reference made from the judge's inputs equal, bit for
     bit, those the native reference makes (a + b is correctly rounded), in a golden set of their own; a second
     evaluation with the same seed reuses them;
  2. a task with a scalar input and a bf16 output, written here (scalars decoded as their dtype, outputs converted);
  3. a KernelBench problem imported with `khive import kernelbench`: `khive eval` accepts an honest ReLU, rejects a wrong
     one (|x|), and `khive optimize` runs (the tuner binds the activation by itself; the first accepted kernel leads);
  4. what is missing is said: a task with no reference at all, and an interpreter without torch.

  pytorch_reference_cpu.py KHIVE ROOT
Exit 0, or 77 (skipped) when PyTorch is not installed (scripts/setup.sh installs it into .deps/torch).
"""
import json
import re
import pathlib
import shutil
import subprocess
import sys
import tempfile

khive, root = sys.argv[1], pathlib.Path(sys.argv[2])
sys.path.insert(0, str(root / "tests/integration"))
from checks import check, finish, run_khive, torch_env  # noqa: E402
from problems import kernelbench_relu  # noqa: E402

env = torch_env(root)


def run(*args, timeout=900, **kw):
    return run_khive(khive, kw.get("env", env), *args, timeout=timeout)


def evaluate(task, kernel, *extra, **kw):
    r = run("eval", task, kernel, "--backend", "cpu", "--no-baselines", "--no-pytorch", "--time-cap", "0.1", "--json", *extra, **kw)
    try:
        return r, json.loads(r.stdout)
    except ValueError:
        return r, {}


def goldens(cache, unit_suffix):
    """Golden files of the golden sets whose unit folder ends with unit_suffix, by workload/name."""
    out = {}
    for p in (pathlib.Path(cache) / "goldens").rglob("*.bin"):
        unit = p.parent.parent
        if unit.name.endswith(unit_suffix):
            out[f"{p.parent.name}/{p.name}"] = p
    return out


WRONG_ADD = """extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  for (int64_t i = 0; i < N; ++i) c[i] = a[i] + b[i] * 1.001f;   // 0.1 % off
}
"""

with tempfile.TemporaryDirectory(prefix="khive-pytorch-ref-") as tmp_s:
    tmp = pathlib.Path(tmp_s)
    cache = tmp / "cache"
    env["KHIVE_CACHE"] = str(cache)

    # ------------------------------------------------------------------------------ 1. vector_add, PyTorch only
    native = root / "tasks/demo-cpu/vector_add"
    task = tmp / "demo-cpu" / "vector_add"   # the suite's name keeps the tuner's binding for vector_add
    shutil.copytree(native, task, ignore=shutil.ignore_patterns("candidates", "reference.c*"))
    d = json.loads((task / "definition.json").read_text())
    del d["khive"]["reference"]
    (task / "definition.json").write_text(json.dumps(d, indent=2))
    honest = native / "candidates" / "blocked_unrolled.cpp"
    wrong = tmp / "wrong_add.cpp"
    wrong.write_text(WRONG_ADD)

    r, j = evaluate(task, honest, "--seed", "11", "--no-reference")
    check(r.returncode == 0 and j.get("accepted"), f"an honest kernel is accepted against the PyTorch reference's goldens: {j.get('harness_error')}")
    ref_box = j.get("preflight", {}).get("sandbox", {}).get("reference", {})
    check("khive_torch.executor" in ref_box.get("process", ""), f"the reference ran in the Python executor: {ref_box}")
    check(ref_box.get("jail") == "khive-jail" and ref_box.get("netns") == "on" and ref_box.get("landlock", "").startswith("abi"),
          f"the reference ran confined by khive-jail (issue 25): {ref_box}")
    check(ref_box.get("torch"), "its sandbox report names the torch version")
    r, j = evaluate(task, wrong, "--seed", "11")
    v = j.get("verdict") or {}
    check(r.returncode == 1 and v.get("check_name") == "correctness" and v.get("reason") == "wrong_output",
          f"a wrong kernel is rejected at the correctness check: {v}")
    py = goldens(cache, "")
    py = {k: p for k, p in py.items() if "-pytorch-" in p.parent.parent.name}
    check(len(py) > 0, "the PyTorch goldens are a golden set of their own (<backend>-pytorch-<torch version>)")
    stamps = {k: (p.stat().st_ino, p.stat().st_mtime_ns) for k, p in py.items()}
    r, j = evaluate(task, honest, "--seed", "11", "--no-reference")
    check(r.returncode == 0 and j.get("accepted"), "accepted again")
    again = {k: p for k, p in goldens(cache, "").items() if "-pytorch-" in p.parent.parent.name}
    check(all(k in again and (again[k].stat().st_ino, again[k].stat().st_mtime_ns) == stamps[k] for k in stamps),
          "a second evaluation with the same seed reuses the PyTorch goldens (none made again)")
    # The native reference on the same seed: its goldens are the same bytes (the Python side read exactly the judge's inputs).
    r, j = evaluate(native, honest, "--seed", "11", "--no-reference")
    check(r.returncode == 0, "the native task is accepted too")
    nat = {k: p for k, p in goldens(cache, "cpu").items()}
    # The correctness sets: labels seed_base + small (timed and warm-up labels are 64-bit), then the secret's fingerprint.
    common = [k for k in py if k in nat and re.fullmatch(r"s\d{1,10}-[0-9a-f]{16}", k.split("/")[1].split(".")[0])]
    check(len(common) >= 3, f"both golden sets hold the correctness goldens: {len(common)} in common")
    same = [k for k in common if nat[k].read_bytes() == py[k].read_bytes()]
    check(len(same) == len(common), f"PyTorch goldens equal the native reference's bit for bit: {len(same)} of {len(common)}")

    # ------------------------------------------------------------------------ 2. a scalar input, a bf16 output
    st = tmp / "scale_sum"
    st.mkdir()
    (st / "definition.json").write_text(json.dumps({
        "name": "scale_sum", "op_type": "reduction",
        "axes": {"M": {"type": "var"}, "N": {"type": "const", "value": 16}},
        "inputs": {"x": {"shape": ["M", "N"], "dtype": "float32"}, "alpha": {"shape": None, "dtype": "float32"}},
        "outputs": {"y": {"shape": ["M", "N"], "dtype": "float32"}, "s": {"shape": ["M"], "dtype": "bfloat16"}},
        "reference": "import torch\n\ndef run(x, alpha):\n    y = x * alpha\n    return y, y.double().sum(1).to(torch.bfloat16)\n",
        "khive": {"cost": {"flops": "2 * M * N", "bytes": "8 * M * N", "unit": "fp32"},
                  "tolerance": {"y": {"atol": 1e-6, "rtol": 1e-6}, "s": {"atol": 1e-2, "rtol": 1e-2}}}}))
    (st / "workload.jsonl").write_text(
        json.dumps({"uuid": "m7", "axes": {"M": 7}, "inputs": {"alpha": {"type": "scalar", "value": 1.5}}, "khive": {"role": "both"}}) + "\n")
    sig = run("signature", st, "--backend", "cpu")
    check(sig.returncode == 0 and "float alpha" in sig.stdout, f"the signature takes alpha by value: {sig.stdout[-300:]}")
    kern = tmp / "scale_sum.cpp"
    kern.write_text("""#include <cstring>
static khive_bf16 to_bf16(float f) {   // round to nearest even
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);
  khive_bf16 r;
  uint16_t h = static_cast<uint16_t>(u >> 16);
  std::memcpy(&r, &h, 2);
  return r;
}
extern "C" void khive_launch(const float* x, float alpha, float* y, khive_bf16* s, int64_t M) {
  for (int64_t i = 0; i < M; ++i) {
    double acc = 0;
    for (int64_t j = 0; j < 16; ++j) {
      y[i * 16 + j] = x[i * 16 + j] * alpha;
      acc += y[i * 16 + j];
    }
    s[i] = to_bf16(static_cast<float>(acc));
  }
}
""")
    r, j = evaluate(st, kern)
    check(r.returncode == 0 and j.get("accepted"), f"scalar and bf16 through the PyTorch reference: {j.get('verdict')} {j.get('harness_error')}")

    # -------------------------------------------------------------------------------- 3. a KernelBench problem
    src = tmp / "KernelBench" / "level1"
    src.mkdir(parents=True)
    (src / "19_ReLU.py").write_text(kernelbench_relu())
    kb = tmp / "tasks" / "kb"
    r = run("import", "kernelbench", src, "--out", kb)
    relu = kb / "kb1_019_relu"
    check(r.returncode == 0 and relu.is_dir(), "the KernelBench problem imports")
    sig = run("signature", relu, "--backend", "cpu")
    line = next((l for l in sig.stdout.splitlines() if "khive_launch" in l), "")
    check("const float* x" in line and "float* output" in line, f"the imported task's entry: {line}")
    axes = [a.strip().split()[-1].rstrip(")") for a in line.split("(", 1)[1].split(",") if "int64_t" in a] if line else []
    params = ", ".join(["const float* x", "float* output"] + [f"int64_t {a}" for a in axes])
    count = " * ".join(axes) if axes else "1"
    if "dim" not in axes:
        count += " * 1000"
    body = lambda expr: f'extern "C" void khive_launch({params}) {{\n  const int64_t n = {count};\n' \
                        f'  for (int64_t i = 0; i < n; ++i) output[i] = {expr};\n}}\n'
    (tmp / "relu.cpp").write_text(body("x[i] > 0.f ? x[i] : 0.f"))
    # An absolute value instead of a ReLU: every negative input is wrong by |x| (a leaky ReLU's 0.01x is inside the
    # imported task's atol 1e-2 for most inputs, so that would be caught only by chance, later).
    (tmp / "abs.cpp").write_text(body("x[i] > 0.f ? x[i] : -x[i]"))
    r, j = evaluate(relu, tmp / "relu.cpp")
    check(r.returncode == 0 and j.get("accepted"), f"an honest ReLU is accepted on the imported task: {j.get('verdict')} {j.get('harness_error')}")
    r, j = evaluate(relu, tmp / "abs.cpp")
    check(r.returncode == 1 and (j.get("verdict") or {}).get("check_name") == "correctness", f"an absolute value is rejected at the correctness check: {j.get('verdict')}")
    run_dir = tmp / "run"
    r = run("optimize", relu, "--backend", "cpu", "--agent", "tuner", "--agents", "1", "--budget-candidates", "2", "--time-cap", "0.1",
            "--seed", "3", "--out", run_dir, timeout=1500)
    check(r.returncode == 0, f"khive optimize runs on a task with only a PyTorch reference (exit {r.returncode})")
    check("goldens: the task's PyTorch reference" in r.stdout, "optimize says where the goldens come from")
    check((run_dir / "best.cpp").is_file(), "the first accepted candidate is the leader (best.cpp written)")
    check("stale profile" not in r.stdout and "T_b: pytorch" in r.stdout,
          "with no reference kernel, the scores are against the PyTorch reference timed by the judge (not a stale profile)")

    # ---------------------------------------------------------------------------------- 4. what is missing
    bare = tmp / "bare"
    shutil.copytree(task, bare)
    d = json.loads((bare / "definition.json").read_text())
    d["reference"] = ""
    (bare / "definition.json").write_text(json.dumps(d))
    r = run("optimize", bare, "--backend", "cpu", "--budget-candidates", "1", "--out", tmp / "run-bare")
    check(r.returncode == 2 and "no PyTorch reference" in r.stderr, "optimize: neither reference is a clear error (exit 2)")
    r, j = evaluate(bare, honest)
    check(r.returncode == 2 and "no PyTorch reference" in j.get("harness_error", ""), f"eval: the same: {j.get('harness_error')}")
    # A reference that raises: no candidate can be judged, and the run says so with exit 2 (issue 24: a run that
    # judged nothing ended with exit 0 and no leader).
    broken = tmp / "broken" / "demo-cpu" / "vector_add"   # the suite's name keeps the tuner's binding
    shutil.copytree(task, broken)
    d = json.loads((broken / "definition.json").read_text())
    d["reference"] = "import torch\n\n\ndef run(a, b):\n    raise RuntimeError('broken reference')\n"
    (broken / "definition.json").write_text(json.dumps(d))
    r = run("optimize", broken, "--backend", "cpu", "--budget-candidates", "1", "--out", tmp / "run-broken", "--seed", "3")
    check(r.returncode == 2 and "nothing could be evaluated" in r.stderr and "broken reference" in r.stderr,
          f"optimize that judged nothing exits 2 and says why (exit {r.returncode})")
    # An interpreter without torch: khive's repository root without .deps (KHIVE_SOURCE_DIR), a python3 without torch.
    fake = tmp / "src"
    fake.mkdir()
    (fake / "python").symlink_to(root / "python")
    bare_env = dict(env, KHIVE_SOURCE_DIR=str(fake), PYTHONPATH="")
    no_torch = subprocess.run(["python3", "-c", "import torch"], env=dict(bare_env, PYTHONPATH=str(fake / "python")), capture_output=True)
    if no_torch.returncode != 0:
        r, j = evaluate(task, honest, env=bare_env)
        check(r.returncode == 2 and "PyTorch is not usable" in j.get("harness_error", "") and "scripts/setup.sh" in j.get("harness_error", ""),
              f"eval without torch names what to install: {j.get('harness_error')}")
        r = run("optimize", task, "--backend", "cpu", "--budget-candidates", "1", "--out", tmp / "run-notorch", env=bare_env)
        check(r.returncode == 2 and "scripts/setup.sh" in r.stderr, "optimize without torch names what to install (exit 2)")
    else:
        print("note: python3 here has torch of its own; the missing-torch case is not exercised")

finish("pytorch_reference_cpu")
