"""A reference of several outputs cut as a graph of stages (issue 24): a backward pass, where a gradient is several
products in a row, one value (grad_fc1_output) is read by several later stages, and a bias gradient is a sum over
the batch axes. recognize.multi_output reads each returned value's cone as one straight line of stages first; what it
cannot read comes here.

    dag_stages(graph, names, out_names) -> {"op": "chain", "family": "chain", "stages": [...]} or {"why": "..."}

The live ops of the ATen graph are cut at the values that must be stored between kernels:

  - every anchor's result (a product, convolution, pooling, normalisation, softmax or reduction: recognize.py's
    CHAIN_ANCHORS), taken through its tuple pick and the plain views that are its only use (torch.matmul's
    [*rows, K] @ W is view -> mm -> view back);
  - every pointwise value an anchor reads (through layout ops: grad.reshape(-1, I).t() @ x reads grad);
  - every returned value's source (the value before the layout ops and casts it is returned through).

Each stored value is one stage: an anchor with the layout ops of its operands, or a pointwise value with the
pointwise and layout ops back to stored values and inputs (ops two such stages share are computed in each: they are
elementwise). A product or convolution whose result only one pointwise stage reads is fused with it when the pair is
one stage the gemm or conv family binds (an epilogue, a residual: grad_x = g @ Wg + u @ Wu). A returned value that is
a stored value through a view that moves elements (a transpose), or whose source another output already owns, is a
copy stage (an elementwise read through a view). Stages are ordered as the graph computes their results; each reads
the task's inputs, earlier intermediates (khive_t<k>) and outputs earlier stages wrote, by name, as chain.hpp binds.

Every stage is what recognize._stage reads for its own graph: a binding of an existing family, nothing new.
"""
import itertools
import re

__all__ = ["dag_stages"]

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _order(graph):
    return {n: i for i, n in enumerate(graph.nodes)}


