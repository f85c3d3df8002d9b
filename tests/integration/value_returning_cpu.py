#!/usr/bin/env python3
"""Upstream Solutions in (issue 24), on the CPU:

  1. a value-returning C++ Solution (destination_passing_style false; tests/integration/solutions/, written for these
     tests) imported into tasks/demo-cpu/vector_add: exit 0, the note says what the copy costs, and `khive eval`
     accepts the candidate (the wrap copies the returned std::vector into khive's preallocated output);
  2. the same Solution with spec.binding "tvm-ffi" and with an entry returning torch::Tensor: refused at import
     (exit 2) with the file and field, nothing written.

  value_returning_cpu.py KHIVE ROOT
"""
import json
import os
import pathlib
import sys
import tempfile

khive, root = sys.argv[1], pathlib.Path(sys.argv[2])
sys.path.insert(0, str(root / "tests/integration"))
from checks import check, finish, run_khive  # noqa: E402

env = dict(os.environ)
task = root / "tasks/demo-cpu/vector_add"
solution = root / "tests/integration/solutions/vector_add_returning_cpu.json"

with tempfile.TemporaryDirectory() as tmp:
    tmp = pathlib.Path(tmp)
    cand = tmp / "returning.cpp"
    r = run_khive(khive, env, "import", "solution", solution, "--task", task, "--backend", "cpu", "--out", cand)
    check(r.returncode == 0, "the value-returning Solution is imported (exit 0)")
    check("one extra write and one extra read of each output: c (N x sizeof(float))" in r.stdout,
          "the import says what the copy costs")
    check(cand.is_file() and "std::memcpy(c, khive_p, khive_n * sizeof(float));" in cand.read_text(),
          "the candidate copies the returned vector into c")
    r = run_khive(khive, env, "eval", task, cand, "--backend", "cpu", "--no-reference", "--no-baselines",
                  "--time-cap", "0.2", timeout=600)
    check(r.returncode == 0, "khive eval accepts the wrapped candidate")
    check("ACCEPT" in (r.stdout + r.stderr).upper(), "khive eval's verdict is accepted")

    s = json.loads(solution.read_text())
    tvm = dict(s, spec=dict(s["spec"], binding="tvm-ffi"))
    (tmp / "tvm.json").write_text(json.dumps(tvm))
    out = tmp / "tvm.cpp"
    r = run_khive(khive, env, "import", "solution", tmp / "tvm.json", "--task", task, "--backend", "cpu", "--out", out)
    check(r.returncode == 2 and "spec.binding: expected \"torch\" or none, got \"tvm-ffi\"" in r.stderr
          and str(tmp / "tvm.json") in r.stderr, "a TVM-FFI Solution is refused at import with the file and field")
    check(not out.exists(), "nothing is written for a refused Solution")

    torch = json.loads(json.dumps(s))
    torch["sources"][1]["content"] = ("#include <torch/extension.h>\n"
                                      "torch::Tensor add_vectors(torch::Tensor a, torch::Tensor b) { return a + b; }\n")
    (tmp / "torch.json").write_text(json.dumps(torch))
    r = run_khive(khive, env, "import", "solution", tmp / "torch.json", "--task", task, "--backend", "cpu", "--out",
                  tmp / "torch.cpp")
    check(r.returncode == 2 and "sources[1] (add.cpp): expected a kernel whose entry takes raw pointers, got a torch "
          "extension" in r.stderr, "a torch::Tensor-returning Solution is refused at import with the file and field")

finish("value_returning_cpu")
