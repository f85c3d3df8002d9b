"""Attention read from a reference's ATen graph (issue 24): whether the graph is exactly what the attention templates
compute, and the facts the tuner needs to bind them (kernels/attention, docs/tuner.md "attention").

    from khive_torch.recognize_attention import read_attention
    r = read_attention(torch, graph, fn, task, workload)
    r == {"attention": {"q": "q", "k": "k", "v": "v",
                        "layout": {"q": "bshd", "k": "bshd", "v": "bshd", "o": "bshd"},
                        "gqa": "interleave", "causal": "bottom_right", "scale": "1/sqrt(D)", "head_dim": 64}}
    # or, when the graph is more (or other) than one attention of three inputs:
    r == {"why": "q is computed from hidden_states, q_proj_weight, cos, sin by mm, mul, cat, neg, add (a projection,"
                 " rope) ..."}

The templates compute o = softmax(q·k^T·scale [+ causal mask])·v of three inputs q, k, v and nothing else. The
graph is read in two steps:

1. Structure. The one attention of the graph: an SDPA call (aten._scaled_dot_product_*), or a softmax over the last
   axis between two products (scores = q·k^T, o = p·v). Its q, k and v must be task inputs reached through data
   movement only (views, transposes, expands, repeats, casts; q and k may be scaled by numbers); the scores may be
   scaled by numbers and masked by a constant (a mask built from ones / triu / tril, no input in it); the result
   must reach the task's one output through data movement. Anything else -- a projection, rope, a norm, an
   additive mask input, dropout, softcapping, a residual, other inputs -- is said in "why", and nothing is recorded
   for binding.
2. Facts, each established exactly or numerically, never guessed:
   - layout ("bshd": [B, S, H, D] as the templates read q/o and k/v; "bhsd": [B, H, S, D]; "bhd": decode's
     [B, H, D]; "bsd": one head; "bs(hd)": o as [B, S, H*D]; "other"): the data-movement ops from the input to the
     attention's operand are replayed on a tensor of element indices, so where every element lands is known;
   - gqa (how query head h finds its KV head): "none" (as many KV heads), "interleave" (h / (Hq / Hkv): SDPA's
     enable_gqa, repeat_interleave, [:, :, None].expand().reshape()), "tile" (h % Hkv: k.repeat(1, G, 1, 1));
     from the same replay;
   - causal (false, "bottom_right": query i sees keys j <= i + Skv - Sq, as the templates mask; "top_left": j <=
     i, torch's is_causal) and scale ("1/sqrt(D)", or the number the reference multiplies by): the reference is run
     on random q, k, v and compared with each candidate reading, on the traced workload and then on the smallest
     other workloads that tell the remaining candidates apart (Sq != Skv, Sq > 1, another head dim), within the
     memory budget. No candidate left: "why" says the output is not what was read. Candidates no workload of the
     task tells apart compute the same on every workload: the one the templates compute is kept.

Nothing here is trusted for correctness (the guard checks every kernel); it decides whether the tuner tries the
attention templates at all, and says why not.
"""
import math

from .recognize import _name

__all__ = ["read_attention"]

# Ops that only move or cast data between an input and the attention's operand (replayed on index tensors).
MOVES = {"view", "_unsafe_view", "reshape", "t", "transpose", "permute", "expand", "clone", "contiguous", "detach",
         "alias", "_to_copy", "to", "unsqueeze", "squeeze", "lift_fresh_copy", "_reshape_alias", "view_as",
         "expand_as", "repeat", "repeat_interleave", "flatten", "unflatten", "squeeze_", "unsqueeze_"}
# Casts: replayed without their dtype, so the index tensor stays float64.
CASTS = {"_to_copy", "to"}
PRODUCTS = {"bmm", "mm", "matmul"}
SOFTMAXES = {"_softmax", "softmax", "_safe_softmax"}
# Ops a constant mask is built of (no input reaches them).
HINTS = [({"mm", "addmm", "bmm", "matmul", "linear", "baddbmm"}, "a projection"),
         ({"cat", "neg"}, "rope"),
         ({"rsqrt", "pow", "mean", "native_layer_norm", "native_group_norm", "rms_norm", "_fused_rms_norm"}, "a norm"),
         ({"native_dropout", "bernoulli", "bernoulli_", "dropout"}, "dropout"),
         ({"convolution"}, "a convolution"),
         ({"silu", "gelu", "relu", "sigmoid"}, "an activation")]