def dag_stages(graph, names, out_names):
    """{op chain, family chain, stages} for the graph (its placeholders named `names`, its returned values
    `out_names`) cut into stages at the values that must be stored; {why} when it is not so cut."""
    from .recognize import (CONSTRUCTION, MAX_STAGES, FUSING_ANCHORS, LAYOUT, POINTWISE, _is_anchor, _live, _name,
                            _returned_values, _shape)
    from .recognize_decompose import decomposed
    from .recognize_view import VIEW_OPS
    graph = decomposed(graph)   # a variance, a std, a vector norm: the means, sums and pointwise ops they are
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    if names is None or len(placeholders) != len(names) or not all(IDENT.fullmatch(n) for n in names):
        return {"why": "the inputs are not named as C identifiers"}
    values = _returned_values(graph)
    if len(values) != len(out_names) or not all(hasattr(v, "op") for v in values):
        return {"why": f"the reference returns {len(values)} values for {len(out_names)} outputs"}
    names_of = dict(zip(placeholders, names))
    pos = _order(graph)
    live = set()
    for v in values:
        live |= _live(v)
    nodes = [n for n in graph.nodes if n.op == "call_function" and n in live]
    layout_ops = (LAYOUT | VIEW_OPS) - {"getitem"}

    def is_anchor(n):   # recognize's chain anchors, and a batched product (torch.matmul of N-D operands)
        return n.op == "call_function" and (_is_anchor(n) or _name(n.target) == "bmm")

    def is_layout(n):
        return n.op == "call_function" and (_name(n.target) in layout_ops or (
            _name(n.target) == "getitem" and not is_anchor(n.args[0])))

    for n in nodes:
        k = _name(n.target)
        if not (is_anchor(n) or is_layout(n) or k in POINTWISE or k in CONSTRUCTION or k == "getitem"):
            return {"why": f"an op that is no stage of a chain: {k}"}
    anchors = [n for n in nodes if is_anchor(n)]
    if not anchors:
        return {"why": "no product, convolution, pooling, normalisation, softmax or reduction to cut at"}

    # 1. Each anchor's result: its tuple pick, then the plain views that are its only use.
    result_of, anchor_of, tail_of = {}, {}, {}
    for a in anchors:
        r, tail = a, []
        users = [u for u in a.users if u in live]
        if users and all(_name(u.target) == "getitem" for u in users):
            if len(users) != 1:
                return {"why": f"{_name(a.target)}'s result is picked {len(users)} ways"}
            r = users[0]
            tail.append(r)
        while True:
            users = [u for u in r.users if u in live]
            if len(users) != 1 or _name(users[0].target) not in ("view", "_unsafe_view", "reshape") \
                    or users[0] in values:
                break
            r = users[0]
            tail.append(r)
        result_of[a], anchor_of[r], tail_of[r] = r, a, tail
    stored = set(anchor_of)

    def source(n):
        """n back through layout ops to a stored value, an input or a computing op."""
        while n.op == "call_function" and n not in stored and is_layout(n) and n.args and hasattr(n.args[0], "op"):
            n = n.args[0]
        return n

    # 2. What anchors read, and the returned values' sources, are stored too.
    for a in anchors:
        for arg in a.all_input_nodes:
            s = source(arg)
            if s.op == "call_function" and s not in stored:
                stored.add(s)
    bases = []
    for v in values:
        b = source(v)
        bases.append(b)
        if b.op == "call_function":
            stored.add(b)

    # 3. Each stored value's stage: its nodes (graph order) and the stored values and inputs it reads.
    def cone(r):
        if r in anchor_of:
            a = anchor_of[r]
            got, todo = {a} | set(tail_of[r]), list(a.all_input_nodes)
        else:
            got, todo = {r}, list(r.all_input_nodes)
        while todo:
            n = todo.pop()
            if n in got or n.op != "call_function" or n in stored:
                continue
            if is_anchor(n):
                return None   # an anchor read other than through its stored result
            got.add(n)
            todo += list(n.all_input_nodes)
        return got

    stage_nodes = {}
    for r in stored:
        c = cone(r)
        if c is None:
            return {"why": f"{_name(r.target)} reads an anchor's value other than its result"}
        stage_nodes[r] = c

    def reads(r):
        """The stored values and inputs stage r reads."""
        inside = stage_nodes[r]
        return {a for n in inside for a in n.all_input_nodes if a not in inside and hasattr(a, "op")}

    def temp_names(nodes):
        return {x: f"khive_x{i}" for i, x in enumerate(sorted(
            {y for n in nodes for y in n.all_input_nodes if y not in nodes and hasattr(y, "op")}, key=pos.get))}

    # 3b. An anchor whose stage no family binds as it reads its operands (a product of heads transposed and merged,
    # GQA's repeat_kv, a sum over a split axis): each operand it reads through layout ops is copied first, an
    # elementwise stage through the operand's view writing an intermediate of the operand's shape.
    copy_src = {}   # a copied operand (the layout op's node) -> the stored value or input it is a view of
    def binds(nodes, r):
        """Whether the stage of nodes with result r binds, or, for a returned value's source, the stage that goes on
        through the value's layout ops (torch.matmul's view back to [*rows, N])."""
        if _stage_dict(graph, nodes, r, temp_names(nodes), pos) is not None:
            return True
        for v, b in zip(values, bases):
            if b is r and v is not r:
                walk, n = set(), v
                while n is not r:
                    walk.add(n)
                    n = n.args[0]
                if _stage_dict(graph, nodes | walk, v, temp_names(nodes | walk), pos) is not None:
                    return True
        return False

    for r in sorted(anchor_of, key=pos.get):
        # An operand an earlier anchor's copy made stored (both products read grad_k_proj through one view) is read
        # from that copy: the cone is taken again up to the stored values.
        fresh = cone(r)
        if fresh is not None:
            stage_nodes[r] = fresh
        if binds(stage_nodes[r], r):
            continue
        # A normalisation's, softmax's, pooling's or reduction's result taken on through views (a layer norm's
        # [B, H, W, C] flattened to rows for the next product, a group norm's [B, C, H, W] to [B, C, H * W]): its
        # stage stops at the result, and the stages that read it read it through those views.
        views = [n for n in tail_of[r] if _name(n.target) != "getitem"]
        if views and _name(anchor_of[r].target) not in FUSING_ANCHORS and r not in bases:
            a = anchor_of[r]
            picks = [n for n in tail_of[r] if n not in views]
            pick = picks[-1] if picks else a
            readers = [s for s in stage_nodes if s is not r and r in reads(s)]
            stored.discard(r)
            stored.add(pick)
            del anchor_of[r], tail_of[r], stage_nodes[r]
            anchor_of[pick], tail_of[pick], result_of[a] = a, picks, pick
            r = pick
            stage_nodes[r] = cone(r)
            for q in readers:
                c = cone(q)
                if c is None:
                    return {"why": f"{_name(q.target)} reads an anchor's value other than its result"}
                stage_nodes[q] = c
            if binds(stage_nodes[r], r):
                continue
        # Per operand, where its layout ops may be cut: None (not copied), or a node of the walk from its source,
        # nearest the source first (the fewest ops copied); the fewest copies first.
        options = []
        for arg in anchor_of[r].all_input_nodes:
            src, walk = source(arg), []
            n = arg
            while n is not src and n.op == "call_function" and n not in stored:
                walk.append(n)
                n = n.args[0]
            options.append([None] + ([(c, src) for c in reversed(walk)] if n is src else []))
        combos = sorted(itertools.product(*options), key=lambda cs: sum(c is not None for c in cs))
        for cs in combos[1:65]:
            cuts = {c: src for c, src in (x for x in cs if x is not None)}
            inside, todo = set(), [anchor_of[r]] + tail_of[r]   # the anchor's stage up to the copied operands
            while todo:
                n = todo.pop()
                if n in inside or n not in stage_nodes[r] or n in cuts:
                    continue
                inside.add(n)
                todo += list(n.all_input_nodes)
            if not binds(inside, r):
                continue
            for c, src in cuts.items():
                walk, n = set(), c
                while n is not src:
                    walk.add(n)
                    n = n.args[0]
                stored.add(c)
                copy_src[c] = src
                stage_nodes[c] = walk
            stage_nodes[r] = inside
            break

    # 4. A product's or convolution's result read by one pointwise stage alone: fused with it where the pair is one
    # stage its family binds.
    fused = set()
    for r in sorted(anchor_of, key=pos.get):
        a = anchor_of[r]
        if _name(a.target) not in FUSING_ANCHORS or r in bases or r not in stage_nodes:
            continue
        readers = [s for s in stage_nodes if s is not r and r in reads(s)]
        if len(readers) != 1 or readers[0] in anchor_of or readers[0] in fused or readers[0] in copy_src:
            continue   # (a copy of an operand stays a copy: its stage is written from its source's view)
        p = readers[0]
        merged = stage_nodes[r] | stage_nodes[p]
        st = _stage_dict(graph, merged, p, temp_names(merged), pos)
        if st is not None and st.get("family") in ("gemm", "conv"):
            stage_nodes[p] = merged
            del stage_nodes[r]
            stored.discard(r)
            fused.add(p)

    # 5. Names: a returned value's source writes that output where the value is the source as stored (a cast, a copy
    # of the same shape) or the source has no other reader; else the source is an intermediate and the output a copy.
    out_of, copies = {}, []   # stored value -> output name; (output, source, value) copy stages
    for v, b, o in zip(values, bases, out_names):
        if b.op == "placeholder":
            copies.append((o, b, v))
            continue
        same = _shape(v) == _shape(b)
        others = [s for s in stage_nodes if s is not b and b in reads(s)]
        if b in out_of or b not in stage_nodes:
            copies.append((o, b, v))
        elif v is b or (same and (not others or _dtype(v) == _dtype(b))):
            out_of[b] = (o, v)
        elif not others and sum(1 for b2 in bases if b2 is b) == 1:
            out_of[b] = (o, v)   # the stage goes on through the view to the output
        else:
            copies.append((o, b, v))
    order = sorted(stage_nodes, key=pos.get)
    names_now = dict(names_of)
    k = 0
    for r in order:
        if r in out_of:
            names_now[r] = out_of[r][0]
        else:
            k += 1
            names_now[r] = f"khive_t{k}"
    stages = []
    for r in order:
        if r in copy_src:   # an operand copied through its view
            st = _copy(names_now[r], copy_src[r], r, names_now, shape=True)
            if st is None:
                return {"why": f"an operand of a product read through a view that is no strided view ({names_now[r]})"}
            stages.append(st)
            continue
        res, nodes_r = r, set(stage_nodes[r])
        if r in out_of and out_of[r][1] is not r:   # through the layout ops to the returned value
            v = out_of[r][1]
            walk = [v]
            while walk[-1] is not r:
                walk.append(walk[-1].args[0])
            nodes_r |= set(walk[:-1])
            res = v
        st = _stage_dict(graph, nodes_r, res, names_now, pos)
        if st is None and res is not r and _shape(res) == _shape(r):
            # returned through casts and copies of its shape: the stage as it computes r, writing the output in the
            # output's dtype (every family stores in its output's type)
            st = _stage_dict(graph, stage_nodes[r], r, names_now, pos)
        if st is None:
            return {"why": f"the stage of {_name(r.target)} (writing {names_now[r]}) is no stage the tuner binds"}
        st["output"] = names_now[r]
        stages.append(st)
    for o, b, v in copies:
        st = _copy(o, b, v, names_now)
        if st is None:
            return {"why": f"{o}: returned through a view of {names_now.get(b, _name(getattr(b, 'target', '')))} "
                           "that is no strided view"}
        stages.append(st)
    if len(stages) > MAX_STAGES:
        return {"why": f"{len(stages)} stages for {len(out_names)} outputs, more than {MAX_STAGES} (Task::kMaxStages)"}
    if len(stages) < 2:
        return {"why": "one stage"}
    return {"op": "chain", "family": "chain", "stages": stages}


