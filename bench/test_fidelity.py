#!/usr/bin/env python3
"""CPU self-check of bench/fidelity.py (ctest bench_fidelity_selftest): planning, arguments, khive's JSON, the rows.

No GPU and no khive binary: the suites are planned as --dry-run plans them, a synthetic task checks the argument
order against docs/task-format.md's example, and (when torch and gcc are here) a C khive_launch built with gcc is
called through ctypes with the arguments the harness makes, so their order and types are checked end to end.
"""
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile
import types
import unittest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import fidelity as F  # noqa: E402

REPO = HERE.parent

# docs/task-format.md's example, plus a bf16 scalar and an int32 output (scalars by value, integer outputs).
DEFINITION = {
    "name": "gemm_alpha_k4",
    "axes": {"M": {"type": "var"}, "N": {"type": "var"}, "K": {"type": "const", "value": 4},
             "MN": {"type": "expr", "expression": "M * N"}},
    "inputs": {"A": {"shape": ["M", "K"], "dtype": "float32"}, "B": {"shape": ["K", "N"], "dtype": "float32"},
               "alpha": {"shape": None, "dtype": "float32"}, "beta": {"shape": None, "dtype": "bfloat16"}},
    "outputs": {"C": {"shape": ["M", "N"], "dtype": "float32"}, "rows": {"shape": ["M"], "dtype": "int32"}},
    "constraints": ["M % 4 == 0", "MN <= 2 ** 24"],
    "khive": {"inputs": {"B": {"dist": "uniform", "low": -1, "high": 1}}},
}
WORKLOADS = [
    {"uuid": "tiny", "axes": {"M": 4, "N": 8}, "inputs": {"alpha": {"type": "scalar", "value": 1.5}}, "khive": {"role": "correctness"}},
    {"uuid": "cpu-only", "axes": {"M": 8, "N": 8}, "khive": {"role": "perf", "backends": ["cpu"]}},
    {"uuid": "mid", "axes": {"M": 512, "N": 512}, "inputs": {"alpha": {"type": "scalar", "value": 1.5},
                                                           "beta": {"type": "scalar", "value": 0.25}}},
    {"uuid": "big.x", "axes": {"M": 1024, "N": 256}, "inputs": {"alpha": {"type": "scalar", "value": 2.0},
                                                              "beta": {"type": "scalar", "value": -1.0}},
     "khive": {"role": "perf", "inputs": {"A": {"dist": "integers", "low": 0, "high": 3}}}},
]

# C = alpha * A @ B + beta (beta a bf16 passed by value: its bits), rows[i] = i; "stream" unused on the CPU.
C_KERNEL = r"""
#include <stdint.h>
#include <string.h>
void khive_launch(const float* A, const float* B, float alpha, uint16_t beta_bits, float* C, int32_t* rows,
                  int64_t M, int64_t N, void* stream) {
  uint32_t u = (uint32_t)beta_bits << 16; float beta; memcpy(&beta, &u, 4);
  for (int64_t i = 0; i < M; ++i) {
    rows[i] = (int32_t)i;
    for (int64_t j = 0; j < N; ++j) {
      float s = 0;
      for (int64_t k = 0; k < 4; ++k) s += A[i * 4 + k] * B[k * N + j];
      C[i * N + j] = alpha * s + beta;
    }
  }
}
void khive_noop(const float* A, const float* B, float alpha, uint16_t beta_bits, float* C, int32_t* rows,
                int64_t M, int64_t N, void* stream) {}
"""


def args(**kw):
    a = F.parse_args(["--dry-run"])
    for k, v in kw.items():
        setattr(a, k, v)
    return a