LAYOUTS = {4: ("bshd", "bhsd"), 3: ("bhd", "bsd")}
LAYOUT_TEXT = {"bshd": "[B, S, H, D]", "bhsd": "[B, H, S, D]", "bhd": "[B, H, D]", "bsd": "[B, S, D] (one head)",
               "bs(hd)": "[B, S, H*D]"}
# How long a numerical check may take: the scores' elements times the head dim (about 2^31 multiply-adds is a few
# seconds on two cores).
MAX_CHECK_MACS = 1 << 31


def _shape(node):
    val = node.meta.get("val") if hasattr(node, "meta") else None
    shape = getattr(val, "shape", None)
    return tuple(int(d) for d in shape) if shape is not None else None


def _is_node(a):
    return hasattr(a, "op") and hasattr(a, "users")


def _node_args(node):
    out = []

    def walk(a):
        if _is_node(a):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            for e in a:
                walk(e)
        elif isinstance(a, dict):
            for e in a.values():
                walk(e)
    walk(node.args)
    walk(node.kwargs)
    return out


def _closure(node, step):
    """node and every node reached from it by step (a node -> its neighbours)."""
    seen, todo = set(), [node]
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        todo.extend(step(n))
    return seen


def _ancestors(node):
    """Every node node is computed from (itself included)."""
    return _closure(node, _node_args)


def _descendants(node):
    """Every node computed from node (itself included)."""
    return _closure(node, lambda n: n.users)


def _number(a):
    return isinstance(a, (int, float)) and not isinstance(a, bool)


def _call_args(node):
    """{argument name: value} of an ATen call, its schema's defaults filled in."""
    schema = getattr(node.target, "_schema", None)
    if schema is None:
        return {}
    out = {}
    for i, a in enumerate(schema.arguments):
        if i < len(node.args) and not a.kwarg_only:
            out[a.name] = node.args[i]
        elif a.name in node.kwargs:
            out[a.name] = node.kwargs[a.name]
        elif a.has_default_value():
            out[a.name] = a.default_value
        else:
            out[a.name] = None
    return out


def _ops_text(nodes):
    """"mm, mul, cat, neg (a projection, rope)": the compute ops among nodes, and what they look like."""
    names = []
    nodes = list(nodes)
    if nodes:   # in the graph's order
        order = {m: i for i, m in enumerate(nodes[0].graph.nodes)}
        nodes.sort(key=lambda m: order.get(m, 0))
    for n in nodes:
        if n.op == "call_function":
            nm = _name(n.target)
            if nm not in MOVES and nm not in ("getitem",) and nm not in names:
                names.append(nm)
    hints = [h for ops, h in HINTS if set(names) & ops and not (h == "rope" and not {"cat", "neg"} <= set(names))]
    shown = ", ".join(names[:10]) + (", ..." if len(names) > 10 else "")
    return shown + (f" ({', '.join(hints)})" if hints else "")


class _Graph:
    """The graph with the task's input names of its placeholders."""

    def __init__(self, graph, names):
        self.graph = graph
        self.placeholders = [n for n in graph.nodes if n.op == "placeholder"]
        self.names = {p: names[i] if i < len(names) else p.name for i, p in enumerate(self.placeholders)}

    def inputs_of(self, node):
        return [self.names[p] for p in self.placeholders if p in _ancestors(node)]

    def constant(self, node):
        """Whether no input reaches node (a mask built in the reference from shapes alone)."""
        return not any(p in _ancestors(node) for p in self.placeholders)