def _dtype(n):
    val = n.meta.get("val") if hasattr(n, "meta") else None
    return getattr(val, "dtype", None)


def _stage_dict(graph, nodes, result, names, pos):
    """recognize._stage of the graph of `nodes` returning `result`, its outside values placeholders named by `names`
    ({node: name}); None when it reads a value without a name or is no stage."""
    import torch
    import torch.fx as fx

    from .recognize import _stage_of_piece
    inside = set(nodes)
    ext = []
    for n in sorted(inside, key=pos.get):
        for a in n.all_input_nodes:
            if a not in inside and a not in ext and a.op != "get_attr":
                ext.append(a)
    if any(a not in names for a in ext):
        return None
    g = fx.Graph()
    env = {}
    for a in ext:
        p = g.placeholder(names[a])
        p.meta = dict(a.meta)
        env[a] = p
    for n in graph.nodes:
        if n.op == "get_attr" and any(n in u.all_input_nodes for u in inside):
            env[n] = g.node_copy(n, lambda x: env[x])
    for n in sorted(inside, key=pos.get):
        env[n] = g.node_copy(n, lambda x: env[x])
    g.output(env[result])
    gm = fx.GraphModule(graph.owning_module if graph.owning_module is not None else torch.nn.Module(), g)
    return _stage_of_piece(gm, [names[a] for a in ext])


def _copy(out, src, value, names, shape=False):
    """A copy stage writing `out` as `value`, a view of the stored `src` (an input or a stage's result); shape: with
    the sizes of an intermediate it writes (axis expressions of the source's axes)."""
    from .recognize import _copy_stage, _shape
    from .recognize_view import view_of
    v = view_of(value, stop=src)
    spec = v.spec(_shape(value)) if v is not None else None
    if spec is None or src not in names:
        return None
    st = _copy_stage(names[src], spec, out, v.sizes_text() if shape else None)
    dt = str(_dtype(value) or "").replace("torch.", "")
    if dt:   # the copy's type, after the casts it copies through (recognize._stored_dtypes keeps or drops it)
        st["_dtype"] = dt
    return st
