"""A pointwise stage read along every path from its inputs to its result (issue 24): what recognize.py records when an
input is read through several different views, when layout ops follow computing ops, or when a `cat` joins parts
(RoPE's rotate_half, torch.cat((-x2, x1), dim=-1); a gradient's q, k and v joined along the last axis).

    r = paths_pointwise(graph, placeholders, names)
    r["expression"]   # the C expression over the inputs' names, their aliases and khive_piece
    r["views"]        # {name or alias: {"shape", "strides", "offset"}}: each read as a strided view of the output
    r["aliases"]      # {alias: input name}: a second (third, ...) view of the same input, named apart
    r["select"]       # {"axis": d, "pieces": P}: the output's axis d cut into P equal parts; khive_piece is the part

Each leaf of the expression tree is an input read through the ops on its path to the result, replayed on a View
(recognize_view.py): layout ops anywhere on the path (before or after computing ops), torch's broadcast where a
pointwise op's operand is smaller than its result, and a cat's part. A cat of P equal parts along one axis is a select:
every part is read for every element of the cat's result (its axis gains an outer piece of P of stride 0, so the read
stays inside the part), and `khive_piece == k ? part_k : ...` keeps the part whose place the element is. A slice of a
cat's result that lies inside one part reads that part alone (`cat((e, e))[..., :D]` is e). The elementwise binder
(tuner/bind/elementwise.cpp) checks every view on every workload; the templates compute khive_piece per element.

Refused (None): a cat of unequal parts, cats that cut the output differently in one stage, a cat inside a cat's part,
a layout op after a cat other than a slice inside one part, an op without a C form (recognize._node_expr).
"""
import json

from .recognize_view import View, apply_op, is_plain

__all__ = ["paths_pointwise"]


class _Refused(Exception):
    pass


def _dim(d, rank):
    return d % rank if rank else 0