def _operand(g, node, role, scalable):
    """(placeholder, path from it to node, factor) when node is an input read through data movement (and, for q and
    k, multiplied or divided by numbers: factor); else a sentence saying what computes it."""
    path, factor, n = [], 1.0, node
    while n.op == "call_function":
        nm = _name(n.target)
        tensors = _node_args(n)
        if len(tensors) != 1 or not n.args or n.args[0] is not tensors[0]:
            break
        if nm in MOVES:
            pass
        elif scalable and nm in ("mul", "div") and len(n.args) == 2 and _number(n.args[1]) and not n.kwargs:
            factor = factor * n.args[1] if nm == "mul" else factor / n.args[1]
        else:
            break
        path.append(n)
        n = tensors[0]
    if n.op == "placeholder":
        return n, path[::-1], factor
    inputs = g.inputs_of(node)
    return (f"{role} is computed from {', '.join(inputs) or 'no input'} by {_ops_text(_ancestors(node))}, not read "
            "from an input")


def _scores_path(g, sm):
    """From the softmax's input up to the scores product: (product, factor, masks, problems)."""
    factor, masks, problems, n = 1.0, [], [], sm.args[0]
    while _is_node(n) and n.op == "call_function":
        nm = _name(n.target)
        if nm in PRODUCTS:
            return n, factor, masks, problems
        a = list(n.args)
        if nm in MOVES and nm not in ("repeat", "repeat_interleave", "expand", "expand_as"):
            n = a[0]
        elif nm in ("mul", "div") and len(a) == 2 and _is_node(a[0]) and _number(a[1]) and not n.kwargs:
            factor = factor * a[1] if nm == "mul" else factor / a[1]
            n = a[0]
        elif nm in ("add", "sub") and len(a) == 2 and any(_is_node(x) and _has_product(x) for x in a):
            scored = [x for x in a if _is_node(x) and _has_product(x)]
            if len(scored) != 1 or (nm == "sub" and scored[0] is not a[0]):
                problems.append(f"the scores go through {nm} of more than a constant mask")
                return None, factor, masks, problems
            other = a[1] if scored[0] is a[0] else a[0]
            if _is_node(other) and not g.constant(other):
                problems.append(f"{', '.join(g.inputs_of(other))} is added to the scores (an additive mask or bias "
                                "input; the templates take none)")
            elif _is_node(other):
                masks.append(other)
            n = scored[0]
        elif nm == "masked_fill" and len(a) >= 3 and _is_node(a[0]):
            if _is_node(a[1]) and not g.constant(a[1]):
                problems.append(f"the scores are masked by {', '.join(g.inputs_of(a[1]))} (a mask input; the templates "
                                "take none)")
            masks.append(a[1])
            n = a[0]
        elif nm == "where" and len(a) == 3:
            scored = [x for x in a[1:] if _is_node(x) and _has_product(x)]
            if len(scored) != 1:
                problems.append("the scores go through where() of more than a constant mask")
                return None, factor, masks, problems
            for x in a:
                if x is not scored[0] and _is_node(x) and not g.constant(x):
                    problems.append(f"the scores are masked by {', '.join(g.inputs_of(x))} (a mask input; the "
                                    "templates take none)")
            masks.append(a[0])
            n = scored[0]
        else:
            problems.append(f"the scores go through {_ops_text(_ancestors(n) - _ancestors_of_products(n))} before "
                            "the softmax (the templates scale and mask them only)")
            return None, factor, masks, problems
    problems.append("no product of q and k^T before the softmax")
    return None, factor, masks, problems


def _has_product(n):
    """Whether a product is among what n is computed from (the scores' side of a mask)."""
    return any(m.op == "call_function" and _name(m.target) in PRODUCTS for m in _ancestors(n))


def _ancestors_of_products(n):
    """The products above n and everything they are computed from (left out of a message about what follows)."""
    out = set()
    for m in _ancestors(n):
        if m.op == "call_function" and _name(m.target) in PRODUCTS:
            out |= _ancestors(m)
    return out


