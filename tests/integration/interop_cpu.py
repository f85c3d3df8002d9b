#!/usr/bin/env python3
"""Real problems in, real solutions out, on the CPU (issue 14):

  1. `khive import kernelbench` on problem files written here in KernelBench's format (an activation, a matrix
     product, a model with parameters, one whose literal sizes cannot shrink and are too large for the CPU, one that does
     not run): three imported, two refused with their reasons (exit 1); the imported tasks load, their PyTorch
     reference runs on the CPU, the tuner recognises the activation and the product by itself;
  2. `khive import flashinfer` on a dataset in FlashInfer-Bench's layout (definitions/, workloads/ of Trace records,
     blob/ with a safetensors file): the task loads and its reference runs on the safetensors data;
  3. import -> eval -> export round trip: `khive optimize` on tasks/demo-cpu/vector_add, `khive export RUN --solution`
     (SOL-ExecBench schema), `khive import solution` back as a candidate, and `khive eval` accepts it.

  interop_cpu.py KHIVE ROOT
Exit 0, or 77 (skipped) when PyTorch is not installed (scripts/setup.sh installs it into .deps/torch).
"""
import json
import pathlib
import subprocess
import sys
import tempfile

khive, root = sys.argv[1], pathlib.Path(sys.argv[2])
sys.path.insert(0, str(root / "tests/integration"))
from checks import check, finish, run_khive, torch_env  # noqa: E402
from problems import kernelbench_relu  # noqa: E402

env = torch_env(root, "torch, safetensors")


def run(*args, timeout=900):
    return run_khive(khive, env, *args, timeout=timeout, tail=2500)


PROBLEMS = {
    "19_ReLU.py": kernelbench_relu(batch_size=64),
    "2_Standard_matrix_multiplication_.py": """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)

M = 128
K = 96
N = 80

def get_inputs():
    return [torch.rand(M, K), torch.rand(K, N)]

def get_init_inputs():
    return []
""",
    "40_Linear_ReLU_Scale.py": """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        return torch.relu(self.fc(x)) * self.scale

batch_size = 256
in_features = 64
out_features = 32
scale = 2

def get_inputs():
    return [torch.rand(batch_size, in_features)]

def get_init_inputs():
    return [in_features, out_features, scale]
""",
    "90_Fixed_Huge.py": """import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return x * x

def get_inputs():
    return [torch.rand(32768, 16384)]

def get_init_inputs():
    return []
""",
    "91_Broken.py": """import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return x @ x

def get_inputs():
    return [torch.rand(3, 5)]

def get_init_inputs():
    return []
""",
}

