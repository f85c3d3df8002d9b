#!/usr/bin/env python3
"""A task whose only reference is PyTorch, on the GPU: its reference runs in khive-jail with the CUDA driver (issue 25).

  1. `khive import kernelbench` of KernelBench's ReLU (tests/integration/problems.py);
  2. `khive eval --backend cuda` of an honest CUDA ReLU written to the task's signature: accepted, the goldens made by
     the PyTorch reference on the GPU, and the preflight says the reference ran confined (jail, netns, Landlock);
  3. an absolute value instead of a ReLU: rejected at the correctness check;
  4. a build in the jail: the honest kernel's build log has no "khive-jail: ... off" line.

  pytorch_reference_cuda.py KHIVE ROOT
Exit 0, 1 with the failed checks, 77 (skipped) without a GPU or without PyTorch.
"""
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile

khive, root = sys.argv[1], pathlib.Path(sys.argv[2])
sys.path.insert(0, str(root / "tests/integration"))
from checks import check, finish, run_khive, torch_env  # noqa: E402
from problems import kernelbench_relu  # noqa: E402

if not shutil.which("nvidia-smi") or subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode != 0:
    print("skipped: no GPU")
    sys.exit(77)
env = torch_env(root, keep_path=True)


def run(*args, timeout=900):
    return run_khive(khive, env, *args, timeout=timeout)


with tempfile.TemporaryDirectory(prefix="khive-ptref-cuda-") as t:
    tmp = pathlib.Path(t)
    src = tmp / "KernelBench" / "level1"
    src.mkdir(parents=True)
    (src / "19_ReLU.py").write_text(kernelbench_relu(batch_size=64, dim=4096))
    kb = tmp / "tasks"
    r = run("import", "kernelbench", src, "--out", kb)
    relu = kb / "kb1_019_relu"
    check(r.returncode == 0 and relu.is_dir(), "the KernelBench problem imports")
    sig = run("signature", relu, "--backend", "cuda").stdout
    line = next((l for l in sig.splitlines() if "khive_launch" in l), "")
    params = line[line.find("(") + 1:line.rfind(")")]
    axes = [a.strip().split()[-1] for a in params.split(",") if "int64_t" in a]
    count = " * ".join(axes) if axes else "1"

    def kernel(expr):
        return (f"__global__ void k(const float* x, float* output, int64_t n) {{\n"
                f"  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n"
                f"  if (i < n) output[i] = {expr};\n}}\n"
                f'extern "C" void khive_launch({params}) {{\n'
                f"  const int64_t n = {count};\n"
                f"  if (n > 0) k<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(x, output, n);\n}}\n")

    (tmp / "relu.cu").write_text(kernel("x[i] > 0.f ? x[i] : 0.f"))
    (tmp / "abs.cu").write_text(kernel("fabsf(x[i])"))
    r = run("eval", relu, tmp / "relu.cu", "--backend", "cuda", "--no-baselines", "--no-pytorch", "--json")
    try:
        j = json.loads(r.stdout)
    except ValueError:
        j = {}
    check(r.returncode == 0 and j.get("accepted"), f"an honest ReLU is accepted against the PyTorch reference's goldens on the GPU: "
          f"{j.get('verdict')} {j.get('harness_error')}")
    box = j.get("preflight", {}).get("sandbox", {}).get("reference", {})
    check(box.get("jail") == "khive-jail" and box.get("netns") == "on" and str(box.get("landlock", "")).startswith("abi"),
          f"the PyTorch reference ran in khive-jail with the CUDA driver: {box}")
    b = run("build", relu, tmp / "relu.cu", "--backend", "cuda", "--json")
    try:
        log = json.loads(b.stdout).get("log", "")
    except ValueError:
        log = "(no JSON)"
    check(b.returncode == 0 and "khive-jail:" not in log, f"nvcc built in khive-jail with every layer: {log[-300:]}")
    r = run("eval", relu, tmp / "abs.cu", "--backend", "cuda", "--no-baselines", "--no-pytorch", "--json")
    try:
        j = json.loads(r.stdout)
    except ValueError:
        j = {}
    check(r.returncode == 1 and (j.get("verdict") or {}).get("check_name") == "correctness",
          f"an absolute value is rejected at the correctness check: {j.get('verdict')}")

finish("pytorch_reference_cuda")