def _probs_path(sm):
    """From the softmax down to the product with v: (product, problem)."""
    n = sm
    while True:
        users = list(n.users)
        if len(users) != 1:
            if any(u.op == "output" for u in users):
                return None, "the probabilities are also an output of the reference (the templates write o only)"
            used = ", ".join(sorted({_name(u.target) for u in users if u.op == "call_function"}))
            return None, f"the probabilities are used more than once ({used}; the templates use them once, for p·v)"
        u = users[0]
        nm = _name(u.target) if u.op == "call_function" else u.op
        if nm in PRODUCTS:
            if u.args[0] is not n:
                return None, "the probabilities are the second operand of their product (the templates compute p·v)"
            return u, None
        if nm in MOVES and nm not in ("repeat", "repeat_interleave"):
            n = u
            continue
        return None, f"the probabilities go through {_ops_text(_descendants(n) - {n})} before the product with v"


def _output_path(g, out):
    """From the attention's result down to the graph's output: (path, problem)."""
    path, n = [], out
    while True:
        users = list(n.users)
        outs = [u for u in users if u.op == "output"]
        if outs and len(users) == 1:
            res = outs[0].args[0]
            if isinstance(res, (tuple, list)) and len(res) != 1:
                return None, f"the reference returns {len(res)} outputs (the templates write one, o)"
            return path, None
        if len(users) != 1 or users[0].op != "call_function" or _name(users[0].target) not in MOVES:
            rest = set()
            for u in users:
                rest |= _descendants(u)
            return None, f"the attention's result goes through {_ops_text(rest)} before the output"
        n = users[0]
        path.append(n)


def _core(g):
    """The one attention of the graph: {"q", "k", "v": (placeholder, path, factor), "out": node, "out_path",
    "kind": "sdpa" | "products", "factor": number or None (SDPA's default scale), "masks": [nodes], "is_causal"} and
    "problems": what else the graph does (the reading is only recorded without any)."""
    calls = [n for n in g.graph.nodes if n.op == "call_function"]
    sdpa = [n for n in calls if "scaled_dot_product" in _name(n.target)]
    sms = [n for n in calls if _name(n.target) in SOFTMAXES]
    if len(sdpa) + len(sms) != 1:
        what = []
        if sdpa:
            what.append(f"{len(sdpa)} scaled_dot_product_attention calls")
        if sms:
            what.append(f"{len(sms)} softmaxes")
        return {"problems": [f"{' and '.join(what)} (the templates compute one attention)"]}
    problems, masks, is_causal = [], [], False
    if sdpa:
        node = sdpa[0]
        a = _call_args(node)
        qn, kn, vn = a.get("query"), a.get("key"), a.get("value")
        dropout = a.get("dropout_p") or 0.0
        if dropout:
            problems.append(f"dropout p = {dropout} on the probabilities")
        mask = a.get("attn_mask", a.get("attn_bias"))
        if _is_node(mask):
            if g.constant(mask):
                masks.append(mask)
            else:
                problems.append(f"{', '.join(g.inputs_of(mask))} is the attention mask (a mask input; the templates "
                                "take none)")
        is_causal = bool(a.get("is_causal"))
        factor = a.get("scale")
        out = node
        for u in node.users:
            if u.op == "call_function" and _name(u.target) == "getitem" and u.args[1] == 0:
                out = u
        kind = "sdpa"
    else:
        sm = sms[0]
        rank = len(_shape(sm) or ())
        dim = sm.args[1] if len(sm.args) > 1 else sm.kwargs.get("dim")
        if not isinstance(dim, int) or rank == 0 or dim % rank != rank - 1:
            return {"problems": [f"the softmax is over axis {dim}, not the keys' (the last)"]}
        prod, factor, masks, problems = _scores_path(g, sm)
        if prod is None:
            return {"problems": problems}
        pv, why = _probs_path(sm)
        if pv is None:
            return {"problems": problems + [why]}
        qn, kn, vn, out, kind = prod.args[0], prod.args[1], pv.args[1], pv, "products"
    core = {"kind": kind, "factor": factor, "masks": masks, "is_causal": is_causal, "out": out, "problems": problems}
    for role, node in (("q", qn), ("k", kn), ("v", vn)):
        core[role + "_src"] = node
        r = _operand(g, node, role, role != "v") if _is_node(node) else f"{role} is not a tensor"
        if isinstance(r, str):
            problems.append(r)
        else:
            core[role] = r
            core[role + "_node"] = node
    out_path, why = _output_path(g, out)
    if why:
        problems.append(why)
    core["out_path"] = out_path
    used = {core[r][0] for r in ("q", "k", "v") if r in core}
    if len(used) == 3 or not all(r in core for r in ("q", "k", "v")):
        pass
    else:
        problems.append("q, k and v are not three different inputs (self-attention of one input reads it as all "
                        "three; the templates take three)")
    named = set()   # the inputs a message above names already (those an operand is computed from)
    for r in ("q", "k", "v"):
        if r not in core and _is_node(core.get(r + "_src")):
            named |= {p for p in g.placeholders if p in _ancestors(core[r + "_src"])}
    others = [g.names[p] + ("" if _shape(p) is not None else " (a number)") for p in g.placeholders
              if p not in used and p not in named]
    if others:
        problems.append(f"input{'s' if len(others) > 1 else ''} {', '.join(others)} "
                        f"{'are' if len(others) > 1 else 'is'} not q, k or v (the templates read those three only)")
    return core


