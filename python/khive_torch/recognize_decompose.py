"""Reductions no reduce template computes, written as those it does (issue 24), before a graph is cut into stages
(recognize_dag.py): a norm or a loss written out by hand reads a variance, a standard deviation or a vector norm,
and each is a mean or a sum of a pointwise value of its input.

    decomposed(graph) -> graph    (the same graph when there is nothing to rewrite)

  var(x, dims, correction=0, keepdim)   mean((x - mean(x, dims, keepdim=True))^2, dims, keepdim)
  std(x, dims, correction=0, keepdim)   sqrt(the same)
  linalg_vector_norm(x, 2, dims, keepdim)   sqrt(sum(x * x, dims, keepdim))
  linalg_vector_norm(x, 1, dims, keepdim)   sum(|x|, dims, keepdim)
  sum(x), mean(x)                       sum / mean over the list of every axis (a 0-d result)

Only a population variance (correction 0) is rewritten: an unbiased one divides by N - 1, and N, the count of the
reduced elements, is a number of the traced workload that an expression would bake in. A reduction over every axis
(no dims) is left as it is, as is one with a dtype. The graph cut then stores the inner mean (or the sum) and the
pointwise value it reads like any other reduction and pointwise stage: a mean of its input over the axes, the
squared difference of the input and that mean read broadcast, the mean of that; the variance's two passes are the
two-pass variance torch computes, each one stored.
"""
__all__ = ["decomposed"]

REWRITTEN = {"var", "std", "linalg_vector_norm", "sum", "mean"}


def _dims(node):
    """The reduced axes of var / std / linalg_vector_norm (a list counted from the front), the correction or ord, and
    keepdim; None when the call is none of the rewritten forms."""
    from .recognize import _name, _shape
    n = _name(node.target)
    args, kw = list(node.args), dict(node.kwargs)
    x = args[0] if args else None
    rank = len(_shape(x) or ()) if hasattr(x, "meta") else 0
    if not rank or kw.get("dtype") is not None:
        return None
    if n in ("sum", "mean"):
        # sum.default / mean.default (every axis, a 0-d result): over the list of all axes
        if str(node.target) not in ("aten.sum.default", "aten.mean.default") or len(args) > 1 or kw:
            return None
        return list(range(rank)), None, False
    if n in ("var", "std"):
        # var.correction(x, dim, *, correction, keepdim) (torch.var(..., unbiased=False)); var.dim(x, dim, unbiased,
        # keepdim)
        target = str(node.target)
        dim = args[1] if len(args) > 1 else kw.get("dim")
        if target.endswith(".correction"):
            corr = kw.get("correction", 1)
            keep = kw.get("keepdim", False)
        elif target.endswith(".dim"):
            unbiased = args[2] if len(args) > 2 else kw.get("unbiased", True)
            corr = 1 if unbiased else 0
            keep = args[3] if len(args) > 3 else kw.get("keepdim", False)
        else:
            return None
        if corr not in (0, 0.0) or isinstance(corr, bool):
            return None
        extra = None
    else:
        ordv = args[1] if len(args) > 1 else kw.get("ord", 2)
        dim = args[2] if len(args) > 2 else kw.get("dim")
        keep = args[3] if len(args) > 3 else kw.get("keepdim", False)
        if isinstance(ordv, bool) or ordv not in (1, 2):
            return None
        extra = ordv
    if isinstance(dim, int) and not isinstance(dim, bool):
        dim = [dim]
    if not isinstance(dim, (list, tuple)) or not dim or any(
            isinstance(d, bool) or not isinstance(d, int) or not -rank <= d < rank for d in dim):
        return None
    axes = sorted({d % rank for d in dim})
    if len(axes) != len(dim) or not isinstance(keep, bool):
        return None
    return axes, extra, keep


def decomposed(graph):
    """The graph with each rewritten reduction (the module's docstring) replaced by the means, sums and pointwise ops
    it is; the same graph object when it has none. Every new node carries the shape and dtype of its value
    (meta["val"], a tensor on the meta device), as the cut reads them."""
    import torch
    import torch.fx as fx

    from .recognize import _name, _shape
    todo = {n: d for n in graph.nodes if n.op == "call_function" and _name(n.target) in REWRITTEN
            for d in [_dims(n)] if d is not None}
    if not todo:
        return graph
    aten = torch.ops.aten

    def meta(v):
        if isinstance(v, torch.Tensor):
            return torch.empty(v.shape, dtype=v.dtype, device="meta")
        return v

    def mean_key(n):   # a mean over axes with keepdim, no dtype: (its input, the axes counted from the front)
        if n.op != "call_function" or str(n.target) != "aten.mean.dim" or n.kwargs.get("dtype") is not None:
            return None
        x, dims = n.args[0], n.args[1] if len(n.args) > 1 else None
        keep = n.args[2] if len(n.args) > 2 else n.kwargs.get("keepdim", False)
        rank = len(_shape(x) or ()) if hasattr(x, "meta") else 0
        if keep is not True or not rank or not isinstance(dims, (list, tuple)) or not all(
                isinstance(d, int) and not isinstance(d, bool) for d in dims):
            return None
        return x, tuple(sorted({d % rank for d in dims}))

    # The reference's own mean of the same input over the same axes is the variance's first pass: computed once.
    means = {}
    for n in graph.nodes:
        k = mean_key(n)
        if k is not None:
            means.setdefault(k, n)
    g = fx.Graph()
    env = {}
    made = {}   # (input, axes) -> the mean a rewrite made first

    def call(op, args, kwargs=None):
        node = g.call_function(op, tuple(args), kwargs or {})
        vals = [meta(a.meta.get("val")) if isinstance(a, fx.Node) else a for a in args]
        node.meta["val"] = op(*vals, **(kwargs or {}))
        return node

    for n in graph.nodes:
        if n not in todo:
            k = mean_key(n)
            env[n] = made[k] if k in made else g.node_copy(n, lambda a: env[a])
            continue
        axes, extra, keep = todo[n]
        x = env[n.args[0]]
        k = _name(n.target)
        if k in ("sum", "mean"):
            r = call(aten.sum.dim_IntList if k == "sum" else aten.mean.dim, [x, axes, keep])
        elif k in ("var", "std"):
            key = (n.args[0], tuple(axes))
            if key in means and means[key] in env:
                m = env[means[key]]
            else:
                m = made.setdefault(key, call(aten.mean.dim, [x, axes, True]))
            d = call(aten.sub.Tensor, [x, m])
            sq = call(aten.mul.Tensor, [d, d])
            r = call(aten.mean.dim, [sq, axes, keep])
            if k == "std":
                r = call(aten.sqrt.default, [r])
        elif extra == 2:
            sq = call(aten.mul.Tensor, [x, x])
            r = call(aten.sqrt.default, [call(aten.sum.dim_IntList, [sq, axes, keep])])
        else:
            r = call(aten.sum.dim_IntList, [call(aten.abs.default, [x]), axes, keep])
        env[n] = r
    root = graph.owning_module if graph.owning_module is not None else torch.nn.Module()
    return fx.GraphModule(root, g).graph