class Synthetic(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.task_dir = pathlib.Path(cls.tmp.name) / "demo" / "gemm_alpha"
        cls.task_dir.mkdir(parents=True)
        (cls.task_dir / "definition.json").write_text(json.dumps(DEFINITION))
        (cls.task_dir / "workload.jsonl").write_text("\n".join(json.dumps(w) for w in WORKLOADS) + "\n")
        cls.plan = F.plan_task(cls.task_dir, "demo", args(max_workloads=0), {"*": 2})

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_signature_as_documented(self):
        self.assertEqual(F.signature(self.plan.task),
                         'extern "C" void khive_launch(const float* A, const float* B, float alpha, __nv_bfloat16 beta, '
                         'float* C, int32_t* rows, int64_t M, int64_t N, cudaStream_t stream)')

    def test_perf_workloads_on_cuda_only(self):
        self.assertEqual(self.plan.error, "")
        self.assertEqual([c.uuid for c in self.plan.cases], ["mid", "big.x"])
        self.assertEqual(self.plan.seeds, [11, 12])

    def test_arguments_in_order(self):
        c = self.plan.cases[1]
        self.assertEqual([(x.kind, x.name) for x in c.args],
                         [("input", "A"), ("input", "B"), ("scalar", "alpha"), ("scalar", "beta"), ("output", "C"),
                          ("output", "rows"), ("axis", "M"), ("axis", "N"), ("stream", "stream")])
        self.assertEqual(c.axes, {"M": 1024, "N": 256, "K": 4, "MN": 1024 * 256})
        self.assertEqual(c.args[0].shape, (1024, 4))
        self.assertEqual(c.args[0].dist, ("integers", {"low": 0, "high": 3}))          # the workload's own distribution
        self.assertEqual(c.args[1].dist, ("uniform", {"low": -1.0, "high": 1.0}))       # the task's
        self.assertEqual(self.plan.cases[0].args[0].dist, ("normal", {"mean": 0.5, "std": 1.0}))   # the default
        self.assertEqual(c.set_bytes(), 4 * (1024 * 4 + 4 * 256 + 1024 * 256 + 1024))

    def test_perf_regex_escapes(self):
        self.assertEqual(F.perf_regex(self.plan.cases), r"^(?:mid|big\.x)$")

    @unittest.skipUnless(shutil.which("gcc"), "no gcc")
    def test_harness_arguments_reach_a_c_kernel(self):
        try:
            import torch
        except ImportError:
            self.skipTest("no torch")
        so = pathlib.Path(self.tmp.name) / "k.so"
        src = so.with_suffix(".c")
        src.write_text(C_KERNEL)
        subprocess.run(["gcc", "-O1", "-shared", "-fPIC", "-o", str(so), str(src)], check=True)
        h = F.Harness(torch, args(), dev="cpu")
        case = self.plan.cases[1]
        vals, outs, keep = h.make_set(self.plan, case, seed=7)
        lib = F.ctypes.CDLL(str(so))
        self.assertEqual(h.check_outputs(outs)[:9], "output C:")   # pre-filled: NaN until written
        lib.khive_noop.argtypes = [type(v) for v in vals]
        lib.khive_noop(*vals)
        self.assertIn("NaN", h.check_outputs(outs))
        fn = lib.khive_launch
        fn.argtypes = [type(v) for v in vals]
        fn(*vals)
        self.assertEqual(h.check_outputs(outs), "")
        A, B = keep[0], keep[1]
        want = 2.0 * (A @ B) - 1.0
        self.assertTrue(torch.allclose(outs[0][1], want, atol=1e-4), "C = alpha A B + beta")
        self.assertTrue(torch.equal(outs[1][1], torch.arange(1024, dtype=torch.int32)))
        self.assertTrue(bool(((A >= 0) & (A <= 3)).all()) and float(A.sum()) == float(A.round().sum()))
        outs[1][1][5] = int(torch.empty(1, dtype=torch.int32).view(torch.uint8).fill_(F.SENTINEL_BYTE).view(torch.int32)[0])
        self.assertIn("pre-fill", h.check_outputs(outs))


class Suites(unittest.TestCase):
    def test_every_task_plans(self):
        for suite in ("sol", "cutegen26"):
            a = args(max_workloads=0, suites=[str(REPO / "tasks" / suite)])
            plans = F.make_plans(a, tune=None, scratch=pathlib.Path(tempfile.gettempdir()), render=False)
            self.assertGreater(len(plans), 10, suite)
            for p in plans:
                self.assertEqual(p.error, "", p.key)
                self.assertTrue(p.cases, p.key)
                self.assertEqual([k.label for k in p.kernels], ["ref", "best"], p.key)
                self.assertIsNotNone(p.kernels[0].path, p.key)
                self.assertEqual(p.kernels[1].error, "", p.key)   # dry run without khive-tune: no error
                n_var = sum(1 for x in p.task.axes.values() if x.get("type") == "var")
                for c in p.cases:
                    kinds = [x.kind for x in c.args]
                    self.assertEqual(kinds[-1], "stream")
                    self.assertEqual(kinds.count("axis"), n_var)
                    rank = [{"input": 0, "scalar": 0, "output": 1, "axis": 2, "stream": 3}[k] for k in kinds]
                    self.assertEqual(rank, sorted(rank), p.key)   # inputs, outputs, var axes, stream

    def test_file_kernels_per_task(self):
        # --file LABEL=PATH: {task} is each task's directory name; a missing file is that row's error, not a crash.
        with tempfile.TemporaryDirectory() as d:
            (pathlib.Path(d) / "attention").mkdir()
            (pathlib.Path(d) / "attention" / "k.cu").write_text("// a kernel\n")
            a = F.parse_args(["--dry-run", "--kernels", "none", "--tasks", "sol/attention(_causal)?$", "--file", f"disp={d}/{{task}}/k.cu",
                              str(REPO / "tasks" / "sol")])
            plans = F.make_plans(a, tune=None, scratch=pathlib.Path(d), render=False)
            by = {p.key: p for p in plans}
            self.assertEqual(set(by), {"sol/attention", "sol/attention_causal"})
            found, missing = by["sol/attention"].kernels, by["sol/attention_causal"].kernels
            self.assertEqual([(k.label, k.error) for k in found], [("disp", "")])
            self.assertEqual(found[0].path, pathlib.Path(d) / "attention" / "k.cu")
            self.assertIsNone(missing[0].path)
            self.assertIn("no file", missing[0].error)

    def test_file_arguments_checked(self):
        for bad in (["--file", "ref=/x.cu"], ["--file", "nolabel"], ["--file", "a=/x", "--file", "a=/y"],
                    ["--kernels", "none"], ["--kernels", "ref,none"], ["--file", "sp ace=/x"]):
            with self.assertRaises(SystemExit, msg=str(bad)), open("/dev/null", "w") as null:
                old, sys.stderr = sys.stderr, null
                try:
                    F.parse_args(["--dry-run", *bad])
                finally:
                    sys.stderr = old

    def test_recorded_points_name_existing_tasks(self):
        points = json.loads((HERE / "fidelity_kernels.json").read_text())["tasks"]
        for key, e in points.items():
            self.assertTrue((REPO / "tasks" / key / "definition.json").is_file(), key)
            self.assertTrue(e.get("source"), key)
            self.assertTrue("template" in e or "compose" in e, key)


class FakeKhive(unittest.TestCase):
    """run_eval against a stand-in for khive: the command line, the JSON, a rejection, the timeout."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.bin = pathlib.Path(self.tmp.name) / "khive"
        report = {"schema": "khive.eval/1", "seconds": 4.5, "accepted": False,
                  "verdict": {"check": 9, "reason": "timed_output_wrong", "message": "call 3 wrong"},
                  "candidate": {"guard_seconds": 1.25, "build": {"key": "ab" + "0" * 62},
                                "timing": [{"workload": "mid", "batch": 2, "samples_s": [1e-5, 3e-5, 2e-5]}]},
                  "workloads": [{"workload": "mid", "kernel": {"median_s": 2e-5}}]}
        self.bin.write_text("#!/usr/bin/env python3\nimport json, sys, time\n"
                            "if '--seed' in sys.argv and sys.argv[sys.argv.index('--seed') + 1] == '99': time.sleep(60)\n"
                            "open(sys.argv[0] + '.args', 'w').write(json.dumps(sys.argv[1:]))\n"
                            f"print('warning on stdout'); print(json.dumps({report!r})); sys.exit(1)\n")
        self.bin.chmod(0o755)
        task_dir = pathlib.Path(self.tmp.name) / "demo" / "t"
        task_dir.mkdir(parents=True)
        (task_dir / "definition.json").write_text(json.dumps(DEFINITION))
        (task_dir / "workload.jsonl").write_text("\n".join(json.dumps(w) for w in WORKLOADS) + "\n")
        self.plan = F.plan_task(task_dir, "demo", args(max_workloads=0), {"*": 1})
        self.kernel = F.Kernel("ref", "reference.cu", path=task_dir / "reference.cu")

    def tearDown(self):
        self.tmp.cleanup()

    def test_eval_parsed(self):
        e = F.run_eval(str(self.bin), self.plan, self.kernel, 11, args(eval_timeout=30), None)
        argv = json.loads(pathlib.Path(str(self.bin) + ".args").read_text())
        self.assertEqual(argv[:2], ["eval", str(self.plan.dir)])
        for flag in ("--json", "--no-reference", "--no-baselines", "--no-pytorch"):
            self.assertIn(flag, argv)
        self.assertEqual(argv[argv.index("--perf-workloads") + 1], r"^(?:mid|big\.x)$")
        self.assertEqual((e["rc"], e["seconds"], e["guard_seconds"], e["build_key"][:2]), (1, 4.5, 1.25, "ab"))
        self.assertEqual(e["times"]["mid"]["median_s"], 2e-5)
        self.assertIn("rejected at check 9", e["error"])

    def test_eval_timeout_ends_the_group(self):
        e = F.run_eval(str(self.bin), self.plan, self.kernel, 99, args(eval_timeout=1), None)
        self.assertIsNone(e["rc"])
        self.assertLess(e["wall_s"], 15)
        self.assertIn("--eval-timeout", e["error"])


class Numbers(unittest.TestCase):
    def test_seeds_spec(self):
        self.assertEqual(F.parse_seeds("3"), {"*": 3})
        self.assertEqual(F.parse_seeds("sol=3,*=1"), {"sol": 3, "*": 1})
        self.assertEqual(F.parse_seeds("sol=2"), {"sol": 2, "*": 1})
        with self.assertRaises(ValueError):
            F.parse_seeds("sol=0")

    def test_pick_evenly(self):
        self.assertEqual(F.pick_evenly(list(range(10)), 2), [0, 9])
        self.assertEqual(F.pick_evenly(list(range(10)), 3), [0, 4, 9])   # round(4.5) = 4
        self.assertEqual(F.pick_evenly(list(range(3)), 0), [0, 1, 2])
        self.assertEqual(F.pick_evenly(list(range(5)), 1), [2])

    def test_khive_times(self):
        report = {"workloads": [{"workload": "a", "kernel": {"median_s": 2e-5, "samples": 3}},
                                {"workload": "b", "kernel": None}],
                  "candidate": {"timing": [{"workload": "a", "batch": 4, "samples_s": [1, 2, 3], "in_process_s": [0, 1e-5, 3e-5]},
                                           {"workload": "b", "batch": 1, "samples_s": [3e-5, 1e-5, 2e-5], "in_process_s": []}]}}
        t = F.khive_times(report)
        self.assertEqual(t["a"]["median_s"], 2e-5)          # the summary wins
        self.assertEqual(t["a"]["events_s"], 2e-5)          # zeros (no in-process time) left out
        self.assertEqual(t["b"]["median_s"], 2e-5)          # else the judge's samples
        self.assertIsNone(t["b"]["events_s"])

    def test_compare(self):
        r = F.compare([10.2e-6, 10.0e-6, 10.1e-6], 10.0e-6)
        self.assertAlmostEqual(r["ratio"], 1.01)
        self.assertTrue(r["within"])                         # 0.1 us: under the 1 us floor
        self.assertAlmostEqual(r["seed_spread"], 0.02)
        self.assertFalse(r["spread_flag"])                   # < 20 us: not flagged
        r = F.compare([104e-6, 100e-6], 100e-6)
        self.assertTrue(r["within"])                         # 2 us of 100 us: within 3 %
        self.assertTrue(r["spread_flag"])                    # 4 % over the seeds, >= 20 us
        r = F.compare([1040e-6], 1000e-6)
        self.assertFalse(r["within"])
        self.assertNotIn("seed_spread", r)
        self.assertNotIn("ratio", F.compare([None], 1e-3))

    def test_rows_summary_markdown(self):
        task = types.SimpleNamespace(axes={})
        case = F.Case("w1", "line 1", {"N": 4}, [])
        plan = F.Plan(key="s/t", dir=pathlib.Path("t"), suite="s", task=task, cases=[case], seeds=[11, 12],
                      kernels=[F.Kernel("ref", "reference.cu", source="the task's reference")])
        state = {("s/t", "ref"): {"evals": {11: {"seed": 11, "times": {"w1": {"median_s": 5e-5}}, "wall_s": 3.0, "guard_seconds": 1.0},
                                            12: {"seed": 12, "error": "rejected at check 9", "wall_s": 5.0}},
                                  "harness": {"w1": {"median_s": 4e-5, "samples": 60, "launch_exposed": True}},
                                  "library_how": "khive cache"}}
        rows = F.build_rows([plan], state)
        self.assertEqual(len(rows), 1)
        self.assertAlmostEqual(rows[0]["ratio"], 1.25)
        self.assertEqual(rows[0]["errors"], ["seed 12: rejected at check 9"])
        evals = list(state[("s/t", "ref")]["evals"].values())
        s = F.summarize(rows, evals, ["khive eval s/t best seed 11"])
        self.assertEqual((s["compared"], s["within"], s["errors"]), (1, 0, 1))
        self.assertEqual(s["eval_wall_s"], {"mean": 4.0, "max": 5.0, "n": 2})
        meta = {"date": "d", "khive": "khive", "cache": "c", "command": "fidelity.py", "samples": 60, "warmup": 3, "time_limit": 300}
        md = F.markdown(meta, [plan], rows, s)
        self.assertIn("| s/t | ref | w1 | 50.00 / - | - | 40.00 | 1.250 | 10.00 | NO | - | - | khive cache | L seed 12: rejected at check 9 |", md)
        self.assertIn("- rows within tolerance: 0 / 1 compared", md)
        self.assertIn("- khive eval s/t best seed 11", md)

    def test_placement_range(self):
        # add_rmsnorm T16384 on the H100 (docs/results/2026-12-06-h100-s6): placements 371.9 / 388.4 / 388.6 / 377.4 us,
        # khive 379.9: 2.2 % over the pooled median's lowest placement, inside the range.
        pl = [371.89e-6, 388.40e-6, 388.61e-6, 377.39e-6]
        r = {"khive_s": 379.94e-6}
        out = F.placement_range(r, {"median_s": 383e-6, "placements": pl})
        self.assertEqual(out["placement_range"], [371.89e-6, 388.61e-6])
        self.assertTrue(out["within_placements"])
        self.assertTrue(F.placement_range({"khive_s": 399e-6}, {"placements": pl})["within_placements"])   # 388.61 + 3 %
        self.assertFalse(F.placement_range({"khive_s": 401e-6}, {"placements": pl})["within_placements"])
        self.assertFalse(F.placement_range({"khive_s": 359e-6}, {"placements": pl})["within_placements"])  # 371.89 - 3 %
        self.assertTrue(F.placement_range({"khive_s": 2.4e-6}, {"placements": [1.5e-6, 1.6e-6]})["within_placements"])  # 1 us floor
        self.assertEqual(F.placement_range(r, {"median_s": 1e-4}), {})                       # an older harness: no range
        self.assertEqual(F.placement_range({"khive_s": None}, {"placements": pl}), {"placement_range": [pl[0], pl[2]]})

    def test_rows_with_placements(self):
        task = types.SimpleNamespace(axes={})
        case = F.Case("w1", "line 1", {"N": 4}, [])
        plan = F.Plan(key="s/t", dir=pathlib.Path("t"), suite="s", task=task, cases=[case], seeds=[11],
                      kernels=[F.Kernel("ref", "reference.cu", source="the task's reference")])
        # Two rhythms; khive (48.5) is nearest the second, whose placements range over 44.2-47.2: within 3 % of 47.2.
        state = {("s/t", "ref"): {"evals": {11: {"seed": 11, "times": {"w1": {"median_s": 48.5e-6}}}},
                                  "harness": {"w1": {"median_s": 40e-6, "samples": 60, "placements": [40e-6, 41e-6],
                                                     "rhythms": [{"median_s": 46.6e-6, "placements": [46.6e-6, 44.2e-6, 47.2e-6]}]}},
                                  "library_how": "khive cache"}}
        rows = F.build_rows([plan], state)
        self.assertEqual(rows[0]["harness_pick"], 1)
        self.assertEqual(rows[0]["placement_range"], [44.2e-6, 47.2e-6])
        self.assertTrue(rows[0]["within_placements"])
        s = F.summarize(rows, [], [])
        self.assertEqual((s["within_placements"], s["placement_rows"]), (1, 1))
        self.assertAlmostEqual(s["placement_spread_max"], 47.2 / 44.2 - 1)
        meta = {"date": "d", "khive": "khive", "cache": "c", "command": "fidelity.py", "samples": 60, "warmup": 3,
                "time_limit": 300, "placements": 4, "gap_ms": [0, 2]}
        md = F.markdown(meta, [plan], rows, s)
        self.assertIn("| 44.20-47.20 (6.8%) in |", md)
        self.assertIn("placement range (min-max of its placements' medians): 1 / 1; widest placement range 6.8 %", md)

    def test_placements_fit_the_memory(self):
        h = F.Harness.__new__(F.Harness)
        h.a = types.SimpleNamespace(placements=4)
        case = types.SimpleNamespace(set_bytes=lambda: 4 << 30)   # kb09: 4 GB a set
        self.assertEqual(h.placements(case, 1, 80 << 30), 4)
        self.assertEqual(h.placements(case, 1, 12 << 30), 1)      # 60 % of 12 GB: one set and no second
        self.assertEqual(h.placements(case, 1, 16 << 30), 2)
        self.assertEqual(h.placements(case, 1, 1 << 30), 1)       # never fewer than one (the set may still fail)
        h.a.placements = 1
        self.assertEqual(h.placements(case, 1, 80 << 30), 1)


if __name__ == "__main__":
    unittest.main()