def _replay(torch, path, src):
    """The data-movement ops of path (from a placeholder down) applied to src."""
    val, prev = src, path[0].args[0] if path else None
    for node in path:
        nm = _name(node.target)
        if nm in ("mul", "div"):   # q's or k's scale: the indices stay where they are
            prev = node
            continue
        args = [val if a is prev else a for a in node.args]
        kwargs = {k: (val if v is prev else v) for k, v in node.kwargs.items()}
        if nm in CASTS:   # the indices stay float64 (strides as the cast keeps them)
            kwargs = {k: v for k, v in kwargs.items() if k not in ("dtype", "device")}
            args = args[:1]
        val = node.target(*args, **kwargs)
        prev = node
    return val


def _canonical(t, layout):
    """t (a stored tensor) as [B, H, S, D]."""
    if layout == "bshd":
        return t.permute(0, 2, 1, 3)
    if layout == "bhsd":
        return t
    if layout == "bhd":
        return t.unsqueeze(2)
    if layout == "bsd":
        return t.unsqueeze(1)
    raise ValueError(layout)


def _as_rows(t):
    """[..., S, D] as [batch x heads, S, D]."""
    return t.reshape(-1, t.shape[-2], t.shape[-1]) if t.dim() >= 2 else t


def _head_map(torch, hq, hkv, gqa):
    if gqa == "interleave":
        return torch.arange(hq) // (hq // hkv)
    return torch.arange(hq) % hkv


def _layouts(torch, core, role, shape, heads_q=None, batch=None):
    """[(layout, gqa)] that put the input's elements where the attention reads them (several: the traced shape cannot
    tell them apart). q: gqa None; k, v: how query head h finds its KV head."""
    ph, path, _ = core[role]
    rank = len(shape)
    if rank not in LAYOUTS:
        return []
    idx = torch.arange(math.prod(shape), dtype=torch.float64).reshape(shape)
    try:
        got = _replay(torch, path, idx)
    except Exception:  # noqa: BLE001 - an op the replay cannot run on indices: the layout is not known
        return []
    if role == "k" and core["kind"] == "products":   # the scores' product reads k^T
        got = got.transpose(-1, -2)
    got = _as_rows(got)
    found = []
    for layout in LAYOUTS[rank]:
        c = _canonical(idx, layout)
        if role == "q":
            cands = [(None, c)]
        else:
            hkv = c.shape[1]
            if batch is not None and got.shape[0] == batch * hkv:   # the attention reads the KV heads as they are
                cands = [("none" if hkv == heads_q else "interleave" if core["kind"] == "sdpa" else None, c)]
            elif heads_q and hkv and heads_q % hkv == 0 and heads_q != hkv:
                cands = [(m, c[:, _head_map(torch, heads_q, hkv, m)]) for m in ("interleave", "tile")]
            else:
                cands = [("none", c)]
        for gqa, want in cands:
            want = _as_rows(want)
            if gqa is not None or role == "q":
                if tuple(want.shape) == tuple(got.shape) and torch.equal(want, got):
                    found.append((layout, gqa))
    return found


