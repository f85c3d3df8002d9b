"""khive_torch.recognize: what a reference computes, read from its ATen graph (issue 24), on references written here."""
import json
import math
import pathlib
import tempfile
import unittest

try:
    import torch
except ImportError:   # the suite reports it; ctest marks the test skipped (exit code 77)
    torch = None

from khive_torch.task import load_task


def unary(name, reference, dtype="float32"):
    return {"name": name, "axes": {"N": {"type": "var"}},
            "inputs": {"x": {"shape": ["N"], "dtype": dtype}}, "outputs": {"y": {"shape": ["N"], "dtype": dtype}},
            "reference": "import torch\nimport torch.nn.functional as F\n\n" + reference}


GEMM = {"name": "mm", "axes": {"M": {"type": "var"}, "N": {"type": "var"}, "K": {"type": "var"}},
        "inputs": {"A": {"shape": ["M", "K"], "dtype": "float32"}, "B": {"shape": ["K", "N"], "dtype": "float32"}},
        "outputs": {"C": {"shape": ["M", "N"], "dtype": "float32"}}}
ROWS = {"axes": {"T": {"type": "var"}, "H": {"type": "var"}},
        "inputs": {"x": {"shape": ["T", "H"], "dtype": "float32"}}, "outputs": {"y": {"shape": ["T", "H"], "dtype": "float32"}}}


def _unmatched(expr, i, step):
    """The index of the first parenthesis from i in direction step (-1, +1) that closes no group opened on the way."""
    (opening, closing), depth = ("(", ")") if step > 0 else (")", "("), 0
    while 0 < i < len(expr) - 1:
        i += step
        if expr[i] == opening:
            depth += 1
        elif expr[i] == closing:
            if depth == 0:
                break
            depth -= 1
    return i


def _ternary(expr):
    """A C expression with `c ? a : b` (recognize writes each inside its own parentheses) as Python."""
    while "?" in expr:
        # the parenthesised group around the first '?': its condition, then the two values split at its ':'
        q = expr.index("?")
        start, end = _unmatched(expr, q, -1), _unmatched(expr, q, +1)
        inner = expr[start + 1:end]
        cond, rest = inner.split("?", 1)
        # the ':' at depth 0 of rest
        depth = 0
        for i, ch in enumerate(rest):
            depth += ch == "("
            depth -= ch == ")"
            if ch == ":" and depth == 0:
                a, b = rest[:i], rest[i + 1:]
                break
        expr = expr[:start + 1] + f"({a}) if ({cond}) else ({b})" + expr[end:]
    return expr


def float32_definition(name, axes, ins, outs, body):
    """A definition of float32 tensors (ins, outs: {name: shape}) whose reference runs `body` (indented source) on
    the inputs in order."""
    return {"name": name, "axes": axes,
            "inputs": {n: {"shape": sh, "dtype": "float32"} for n, sh in ins.items()},
            "outputs": {n: {"shape": sh, "dtype": "float32"} for n, sh in outs.items()},
            "reference": f"import torch\n\ndef run({', '.join(ins)}):\n{body}"}