with tempfile.TemporaryDirectory(prefix="khive-interop-") as tmp_s:
    tmp = pathlib.Path(tmp_s)
    # ---------------------------------------------------------------------------------------------- 1. KernelBench
    src = tmp / "KernelBench" / "level1"
    src.mkdir(parents=True)
    for name, text in PROBLEMS.items():
        (src / name).write_text(text)
    out = tmp / "tasks" / "kb"
    r = run("import", "kernelbench", src, "--out", out)
    check(r.returncode == 1, "import exits 1 when some problem fails")
    check("3 of 5 imported" in r.stdout, "three of five problems imported")
    check("FAILED    kb1_090_fixed_huge" in r.stdout and "no correctness workload runs on cpu" in r.stdout,
          "the problem too large for the CPU is refused with its reason")
    check("FAILED    kb1_091_broken" in r.stdout and "fails on the meta device" in r.stdout, "the problem that does not run is refused with its reason")
    names = sorted(p.name for p in out.iterdir())
    check(names == ["kb1_002_standard_matrix_multiplication", "kb1_019_relu", "kb1_040_linear_relu_scale"], f"task directories: {names}")
    r = run("tasks", out)
    check(r.returncode == 0 and r.stdout.count("kernelbench") == 3, "khive tasks lists the three imported tasks")
    lin = json.loads((out / "kb1_040_linear_relu_scale" / "definition.json").read_text())
    check(list(lin["inputs"]) == ["x", "fc_weight", "fc_bias"], f"the model's parameters are inputs: {list(lin['inputs'])}")
    check(lin["inputs"]["fc_weight"]["shape"] == ["32", "64"], "parameter shapes are fixed sizes")
    check(lin["khive"]["source"]["init_inputs"] == [64, 32, 2], "init inputs recorded")
    relu_w = [json.loads(l) for l in (out / "kb1_019_relu" / "workload.jsonl").read_text().splitlines()]
    check(relu_w[0]["khive"]["role"] == "correctness" and relu_w[0]["axes"]["batch_size"] % 2 == 1, f"a small odd correctness shape: {relu_w[0]}")
    check(any(w["uuid"] == "file-size" and w["axes"] == {"batch_size": 64, "dim": 1000} for w in relu_w), "the file's sizes are a workload")
    ev = subprocess.run([sys.executable, "-m", "khive_torch", "evaluate", str(out / "kb1_040_linear_relu_scale")], env=env,
                        capture_output=True, text=True)
    check(ev.returncode == 0 and json.loads(ev.stdout)["ok"], f"the PyTorch reference runs on the CPU: {ev.stdout[-400:]}")
    # The tuner finds a binding for the activation and the product by itself (khive-tune show).
    for task, family in (("kb1_019_relu", "elementwise"), ("kb1_002_standard_matrix_multiplication", "gemm")):
        t = subprocess.run([str(pathlib.Path(khive).parent / "khive-tune"), "show", str(out / task), "--backend", "cpu"],
                           capture_output=True, text=True, env=env)
        check(t.returncode == 0 and family in t.stdout, f"khive-tune finds {family} templates for {task}: {t.stdout[-300:]}{t.stderr[-300:]}")

    # -------------------------------------------------------------------------------------------- 2. FlashInfer
    ds = tmp / "fib"
    (ds / "definitions" / "rmsnorm").mkdir(parents=True)
    (ds / "workloads" / "rmsnorm").mkdir(parents=True)
    (ds / "blob" / "workloads").mkdir(parents=True)
    definition = {
        "name": "rmsnorm_h128", "op_type": "rmsnorm", "tags": ["status:verified"],
        "axes": {"batch_size": {"type": "var"}, "hidden_size": {"type": "const", "value": 128}},
        "inputs": {"hidden_states": {"shape": ["batch_size", "hidden_size"], "dtype": "bfloat16"},
                   "weight": {"shape": ["hidden_size"], "dtype": "bfloat16"}},
        "outputs": {"output": {"shape": ["batch_size", "hidden_size"], "dtype": "bfloat16"}},
        "reference": "import torch\n\ndef run(hidden_states, weight):\n    x = hidden_states.float()\n"
                     "    return (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight.float()).to(hidden_states.dtype)\n",
    }
    (ds / "definitions" / "rmsnorm" / "rmsnorm_h128.json").write_text(json.dumps(definition))
    mk = ("import torch, sys\nfrom safetensors.torch import save_file\n"
          "save_file({'weight': torch.linspace(0.5, 1.5, 128).to(torch.bfloat16)}, sys.argv[1])\n")
    subprocess.run([sys.executable, "-c", mk, str(ds / "blob" / "workloads" / "w.safetensors")], env=env, check=True)
    lines = [{"definition": "rmsnorm_h128", "workload": {"uuid": "a", "axes": {"batch_size": 3}, "inputs": {
                 "hidden_states": {"type": "random"},
                 "weight": {"type": "safetensors", "path": "blob/workloads/w.safetensors", "tensor_key": "weight"}}},
              "solution": None, "evaluation": None},
             {"definition": "rmsnorm_h128", "workload": {"uuid": "b", "axes": {"batch_size": 17}, "inputs": {
                 "hidden_states": {"type": "random"}, "weight": {"type": "random"}}}, "solution": None, "evaluation": None}]
    (ds / "workloads" / "rmsnorm" / "rmsnorm_h128.jsonl").write_text("".join(json.dumps(l) + "\n" for l in lines))
    fout = tmp / "tasks" / "fib"
    r = run("import", "flashinfer", ds, "--out", fout)
    check(r.returncode == 0 and "1 of 1 definitions imported" in r.stdout, "the FlashInfer-Bench dataset imports")
    ev = subprocess.run([sys.executable, "-m", "khive_torch", "evaluate", str(fout / "rmsnorm_h128")], env=env, capture_output=True, text=True)
    check(ev.returncode == 0 and json.loads(ev.stdout)["ok"], f"its reference runs on the safetensors weight: {ev.stdout[-400:]}")

    # ------------------------------------------------------------------------------------ 3. eval/export round trip
    task = root / "tasks" / "demo-cpu" / "vector_add"
    run_dir = tmp / "run"
    r = run("optimize", task, "--backend", "cpu", "--budget-candidates", "2", "--out", run_dir, "--seed", "7", "--time-cap", "0.2",
            "--quiet", timeout=1500)
    check(r.returncode == 0, "khive optimize on the CPU")
    sol_dir = tmp / "solution"
    r = run("export", run_dir, "--solution", "--out", sol_dir)
    check(r.returncode == 0 and (sol_dir / "solution.json").is_file(), "khive export --solution writes solution.json")
    if (sol_dir / "solution.json").is_file():
        s = json.loads((sol_dir / "solution.json").read_text())
        check(s["definition"] == "vector_add_f32" or s["definition"] == json.loads((task / "definition.json").read_text())["name"],
              "the Solution names the task's definition")
        check(s["spec"]["destination_passing_style"] is True and s["spec"]["binding"] == "torch", "DPS, torch binding")
        check([f["path"] for f in s["sources"]] == ["khive_prelude.h", "kernel.cpp", "binding.cpp"], f"sources: {[f['path'] for f in s['sources']]}")
        cand = tmp / "imported.cpp"
        r = run("import", "solution", sol_dir / "solution.json", "--task", task, "--backend", "cpu", "--out", cand)
        check(r.returncode == 0 and cand.is_file(), "khive import solution writes a candidate")
        r = run("eval", task, cand, "--backend", "cpu", "--no-reference", "--no-baselines", "--time-cap", "0.2")
        check(r.returncode == 0, "the re-imported solution is accepted by khive eval")
    r = run("export", run_dir, "--solution", "--candidate", "c9999")
    check(r.returncode == 2 and "--candidate: expected a candidate id" in r.stderr, "an unknown candidate is a clear error (exit 2)")

finish("interop_cpu")