def _out_layout(torch, core, b, hq, sq, d):
    """The layout the attention's result [B, Hq, Sq, D] is stored in as the task's output."""
    out = core["out"]
    shape = _shape(out)
    idx = torch.arange(b * hq * sq * d, dtype=torch.float64).reshape(b, hq, sq, d)
    if shape is None or math.prod(shape) != idx.numel():
        return []
    try:
        got = _replay(torch, core["out_path"], idx.reshape(shape))
    except Exception:  # noqa: BLE001 - as _layouts
        return []
    cands = {"bshd": idx.permute(0, 2, 1, 3), "bhsd": idx, "bs(hd)": idx.permute(0, 2, 1, 3).reshape(b, sq, hq * d)}
    if sq == 1:
        cands["bhd"] = idx.reshape(b, hq, d)
    if hq == 1:
        cands["bsd"] = idx.reshape(b, sq, d)
    return [k for k, want in cands.items() if tuple(want.shape) == tuple(got.shape) and torch.equal(want.contiguous(), got)]


def _dims(task, axes, names, layouts):
    """(B, Hq, Sq, Skv, Hkv, D) of a workload, from the inputs' shapes read in their layouts."""
    def canon(name, layout):
        s = task.input_shape(name, axes)
        if layout == "bshd":
            return s[0], s[2], s[1], s[3]
        if layout == "bhd":
            return s[0], s[1], 1, s[2]
        if layout == "bsd":
            return s[0], 1, s[1], s[2]
        return tuple(s)
    bq, hq, sq, d = canon(names["q"], layouts["q"])
    _, hkv, skv, _ = canon(names["k"], layouts["k"])
    return bq, hq, sq, skv, hkv, d


def _expected(torch, q, k, v, layouts, gqa, causal, scale):
    """softmax(q·k^T·scale [+ causal mask])·v in float32 as [B, Hq, Sq, D] (what the templates compute)."""
    qc, kc, vc = (_canonical(t.float(), layouts[r]) for t, r in ((q, "q"), (k, "k"), (v, "v")))
    hq, hkv = qc.shape[1], kc.shape[1]
    if hkv != hq:
        m = _head_map(torch, hq, hkv, gqa)
        kc, vc = kc[:, m], vc[:, m]
    s = torch.matmul(qc, kc.transpose(-1, -2)) * scale
    sq, skv = s.shape[-2], s.shape[-1]
    if causal:
        i = torch.arange(sq).unsqueeze(1)
        j = torch.arange(skv).unsqueeze(0)
        hidden = j > i + (skv - sq) if causal == "bottom_right" else j > i
        s = s.masked_fill(hidden, float("-inf"))
    p = torch.softmax(s, dim=-1)
    return torch.nan_to_num(torch.matmul(p, vc), nan=0.0)


def _stored_out(o, layout):
    b, h, s, d = o.shape
    if layout == "bshd":
        return o.permute(0, 2, 1, 3)
    if layout == "bs(hd)":
        return o.permute(0, 2, 1, 3).reshape(b, s, h * d)
    if layout == "bhd":
        return o.reshape(b, h, d)
    if layout == "bsd":
        return o.reshape(b, s, d)
    return o


def _check(torch, fn, task, axes, names, layouts, gqa, scale_fixed, cands, seed):
    """The candidate readings ((causal, scale kind)) whose output matches the reference's on random q, k, v of this
    workload's shapes."""
    from .dtypes import torch_dtype
    gen = torch.Generator().manual_seed(seed)
    inputs = {}
    for name, spec in task.inputs.items():
        shape = task.input_shape(name, axes)
        inputs[name] = (torch.randn(shape, generator=gen) * 1.5).to(torch_dtype(torch, spec["dtype"]))
    with torch.no_grad():
        got = fn(*[inputs[n] for n in task.inputs])
    if isinstance(got, (tuple, list)):
        got = got[0]
    got = got.float()
    sixteen = any(str(t.dtype) in ("torch.bfloat16", "torch.float16") for t in list(inputs.values()) + [got])
    tol = 3e-2 if sixteen else 1e-3
    d = _dims(task, axes, names, layouts)[5]
    ok = set()
    for causal, scale in cands:
        s = 1.0 / math.sqrt(d) if scale == "1/sqrt(D)" else scale_fixed
        want = _stored_out(_expected(torch, inputs[names["q"]], inputs[names["k"]], inputs[names["v"]], layouts,
                                     gqa, causal, s), layouts["o"])
        if tuple(want.shape) == tuple(got.shape) and torch.allclose(got, want, atol=tol, rtol=tol):
            ok.add((causal, scale))
    return ok


