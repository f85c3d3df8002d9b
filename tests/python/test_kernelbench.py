"""khive_torch.kernelbench: shapes fitted from probes, and a convolution problem imported end to end (CPU)."""
import json
import pathlib
import tempfile
import unittest

try:
    import torch
except ImportError:
    torch = None

from khive_torch.kernelbench import ImportFailure, _fit, import_problem, task_name

CONV = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, c_in, c_out, k):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, k, stride=2, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x))

batch = 8
height = 64
width = 48
c_in = 3
c_out = 16
k = 3

def get_inputs():
    return [torch.randn(batch, c_in, height, width)]

def get_init_inputs():
    return [c_in, c_out, k]
"""


class Fit(unittest.TestCase):
    def test_forms(self):
        probes = [{"H": 64, "W": 5}, {"H": 66, "W": 5}, {"H": 69, "W": 5}]
        self.assertEqual(_fit([64, 66, 69], probes), "H")
        self.assertEqual(_fit([7, 7, 7], probes), "7")
        self.assertEqual(_fit([32, 33, 35], probes), "(H + 1) // 2")   # conv, stride 2, padding 1, kernel 3
        self.assertEqual(_fit([66, 68, 71], probes), "H + 2")
        self.assertEqual(_fit([320, 330, 345], probes), "H * W")
        self.assertIsNone(_fit([1, 9, 2], probes))


@unittest.skipIf(torch is None, "PyTorch is not installed")
class ImportConv(unittest.TestCase):
    def test_conv_problem(self):
        with tempfile.TemporaryDirectory() as t:
            src = pathlib.Path(t) / "54_conv_relu.py"
            src.write_text(CONV)
            d = import_problem(torch, src, pathlib.Path(t) / "task", level=2, problem_id=54)
            axes = d["axes"]
            self.assertEqual([n for n, a in axes.items() if a["type"] == "var"], ["batch", "height", "width"])
            exprs = {a["expression"] for a in axes.values() if a["type"] == "expr"}
            self.assertEqual(exprs, {"(height + 1) // 2", "(width + 1) // 2"})
            self.assertEqual(list(d["inputs"]), ["x", "conv_weight", "conv_bias"])
            self.assertEqual(d["inputs"]["conv_weight"]["shape"], ["16", "3", "3", "3"])
            self.assertEqual(d["khive"]["inputs"]["x"], {"dist": "normal", "mean": 0.0, "std": 1.0})
            w = [json.loads(l) for l in (pathlib.Path(t) / "task" / "workload.jsonl").read_text().splitlines()]
            self.assertEqual(w[0]["khive"]["role"], "correctness")
            self.assertTrue(all(v % 2 == 1 for v in w[0]["axes"].values()), w[0])
            # Every input named in every line, as the upstream Workload models require (issue 24).
            for line in w:
                self.assertEqual(line["inputs"], {n: {"type": "random"} for n in ["x", "conv_weight", "conv_bias"]}, line)
            from khive_torch.evaluate import evaluate_task
            rep = evaluate_task(torch, pathlib.Path(t) / "task")
            self.assertTrue(rep["ok"], rep)

    def test_missing_model_is_a_failure(self):
        with tempfile.TemporaryDirectory() as t:
            src = pathlib.Path(t) / "1_x.py"
            src.write_text("def get_inputs():\n    return []\n\ndef get_init_inputs():\n    return []\n")
            with self.assertRaises(ImportFailure) as cm:
                import_problem(torch, src, pathlib.Path(t) / "task")
            self.assertIn("the file defines no Model", str(cm.exception))


class TestTaskName(unittest.TestCase):
    def test_the_name_is_the_folder_khive_import_makes(self):
        # issue 24: the definition said kb1_88_relu inside kb1_088_relu/
        self.assertEqual(task_name("KernelBench/level1/88_ReLU.py", 1), "kb1_088_relu")
        self.assertEqual(task_name("level2/54_Conv2d_Multiply_LeakyReLU_GELU.py", 2), "kb2_054_conv2d_multiply_leakyrelu_gelu")
        self.assertEqual(task_name("2_Standard_matrix_multiplication_.py", 1), "kb1_002_standard_matrix_multiplication")
        self.assertEqual(task_name("odd name.py"), "kb0_000_odd_name")


if __name__ == "__main__":
    unittest.main()


class CudaOnly(unittest.TestCase):
    """An import too large for the CPU at every size keeps its task, those workloads marked for CUDA only."""

    def test_marks_only_the_named_workloads(self):
        import json
        import pathlib
        import tempfile
        from khive_torch.__main__ import _cuda_only
        with tempfile.TemporaryDirectory() as d:
            path = pathlib.Path(d) / "workload.jsonl"
            path.write_text(json.dumps({"uuid": "odd-small", "axes": {"b": 3}, "khive": {"role": "correctness"}}) + "\n"
                            + json.dumps({"uuid": "file-size", "axes": {"b": 128}, "khive": {"role": "perf", "backends": ["cuda"]}}) + "\n"
                            + json.dumps({"uuid": "kept", "axes": {"b": 1}}) + "\n")
            _cuda_only(path, {"odd-small", "file-size"})
            lines = [json.loads(x) for x in path.read_text().splitlines()]
            self.assertEqual([w["uuid"] for w in lines], ["odd-small", "file-size", "kept"])
            self.assertEqual(lines[0]["khive"], {"role": "correctness", "backends": ["cuda"]})
            self.assertEqual(lines[1]["khive"]["backends"], ["cuda"])
            self.assertNotIn("khive", lines[2])