@unittest.skipIf(torch is None, "PyTorch is not installed (scripts/setup.sh installs it into .deps/torch)")
class Recognize(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = pathlib.Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def recognize(self, definition, axes):
        from khive_torch.recognize import recognize
        d = self.root / definition["name"]
        d.mkdir()
        (d / "definition.json").write_text(json.dumps(definition))
        (d / "workload.jsonl").write_text(json.dumps({"uuid": "w", "axes": axes}) + "\n")
        return recognize(torch, load_task(d)), d

    def expression_matches(self, expr, fn):
        """The C expression (no ?: in it), evaluated with Python's math on a few floats, equals what PyTorch computes."""
        import math
        import re
        env = {"expf": math.exp, "expm1f": math.expm1, "logf": math.log, "log1pf": math.log1p, "tanhf": math.tanh,
               "erff": math.erf, "fabsf": abs, "fmaxf": max, "fminf": min, "sqrtf": math.sqrt, "powf": math.pow,
               "rsqrtf": lambda v: 1 / math.sqrt(v)}
        self.assertNotIn("?", expr)
        py = re.sub(r"(\d)f\b", r"\1", expr)   # 2.0f -> 2.0
        for v in (-2.5, -0.3, 0.0, 0.7, 3.1):
            got = eval(py, dict(env, x=v))  # noqa: S307 - test-only, an expression this module wrote
            self.assertAlmostEqual(got, float(fn(torch.tensor([v]))[0]), places=5, msg=f"{expr} at {v}")

    def test_a_matrix_product(self):
        r, _ = self.recognize(dict(GEMM, reference="import torch\n\ndef run(A, B):\n    return torch.matmul(A, B)\n"),
                              {"M": 3, "N": 5, "K": 4})
        self.assertEqual((r["op"], r["family"]), ("matmul", "gemm"))
        self.assertEqual(r["operands"], {"A": "A", "B": "B", "layout_a": "row", "layout_b": "row"})

    def test_a_matrix_product_records_which_operand_is_read_transposed(self):
        # Square operands: the shapes cannot say that A is read transposed; the graph does.
        sq = dict(GEMM, name="sq", inputs={"A": {"shape": ["N", "N"], "dtype": "float32"},
                                           "B": {"shape": ["N", "N"], "dtype": "float32"}},
                  outputs={"C": {"shape": ["N", "N"], "dtype": "float32"}}, axes={"N": {"type": "var"}})
        for i, (expr, la, lb) in enumerate([("A.t() @ B", "col", "row"), ("torch.matmul(A, B.T)", "row", "col"),
                                            ("A.T @ B.transpose(0, 1)", "col", "col"), ("B @ A", "row", "row")]):
            r, _ = self.recognize(dict(sq, name=f"sq{i}", reference=f"import torch\n\ndef run(A, B):\n    return {expr}\n"),
                                  {"N": 4})
            self.assertEqual(r["op"], "matmul", expr)
            want_a, want_b = ("B", "A") if expr == "B @ A" else ("A", "B")
            self.assertEqual(r["operands"], {"A": want_a, "B": want_b, "layout_a": la, "layout_b": lb}, expr)
            self.assertNotIn("flags", r)

    def test_a_matrix_product_of_a_reshaped_input_is_flagged(self):
        # w is stored [N, K]; w.reshape(K, N) is not its transpose, and no template reads it so.
        two = {"name": "rs", "axes": {"M": {"type": "var"}},
               "inputs": {"x": {"shape": ["M", "5"], "dtype": "float32"}, "w": {"shape": ["7", "5"], "dtype": "float32"}},
               "outputs": {"y": {"shape": ["M", "7"], "dtype": "float32"}}}
        r, _ = self.recognize(dict(two, reference="import torch\n\ndef run(x, w):\n    return x @ w.reshape(5, 7)\n"),
                              {"M": 3})
        self.assertEqual(r["op"], "matmul")
        self.assertNotIn("operands", r)
        self.assertEqual(r["flags"], ["operands_reinterpreted"])
        # A 3-D input viewed as rows is no 2-D input reshaped: the binder reads the shapes, nothing is flagged.
        batch = {"name": "b3", "axes": {"B": {"type": "var"}},
                 "inputs": {"x": {"shape": ["B", "3", "5"], "dtype": "float32"}, "w": {"shape": ["5", "7"], "dtype": "float32"}},
                 "outputs": {"y": {"shape": ["B", "3", "7"], "dtype": "float32"}}}
        r, _ = self.recognize(dict(batch, reference="import torch\n\ndef run(x, w):\n    return torch.matmul(x, w)\n"),
                              {"B": 2})
        self.assertEqual(r["op"], "matmul")
        self.assertNotIn("flags", r)

    def test_a_product_with_an_epilogue_is_not_a_plain_gemm(self):
        r, _ = self.recognize(dict(GEMM, reference="import torch\n\ndef run(A, B):\n    return torch.triu(A @ B)\n"),
                              {"M": 4, "N": 4, "K": 4})
        self.assertEqual(r["op"], "gemm+epilogue")

    def test_a_linear_with_a_pointwise_epilogue_has_its_operands_and_expression(self):
        linear = {"name": "lin", "axes": {"M": {"type": "var"}},
                  "inputs": {"x": {"shape": ["M", "6"], "dtype": "float32"}, "weight": {"shape": ["6", "6"], "dtype": "float32"},
                             "bias": {"shape": ["6"], "dtype": "float32"}},
                  "outputs": {"y": {"shape": ["M", "6"], "dtype": "float32"}}}
        # A Linear (addmm of x, weight^T and the bias), scaled, leaky, and the bias used once more after the activation.
        body = ("import torch\nimport torch.nn.functional as F\n\ndef run(x, weight, bias):\n"
                "    y = F.linear(x, weight, bias) * 2.0\n    return F.leaky_relu(y, 0.1) - 0.25 * bias\n")
        r, _ = self.recognize(dict(linear, reference=body), {"M": 3})
        self.assertEqual((r["op"], r["family"]), ("gemm+epilogue", "gemm"))
        # The weight is square: which operand is transposed comes from the graph (t(weight)), not the shapes.
        self.assertEqual(r["operands"], {"A": "x", "B": "weight", "layout_a": "row", "layout_b": "col", "bias": "bias"})
        import re
        py = _ternary(re.sub(r"(\d)f\b", r"\1", r["expression"]).replace("fmaxf", "max").replace("fminf", "min"))
        for xv, bv in ((-2.0, 0.5), (0.3, -1.0), (1.5, 0.25)):
            want = float(torch.nn.functional.leaky_relu(torch.tensor([(xv + bv) * 2.0]), 0.1)[0] - 0.25 * bv)
            got = eval(py, {"x": xv, "b": bv})  # noqa: S307 - test-only, an expression this module wrote
            self.assertAlmostEqual(got, want, places=5, msg=r["expression"])
        # The same product written with transpose(0, 1) and permute: the weight still read transposed.
        for i, w in enumerate(["weight.transpose(0, 1)", "weight.permute(1, 0)", "weight.t().transpose(1, 0).t()"]):
            body = f"import torch\n\ndef run(x, weight, bias):\n    return torch.relu(x @ {w} + bias)\n"
            r, _ = self.recognize(dict(linear, name=f"tr{i}", reference=body), {"M": 2})
            self.assertEqual(r["operands"]["layout_b"], "col", w)
        # mm of untransposed operands, then a parameter vector added: the bias is found by its shape [N].
        body = "import torch\n\ndef run(x, weight, bias):\n    return torch.relu(x @ weight + bias)\n"
        r, _ = self.recognize(dict(linear, name="mmadd", reference=body), {"M": 4})
        self.assertEqual(r["operands"]["layout_b"], "row")
        self.assertEqual(r["expression"], "fmaxf((x + b), 0.0f)")

    def test_rows_times_a_matrix_with_a_residual(self):
        # SOL-ExecBench's o_proj + residual: x [B, S, K] read as [B*S, K] rows, the product viewed back to [B, S, N]
        # and the residual (the output's whole shape) added to it: operands A (rank 3), B, residual; x is A @ B + R.
        rows = {"name": "rows", "axes": {"B": {"type": "var"}},
                "inputs": {"x": {"shape": ["B", "3", "6"], "dtype": "float32"}, "w": {"shape": ["5", "6"], "dtype": "float32"},
                           "b": {"shape": ["5"], "dtype": "float32"}, "r": {"shape": ["B", "3", "5"], "dtype": "float32"}},
                "outputs": {"y": {"shape": ["B", "3", "5"], "dtype": "float32"}}}
        head = "import torch\nimport torch.nn.functional as F\n\ndef run(x, w, b, r):\n"
        r, _ = self.recognize(dict(rows, reference=head + "    return torch.matmul(x, w.t()) + b + r\n"), {"B": 2})
        self.assertEqual(r["op"], "gemm+epilogue")
        self.assertEqual(r["operands"], {"A": "x", "B": "w", "layout_a": "row", "layout_b": "col", "residual": "r",
                                         "bias": "b"})
        self.assertEqual(r["expression"], "(x + b)")   # (A @ B + r) + b: the residual is in x
        r, _ = self.recognize(dict(rows, name="rows2", reference=head + "    return r + F.linear(x, w, b)\n"), {"B": 2})
        self.assertEqual((r["operands"]["residual"], r["operands"]["bias"], r["expression"]), ("r", "b", "(x + b)"))
        # A residual added after the activation is not A @ B + R: not fused (the gemm binding adds R to the product);
        # the one output is cut as a graph instead: the product (with its bias), then the activation and the add.
        r, _ = self.recognize(dict(rows, name="rows3", reference=head + "    return torch.relu(F.linear(x, w, b)) + r\n"),
                              {"B": 2})
        self.assertEqual([(s["family"], s["output"]) for s in r["stages"]], [("gemm", "khive_t1"), ("elementwise", "y")])
        self.assertNotIn("residual", r["stages"][0]["operands"])
        self.assertEqual(r["stages"][1]["expression"], "(fmaxf(khive_t1, 0.0f) + r)")
        # A bare product of rows: its operands (the binder reads A's leading axes as M).
        bare = dict(rows, name="rows4", inputs={k: v for k, v in rows["inputs"].items() if k in ("x", "w")},
                    reference="import torch\n\ndef run(x, w):\n    return x @ w.t()\n")
        r, _ = self.recognize(bare, {"B": 2})
        self.assertEqual((r["op"], r["operands"]), ("matmul", {"A": "x", "B": "w", "layout_a": "row", "layout_b": "col"}))

    def test_a_gated_activation_and_a_gated_mlp(self):
        import math
        gated = {"name": "gated", "axes": {"T": {"type": "var"}},
                 "inputs": {"x": {"shape": ["T", "8"], "dtype": "float32"}},
                 "outputs": {"y": {"shape": ["T", "4"], "dtype": "float32"}}}
        head = "import torch\nimport torch.nn.functional as F\n\ndef run(x):\n"
        silu = lambda g: g / (1 + math.exp(-g))   # noqa: E731
        gelu = lambda g: 0.5 * g * (1 + math.erf(g / math.sqrt(2)))   # noqa: E731
        for i, (body, fn) in enumerate([("    g, u = x.chunk(2, dim=-1)\n    return F.silu(g) * u\n", silu),
                                        ("    return F.gelu(x[..., :4]) * x[..., 4:]\n", gelu),
                                        ("    g, u = torch.split(x, [4, 4], dim=1)\n    return u * torch.sigmoid(g) * g\n", silu)]):
            r, _ = self.recognize(dict(gated, name=f"gated{i}", reference=head + body), {"T": 3})
            self.assertEqual((r["op"], r["family"]), ("gated", "gated"), body)
            py = r["expression"].replace("expf", "math.exp").replace("erff", "math.erf")
            import re
            py = re.sub(r"(\d)f\b", r"\1", py)
            for gv, uv in ((-1.5, 0.5), (0.3, -2.0), (2.0, 1.25)):
                self.assertAlmostEqual(eval(py, {"math": math, "gate": gv, "up": uv}), fn(gv) * uv, places=5,  # noqa: S307
                                       msg=r["expression"])
        # Halves of another axis, or unequal parts, are not gate and up.
        for i, body in enumerate(["    g, u = x.chunk(2, dim=0)\n    return g * u\n",
                                  "    return x[..., :3].sum(-1, keepdim=True) * x[..., 4:]\n"]):
            d = dict(gated, name=f"notgated{i}", reference=head + body)
            if i == 0:
                d["outputs"] = {"y": {"shape": ["1", "8"], "dtype": "float32"}}
            r, _ = self.recognize(d, {"T": 2})
            self.assertNotEqual(r["op"], "gated", body)
        # A gated MLP: one gate-and-up projection of [B, S, H] rows, SwiGLU, the down projection: three stages.
        mlp = {"name": "mlp", "axes": {"B": {"type": "var"}},
               "inputs": {"x": {"shape": ["B", "3", "6"], "dtype": "float32"},
                          "w_gu": {"shape": ["8", "6"], "dtype": "float32"}, "w_d": {"shape": ["6", "4"], "dtype": "float32"}},
               "outputs": {"y": {"shape": ["B", "3", "6"], "dtype": "float32"}}}
        body = ("import torch\nimport torch.nn.functional as F\n\ndef run(x, w_gu, w_d):\n"
                "    gate, up = F.linear(x, w_gu).chunk(2, dim=-1)\n    return F.linear(F.silu(gate) * up, w_d)\n")
        r, _ = self.recognize(dict(mlp, reference=body), {"B": 2})
        self.assertEqual(r["op"], "chain")
        self.assertEqual([(s["op"], s["family"]) for s in r["stages"]],
                         [("matmul", "gemm"), ("gated", "gated"), ("matmul", "gemm")])
        self.assertEqual(r["stages"][0]["operands"], {"A": "x", "B": "w_gu", "layout_a": "row", "layout_b": "col"})
        self.assertEqual(r["stages"][1]["inputs"], ["khive_t1"])
        self.assertEqual(r["stages"][2]["operands"]["A"], "khive_t2")

    def test_what_a_gemm_epilogue_cannot_fuse_is_left_unfused(self):
        two = {"name": "two", "axes": {"M": {"type": "var"}},
               "inputs": {"x": {"shape": ["M", "5"], "dtype": "float32"}, "w": {"shape": ["5", "7"], "dtype": "float32"},
                          "v": {"shape": ["M", "1"], "dtype": "float32"}},
               "outputs": {"y": {"shape": ["M", "7"], "dtype": "float32"}}}
        # Each alone keeps the product from fusing: v only where the case is about v.
        # (a row op after the product is a chain of two stages: test_a_product_then_a_row_op_is_a_chain)
        for i, (args, body) in enumerate([("x, w", "torch.relu(x @ w.reshape(7, 5).t())"),  # the weight's data reinterpreted
                                          ("x, w, v", "(x @ w) * v"),                       # a per-row vector, not a bias
                                          ("x, w", "(x @ w) + (x @ w).sum(dim=1, keepdim=True)")]):   # a reduction
            d = dict(two, name=f"unfused{i}", reference=f"import torch\n\ndef run({args}):\n    return {body}\n")
            if "v" not in args:
                d["inputs"] = {k: v for k, v in two["inputs"].items() if k != "v"}
            r, _ = self.recognize(d, {"M": 3})
            if i == 0:
                self.assertEqual(r["op"], "gemm+epilogue", body)
                self.assertNotIn("operands", r, body)
                continue
            # the one output cut as a graph of stages (test_recognize_cut.py): the product alone, the rest after it
            self.assertEqual(r["op"], "chain", body)
            self.assertEqual([s["family"] for s in r["stages"]],
                             ["gemm", "elementwise"] if i == 1 else ["gemm", "gemm", "reduce", "elementwise"], body)
            self.assertNotIn("expression", r["stages"][0], body)

    def test_a_convolution_has_its_options_operands_and_epilogue(self):
        conv = {"name": "cv", "axes": {"N": {"type": "var"}},
                "inputs": {"x": {"shape": ["N", "8", "9", "7"], "dtype": "float32"},
                           "w": {"shape": ["12", "4", "3", "3"], "dtype": "float32"},
                           "b": {"shape": ["12"], "dtype": "float32"}, "s": {"shape": ["12", "1", "1"], "dtype": "float32"}},
                "outputs": {"y": {"shape": ["N", "12", "5", "7"], "dtype": "float32"}}}
        body = ("import torch\nimport torch.nn.functional as F\n\ndef run(x, w, b, s):\n"
                "    return torch.relu(F.conv2d(x, w, b, stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2)) * s\n")
        r, _ = self.recognize(dict(conv, reference=body), {"N": 2})
        self.assertEqual((r["op"], r["family"]), ("conv", "conv"))
        self.assertEqual(r["conv"], {"stride": [2, 1], "padding": [1, 2], "dilation": [1, 2], "output_padding": [0, 0],
                                     "groups": 2, "transposed": False})
        self.assertEqual(r["operands"], {"x": "x", "weight": "w", "bias": "b", "vector": "s"})
        self.assertEqual(r["expression"], "(fmaxf(x, 0.0f) * b)")
        # A KernelBench-style module (its parameters as inputs) with a transposed 1-D convolution and no epilogue.
        convt = {"name": "cvt", "axes": {"N": {"type": "var"}},
                 "inputs": {"x": {"shape": ["N", "3", "7"], "dtype": "float32"}, "weight": {"shape": ["3", "5", "4"], "dtype": "float32"}},
                 "outputs": {"y": {"shape": ["N", "5", "21"], "dtype": "float32"}}}
        body = ("import torch\n\nclass Model(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                "        self.c = torch.nn.ConvTranspose1d(3, 5, 4, stride=3, padding=2, dilation=2, bias=False)\n"
                "    def forward(self, x):\n        return self.c(x)\n\n_m = Model()\n\n"
                "def run(x, weight):\n    return torch.func.functional_call(_m, {'c.weight': weight}, (x,))\n")
        r, _ = self.recognize(dict(convt, reference=body), {"N": 2})
        self.assertEqual(r["op"], "conv")
        self.assertEqual(r["conv"]["transposed"], True)
        self.assertEqual((r["conv"]["stride"], r["conv"]["padding"], r["conv"]["dilation"]), ([3], [2], [2]))
        self.assertEqual(r["operands"], {"x": "x", "weight": "weight"})
        self.assertNotIn("expression", r)

    def test_a_tensor_constant_in_the_epilogue_is_its_number(self):
        # torch.min(x, torch.tensor(0.5)) as KernelBench level 2 writes it: a traced constant (get_attr), 0-d.
        conv = {"name": "cvm", "axes": {"N": {"type": "var"}},
                "inputs": {"x": {"shape": ["N", "4", "6", "6"], "dtype": "float32"}, "w": {"shape": ["6", "4", "3", "3"], "dtype": "float32"}},
                "outputs": {"y": {"shape": ["N", "6", "4", "4"], "dtype": "float32"}}}
        body = ("import torch\nimport torch.nn.functional as F\n\ndef run(x, w):\n"
                "    y = torch.min(F.conv2d(x, w), torch.tensor(0.5))\n    return torch.maximum(y, torch.tensor(-1.0)) * 2.0\n")
        r, _ = self.recognize(dict(conv, reference=body), {"N": 2})
        self.assertEqual(r["op"], "conv")
        self.assertEqual(r["expression"], "(fmaxf(fminf(x, 0.5f), -1.0f) * 2.0f)")

    def test_a_convolution_with_more_than_a_pointwise_epilogue_is_left_unfused(self):
        conv = {"name": "cvp", "axes": {"N": {"type": "var"}},
                "inputs": {"x": {"shape": ["N", "4", "8", "8"], "dtype": "float32"}, "w": {"shape": ["6", "4", "3", "3"], "dtype": "float32"}},
                "outputs": {"y": {"shape": ["N", "6", "3", "3"], "dtype": "float32"}}}
        # (a pool after the convolution is a chain: test_a_convolution_then_a_norm_or_pool_is_a_chain)
        for i, tail in enumerate(["F.conv2d(x, w)[:, :, :3, :3] * 2", "F.conv2d(x, w) + F.conv2d(x, w).mean()",
                                  "F.conv2d(x, w.reshape(6, 4, 9).reshape(6, 4, 3, 3).flip(2)) * 2"]):
            body = f"import torch\nimport torch.nn.functional as F\n\ndef run(x, w):\n    return {tail}\n"
            out = {"y": {"shape": ["N", "6", "6", "6"] if i else ["N", "6", "3", "3"], "dtype": "float32"}}
            r, _ = self.recognize(dict(conv, name=f"cvp{i}", reference=body, outputs=out), {"N": 1})
            if i == 0:   # the slice read through a view by a pointwise stage after the convolution
                self.assertEqual([s["family"] for s in r["stages"]], ["conv", "elementwise"], tail)
                self.assertNotIn("expression", r["stages"][0], tail)
                self.assertIn("khive_t1", r["stages"][1]["views"], tail)
                continue
            if i == 1:   # the mean over every axis a reduce stage, added in the second convolution's epilogue
                self.assertEqual([s["family"] for s in r["stages"]], ["conv", "reduce", "conv"], tail)
                self.assertEqual((r["stages"][1]["op"], r["stages"][1]["dim"]), ("mean", [0, 1, 2, 3]), tail)
                self.assertIn(r["stages"][1]["output"], r["stages"][2]["inputs"], tail)
                continue
            self.assertEqual(r["family"], "conv", tail)
            self.assertNotIn("conv", r, tail)

    CONV = {"name": "ch", "axes": {"N": {"type": "var"}},
            "inputs": {"x": {"shape": ["N", "4", "9", "9"], "dtype": "float32"},
                       "w": {"shape": ["6", "4", "3", "3"], "dtype": "float32"}, "b": {"shape": ["6"], "dtype": "float32"}},
            "outputs": {"y": {"shape": ["N", "6", "7", "7"], "dtype": "float32"}}}

    def test_a_convolution_then_a_norm_or_pool_is_a_chain(self):
        head = "import torch\nimport torch.nn.functional as F\n\ndef run(x, w, b):\n    t = torch.relu(F.conv2d(x, w, b))\n"
        for i, (tail, out, families) in enumerate([
                # an instance norm, then pointwise ops of its result: three stages, the last an elementwise one
                ("return F.instance_norm(t) / 2.0", ["N", "6", "7", "7"], ["conv", "norm", "elementwise"]),
                ("return F.max_pool2d(t, 2)", ["N", "6", "3", "3"], ["conv", "pool"]),
                ("return torch.tanh(F.avg_pool2d(t, 3)) * 2.0", ["N", "6", "2", "2"], ["conv", "pool", "elementwise"])]):
            d = dict(self.CONV, name=f"ch{i}", reference=head + "    " + tail + "\n",
                     outputs={"y": {"shape": out, "dtype": "float32"}})
            r, _ = self.recognize(d, {"N": 2})
            self.assertEqual((r["op"], r["family"]), ("chain", "chain"), tail)
            self.assertEqual([s["family"] for s in r["stages"]], families, tail)
            conv = r["stages"][0]
            self.assertEqual(conv["operands"], {"x": "x", "weight": "w", "bias": "b"}, tail)
            self.assertEqual(conv["expression"], "fmaxf(x, 0.0f)", tail)
            # each stage reads the one before it and writes khive_t<i>; the last writes the task's output (None)
            self.assertEqual(conv["inputs"], ["x", "w", "b"], tail)
            for k, s in enumerate(r["stages"][1:], start=1):
                self.assertEqual(s["inputs"][0], f"khive_t{k}", tail)
            self.assertEqual([s["output"] for s in r["stages"]],
                             [f"khive_t{k + 1}" for k in range(len(families) - 1)] + [None], tail)
        self.assertEqual(r["stages"][1]["pool"]["kernel"], [3, 3])
        self.assertEqual(r["stages"][2]["flags"], ["named_inputs", "torch_broadcast"])
        self.assertEqual(r["stages"][2]["expression"], "(tanhf(khive_t2) * 2.0f)")

    def test_a_product_then_a_row_op_is_a_chain(self):
        lin = {"name": "lin", "axes": {"M": {"type": "var"}},
               "inputs": {"x": {"shape": ["M", "5"], "dtype": "float32"}, "w": {"shape": ["7", "5"], "dtype": "float32"},
                          "b": {"shape": ["7"], "dtype": "float32"}}}
        for i, (tail, out, families, second) in enumerate([
                ("torch.softmax(torch.sigmoid(F.linear(x, w, b)), dim=1)", ["M", "7"], ["gemm", "softmax"], "softmax"),
                ("F.linear(x, w, b).sum(dim=1, keepdim=True) * 3.0", ["M", "1"], ["gemm", "reduce", "elementwise"], "sum"),
                ("F.group_norm(F.linear(x, w, b), 7)", ["M", "7"], ["gemm", "norm"], "norm")]):
            d = dict(lin, name=f"lin{i}", outputs={"y": {"shape": out, "dtype": "float32"}},
                     reference=f"import torch\nimport torch.nn.functional as F\n\ndef run(x, w, b):\n    return {tail}\n")
            r, _ = self.recognize(d, {"M": 3})
            self.assertEqual(r["op"], "chain", tail)
            self.assertEqual([s["family"] for s in r["stages"]], families, tail)
            self.assertEqual(r["stages"][1]["op"], second, tail)
            g = r["stages"][0]
            self.assertEqual(g["operands"], {"A": "x", "B": "w", "layout_a": "row", "layout_b": "col", "bias": "b"}, tail)
        self.assertEqual(r["stages"][1]["norm"]["groups"], 7)

    def test_what_no_chain_of_stages_computes_is_left_alone(self):
        lin = {"name": "nc", "axes": {"M": {"type": "var"}},
               "inputs": {"x": {"shape": ["M", "5"], "dtype": "float32"}, "w": {"shape": ["7", "5"], "dtype": "float32"}},
               "outputs": {"y": {"shape": ["M", "7"], "dtype": "float32"}}}
        # (the product read again past the next stage, softmax(t) + t, is a graph of stages: test_recognize_cut.py)
        for i, body in enumerate([
                "return torch.cumsum(x @ w.t(), dim=0)"]):                   # a scan is no stage
            r, _ = self.recognize(dict(lin, name=f"nc{i}", reference=f"import torch\n\ndef run(x, w):\n    {body}\n"),
                                  {"M": 3})
            self.assertNotEqual(r["op"], "chain", body)
            self.assertNotIn("stages", r, body)

    def test_a_pooling_has_its_options(self):
        for i, (body, shape, out, want) in enumerate([
                ("F.max_pool1d(x, 8, 1, 4, 3)", ["N", "3", "40"], ["N", "3", "27"],
                 {"op": "max", "kernel": [8], "stride": [1], "padding": [4], "dilation": [3], "ceil_mode": False}),
                ("F.max_pool3d(x, 3, 2, 1, 2, ceil_mode=True)", ["N", "2", "7", "6", "5"], ["N", "2", "3", "3", "2"],
                 {"op": "max", "kernel": [3, 3, 3], "stride": [2, 2, 2], "padding": [1, 1, 1], "dilation": [2, 2, 2],
                  "ceil_mode": True}),
                ("F.avg_pool2d(x, (3, 2), 2, 1, ceil_mode=True, count_include_pad=False)", ["N", "2", "10", "9"],
                 ["N", "2", "6", "5"],
                 {"op": "avg", "kernel": [3, 2], "stride": [2, 2], "padding": [1, 1], "dilation": [1, 1],
                  "ceil_mode": True, "count_include_pad": False, "divisor_override": None})]):
            d = {"name": f"pl{i}", "axes": {"N": {"type": "var"}}, "inputs": {"x": {"shape": shape, "dtype": "float32"}},
                 "outputs": {"y": {"shape": out, "dtype": "float32"}},
                 "reference": f"import torch\nimport torch.nn.functional as F\n\ndef run(x):\n    return {body}\n"}
            r, _ = self.recognize(d, {"N": 2})
            self.assertEqual((r["op"], r["family"]), (want["op"] + "_pool", "pool"), body)
            self.assertEqual(r["pool"], want, body)
        # The indices returned, or an op after the pool: not a pooling the templates compute.
        for i, body in enumerate(["F.max_pool2d(x, 2, return_indices=True)[1]", "F.max_pool2d(x, 2) * 2"]):
            d = {"name": f"np{i}", "axes": {"N": {"type": "var"}}, "inputs": {"x": {"shape": ["N", "2", "8", "8"], "dtype": "float32"}},
                 "outputs": {"y": {"shape": ["N", "2", "4", "4"], "dtype": "int64" if i == 0 else "float32"}},
                 "reference": f"import torch\nimport torch.nn.functional as F\n\ndef run(x):\n    return {body}\n"}
            r, _ = self.recognize(d, {"N": 1})
            self.assertNotIn("pool", r, body)

    def normalisation(self, name, body, shape, params=()):
        """recognize(run(x, *params) = body) for x of `shape` (axes A0, A1, ... of sizes 2, 6, 3, 4, ...); params:
        (name, shape as axis indices of x) inputs."""
        sizes = [2, 6, 3, 4, 5][:len(shape)]
        axes = {f"A{i}": {"type": "var"} for i in range(len(shape))}
        inputs = {"x": {"shape": [f"A{i}" for i in range(len(shape))], "dtype": "float32"}}
        for pname, pax in params:
            inputs[pname] = {"shape": [f"A{i}" for i in pax], "dtype": "float32"}
        d = {"name": name, "axes": axes, "inputs": inputs,
             "outputs": {"y": {"shape": inputs["x"]["shape"], "dtype": "float32"}},
             "reference": "import torch\nimport torch.nn.functional as F\n\ndef run(" +
                          ", ".join(["x"] + [p for p, _ in params]) + "):\n    return " + body + "\n"}
        r, _ = self.recognize(d, {f"A{i}": v for i, v in enumerate(sizes)})
        return r

    def test_a_normalisation_has_its_statistics_axes_and_affine(self):
        wb = (("w", [1]), ("b", [1]))
        cases = [
            ("F.batch_norm(x, None, None, w, b, training=True, eps=1e-3)", 4, wb,
             {"stat": "var", "axes": [0, 2, 3], "groups": 1, "eps": 1e-3, "affine_axes": [1]}, ["w", "b"]),
            ("torch.nn.BatchNorm1d(6)(x)", 3, (),   # the module's own running buffers; its weight is not an input
             None, None),
            ("F.instance_norm(x)", 4, (), {"stat": "var", "axes": [2, 3], "groups": 1, "eps": 1e-5}, []),
            ("F.instance_norm(x, weight=w, bias=b, eps=1e-4)", 5, wb,
             {"stat": "var", "axes": [2, 3, 4], "groups": 1, "eps": 1e-4, "affine_axes": [1]}, ["w", "b"]),
            ("F.group_norm(x, 3, w, b)", 4, wb,
             {"stat": "var", "axes": [1, 2, 3], "groups": 3, "eps": 1e-5, "affine_axes": [1]}, ["w", "b"]),
            ("F.layer_norm(x, (6, 3, 4), w, b)", 4, (("w", [1, 2, 3]), ("b", [1, 2, 3])),
             {"stat": "var", "axes": [1, 2, 3], "groups": 1, "eps": 1e-5, "affine_axes": [1, 2, 3]}, ["w", "b"]),
            ("F.layer_norm(x, (4,), w)", 4, (("w", [3]),),
             {"stat": "var", "axes": [3], "groups": 1, "eps": 1e-5, "affine_axes": [3]}, ["w"]),
            ("x / torch.sqrt(torch.mean(x ** 2, dim=1, keepdim=True) + 1e-5)", 4, (),
             {"stat": "rms", "axes": [1], "groups": 1, "eps": 1e-5}, []),
            ("x * torch.rsqrt(x.pow(2).mean((-2, -1), keepdim=True) + 1e-6)", 4, (),
             {"stat": "rms", "axes": [2, 3], "groups": 1, "eps": 1e-6}, []),
            ("x / torch.mean(torch.abs(x), dim=1, keepdim=True)", 2, (),
             {"stat": "mean_abs", "axes": [1], "groups": 1, "eps": 0.0}, []),
            ("x / torch.norm(x, p=2, dim=1, keepdim=True)", 2, (),
             {"stat": "l2", "axes": [1], "groups": 1, "eps": 0.0}, []),
            ("x / torch.norm(x, p='fro')", 4, (), {"stat": "l2", "axes": [0, 1, 2, 3], "groups": 1, "eps": 0.0}, []),
            ("x / torch.sqrt((x * x).sum(dim=0, keepdim=True) + 0.5)", 3, (),
             {"stat": "l2", "axes": [0], "groups": 1, "eps": 0.5}, []),
        ]
        for i, (body, rank, params, want, operands) in enumerate(cases):
            r = self.normalisation(f"norm{i}", body, list(range(rank)), params)
            self.assertEqual(r["family"], "norm", body)
            self.assertEqual(r.get("norm"), want, body)
            if want is not None:
                self.assertEqual(r["op"], "norm", body)
                self.assertEqual(r["operands"], dict({"x": "x"}, **{k: p for k, p in zip(("weight", "bias"), operands)}),
                                 body)

    def test_what_the_norm_templates_do_not_compute_is_left_without_a_description(self):
        wb = (("w", [1]), ("b", [1]))
        for i, (body, rank, params) in enumerate([
                ("F.batch_norm(x, torch.zeros(6), torch.ones(6), w, b, training=False)", 4, wb),   # running stats
                ("F.normalize(x, dim=1)", 2, ()),                                   # max(norm, eps)
                ("x / torch.mean(torch.abs(x), dim=1)", 2, ()),                     # no keepdim: broadcast elsewhere
                ("torch.relu(F.group_norm(x, 3, w, b))", 4, wb),                    # an op after it
                ("F.layer_norm(x, (4,)) + w", 4, (("w", [3]),)),
                ("x / torch.sqrt(torch.mean(x ** 3, dim=1, keepdim=True) + 1e-5)", 4, ()),
                ("x * torch.sqrt(torch.mean(x ** 2, dim=1, keepdim=True))", 4, ()),
                ("(x.view(2, -1) / x.view(2, -1).abs().mean(1, keepdim=True)).view(2, 6, 3)", 3, ())]):
            r = self.normalisation(f"nonorm{i}", body, list(range(rank)), params)
            self.assertNotIn("norm", r, body)

    def test_softmax_and_log_softmax(self):
        r, _ = self.recognize(dict(ROWS, name="sm", reference="import torch\n\ndef run(x):\n    return torch.softmax(x, dim=1)\n"),
                              {"T": 2, "H": 6})
        self.assertEqual(r["op"], "softmax")
        r, _ = self.recognize(dict(ROWS, name="lsm", reference="import torch\n\ndef run(x):\n    return torch.log_softmax(x, dim=-1)\n"),
                              {"T": 2, "H": 6})
        self.assertEqual(r["op"], "log_softmax")

    def test_activations_by_name_and_parameterised_ones_by_expression(self):
        r, _ = self.recognize(unary("relu", "def run(x):\n    return torch.relu(x)\n"), {"N": 7})
        self.assertEqual((r["op"], r["family"]), ("relu", "activation"))
        r, _ = self.recognize(unary("selu", "def run(x):\n    return torch.selu(x)\n"), {"N": 7})
        self.assertEqual(r["op"], "elementwise")   # elu with selu's scale and alpha: not plain elu
        self.assertIn("1.0507", r["expression"])
        r, _ = self.recognize(unary("leaky", "def run(x):\n    return F.leaky_relu(x, negative_slope=0.2)\n"), {"N": 7})
        self.assertEqual(r["op"], "elementwise")
        self.assertIn("0.2f", r["expression"])
        r, _ = self.recognize(unary("gelu_tanh", "def run(x):\n    return F.gelu(x, approximate='tanh')\n"), {"N": 7})
        self.assertNotEqual(r["op"], "gelu")       # the erf form would be wrong for it

    def test_an_elementwise_chain_has_its_exact_expression(self):
        r, _ = self.recognize(unary("chain", "def run(x):\n    return torch.clamp(x * 2.0 + 1.0, min=-1.0, max=3.0) / (1 + x.abs())\n"),
                              {"N": 5})
        self.assertEqual((r["op"], r["family"]), ("elementwise", "elementwise"))
        self.expression_matches(r["expression"], lambda t: torch.clamp(t * 2.0 + 1.0, min=-1.0, max=3.0) / (1 + t.abs()))

    def test_a_scalar_input_is_never_baked_into_an_expression(self):
        # Traced again with the scalar as a 0-d tensor, the expression names it (kb1_005: A * s).
        d = unary("scale", "def run(x, s):\n    return x * s + 1.0\n")
        d["inputs"]["s"] = {"shape": None, "dtype": "float32"}
        r, _ = self.recognize(d, {"N": 4})
        self.assertEqual((r["op"], r["expression"], r["flags"]),
                         ("elementwise", "((x * s) + 1.0f)", ["named_inputs", "torch_broadcast"]))
        # A branch on the scalar's value: the two tracings differ, so nothing is written (nor baked).
        d = unary("branch", "def run(x, s):\n    return x * s if s > 0 else x - s\n")
        d["inputs"]["s"] = {"shape": None, "dtype": "float32"}
        r, _ = self.recognize(d, {"N": 4})
        self.assertEqual(r["op"], "elementwise")
        self.assertNotIn("expression", r)

    def test_several_tensor_inputs_have_an_expression_over_their_names(self):
        two = {"name": "rows", "axes": {"N": {"type": "var"}, "M": {"type": "var"}},
               "inputs": {"A": {"shape": ["N"], "dtype": "float32"}, "B": {"shape": ["N", "M"], "dtype": "float32"}},
               "outputs": {"C": {"shape": ["N", "M"], "dtype": "float32"}}}
        # kb1_012's diag(A) @ B as a row scaling: A broadcast along a run of C's axes.
        r, _ = self.recognize(dict(two, reference="import torch\n\ndef run(A, B):\n    return A.unsqueeze(1) * B + B\n"),
                              {"N": 3, "M": 5})
        self.assertEqual((r["op"], r["expression"], r["flags"]), ("elementwise", "((A * B) + B)", ["named_inputs"]))
        # An input read transposed, sliced or selected is not "A op B" at the same index: it is read through its view
        # (recognize_view.py), each such input's own; the others as stored.
        sq = dict(two, axes={"N": {"type": "var"}}, inputs={"A": {"shape": ["N", "N"], "dtype": "float32"}, "B": {"shape": ["N", "N"], "dtype": "float32"}},
                  outputs={"C": {"shape": ["N", "N"], "dtype": "float32"}})
        for i, (body, viewed, want) in enumerate([
                ("A.t() * B", "A", lambda x: x.t()), ("A * B.transpose(0, 1)", "B", lambda x: x.t()),
                ("A[:, :1] * B", "A", lambda x: x[:, :1].expand(-1, x.shape[1])),
                ("A.permute(1, 0) + B", "A", lambda x: x.t())]):
            r, _ = self.recognize(dict(sq, name=f"t{i}", reference=f"import torch\n\ndef run(A, B):\n    return {body}\n"),
                                  {"N": 4})
            self.assertEqual((r["op"], r["flags"], list(r["views"])), ("elementwise", ["named_inputs"], [viewed]), body)
            for n in (4, 7):
                x = torch.randn(n, n)
                self.assertTrue(torch.equal(self.read_view(r["views"][viewed], x, (n, n)), want(x)), body)

    def test_rmsnorm_with_its_eps(self):
        d = {"name": "rms", "axes": {"T": {"type": "var"}, "H": {"type": "var"}},
             "inputs": {"x": {"shape": ["T", "H"], "dtype": "float32"}, "w": {"shape": ["H"], "dtype": "float32"}},
             "outputs": {"y": {"shape": ["T", "H"], "dtype": "float32"}},
             "reference": "import torch\n\ndef run(x, w):\n    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w\n"}
        r, _ = self.recognize(d, {"T": 3, "H": 8})
        self.assertEqual(r["op"], "rmsnorm")
        self.assertEqual(r["eps"], 1e-5)

    def test_rmsnorm_of_a_residual_sum_names_its_operands_and_a_scalar_eps(self):
        # SOL L1 069 / FlashInfer's fused_add_rmsnorm: the sum rounded to bf16 or taken in fp32, weight on either side.
        ins = {"h": {"shape": ["B", "S", "H"], "dtype": "bfloat16"}, "res": {"shape": ["B", "S", "H"], "dtype": "bfloat16"},
               "w": {"shape": ["H"], "dtype": "bfloat16"}}
        out = {"y": {"shape": ["B", "S", "H"], "dtype": "bfloat16"}}
        axes = {"B": {"type": "var"}, "S": {"type": "var"}, "H": {"type": "var"}}
        bodies = {
            "bf16sum": ("h, res, w, eps", "    x = (res + h).float()\n"
                        "    v = x.pow(2).mean(-1, keepdim=True)\n"
                        "    return w * (x * torch.rsqrt(v + eps)).to(torch.bfloat16)\n"),
            "fp32sum": ("h, res, w", "    x = h.to(torch.float32) + res.to(torch.float32)\n"
                        "    y = (x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-6)) * w.to(torch.float32)\n"
                        "    return y.to(h.dtype)\n"),
        }
        for name, (args, body) in bodies.items():
            inputs = dict(ins, **({"eps": {"shape": None, "dtype": "float32"}} if "eps" in args else {}))
            d = {"name": name, "axes": axes, "inputs": inputs, "outputs": out,
                 "reference": f"import torch\n\ndef run({args}):\n{body}"}
            r, _ = self.recognize(d, {"B": 2, "S": 3, "H": 8} if "eps" not in args else {"B": 2, "S": 3, "H": 8})
            self.assertEqual((r["op"], r["family"]), ("residual_rmsnorm", "rowop"), name)
            self.assertEqual({r["operands"]["x"], r["operands"]["residual"]}, {"h", "res"}, name)
            self.assertEqual(r["operands"]["weight"], "w", name)
            self.assertEqual(r["operands"].get("eps"), "eps" if "eps" in args else None, name)

    def test_a_post_norm_residual_is_a_chain_of_the_norm_and_the_add(self):
        # SOL L1 033: rmsnorm(x) * w, rounded to bf16, then + residual: rowop rmsnorm -> elementwise add.
        d = {"name": "post", "axes": {"B": {"type": "var"}, "H": {"type": "var"}},
             "inputs": {"s": {"shape": ["B", "H"], "dtype": "bfloat16"}, "res": {"shape": ["B", "H"], "dtype": "bfloat16"},
                        "w": {"shape": ["H"], "dtype": "bfloat16"}, "eps": {"shape": None, "dtype": "float32"}},
             "outputs": {"y": {"shape": ["B", "H"], "dtype": "bfloat16"}},
             "reference": "import torch\n\ndef run(s, res, w, eps):\n    x = s.float()\n"
                          "    n = w.float() * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))\n"
                          "    return res + n.to(s.dtype)\n"}
        r, _ = self.recognize(d, {"B": 3, "H": 8})
        self.assertEqual(r["op"], "chain")
        norm, add = r["stages"]
        self.assertEqual((norm["op"], norm["family"]), ("rmsnorm", "rowop"))
        self.assertEqual(norm["operands"], {"x": "s", "weight": "w", "eps": "eps"})
        self.assertEqual(norm["inputs"], ["s", "w", "eps"])
        self.assertEqual((add["family"], add["expression"], add["inputs"]), ("elementwise", "(khive_t1 + res)",
                                                                               ["khive_t1", "res"]))
        # A residual-added norm followed by more than the add is not this chain.
        d2 = dict(d, name="post2", reference=d["reference"].replace("return res + n.to(s.dtype)",
                                                                     "return (res + n.to(s.dtype)) * 2"))
        r2, _ = self.recognize(d2, {"B": 3, "H": 8})
        self.assertFalse(r2["op"] == "chain" and r2["stages"][0].get("family") == "rowop")

    def test_what_is_not_an_rmsnorm_of_the_last_axis_is_not_bound_as_one(self):
        d = {"axes": {"T": {"type": "var"}, "H": {"type": "var"}},
             "inputs": {"x": {"shape": ["T", "H"], "dtype": "float32"}, "r": {"shape": ["T", "H"], "dtype": "float32"},
                        "w": {"shape": ["H"], "dtype": "float32"}},
             "outputs": {"y": {"shape": ["T", "H"], "dtype": "float32"}}}
        for i, body in enumerate([
                "s = x + r\n    return s * torch.rsqrt(s.pow(2).mean(0, keepdim=True) + 1e-5) * w",   # over the rows
                "s = x + r\n    return x * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5) * w",  # scales another
                "s = x + x\n    return s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5) * w + r",  # more ops
                "s = x - r\n    return s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5) * w"]):  # not a sum
            r, _ = self.recognize(dict(d, name=f"n{i}", reference=f"import torch\n\ndef run(x, r, w):\n    {body}\n"),
                                  {"T": 3, "H": 8})
            self.assertNotIn(r["op"], ("rmsnorm", "residual_rmsnorm"), body)

    def reduction(self, name, body, out_shape, out_dtype="float32"):
        d = {"name": name, "axes": {"B": {"type": "var"}, "N": {"type": "var"}, "D": {"type": "var"}},
             "inputs": {"x": {"shape": ["B", "N", "D"], "dtype": "float32"}},
             "outputs": {"y": {"shape": out_shape, "dtype": out_dtype}},
             "reference": "import torch\n\ndef run(x):\n    return " + body + "\n"}
        r, _ = self.recognize(d, {"B": 2, "N": 3, "D": 4})
        return r

    def test_a_reduction_over_one_axis_has_its_op_and_dim(self):
        cases = [("torch.sum(x, dim=1)", ["B", "D"], "float32", "sum", 1),
                 ("torch.mean(x, dim=-1, keepdim=True)", ["B", "N", "1"], "float32", "mean", -1),
                 ("torch.max(x, dim=1)[0]", ["B", "D"], "float32", "max", 1),
                 ("torch.min(x, dim=2).values", ["B", "N"], "float32", "min", 2),
                 ("torch.amax(x, dim=0)", ["N", "D"], "float32", "max", 0),
                 ("torch.prod(x, dim=1)", ["B", "D"], "float32", "prod", 1),
                 ("torch.argmax(x, dim=1)", ["B", "D"], "int64", "argmax", 1),
                 ("torch.max(x, dim=2)[1]", ["B", "N"], "int64", "argmax", 2),
                 ("torch.argmin(x, dim=2)", ["B", "N"], "int64", "argmin", 2)]
        for i, (body, shape, dt, op, dim) in enumerate(cases):
            r = self.reduction(f"red{i}", body, shape, dt)
            self.assertEqual((r["op"], r["family"], r.get("dim")), (op, "reduce", dim), body)

    def test_reductions_the_templates_do_not_compute_stay_a_family(self):
        for i, body in enumerate(["torch.prod(x, dim=1).sum(dim=1)", "torch.sum(x, dim=1, dtype=torch.float64).float()",
                                  "torch.sum(x)", "torch.sum(x, dim=1) * 2", "torch.argmax(x.flatten(1), dim=1)"]):
            r = self.reduction(f"other{i}", body, ["B", "D"])
            self.assertNotEqual(r["family"], "reduce", body)
            self.assertNotIn("dim", r, body)

    def test_a_reduction_over_several_axes_and_logsumexp(self):
        cases = [("torch.sum(x, dim=(1, 2))", ["B"], "sum", [1, 2], []),
                 ("torch.mean(x, dim=[-1, -2], keepdim=True)", ["B", "1", "1"], "mean", [1, 2], ["keepdim"]),
                 ("torch.mean(x, dim=(2, 1), keepdim=True).squeeze(-1).squeeze(-1)", ["B"], "mean", [1, 2], []),
                 ("torch.amax(x, dim=(0, 1))", ["D"], "max", [0, 1], []),
                 ("torch.logsumexp(x, dim=1)", ["B", "D"], "logsumexp", 1, []),
                 ("torch.logsumexp(x, dim=(0, 1), keepdim=True)", ["1", "1", "D"], "logsumexp", [0, 1], ["keepdim"])]
        for i, (body, shape, op, dim, flags) in enumerate(cases):
            r = self.reduction(f"axes{i}", body, shape)
            self.assertEqual((r["op"], r["family"], r.get("dim"), r.get("flags", [])), (op, "reduce", dim, flags), body)
        # axes that are not neighbours are still recognised (the binder refuses them, saying why); a repeated axis or
        # prod over several axes is not
        r = self.reduction("gap", "torch.sum(x, dim=(0, 2))", ["N"])
        self.assertEqual((r["family"], r["dim"]), ("reduce", [0, 2]))
        for i, body in enumerate(["torch.prod(x.flatten(1), dim=1)", "torch.argmax(x, dim=1).sum(dim=1)",
                                  # axes of an unsqueezed view of x: mean over [2, 3] of [B, N, 1, D]
                                  "torch.nn.functional.adaptive_avg_pool1d(x, 1).squeeze(-1)"]):
            self.assertNotEqual(self.reduction(f"no{i}", body, ["B"]).get("family"), "reduce", body)

    def test_a_softmax_over_any_axis_has_its_dim(self):
        d = {"name": "smd", "axes": {"B": {"type": "var"}},
             "inputs": {"x": {"shape": ["B", "3", "4", "5"], "dtype": "float32"}},
             "outputs": {"y": {"shape": ["B", "3", "4", "5"], "dtype": "float32"}}}
        for i, (call, dim) in enumerate([("torch.softmax(x, dim=1)", 1), ("torch.log_softmax(x, dim=-1)", 3),
                                         ("torch.softmax(x, dim=-3)", 1)]):
            r, _ = self.recognize(dict(d, name=f"smd{i}", reference=f"import torch\n\ndef run(x):\n    return {call}\n"),
                                  {"B": 2})
            self.assertEqual((r["family"], r["dim"]), ("softmax", dim), call)
        # Over a view to other axes (kb2_038: the spatial axes merged): no axis of x is the normalised one, no dim.
        r, _ = self.recognize(dict(d, name="smv", reference="import torch\n\ndef run(x):\n"
                                                           "    return torch.softmax(x.view(x.shape[0], 3, -1), dim=2).view(x.shape)\n"),
                              {"B": 2})
        self.assertEqual(r["family"], "softmax")
        self.assertNotIn("dim", r)

    def test_chains_with_global_pools_logsumexp_channel_softmax_and_batch_norm(self):
        head = ("import torch\nimport torch.nn.functional as F\n\ndef run(x, w, b):\n    z = torch.zeros(6)\n"
                "    t = F.conv2d(x, w, b)\n")
        for i, (tail, out, families, second) in enumerate([
                # a global average pool, squeezed: [N, 6]
                ("return F.adaptive_avg_pool2d(F.gelu(t), 1).squeeze(-1).squeeze(-1)", ["N", "6"],
                 ["conv", "reduce"], {"op": "mean", "dim": [2, 3]}),
                # the pool kept as [N, 6, 1, 1] for the next stage, then logsumexp over the channels
                ("return torch.logsumexp(t.mean(dim=(2, 3), keepdim=True) * 2.0, dim=1)", ["N", "1", "1"],
                 ["conv", "reduce", "elementwise", "reduce"], {"op": "mean", "dim": [2, 3], "flags": ["keepdim"]}),
                # two poolings (their tuple picks stay with them), then a sum over the channels
                ("return F.max_pool2d(F.max_pool2d(t, 2), 3).sum(dim=1, keepdim=True)", ["N", "1", "1", "1"],
                 ["conv", "pool", "pool", "reduce"], {"op": "max_pool"}),
                # a softmax over the channels
                ("return torch.sigmoid(torch.softmax(t, dim=1))", ["N", "6", "7", "7"], ["conv", "softmax", "elementwise"],
                 {"op": "softmax", "dim": 1}),
                # a training-mode batch norm: its running statistics are built (zeros, ones) in the graph, before
                # the convolution, and updated by it
                ("return F.batch_norm(t * 2.0, z, torch.ones(6), training=True)",
                 ["N", "6", "7", "7"], ["conv", "norm"], {"op": "norm"})]):
            d = dict(self.CONV, name=f"cg{i}", reference=head + "    " + tail + "\n",
                     outputs={"y": {"shape": out, "dtype": "float32"}})
            r, _ = self.recognize(d, {"N": 2})
            self.assertEqual(r["op"], "chain", tail)
            self.assertEqual([s["family"] for s in r["stages"]], families, tail)
            self.assertEqual({k: r["stages"][1].get(k) for k in second}, second, tail)
        self.assertEqual(r["stages"][1]["norm"]["axes"], [0, 2, 3])

    def test_a_convolution_or_product_with_several_vectors(self):
        # KernelBench level 2's `x * scale + bias` after a convolution: the per-channel vectors b (first, whatever the
        # argument order), b1, ..., a 0-d parameter one value for all (operands.vectors after operands.vector).
        conv = {"name": "cvv", "axes": {"N": {"type": "var"}},
                "inputs": {"x": {"shape": ["N", "4", "6", "6"], "dtype": "float32"},
                           "w": {"shape": ["6", "4", "3", "3"], "dtype": "float32"}, "b": {"shape": ["6"], "dtype": "float32"},
                           "g": {"shape": [], "dtype": "float32"}, "s": {"shape": ["6", "1", "1"], "dtype": "float32"},
                           "t": {"shape": ["1", "6", "1", "1"], "dtype": "float32"}},
                "outputs": {"y": {"shape": ["N", "6", "4", "4"], "dtype": "float32"}}}
        body = ("import torch\nimport torch.nn.functional as F\n\ndef run(x, w, b, g, s, t):\n"
                "    return torch.sigmoid(F.conv2d(x, w, b) * s + t) * g\n")
        r, _ = self.recognize(dict(conv, reference=body), {"N": 2})
        self.assertEqual((r["op"], r["family"]), ("conv", "conv"))
        self.assertEqual(r["operands"], {"x": "x", "weight": "w", "bias": "b", "vector": "s", "vectors": ["t", "g"]})
        self.assertEqual(r["expression"], "((1.0f / (1.0f + expf(-(((x * b) + b1))))) * b2)")
        # A Linear (addmm: its bias is b) times a column vector, minus a 0-d parameter; a product without a bias of
        # its own takes the first column vector (in argument order) as b.
        lin = {"name": "lv", "axes": {"M": {"type": "var"}},
               "inputs": {"x": {"shape": ["M", "5"], "dtype": "float32"}, "w": {"shape": ["7", "5"], "dtype": "float32"},
                          "c": {"shape": [], "dtype": "float32"}, "b": {"shape": ["7"], "dtype": "float32"},
                          "s": {"shape": ["7"], "dtype": "float32"}},
               "outputs": {"y": {"shape": ["M", "7"], "dtype": "float32"}}}
        for i, (tail, operands, expr) in enumerate([
                ("torch.min(F.linear(x, w, b) * s, c) - c", {"bias": "b", "vectors": ["s", "c"]},
                 "(fminf(((x + b) * b1), b2) - b2)"),
                ("(x @ w.t() + s) * c + b", {"bias": "b", "vectors": ["s", "c"]}, "(((x + b1) * b2) + b)")]):
            r, _ = self.recognize(dict(lin, name=f"lv{i}", reference=f"import torch\nimport torch.nn.functional as F\n\n"
                                                                   f"def run(x, w, c, b, s):\n    return {tail}\n"), {"M": 3})
            self.assertEqual((r["op"], r["family"]), ("gemm+epilogue", "gemm"), tail)
            self.assertEqual({k: r["operands"][k] for k in operands}, operands, tail)
            self.assertEqual(r["expression"], expr, tail)
        # Still not fused: a vector of another shape (one value per row).
        r, _ = self.recognize(dict(lin, name="lv9", inputs=dict(lin["inputs"], s={"shape": ["M", "1"], "dtype": "float32"}),
                                   reference="import torch\nimport torch.nn.functional as F\n\n"
                                             "def run(x, w, c, b, s):\n    return F.linear(x, w, b) * s + c\n"), {"M": 3})
        self.assertNotIn("operands", r)

    def test_chains_of_more_than_four_stages_and_how_their_vectors_broadcast(self):
        # kb2_008's shape: conv / 2, max pool, global average pool, + bias [6, 1, 1], sum over the channels.
        d = dict(self.CONV, name="c5", inputs=dict(self.CONV["inputs"], v={"shape": ["6", "1", "1"], "dtype": "float32"}),
                 outputs={"y": {"shape": ["N", "1", "1"], "dtype": "float32"}},
                 reference="import torch\nimport torch.nn.functional as F\n\ndef run(x, w, b, v):\n"
                           "    t = F.max_pool2d(F.conv2d(x, w, b) / 2.0, 2)\n"
                           "    return torch.sum(F.adaptive_avg_pool2d(t, 1) + v, dim=1)\n")
        r, _ = self.recognize(d, {"N": 2})
        self.assertEqual(r["op"], "chain")
        self.assertEqual([s["family"] for s in r["stages"]], ["conv", "pool", "reduce", "elementwise", "reduce"])
        ew = r["stages"][3]
        self.assertEqual((ew["inputs"], ew["expression"]), (["khive_t3", "v"], "(khive_t3 + v)"))
        # v read as stored ([6, 1, 1] against [N, 6, 1, 1]): torch's rule places it
        self.assertEqual(ew["flags"], ["named_inputs", "torch_broadcast"])
        # v [6] viewed [1, 6, 1, 1] lines its values up with another axis than torch's rule on [6] would: no flag,
        # the binder places it by name
        d = dict(d, name="c5v", inputs=dict(d["inputs"], v={"shape": ["6"], "dtype": "float32"}),
                 reference=d["reference"].replace("+ v,", "+ v.view(1, -1, 1, 1),"))
        r, _ = self.recognize(d, {"N": 2})
        self.assertEqual(r["stages"][3]["flags"], ["named_inputs"])

    def test_a_scan_has_its_op_dim_and_how_it_walks(self):
        two = {"name": "", "axes": {"B": {"type": "var"}, "N": {"type": "var"}},
               "inputs": {"x": {"shape": ["B", "N"], "dtype": "float32"}},
               "outputs": {"y": {"shape": ["B", "N"], "dtype": "float32"}}}
        masked = dict(two, inputs={"x": {"shape": ["B", "N"], "dtype": "float32"},
                                   "mask": {"shape": ["B", "N"], "dtype": "bool"}})
        cases = [("torch.cumsum(x, dim=1)", two, "cumsum", []),
                 ("torch.cumprod(x, dim=-1)", two, "cumprod", []),
                 ("torch.cumsum(x.flip(1), dim=1).flip(1)", two, "cumsum", ["reverse"]),
                 ("torch.cat((torch.zeros_like(x.select(1, 0).unsqueeze(1)), "
                  "torch.cumsum(x.narrow(dim=1, start=0, length=x.size(1) - 1), dim=1)), dim=1)", two, "cumsum",
                  ["exclusive"]),
                 ("torch.cumsum(x * mask, dim=1)", masked, "cumsum", ["masked"])]
        for i, (body, d, op, flags) in enumerate(cases):
            args = "x, mask" if "mask" in d["inputs"] else "x"
            r, _ = self.recognize(dict(d, name=f"scan{i}", reference=f"import torch\n\ndef run({args}):\n    return {body}\n"),
                                  {"B": 2, "N": 5})
            self.assertEqual((r["op"], r["family"], r.get("flags")), (op, "scan", flags), body)
            self.assertEqual(r["dim"], -1 if "dim=-1" in body else 1, body)
        # a shifted window or a scaled scan is not one the templates compute
        for i, body in enumerate(["torch.cat((torch.zeros_like(x[:, :1]), torch.cumsum(x[:, 1:], dim=1)), dim=1)",
                                  "torch.cumsum(x, dim=1) * 2"]):
            r, _ = self.recognize(dict(two, name=f"noscan{i}", reference=f"import torch\n\ndef run(x):\n    return {body}\n"),
                                  {"B": 2, "N": 5})
            self.assertNotEqual(r["family"], "scan", body)

    def attention(self, name, body, q=("B", "S", "Hq", "D"), kv=("B", "S", "Hkv", "D"), o=None, extra=None,
                  workloads=None, dtype="bfloat16", axes=None):
        """recognize() of an attention reference over q, k, v (and extra inputs): (result, task folder)."""
        inputs = {"q": {"shape": list(q), "dtype": dtype}, "k": {"shape": list(kv), "dtype": dtype},
                  "v": {"shape": list(kv), "dtype": dtype}}
        inputs.update(extra or {})
        names = sorted({a for s in [q, kv, o or q] for a in s if not a.isdigit()} - set((axes or {}).keys()))
        d = {"name": name, "axes": dict({a: {"type": "var"} for a in names}, **(axes or {})), "inputs": inputs,
             "outputs": {"o": {"shape": list(o or q), "dtype": dtype}},
             "reference": "import math\nimport torch\nimport torch.nn.functional as F\n\n" + body}
        from khive_torch.recognize import recognize
        p = self.root / name
        p.mkdir()
        (p / "definition.json").write_text(json.dumps(d))
        ws = workloads or [{"B": 2, "S": 6, "Hq": 4, "Hkv": 2, "D": 8}]
        (p / "workload.jsonl").write_text("".join(json.dumps({"uuid": f"w{i}", "axes": a}) + "\n"
                                                  for i, a in enumerate(ws)))
        return recognize(torch, load_task(p)), p

    MANUAL = """def run(q, k, v):
    B, S, Hq, D = q.shape
    Hkv = k.shape[2]
    q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    k = k[:, :, None].expand(B, Hkv, Hq // Hkv, S, D).reshape(B, Hq, S, D)
    v = v.repeat_interleave(Hq // Hkv, dim=1)
    s = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(D)
    s = s.masked_fill(torch.triu(torch.ones(S, S, dtype=torch.bool), diagonal=1), float("-inf"))
    p = F.softmax(s, dim=-1, dtype=torch.float32).to(q.dtype)
    return torch.matmul(p, v).transpose(1, 2).contiguous()
"""
    PLAIN = {"q": "q", "k": "k", "v": "v", "layout": {"q": "bshd", "k": "bshd", "v": "bshd", "o": "bshd"},
             "gqa": "interleave", "causal": "bottom_right", "scale": "1/sqrt(D)", "head_dim": 8}

    def test_a_plain_causal_gqa_attention_has_the_facts_the_templates_bind_by(self):
        # Written out (two products, a softmax, a triu mask, the KV heads expanded) and as SDPA: the same facts, but
        # SDPA's is_causal is top-left aligned (on these workloads, Sq = Skv, the same mask).
        r, _ = self.attention("manual", self.MANUAL)
        self.assertEqual((r["op"], r["family"]), ("attention", "attention"))
        self.assertNotIn("why", r)
        self.assertEqual(r["attention"], self.PLAIN)
        r, _ = self.attention("sdpa", "def run(q, k, v):\n    return F.scaled_dot_product_attention(q.transpose(1, 2), "
                                      "k.transpose(1, 2), v.transpose(1, 2), is_causal=True, enable_gqa=True)"
                                      ".transpose(1, 2).contiguous()\n")
        self.assertEqual(r["attention"], dict(self.PLAIN, causal="top_left"))
        # Non-causal, and decode (q and o [B, Hq, D]).
        r, _ = self.attention("nomask", self.MANUAL.replace("    s = s.masked_fill", "    # s = s.masked_fill"))
        self.assertEqual(r["attention"]["causal"], False)
        r, _ = self.attention("decode", "def run(q, k, v):\n    return F.scaled_dot_product_attention(q.unsqueeze(2), "
                                        "k.transpose(1, 2), v.transpose(1, 2), enable_gqa=True).squeeze(2)\n",
                              q=("B", "Hq", "D"))
        self.assertEqual(r["attention"]["layout"], {"q": "bhd", "k": "bshd", "v": "bshd", "o": "bhd"})
        self.assertEqual(r["attention"]["causal"], False)

    def test_the_suites_attention_tasks_read_as_their_bindings_say(self):
        # tasks/sol/attention, attention_causal, attention_decode (SDPA references) against kernels/bindings/sol.json:
        # the facts recorded are those the hand-written bindings state. Their smallest workloads have one head or one
        # query, so the reading is traced again on larger ones.
        from khive_torch.recognize import recognize
        repo = pathlib.Path(__file__).resolve().parents[2]
        bindings = json.loads((repo / "kernels/bindings/sol.json").read_text())["tasks"]
        for name in ("attention", "attention_causal", "attention_decode"):
            r = recognize(torch, load_task(repo / "tasks/sol" / name))
            a, b = r["attention"], bindings[name]
            self.assertEqual((a["q"], a["k"], a["v"]), (b["q"], b["k"], b["v"]), name)
            self.assertEqual(a["layout"]["q"] == "bhd", b["decode"], name)
            self.assertEqual(a["causal"] is not False, b["causal"], name)
            self.assertEqual((a["gqa"], a["scale"]), ("interleave", "1/sqrt(D)"), name)

    def test_an_attention_with_more_ops_says_what_they_are(self):
        rope_in = {"cos": {"shape": ["B", "S", "1", "D"], "dtype": "bfloat16"},
                   "sin": {"shape": ["B", "S", "1", "D"], "dtype": "bfloat16"}}
        body = self.MANUAL.replace("def run(q, k, v):\n", "def run(q, k, v, cos, sin):\n    q = q * cos + torch.cat("
                                   "(-q[..., 4:], q[..., :4]), dim=-1) * sin\n")
        r, _ = self.attention("rope", body, extra=rope_in)
        self.assertEqual(r["op"], "attention")
        self.assertNotIn("attention", r)
        self.assertIn("q is computed from q, cos, sin by", r["why"])
        self.assertIn("(rope)", r["why"])
        r, _ = self.attention("residual", self.MANUAL.replace(".contiguous()\n", ".contiguous() + q.transpose(1, 2)\n"))
        self.assertIn("the attention's result goes through add before the output", r["why"])
        mask = {"mask": {"shape": ["B", "1", "S", "S"], "dtype": "bfloat16"}}
        r, _ = self.attention("masked", self.MANUAL.replace("(q, k, v)", "(q, k, v, mask)").replace(
            "    s = s.masked_fill", "    s = s + mask\n    # s = s.masked_fill"), extra=mask)
        self.assertIn("mask is added to the scores (an additive mask or bias input", r["why"])
        r, _ = self.attention("weights_too", self.MANUAL.replace("    return torch.matmul(p, v).transpose(1, 2).contiguous()\n",
                                                                 "    return torch.matmul(p, v).transpose(1, 2).contiguous(), p\n"))
        self.assertIn("the probabilities are also an output of the reference", r["why"])
        r, _ = self.attention("softcap", self.MANUAL.replace("/ math.sqrt(D)", "/ math.sqrt(D)\n    s = 30.0 * torch.tanh(s / 30.0)"))
        self.assertIn("the scores go through div, tanh before the softmax", r["why"])

    def test_an_attention_in_another_layout_or_head_order_says_so(self):
        r, _ = self.attention("bhsd", "def run(q, k, v):\n    return F.scaled_dot_product_attention(q, k, v, "
                                      "enable_gqa=True)\n", q=("B", "Hq", "S", "D"), kv=("B", "Hkv", "S", "D"))
        self.assertEqual(r["attention"]["layout"], {"q": "bhsd", "k": "bhsd", "v": "bhsd", "o": "bhsd"})
        tiled = self.MANUAL.replace("k[:, :, None].expand(B, Hkv, Hq // Hkv, S, D).reshape(B, Hq, S, D)",
                                    "k.repeat(1, Hq // Hkv, 1, 1)").replace("v.repeat_interleave(Hq // Hkv, dim=1)",
                                                                            "v.repeat(1, Hq // Hkv, 1, 1)")
        r, _ = self.attention("tiled", tiled)
        self.assertEqual(r["attention"]["gqa"], "tile")
        r, _ = self.attention("scaled", self.MANUAL.replace("/ math.sqrt(D)", "* 0.1"))
        self.assertEqual(r["attention"]["scale"], 0.1)
        r, _ = self.attention("merged", self.MANUAL.replace(".transpose(1, 2).contiguous()\n",
                                                            ".transpose(1, 2).reshape(B, S, Hq * D)\n"),
                              o=("B", "S", "HD"), axes={"HD": {"type": "expr", "expression": "Hq * D"}})
        self.assertEqual(r["attention"]["layout"]["o"], "bs(hd)")

    def test_the_causal_alignment_is_pinned_on_a_workload_that_tells_it(self):
        # Traced with as many queries as keys, where torch's top-left mask and the templates' bottom-right one agree;
        # the second workload (Sq 3, Skv 7) tells them apart.
        sdpa = ("def run(q, k, v):\n    return F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), "
                "v.transpose(1, 2), is_causal=True, enable_gqa=True).transpose(1, 2).contiguous()\n")
        manual_br = """def run(q, k, v):
    q, k, v = q.transpose(1, 2), k.transpose(1, 2).repeat_interleave(2, dim=1), v.transpose(1, 2).repeat_interleave(2, dim=1)
    sq, skv = q.shape[2], k.shape[2]
    s = torch.matmul(q, k.transpose(2, 3)) * (q.shape[-1] ** -0.5)
    s = s.masked_fill(torch.ones(sq, skv, dtype=torch.bool).triu(skv - sq + 1), float("-inf"))
    return torch.matmul(torch.softmax(s.float(), dim=-1).to(q.dtype), v).transpose(1, 2)
"""
        ws = [{"B": 1, "Sq": 4, "Skv": 4, "Hq": 4, "Hkv": 2, "D": 8}, {"B": 1, "Sq": 3, "Skv": 7, "Hq": 4, "Hkv": 2, "D": 8}]
        for name, body, want in (("sdpa_tl", sdpa, "top_left"), ("manual_br", manual_br, "bottom_right")):
            r, _ = self.attention(name, body, q=("B", "Sq", "Hq", "D"), kv=("B", "Skv", "Hkv", "D"), workloads=ws)
            self.assertEqual(r["attention"]["causal"], want, name)
        # A scale fixed at 1/sqrt(8) is not 1/sqrt(D) on a workload of D 16.
        fixed = self.MANUAL.replace("/ math.sqrt(D)", "* 0.35355339059327373")
        ws = [{"B": 1, "S": 4, "Hq": 2, "Hkv": 1, "D": 8}, {"B": 1, "S": 4, "Hq": 2, "Hkv": 1, "D": 16}]
        r, _ = self.attention("fixed", fixed, workloads=ws)
        self.assertEqual(r["attention"]["scale"], 0.35355339059327373)
        r, _ = self.attention("follows", self.MANUAL, workloads=ws)
        self.assertEqual(r["attention"]["scale"], "1/sqrt(D)")

    def test_a_trace_over_the_memory_budget_is_refused_naming_the_definition_and_the_workload(self):
        from khive_torch.recognize import recognize
        r, d = self.recognize(unary("big", "def run(x):\n    return torch.relu(x)\n"), {"N": 1 << 20})
        r = recognize(torch, load_task(d), budget=1 << 20)
        self.assertEqual(r["op"], "unknown")
        self.assertIn("big/definition.json on workload w", r["why"])
        self.assertIn("over the recognition budget", r["why"])
        # A trace whose intermediates outgrow the budget: an allocation error under RLIMIT_AS, reported (exit 0
        # and the record), where the OOM killer would have ended the process with 137 and no word.
        import os
        import subprocess
        import sys
        body = "def run(x):\n    big = torch.ones(1 << 31, dtype=torch.float32)\n    return x + big[:1]\n"
        _, d = self.recognize(unary("huge", body), {"N": 3})
        env = dict(os.environ, KHIVE_RECOGNIZE_MAX_GB="1")
        p = subprocess.run([sys.executable, "-m", "khive_torch.recognize", str(d), "--write"], env=env,
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("ran out of memory", p.stderr)
        self.assertIn("huge/definition.json on workload w", p.stderr)
        op = json.loads((d / "definition.json").read_text())["khive"]["op"]
        self.assertEqual(op["op"], "unknown")
        self.assertIn("1.0 GB (KHIVE_RECOGNIZE_MAX_GB)", op["why"])

    def test_write_records_why_a_reference_was_not_recognised(self):
        from khive_torch.recognize import write
        r, d = self.recognize(unary("bad2", "def run(x):\n    raise ValueError('no')\n"), {"N": 3})
        write(load_task(d), r)
        defn = json.loads((d / "definition.json").read_text())
        self.assertNotIn("op_type", defn)
        self.assertEqual(defn["khive"]["op"]["op"], "unknown")
        self.assertIn("ValueError", defn["khive"]["op"]["why"])

    def test_a_reference_that_does_not_trace_says_why(self):
        r, _ = self.recognize(unary("bad", "def run(x):\n    raise ValueError('no')\n"), {"N": 3})
        self.assertEqual(r["op"], "unknown")
        self.assertIn("ValueError", r["why"])

    def test_write_records_op_type_and_the_details(self):
        from khive_torch.recognize import write
        r, d = self.recognize(unary("relu2", "def run(x):\n    return torch.relu(x)\n"), {"N": 7})
        write(load_task(d), r)
        defn = json.loads((d / "definition.json").read_text())
        self.assertEqual(defn["op_type"], "relu")
        self.assertEqual(defn["khive"]["op"]["family"], "activation")
        self.assertEqual(defn["khive"]["op"]["ops"], ["relu"])


    # -- layout ops as views (issue 24: recognize_view.py) -----------------------------------------------------------
    def read_view(self, spec, x, out_shape):
        """x read through a view spec (khive.op.views) at every element of out_shape, as the elementwise templates
        read it: offset + sum c_d * stride_d, c the flat index's coordinates in the view's shape."""
        sym = {f"in{k}": n for k, n in enumerate(x.shape)}
        sym.update({f"out{d}": n for d, n in enumerate(out_shape)})
        ev = [eval(e, {}, dict(sym)) for e in spec["shape"]]   # noqa: S307 - test-only: expressions recognize wrote
        st = [eval(e, {}, dict(sym)) for e in spec["strides"]]  # noqa: S307
        idx = torch.full(ev, eval(spec["offset"], {}, dict(sym)), dtype=torch.long)   # noqa: S307
        for d, (n, s) in enumerate(zip(ev, st)):
            shape = [1] * len(ev)
            shape[d] = n
            idx = idx + torch.arange(n).view(shape) * s
        self.assertEqual(idx.numel(), math.prod(out_shape))
        return x.reshape(-1)[idx.reshape(-1)].reshape(out_shape)

    def test_heads_split_and_transposed_after_a_projection_are_a_copy_stage(self):
        # a Linear of [B, S, hidden], its result viewed as [B, S, H, D] and transposed to [B, H, S, D]
        d = {"name": "vproj", "axes": {"B": {"type": "var"}, "S": {"type": "var"}, "HID": {"type": "const", "value": 8},
                                       "H": {"type": "const", "value": 2}, "D": {"type": "const", "value": 3},
                                       "HD": {"type": "expr", "expression": "H * D"}},
             "inputs": {"x": {"shape": ["B", "S", "HID"], "dtype": "float32"},
                        "w": {"shape": ["HD", "HID"], "dtype": "float32"}},
             "outputs": {"y": {"shape": ["B", "H", "S", "D"], "dtype": "float32"}},
             "reference": "import torch\nimport torch.nn.functional as F\n\ndef run(x, w):\n"
                          "    b, s, _ = x.shape\n    return F.linear(x, w).view(b, s, 2, 3).transpose(1, 2).contiguous()\n"}
        r, _ = self.recognize(d, {"B": 2, "S": 4})
        self.assertEqual(r["op"], "chain")
        g, copy = r["stages"]
        self.assertEqual((g["family"], g["operands"]["A"], g["operands"]["B"], g["output"]), ("gemm", "x", "w", "khive_t1"))
        self.assertEqual((copy["family"], copy["expression"], copy["inputs"], copy["output"]),
                         ("elementwise", "khive_t1", ["khive_t1"], None))
        # the view holds on other sizes than the traced ones
        for b, s in ((2, 4), (3, 7), (1, 1)):
            t = torch.randn(b, s, 6)
            want = t.view(b, s, 2, 3).transpose(1, 2)
            self.assertTrue(torch.equal(self.read_view(copy["views"]["khive_t1"], t, tuple(want.shape)), want))

    def test_an_input_transposed_and_merged_before_a_projection_is_copied_first(self):
        d = {"name": "oproj", "axes": {"B": {"type": "var"}, "S": {"type": "var"}, "H": {"type": "const", "value": 2},
                                       "D": {"type": "const", "value": 3}, "N": {"type": "const", "value": 5},
                                       "HD": {"type": "expr", "expression": "H * D"}},
             "inputs": {"a": {"shape": ["B", "H", "S", "D"], "dtype": "float32"},
                        "w": {"shape": ["N", "HD"], "dtype": "float32"}},
             "outputs": {"y": {"shape": ["B", "S", "N"], "dtype": "float32"}},
             "reference": "import torch\n\ndef run(a, w):\n    b, h, s, d = a.shape\n"
                          "    return torch.matmul(a.transpose(1, 2).reshape(b, s, h * d), w.t())\n"}
        r, _ = self.recognize(d, {"B": 2, "S": 4})
        self.assertEqual(r["op"], "chain")
        copy, g = r["stages"]
        self.assertEqual((copy["inputs"], copy["output"], copy["shape"]), (["a"], "khive_t1", ["in0", "in2", "in1 * in3"]))
        self.assertEqual((g["operands"]["A"], g["operands"]["layout_a"], g["output"]), ("khive_t1", "row", None))
        for b, s in ((2, 4), (3, 5)):
            a = torch.randn(b, 2, s, 3)
            want = a.transpose(1, 2).reshape(b, s, 6)
            self.assertTrue(torch.equal(self.read_view(copy["views"]["a"], a, tuple(want.shape)), want))

    def test_pointwise_inputs_read_through_transposes_expands_and_slices_have_views(self):
        axes = {"B": {"type": "var"}, "S": {"type": "var"}, "H": {"type": "const", "value": 4},
                "KV": {"type": "const", "value": 2}, "D": {"type": "const", "value": 3}, "S2": {"type": "expr", "expression": "S + 2"}}
        cases = [
            # repeat_kv: [B, KV, S, D] -> [B, KV * 2, S, D] (expand of an inserted axis, then merged), alone
            ({"k": ["B", "KV", "S", "D"]}, ["B", "H", "S", "D"],
             "k[:, :, None, :, :].expand(k.shape[0], 2, 2, k.shape[2], 3).reshape(k.shape[0], 4, k.shape[2], 3)",
             lambda k: k[:, :, None].expand(-1, -1, 2, -1, -1).reshape(k.shape[0], 4, k.shape[2], 3)),
            # a transposed input times one as stored
            ({"a": ["B", "S", "H", "D"], "b": ["B", "H", "S", "D"]}, ["B", "H", "S", "D"],
             "a.transpose(1, 2) * b", None),
            # the last S rows of a longer input (a slice from the end), scaled
            ({"x": ["B", "S2", "D"]}, ["B", "S", "D"], "x[:, 2:, :] * 2.0", None),
        ]
        for i, (ins, out, body, alone) in enumerate(cases):
            d = {"name": f"pv{i}", "axes": axes, "inputs": {n: {"shape": s, "dtype": "float32"} for n, s in ins.items()},
                 "outputs": {"y": {"shape": out, "dtype": "float32"}},
                 "reference": f"import torch\n\ndef run({', '.join(ins)}):\n    return {body}\n"}
            r, _ = self.recognize(d, {"B": 2, "S": 5})
            self.assertEqual((r["op"], r["family"]), ("elementwise", "elementwise"), body)
            self.assertEqual(r["flags"], ["named_inputs"], body)
            viewed = next(iter(ins))
            self.assertEqual(list(r["views"]), [viewed], body)
            for b, s in ((2, 5), (3, 2)):   # traced at (2, 5); the view holds on other sizes too
                sizes = {"B": b, "S": s, "H": 4, "KV": 2, "D": 3, "S2": s + 2}
                x = torch.randn(*[sizes[a] for a in ins[viewed]])
                want = (alone(x) if alone else x.transpose(1, 2) if i == 1 else x[:, 2:, :])
                got = self.read_view(r["views"][viewed], x, tuple(sizes[a] for a in out))
                self.assertTrue(torch.equal(got, want), body)

    def test_a_plain_read_needs_no_view(self):
        # as stored, or viewed back to its own order: no views, the broadcast flags as before
        d = {"name": "plain", "axes": {"N": {"type": "var"}, "M": {"type": "var"}},
             "inputs": {"a": {"shape": ["N", "M"], "dtype": "float32"}, "b": {"shape": ["N", "M"], "dtype": "float32"}},
             "outputs": {"y": {"shape": ["N", "M"], "dtype": "float32"}},
             "reference": "import torch\n\ndef run(a, b):\n    return a.reshape(-1).view(a.shape) * b.contiguous()\n"}
        r, _ = self.recognize(d, {"N": 3, "M": 4})
        self.assertEqual(r["op"], "elementwise")
        self.assertNotIn("views", r)


    # -- products batched over several axes (issue 24: the gemm binding's "batch" list) ------------------------------
    ATTN_AXES = {"B": {"type": "var"}, "S": {"type": "var"}, "H": {"type": "const", "value": 4},
                 "KV": {"type": "const", "value": 1}, "D": {"type": "const", "value": 3},
                 "HD": {"type": "expr", "expression": "H * D"}}

    def reading(self, r, ins):
        """What the recognised product computes, as the gemm binding reads it: torch.matmul of the operands (each
        transposed where its layout is col) broadcast over their leading axes, then the epilogue of x (and b, the
        bias or scalar)."""
        import re
        o = r["operands"]
        a, b = ins[o["A"]], ins[o["B"]]
        x = torch.matmul(a.transpose(-1, -2) if o["layout_a"] == "col" else a,
                         b.transpose(-1, -2) if o["layout_b"] == "col" else b)
        if "expression" not in r:
            return x
        env = {"x": x}
        if "bias" in o:
            env["b"] = ins[o["bias"]]
        return eval(re.sub(r"(\d)f\b", r"\1", r["expression"]), {}, env)   # noqa: S307 - test-only

    def attention_product(self, name, ins, out, body, sizes=((2, 5), (3, 2), (1, 7))):
        """Recognised on B = 2, S = 5; r, and the reference's run() against `check` on each of `sizes`."""
        d = {"name": name, "axes": self.ATTN_AXES, "inputs": {n: {"shape": s, "dtype": "float32"} for n, s in ins.items()},
             "outputs": {"y": {"shape": out, "dtype": "float32"}},
             "reference": f"import torch\n\ndef run({', '.join(ins)}):\n{body}"}
        for n, s in ins.items():
            if s is None:
                d["inputs"][n]["shape"] = None
        r, _ = self.recognize(d, {"B": 2, "S": 5})
        scope = {}
        exec(d["reference"], scope)   # noqa: S102 - test-only: the reference written above
        runs = []
        for b, s in sizes:
            dims = {"B": b, "S": s, "H": 4, "KV": 1, "D": 3, "HD": 12}
            args = {n: torch.tensor(0.375) if shape is None else torch.randn(*[dims[a] for a in shape])
                    for n, shape in ins.items()}
            runs.append((args, scope["run"](*args.values())))
        return r, runs

    def test_a_product_batched_over_two_axes_has_its_operands(self):
        # [B, H, S, D] @ [B, H, D, S] (torch.matmul of 4-D tensors, traced as expand + view + bmm + view)
        r, runs = self.attention_product("qk", {"q": ["B", "H", "S", "D"], "k": ["B", "H", "S", "D"]},
                                         ["B", "H", "S", "S"], "    return torch.matmul(q, k.transpose(2, 3))\n")
        self.assertEqual((r["op"], r["family"]), ("matmul", "gemm"))
        self.assertEqual(r["operands"], {"A": "q", "B": "k", "layout_a": "row", "layout_b": "col"})
        for ins, want in runs:   # the reading holds on other sizes than the traced one
            self.assertTrue(torch.allclose(self.reading(r, ins), want, atol=1e-5), tuple(want.shape))

    def test_a_gqa_product_with_one_kv_head_and_a_scalar_is_a_broadcast_with_an_epilogue(self):
        # SOL L1 049: K's one KV head repeated for the H query heads (repeat_kv: expand, reshape), then * scaling
        body = ("    b, kv, s, d = k.shape\n"
                "    k = k[:, :, None, :, :].expand(b, kv, 4, s, d).reshape(b, kv * 4, s, d)\n"
                "    return torch.matmul(q, k.transpose(2, 3)) * scaling\n")
        r, runs = self.attention_product("gqa", {"q": ["B", "H", "S", "D"], "k": ["B", "KV", "S", "D"], "scaling": None},
                                         ["B", "H", "S", "S"], body)
        self.assertEqual((r["op"], r["family"], r["expression"]), ("gemm+epilogue", "gemm", "(x * b)"))
        self.assertEqual(r["operands"], {"A": "q", "B": "k", "layout_a": "row", "layout_b": "col", "bias": "scaling"})
        for ins, want in runs:
            self.assertTrue(torch.allclose(self.reading(r, ins), want, atol=1e-5), tuple(want.shape))
        # two KV heads each read by two query heads (h -> h // 2) is no broadcast: K is not read as stored
        two = dict(self.ATTN_AXES, KV={"type": "const", "value": 2})
        d = {"name": "gqa2", "axes": two, "inputs": {"q": {"shape": ["B", "H", "S", "D"], "dtype": "float32"},
                                                     "k": {"shape": ["B", "KV", "S", "D"], "dtype": "float32"}},
             "outputs": {"y": {"shape": ["B", "H", "S", "S"], "dtype": "float32"}},
             "reference": "import torch\n\ndef run(q, k):\n    b, kv, s, d = k.shape\n"
                          "    k = k[:, :, None, :, :].expand(b, kv, 2, s, d).reshape(b, kv * 2, s, d)\n"
                          "    return torch.matmul(q, k.transpose(2, 3))\n"}
        r, _ = self.recognize(d, {"B": 2, "S": 5})
        self.assertNotEqual(r.get("operands", {}).get("B"), "k")
        if r["op"] == "chain":   # K copied out first, then the product of the copy
            copy, g = r["stages"]
            self.assertEqual((copy["inputs"], g["operands"]["B"]), (["k"], "khive_t1"))

    def test_a_batched_products_heads_merged_after_it_are_a_copy_stage(self):
        # SOL L1 032 / 083: p @ v, then [B, H, S, D] -> [B, S, H * D]
        body = "    o = torch.matmul(p, v).transpose(1, 2).contiguous()\n    return o.reshape(o.shape[0], o.shape[1], 12)\n"
        r, runs = self.attention_product("pv", {"p": ["B", "H", "S", "S"], "v": ["B", "H", "S", "D"]}, ["B", "S", "HD"],
                                         body)
        self.assertEqual(r["op"], "chain")
        g, copy = r["stages"]
        self.assertEqual((g["family"], g["operands"], g["output"]),
                         ("gemm", {"A": "p", "B": "v", "layout_a": "row", "layout_b": "row"}, "khive_t1"))
        self.assertEqual((copy["family"], copy["inputs"], copy["output"]), ("elementwise", ["khive_t1"], None))
        for ins, want in runs:   # the product's [B, H, S, D] read through the copy's view is the reference's output
            got = self.read_view(copy["views"]["khive_t1"], self.reading(g, ins), tuple(want.shape))
            self.assertTrue(torch.allclose(got, want, atol=1e-5), tuple(want.shape))


    # -- references of several outputs (issue 24: a chain whose stages write the task's outputs) ---------------------
    def test_several_outputs_are_a_chain_whose_stages_write_them(self):
        # a projection with a bias viewed as heads, and a second one whose heads are transposed: two products, each
        # then a copy stage through its view (the intermediates numbered through both), each writing its output
        axes = {"B": {"type": "var"}, "S": {"type": "var"}, "HID": {"type": "const", "value": 8},
                "H": {"type": "const", "value": 2}, "D": {"type": "const", "value": 3},
                "HD": {"type": "expr", "expression": "H * D"}}
        ins = {"x": ["B", "S", "HID"], "w": ["HD", "HID"], "bias": ["HD"], "v": ["HD", "HID"]}
        body = ("    b, s, _ = x.shape\n"
                "    q = (torch.matmul(x, w.t()) + bias).view(b, s, 2, 3)\n"
                "    k = torch.matmul(x, v.t()).view(b, s, 2, 3).transpose(1, 2)\n"
                "    return q, k\n")
        d = {"name": "qk_proj", "axes": axes,
             "inputs": {n: {"shape": sh, "dtype": "float32"} for n, sh in ins.items()},
             "outputs": {"q": {"shape": ["B", "S", "H", "D"], "dtype": "float32"},
                         "k": {"shape": ["B", "H", "S", "D"], "dtype": "float32"}},
             "reference": f"import torch\n\ndef run({', '.join(ins)}):\n{body}"}
        r, _ = self.recognize(d, {"B": 2, "S": 5})
        self.assertEqual((r["op"], r["family"]), ("chain", "chain"), r)
        st = r["stages"]
        self.assertEqual([s["family"] for s in st], ["gemm", "elementwise", "gemm", "elementwise"])
        self.assertEqual([s["output"] for s in st], ["khive_t1", "q", "khive_t2", "k"])
        self.assertEqual(st[0]["operands"], {"A": "x", "B": "w", "layout_a": "row", "layout_b": "col", "bias": "bias"})
        self.assertEqual((st[1]["inputs"], st[3]["inputs"]), (["khive_t1"], ["khive_t2"]))
        scope = {}
        exec(d["reference"], scope)   # noqa: S102 - test-only: the reference written above
        for b, s in ((1, 1), (3, 4), (2, 9)):   # other sizes than the traced B = 2, S = 5
            dims = {"B": b, "S": s, "HID": 8, "HD": 6}
            env = {n: torch.randn(*[dims[a] for a in sh]) for n, sh in ins.items()}
            want = dict(zip(("q", "k"), scope["run"](*env.values())))
            for one in st:   # the stages in order, each product as the gemm binding reads it, each copy its view
                if one["family"] == "gemm":
                    env[one["output"]] = self.reading(one, env)
                else:
                    (src,) = one["inputs"]
                    env[one["output"]] = self.read_view(one["views"][src], env[src], tuple(want[one["output"]].shape))
            for name in ("q", "k"):
                self.assertTrue(torch.allclose(env[name], want[name], atol=1e-5), (name, b, s))

    def test_an_output_no_stage_computes_is_said(self):
        d = {"name": "mm_sort", "axes": {"M": {"type": "var"}, "K": {"type": "const", "value": 4}},
             "inputs": {"x": {"shape": ["M", "K"], "dtype": "float32"}, "w": {"shape": ["K", "K"], "dtype": "float32"}},
             "outputs": {"y": {"shape": ["M", "K"], "dtype": "float32"}, "s": {"shape": ["M", "K"], "dtype": "float32"}},
             "reference": "import torch\n\ndef run(x, w):\n    return x @ w, torch.sort(x, dim=1).values\n"}
        r, _ = self.recognize(d, {"M": 3})
        self.assertNotEqual(r["op"], "chain")
        self.assertIn("outputs not read as stages: s:", r["why"])

    # -- backward passes (issue 24: the graph cut into stages, values read by several stages stored once) -------------
    def run_stages(self, stages, env):
        """The recognised stages evaluated in order as the bindings read them: a product (K a list of leading axes
        where A [*K, M] is read transposed and B is [*K, N]; a residual added), a reduction, a pointwise expression."""
        import re
        fns = {"tanhf": torch.tanh, "expf": torch.exp, "erff": torch.erf, "sqrtf": torch.sqrt, "fabsf": torch.abs,
               "logf": torch.log, "rsqrtf": torch.rsqrt}
        for st in stages:
            if st["family"] == "gemm":
                o = st["operands"]
                a, b = env[o["A"]], env[o["B"]]
                if a.dim() >= 3 and o["layout_a"] == "col":   # summed over the leading axes
                    x = a.reshape(-1, a.shape[-1]).t() @ b.reshape(-1, b.shape[-1])
                else:
                    x = torch.matmul(a.transpose(-1, -2) if o["layout_a"] == "col" else a,
                                     b.transpose(-1, -2) if o["layout_b"] == "col" else b)
                if "residual" in o:
                    x = x + env[o["residual"]]
                out = eval(re.sub(r"(\d)f\b", r"\1", st["expression"]), {}, {"x": x}) if "expression" in st else x
            elif st["family"] == "reduce":
                self.assertIn(st["op"], ("sum", "mean"))
                out = getattr(env[st["inputs"][0]], st["op"])(dim=st["dim"], keepdim="keepdim" in st.get("flags", []))
            elif "select" in st or "aliases" in st:   # a cat's parts, an input read through several views
                sym = {f"in{k}": n for k, n in enumerate(env[st["inputs"][0]].shape)}
                shape = tuple(self.out_shapes[st["output"]]) if st["output"] in getattr(self, "out_shapes", {}) else \
                    tuple(eval(e, {}, dict(sym)) for e in st["shape"])   # noqa: S307 - test-only
                out = self.run_pointwise(st, env, shape)
            elif "views" in st:   # a copy through a view: an intermediate of its recorded sizes, or an output
                (src,) = st["inputs"]
                x = env[src]
                sym = {f"in{k}": n for k, n in enumerate(x.shape)}
                shape = tuple(eval(e, {}, dict(sym)) for e in st["shape"]) if "shape" in st else \
                    tuple(self.out_shapes[st["output"]])   # noqa: S307 - test-only: expressions recognize wrote
                out = self.read_view(st["views"][src], x, shape)
            else:
                self.assertEqual(st["family"], "elementwise", st)
                scope = dict(fns, **{n: env[n] for n in st["inputs"]})
                out = eval(re.sub(r"(\d)f\b", r"\1", st["expression"]), {}, scope)   # noqa: S307 - test-only
            if st.get("dtype") in ("bfloat16", "float16"):   # stored as the chain stores it, read back as float
                out = out.to(getattr(torch, st["dtype"])).to(out.dtype)
            env[st["output"]] = out
        return env

    def assert_stages_near(self, d, stages, sizes, rtol):
        """The stages run in order (run_stages, in float64, each intermediate with a "dtype" rounded to it) on normal
        inputs of their definition's dtypes, for each of `sizes`, give the reference's outputs (run on those inputs
        in their dtypes) within rtol of each output's largest magnitude."""
        scope = {}
        exec(d["reference"], scope)   # noqa: S102 - test-only: the reference the test wrote
        for dims in sizes:
            env = {n: torch.randn(*[dims[a] if a in dims else int(a) for a in sp["shape"]]).to(getattr(torch, sp["dtype"]))
                   for n, sp in d["inputs"].items()}
            want = dict(zip(d["outputs"], scope["run"](*env.values())))
            self.out_shapes = {n: want[n].shape for n in want}
            got = self.run_stages(stages, {n: x.double() for n, x in env.items()})
            for name, w in want.items():
                err = (got[name] - w.double()).abs().max().item()
                self.assertLessEqual(err, rtol * w.double().abs().max().item(), (name, dims))

    def assert_stages_match(self, d, stages, ins, outs, sizes, atol):
        """The stages run in order (run_stages) on float64 normal inputs of each of `sizes` (every axis's size) give
        the definition's reference outputs within atol, output by output."""
        scope = {}
        exec(d["reference"], scope)   # noqa: S102 - test-only: the reference the test wrote
        for dims in sizes:
            env = {n: torch.randn(*[dims[a] for a in sh], dtype=torch.float64) for n, sh in ins.items()}
            want = dict(zip(outs, scope["run"](*env.values())))
            self.out_shapes = {n: want[n].shape for n in outs}   # what a stage writing an output is shaped as
            got = self.run_stages(stages, dict(env))
            for name in outs:
                self.assertTrue(torch.allclose(got[name], want[name], atol=atol), (name, dims))

    def run_pointwise(self, st, env, out_shape):
        """A pointwise stage evaluated as the elementwise templates read it, at every element of out_shape: each
        name (an input or an alias of one) read through its view (else as stored, broadcast by torch's rule), and a
        select's khive_piece the element's part along its axis; `c ? a : b` as torch.where."""
        import re
        fns = {"tanhf": torch.tanh, "expf": torch.exp, "erff": torch.erf, "sqrtf": torch.sqrt, "fabsf": torch.abs,
               "logf": torch.log, "sinf": torch.sin, "cosf": torch.cos, "where": torch.where}
        aliases = st.get("aliases") or {}
        scope = dict(fns)
        for name in list(st["inputs"]) + list(aliases):
            x = env[aliases.get(name, name)]
            v = (st.get("views") or {}).get(name)
            scope[name] = self.read_view(v, x, out_shape) if v else x.expand(out_shape) if x.dim() else x
        if "select" in st:
            ax, n = st["select"]["axis"], st["select"]["pieces"]
            shape = [1] * len(out_shape)
            shape[ax] = out_shape[ax]
            scope["khive_piece"] = (torch.arange(out_shape[ax]) // (out_shape[ax] // n)).view(shape).expand(out_shape)
        expr = re.sub(r"(\d)f\b", r"\1", st["expression"])
        while "?" in expr:   # the innermost (c ? a : b) first: as where(c, a, b)
            q = expr.rindex("?")
            start, end = _unmatched(expr, q, -1), _unmatched(expr, q, +1)
            cond, rest = expr[start + 1:q], expr[q + 1:end]
            depth = 0
            for i, ch in enumerate(rest):
                depth += ch == "("
                depth -= ch == ")"
                if ch == ":" and depth == 0:
                    break
            expr = expr[:start] + f"where({cond}, {rest[:i]}, {rest[i + 1:]})" + expr[end + 1:]
        return eval(expr, {}, scope)   # noqa: S307 - test-only: an expression recognize wrote

    def test_a_backward_pass_is_a_graph_of_stages_with_reused_values_and_bias_sums(self):
        # an MLP's backward (fc2 -> tanh-GELU -> fc1) over [B, S, H] rows: grad_fc1_out is read by three stages (its
        # bias sum, its weight product, the input's gradient), the weight gradients are products summed over (B, S),
        # the bias gradients sums over (B, S); fc1_bias is handed in and never read.
        axes = {"B": {"type": "var"}, "S": {"type": "var"}, "H": {"type": "const", "value": 6},
                "I": {"type": "const", "value": 10}}
        ins = {"go": ["B", "S", "H"], "x": ["B", "S", "H"], "w1": ["I", "H"], "fc1_bias": ["I"], "w2": ["H", "I"],
               "h1": ["B", "S", "I"], "a1": ["B", "S", "I"]}
        outs = {"gx": ["B", "S", "H"], "gw1": ["I", "H"], "gb1": ["I"], "gw2": ["H", "I"], "gb2": ["H"]}
        body = ("    H, I = go.shape[-1], h1.shape[-1]\n"
                "    gb2 = go.sum(dim=(0, 1))\n"
                "    gw2 = go.reshape(-1, H).t() @ a1.reshape(-1, I)\n"
                "    ga = torch.matmul(go, w2)\n"
                "    t = torch.tanh(0.79788456 * (h1 + 0.044715 * h1 * h1 * h1))\n"
                "    g1 = ga * (0.5 * (1.0 + t) + 0.5 * h1 * (1.0 - t * t) * 0.79788456 * (1.0 + 3 * 0.044715 * h1 * h1))\n"
                "    gb1 = g1.reshape(-1, I).sum(dim=0)\n"
                "    gw1 = g1.reshape(-1, I).t() @ x.reshape(-1, H)\n"
                "    gx = torch.matmul(g1, w1)\n"
                "    return gx, gw1, gb1, gw2, gb2\n")
        d = float32_definition("mlp_back", axes, ins, outs, body)
        r, _ = self.recognize(d, {"B": 2, "S": 3})
        self.assertEqual((r["op"], r["family"]), ("chain", "chain"), r)
        st = r["stages"]
        self.assertEqual(len(st), 7, st)
        by_out = {s["output"]: s for s in st}
        self.assertEqual(set(outs) - set(by_out), set())
        self.assertEqual((by_out["gb2"]["family"], by_out["gb2"]["dim"]), ("reduce", [0, 1]))
        self.assertEqual((by_out["gb1"]["family"], by_out["gb1"]["dim"]), ("reduce", [0, 1]))
        self.assertEqual(by_out["gw2"]["operands"], {"A": "go", "B": "a1", "layout_a": "col", "layout_b": "row"})
        # the pointwise gradient is stored once and read by three later stages
        (g1,) = [s["output"] for s in st if s["family"] == "elementwise"]
        self.assertEqual(sum(1 for s in st if g1 in s["inputs"]), 3)
        self.assertEqual(by_out["gw1"]["operands"], {"A": g1, "B": "x", "layout_a": "col", "layout_b": "row"})
        self.assertFalse(any("fc1_bias" in s["inputs"] for s in st))
        # other sizes than the traced B = 2, S = 3
        self.assert_stages_match(d, st, ins, outs,
                                 [{"B": b, "S": s, "H": 6, "I": 10} for b, s in ((1, 1), (3, 4), (2, 9))], 1e-6)

    def test_a_sum_of_two_products_fuses_the_second_as_a_residual(self):
        # a gated MLP's input gradient: grad_gate @ Wg + grad_up @ Wu, each gradient read by its weight's product too
        axes = {"T": {"type": "var"}, "H": {"type": "const", "value": 4}, "I": {"type": "const", "value": 6}}
        ins = {"go": ["T", "H"], "x": ["T", "H"], "wg": ["I", "H"], "wu": ["I", "H"], "wd": ["H", "I"],
               "gate": ["T", "I"], "up": ["T", "I"]}
        outs = {"gx": ["T", "H"], "gwg": ["I", "H"], "gwu": ["I", "H"]}
        body = ("    gi = go.mm(wd)\n"
                "    gg = gi * up * torch.sigmoid(gate)\n"
                "    gu = gi * gate\n"
                "    return gg.mm(wg) + gu.mm(wu), gg.t().mm(x), gu.t().mm(x)\n")
        d = float32_definition("swiglu_back", axes, ins, outs, body)
        r, _ = self.recognize(d, {"T": 5})
        self.assertEqual((r["op"], r["family"]), ("chain", "chain"), r)
        st = r["stages"]
        (gx,) = [s for s in st if s["output"] == "gx"]
        self.assertIn("residual", gx["operands"])   # one product stored, the other adds it
        self.assertLessEqual(len(st), 8)
        self.assert_stages_match(d, st, ins, outs, [{"T": t, "H": 4, "I": 6} for t in (1, 3, 11)], 1e-6)

    def test_an_operand_read_through_heads_transposed_and_merged_is_copied_once_for_both_products(self):
        # a projection's backward from per-head gradients: g [B, H, S, D] transposed and merged to [B, S, H * D] is
        # read by the input's gradient (a product of rows) and the weight's (summed over B and S); no gemm reads
        # that view, so it is copied once, and both products read the copy
        axes = {"B": {"type": "var"}, "S": {"type": "var"}, "H": {"type": "const", "value": 2},
                "D": {"type": "const", "value": 3}, "HD": {"type": "expr", "expression": "H * D"},
                "K": {"type": "const", "value": 5}}
        ins = {"g": ["B", "H", "S", "D"], "x": ["B", "S", "K"], "w": ["HD", "K"]}
        outs = {"gx": ["B", "S", "K"], "gw": ["HD", "K"]}
        body = ("    b, h, s, d = g.shape\n"
                "    gp = g.transpose(1, 2).contiguous().view(b, s, h * d)\n"
                "    gx = torch.matmul(gp, w)\n"
                "    gw = gp.view(-1, h * d).t() @ x.view(-1, x.shape[-1])\n"
                "    return gx, gw\n")
        d = float32_definition("heads_back", axes, ins, outs, body)
        r, _ = self.recognize(d, {"B": 2, "S": 4})
        self.assertEqual((r["op"], r["family"]), ("chain", "chain"), r)
        st = r["stages"]
        self.assertEqual([s["family"] for s in st], ["elementwise", "gemm", "gemm"], st)
        self.assertEqual((st[0]["inputs"], st[0]["output"]), (["g"], "khive_t1"))
        self.assertEqual([s["operands"]["A"] for s in st[1:]], ["khive_t1", "khive_t1"])
        self.assert_stages_match(d, st, ins, outs,
                                 [{"B": b, "S": s, "H": 2, "D": 3, "HD": 6, "K": 5} for b, s in ((1, 1), (3, 2), (2, 7))],
                                 1e-6)

    def test_rsqrt_is_written_as_one_over_sqrtf(self):
        # rsqrtf is a CUDA function; the CPU templates compile the expression with <cmath> alone (SOL L1 038's
        # q/k RMSNorm did not build on the CPU)
        r, _ = self.recognize(unary("rsq", "def run(x):\n    return torch.rsqrt(x + 1.0) * 2.0\n"), {"N": 8})
        self.assertEqual(r["op"], "elementwise")
        self.assertNotIn("rsqrtf", r["expression"])
        self.assertIn("sqrtf", r["expression"])

    def test_a_bias_gradient_over_merged_leading_axes_is_a_sum_over_them(self):
        from torch.fx.experimental.proxy_tensor import make_fx

        from khive_torch.recognize import _reduce_over_axis
        for fn, want in ((lambda x: x.reshape(-1, x.shape[-1]).sum(dim=0), ("sum", [0, 1], False)),
                         (lambda x: x.reshape(x.shape[0], -1).mean(dim=1), ("mean", [1, 2], False)),
                         (lambda x: x.reshape(-1, x.shape[-1]).sum(dim=1), None),   # the kept axes merged
                         (lambda x: x.reshape(6, 2, 2).sum(dim=0), None)):           # an axis split
            g = make_fx(fn)(torch.randn(2, 3, 4)).graph
            node = [n for n in g.nodes if n.op == "call_function"][-1]
            self.assertEqual(_reduce_over_axis(g, node), want)

    def test_rotate_half_is_a_select_of_two_views_of_one_input(self):
        # RoPE's backward: rotate_half = cat((-x2, x1), dim=-1) reads x twice, through two views (an alias names the
        # second), and the cat's halves are told apart by khive_piece; the sums over the heads are reduce stages.
        axes = {"B": {"type": "var"}, "H": {"type": "var"}, "S": {"type": "var"}, "D": {"type": "const", "value": 8}}
        ins = {"g": ["B", "H", "S", "D"], "q": ["B", "H", "S", "D"], "cos": ["B", "S", "D"], "sin": ["B", "S", "D"]}
        outs = {"gq": ["B", "H", "S", "D"], "gcos": ["B", "S", "D"], "gsin": ["B", "S", "D"]}
        body = ("    def rot(x):\n"
                "        return torch.cat((-x[..., 4:], x[..., :4]), dim=-1)\n"
                "    c, s = cos.unsqueeze(1), sin.unsqueeze(1)\n"
                "    gq = g * c - rot(g) * s\n"
                "    return gq, (g * q).sum(dim=1), (g * rot(q)).sum(dim=1)\n")
        d = float32_definition("rope_back", axes, ins, outs, body)
        r, _ = self.recognize(d, {"B": 2, "H": 3, "S": 5})
        self.assertEqual((r["op"], r["family"]), ("chain", "chain"), r)
        by_out = {st["output"]: st for st in r["stages"]}
        gq = by_out["gq"]
        self.assertEqual(gq["select"], {"axis": 3, "pieces": 2})
        self.assertEqual(set(gq["aliases"].values()), {"g"})
        self.assertIn("khive_piece == 0 ?", gq["expression"])
        # other sizes than the traced ones
        self.assert_stages_match(d, r["stages"], ins, outs,
                                 [{"B": b, "H": h, "S": s_, "D": 8} for b, h, s_ in ((1, 1, 1), (2, 4, 3), (3, 2, 7))], 1e-9)

    def test_a_cat_of_equal_parts_of_several_inputs_and_a_slice_inside_one_part(self):
        # q, k and v joined along the last axis (each read through its own view, the parts told apart by
        # khive_piece); cat((e, e))[..., :D] is e itself; unequal parts, and a cat's result transposed before the
        # output, are not read.
        axes = {"N": {"type": "var"}, "D": {"type": "const", "value": 4}, "D3": {"type": "expr", "expression": "3 * D"}}
        d = float32_definition("qkv_cat", axes, {"q": ["N", "D"], "k": ["N", "D"], "v": ["N", "D"]}, {"y": ["N", "D3"]},
                               "    return torch.cat([q, k * 2.0, v], dim=-1) + 1.0\n")
        r, _ = self.recognize(d, {"N": 3})
        self.assertEqual((r["op"], r["select"]), ("elementwise", {"axis": 1, "pieces": 3}), r)
        self.assertNotIn("aliases", r)
        for n in (1, 5):
            env = {x: torch.randn(n, 4, dtype=torch.float64) for x in "qkv"}
            st = dict(r, inputs=["q", "k", "v"])
            got = self.run_pointwise(st, env, (n, 12))
            self.assertTrue(torch.equal(got, torch.cat([env["q"], env["k"] * 2.0, env["v"]], dim=-1) + 1.0))
        d = float32_definition("emb_cat", {"N": {"type": "var"}, "D": {"type": "const", "value": 4}},
                               {"e": ["N", "D"], "x": ["N", "D"]}, {"y": ["N", "D"]},
                               "    return x * torch.cat((e, e), dim=-1).cos()[..., :4]\n")
        r, _ = self.recognize(d, {"N": 3})
        self.assertEqual((r["op"], r["expression"]), ("elementwise", "(x * cosf(e))"), r)
        self.assertNotIn("select", r)
        for i, body in enumerate(("    return torch.cat([q, k], dim=-1) + 1.0\n",
                                  "    return torch.cat([q, q], dim=-1).t() * 2.0\n")):
            d = float32_definition(f"no_cat{i}", {"N": {"type": "var"}, "D": {"type": "const", "value": 4},
                                              "E": {"type": "const", "value": 2}, "DE": {"type": "expr", "expression": "D + E"}},
                                   {"q": ["N", "D"], "k": ["N", "E"]}, {"y": ["N", "DE"]} if "k]" in body else {"y": ["D", "N"]},
                                   body.replace("[q, q]", "[q[:, :2], q[:, 2:]]"))
            r, _ = self.recognize(d, {"N": 3})
            self.assertNotIn("expression", r, body)

    def test_two_products_of_one_view_read_one_copy_and_rope_stays_one_stage(self):
        # RoPE's backward, then the heads transposed and merged for an input-gradient product and a weight-gradient
        # product (SOL L2 064's shape): the second product reads the copy the first one made; no product is fused
        # into the copy.
        axes = {"B": {"type": "var"}, "S": {"type": "var"}, "H": {"type": "const", "value": 2},
                "D": {"type": "const", "value": 4}, "HID": {"type": "const", "value": 6},
                "HD": {"type": "expr", "expression": "H * D"}}
        ins = {"g": ["B", "H", "S", "D"], "cos": ["B", "S", "D"], "sin": ["B", "S", "D"], "x": ["B", "S", "HID"],
               "w": ["HD", "HID"]}
        outs = {"gx": ["B", "S", "HID"], "gw": ["HD", "HID"]}
        body = ("    b, h, s, d = g.shape\n"
                "    t = g * sin.unsqueeze(1)\n"
                "    r = g * cos.unsqueeze(1) + torch.cat((t[..., 2:], -t[..., :2]), dim=-1)\n"
                "    p = r.transpose(1, 2).contiguous().view(b, s, h * d)\n"
                "    return torch.matmul(p, w), torch.matmul(p.view(-1, h * d).t(), x.view(-1, 6))\n")
        d = float32_definition("rope_proj_back", axes, ins, outs, body)
        r, _ = self.recognize(d, {"B": 2, "S": 3})
        self.assertEqual((r["op"], r["family"]), ("chain", "chain"), r)
        fams = [st["family"] for st in r["stages"]]
        self.assertEqual(fams, ["elementwise", "elementwise", "gemm", "gemm"], r["stages"])
        rope, copy = r["stages"][:2]
        self.assertEqual(rope["select"], {"axis": 3, "pieces": 2})
        self.assertEqual(copy["inputs"], [rope["output"]])
        self.assertTrue(all(st["operands"]["A"] == copy["output"] for st in r["stages"][2:]))
        self.assert_stages_match(d, r["stages"], ins, outs,
                                 [{"B": b, "S": s_, "H": 2, "D": 4, "HID": 6, "HD": 8} for b, s_ in ((1, 1), (3, 5))], 1e-9)

    def test_a_scalar_in_a_cat_part_is_read_by_name(self):
        # a 0-d input (a scalar retraced as a tensor) inside a part is one value everywhere: no view, read by name
        from torch.fx.experimental.proxy_tensor import make_fx

        from khive_torch.recognize import classify

        def f(q, k, s):
            return torch.cat([q * s, k], dim=-1)
        g = make_fx(f)(torch.randn(3, 4), torch.randn(3, 4), torch.tensor(0.5)).graph
        r = classify(g, 3, 3, names=["q", "k", "s"])
        self.assertEqual((r["op"], r["select"]), ("elementwise", {"axis": 1, "pieces": 2}), r)
        self.assertNotIn("s", r["views"])
        self.assertIn("(q * s)", r["expression"])
        for n in (1, 6):
            env = {"q": torch.randn(n, 4), "k": torch.randn(n, 4), "s": torch.tensor(-1.5)}
            got = self.run_pointwise(dict(r, inputs=["q", "k", "s"]), env, (n, 8))
            self.assertTrue(torch.equal(got, f(*env.values())))

    # -- mixed float dtypes (issue 24: bf16 gradients in float32 references) ----------------------------------------
    def test_float32_intermediates_of_a_bf16_gradient_are_stored_as_float32(self):
        # SOL L1 013's RMSNorm backward: a bf16 gradient upcast and multiplied by float32 saved tensors; the products
        # before the two reductions are float32 in the reference, so the chain stores them as float32 ("dtype"),
        # and the stage that writes the bf16 output reads bf16 and float32 inputs
        axes = {"B": {"type": "var"}, "S": {"type": "var"}, "H": {"type": "const", "value": 16}}
        f32 = lambda sh: {"shape": sh, "dtype": "float32"}   # noqa: E731
        bf16 = lambda sh: {"shape": sh, "dtype": "bfloat16"}   # noqa: E731
        d = {"name": "rms_back", "axes": axes,
             "inputs": {"g": bf16(["B", "S", "H"]), "n": f32(["B", "S", "H"]), "rstd": f32(["B", "S", "1"]),
                        "w": f32(["H"])},
             "outputs": {"gx": bf16(["B", "S", "H"]), "gr": bf16(["B", "S", "H"]), "gw": f32(["H"])},
             "reference": ("import torch\n\ndef run(g, n, rstd, w):\n"
                           "    g32 = g.to(torch.float32)\n"
                           "    gw = (g32 * n).sum(dim=(0, 1))\n"
                           "    gn = g32 * w\n"
                           "    m = (gn * n).mean(dim=-1, keepdim=True)\n"
                           "    gx = (rstd * (gn - m * n)).to(torch.bfloat16)\n"
                           "    return gx, gx.clone(), gw\n")}
        r, _ = self.recognize(d, {"B": 2, "S": 3})
        self.assertEqual((r["op"], r["family"]), ("chain", "chain"), r)
        st = r["stages"]
        mids = [s for s in st if s["output"].startswith("khive_t")]
        stored = {s["output"]: s.get("dtype") for s in mids if s["family"] == "elementwise"}
        self.assertEqual(sorted(stored.values()), ["float32", "float32"], st)
        self.assertFalse(any("dtype" in s for s in st if not s["output"].startswith("khive_t")), st)
        (gx,) = [s for s in st if s["output"] == "gx"]
        self.assertIn("g", gx["inputs"])
        self.assertIn("rstd", gx["inputs"])
        self.assert_stages_near(d, st, [{"B": b, "S": s_, "H": 16} for b, s_ in ((1, 1), (3, 4), (2, 9))], 1e-2)

    def test_an_intermediate_a_product_reads_is_stored_as_the_products_operands(self):
        # a float32 pointwise value that a bf16 product reads (through its cast) is stored as bf16, the product's
        # operand type; one that only pointwise stages read keeps float32
        axes = {"M": {"type": "var"}, "N": {"type": "const", "value": 8}, "K": {"type": "const", "value": 4}}
        d = {"name": "mixed_mm", "axes": axes,
             "inputs": {"g": {"shape": ["M", "N"], "dtype": "bfloat16"}, "a": {"shape": ["M", "N"], "dtype": "float32"},
                        "w": {"shape": ["N", "K"], "dtype": "bfloat16"}},
             "outputs": {"y": {"shape": ["M", "K"], "dtype": "bfloat16"}, "z": {"shape": ["M"], "dtype": "float32"}},
             "reference": ("import torch\n\ndef run(g, a, w):\n"
                           "    t = g.float() * torch.sigmoid(a)\n"
                           "    y = t.to(torch.bfloat16) @ w\n"
                           "    u = t * a\n"
                           "    return y, u.sum(dim=1)\n")}
        r, _ = self.recognize(d, {"M": 5})
        self.assertEqual((r["op"], r["family"]), ("chain", "chain"), r)
        st = r["stages"]
        by_out = {s["output"]: s for s in st}
        (gemm,) = [s for s in st if s["family"] == "gemm"]
        read = gemm["operands"]["A"]
        self.assertEqual(by_out[read].get("dtype"), "bfloat16", st)
        self.assertEqual([s.get("dtype") for s in st if s["family"] == "elementwise" and s["output"] != read
                          and s["output"].startswith("khive_t")], ["float32"], st)

    def test_a_pointwise_op_of_bf16_and_float32_inputs_reads_each_as_its_own_type(self):
        # SOL L1 090: -grad_cos * sin(theta) + grad_sin * cos(theta), the gradients bf16, theta and the result float32
        d = {"name": "rope_theta_back", "axes": {"N": {"type": "var"}},
             "inputs": {"gc": {"shape": ["N"], "dtype": "bfloat16"}, "gs": {"shape": ["N"], "dtype": "bfloat16"},
                        "th": {"shape": ["N"], "dtype": "float32"}},
             "outputs": {"y": {"shape": ["N"], "dtype": "float32"}},
             "reference": ("import torch\n\ndef run(gc, gs, th):\n"
                           "    return -gc.to(torch.float32) * torch.sin(th) + gs.to(torch.float32) * torch.cos(th)\n")}
        r, _ = self.recognize(d, {"N": 6})
        self.assertEqual((r["op"], r["family"]), ("elementwise", "elementwise"), r)
        self.assertNotIn("dtype", r)
        st = dict(r, inputs=["gc", "gs", "th"], output="y")
        for n in (1, 7, 33):
            env = {"gc": torch.randn(n).bfloat16(), "gs": torch.randn(n).bfloat16(), "th": torch.randn(n)}
            want = d["reference"]
            scope = {}
            exec(want, scope)   # noqa: S102 - test-only: the reference written above
            got = self.run_pointwise(st, {k: v.float() for k, v in env.items()}, (n,))
            self.assertTrue(torch.allclose(got, scope["run"](*env.values()), atol=1e-6), n)

    def test_a_cast_to_bf16_computed_on_is_rounded_there(self):
        # SOL L1 060 / 051: (float32 math).to(bf16) then more math; the stage rounds the value where the reference
        # does (khive_round_bf16), so the float32 result matches it exactly; a value returned as it is cast is not
        # wrapped (its store rounds it)
        d = {"name": "round_mid", "axes": {"N": {"type": "var"}},
             "inputs": {"g": {"shape": ["N"], "dtype": "bfloat16"}, "w": {"shape": ["N"], "dtype": "float32"}},
             "outputs": {"y": {"shape": ["N"], "dtype": "float32"}},
             "reference": "import torch\n\ndef run(g, w):\n    return (g.float() * w).to(torch.bfloat16).float() * w\n"}
        r, _ = self.recognize(d, {"N": 6})
        self.assertEqual(r["op"], "elementwise", r)
        self.assertIn("khive_round_bf16((g * w))", r["expression"])
        scope = {}
        exec(d["reference"], scope)   # noqa: S102 - test-only: the reference written above
        fns = {"khive_round_bf16": lambda x: x.to(torch.bfloat16).float()}
        for n in (1, 9, 40):
            env = {"g": torch.randn(n).bfloat16(), "w": torch.randn(n) * 3.7}
            got = eval(r["expression"], {}, dict(fns, g=env["g"].float(), w=env["w"]))   # noqa: S307 - test-only
            self.assertTrue(torch.equal(got, scope["run"](**env)), n)
        d2 = dict(d, name="round_end", outputs={"y": {"shape": ["N"], "dtype": "bfloat16"}},
                  reference="import torch\n\ndef run(g, w):\n    return (g.float() * w).to(torch.bfloat16)\n")
        r2, _ = self.recognize(d2, {"N": 6})
        self.assertNotIn("khive_round_bf16", r2["expression"])


if __name__ == "__main__":
    unittest.main()