def paths_pointwise(graph, placeholders, names, max_expression=4096):
    from .recognize import CONSTRUCTION, _c_float, _name, _node_expr, _returned, _shape
    from .recognize_view import VIEW_OPS
    out = _returned(graph)
    out_shape = _shape(out) if hasattr(out, "op") else None
    if out_shape is None:
        return None
    out_shape = tuple(out_shape)
    names_of = dict(zip(placeholders, names))
    reads = []        # (placeholder, view spec JSON or None): each distinct read, a token in the expression
    seen = {}         # (placeholder, key) -> its View (None: read as stored)
    select = {}       # "axis", "pieces" of the one cut of the output that the stage's cats make
    layout_ops = VIEW_OPS - {"getitem"}   # the ops apply_op replays

    def leaf(p, tail):
        shape = _shape(p)
        if shape is None:
            raise _Refused()
        v = None
        if len(shape) == 0:
            key = None   # a 0-d input (a scalar traced as a tensor): one value for every element, read by name
        else:
            v = View(p, list(shape))
            for step in tail:
                kind = step[0]
                if kind == "op":
                    ok = apply_op(v, step[1])
                elif kind == "expand":
                    ok = v.expand(list(step[1]))
                elif kind == "piece":
                    ok = v.piece(step[1], step[2])
                elif kind == "slice":
                    ok = v.slice(step[1], step[2], step[3], 1)
                else:
                    ok = False
                if not ok:
                    raise _Refused()
            if tuple(v.sizes()) != out_shape:
                raise _Refused()
            if is_plain(v) and tuple(shape) == out_shape:
                key = None
            else:
                spec = v.spec(list(out_shape))
                if spec is None:
                    raise _Refused()
                key = json.dumps(spec)
        if (p, key) not in reads:
            reads.append((p, key))
            seen[(p, key)] = v if key is not None else None
        return f"\x00{reads.index((p, key))}\x00"

    def gen(node, tail):
        if not hasattr(node, "op"):
            c = _c_float(node)
            if c is None:
                raise _Refused()
            return c
        if node.op == "placeholder":
            if node not in names_of:
                raise _Refused()
            return leaf(node, tail)
        if node.op == "get_attr":
            v = getattr(graph.owning_module, node.target, None) if graph.owning_module is not None else None
            if hasattr(v, "numel") and v.numel() == 1 and v.dtype.is_floating_point:
                return _c_float(float(v.reshape(-1)[0]))
            raise _Refused()
        if node.op != "call_function":
            raise _Refused()
        n = _name(node.target)
        if n == "getitem":
            src = node.args[0]
            if getattr(src, "op", None) != "call_function" or _name(src.target) not in ("split", "split_with_sizes",
                                                                                        "unbind"):
                raise _Refused()
            return gen(src.args[0], (("op", node),) + tail)
        if n in layout_ops:
            if not node.args:
                raise _Refused()
            return gen(node.args[0], (("op", node),) + tail)
        if n == "cat":
            return cat(node, tail)
        if n in CONSTRUCTION:
            raise _Refused()
        shape = tuple(_shape(node) or ())

        def arg(a):
            if not hasattr(a, "op"):
                return _c_float(a)
            sa = tuple(_shape(a) or ())
            return gen(a, tail if sa == shape else (("expand", shape),) + tail)
        e = _node_expr(node, arg)
        if e is None:
            raise _Refused()
        return e

    def cat(node, tail):
        parts = list(node.args[0]) if node.args else []
        shape = tuple(_shape(node) or ())
        rank = len(shape)
        d = _dim(node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", 0), rank)
        sizes = [(_shape(p) or ())[d] if hasattr(p, "op") and len(_shape(p) or ()) == rank else None for p in parts]
        if not parts or None in sizes:
            raise _Refused()
        starts = [sum(sizes[:k]) for k in range(len(parts))]
        # A slice of the result inside one part: that part alone.
        if tail and tail[0][0] == "op" and _name(tail[0][1].target) == "slice":
            s = tail[0][1]
            a = s.args
            sd = _dim(a[1] if len(a) > 1 else 0, rank)
            start = a[2] if len(a) > 2 else 0
            end = a[3] if len(a) > 3 else shape[sd]
            step = a[4] if len(a) > 4 else 1
            if sd == d and step == 1 and isinstance(start, int) and isinstance(end, int):
                start = start % shape[d] if start < 0 else start
                end = min(end % shape[d] if end < 0 else end, shape[d])
                for k, (s0, n) in enumerate(zip(starts, sizes)):
                    if s0 <= start and end <= s0 + n and start < end:
                        rest = tail[1:]
                        if start - s0 == 0 and end - s0 == n:
                            return gen(parts[k], rest)
                        return gen(parts[k], (("slice", d, start - s0, end - s0),) + rest)
        if len(parts) < 2 or len(set(sizes)) != 1 or len(parts) > 64:
            raise _Refused()
        if any(s[0] != "expand" for s in tail):
            raise _Refused()   # the cat's result moved before the output: its parts no cut of the output's axis
        axis = d + len(out_shape) - rank
        if select and select != {"axis": axis, "pieces": len(parts)}:
            raise _Refused()
        select.update({"axis": axis, "pieces": len(parts)})
        exprs = [gen(p, (("piece", d, len(parts)),) + tail) for p in parts]
        e = exprs[-1]
        for k in reversed(range(len(parts) - 1)):
            e = f"(khive_piece == {k} ? {exprs[k]} : {e})"
        return e

    try:
        expr = gen(out, ())
    except (_Refused, RecursionError, IndexError, TypeError, ValueError, KeyError, AttributeError):
        return None
    if len(expr) > max_expression:
        return None
    # Names: an input's plain read (else its first view) keeps its name; its other views are aliases name_v1, ...
    taken = set(names)
    views, aliases, token = {}, {}, {}
    for p in placeholders:
        mine = [k for k in reads if k[0] is p]
        mine.sort(key=lambda k: k[1] is not None)
        for j, k in enumerate(mine):
            name = names_of[p]
            if j:
                i = j
                while f"{name}_v{i}" in taken:
                    i += 1
                name = f"{name}_v{i}"
                taken.add(name)
                aliases[name] = names_of[p]
            if k[1] is not None:
                views[name] = json.loads(k[1])
            token[reads.index(k)] = name
    for i, name in token.items():
        expr = expr.replace(f"\x00{i}\x00", name)
    r = {"op": "elementwise", "family": "elementwise", "expression": expr, "flags": ["named_inputs"], "views": views}
    if aliases:
        r["aliases"] = aliases
    if select:
        r["select"] = dict(select)
    # The output's sizes as axis expressions of one input's axes (a chain's intermediate is shaped by them, not by
    # broadcasting inputs that are read through views of it): an input read as stored with the output's shape, else
    # the first read through a view.
    ref = next(((p, k) for (p, k) in reads if k is None and tuple(_shape(p) or ()) == out_shape), None) or \
        next(((p, k) for (p, k) in reads if k is not None), None)
    if ref is not None:
        r["shape"] = ([f"in{d}" for d in range(len(out_shape))] if ref[1] is None else seen[ref].sizes_text())
        r["shape_input"] = names_of[ref[0]]
    return r
