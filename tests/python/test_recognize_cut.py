"""khive_torch.recognize: references of one output that no family and no line of stages reads, cut as a graph of
stages as references of several outputs are (recognize_dag.py; issue 24): a softmax backward, a softmax after
pointwise ops, a loss, norms written out with a variance, a standard deviation or a vector norm
(recognize_decompose.py). Each recognised chain is evaluated stage by stage against the reference on sizes other than
the traced ones; what stays refused is checked by its message. The helpers are test_recognize.Recognize's."""
import json
import re
import unittest

try:
    import torch
except ImportError:   # the suite reports it; ctest marks the test skipped (exit code 77)
    torch = None

import test_recognize as base
from khive_torch.task import load_task


def _fmax(a, b):
    return torch.maximum(torch.as_tensor(a, dtype=torch.float64), torch.as_tensor(b, dtype=torch.float64))


def _fmin(a, b):
    return torch.minimum(torch.as_tensor(a, dtype=torch.float64), torch.as_tensor(b, dtype=torch.float64))


def _definition(name, axes, ins, outs, body):
    return base.float32_definition(name, axes, ins, outs, body)


@unittest.skipIf(torch is None, "PyTorch is not installed (scripts/setup.sh installs it into .deps/torch)")
class CutOneOutput(unittest.TestCase):
    setUp = base.Recognize.setUp
    tearDown = base.Recognize.tearDown
    recognize = base.Recognize.recognize
    read_view = base.Recognize.read_view
    run_pointwise = base.Recognize.run_pointwise
    base_stages = base.Recognize.run_stages

    def run_stages(self, stages, env):
        """test_recognize's run_stages, with a softmax stage (over its dim), a reduce stage (sum, mean, max, min) and a
        pointwise stage read as stored (torch's broadcast) evaluated here."""
        for st in stages:
            if st["family"] == "softmax":
                (x,) = st["inputs"]
                env[st["output"]] = torch.softmax(env[x], dim=st["dim"])
            elif st["family"] == "reduce":
                (x,) = st["inputs"]
                keep = "keepdim" in st.get("flags", [])
                fn = {"sum": torch.sum, "mean": torch.mean, "max": torch.amax, "min": torch.amin}[st["op"]]
                env[st["output"]] = fn(env[x], dim=st["dim"], keepdim=keep)
            elif st["family"] == "norm" and st["norm"]["stat"] == "var" and st["norm"].get("groups", 1) == 1:
                o = st["operands"]
                axes = st["norm"]["axes"]
                x = env[o["x"]]
                m = x.mean(dim=axes, keepdim=True)
                v = ((x - m) ** 2).mean(dim=axes, keepdim=True)
                y = (x - m) / torch.sqrt(v + st["norm"]["eps"])
                env[st["output"]] = y * env[o["weight"]] + env[o["bias"]] if "weight" in o else y
            elif st["family"] == "elementwise" and "views" in st and (
                    len(st["inputs"]) > 1 or st["output"] in getattr(self, "out_shapes", {})):
                # a pointwise stage with inputs read through views (a broadcast around a gap), the others by torch's
                # broadcast: evaluated at every element of its output
                plain = [env[n].shape for n in st["inputs"] if n not in st["views"]]
                shape = self.out_shapes.get(st["output"]) or torch.broadcast_shapes(*plain)
                env[st["output"]] = self.run_pointwise(st, env, tuple(shape))
            elif st["family"] == "elementwise" and not {"views", "select", "aliases"} & set(st):
                scope = {"tanhf": torch.tanh, "expf": torch.exp, "erff": torch.erf, "sqrtf": torch.sqrt,
                         "fabsf": torch.abs, "logf": torch.log, "fmaxf": _fmax, "fminf": _fmin}
                scope.update({n: env[n] for n in st["inputs"]})
                expr = re.sub(r"(\d)f\b", r"\1", st["expression"])
                env[st["output"]] = eval(expr, {}, scope)   # noqa: S307 - test-only: an expression recognize wrote
            else:
                self.base_stages([st], env)
        return env

    def assert_cut(self, d, traced, sizes, families, atol=1e-9):
        """d recognised on workload axes `traced` is a chain of stages of `families` (in order) whose last stage writes
        the output, and the stages run in order (float64) give the reference's output on each of `sizes`."""
        r, _ = self.recognize(d, traced)
        self.assertEqual((r.get("op"), r.get("family")), ("chain", "chain"), r)
        stages = r["stages"]
        self.assertEqual([st["family"] for st in stages], families, stages)
        (out,) = d["outputs"]
        self.assertEqual(stages[-1]["output"], out)
        scope = {}
        exec(d["reference"], scope)   # noqa: S102 - test-only: the reference the test wrote
        for dims in sizes:
            env = {n: torch.randn(*[dims[a] for a in sp["shape"]], dtype=torch.float64)
                   for n, sp in d["inputs"].items()}
            want = scope["run"](*env.values())
            self.out_shapes = {out: want.shape}
            got = self.run_stages(stages, dict(env))[out]
            # (a stage writes its output in row-major order: a plain read of a view to another shape is the same data)
            self.assertEqual(got.numel(), want.numel(), dims)
            got = got.reshape(want.shape)
            self.assertTrue(torch.allclose(got, want, atol=atol), (dims, (got - want).abs().max().item()))
        return stages

    def test_a_softmax_backward_is_a_product_a_row_sum_and_a_pointwise_stage(self):
        # y * (g - sum(y * g, -1)) * scale over [B, H, T, T]: the row sum reads y * g, the last stage reads y, g and the
        # row sums broadcast over the last axis
        axes = {"B": {"type": "var"}, "H": {"type": "var"}, "T": {"type": "var"}}
        d = _definition("softmax_back", axes, {"g": ["B", "H", "T", "T"], "y": ["B", "H", "T", "T"]},
                        {"gx": ["B", "H", "T", "T"]},
                        "    s = (y * g).sum(dim=-1, keepdim=True)\n"
                        "    return y * (g - s) * 0.125\n")
        st = self.assert_cut(d, {"B": 2, "H": 3, "T": 5}, [{"B": 1, "H": 1, "T": 7}, {"B": 3, "H": 2, "T": 4}],
                             ["elementwise", "reduce", "elementwise"])
        self.assertEqual((st[1]["op"], st[1]["dim"], st[1]["flags"]), ("sum", -1, ["keepdim"]))
        self.assertEqual(sorted(st[2]["inputs"]), sorted(["g", "y", st[1]["output"]]))

    def test_a_softmax_after_pointwise_ops_is_a_pointwise_stage_then_the_softmax(self):
        # Gemma's soft-capping: tanh(x / 30) * 30, then a softmax over the last axis
        axes = {"B": {"type": "var"}, "T": {"type": "var"}}
        d = _definition("softcap_softmax", axes, {"x": ["B", "T", "T"]}, {"p": ["B", "T", "T"]},
                        "    return torch.softmax(torch.tanh(x / 30.0) * 30.0, dim=-1)\n")
        st = self.assert_cut(d, {"B": 2, "T": 6}, [{"B": 1, "T": 3}, {"B": 4, "T": 9}], ["elementwise", "softmax"])
        self.assertEqual(st[1]["dim"], 2)

    def test_a_loss_is_a_pointwise_stage_then_its_reduction(self):
        # a mean squared error per row: the reduction's operand is a pointwise value of two inputs
        axes = {"N": {"type": "var"}, "C": {"type": "var"}}
        d = _definition("mse_rows", axes, {"x": ["N", "C"], "t": ["N", "C"]}, {"loss": ["N"]},
                        "    return ((x - t) ** 2).mean(dim=-1)\n")
        st = self.assert_cut(d, {"N": 3, "C": 8}, [{"N": 1, "C": 5}, {"N": 6, "C": 17}], ["elementwise", "reduce"])
        self.assertEqual((st[1]["op"], st[1]["dim"]), ("mean", -1))

    def test_a_sum_over_every_axis_is_a_reduce_over_all_of_them(self):
        # a squared error summed to one number (SOL L1 061's grad_gate): sum() with no dim is the sum over every axis
        axes = {"N": {"type": "var"}, "C": {"type": "var"}}
        d = _definition("sse", axes, {"x": ["N", "C"], "t": ["N", "C"]}, {"loss": []},
                        "    return ((x - t) ** 2).sum() * 0.5\n")
        st = self.assert_cut(d, {"N": 3, "C": 8}, [{"N": 1, "C": 5}, {"N": 6, "C": 17}],
                             ["elementwise", "reduce", "elementwise"])
        self.assertEqual((st[1]["op"], st[1]["dim"], st[1].get("flags")), ("sum", [0, 1], None))

    def test_a_layer_norm_written_with_a_population_variance_is_two_means_and_pointwise_stages(self):
        # var(unbiased=False) is the mean of the squared difference from the mean: the reference's own mean is the
        # variance's first pass, stored once
        axes = {"T": {"type": "var"}, "H": {"type": "var"}}
        d = _definition("ln_written", axes, {"x": ["T", "H"], "w": ["H"], "b": ["H"]}, {"y": ["T", "H"]},
                        "    m = x.mean(dim=-1, keepdim=True)\n"
                        "    v = x.var(dim=-1, keepdim=True, unbiased=False)\n"
                        "    return (x - m) / torch.sqrt(v + 1e-5) * w + b\n")
        st = self.assert_cut(d, {"T": 3, "H": 8}, [{"T": 1, "H": 5}, {"T": 7, "H": 16}],
                             ["reduce", "elementwise", "reduce", "elementwise"], atol=1e-7)
        self.assertEqual([s["op"] for s in st if s["family"] == "reduce"], ["mean", "mean"])

    def test_a_standard_deviation_and_a_vector_norm_are_their_means_and_sums(self):
        axes = {"T": {"type": "var"}, "H": {"type": "var"}}
        d = _definition("std_scaled", axes, {"x": ["T", "H"]}, {"y": ["T", "H"]},
                        "    c = x - x.mean(dim=-1, keepdim=True)\n"
                        "    return c / (x.std(dim=-1, keepdim=True, unbiased=False) + 1e-3)\n")
        self.assert_cut(d, {"T": 3, "H": 8}, [{"T": 2, "H": 5}, {"T": 5, "H": 12}],
                        ["reduce", "elementwise", "reduce", "elementwise"], atol=1e-7)
        # x * g / |x|_2 over the last axis, g read broadcast: a sum of squares, then the rest
        d = _definition("l2_scaled", axes, {"x": ["T", "H"], "g": ["H"]}, {"y": ["T", "H"]},
                        "    return x * g / torch.linalg.vector_norm(x, 2, dim=-1, keepdim=True).clamp_min(1e-6)\n")
        st = self.assert_cut(d, {"T": 3, "H": 8}, [{"T": 2, "H": 5}, {"T": 5, "H": 12}],
                             ["elementwise", "reduce", "elementwise"], atol=1e-7)
        self.assertEqual(st[1]["op"], "sum")
        self.assertIn("sqrtf", st[2]["expression"])

    def test_a_product_read_again_past_its_softmax_is_a_graph_of_stages(self):
        # softmax(x @ w^T) + x @ w^T: the product stored once, read by the softmax and by the add
        axes = {"M": {"type": "var"}, "K": {"type": "var"}, "N": {"type": "var"}}
        d = _definition("sm_plus", axes, {"x": ["M", "K"], "w": ["N", "K"]}, {"y": ["M", "N"]},
                        "    t = x @ w.t()\n"
                        "    return torch.softmax(t, dim=1) + t\n")
        st = self.assert_cut(d, {"M": 3, "K": 5, "N": 7}, [{"M": 1, "K": 2, "N": 3}, {"M": 6, "K": 9, "N": 4}],
                             ["gemm", "softmax", "elementwise"])
        self.assertEqual(st[0]["operands"], {"A": "x", "B": "w", "layout_a": "row", "layout_b": "col"})
        self.assertEqual(sorted(st[2]["inputs"]), ["khive_t1", "khive_t2"])

    def test_a_scalar_beside_a_viewed_input_is_read_by_name(self):
        # a 0-d input (a scalar retraced as a tensor) next to an input read through a view (SOL L2 015's
        # x * embed_scale + pos[:S]): one value everywhere, read by name, no view of it
        from torch.fx.experimental.proxy_tensor import make_fx

        from khive_torch.recognize import classify

        def f(x, pe, s):
            return x * s + pe.t()
        g = make_fx(f)(torch.randn(3, 4), torch.randn(4, 3), torch.tensor(0.5)).graph
        r = classify(g, 3, 3, names=["x", "pe", "s"])
        self.assertEqual(r["op"], "elementwise", r)
        self.assertEqual(sorted(r["views"]), ["pe"])
        for n in (1, 6):
            env = {"x": torch.randn(n, 4), "pe": torch.randn(4, n), "s": torch.tensor(-1.5)}
            got = self.run_pointwise(dict(r, inputs=["x", "pe", "s"]), env, (n, 4))
            self.assertTrue(torch.equal(got, f(*env.values())))

    def test_a_statistic_broadcast_around_a_gap_is_read_through_a_view_traced_where_no_axis_is_1(self):
        # ConvNeXt-V2's GRN over [B, H, W, C]: |x|_2 over (H, W) is [B, 1, 1, C], read against [B, H, W, C] around the
        # broadcast H and W (no one run of the output's axes: the binder takes it through a view). The smallest
        # workload has B = 1, where [1, 1, 1, C] tells no gap: the cut is traced on the smallest one without a 1.
        axes = {"B": {"type": "var"}, "H": {"type": "var"}, "W": {"type": "var"}, "C": {"type": "const", "value": 6}}
        d = _definition("grn", axes, {"x": ["B", "H", "W", "C"], "g": ["1", "1", "1", "C"], "b": ["1", "1", "1", "C"]},
                        {"y": ["B", "H", "W", "C"]},
                        "    gx = torch.linalg.vector_norm(x, 2, dim=(1, 2), keepdim=True)\n"
                        "    nx = gx / (gx.mean(dim=-1, keepdim=True) + 1e-6)\n"
                        "    return g * (x * nx) + b + x\n")
        from khive_torch.recognize import recognize
        folder = self.root / "grn"
        folder.mkdir()
        (folder / "definition.json").write_text(json.dumps(d))
        (folder / "workload.jsonl").write_text(
            json.dumps({"uuid": "one", "axes": {"B": 1, "H": 3, "W": 3}}) + "\n"
            + json.dumps({"uuid": "two", "axes": {"B": 2, "H": 3, "W": 4}}) + "\n")
        r = recognize(torch, load_task(folder))
        self.assertEqual(r.get("op"), "chain", r)
        stages = r["stages"]
        self.assertEqual([s["family"] for s in stages], ["elementwise", "reduce", "elementwise", "reduce",
                                                          "elementwise"])
        gap = stages[-1]
        self.assertEqual(list(gap["views"]), [stages[2]["output"]], gap)
        self.assertEqual(gap["views"][stages[2]["output"]]["strides"][1], "0")
        scope = {}
        exec(d["reference"], scope)   # noqa: S102 - test-only: the reference written above
        for dims in ({"B": 3, "H": 2, "W": 5, "C": 6}, {"B": 1, "H": 4, "W": 1, "C": 6}):
            env = {n: torch.randn(*[dims[a] if a in dims else int(a) for a in sp["shape"]], dtype=torch.float64)
                   for n, sp in d["inputs"].items()}
            want = scope["run"](*env.values())
            self.out_shapes = {"y": want.shape}
            got = self.run_stages(stages, dict(env))["y"]
            self.assertTrue(torch.allclose(got, want, atol=1e-9), dims)

    def test_a_norms_eps_argument_is_named_as_its_operand(self):
        # relu(group_norm(x, eps=eps)): the norm stage's eps is the scalar input of that value, which the binding reads
        # per call (SOL L1 002, L2 023: 1e-6 on some workloads, 1e-5 on others); a second norm's scalar of the same
        # value leaves both numbers (which is which is not known)
        from khive_torch.recognize import recognize
        axes = {"N": {"type": "var"}, "C": {"type": "const", "value": 4}, "L": {"type": "var"}}
        for extra in ((), ("eps2",)):
            ins = {"x": {"shape": ["N", "C", "L"], "dtype": "float32"}, "w": {"shape": ["C"], "dtype": "float32"},
                   "b": {"shape": ["C"], "dtype": "float32"}, "eps": {"shape": None, "dtype": "float32"}}
            body = "    return torch.relu(F.group_norm(x, 2, w, b, eps=eps))\n"
            values = {"eps": 1e-3}
            for e in extra:
                ins[e] = {"shape": None, "dtype": "float32"}
                values[e] = 1e-3
                body = "    return F.group_norm(torch.relu(F.group_norm(x, 2, w, b, eps=eps)), 4, eps=eps2)\n"
            d = {"name": f"gn_eps{len(extra)}", "axes": axes, "inputs": ins,
                 "outputs": {"y": {"shape": ["N", "C", "L"], "dtype": "float32"}},
                 "reference": "import torch\nimport torch.nn.functional as F\n\ndef run("
                              + ", ".join(ins) + "):\n" + body}
            folder = self.root / d["name"]
            folder.mkdir()
            (folder / "definition.json").write_text(json.dumps(d))
            (folder / "workload.jsonl").write_text(json.dumps({"uuid": "w", "axes": {"N": 2, "L": 5}, "inputs": {
                k: {"type": "scalar", "value": v} for k, v in values.items()}}) + "\n")
            r = recognize(torch, load_task(folder))
            self.assertEqual(r.get("op"), "chain", r)
            norm = r["stages"][0]
            self.assertEqual((norm["family"], norm["norm"]["eps"], norm["norm"]["groups"]), ("norm", 1e-3, 2), norm)
            if extra:
                self.assertEqual([s["family"] for s in r["stages"]], ["norm", "elementwise", "norm"])
                for st in (r["stages"][0], r["stages"][2]):
                    self.assertNotIn("eps", st["operands"])
                    self.assertFalse({"eps", "eps2"} & set(st["inputs"]))
            else:
                self.assertEqual(norm["operands"]["eps"], "eps")
                self.assertIn("eps", norm["inputs"])

    def test_an_input_read_through_two_views_is_an_alias_for_the_second(self):
        # adaLN's modulation: shift and scale are the two halves of one [B, 2C] tensor, each unsqueezed over S: two
        # views of one input, the second read through an alias (m_v1) with its own view
        from torch.fx.experimental.proxy_tensor import make_fx

        from khive_torch.recognize import classify

        def f(x, m):
            c = x.shape[-1]
            return x * (1.0 + m[:, c:].unsqueeze(1)) + m[:, :c].unsqueeze(1)
        g = make_fx(f)(torch.randn(2, 3, 4), torch.randn(2, 8)).graph
        r = classify(g, 2, 2, names=["x", "m"])
        self.assertEqual(r["op"], "elementwise", r)
        self.assertEqual(r["aliases"], {"m_v1": "m"})
        self.assertEqual(sorted(r["views"]), ["m", "m_v1"])
        self.assertEqual({r["views"]["m"]["offset"], r["views"]["m_v1"]["offset"]}, {"0", "4"})
        for b, s in ((1, 1), (3, 5)):   # other batch and sequence sizes (C = 4 is the traced one)
            env = {"x": torch.randn(b, s, 4), "m": torch.randn(b, 8)}
            got = self.run_pointwise(dict(r, inputs=["x", "m"]), env, (b, s, 4))
            self.assertTrue(torch.allclose(got, f(*env.values()), atol=1e-6), (b, s))

    def test_a_norms_result_read_through_a_view_is_read_so_by_the_next_stage(self):
        # relu of a layer norm's [B, H, W, C] flattened to [B, H * W, C]: the norm's stage stops at its result (no
        # family binds a norm returned through a view), the next stage reads it through the view
        axes = {"B": {"type": "var"}, "H": {"type": "var"}, "W": {"type": "var"}, "C": {"type": "const", "value": 6},
                "HW": {"type": "expr", "expression": "H * W"}}
        d = _definition("ln_flat", axes, {"x": ["B", "H", "W", "C"], "w": ["C"], "b": ["C"]}, {"y": ["B", "HW", "C"]},
                        "    n, h, w_, c = x.shape\n"
                        "    t = torch.nn.functional.layer_norm(x, (c,), w, b, eps=1e-5)\n"
                        "    return torch.relu(t.reshape(n, h * w_, c)) + 1.0\n")
        sizes = [{"B": 1, "H": 2, "W": 3, "C": 6, "HW": 6}, {"B": 3, "H": 4, "W": 1, "C": 6, "HW": 4}]
        st = self.assert_cut(d, {"B": 2, "H": 3, "W": 2}, sizes, ["norm", "elementwise"], atol=1e-7)
        self.assertEqual((st[0]["output"], st[0]["norm"]["axes"]), ("khive_t1", [3]))
        self.assertEqual(st[1]["inputs"], ["khive_t1"])

    def test_scalars_a_norm_wants_as_numbers_are_traced_as_tensors_one_at_a_time(self):
        # a layer norm's eps must be a Python number, so tracing every scalar as a tensor at once fails; each alone:
        # the pointwise stage's eps is read by name, and the norm's eps (of the same value) is then the other one
        from khive_torch.recognize import recognize
        axes = {"T": {"type": "var"}, "C": {"type": "const", "value": 6}}
        ins = {"x": {"shape": ["T", "C"], "dtype": "float32"}, "w": {"shape": ["C"], "dtype": "float32"},
               "b": {"shape": ["C"], "dtype": "float32"}, "eps": {"shape": None, "dtype": "float32"},
               "ln_eps": {"shape": None, "dtype": "float32"}}
        d = {"name": "two_eps", "axes": axes, "inputs": ins, "outputs": {"y": {"shape": ["T", "C"], "dtype": "float32"}},
             "reference": "import torch\nimport torch.nn.functional as F\n\ndef run(x, w, b, eps, ln_eps):\n"
                          "    t = F.layer_norm(x, (6,), w, b, eps=ln_eps)\n"
                          "    return t / (t.abs().mean(dim=-1, keepdim=True) + eps)\n"}
        folder = self.root / "two_eps"
        folder.mkdir()
        (folder / "definition.json").write_text(json.dumps(d))
        (folder / "workload.jsonl").write_text(json.dumps({"uuid": "w", "axes": {"T": 3}, "inputs": {
            "eps": {"type": "scalar", "value": 1e-3}, "ln_eps": {"type": "scalar", "value": 1e-3}}}) + "\n")
        r = recognize(torch, load_task(folder))
        self.assertEqual(r.get("op"), "chain", r)
        fams = [s["family"] for s in r["stages"]]
        self.assertEqual(fams, ["norm", "elementwise", "reduce", "elementwise"], r["stages"])
        self.assertEqual(r["stages"][0]["operands"].get("eps"), "ln_eps")
        self.assertIn("eps", r["stages"][-1]["inputs"])
        self.assertRegex(r["stages"][-1]["expression"], r"\beps\b")
        self.assertNotIn("unread_scalars", r)

    def test_what_no_stage_computes_stays_refused_with_the_reason(self):
        axes = {"T": {"type": "var"}, "H": {"type": "var"}}
        # an unbiased variance divides by H - 1, a number of the traced workload: not rewritten
        d = _definition("var_unbiased", axes, {"x": ["T", "H"]}, {"y": ["T", "H"]},
                        "    return (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, keepdim=True) + 1e-5)\n")
        r, _ = self.recognize(d, {"T": 3, "H": 8})
        self.assertNotEqual(r.get("op"), "chain", r)
        self.assertIn("as a graph of stages: an op that is no stage of a chain: var", r.get("why", ""))
        # a buffer filled in place (zeros_like, then a slice assigned): the value's own ops are only the buffer, so a
        # cut would read it as a copy of nothing the reference computes (SOL L2 060 was written as a one-stage copy)
        d = _definition("filled", axes, {"x": ["T", "H"]}, {"y": ["T", "H"]},
                        "    out = torch.zeros_like(x)\n"
                        "    out[:, 1:] = x[:, 1:].exp().cumsum(1)\n"
                        "    return out\n")
        r, _ = self.recognize(d, {"T": 3, "H": 8})
        self.assertNotEqual(r.get("op"), "chain", r)
        self.assertIn("as a graph of stages: copy_ writes in place into the value the reference returns",
                      r.get("why", ""))
        # a sort is no stage either
        d = _definition("sorted_minus_max", axes, {"x": ["T", "H"]}, {"y": ["T", "H"]},
                        "    return torch.sort(x, dim=-1).values - x.amax(-1, keepdim=True)\n")
        r, _ = self.recognize(d, {"T": 3, "H": 8})
        self.assertNotEqual(r.get("op"), "chain", r)
        self.assertIn("an op that is no stage of a chain: sort", r.get("why", ""))

    def test_what_one_family_binds_is_not_cut(self):
        # a plain softmax and a plain row sum stay one stage each
        axes = {"T": {"type": "var"}, "H": {"type": "var"}}
        r, _ = self.recognize(_definition("sm", axes, {"x": ["T", "H"]}, {"y": ["T", "H"]},
                                          "    return torch.softmax(x, dim=-1)\n"), {"T": 3, "H": 8})
        self.assertEqual((r["op"], r.get("dim")), ("softmax", 1))
        r, _ = self.recognize(_definition("rs", axes, {"x": ["T", "H"]}, {"y": ["T"]},
                                          "    return x.sum(dim=-1)\n"), {"T": 3, "H": 8})
        self.assertEqual((r["op"], r.get("dim")), ("sum", -1))


if __name__ == "__main__":
    unittest.main()