def _tells_apart(a, b, dims, d0):
    """Whether readings a and b ((causal, scale)) compute different outputs on a workload of dims."""
    _, _, sq, skv, _, d = dims
    ca, cb = a[0], b[0]
    if a[1] != b[1] and d != d0:
        return True
    if ca == cb:
        return False
    pair = {ca, cb}
    if pair == {False, "bottom_right"}:
        return sq > 1
    if pair == {False, "top_left"}:
        return sq > 1 or skv > 1
    return sq != skv   # top_left, bottom_right


def read_attention(torch, graph, fn, task, workload, budget=None):
    """{"attention": {...}} when the graph is one attention of three inputs (the facts above), else {"why": ...}."""
    g = _Graph(graph, list(task.inputs))
    core = _core(g)
    if core["problems"]:
        return {"why": "; ".join(core["problems"])}
    names = {r: g.names[core[r][0]] for r in ("q", "k", "v")}
    axes0 = task.resolve_axes(workload)
    shapes = {r: tuple(task.input_shape(names[r], axes0)) for r in names}
    layouts, gqa = {}, None
    qs = _layouts(torch, core, "q", shapes["q"])
    if len(qs) != 1:   # none: not the templates' order; several: this workload's shapes do not tell (S or H is 1)
        return {"why": _layout_why("q", names["q"], shapes["q"], qs), "retry": len(qs) > 1}
    layouts["q"] = qs[0][0]
    b, hq, sq, d = _canonical(torch.empty(shapes["q"], device="meta"), layouts["q"]).shape
    gqa_unsure = False
    for r in ("k", "v"):
        found = _layouts(torch, core, r, shapes[r], heads_q=hq, batch=b)
        if len(found) == 2 and found[0][0] == found[1][0] and {found[0][1], found[1][1]} == {"interleave", "tile"}:
            found, gqa_unsure = [(found[0][0], "interleave")], True   # one KV head here: either mapping reads it
        if len(found) != 1:
            return {"why": _layout_why(r, names[r], shapes[r], found), "retry": len(found) > 1}
        layouts[r] = found[0][0]
        if gqa is not None and found[0][1] != gqa:
            return {"why": f"k and v find their KV heads differently ({gqa}, {found[0][1]})"}
        gqa = found[0][1]
    outs = _out_layout(torch, core, b, hq, sq, d)
    if len(outs) != 1:
        return {"why": "the attention's result reaches the output in a layout other than [B, S, H, D], [B, H, S, D] "
                       "or [B, S, H*D]" if not outs else
                       f"the output's layout is not told apart on the traced workload (it could be {' or '.join(outs)})",
                "retry": len(outs) > 1}
    layouts["o"] = outs[0]
    if gqa_unsure:   # one KV head where traced: a workload with several tells h / G from h % Hkv
        for w in task.workloads:
            try:
                dims = _dims(task, task.resolve_axes(w), names, layouts)
            except Exception:  # noqa: BLE001 - a workload that does not resolve tells nothing
                continue
            if dims[4] not in (1, dims[1]):
                return {"why": f"how query heads find their KV head (h / G or h % Hkv) is not told on the traced "
                               f"workload (one KV head); workload {w.get('uuid')} has {dims[4]}", "retry": True}
    # The scale: SDPA's default, or the numbers the scores (and q, k) are multiplied by.
    factor = core["q"][2] * core["k"][2]
    fixed = None
    if core["kind"] == "sdpa" and core["factor"] is None:
        scales = ["1/sqrt(D)"]
        fixed = 1.0 / math.sqrt(d)
    else:
        fixed = factor * (core["factor"] if core["factor"] is not None else 1.0)
        scales = (["1/sqrt(D)", "fixed"] if math.isclose(fixed, 1.0 / math.sqrt(d), rel_tol=1e-6) else ["fixed"])
    if core["kind"] == "sdpa" and not core["masks"]:
        causals = ["top_left"] if core["is_causal"] else [False]
    else:
        causals = [False, "bottom_right", "top_left"]
    cands = {(c, s) for c in causals for s in scales}
    try:
        dims0 = _dims(task, axes0, names, layouts)
        est = _check_cost(dims0)
        if budget is not None and est[1] > budget:
            return {"why": f"checking the reading on workload {workload.get('uuid')} needs about {est[1] / 2**30:.1f} "
                           f"GB, over the recognition budget of {budget / 2**30:.1f} GB"}
        cands &= _check(torch, fn, task, axes0, names, layouts, gqa, fixed, cands, seed=7)
        tried = {workload.get("uuid")}
        while len(cands) > 1:
            pending = []
            for w in task.workloads:
                if w.get("uuid") in tried:
                    continue
                try:
                    axes = task.resolve_axes(w)
                    dims = _dims(task, axes, names, layouts)
                except Exception:  # noqa: BLE001 - a workload that does not resolve tells nothing
                    continue
                if any(_tells_apart(a, c, dims, d) for a in cands for c in cands if a != c):
                    pending.append((_check_cost(dims)[0], w, axes, dims))
            if not pending:
                break
            cost, w, axes, dims = min(pending, key=lambda p: p[0])
            if cost > MAX_CHECK_MACS or (budget is not None and _check_cost(dims)[1] > budget):
                return {"why": f"the readings {_readings_text(cands)} compute the same on the traced workload; "
                               f"workload {w.get('uuid')} would tell them apart but is over the recognition budget"}
            cands &= _check(torch, fn, task, axes, names, layouts, gqa, fixed, cands, seed=8)
            tried.add(w.get("uuid"))
    except MemoryError:
        return {"why": "checking the reading ran out of memory"}
    if not cands:
        return {"why": "the reference's output is not softmax(q·k^T·scale)·v as read from its graph (layouts "
                       f"{', '.join(f'{r} {LAYOUT_TEXT.get(layouts[r], layouts[r])}' for r in ('q', 'k', 'v', 'o'))}"
                       f", GQA {gqa}, scale {fixed:.6g}, causal or not, top-left or bottom-right)"}
    order_c = {False: 0, "bottom_right": 1, "top_left": 2}
    causal, scale = min(cands, key=lambda c: (order_c[c[0]], 0 if c[1] == "1/sqrt(D)" else 1))
    return {"attention": {"q": names["q"], "k": names["k"], "v": names["v"], "layout": layouts,
                          "gqa": gqa or "none", "causal": causal,
                          "scale": scale if scale == "1/sqrt(D)" else float(fixed), "head_dim": int(d)}}


def _check_cost(dims):
    """(multiply-adds, bytes) of one numerical check on a workload of dims."""
    b, hq, sq, skv, hkv, d = dims
    scores = b * hq * sq * skv
    elems = b * (hq * sq + 2 * hkv * skv) * d + b * hq * sq * d
    return scores * d * 2, 4 * (6 * scores + 4 * elems)


def _readings_text(cands):
    return " and ".join(f"(causal {c}, scale {s})" for c, s in sorted(cands, key=str))


def _layout_why(role, name, shape, found):
    if not found:
        return (f"{role} ({name}, shape {list(shape)}) is not read as [B, S, H, D], [B, H, S, D] or [B, H, D]"
                + (" with KV head h / (Hq / Hkv) or h % Hkv" if role != "q" else "")
                + " (its elements reach the attention in another order)")
    return (f"{role}'s layout ({name}, shape {list(shape)}) is not told apart on the traced workload: it could be "
            + " or ".join(LAYOUT_TEXT.get(lay, lay) for lay, _ in found))
