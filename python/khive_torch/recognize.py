"""What a task's PyTorch reference computes, read from its graph (issue 24): the op the tuner binds its families by.

    from khive_torch.recognize import recognize
    r = recognize(torch, load_task("tasks/kb/kb1_019_relu"))
    r == {"op": "relu", "family": "activation", "ops": ["relu"], "expression": "x > 0.0f ? x : 0.0f"}

The reference's run(*inputs) is traced on the task's smallest correctness workload with make_fx (real tensors on the
CPU), which records the ATen ops it runs, whatever Python it is written in (nn.Modules, functional calls, control
flow on shapes). Ops that only move or view data (view, transpose, expand, clone, dtype casts, ...) are left out;
what remains is classified:

  matmul       one mm / bmm / matmul (2-D operands for the gemm templates)        op "matmul"; operands when
                                                                                  both are 2-D inputs (either
                                                                                  transposed), or a bmm's inputs
                                                                                  read by torch.matmul's rule (N-D,
                                                                                  batched), flags
                                                                                  [operands_reinterpreted] when one
                                                                                  is a 2-D input reshaped
  gemm+        one mm / addmm of two 2-D inputs (either transposed), or one       op "gemm+epilogue", expression
  epilogue     bmm of N-D ones, then pointwise ops of the product with numbers    (of x, the product, and b, the
               and at most one vector over the output's columns (addmm's bias,    bias's element or a scalar
               a "+ bias") or a scalar input                                      input's value), operands
  softmax      one _softmax / _log_softmax                                        op "softmax" | "log_softmax",
                                                                                  dim (the normalised axis)
  rmsnorm      pow(2), mean, add(eps), rsqrt, mul, mul(weight)                    op "rmsnorm", eps
               of the last axis of an input, or of the sum of two inputs            ("residual_rmsnorm"), operands
               (residual_rmsnorm), through dtype copies                             (x, weight[, residual][, eps: a
                                                                                  scalar input of eps's value])
  activation   one pointwise op of one tensor input                               op its name ("relu", "gelu", ...)
  elementwise  a chain of pointwise ops of one tensor input and Python numbers    op "elementwise", expression
  reduce       one sum / mean / amax / amin / max / min / prod / argmax / argmin /  op "sum" | "mean" | "max" | "min" |
               logsumexp over one axis (max.dim's values or indices); sum / mean /  "prod" | "argmax" | "argmin" |
               amax / amin / logsumexp over several (a list of axes), then at most  "logsumexp", dim (a list for
               squeezes or views of the result                                      several), flags [keepdim]
  scan         one cumsum / cumprod over one axis; flip, scan, flip of that axis    op "cumsum" | "cumprod", dim,
               (reverse); cat(zeros, scan of all but the last) (exclusive);       flags (reverse, exclusive,
               x * mask, then the scan (masked)                                     masked)
  conv         one aten.convolution of x and a weight (and its bias), then           op "conv", conv (stride, padding,
               pointwise ops with numbers and at most one vector of one value per    dilation, output_padding, groups,
               output channel                                                        transposed), operands (x, weight,
                                                                                     bias, vector), expression (of x
                                                                                     and b) when ops follow
  pool         one max_pool / avg_pool of an input over 1-3 axes, nothing else     op "max_pool" | "avg_pool", pool
                                                                                     (kernel, stride, padding,
                                                                                     dilation, ceil_mode,
                                                                                     count_include_pad,
                                                                                     divisor_override)
  norm         one batch_norm (training: the batch's statistics) / instance_norm /   op "norm", norm (stat, axes,
               group_norm / layer_norm of an input, weight and bias inputs or none;  groups, eps, affine_axes),
               or x / sqrt(mean(x^2, dims) + eps), x * rsqrt(...), x / mean(|x|,     operands (x, weight, bias)
               dims), x / norm(x, 2, dims) (RMS, L1 and L2 normalisations)
  chain        what none of the above reads alone, cut into 2-4 stages at its         op "chain", stages (each one of
               convolutions, products, poolings, normalisation modules, softmaxes    the readings above with "inputs"
               and reductions; a conv's or product's pointwise tail is its          and "output": khive_t<i>, null
               epilogue, any other pointwise tail a stage of its own               for the task's output)
  attention    one SDPA call, or a softmax over the last axis between two products   op "attention", and either
               (q·k^T, then p·v): read further by recognize_attention.py            attention (q, k, v, layout, gqa,
                                                                                     causal, scale, head_dim) when it
                                                                                     is one attention of three inputs
                                                                                     and nothing else, or why it is not
  otherwise    the family it belongs to, for the report (conv, norm, reduction, gemm+epilogue, ...)

A reference that returns several values (a backward pass's gradients, q, k and v) is read value by value (multi_output):
each value's ops as a graph of that one output, its stages writing that task output ("output": the output's name),
all of them one chain (op "chain"); where some value is no such line (a backward pass: products in a row, a value
read by several stages, a bias gradient's sum), the graph cut as a whole (recognize_dag.py); or, when neither reads
it, the whole graph's op with "why".

"expression" is a C expression of float x (the elementwise templates' "op"), written only where every op of the chain
has an exact float32 counterpart; for a gemm+epilogue it is of x (the product, A @ B) and b (the bias vector's
element of x's column), and "operands" names the inputs: {"A", "B", "layout_a", "layout_b"[, "bias"]}. Nothing here is trusted for correctness: a wrong guess only makes the tuner try a
template whose kernels the guard then rejects.

  python3 -m khive_torch.recognize TASK_DIR [--write]     prints the result; --write records it in definition.json
                                                          (op_type, and khive.op with the details; a reference
                                                          not recognised as khive.op = {op: "unknown", why})

Tracing keeps every intermediate tensor alive: the command caps its address space at what it maps plus a budget
(KHIVE_RECOGNIZE_MAX_GB, default half of the machine's memory), so a trace over it ends in an allocation error,
reported with the definition and the workload, instead of the kernel's OOM killer (exit 137, no message); a
workload whose inputs and outputs alone exceed the budget is not traced.
"""
import json
import math
import re
import sys
import time

__all__ = ["recognize", "classify"]

# Ops that move, view or cast data: not what the kernel computes.
LAYOUT = {"view", "_unsafe_view", "reshape", "t", "transpose", "permute", "expand", "clone", "contiguous", "detach",
          "alias", "_to_copy", "to", "unsqueeze", "squeeze", "slice", "select", "lift_fresh_copy", "as_strided",
          "copy", "copy_", "empty_like", "zeros_like", "_reshape_alias", "unbind", "split", "split_with_sizes", "chunk", "flatten",
          "squeeze_", "unsqueeze_", "type_as", "view_as", "expand_as", "sym_size", "sym_stride", "sym_numel", "lift"}
# Ops of building the module inside run() (a KernelBench reference constructs Model on every call) or of picking a
# tuple's element: not what the kernel computes either.
CONSTRUCTION = {"empty", "empty_strided", "zeros", "ones", "full", "uniform_", "normal_", "fill_", "zero_", "getitem",
                "bernoulli_", "kaiming_uniform_", "xavier_uniform_"}
MATMUL = {"mm", "bmm", "matmul"}
SOFTMAX = {"_softmax": "softmax", "_log_softmax": "log_softmax", "softmax": "softmax", "log_softmax": "log_softmax"}
CONV = {"convolution", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
        "_convolution", "cudnn_convolution", "mkldnn_convolution", "_slow_conv2d_forward", "slow_conv3d_forward",
        "slow_conv_transpose2d", "slow_conv_transpose3d", "slow_conv_dilated2d", "slow_conv_dilated3d"}
NORM = {"native_layer_norm", "native_batch_norm", "_native_batch_norm_legit", "_native_batch_norm_legit_no_training",
        "native_group_norm", "_batch_norm_impl_index", "instance_norm", "rms_norm", "_fused_rms_norm"}
REDUCTION = {"sum", "mean", "amax", "amin", "max", "min", "prod", "argmax", "argmin", "cumsum", "cumprod", "var",
             "std", "norm", "linalg_vector_norm", "logsumexp", "any", "all", "var_mean", "std_mean"}
ATTENTION = {"_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_flash_attention",
             "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention", "scaled_dot_product_attention"}
POOL = {"max_pool2d_with_indices", "max_pool3d_with_indices", "avg_pool2d", "avg_pool3d", "max_pool1d", "avg_pool1d",
        "adaptive_avg_pool2d", "_adaptive_avg_pool2d", "adaptive_max_pool2d", "_adaptive_avg_pool3d", "max_pool2d"}

# Unary activations the tuner's templates know by name (tuner/auto_bind.cpp), with their float32 C expressions.
ACTIVATION_C = {
    "relu": "x > 0.0f ? x : 0.0f",
    "sigmoid": "1.0f / (1.0f + expf(-x))",
    "tanh": "tanhf(x)",
    "silu": "x / (1.0f + expf(-x))",
    "gelu": "0.5f * x * (1.0f + erff(x * 0.70710678118654752f))",
    "elu": "x > 0.0f ? x : expm1f(x)",
    "hardsigmoid": "fminf(fmaxf(x + 3.0f, 0.0f), 6.0f) * (1.0f / 6.0f)",
    "hardtanh": "fminf(fmaxf(x, -1.0f), 1.0f)",
    "softplus": "x > 20.0f ? x : log1pf(expf(x))",
}
# Unary float ops of x (a C expression string) for chains; None: no exact float32 counterpart written here.
UNARY_C = {
    "relu": lambda x: f"fmaxf({x}, 0.0f)",
    "sigmoid": lambda x: f"(1.0f / (1.0f + expf(-({x}))))",
    "tanh": lambda x: f"tanhf({x})",
    "exp": lambda x: f"expf({x})",
    "expm1": lambda x: f"expm1f({x})",
    "log": lambda x: f"logf({x})",
    "log1p": lambda x: f"log1pf({x})",
    "abs": lambda x: f"fabsf({x})",
    "neg": lambda x: f"(-({x}))",
    "sqrt": lambda x: f"sqrtf({x})",
    "rsqrt": lambda x: f"(1.0f / sqrtf({x}))",   # rsqrtf is CUDA's alone; the CPU templates have no such function
    "reciprocal": lambda x: f"(1.0f / ({x}))",
    "erf": lambda x: f"erff({x})",
    "sin": lambda x: f"sinf({x})",
    "cos": lambda x: f"cosf({x})",
    "sign": lambda x: f"(float)(({x}) > 0.0f) - (float)(({x}) < 0.0f)",
    "floor": lambda x: f"floorf({x})",
    "ceil": lambda x: f"ceilf({x})",
    "silu": lambda x: f"(({x}) / (1.0f + expf(-({x}))))",
    "gelu": lambda x: f"(0.5f * ({x}) * (1.0f + erff(({x}) * 0.70710678118654752f)))",
    "mish": lambda x: f"(({x}) * tanhf(log1pf(expf({x}))))",   # ATen's: x * tanh(log1p(exp(x)))
    "hardswish": lambda x: f"(({x}) * fminf(fmaxf(({x}) + 3.0f, 0.0f), 6.0f) * (1.0f / 6.0f))",
}
BINARY_C = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
POINTWISE = set(UNARY_C) | set(BINARY_C) | {"clamp", "clamp_min", "clamp_max", "pow", "where", "gt", "lt", "ge", "le",
                                            "eq", "ne", "maximum", "minimum", "leaky_relu", "hardtanh", "elu", "softplus",
                                            "hardsigmoid", "hardswish", "mish", "selu", "celu", "gelu", "logit",
                                            "threshold", "rsub", "fmod", "remainder", "square", "bitwise_not",
                                            "logical_not", "scalar_tensor", "full_like", "ones_like", "fill", "fmin", "fmax",
                                            "cat"}   # cat: parts joined along an axis (recognize_pointwise.py)


# Reductions the reduce templates compute over one axis, by ATen name (max / min: their .dim overloads, a tuple of
# values and indices; which one the reference returns decides the op). sum, mean, amax, amin and logsumexp also over
# several axes (a global average pool's mean over H and W).
REDUCE_OVER_AXIS = {"sum": "sum", "mean": "mean", "amax": "max", "amin": "min", "prod": "prod", "argmax": "argmax",
                    "argmin": "argmin", "max": "max", "min": "min", "logsumexp": "logsumexp"}
REDUCE_OVER_AXES = {"sum", "mean", "amax", "amin", "logsumexp"}


def _reduce_over_axis(graph, node):
    """(op, dim, kept) when node reduces its one tensor over one axis, or (REDUCE_OVER_AXES) several, with torch's
    defaults (no dtype, no correction), and the graph returns that result (or a squeeze or view of it); else None.
    dim: the axis as written, or the sorted list of the axes (counted from the front) when there are several; kept:
    the returned value has the input's rank (keepdim, not squeezed after)."""
    n = _name(node.target)
    args = list(node.args)
    if len(args) < 2 or node.kwargs.get("dtype") is not None or set(node.kwargs) - {"keepdim", "dim"}:
        return None
    dim = args[1]
    if isinstance(dim, (list, tuple)):
        rank = len(_shape(args[0]) or ()) if hasattr(args[0], "meta") else 0
        if len(dim) > 1 and n in REDUCE_OVER_AXES and rank and all(
                isinstance(d, int) and not isinstance(d, bool) and -rank <= d < rank for d in dim):
            axes = sorted({d % rank for d in dim})
            if len(axes) != len(dim):
                return None
            dim = axes
        elif len(dim) != 1:
            return None
        else:
            dim = dim[0]
    if isinstance(dim, bool) or not isinstance(dim, (int, list)):
        return None
    # The axes are of the input as stored: a view of another shape in between (flatten, unsqueeze) would make them
    # the view's.
    src = args[0]
    while hasattr(src, "op") and src.op == "call_function" and _name(src.target) in LAYOUT and src.args:
        src = src.args[0]
    if not (hasattr(src, "op") and src.op == "placeholder"):
        return None
    if _shape(src) != _shape(args[0]):
        # Leading axes merged by a view and reduced whole (grad_out.reshape(-1, H).sum(0), a bias gradient over the
        # batch and sequence axes): the same reduction over those axes of the input as stored.
        merged = _merged_axes(args[0], src)
        rank = len(_shape(args[0]) or ())
        if merged is None or n not in REDUCE_OVER_AXES or node.kwargs.get("keepdim") or (
                len(args) > 2 and args[2]):
            return None
        reduced = {d % rank for d in ([dim] if isinstance(dim, int) else dim)}
        axes = sorted({a for d in reduced for a in merged[d]})
        # the kept axes as stored (the result's shape is the input's without the reduced ones)
        if axes != list(range(axes[0], axes[-1] + 1)) or any(len(merged[d]) != 1 for d in range(rank)
                                                             if d not in reduced):
            return None
        dim = axes if len(axes) > 1 else axes[0]
    op = REDUCE_OVER_AXIS[n]
    out = _returned(graph)
    kept = len(_shape(out) or ()) == len(_shape(args[0]) or ()) if hasattr(out, "meta") else False
    # Its result may be returned through squeezes or views (adaptive_avg_pool2d(x, 1).squeeze(-1).squeeze(-1)): the
    # binder checks the output's shape against the reduced one, with or without the kept 1s.
    while hasattr(out, "op") and out is not node and out.op == "call_function" and _name(out.target) in (
            "squeeze", "view", "_unsafe_view", "reshape", "flatten") and out.args:
        out = out.args[0]
    if n in ("max", "min"):   # max.dim / min.dim: (values, indices); the reference returns one of them
        if not (hasattr(out, "op") and _name(out.target) == "getitem" and out.args[0] is node):
            return None
        op = op if out.args[1] == 0 else "arg" + op
    elif out is not node:
        return None
    return op, dim, kept


def _merged_axes(node, src):
    """For node, src read through views and copies only (no transpose), each of them merging neighbouring axes: the
    list, per axis of node, of src's axes it holds (a run); None otherwise (an axis split, a reorder)."""
    n = node
    while n is not src:
        if getattr(n, "op", None) != "call_function" or _name(n.target) not in SAME_DATA - {"expand"} or not n.args:
            return None
        n = n.args[0]
    have, want = list(_shape(src) or ()), list(_shape(node) or ())
    groups, i = [], 0
    for size in want:
        run, p = [], 1
        while i < len(have) and (p < size or (not run and have[i] == size) or (have[i] == 1 and p == size and run)):
            p *= have[i]
            run.append(i)
            i += 1
            if p == size and not (i < len(have) and have[i] == 1 and size != 1):
                break
        if p != size or not run:
            return None
        groups.append(run)
    return groups if i == len(have) else None


def _compute_nodes(graph):
    """The graph's calls that compute (not layout ops, not building the module or picking a tuple's element)."""
    return [n for n in graph.nodes if n.op == "call_function" and _name(n.target) not in LAYOUT | CONSTRUCTION]


def _returned(graph):
    """The node the graph returns (its one result; None when it returns several or none)."""
    outs = [o for o in graph.nodes if o.op == "output"]
    out = outs[0].args[0] if outs else None
    if isinstance(out, (tuple, list)):
        return out[0] if len(out) == 1 else None
    return out


SCAN = {"cumsum", "cumprod"}


def _scan(graph, n_tensor_inputs):
    """(op, dim, flags) when the graph is one cumsum / cumprod of its input over one axis, in one of the forms the scan
    templates compute: plain; flip(d), scan(d), flip(d) (reverse); cat([zeros, scan(d) of all but the last], d)
    (exclusive); x * mask, then the scan (masked). Else None."""
    calls = _compute_nodes(graph)
    names = [_name(n.target) for n in calls]
    scans = [n for n in calls if _name(n.target) in SCAN]
    if len(scans) != 1 or scans[0].kwargs.get("dtype") is not None:
        return None
    node = scans[0]
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
    if isinstance(dim, bool) or not isinstance(dim, int):
        return None
    op = _name(node.target)
    out = _returned(graph)
    flags = []
    rest = [n for n in names if n not in SCAN]
    if rest == ["flip", "flip"]:
        first, last = [n for n in calls if _name(n.target) == "flip"]
        dims = [list(f.args[1]) if len(f.args) > 1 else None for f in (first, last)]
        if not (dims[0] == dims[1] == [dim] and node.args[0] is first and last.args[0] is node and out is last):
            return None
        flags.append("reverse")
    elif rest == ["cat"]:
        cat = calls[names.index("cat")]
        parts = cat.args[0]
        cat_dim = cat.args[1] if len(cat.args) > 1 else cat.kwargs.get("dim", 0)
        if out is not cat or cat_dim != dim or len(parts) != 2 or parts[1] is not node:
            return None
        # the scan's input: the input tensor from its start along the axis (narrow / x[..., :-1]: aten.slice)
        src = node.args[0]
        if not (hasattr(src, "op") and _name(src.target) == "slice" and len(src.args) >= 3 and src.args[1] == dim
                and src.args[2] == 0 and getattr(src.args[0], "op", None) == "placeholder"):
            return None
        # parts[0]: zeros made without the data (zeros / zeros_like of a view), one slot along the axis
        chain, n = [], parts[0]
        while hasattr(n, "op") and n.op == "call_function":
            chain.append(_name(n.target))
            n = n.args[0] if n.args and hasattr(n.args[0], "op") else None
        if not ({"zeros", "zeros_like", "new_zeros"} & set(chain)):
            return None
        flags.append("exclusive")
    elif rest == ["mul"] and n_tensor_inputs == 2:
        mul = calls[names.index("mul")]
        placeholders = [p for p in graph.nodes if p.op == "placeholder"]
        if node.args[0] is not mul or out is not node or set(mul.args[:2]) != set(placeholders[:2]):
            return None
        flags.append("masked")
    elif rest or out is not node:
        return None
    return op, dim, flags


def _name(target):
    packet = getattr(target, "overloadpacket", None)
    if packet is not None:
        return packet.__name__
    return getattr(target, "__name__", str(target))


def _c_float(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(float(v)):
        return None
    return repr(float(v)) + "f" if "e" not in repr(float(v)) else f"{float(v):.9g}f"


def _node_expr(node, arg):
    """The C expression of one pointwise op of the graph (node), its operands' expressions given by arg(operand) (None
    when an operand has none; a number is written as a float literal); None when the op has no exact float32 C form
    here."""
    n = _name(node.target)
    if n == "gelu" and len(node.args) == 1 and node.kwargs in ({"approximate": "tanh"}, {"approximate": "none"}):
        a = arg(node.args[0])   # gelu(x, approximate=...): torch's tanh form, or the erf one spelled out
        if a is None:
            return None
        return (f"(0.5f * ({a}) * (1.0f + tanhf(0.79788456080286536f * (({a}) + 0.044715f * ({a}) * ({a}) * "
                f"({a})))))" if node.kwargs["approximate"] == "tanh" else UNARY_C["gelu"](a))
    elif n in UNARY_C and len(node.args) == 1 and not node.kwargs:
        a = arg(node.args[0])
        if a is None:
            return None
        return UNARY_C[n](a)
    elif n in BINARY_C:
        a, b = arg(node.args[0]), arg(node.args[1]) if len(node.args) > 1 else None
        if a is None or b is None or node.kwargs.get("alpha", 1) != 1 or node.kwargs.get("rounding_mode"):
            return None
        return f"({a} {BINARY_C[n]} {b})"
    elif n in ("minimum", "maximum", "fmin", "fmax"):   # NaN aside (fminf drops it, torch.minimum keeps it)
        a, b = arg(node.args[0]), arg(node.args[1]) if len(node.args) > 1 else None
        if a is None or b is None:
            return None
        return f"{'fminf' if n in ('minimum', 'fmin') else 'fmaxf'}({a}, {b})"
    elif n == "rsub":
        a, b = arg(node.args[0]), arg(node.args[1])
        if a is None or b is None:
            return None
        return f"({b} - {a})"
    elif n in ("clamp", "hardtanh"):
        a = arg(node.args[0])
        lo = node.args[1] if len(node.args) > 1 else node.kwargs.get("min", -1.0 if n == "hardtanh" else None)
        hi = node.args[2] if len(node.args) > 2 else node.kwargs.get("max", 1.0 if n == "hardtanh" else None)
        if a is None:
            return None
        e = a
        if lo is not None:
            if _c_float(lo) is None:
                return None
            e = f"fmaxf({e}, {_c_float(lo)})"
        if hi is not None:
            if _c_float(hi) is None:
                return None
            e = f"fminf({e}, {_c_float(hi)})"
        return e
    elif n in ("clamp_min", "clamp_max"):
        a, v = arg(node.args[0]), _c_float(node.args[1])
        if a is None or v is None:
            return None
        return f"{'fmaxf' if n == 'clamp_min' else 'fminf'}({a}, {v})"
    elif n == "leaky_relu":
        a = arg(node.args[0])
        slope = _c_float(node.args[1] if len(node.args) > 1 else 0.01)
        if a is None or slope is None:
            return None
        return f"(({a}) > 0.0f ? ({a}) : {slope} * ({a}))"
    elif n == "pow":
        a, p = arg(node.args[0]), node.args[1]
        if a is None or isinstance(p, bool) or not isinstance(p, (int, float)):
            return None
        return f"(({a}) * ({a}))" if p == 2 else f"powf({a}, {_c_float(p)})"
    elif n == "elu":   # elu(x, alpha, scale, input_scale): selu and celu are elu with these set
        a = arg(node.args[0])
        alpha, scale, in_scale = (list(node.args[1:]) + [1.0, 1.0, 1.0])[:3]
        if a is None or None in (_c_float(alpha), _c_float(scale), _c_float(in_scale)) or node.kwargs:
            return None
        return (f"({_c_float(scale)} * (({a}) > 0.0f ? ({a}) : {_c_float(alpha)} * "
                f"expm1f(({a}) * {_c_float(in_scale)})))")
    elif n == "softplus":
        a = arg(node.args[0])
        beta = node.args[1] if len(node.args) > 1 else 1
        threshold = node.args[2] if len(node.args) > 2 else 20
        if a is None or beta != 1 or _c_float(threshold) is None:
            return None
        return f"(({a}) > {_c_float(threshold)} ? ({a}) : log1pf(expf({a})))"
    elif n == "hardsigmoid":
        a = arg(node.args[0])
        if a is None:
            return None
        return f"(fminf(fmaxf(({a}) + 3.0f, 0.0f), 6.0f) * (1.0f / 6.0f))"
    return None


def _expression(graph, roots, skip=(), through=None):
    """The C expression the graph's output is, when every op is a unary or scalar op of the roots ({node: C
    expression}: the one tensor input as x; or a product as x and a bias as b); else None. skip: nodes left out (the
    product's operands); through: {node: one of its operands} for nodes that pass that operand on (a residual's add,
    the residual being in x already)."""
    expr = dict(roots)
    out = None
    for node in graph.nodes:
        if node.op == "get_attr" and node not in roots:
            # A one-element tensor constant of the traced code (torch.tensor(0.0) in forward) is that number.
            v = getattr(graph.owning_module, node.target, None) if graph.owning_module is not None else None
            if hasattr(v, "numel") and v.numel() == 1 and v.dtype.is_floating_point:
                expr[node] = _c_float(float(v.reshape(-1)[0]))
            continue
        if node.op == "placeholder" or node in skip or node in roots:
            continue
        if through and node in through:   # a node that passes one operand on ({node: operand})
            if through[node] not in expr:
                return None
            expr[node] = expr[through[node]]
            continue
        if node.op == "output":
            args = node.args[0]
            args = args[0] if isinstance(args, (tuple, list)) and len(args) == 1 else args
            out = expr.get(args)
            continue
        if node.op != "call_function":
            return None
        n = _name(node.target)

        def arg(a):
            if hasattr(a, "op"):
                return expr.get(a)
            return _c_float(a)
        if n in LAYOUT:
            src = node.args[0] if node.args else None
            if src not in expr:
                return None
            expr[node] = expr[src]
            if n == "_to_copy" and _dtype_name(node) == "bfloat16" and _dtype_name(src) == "float32" \
                    and node is not _returned(graph):
                # a float32 value cast to bf16 and computed on: rounded there as the reference rounds it (the
                # value a stage returns is rounded by its store)
                expr[node] = f"khive_round_bf16({expr[src]})"
        elif n in CONSTRUCTION:
            continue
        else:
            e = _node_expr(node, arg)
            if e is None:
                return None
            expr[node] = e
    return out


# A chain that uses a value twice repeats its expression (mish(mish(x)) is 160 characters): past this, none is written.
MAX_EXPRESSION = 4096
MAX_STAGES = 32   # Task::kMaxStages: the most stages of a chain
TRANSPOSE = {"t", "transpose", "permute"}
SAME_DATA = {"clone", "contiguous", "detach", "alias", "lift_fresh_copy", "_to_copy", "view", "_unsafe_view", "reshape",
             "expand"}


def _dtype_name(node):
    """"float32", "bfloat16", ... of a traced node's value; None when it has none."""
    val = node.meta.get("val") if hasattr(node, "meta") else None
    dt = getattr(val, "dtype", None)
    return str(dt).replace("torch.", "") if dt is not None else None


def _shape(node):
    val = node.meta.get("val") if hasattr(node, "meta") else None
    shape = getattr(val, "shape", None)
    return tuple(int(d) for d in shape) if shape is not None else None


def _column_vector(shape, n_cols):
    """A shape that broadcasts over rows as one value per column: [N], [1, N], [1, 1, N], ..."""
    return bool(shape) and shape[-1] == n_cols and all(d == 1 for d in shape[:-1])


def _operand(node):
    """(placeholder, transposed) when node is a 2-D placeholder read through transposes and copies of the same
    shape; else None."""
    transposed = False
    while hasattr(node, "op") and node.op == "call_function":
        n = _name(node.target)
        src = node.args[0] if node.args else None
        if n in TRANSPOSE:
            if n == "t":
                transposed = not transposed
            elif n == "transpose":   # transpose(x, d0, d1) of a 2-D x: a swap unless d0 and d1 name one axis
                d0, d1 = (d % 2 for d in node.args[1:3])
                transposed = transposed != (d0 != d1)
            else:                    # permute(x, [1, 0]) swaps, [0, 1] does nothing
                dims = [d % 2 for d in node.args[1]]
                if sorted(dims) != [0, 1]:
                    return None
                transposed = transposed != (dims == [1, 0])
        elif n not in SAME_DATA or _shape(src) is None or _shape(src) != _shape(node):
            return None   # a reshape to other dimensions reinterprets the data: not this operand as stored
        node = src
    if getattr(node, "op", None) != "placeholder" or len(_shape(node) or ()) != 2:
        return None
    return node, transposed


def _row_operand(node):
    """The placeholder when node is an input of rank >= 3, [*rows, K], read as the 2-D [prod(rows), K] through
    copies and views (torch.matmul / F.linear of a batch of rows: its leading axes are the product's rows, row-major,
    as stored); else None."""
    src = node
    while hasattr(src, "op") and src.op == "call_function" and _name(src.target) in SAME_DATA - {"expand"}:
        src = src.args[0] if src.args else None
    shape, flat = _shape(src), _shape(node)
    if getattr(src, "op", None) != "placeholder" or shape is None or len(shape) < 3 or flat is None:
        return None
    return src if flat == (math.prod(shape[:-1]), shape[-1]) else None


def _transposed_rows(node):
    """The placeholder when node is an input of rank >= 3, [*rows, M], read as the 2-D [prod(rows), M] and then
    transposed (grad_out.reshape(-1, M).t(): A of a product summed over the rows); else None."""
    if getattr(node, "op", None) != "call_function" or len(_shape(node) or ()) != 2:
        return None
    n = _name(node.target)
    swap = n == "t" or (n == "transpose" and len(node.args) >= 3 and node.args[1] % 2 != node.args[2] % 2) or (
        n == "permute" and len(node.args) >= 2 and [d % 2 for d in node.args[1]] == [1, 0])
    return _row_operand(node.args[0]) if swap and node.args else None


def _halves(node):
    """(x, which) when node is half of a placeholder x's last axis: getitem 0 / 1 of split(x, C, -1) (torch's
    chunk(2, -1)) or split_with_sizes(x, [C, C], -1), or slice(x, -1, 0, C) / slice(x, -1, C, 2C); which is 0 for the
    first half (the gate), 1 for the second (up). Else None."""
    n = _name(node.target) if getattr(node, "op", None) == "call_function" else None
    if n == "getitem" and len(node.args) == 2 and node.args[1] in (0, 1):
        sp = node.args[0]
        if getattr(sp, "op", None) != "call_function" or _name(sp.target) not in ("split", "split_with_sizes"):
            return None
        x, which = (sp.args[0] if sp.args else None), node.args[1]
        dim = sp.args[2] if len(sp.args) > 2 else sp.kwargs.get("dim", 0)
        size = sp.args[1] if len(sp.args) > 1 else None

        def fits(c):   # split(x, C) or split_with_sizes(x, [C, C])
            return size == c or list(size or []) == [c, c]
    elif n == "slice" and len(node.args) >= 4:
        x, dim, start, end = node.args[:4]
        step = node.args[4] if len(node.args) > 4 else 1
        which = 0 if start == 0 else 1

        def fits(c):   # [0, C) or [C, 2C) (the end may be written as "to the end")
            return step == 1 and ((start, end) == (0, c) or (start == c and end in (2 * c, sys.maxsize)))
    else:
        return None
    shape = _shape(x)
    if (getattr(x, "op", None) != "placeholder" or not shape or shape[-1] % 2
            or dim % len(shape) != len(shape) - 1 or not fits(shape[-1] // 2)):
        return None
    return x, which


def _gated(graph):
    """{expression} of gate and up when the graph reads one input x [..., 2C] as its two halves along the last axis
    (gate the first, up the second: torch's chunk(2, -1), vLLM's SiluAndMul) and returns a pointwise function of them,
    [..., C]: what the gated family computes (SwiGLU, GeGLU). Else None."""
    out = _returned(graph)
    if out is None or not hasattr(out, "op"):
        return None
    live = _live(out)
    placeholders = [p for p in graph.nodes if p.op == "placeholder" and p in live]
    if len(placeholders) != 1:
        return None
    x = placeholders[0]
    roots, skip = {}, set()
    for n in graph.nodes:
        if n.op != "call_function" or n not in live:
            continue
        h = _halves(n)
        if h is not None and h[0] is x:
            roots[n] = "up" if h[1] else "gate"
            if _name(n.target) == "getitem":
                skip.add(n.args[0])
        elif x in n.all_input_nodes and _name(n.target) not in ("split", "split_with_sizes"):
            return None   # x read other than as its halves
    if sorted(roots.values()) != ["gate", "up"] or _shape(out) != _shape(x)[:-1] + (_shape(x)[-1] // 2,):
        return None
    if not all(_shape(n) == _shape(out) or _shape(n) == () for n in live
               if n.op == "call_function" and n not in roots and n not in skip and _name(n.target) not in CONSTRUCTION):
        return None
    expr = _expression(graph, roots, skip)
    if expr is None or len(expr) > MAX_EXPRESSION or "gate" not in expr or "up" not in expr:
        return None
    return {"expression": expr}


def _sums_from(node, x):
    """Whether node is x, or x plus / minus other values through adds and subtractions only (x on the left of each
    minus), each of them used once: a value to which adding one more term equals adding it to x first."""
    while node is not x:
        if getattr(node, "op", None) != "call_function" or len(node.users) != 1 or node.kwargs or len(node.args) != 2:
            return False
        n = _name(node.target)
        left, right = node.args
        if n == "add" and hasattr(right, "op") and x in _live(right) and not (hasattr(left, "op") and x in _live(left)):
            left, right = right, left
        if n not in ("add", "sub") or not hasattr(left, "op") or (hasattr(right, "op") and x in _live(right)):
            return False
        node = left
    return len(x.users) == 1


def _view_back(prod, rows_shape, n_cols):
    """The one use of a product of rows read by _row_operand when it views the product back to [*rows, N] (what
    torch.matmul / F.linear return), else None."""
    users = [u for u in prod.users if u.op == "call_function"]
    if len(users) != 1 or _name(users[0].target) not in SAME_DATA - {"expand", "_to_copy"}:
        return None
    return users[0] if _shape(users[0]) == tuple(rows_shape) + (n_cols,) else None


def _stored(node):
    """The placeholder node is read from through copies and layout ops, or None."""
    while hasattr(node, "op") and node.op == "call_function" and _name(node.target) in SAME_DATA | TRANSPOSE:
        node = node.args[0] if node.args else None
    return node if getattr(node, "op", None) == "placeholder" else None


def _batched_operand(node, batch):
    """(placeholder, transposed) when node, an operand of a batched product ([prod(batch), rows, cols], what
    torch.matmul hands bmm), is an input read by torch.matmul's rule: its leading axes aligned at the end of batch,
    each missing or of size 1 (read again for every index) or the batch axis, its last two as stored or swapped
    (transposed); else None. Checked exactly where traced: the layout ops replayed on the input's element indices
    (recognize_view.py) against the same broadcast of them. (GQA's repeat_kv of more than one KV head, h -> h //
    n_rep, is no such broadcast: the operand is then a copy stage's, _layout_stages.)"""
    import torch

    from .recognize_view import indices, view_of
    v = view_of(node)
    shape = _shape(v.placeholder) if v is not None else None
    if v is None or getattr(v.placeholder, "op", None) != "placeholder" or shape is None or len(shape) < 2 \
            or len(shape) - 2 > len(batch) or len(_shape(node) or ()) != 3:
        return None
    got = indices(v, torch)
    stored = torch.arange(math.prod(shape), dtype=torch.int64).reshape(shape)
    for transposed in (False, True):
        p = stored.transpose(-1, -2) if transposed else stored
        try:
            want = p.broadcast_to(tuple(batch) + tuple(p.shape[-2:])).reshape(math.prod(batch), *p.shape[-2:])
        except RuntimeError:   # the leading axes do not broadcast against the batch
            return None
        if tuple(want.shape) == tuple(got.shape) and torch.equal(want, got):
            return v.placeholder, transposed
    return None


def _batched_product(prod):
    """(a, b, x, batch) of one bmm of two inputs each read by torch.matmul's rule (_batched_operand; a and b are
    (placeholder, transposed)): x the product as the reference has it, [*batch, M, N] (the bmm's [Z, M, N] viewed
    back to the batch's axes, or the bmm itself: batch (Z,)); else None."""
    if _name(prod.target) != "bmm" or len(prod.args) < 2 or len(_shape(prod) or ()) != 3:
        return None
    z, m, n = _shape(prod)
    x, batch = prod, (z,)
    users = [u for u in prod.users if u.op == "call_function"]
    if len(users) == 1 and _name(users[0].target) in SAME_DATA - {"expand", "_to_copy"}:
        back = _shape(users[0]) or ()
        if len(back) >= 3 and tuple(back[-2:]) == (m, n) and math.prod(back[:-2]) == z:
            x, batch = users[0], tuple(back[:-2])
    a, b = _batched_operand(prod.args[0], batch), _batched_operand(prod.args[1], batch)
    if a is None or b is None or a[0] is b[0]:
        return None
    return a, b, x, batch


def _product_operands(prod):
    """Of one mm / matmul: {"operands": {A, B, layout_a, layout_b}} when both operands are 2-D inputs as stored or
    transposed (so the binder need not guess a square operand's layout from its shape), or A is [*rows, K] read as
    [M, K] (_row_operand) and the product is viewed back to [*rows, N]; of one bmm, the same when both are inputs
    read by torch.matmul's rule (_batched_product: the binder's batch is the output's leading axes); {"flags":
    ["operands_reinterpreted"]} when one is a 2-D input reshaped to other dimensions (x @ w.reshape(K, N) is no
    layout of w that a template reads); else {} (the binder reads the shapes)."""
    batched = _batched_product(prod)
    if batched is not None:
        a, b = batched[:2]
        return {"operands": {"A": a[0], "B": b[0], "layout_a": "col" if a[1] else "row",
                             "layout_b": "col" if b[1] else "row"}}
    if _name(prod.target) not in ("mm", "matmul") or len(prod.args) < 2 or len(_shape(prod) or ()) != 2:
        return {}
    a, b = _operand(prod.args[0]), _operand(prod.args[1])
    if a is None and b is not None:   # [*rows, K] viewed to [M, K], the product viewed back to [*rows, N]
        rows = _row_operand(prod.args[0])
        if rows is not None and _view_back(prod, _shape(rows)[:-1], _shape(prod)[1]) is not None:
            a = (rows, False)
    if a is not None and b is not None and a[0] is not b[0]:
        return {"operands": {"A": a[0], "B": b[0], "layout_a": "col" if a[1] else "row",
                             "layout_b": "col" if b[1] else "row"}}
    if a is None and b is None:   # [*K, M]^T @ [*K, N]: a weight's gradient summed over a batch of rows (K a list)
        ta, rb = _transposed_rows(prod.args[0]), _row_operand(prod.args[1])
        if ta is not None and rb is not None and ta is not rb and _shape(ta)[:-1] == _shape(rb)[:-1]:
            return {"operands": {"A": ta, "B": rb, "layout_a": "col", "layout_b": "row"}}
    for arg, got in ((prod.args[0], a), (prod.args[1], b)):
        src = _stored(arg)
        if got is None and src is not None and len(_shape(src) or ()) == 2:
            return {"flags": ["operands_reinterpreted"]}
    return {}


def _pointwise_after(calls, skip, root, out_shape, also):
    """Whether every op of calls other than root and those in skip is elementwise on the output: its shape is
    out_shape, () (a number the expression holds: a traced tensor constant) or one `also` accepts (the ops of the
    epilogue's vector alone); any other shape is not pointwise."""
    return all(n in skip or n is root or _shape(n) in (out_shape, ()) or also(_shape(n)) for n in calls)


def _live(out):
    """What the output depends on; the rest (a KernelBench Model built inside run(), its randn'd parameters) is not
    part of what the kernel computes."""
    live, todo = set(), [out]
    while todo:
        n = todo.pop()
        if hasattr(n, "op") and n not in live:
            live.add(n)
            todo += list(n.all_input_nodes)
    return live


def _as_stored(node, skip):
    """The placeholder node is when read through copies that keep its shape (each added to skip); else None."""
    while hasattr(node, "op") and node.op == "call_function" and _name(node.target) in SAME_DATA:
        src = node.args[0] if node.args else None
        if _shape(src) is None or _shape(src) != _shape(node):
            return None
        skip.add(node)
        node = src
    return node if getattr(node, "op", None) == "placeholder" else None


def _channel_vector(shape, channels, rank):
    """A shape that broadcasts against [N, C, *spatial] (rank axes, aligned at the end as torch does) as one value
    per channel: [C, 1, ...] with an axis per spatial one, or [1, C, 1, ...]."""
    if shape is None or not (rank - 1 <= len(shape) <= rank):
        return False
    return all(d == (channels if j + rank == len(shape) + 1 else 1) for j, d in enumerate(shape))


def _one_value(shape):
    """A shape of one element (a 0-d parameter, [1], [1, 1, 1]): one value for every element it is broadcast to."""
    return shape is not None and all(d == 1 for d in shape)


def _vectors(others, is_vector):
    """The epilogue's vectors among the other inputs, in order, the first one a full vector where there is one (b;
    the rest b1, b2, ...): [] when there are none, None when an input is neither a vector nor one value."""
    if not all(is_vector(_shape(p)) or _one_value(_shape(p)) for p in others):
        return None
    return sorted(others, key=lambda p: _one_value(_shape(p)) and not is_vector(_shape(p)))


def _conv(graph):
    """{conv, operands[, expression]} when the graph is one aten.convolution of an input x and a weight (and its own
    bias), then pointwise ops of its result with numbers and vectors of one value per output channel (or one value
    for all); else None. conv: aten.convolution's options; the expression is of x (the convolution with its bias), b
    (the first vector's value of x's channel) and b1, b2, ... (the others': operands.vectors)."""
    out = _returned(graph)
    if out is None:
        return None
    live = _live(out)
    calls = [n for n in graph.nodes if n.op == "call_function" and n in live]
    convs = [n for n in calls if _name(n.target) in ("convolution", "_convolution")]
    if len(convs) != 1 or len(convs[0].args) < 9:
        return None
    cv = convs[0]
    skip = {n for n in graph.nodes if n.op == "call_function" and n not in live}
    x, w = _as_stored(cv.args[0], skip), _as_stored(cv.args[1], skip)
    b = _as_stored(cv.args[2], skip) if cv.args[2] is not None else None
    if x is None or w is None or (cv.args[2] is not None and b is None) or len({x, w, b} - {None}) != 2 + (b is not None):
        return None
    stride, padding, dilation, transposed, out_pad, groups = cv.args[3:9]
    out_shape = _shape(cv)
    if out_shape is None or not 3 <= len(out_shape) <= 5:
        return None
    dims, rank, channels = len(out_shape) - 2, len(out_shape), out_shape[1]
    lists = [list(v) if isinstance(v, (list, tuple)) else None for v in (stride, padding, dilation, out_pad)]
    if any(v is None or len(v) != dims or not all(isinstance(e, int) for e in v) for v in lists):
        return None
    placeholders = [p for p in graph.nodes if p.op == "placeholder" and p in live]
    others = [p for p in placeholders if p not in (x, w, b)]
    vectors = _vectors(others, lambda shp: _channel_vector(shp, channels, rank))
    if vectors is None:
        return None
    roots = {cv: "x"}
    for k, v in enumerate(vectors):
        roots[v] = f"b{k}" if k else "b"
    expr = _expression(graph, roots, skip)
    if expr is None or len(expr) > MAX_EXPRESSION:
        return None
    if not _pointwise_after(calls, skip, cv, out_shape,
                            lambda shp: vectors and (_channel_vector(shp, channels, rank) or _one_value(shp))):
        return None
    operands = {"x": x, "weight": w}
    if b is not None:
        operands["bias"] = b
    if vectors:
        operands["vector"] = vectors[0]
    if len(vectors) > 1:
        operands["vectors"] = vectors[1:]
    r = {"conv": {"stride": lists[0], "padding": lists[1], "dilation": lists[2], "output_padding": lists[3],
                  "groups": int(groups), "transposed": bool(transposed)}, "operands": operands}
    if expr != "x":
        r["expression"] = expr
    return r


POOL_ATEN = {"max_pool2d_with_indices": "max", "max_pool3d_with_indices": "max", "avg_pool2d": "avg", "avg_pool3d": "avg"}


def _pool(graph):
    """{pool} when the graph is one max or average pool of an input, nothing else (a 1-D pool is traced as a 2-D one of
    the input unsqueezed at -2: recorded as 1-D); else None. pool: {op, kernel, stride, padding, dilation, ceil_mode,
    count_include_pad, divisor_override}, one entry per pooled axis."""
    out = _returned(graph)
    if out is None:
        return None
    live = _live(out)
    calls = [n for n in graph.nodes if n.op == "call_function" and n in live]
    pools = [n for n in calls if _name(n.target) in POOL_ATEN]
    if len(pools) != 1 or any(_name(n.target) not in LAYOUT | {"getitem"} for n in calls if n is not pools[0]):
        return None
    pl = pools[0]
    op = POOL_ATEN[_name(pl.target)]
    if op == "max" and any(_name(n.target) == "getitem" and n.args[1] != 0 for n in calls):
        return None   # the indices are (part of) the result
    src, one_d = pl.args[0], False
    if hasattr(src, "op") and src.op == "call_function" and _name(src.target) == "unsqueeze":
        if len(_shape(src.args[0]) or ()) != 3 or src.args[1] not in (-2, 1):
            return None
        src, one_d = src.args[0], True
    if getattr(src, "op", None) != "placeholder":
        return None
    dims = len(_shape(pl.args[0])) - 2
    names = ["kernel", "stride", "padding"] + (["dilation", "ceil_mode"] if op == "max" else
                                                ["ceil_mode", "count_include_pad", "divisor_override"])
    defaults = {"stride": [], "padding": 0, "dilation": 1, "ceil_mode": False, "count_include_pad": True,
                "divisor_override": None}
    args = dict(zip(names, pl.args[1:]))
    args.update(pl.kwargs)
    vals = {k: args.get(k, defaults.get(k)) for k in names}

    def listed(v, fill):
        v = list(v) if isinstance(v, (list, tuple)) else [v]
        v = v if v else fill
        v = v * dims if len(v) == 1 else v
        return v if len(v) == dims and all(isinstance(e, int) for e in v) else None
    kernel = listed(vals["kernel"], None)
    if kernel is None:
        return None
    r = {"op": op, "kernel": kernel, "stride": listed(vals["stride"], kernel), "padding": listed(vals["padding"], [0]),
         "dilation": listed(vals.get("dilation", 1), [1]), "ceil_mode": bool(vals["ceil_mode"])}
    if op == "avg":
        r["count_include_pad"] = bool(vals["count_include_pad"])
        r["divisor_override"] = vals["divisor_override"]
        if r["divisor_override"] is not None and not isinstance(r["divisor_override"], int):
            return None
    if any(r[k] is None for k in ("stride", "padding", "dilation")):
        return None
    if one_d:   # the unsqueezed axis: a window of 1 that moves by 1, unpadded
        if (r["kernel"][0], r["stride"][0], r["padding"][0], r["dilation"][0]) != (1, 1, 0, 1):
            return None
        for k in ("kernel", "stride", "padding", "dilation"):
            r[k] = r[k][1:]
    return {"pool": r}


# The ATen ops of torch's normalisation modules whose statistics the norm templates compute (batch norm in training
# mode: its statistics are the batch's; an instance norm is traced as a batch norm of x viewed [1, N * C, *spatial]).
BATCH_NORM_ATEN = {"native_batch_norm", "_native_batch_norm_legit", "_native_batch_norm_legit_functional"}
RESHAPES = {"view", "_unsafe_view", "reshape"}


def _axes_of(dims, rank):
    """dims (an int, a list of ints, negative from the end, or None: every axis) as sorted axes in 0..rank-1; None when
    they are not distinct axes of a rank-`rank` tensor."""
    dims = list(range(rank)) if dims is None else list(dims) if isinstance(dims, (list, tuple)) else [dims]
    if not dims or any(isinstance(d, bool) or not isinstance(d, int) or not -rank <= d < rank for d in dims):
        return None
    axes = sorted(d % rank for d in dims)
    return axes if len(set(axes)) == len(axes) else None


def _number(v):
    return None if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 else float(v)


def _rms_rows(graph):
    """An RMSNorm of the last axis written out with its weight, as the rowop templates compute it:
    w * (x * rsqrt(mean(x^2, -1, keepdim=True) + eps)) (or x / sqrt(...)), either side through dtype copies, where x
    is an input (op "rmsnorm") or the sum of two inputs of one shape (op "residual_rmsnorm", the residual added
    before the norm). {op, eps, operands {x, weight[, residual]}} (nodes), or None. eps is the number traced; a
    scalar input with that value is named by recognize()."""
    calls = _compute_nodes(graph)
    found = _rms_rows_at(_returned(graph))
    if found is None or any(c not in found[1] for c in calls):
        return None
    return found[0]


def _strip_copies(n):
    """n read through dtype copies and views of its own shape."""
    while (hasattr(n, "op") and n.op == "call_function" and _name(n.target) in SAME_DATA | {"_to_copy", "to"}
           and n.args and _shape(n.args[0]) == _shape(n)):
        n = n.args[0]
    return n


def _rms_then_residual(graph):
    """rmsnorm(x) * w + residual (a post-norm residual, SOL L1 033): (the _rms_rows reading of the norm, the residual
    input), or None. The residual is an input of the output's shape added after the norm and its weight."""
    calls = _compute_nodes(graph)
    out = _strip_copies(_returned(graph))
    if not (hasattr(out, "op") and out.op == "call_function" and _name(out.target) == "add" and len(out.args) == 2
            and not out.kwargs):
        return None
    for res, rest in ((out.args[0], out.args[1]), (out.args[1], out.args[0])):
        res = _strip_copies(res)
        if getattr(res, "op", None) != "placeholder" or _shape(res) != _shape(out):
            continue
        found = _rms_rows_at(rest)
        if found is not None and found[0]["op"] == "rmsnorm" and all(c in found[1] | {out} for c in calls):
            return found[0], res
    return None


def _rms_rows_at(root):
    """_rms_rows of the value at root: (its reading, the op nodes it covers), or None."""
    seen = set()
    strip = _strip_copies

    def op_of(n, *names):
        return hasattr(n, "op") and n.op == "call_function" and _name(n.target) in names and not n.kwargs

    def placeholder(n):
        return getattr(n, "op", None) == "placeholder"

    out = strip(root)
    xs = _shape(out)
    if not xs or not op_of(out, "mul") or len(out.args) != 2:
        return None
    seen.add(out)
    a, b = (strip(v) for v in out.args)
    if placeholder(b) and _shape(b) == (xs[-1],):
        weight, n = b, a
    elif placeholder(a) and _shape(a) == (xs[-1],):
        weight, n = a, b
    else:
        return None
    if not (op_of(n, "mul", "div") and len(n.args) == 2):
        return None
    seen.add(n)
    x1, r = strip(n.args[0]), strip(n.args[1])
    if _name(n.target) == "mul" and op_of(x1, "rsqrt"):   # rsqrt(...) * x
        x1, r = r, x1
    want = "rsqrt" if _name(n.target) == "mul" else "sqrt"
    if not (op_of(r, want) and len(r.args) == 1):
        return None
    seen.add(r)
    d = strip(r.args[0])
    # eps: any finite number here (a scalar input traced as the value this workload drew; the binder checks a number)
    e = d.args[1] if op_of(d, "add") and len(d.args) == 2 else None
    if isinstance(e, bool) or not isinstance(e, (int, float)) or not math.isfinite(e):
        return None
    seen.add(d)
    eps = float(e)
    m = strip(d.args[0])
    if not (hasattr(m, "op") and m.op == "call_function" and _name(m.target) == "mean" and len(m.args) >= 2):
        return None
    keep = m.args[2] if len(m.args) > 2 else m.kwargs.get("keepdim", False)
    if m.kwargs.get("dtype") is not None or _axes_of(m.args[1], len(xs)) != [len(xs) - 1] or not keep:
        return None
    seen.add(m)
    sq = strip(m.args[0])
    if op_of(sq, "pow") and len(sq.args) == 2 and sq.args[1] == 2:
        x2 = strip(sq.args[0])
    elif op_of(sq, "mul") and len(sq.args) == 2 and strip(sq.args[0]) is strip(sq.args[1]):
        x2 = strip(sq.args[0])
    else:
        return None
    seen.add(sq)
    if x1 is not x2 or _shape(x1) != xs:
        return None
    if placeholder(x1):
        operands, op = {"x": x1, "weight": weight}, "rmsnorm"
    elif op_of(x1, "add") and len(x1.args) == 2 and all(placeholder(strip(v)) and _shape(strip(v)) == xs for v in x1.args):
        seen.add(x1)
        operands, op = {"x": strip(x1.args[0]), "residual": strip(x1.args[1]), "weight": weight}, "residual_rmsnorm"
        if operands["x"] is operands["residual"]:
            return None
    else:
        return None
    return {"op": op, "eps": eps, "operands": operands}, seen


def _norm(graph):
    """{norm, operands} when the graph is one normalisation of an input x over some of its axes; else None.
    norm: {stat, axes, groups, eps[, affine_axes]}: y = (x - mean) / sqrt(var + eps) (stat "var", the biased variance),
    x / sqrt(mean(x^2) + eps) ("rms"), x / sqrt(sum(x^2) + eps) ("l2"), x / (mean(|x|) + eps) ("mean_abs"), the
    statistics taken over `axes` of x (sorted, >= 0) separately for every index of the others, the first of `axes`
    split into `groups` consecutive groups kept apart (group norm); then * weight + bias, both shaped as x's
    `affine_axes`. operands: x, weight, bias (placeholders)."""
    out = _returned(graph)
    if out is None or not hasattr(out, "op"):
        return None
    live = _live(out)
    calls = [n for n in graph.nodes if n.op == "call_function" and n in live]
    placeholders = [p for p in graph.nodes if p.op == "placeholder" and p in live]
    mods = [n for n in calls if _name(n.target) in NORM]
    r = _norm_module(out, calls, mods) if mods else _norm_chain(out, calls, placeholders)
    if r is None or set(placeholders) != {v for v in r["operands"].values()}:
        return None   # an input the normalisation does not read (or one read elsewhere) is not accounted for
    return r


def _norm_module(out, calls, mods):
    """_norm for one batch / instance / group / layer norm op (its result, element 0 of the op's tuple, returned)."""
    if len(mods) != 1:
        return None
    nm = mods[0]
    name, a = _name(nm.target), list(nm.args)
    res = out
    while hasattr(res, "op") and res.op == "call_function" and _name(res.target) in RESHAPES | SAME_DATA:
        res = res.args[0]
    if not (hasattr(res, "op") and _name(res.target) == "getitem" and res.args[0] is nm and res.args[1] == 0):
        return None
    if any(n is not nm and _name(n.target) not in LAYOUT | CONSTRUCTION | {"repeat"} for n in calls):
        return None
    skip, groups, instance = set(), 1, False
    if name in BATCH_NORM_ATEN:
        if name == "_native_batch_norm_legit" and len(a) == 6:    # .no_stats: input, weight, bias, training, ...
            training, eps = a[3], a[5]
        elif len(a) >= 8:                                          # input, weight, bias, mean, var, training, m, eps
            training, eps = a[5], a[7]
        else:
            return None
        if training is not True:
            return None   # eval mode normalises by the running statistics, not the batch's
        src = a[0]
        if hasattr(src, "op") and src.op == "call_function" and _name(src.target) in RESHAPES:
            x = _as_stored(src.args[0], skip)   # instance norm: x [N, C, *S] as [1, N * C, *S]
            xs, vs = _shape(x), _shape(src)
            if x is None or xs is None or len(xs) < 3 or vs != (1, xs[0] * xs[1]) + xs[2:]:
                return None
            instance = True
        else:
            x = _as_stored(src, skip)
        w, b = a[1], a[2]
        xs = _shape(x)
        if x is None or xs is None or len(xs) < 2:
            return None
        axes, affine = (list(range(2, len(xs))) if instance else [0] + list(range(2, len(xs)))), [1]
        if instance:   # an affine instance norm repeats weight and bias [C] over the batch
            def unrepeat(v):
                if v is None:
                    return None
                if not (hasattr(v, "op") and _name(v.target) == "repeat" and list(v.args[1]) == [xs[0]]):
                    return False
                return v.args[0]
            w, b = unrepeat(w), unrepeat(b)
            if w is False or b is False:
                return None
    elif name == "native_group_norm":   # input, weight, bias, N, C, HxW, group, eps
        if len(a) < 8:
            return None
        x, w, b, groups, eps = _as_stored(a[0], skip), a[1], a[2], a[6], a[7]
        xs = _shape(x)
        if x is None or xs is None or len(xs) < 2 or isinstance(groups, bool) or not isinstance(groups, int):
            return None
        axes, affine = list(range(1, len(xs))), [1]
    elif name == "native_layer_norm":   # input, normalized_shape, weight, bias, eps
        if len(a) < 5:
            return None
        x, w, b, eps = _as_stored(a[0], skip), a[2], a[3], a[4]
        xs = _shape(x)
        k = len(a[1]) if isinstance(a[1], (list, tuple)) else 0
        if x is None or xs is None or not 1 <= k <= len(xs) or tuple(a[1]) != xs[len(xs) - k:]:
            return None
        axes = list(range(len(xs) - k, len(xs)))
        affine = axes
    else:
        return None
    eps = _number(eps)
    if eps is None or _shape(out) != xs or not (groups >= 1 and xs[axes[0]] % groups == 0):
        return None
    operands = {"x": x}
    for role, v in (("weight", w), ("bias", b)):
        if v is None:
            continue
        p = _as_stored(v, skip)
        if p is None or p is x or _shape(p) != tuple(xs[i] for i in affine):
            return None
        operands[role] = p
    norm = {"stat": "var", "axes": axes, "groups": groups, "eps": eps}
    if len(operands) > 1:
        norm["affine_axes"] = affine
    return {"norm": norm, "operands": operands}


def _norm_chain(out, calls, placeholders):
    """_norm for a normalisation written out: x / sqrt(mean(x^2, dims, keepdim=True) + eps), x * rsqrt(...) (rms),
    x / sqrt(sum(x^2, dims) + eps) or x / norm(x, 2, dims) (l2), x / (mean(|x|, dims) + eps) (mean_abs)."""
    if len(placeholders) != 1:
        return None
    x = placeholders[0]
    xs = _shape(x)
    if xs is None or not xs or _shape(out) != xs or out.op != "call_function" or len(out.args) != 2:
        return None
    seen = {out}

    def through(n, names):   # n read through ops of `names` (each seen)
        while hasattr(n, "op") and n.op == "call_function" and _name(n.target) in names:
            seen.add(n)
            n = n.args[0]
        return n

    def is_x(n):   # x as stored, read through copies of its shape
        while hasattr(n, "op") and n.op == "call_function" and _name(n.target) in SAME_DATA and _shape(n) == xs:
            seen.add(n)
            n = n.args[0]
        return n is x

    def op_of(n, *names):
        return hasattr(n, "op") and n.op == "call_function" and _name(n.target) in names
    top = _name(out.target)
    if top not in ("div", "mul") or not is_x(out.args[0]):
        return None
    d = through(out.args[1], RESHAPES | {"expand"})
    root = None
    if op_of(d, "sqrt", "rsqrt") and len(d.args) == 1:
        root = _name(d.target)
        seen.add(d)
        d = d.args[0]
    if (top == "mul") != (root == "rsqrt"):
        return None   # x * rsqrt(s) or x / sqrt(s) or x / s
    eps = 0.0
    if op_of(d, "add", "add_") and len(d.args) == 2 and not d.kwargs and _number(d.args[1]) is not None:
        eps = _number(d.args[1])
        seen.add(d)
        d = d.args[0]
    if not op_of(d, "mean", "sum", "linalg_vector_norm") or d.kwargs.get("dtype") is not None:
        return None
    seen.add(d)
    kind = _name(d.target)
    if kind == "linalg_vector_norm":   # input, ord=2, dim=None, keepdim=False
        order = d.args[1] if len(d.args) > 1 else d.kwargs.get("ord", 2)
        dims = d.args[2] if len(d.args) > 2 else d.kwargs.get("dim")
        keep = d.args[3] if len(d.args) > 3 else d.kwargs.get("keepdim", False)
        if order != 2 or root is not None or eps != 0.0 or not is_x(d.args[0]):
            return None
        stat = "l2"
    else:
        dims = d.args[1] if len(d.args) > 1 else d.kwargs.get("dim")
        keep = d.args[2] if len(d.args) > 2 else d.kwargs.get("keepdim", False)
        src = d.args[0]
        if op_of(src, "pow") and len(src.args) == 2 and src.args[1] == 2 and is_x(src.args[0]):
            square = True
        elif op_of(src, "mul") and len(src.args) == 2 and is_x(src.args[0]) and is_x(src.args[1]):
            square = True
        elif op_of(src, "abs") and len(src.args) == 1 and is_x(src.args[0]):
            square = False
        else:
            return None
        seen.add(src)
        if square and root is not None:
            stat = "rms" if kind == "mean" else "l2"
        elif not square and root is None and kind == "mean":
            stat = "mean_abs"
        else:
            return None
    axes = _axes_of(dims, len(xs))
    if axes is None or not (keep or len(axes) == len(xs)):
        return None   # without keepdim the statistic would broadcast against other axes
    if any(n not in seen and _name(n.target) not in LAYOUT for n in calls):
        return None
    return {"norm": {"stat": stat, "axes": axes, "groups": 1, "eps": eps}, "operands": {"x": x}}


def _gemm_epilogue(graph):
    """{expression, operands} when the graph is one mm / addmm of two 2-D inputs, then pointwise ops of the product
    with numbers and vectors over its columns (or of one value for all: a bias, addmm's or added, subtracted,
    multiplied anywhere in the chain, and more: operands.vectors); else None. The expression is of x (the product), b
    (the bias's element of x's column: addmm's bias, else the first vector's) and b1, b2, ... (the others')."""
    out = _returned(graph)
    if out is None:
        return None
    live = _live(out)
    calls = [n for n in graph.nodes if n.op == "call_function" and n in live]
    products = [n for n in calls if _name(n.target) in ("mm", "addmm", "matmul", "bmm")]
    if len(products) != 1:
        return None
    prod = products[0]
    name = _name(prod.target)
    if name == "addmm" and (prod.kwargs.get("beta", 1) != 1 or prod.kwargs.get("alpha", 1) != 1):
        return None
    a_arg, b_arg = (prod.args[1], prod.args[2]) if name == "addmm" else (prod.args[0], prod.args[1])
    # A batch of products (torch.matmul of N-D operands, traced as a bmm): the epilogue works on the result viewed
    # back to [*batch, M, N] (x).
    batched = _batched_product(prod) if name == "bmm" else None
    if name == "bmm" and batched is None:
        return None
    a, b = (batched[0], batched[1]) if batched else (_operand(a_arg), _operand(b_arg))
    out_shape = _shape(batched[2]) if batched else _shape(prod)
    if out_shape is None or (len(out_shape) != 2 and not batched):
        return None
    n_cols = out_shape[-1]
    # A batch of rows [*rows, K] times a matrix (torch.matmul, F.linear of a 3-D input): viewed to [M, K] for the
    # product, whose [M, N] result is viewed back to [*rows, N]; the epilogue works on that view (x).
    x_node = batched[2] if batched else prod
    if a is None:
        rows_in = _row_operand(a_arg)
        back = _view_back(prod, _shape(rows_in)[:-1], n_cols) if rows_in is not None else None
        if back is not None:
            a, x_node, out_shape = (rows_in, False), back, _shape(back)
    if a is None or b is None or a[0] is b[0]:
        return None
    placeholders = [p for p in graph.nodes if p.op == "placeholder" and p in live]
    others = [p for p in placeholders if p is not a[0] and p is not b[0]]
    skip = {n for n in graph.nodes if n.op == "call_function" and n not in live}
    if x_node is not prod:
        skip.add(prod)
    # A residual: an input of the output's whole shape added to the product itself (x = A @ B + R, what the gemm
    # binding's "residual" is); added anywhere else it is not that, and the product is not bound.
    # Added after other sums ((x + b) + R) it is still one: sums commute, so x carries R and that add passes its other
    # operand through (one rounding apart); after anything else ((x * s) + R, act(x) + R) it is not.
    residual, through = None, {}
    full = [p for p in others if _shape(p) == out_shape and not _column_vector(out_shape, n_cols)]
    if len(full) > 1:
        return None
    if full:
        for u in graph.nodes:
            if u.op != "call_function" or _name(u.target) != "add" or u.kwargs or len(u.args) != 2:
                continue
            for mine, other in ((u.args[1], u.args[0]), (u.args[0], u.args[1])):
                copies = set()
                if _as_stored(mine, copies) is full[0] and len(full[0].users) == 1 and _sums_from(other, x_node):
                    residual, through = full[0], {u: other}
                    skip |= copies
                    break
        if residual is None:
            return None
        others = [p for p in others if p is not residual]
    # More inputs: vectors of the output's columns, broadcast over its rows (or one value for all).
    vectors = _vectors(others, lambda shp: _column_vector(shp, n_cols))
    if vectors is None:
        return None

    def chain(node):   # the product's operand chains: left out of the epilogue
        while hasattr(node, "op") and node.op == "call_function":
            skip.add(node)
            node = node.args[0] if node.args else None
    chain(a_arg)
    chain(b_arg)
    roots = {x_node: "x"}
    if name == "addmm":
        src = prod.args[0]
        while hasattr(src, "op") and src.op == "call_function" and _name(src.target) in SAME_DATA:
            skip.add(src)
            src = src.args[0]
        if src not in vectors or not _column_vector(_shape(src), n_cols):
            return None
        vectors = [src] + [v for v in vectors if v is not src]   # addmm's bias is b
        roots[x_node] = "(x + b)"   # with a residual, (acc + b) + R read as (acc + R) + b: one rounding apart
    for k, v in enumerate(vectors):
        roots[v] = f"b{k}" if k else "b"
    expr = _expression(graph, roots, skip, through)
    if expr is None or len(expr) > MAX_EXPRESSION:
        return None
    if not _pointwise_after(calls, skip, x_node, out_shape,
                            lambda shp: vectors and (_column_vector(shp, n_cols) or _one_value(shp))):
        return None
    # x is A @ B with A [M, K] (a[1]: stored [K, M]; or [*rows, K]) and B [K, N] (stored [N, K]), (+ R).
    operands = {"A": a[0], "B": b[0], "layout_a": "col" if a[1] else "row", "layout_b": "col" if b[1] else "row"}
    if residual is not None:
        operands["residual"] = residual
    if vectors:
        operands["bias"] = vectors[0]
    if len(vectors) > 1:
        operands["vectors"] = vectors[1:]
    return {"expression": expr, "operands": operands}


# What an input of a multi-input pointwise chain may pass through on its way to the expression: copies, reshapes and
# broadcasts, which keep its elements' order (the binder aligns a broadcast input by axis name). A transpose, slice or
# select would make "A * B" mean something else.
PLAIN_READS = SAME_DATA | {"unsqueeze", "squeeze", "view_as", "expand_as"}


def _read_plainly(node):
    """Every use of node that is a layout op is one of PLAIN_READS, and so are the uses of those, recursively."""
    for u in node.users:
        if u.op == "call_function" and _name(u.target) in LAYOUT:
            if _name(u.target) not in PLAIN_READS or not _read_plainly(u):
                return False
    return True


def _strip_ones(shape):
    shape = list(shape or ())
    while shape and shape[0] == 1:
        shape.pop(0)
    return shape


def _read_as_stored(node, shape=None):
    """Whether every read of node (through PLAIN_READS) broadcasts as its stored shape does by torch's rule (aligned
    at the end): a copy or view that only adds or drops leading 1s, or an expand (torch's own broadcast); a view to
    other axes (A.unsqueeze(1), b.view(1, -1, 1, 1)) lines the elements up elsewhere. Then the binder may place the
    input by torch's rule ("broadcast": "torch"); else it places it by axis name."""
    shape = _strip_ones(_shape(node)) if shape is None else shape
    for u in node.users:
        if u.op != "call_function" or _name(u.target) not in LAYOUT:
            continue
        if _name(u.target) in ("expand", "expand_as"):
            if not _read_as_stored(u, shape):
                return False
        elif _strip_ones(_shape(u)) != shape or not _read_as_stored(u, shape):
            return False
    return True


def _named_flags(placeholders):
    """The flags of a pointwise chain over named inputs: named_inputs, and torch_broadcast when every input is read
    as stored (_read_as_stored)."""
    return ["named_inputs"] + (["torch_broadcast"] if all(_read_as_stored(p) for p in placeholders) else [])


# Ops that start a stage of a chain (a composition the tuner binds stage by stage: tuner/chain.hpp): a product or a
# convolution, a pooling, a normalisation module, a softmax, a reduction over one axis. The pointwise ops after one
# belong to its stage when its family fuses them (a product's or convolution's epilogue), else they make a stage of
# their own (an elementwise one).
FUSING_ANCHORS = {"convolution", "_convolution", "mm", "addmm", "matmul"}   # their stage takes its pointwise tail
CHAIN_ANCHORS = (FUSING_ANCHORS | set(POOL_ATEN) | BATCH_NORM_ATEN
                 | {"native_group_norm", "native_layer_norm", "_softmax", "_log_softmax"} | set(REDUCE_OVER_AXIS))


def _is_anchor(node):
    n = _name(node.target)
    if n not in CHAIN_ANCHORS:
        return False
    if n in ("max", "min"):   # max.dim / min.dim reduce; max.other / min.other are pointwise
        return len(node.args) > 1 and isinstance(node.args[1], int) and not isinstance(node.args[1], bool)
    return True


def _segments(graph):
    """The reference's live ops cut into stages (lists of nodes in graph order), each an anchor with the layout ops
    that only feed it before it and the ops up to the next anchor after it; None when the ops are not one line of
    stages (an op before the first anchor that is not its layout, a value used past the next stage)."""
    out = _returned(graph)
    if out is None or not hasattr(out, "op"):
        return None
    live = _live(out)
    nodes = [n for n in graph.nodes if n.op == "call_function" and n in live]
    anchors = [n for n in nodes if _is_anchor(n)]
    if len(anchors) < 2:
        return None
    seg = {a: i for i, a in enumerate(anchors)}
    # Backwards: a layout or construction op whose users all lie in one later stage is that stage's prefix (a
    # Linear's weight.t(); a training-mode batch norm's running statistics, zeros / ones filled in place, that
    # native_batch_norm reads and updates); any other op belongs to the stage of the anchor before it.
    for n in reversed(nodes):
        if n in seg:
            continue
        users = [u for u in n.users if u in live and u.op == "call_function"]
        stages = {seg.get(u) for u in users}
        if (_name(n.target) in LAYOUT | (CONSTRUCTION - {"getitem"}) | {"repeat"} and len(stages) == 1
                and None not in stages):   # (a tuple pick stays with the anchor it picks from)
            seg[n] = stages.pop()
    current = None
    for n in nodes:
        if n in anchors:
            current = seg[n]
        elif n not in seg:
            if current is None:
                return None
            seg[n] = current
    groups = [[n for n in nodes if seg[n] == i] for i in range(len(anchors))]
    return groups


def _stage_graph(graph, nodes, previous, names_of):
    """A graph of one stage: placeholders for what it reads from outside (the stage before's result first, as
    previous's name, then the task's inputs), its nodes, its result; with the input names in that order. None when it
    reads another stage's values."""
    import torch.fx as fx
    inside = set(nodes)
    ext = []
    for n in nodes:
        for a in n.all_input_nodes:
            if a not in inside and a not in ext and a.op != "get_attr":
                ext.append(a)
    if previous is not None:
        if previous[0] not in ext:
            return None
        ext.remove(previous[0])
        ext.insert(0, previous[0])
    if any(a.op != "placeholder" for a in ext[1 if previous is not None else 0:]):
        return None
    g = fx.Graph()
    env, names = {}, []
    for a in ext:
        name = previous[1] if previous is not None and a is previous[0] else names_of[a]
        p = g.placeholder(name)
        p.meta = dict(a.meta)
        env[a] = p
        names.append(name)
    for n in graph.nodes:
        if n.op == "get_attr" and any(n in u.all_input_nodes for u in nodes):
            env[n] = g.node_copy(n, lambda a: env[a])
    for n in nodes:
        env[n] = g.node_copy(n, lambda a: env[a])
    return g, env, names


def _stage_of(graph, nodes, result, previous, names_of):
    """The stage that nodes (result: its value) make as _stage reads it, with its operands and inputs named as the
    chain names them (the stage graph's placeholders are its inputs, in their order); None when it is no stage."""
    import torch.fx as fx

    built = _stage_graph(graph, nodes, previous, names_of)
    if built is None:
        return None
    g, env, stage_names = built
    g.output(env[result])
    gm = fx.GraphModule(graph.owning_module if graph.owning_module is not None else {}, g)
    return _stage_of_piece(gm, stage_names)


def _stage_of_piece(gm, stage_names):
    """The stage a cut-out piece `gm` reads as (its placeholders are the stored values `stage_names`, in order), with
    its operands and inputs named by them; None when no family reads it."""
    stage = _stage(gm.graph, stage_names)
    if stage is None:
        return None
    if "operands" in stage:
        ph = {p: name for p, name in zip([p for p in gm.graph.nodes if p.op == "placeholder"], stage_names)}
        stage["operands"] = _operand_names(stage["operands"], ph)
    stage["inputs"] = list(stage_names)
    # The dtype torch holds the stage's result in (float32 where a bf16 reference computes in float32): recognize()
    # keeps it as "dtype" on pointwise stages that write an intermediate (_stored_dtypes), drops it elsewhere.
    res = next((n.args[0] for n in gm.graph.nodes if n.op == "output"), None)
    dt = str(getattr((getattr(res, "meta", None) or {}).get("val"), "dtype", "")).replace("torch.", "")
    if dt in STORAGE_DTYPES:
        stage["_dtype"] = dt
    first = stage.pop("shape_input", None)
    if first in stage["inputs"]:   # the input whose axes "shape" is written in goes first (chain.hpp shapes by it)
        stage["inputs"].remove(first)
        stage["inputs"].insert(0, first)
    return stage


def _chain(graph, names):
    """{stages} when the reference is stages the tuner binds one by one (tuner/chain.hpp): each stage a convolution or
    product with its pointwise epilogue, a pooling, a normalisation, a softmax over any axis, a reduction over
    one axis or a run of them, or a pointwise op of the stage before's result (and inputs); stage i writes "khive_t<i>", the last the
    task's output. Each stage is what classify() gives for its own graph, with "inputs" (what it reads, in order) and
    "output". Else None."""
    if names is None:
        return None
    groups = _segments(graph)
    if groups is None:
        return None
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(names):
        return None
    names_of = dict(zip(placeholders, names))
    # A pointwise tail of a stage whose family fuses none becomes a stage of its own.
    stages = []
    for nodes in groups:
        anchor = next(n for n in nodes if _is_anchor(n))
        if _name(anchor.target) in FUSING_ANCHORS:
            # A product whose result is then split in two halves (a gated MLP's gate and up projections in one
            # weight): the product with what comes before the split is one stage, the split and the rest a gated one.
            at = nodes.index(anchor)
            cut = next((i for i, n in enumerate(nodes) if i > at
                        and _name(n.target) in ("split", "split_with_sizes", "slice")), None)
            if cut is not None:
                stages += [nodes[:cut], nodes[cut:]]
            else:
                stages.append(nodes)
            continue
        at = nodes.index(anchor)
        head, tail = nodes[:at + 1], []
        for n in nodes[at + 1:]:   # its views and tuple picks stay with it, the rest is a pointwise stage
            (head if not tail and _feeds_only_layout(n, anchor) else tail).append(n)
        stages.append(head)
        if tail:
            stages.append(tail)
    out = _returned(graph)
    result, previous = [], None
    for i, nodes in enumerate(stages):
        last = i + 1 == len(stages)
        # The stage's result: the returned value for the last, else its one value the next stage reads.
        if last:
            res = out
        else:
            nxt = set(stages[i + 1])
            later = set().union(*stages[i + 1:])
            used = [n for n in nodes if any(u in later for u in n.users)]
            if len(used) != 1 or any(u in later - nxt for u in used[0].users):
                return None
            res = used[0]
        if res not in nodes:
            return None
        stage = _stage_of(graph, nodes, res, previous, names_of)
        if stage is None:
            return None
        stage["output"] = None if last else f"khive_t{i + 1}"
        result.append(stage)
        previous = (res, f"khive_t{i + 1}")
    return result


def _viewed_pointwise(graph, placeholders, names):
    """{op elementwise, expression, flags [named_inputs], views} of a pointwise chain over named inputs some of which
    are read through layout ops (a transpose, heads split or merged, an expand, a slice: recognize_view.py), each
    input through one view (every read of it the same) of the output's index; None when one is not a view, or is
    read through two different ones."""
    from .recognize_view import VIEW_OPS, is_plain, view_of
    out = _returned(graph)
    out_shape = _shape(out) if out is not None else None
    if out_shape is None or not all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n) for n in names):
        return None
    if any(_name(n.target) in VIEW_OPS for n in [out] if getattr(n, "op", None) == "call_function"):
        return None   # the result itself viewed: a copy stage after this one (_layout_stages)
    views, aliases, roots = {}, {}, dict(zip(placeholders, names))
    for p, name in zip(placeholders, names):
        if _shape(p) is not None and len(_shape(p)) == 0:
            continue   # a 0-d input (a scalar retraced as a tensor) is read by name, as a scalar: no view
        # the reads of p: the first op past its layout ops, each reached through one chain
        reads, todo = [], [p]
        while todo:
            n = todo.pop()
            for u in n.users:
                if u.op == "call_function" and _name(u.target) in VIEW_OPS:
                    todo.append(u)
                elif u.op != "output":
                    reads.append((n, u))
        specs, read_as = [], {}   # the distinct views in the order first read; each read's view
        for n, _ in reads:
            v = view_of(n)
            if v is None or v.placeholder is not p:
                return None
            if n is p and _shape(p) == out_shape:
                spec = None
            elif is_plain(v) and _shape(n) == out_shape:
                spec = None
            else:
                spec = v.spec(out_shape)
                if spec is None:
                    return None
                spec = json.dumps(spec)
            if spec not in specs:
                specs.append(spec)
            read_as[n] = spec
        # One view: the input's own. Several (adaLN's shift and scale, two slices of one product's result): the input
        # read as stored, else its first view, keeps its name; each other view is an alias (name_v1, ...) with its
        # own view, which the binder reads from the input's pointer, and the reads through it are written with it.
        specs.sort(key=lambda sp: sp is not None)
        for k, spec in enumerate(specs):
            label = name if k == 0 else f"{name}_v{k}"
            if k:
                aliases[label] = name
                for n, sp in read_as.items():
                    if sp == spec:
                        roots[n] = label
            if spec is not None:
                views[label] = json.loads(spec)
    expr = _expression(graph, roots)
    if expr is None or len(expr) > MAX_EXPRESSION:
        return None
    r = {"op": "elementwise", "family": "elementwise", "expression": expr, "flags": ["named_inputs"], "views": views}
    if aliases:
        r["aliases"] = aliases
    return r


def _tail_view(graph):
    """(node, its value's nodes back to the first that is no layout op) when the graph returns a layout op's result
    that is not its source's elements in order (a product's heads split and transposed): the reading then ends with
    a copy stage; else None."""
    from .recognize_view import VIEW_OPS, is_plain, view_of
    out = _returned(graph)
    walk = [out]
    while getattr(walk[-1], "op", None) == "call_function" and _name(walk[-1].target) in VIEW_OPS - {"getitem"}:
        walk.append(walk[-1].args[0])
    if len(walk) < 2 or not hasattr(walk[-1], "op"):
        return None
    v = view_of(out, stop=walk[-1])
    if v is None or is_plain(v):
        return None
    return walk


def _copy_stage(name, spec, output, shape=None):
    """A stage that writes `output` (None: the task's output) as the input `name` read through a view."""
    st = {"op": "elementwise", "family": "elementwise", "expression": name, "flags": ["named_inputs"],
          "views": {name: spec}, "inputs": [name], "output": output}
    if shape is not None:
        st["shape"] = shape
    return st


def _layout_stages(graph, names):
    """What the graph computes with its layout ops made copy stages (issue 24): an input of the product read through
    a view that the gemm templates do not read (attn.transpose(1, 2).reshape(B, S, H * D) @ W^T) is first copied
    contiguous, and a result returned through one (a projection's heads split and transposed) is copied last from
    the product's; each copy an elementwise stage reading through its view (recognize_view.py). {op chain, stages},
    or {op elementwise, views} for a graph of layout ops alone; None when no copy is needed or the rest is no stage.
    """
    from .recognize_view import VIEW_OPS, is_plain, view_of
    out = _returned(graph)
    if out is None or not hasattr(out, "op"):
        return None
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(names) or not all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n) for n in names):
        return None
    names_of = dict(zip(placeholders, names))
    live = _live(out)
    nodes = [n for n in graph.nodes if n.op == "call_function" and n in live]
    tail = _tail_view(graph)
    if tail is not None and tail[-1].op == "placeholder":   # layout ops of one input and nothing else
        v = view_of(out)
        spec = v.spec(_shape(out)) if v is not None else None
        if spec is None:
            return None
        name = names_of[tail[-1]]
        return {"op": "elementwise", "family": "elementwise", "expression": name, "flags": ["named_inputs"],
                "views": {name: spec}}

    def stage_of(stage_nodes, result, previous, output):
        """The stage of stage_nodes (result: its value) as _stage reads it, with inputs and output; or None."""
        st = _stage_of(graph, stage_nodes, result, previous, names_of)
        if st is not None:
            st["output"] = output
        return st

    def core(core_nodes, result, output):
        """[stages] of the nodes up to result: one stage as it is, or a copy of one operand of its product (read
        through a view the gemm templates do not take) then the product's stage; None."""
        st = stage_of(core_nodes, result, None, output)
        if st is not None and not (st.get("family") == "gemm" and _head_view_needed(core_nodes)):
            return [st]
        anchors = [n for n in core_nodes if _name(n.target) in ("mm", "bmm", "matmul", "addmm")]
        if len(anchors) != 1:
            return None
        for arg in anchors[0].args:
            walk = [arg]
            while getattr(walk[-1], "op", None) == "call_function" and _name(walk[-1].target) in VIEW_OPS - {"getitem"}:
                walk.append(walk[-1].args[0])
            if getattr(walk[-1], "op", None) != "placeholder" or len(walk) < 2:
                continue
            for cut in reversed(walk[:-1]):   # from the input's side: the fewest layout ops copied
                if any(u not in walk for n in walk[walk.index(cut):-1] for u in n.users if u is not anchors[0]
                       and u in live):
                    continue
                v = view_of(cut)
                if v is None or is_plain(v):
                    continue
                chain_nodes = set(walk[walk.index(cut):-1])
                rest = [n for n in core_nodes if n not in chain_nodes]
                st = stage_of(rest, result, (cut, "khive_t1"), output)
                if st is None or (st.get("family") == "gemm" and "operands" not in st):
                    continue
                spec = v.spec(_shape(cut))
                if spec is None:
                    continue
                copy = _copy_stage(names_of[walk[-1]], spec, "khive_t1", v.sizes_text())
                return [copy, st]
        return None

    if tail is None:
        stages = core(nodes, out, None)
        return {"op": "chain", "family": "chain", "stages": stages} if stages and len(stages) > 1 else None
    # the result viewed: the core up to a node of the tail (the fewest layout ops in the core first), then a copy
    for cut in reversed(tail[1:]):
        v = view_of(out, stop=cut)
        if v is None or is_plain(v):
            continue
        spec = v.spec(_shape(out))
        if spec is None:
            continue
        tail_nodes = set(tail[:tail.index(cut)])
        core_nodes = [n for n in nodes if n not in tail_nodes]
        stages = core(core_nodes, cut, "khive_tX")
        if not stages:
            continue
        k = len(stages)
        for i, st in enumerate(stages):   # number the intermediates in order
            if st["output"] is not None:
                old = st["output"]
                st["output"] = f"khive_t{i + 1}"
                for later in stages[i + 1:]:
                    later["inputs"] = [f"khive_t{i + 1}" if n == old else n for n in later["inputs"]]
                    if "operands" in later:
                        later["operands"] = {r: f"khive_t{i + 1}" if n == old else n for r, n in later["operands"].items()}
                    if later.get("expression") == old:
                        later["expression"] = f"khive_t{i + 1}"
                    if "views" in later and old in later["views"]:
                        later["views"] = {f"khive_t{i + 1}": later["views"][old]}
        name = f"khive_t{k}"
        stages.append(_copy_stage(name, spec, None))
        if len(stages) > MAX_STAGES:
            return None
        return {"op": "chain", "family": "chain", "stages": stages}
    return None


def _head_view_needed(nodes):
    """Whether the one product among nodes reads an input through a view that is neither as stored, transposed (a
    2-D input, or the last two axes of a batch) nor rows [*rows, K] read as [M, K]: one the gemm templates do not
    take."""
    from .recognize_view import VIEW_OPS, is_plain, view_of
    anchors = [n for n in nodes if _name(n.target) in ("mm", "bmm", "matmul")]
    if len(anchors) != 1 or _batched_product(anchors[0]) is not None:   # a batch read by torch.matmul's rule
        return False
    for arg in anchors[0].args[:2]:
        if _operand(arg) is not None or _row_operand(arg) is not None:
            continue
        v = view_of(arg)
        if v is None or is_plain(v):
            continue
        if len(v.axes) == 3 and len(_shape(v.placeholder) or ()) == 3:   # a batch read with its last axes swapped
            ph = _shape(v.placeholder)
            if _shape(arg) in (ph, (ph[0], ph[2], ph[1])):
                continue
        return True
    return False


def _operand_names(operands, names):
    """operands with its nodes (one, or a list: vectors) replaced by their input names ({node: name})."""
    def name(v):
        return names[v] if hasattr(v, "op") else v
    return {k: [name(e) for e in v] if isinstance(v, list) else name(v) for k, v in operands.items()}


def _feeds_only_layout(n, anchor):
    """Whether n is a layout op or tuple pick of the anchor's result (its view / getitem, part of the anchor's own
    stage: batch norm's getitem and instance norm's view back)."""
    while hasattr(n, "op") and n.op == "call_function" and _name(n.target) in LAYOUT | {"getitem"}:
        n = n.args[0] if n.args else None
        if n is anchor:
            return True
    return False


def _stage(graph, names):
    """One stage as classify() reads it, kept only in a form the tuner binds: a convolution or product with its
    epilogue (its options and operands), a pooling, a normalisation, a softmax over any axis, a reduction over
    one axis or a run of them, a pointwise chain (its expression over the input names)."""
    n_in = len(names)
    compute = _compute_nodes(graph)
    if compute and all(_name(n.target) in POINTWISE for n in compute):
        gated = _gated(graph)
        if gated is not None:
            return {"op": "gated", "family": "gated", **gated}
        if not all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n) for n in names):
            return None
        placeholders = [p for p in graph.nodes if p.op == "placeholder"]
        if any(_name(n.target) == "cat" for n in compute):   # parts joined: every read along its path
            from .recognize_pointwise import paths_pointwise
            return paths_pointwise(graph, placeholders, names, MAX_EXPRESSION)
        if not all(_read_plainly(p) for p in placeholders):
            return _viewed_pointwise(graph, placeholders, names)
        expr = _expression(graph, dict(zip(placeholders, names)))
        if expr is None or len(expr) > MAX_EXPRESSION:
            return None
        st = {"op": "elementwise", "family": "elementwise", "expression": expr, "flags": _named_flags(placeholders)}
        gapped = _gapped_views(graph, placeholders, names)
        if gapped is None:
            return None
        if gapped:
            st["views"] = gapped
        return st
    r = _classify_one(graph, n_in, n_in, names)
    r.pop("ops", None)
    fam = r.get("family")
    if fam == "conv" and "conv" in r:
        return r
    if fam == "gemm" and "operands" in r and r["op"] in ("matmul", "gemm+epilogue"):
        return r
    if fam in ("pool", "norm") and (r.get("pool") or r.get("norm")):
        return r
    if fam == "reduce":
        return r
    if fam == "softmax" and r["op"] in ("softmax", "log_softmax") and "dim" in r:
        return r
    return None


def _gapped_views(graph, placeholders, names):
    """{name: view} (recognize_view's spec) for each input of a pointwise stage that torch broadcasts around a gap: its
    axes of the output's are not one run (GRN's statistic [B, 1, 1, C] against [B, H, W, C]), which the elementwise
    binder places only through a view (stride 0 along the broadcast axes); {} when there is none, None when such an
    input has no view. The sizes are the traced ones: an axis of size 1 there is taken as the output's."""
    from .recognize_view import view_of
    out = _returned(graph)
    out_shape = _shape(out) if out is not None else None
    if not out_shape:
        return {}
    views = {}
    for p, name in zip(placeholders, names):
        sh = _shape(p)
        if not sh or len(sh) > len(out_shape):
            continue
        sh = (1,) * (len(out_shape) - len(sh)) + tuple(sh)
        kept = [d for d, (a, o) in enumerate(zip(sh, out_shape)) if a == o and a != 1]
        if kept and any(a == 1 and o != 1 and kept[0] < d < kept[-1] for d, (a, o) in enumerate(zip(sh, out_shape))):
            v = view_of(p)
            spec = v.spec(out_shape) if v is not None else None
            if spec is None:
                return None
            views[name] = spec
    return views


# Families whose single-op reading binds as it is (else a chain is tried): what classify() gives with the details
# the tuner needs.
def _bindable(r):
    fam = r.get("family")
    if fam == "conv":
        return "conv" in r
    if fam == "gemm":
        return "operands" in r or r.get("op") == "matmul" or "flags" in r
    if fam == "pool":
        return "pool" in r
    if fam == "norm":
        return "norm" in r
    if fam in ("reduction", "other") or r.get("op") == "softmax+epilogue":
        return False
    return True


def classify(graph, n_tensor_inputs, n_inputs=None, names=None):
    """{op, family, ops[, expression][, eps][, dim][, flags]} for an ATen graph (torch.fx) of the reference. names: the
    task's input names in argument order; with them a pointwise chain of several inputs (every one a tensor, read
    plainly) is an expression over those names, flagged named_inputs (one input alone stays x). What no single family
    binds may be a chain of stages: {op "chain", family "chain", stages} (_chain)."""
    r = _classify_one(graph, n_tensor_inputs, n_inputs, names)
    if names is not None and (not _bindable(r) or _tail_view(graph) is not None
                              or (r.get("family") == "gemm" and "operands" not in r)):
        laid = _layout_stages(graph, names)
        if laid is not None:
            return dict(laid, ops=r["ops"])
    if not _bindable(r) and names is not None:
        post = _rms_then_residual(graph)
        if post is not None:   # rowop rmsnorm, then the residual added: a chain of two stages
            (norm, res), by = post, dict(zip([n for n in graph.nodes if n.op == "placeholder"], names))
            operands, res = _operand_names(norm["operands"], by), by[res]
            if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", res):
                return {"ops": r["ops"], "op": "chain", "family": "chain", "stages": [
                    {"op": "rmsnorm", "family": "rowop", "eps": norm["eps"], "operands": operands,
                     "inputs": list(dict.fromkeys(operands.values())), "output": "khive_t1"},
                    {"op": "elementwise", "family": "elementwise", "expression": f"(khive_t1 + {res})",
                     "flags": ["named_inputs"], "inputs": ["khive_t1", res], "output": None}]}
    if not _bindable(r):
        stages = _chain(graph, names)
        if stages is not None:
            return {"ops": r["ops"], "op": "chain", "family": "chain", "stages": stages}
    return r


def _returned_values(graph):
    """The nodes the graph returns, in order (one or several)."""
    outs = [o for o in graph.nodes if o.op == "output"]
    out = outs[0].args[0] if outs else None
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _one_output_graph(graph, value):
    """A graph of the same placeholders (all of them, in order: the names stay aligned) and only the ops `value`
    depends on, returning it: one output's cone of a reference that returns several."""
    import torch
    import torch.fx as fx
    live = _live(value)
    g = fx.Graph()
    env = {}
    for n in graph.nodes:
        if n.op == "placeholder" or (n in live and n.op != "output"):
            env[n] = g.node_copy(n, lambda a: env[a])
    g.output(env[value])
    root = graph.owning_module if graph.owning_module is not None else torch.nn.Module()
    return fx.GraphModule(root, g).graph


def _rename_tensor(stage, old, new):
    """stage (a chain stage's dict) with the tensor name old replaced by new in what it reads and writes."""
    word = re.compile(r"\b" + re.escape(old) + r"\b")
    stage["inputs"] = [new if n == old else n for n in stage.get("inputs", [])]
    if stage.get("output") == old:
        stage["output"] = new
    if "operands" in stage:
        stage["operands"] = {k: ([new if e == old else e for e in v] if isinstance(v, list) else new if v == old else v)
                             for k, v in stage["operands"].items()}
    if isinstance(stage.get("expression"), str) and "named_inputs" in (stage.get("flags") or []):
        stage["expression"] = word.sub(new, stage["expression"])
    if old in (stage.get("views") or {}):
        stage["views"] = {new if k == old else k: v for k, v in stage["views"].items()}
    if "aliases" in stage:   # another view of the same input, named apart
        stage["aliases"] = {k: new if v == old else v for k, v in stage["aliases"].items()}
    return stage


def _output_stages(graph, value, out_name, n_tensor_inputs, n_inputs, names, first):
    """The stages that compute one returned value, as a chain stage list writing task output out_name (its
    intermediates numbered from khive_t<first>); or a string saying why there are none. A value that is a
    computed result reshaped (a projection's [B, S, H * D] viewed as [B, S, H, D]) and is no stage as it is: the
    result's stages, then a copy stage through the view."""
    got = _output_stages_as_is(graph, value, out_name, n_tensor_inputs, n_inputs, names, first)
    if not isinstance(got, str):
        return got
    from .recognize_view import VIEW_OPS, view_of
    walk = [value]   # back through layout ops and picks of a split's pieces (a projection chunked in six)
    pieces = {"split", "split_with_sizes", "chunk", "unbind"}
    while getattr(walk[-1], "op", None) == "call_function" and _name(walk[-1].target) in VIEW_OPS | pieces and (
            _name(walk[-1].target) != "getitem" or _name(getattr(walk[-1].args[0], "target", "")) in VIEW_OPS | pieces):
        walk.append(walk[-1].args[0])
    if len(walk) < 2 or getattr(walk[-1], "op", None) != "call_function" or _name(walk[-1].target) in VIEW_OPS | pieces:
        return got
    v = view_of(value, stop=walk[-1])
    spec = v.spec(_shape(value)) if v is not None else None
    if spec is None:
        return got
    inner = _output_stages_as_is(graph, walk[-1], "khive_tX", n_tensor_inputs, n_inputs, names, first)
    if isinstance(inner, str):
        return got
    mid = f"khive_t{first + sum(1 for st in inner if st['output'].startswith('khive_t') and st['output'] != 'khive_tX')}"
    for st in inner:
        _rename_tensor(st, "khive_tX", mid)
    return inner + [_copy_stage(mid, spec, out_name)]


def _output_stages_as_is(graph, value, out_name, n_tensor_inputs, n_inputs, names, first):
    """_output_stages of the value as classify() reads its cone."""
    g = _one_output_graph(graph, value)
    r = classify(g, n_tensor_inputs, n_inputs, names=names)
    if r.get("op") == "chain":
        stages = [dict(st) for st in r["stages"]]
        mids = [st["output"] for st in stages if st.get("output") is not None]
        for k, old in enumerate(mids):   # khive_t1.. of this output's chain: unique across the outputs
            tmp = f"khive_m{k}_{old}"
            for st in stages:
                _rename_tensor(st, old, tmp)
        for k, old in enumerate(mids):
            for st in stages:
                _rename_tensor(st, f"khive_m{k}_{old}", f"khive_t{first + k}")
        stages[-1]["output"] = out_name
        return stages
    if not _bindable(r) or "why" in r:
        return f"{out_name}: {r.get('op')}" + (f" ({r['why']})" if r.get("why") else "")
    placeholders = [n for n in g.nodes if n.op == "placeholder"]
    names_of = dict(zip(placeholders, names))
    out = _returned(g)
    nodes = [n for n in g.nodes if n.op == "call_function" and n in _live(out)]
    st = _stage_of(g, nodes, out, None, names_of) if nodes else None
    if st is None:   # a stage of layout ops alone, or what _stage does not keep: the reading of the whole graph
        st = dict(r)
        st.pop("ops", None)
        if "operands" in st:
            st["operands"] = _operand_names(st["operands"], names_of)
        st["inputs"] = [names_of[p] for p in placeholders if any(u in _live(out) for u in p.users)]
    st["output"] = out_name
    return [st]


def multi_output(graph, n_tensor_inputs, n_inputs, names, out_names):
    """{op chain, family chain, stages} for a reference that returns several values (a backward pass's grad_input
    and grad_weight, a projection's q, k and v): each returned value's cone read as classify() reads a graph of one
    output, its stages writing that task output (intermediates numbered through all of them); shared ops are
    computed again in each cone that needs them. {why} when some value is no such reading, or there are more than
    8 stages in all."""
    values = _returned_values(graph)
    if len(values) != len(out_names) or not all(hasattr(v, "op") for v in values):
        return {"why": f"the reference returns {len(values)} values for {len(out_names)} outputs"}
    if len(set(values)) != len(values):
        return {"why": "the reference returns one value as two outputs"}
    stages, why = [], []
    for v, name in zip(values, out_names):
        got = _output_stages(graph, v, name, n_tensor_inputs, n_inputs, names,
                             1 + sum(1 for st in stages if st["output"] not in out_names))
        if isinstance(got, str):
            why.append(got)
            continue
        for st in got:   # a stage an earlier output's stages have already (the product two outputs are sliced from)
            key = json.dumps({k: v for k, v in st.items() if k != "output"}, sort_keys=True)
            same = next((e for e in stages if e["output"] not in out_names and st["output"] not in out_names
                         and json.dumps({k: v for k, v in e.items() if k != "output"}, sort_keys=True) == key), None)
            if same is None:
                stages.append(st)
                continue
            for later in got[got.index(st) + 1:]:
                _rename_tensor(later, st["output"], same["output"])
    if why:
        # Not each value a line of stages: the graph cut as a whole, values read by several stages stored once
        # (recognize_dag.py: a backward pass's products in a row, a bias gradient's sum).
        from .recognize_dag import dag_stages
        dag = dag_stages(graph, names, out_names)
        if "why" not in dag:
            return dag
        return {"why": "outputs not read as stages: " + "; ".join(why) + "; as a graph of stages: " + dag["why"]}
    mids = [st["output"] for st in stages if st["output"] not in out_names]
    for k, old in enumerate(mids):   # numbered in order again (a stage shared with an earlier output left a gap)
        for st in stages:
            _rename_tensor(st, old, f"khive_n{k + 1}")
    for k in range(len(mids)):
        for st in stages:
            _rename_tensor(st, f"khive_n{k + 1}", f"khive_t{k + 1}")
    if len(stages) > MAX_STAGES:
        return {"why": f"{len(stages)} stages for {len(out_names)} outputs, more than {MAX_STAGES} (Task::kMaxStages)"}
    return {"op": "chain", "family": "chain", "stages": stages}


def _written_in_place(graph):
    """The name of an in-place op (copy_, masked_fill_, index_put_, ...) whose result nothing reads and that writes
    into the cone of a returned value (a buffer built with zeros_like, then filled slice by slice); None when there
    is none. The stages are read from the values' cones, which such a write bypasses: the cut would miss it."""
    from .recognize_view import VIEW_OPS
    live = set()
    for v in _returned_values(graph):
        if hasattr(v, "op"):
            live |= _live(v)
    for n in graph.nodes:
        k = _name(n.target) if n.op == "call_function" else ""
        if not k.endswith("_") or k in CONSTRUCTION or n.users or not n.args or not hasattr(n.args[0], "op"):
            continue
        base = n.args[0]
        while base.op == "call_function" and _name(base.target) in LAYOUT | VIEW_OPS and base.args:
            base = base.args[0]
        if base in live:
            return k
    return None


def _cut_as_graph(r):
    """Whether a reference of one output that classify() read as `r` is cut as a graph of stages (dag_stages), as
    references of several outputs are: when no family binds it as it is and it is no line of stages (a reduction
    whose result pointwise ops read together with its own input: a softmax backward's y * (g - sum(y * g)), a norm
    written out, a softmax after pointwise ops)."""
    return not _bindable(r) and r.get("op") != "chain"


def _classify_one(graph, n_tensor_inputs, n_inputs=None, names=None):
    """classify() of one op (with what follows it), no chains."""
    nodes = _compute_nodes(graph)
    compute = [_name(n.target) for n in nodes]
    r = {"ops": compute}
    s = set(compute)
    if not compute:
        return dict(r, op="copy", family="layout")
    if s & ATTENTION:
        return dict(r, op="attention", family="attention")
    if s & CONV:
        one = _conv(graph)
        if one is not None:
            return dict(r, op="conv", family="conv", **one)
        return dict(r, op="conv" if s <= CONV else "conv+epilogue", family="conv")
    if s & MATMUL or "addmm" in s or "baddbmm" in s:
        if len(compute) == 1 and compute[0] in MATMUL:
            return dict(r, op="matmul", family="gemm", **_product_operands(nodes[0]))
        if s <= MATMUL:
            return dict(r, op="matmul_chain", family="gemm")
        if s & {"_softmax", "_scaled_dot_product_flash_attention_for_cpu"} and len([c for c in compute if c in MATMUL | {"bmm"}]) >= 2:
            return dict(r, op="attention", family="attention")
        fused = _gemm_epilogue(graph)
        if fused is not None:
            return dict(r, op="gemm+epilogue", family="gemm", **fused)
        return dict(r, op="gemm+epilogue", family="gemm")
    if len(compute) == 1 and compute[0] in SOFTMAX:
        # The normalised axis, counted from the front (the rowop templates also walk a non-last one) -- of the input
        # as stored: a softmax of a view to other axes (x.view(b, c, -1) over the merged spatial axes, kb2_038) has
        # no such axis of the input, so no dim is written.
        rank = len(_shape(nodes[0]) or ())
        dim = nodes[0].args[1] if len(nodes[0].args) > 1 else None
        src = nodes[0].args[0] if nodes[0].args else None
        while hasattr(src, "op") and src.op == "call_function" and _name(src.target) in LAYOUT:
            src = src.args[0] if src.args else None
        if _shape(src) != _shape(nodes[0]):
            dim = None
        if rank and isinstance(dim, int) and not isinstance(dim, bool) and -rank <= dim < rank:
            return dict(r, op=SOFTMAX[compute[0]], family="softmax", dim=dim % rank)
        return dict(r, op=SOFTMAX[compute[0]], family="softmax")
    if s & set(SOFTMAX):
        return dict(r, op="softmax+epilogue", family="softmax")
    if s & NORM:
        one = _norm(graph)
        if one is not None:
            return dict(r, op="norm", family="norm", **one)
        return dict(r, op="norm", family="norm")
    rows = _rms_rows(graph) if s <= {"pow", "mean", "add", "rsqrt", "sqrt", "mul", "div"} else None
    if rows is not None:
        return dict(r, family="rowop", **rows)
    rms = ["pow", "mean", "add", "rsqrt", "mul"]
    if set(rms) <= s and s <= set(rms) | {"_to_copy"} and n_tensor_inputs == 2:
        eps = None
        for node in graph.nodes:
            if node.op == "call_function" and _name(node.target) == "add" and len(node.args) > 1 and isinstance(node.args[1], float):
                eps = node.args[1]
        if eps is not None:
            return dict(r, op="rmsnorm", family="rowop", eps=eps)
    if s & POOL:
        one = _pool(graph)
        if one is not None:
            return dict(r, op=f"{one['pool']['op']}_pool", family="pool", **one)
        return dict(r, op="pool", family="pool")
    if s & SCAN:
        one = _scan(graph, n_tensor_inputs)
        if one is not None:
            return dict(r, op=one[0], family="scan", dim=one[1], flags=one[2])
    if len(compute) == 1 and compute[0] in REDUCE_OVER_AXIS:
        one = _reduce_over_axis(graph, nodes[0])
        if one is not None:   # keepdim: the result keeps the reduced axes as 1s (a chain's next stage reads them so)
            return dict(r, op=one[0], family="reduce", dim=one[1], **({"flags": ["keepdim"]} if one[2] else {}))
    if s & REDUCTION:
        one = _norm(graph)
        if one is not None:
            return dict(r, op="norm", family="norm", **one)
        return dict(r, op="reduction" if len(s) == 1 else "reduction+elementwise", family="reduction")
    if s <= POINTWISE:
        gated = _gated(graph)
        if gated is not None:
            return dict(r, op="gated", family="gated", **gated)
        placeholders = [n for n in graph.nodes if n.op == "placeholder"]
        if "cat" in s:   # parts joined: every read along its path (recognize_pointwise.py), the inputs by name
            if (names is not None and n_inputs == n_tensor_inputs == len(placeholders) == len(names)
                    and all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n) for n in names)):
                from .recognize_pointwise import paths_pointwise
                viewed = paths_pointwise(graph, placeholders, names, MAX_EXPRESSION)
                if viewed is not None:
                    viewed.pop("shape_input", None)
                    viewed.pop("shape", None)
                    return dict(r, **viewed)
            return dict(r, op="elementwise", family="elementwise")
        # One tensor input and nothing else: a scalar input was traced as the constant it was on this workload, so
        # an expression would bake that one value in.
        if (n_tensor_inputs == 1 and (n_inputs is None or n_inputs == 1) and len(placeholders) == 1 and names
                and not _read_plainly(placeholders[0])):
            # read through a transpose, a slice, ...: the expression over its name, the input through its view
            viewed = _viewed_pointwise(graph, placeholders, names)
            if viewed is not None:
                return dict(r, **viewed)
        if n_tensor_inputs == 1 and (n_inputs is None or n_inputs == 1) and len(placeholders) >= 1:
            # One activation with its default parameters is known by name; with others (selu is elu with a scale,
            # gelu(approximate='tanh'), leaky_relu's slope) its exact expression is written instead.
            if len(compute) == 1 and compute[0] in ACTIVATION_C and len(nodes[0].args) == 1 and not nodes[0].kwargs:
                return dict(r, op=compute[0], family="activation", expression=ACTIVATION_C[compute[0]])
            expr = _expression(graph, {placeholders[0]: "x"})
            if expr is not None:
                return dict(r, op="elementwise", family="elementwise", expression=expr)
        if (names is not None and n_tensor_inputs >= 2 and n_inputs == n_tensor_inputs == len(placeholders) == len(names)
                and all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n) for n in names)):
            if all(_read_plainly(p) for p in placeholders):
                expr = _expression(graph, dict(zip(placeholders, names)))
                if expr is not None and len(expr) <= MAX_EXPRESSION:
                    return dict(r, op="elementwise", family="elementwise", expression=expr,
                                flags=_named_flags(placeholders))
            else:
                viewed = _viewed_pointwise(graph, placeholders, names)
                if viewed is not None:
                    return dict(r, **viewed)
        return dict(r, op="elementwise", family="elementwise")
    return dict(r, op="other", family="other")


def memory_budget():
    """The bytes recognition may take (KHIVE_RECOGNIZE_MAX_GB, default half of this machine's memory): tracing keeps
    every intermediate tensor of the reference alive, and a trace that took all of a machine's memory was killed by
    the kernel's OOM killer without a word (exit 137)."""
    import os
    v = os.environ.get("KHIVE_RECOGNIZE_MAX_GB")
    if v:
        try:
            gb = float(v)
        except ValueError:
            raise SystemExit(f"KHIVE_RECOGNIZE_MAX_GB: expected a number of GB, got {v!r}") from None
        if not gb > 0:
            raise SystemExit(f"KHIVE_RECOGNIZE_MAX_GB: expected a number of GB above 0, got {v!r}")
        return int(gb * 2**30)
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (ValueError, OSError):
        return 8 * 2**30


def limit_memory(budget):
    """Caps this process' address space at what it maps now plus budget (RLIMIT_AS), so that a trace over the budget
    fails with an allocation error recognize() reports, instead of the OOM killer ending the process. Returns
    whether the cap was set (Linux)."""
    try:
        import resource
        with open("/proc/self/status") as f:
            vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        want = vm + budget
        if hard != resource.RLIM_INFINITY:
            want = min(want, hard)
        resource.setrlimit(resource.RLIMIT_AS, (want, hard))
        return True
    except (OSError, ValueError, StopIteration, ImportError):
        return False


def _out_of_memory(e):
    """Whether e is an allocation that failed (torch's allocator or Python's)."""
    text = str(e).lower()
    return isinstance(e, MemoryError) or (isinstance(e, RuntimeError) and (
        "can't allocate memory" in text or "not enough memory" in text or "out of memory" in text
        or "std::bad_alloc" in text))


STORAGE_DTYPES = ("float32", "bfloat16", "float16")   # what a chain may store a pointwise intermediate in


def _stored_dtypes(r, task):
    """Each pointwise stage that writes an intermediate gets "dtype", the type the chain stores it in (written only
    where one of the tensors it reads is of another type): the type torch
    holds its result in ("_dtype": float32 where a bf16 reference computes in float32; a copy's, after the casts it
    copies through), unless a reader takes operands of one type only (a product, a norm: not elementwise, not a
    reduction into an intermediate) and its other operands are of one other type: then that type (the value
    rounded as the reader reads it), or none when they disagree (the chain's rule: its widest input's type). A
    reduction writing an output reads the output's type. Every stage's "_dtype" is dropped."""
    stages = r.get("stages") or []
    outputs = dict(task.outputs)
    inputs = dict(task.inputs)
    if all(sp.get("dtype") == "float32" for sp in list(inputs.values()) + list(outputs.values())
           if sp.get("shape") is not None):
        stages = []   # every tensor float32: so is every intermediate, whatever the rule
        for st in r.get("stages") or []:
            st.pop("_dtype", None)
    decided = {}   # intermediate -> the type it is stored in (None: the chain's rule)
    for st in stages:
        dt = st.pop("_dtype", None)
        out = st.get("output")
        if st.get("family") != "elementwise" or dt is None or out is None or out in outputs:
            continue
        needs = set()
        for q in stages:
            if out not in (q.get("inputs") or []):
                continue
            if q.get("family") == "elementwise":
                continue
            if q.get("family") == "reduce":
                if q.get("output") in outputs:
                    needs.add(outputs[q["output"]].get("dtype"))
                continue
            for n in q.get("inputs") or []:
                if n == out:
                    continue
                if n in inputs:
                    if inputs[n].get("shape") is not None:   # a scalar is read as a float whatever its type
                        needs.add(inputs[n].get("dtype"))
                elif n in outputs:
                    needs.add(outputs[n].get("dtype"))
                elif n in decided:   # an earlier pointwise intermediate (another family's: its own rule)
                    needs.add(decided[n])
        want = dt if not needs or needs == {dt} else next(iter(needs)) if len(needs) == 1 else None
        # Every tensor it reads of that type already: the chain's rule gives it, nothing is written.
        own = {inputs[n].get("dtype") if n in inputs else decided.get(n) for n in st.get("inputs") or []
               if n not in inputs or inputs[n].get("shape") is not None}
        if want in STORAGE_DTYPES and own != {want}:
            st["dtype"] = want
        decided[out] = want if want in STORAGE_DTYPES else None
    r.pop("_dtype", None)
    return r


def _scalar_eps(stages, args, order):
    """eps traced as the number it was, in a row op (rmsnorm) or a normalisation (group, layer, instance norm): the
    scalar input of that value, when exactly one has it, is the stage's operand eps, named so the binding reads it per
    call instead of this workload's value (a reference's eps argument, which workloads vary: SOL L2 023's 1e-5 and
    1e-6), and one of the stage's inputs."""
    numbers = [isinstance(v, (int, float)) and not isinstance(v, bool) for v in args]
    # (a scalar some stage already reads by name is that stage's: SOL L2 035's GRN eps beside the layer norm's)
    read = {n for one in stages for n in one.get("inputs") or [] if one.get("operands", {}).get("eps") != n}
    for one in stages:
        eps = one.get("eps") if one.get("family") == "rowop" else (one.get("norm") or {}).get("eps") \
            if one.get("family") == "norm" else None
        if eps is None or "operands" not in one:
            continue
        same = [name for v, num, name in zip(args, numbers, order) if num and float(v) == eps and name not in read]
        if len(same) == 1:
            one["operands"]["eps"] = same[0]
            if "inputs" in one and same[0] not in one["inputs"]:
                one["inputs"].append(same[0])


def recognize(torch, task, budget=None):
    """recognize_graph(), with the storage types of pointwise intermediates (_stored_dtypes)."""
    return _stored_dtypes(recognize_graph(torch, task, budget), task)


def recognize_graph(torch, task, budget=None):
    """Traces the task's reference on its smallest correctness workload; {op, family, ops, ...} or {op: "unknown", why}.
    budget: the bytes the trace may take (memory_budget()); a workload whose inputs and outputs alone are more is not
    traced, and a trace that runs out of memory (limit_memory()) is reported, both naming the definition and the
    workload."""
    from torch.fx.experimental.proxy_tensor import make_fx

    from .inputs import make_inputs
    from .reference import load_reference
    _, fn = load_reference(task)
    cands = [w for w in task.workloads if (w.get("khive") or {}).get("role", "both") != "perf"
             and "cpu" in (w.get("khive") or {}).get("backends", ["cpu", "cuda"])] or list(task.workloads)
    if not cands:
        return {"op": "unknown", "why": "no workload to trace the reference on"}

    def size(w):
        try:
            axes = task.resolve_axes(w)
        except Exception:  # noqa: BLE001 - a workload that does not resolve is not the smallest
            return float("inf")
        total = 0
        for name in task.inputs:
            shape = task.input_shape(name, axes) or ()
            total += math.prod(shape)
        return total
    w = min(cands, key=size)
    if len(task.outputs) > 1:
        # Several outputs are cut into stages whose operands are told apart by shape: a var axis of size 1 makes a
        # [T, N] residual look like a [1, N] bias vector, so the smallest workload whose var axes are all above 1 is
        # traced where there is one.
        def has_one(c):
            try:
                return any(v == 1 for v in (c.get("axes") or {}).values())
            except AttributeError:
                return True
        w = min(cands, key=lambda c: (has_one(c), size(c)))
    where = f"{task.def_file} on workload {w.get('uuid')}"

    def graph_of(args):
        with torch.no_grad():
            return make_fx(lambda *a: fn(*a), tracing_mode="real")(*args).graph
    try:
        axes = task.resolve_axes(w)
        if budget is not None:
            need = _tensor_bytes(task, axes)
            if need > budget:
                return {"op": "unknown", "why": (
                    f"not traced: {where} ({_axes_text(w)}) has {need / 2**30:.1f} GB of inputs and outputs, over "
                    f"the recognition budget of {budget / 2**30:.1f} GB (KHIVE_RECOGNIZE_MAX_GB)")}
        inputs = make_inputs(torch, task, w, axes, seed=1, device="cpu")
        args = [inputs[n] for n in task.inputs]
        started = time.monotonic()
        graph = graph_of(args)
        traced_s = time.monotonic() - started
    except Exception as e:  # noqa: BLE001 - the task's code: say why it could not be traced
        if _out_of_memory(e):
            return {"op": "unknown", "why": (
                f"tracing run() ran out of memory: {where} ({_axes_text(w)}) needs more than the recognition budget"
                + (f" of {budget / 2**30:.1f} GB (KHIVE_RECOGNIZE_MAX_GB)" if budget is not None else ""))}
        return {"op": "unknown", "why": f"tracing run() failed: {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"}
    order = list(task.inputs)
    n_tensor = sum(1 for v in args if isinstance(v, torch.Tensor))
    r = classify(graph, n_tensor, len(args), names=order)
    if len(task.outputs) == 1 and _cut_as_graph(r):
        # One output cut as a graph of stages: traced again where no var axis is 1, as several outputs are (at B = 1 a
        # [B, 1, 1, C] statistic read against [B, H, W, C] looks like a [C] vector), unless the first trace took over
        # a minute (a second would pass recognition's limit; such a gap is then refused by the binder, not misread).
        def has_one(c):
            return any(v == 1 for v in (c.get("axes") or {}).values())
        w2 = min(cands, key=lambda c: (has_one(c), size(c)))
        if w2 is not w and has_one(w) and not has_one(w2) and traced_s < 60:
            try:
                axes2 = task.resolve_axes(w2)
                if budget is None or _tensor_bytes(task, axes2) <= budget:
                    inputs2 = make_inputs(torch, task, w2, axes2, seed=1, device="cpu")
                    args2 = [inputs2[n] for n in task.inputs]
                    graph2 = graph_of(args2)
                    r2 = classify(graph2, n_tensor, len(args2), names=order)
                    if _cut_as_graph(r2):
                        w, args, graph, r = w2, args2, graph2, r2
            except Exception:  # noqa: BLE001 - the first trace stands
                pass
    if len(task.outputs) > 1 or _cut_as_graph(r):
        # several outputs, or one that no family and no line of stages reads: a chain whose stages write them
        # (multi_output; for one output, the graph cut of recognize_dag.py)
        inplace = _written_in_place(graph) if len(task.outputs) == 1 else None
        if inplace is not None:
            return dict(r, why=f"as a graph of stages: {inplace} writes in place into the value the reference returns "
                                "(its stages are read from the value's ops, which that write bypasses)")
        many = multi_output(graph, n_tensor, len(args), order, list(task.outputs))
        nums = [isinstance(v, (int, float)) and not isinstance(v, bool) for v in args]
        read = {n for st in many.get("stages") or [] for n in st.get("inputs", [])}
        if "why" not in many and any(num and name not in read for num, name in zip(nums, order)) and traced_s < 90:
            # (two more traces: not after a first one of over 90 s, which would pass recognition's 300 s limit)
            # A scalar input traced as the number it was (SOL's `grad * scaling`): traced again as a 0-d tensor it
            # stays an input that a stage reads by name; with the value and with one of the other sign, and only
            # when both read alike (a branch on the value in Python reads as two different graphs).
            def as_tensors(flip, which=None):
                return [torch.tensor(-float(v) - 1.5 if flip else float(v), dtype=torch.float32)
                        if num and (which is None or name in which) else v
                        for v, num, name in zip(args, nums, order)]

            def read_alike(which=None):   # the reading with those scalars as tensors, when both traces agree
                got = [multi_output(graph_of(as_tensors(flip, which)), len(args), len(args), order,
                                    list(task.outputs)) for flip in (False, True)]
                if "why" not in got[0] and json.dumps(got[0], sort_keys=True) == json.dumps(got[1], sort_keys=True):
                    return got[0]
                return None
            try:
                alike = read_alike()
                if alike is not None:
                    many = alike
                    # a scalar no stage reads in either trace (SOL L1 051's rms_norm_eps, taken and unused): no
                    # branch on it either, so the chain may leave it unread (khive.op.unread_scalars)
                    read = {n for st in many.get("stages") or [] for n in st.get("inputs", [])}
                    unread = [name for num, name in zip(nums, order) if num and name not in read]
                    if unread:
                        many["unread_scalars"] = unread
            except Exception:  # noqa: BLE001 - the code wants a number there: one scalar at a time below
                # Some op wants a Python number (a layer norm's eps): each unread scalar as a tensor alone, kept where
                # both traces read alike (SOL L2 035's GRN eps beside the layer norm's), while the traces are quick.
                which = set()
                for num, name in zip(nums, order):
                    if not num or name in read or traced_s * 2 * (len(which) + 1) > 60:
                        continue
                    try:
                        alike = read_alike(which | {name})
                    except Exception:  # noqa: BLE001 - this one stays a number
                        continue
                    if alike is not None:
                        which.add(name)
                        many = alike
        if "why" in many:
            return dict(r, why=many["why"])
        _scalar_eps(many.get("stages") or [], args, order)
        return dict(many, ops=r["ops"])
    numbers = [isinstance(v, (int, float)) and not isinstance(v, bool) for v in args]
    if any(numbers) and ((r.get("family") == "elementwise" and "expression" not in r)
                         or (r.get("op") == "gemm+epilogue" and "operands" in r)):
        # A scalar input was traced as the constant it was here: traced again as a 0-d tensor it stays an input, so
        # the expression names it instead of baking this workload's value in (a product's epilogue reads it as one
        # value for all of the output: SOL's `attn * scaling`). Traced with the workload's value and with one of the
        # other sign: a branch on the value (real tracing follows the one taken) gives two expressions, and then
        # none is written.
        def as_tensors(flip):   # the numbers as 0-d float32 tensors (flip: -v - 1.5 in place of v)
            return [torch.tensor(-float(v) - 1.5 if flip else float(v), dtype=torch.float32) if num else v
                    for v, num in zip(args, numbers)]
        try:
            graphs = [graph_of(as_tensors(flip)) for flip in (False, True)]
            got = [classify(g, len(args), len(args), names=order) for g in graphs]
            if got[0].get("expression") and got[0].get("expression") == got[1].get("expression") \
                    and (r.get("family") == "elementwise" or "operands" in got[0]):
                r, graph = got[0], graphs[0]
        except Exception:  # noqa: BLE001 - the code wants a number there: the first reading stands
            pass
    if "operands" in r:   # the graph's placeholders are run()'s arguments, in the task's input order
        names = {p: name for p, name in zip([n for n in graph.nodes if n.op == "placeholder"], order)}
        r["operands"] = _operand_names(r["operands"], names)
    _scalar_eps([r] + list(r.get("stages") or []), args, order)
    if r.get("family") == "attention":
        r.update(_attention(torch, task, fn, graph, w, cands, size, graph_of, budget))
    return r


def _attention(torch, task, fn, graph, w, cands, size, graph_of, budget, tries=4):
    """Whether the traced attention is exactly what the attention templates compute, and the facts to bind them by
    (recognize_attention.py), else why not. A workload whose shapes do not tell a fact (one head, one query, one KV
    head) is traced again on the next larger ones, up to `tries` in all."""
    from .inputs import make_inputs
    from .recognize_attention import read_attention
    left = sorted((c for c in cands if c is not w), key=size)
    for attempt in range(tries):
        try:
            got = read_attention(torch, graph, fn, task, w, budget=budget)
        except Exception as e:  # noqa: BLE001 - the task's code runs again there: say why the reading stopped
            return {"why": "reading the attention failed: " + (
                "out of memory" if _out_of_memory(e) else
                f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}")}
        if not got.pop("retry", False) or not left or attempt + 1 == tries:
            return got
        w = left.pop(0)
        try:
            axes = task.resolve_axes(w)
            if budget is not None and _tensor_bytes(task, axes) > budget:
                return got
            inputs = make_inputs(torch, task, w, axes, seed=1, device="cpu")
            graph = graph_of([inputs[n] for n in task.inputs])
        except Exception:  # noqa: BLE001 - the reading on the first workload stands, with its reason
            return got
    return got


def _tensor_bytes(task, axes):
    """The bytes of a workload's inputs and outputs."""
    sizes = {"float64": 8, "int64": 8, "float32": 4, "int32": 4, "float16": 2, "bfloat16": 2, "int16": 2}
    total = 0
    for group in (task.inputs, task.outputs):
        for spec in group.values():
            shape = task.shape(spec, axes)
            if shape is not None:
                total += math.prod(shape) * sizes.get(spec.get("dtype"), 1)
    return total


def _axes_text(w):
    return ", ".join(f"{k}={v}" for k, v in (w.get("axes") or {}).items()) or "no var axes"


def main(argv=None):
    import argparse

    from .task import load_task
    p = argparse.ArgumentParser(prog="python3 -m khive_torch.recognize", description=__doc__.split("\n")[0])
    p.add_argument("task_dir")
    p.add_argument("--write", action="store_true", help="record it in definition.json (op_type, khive.op)")
    a = p.parse_args(argv)
    import torch
    budget = memory_budget()
    limit_memory(budget)   # after torch's own mappings: the budget is for the trace
    task = load_task(a.task_dir)
    r = recognize(torch, task, budget=budget)
    print(json.dumps(r))
    if r.get("op") in ("unknown", None) or r.get("why"):
        print(f"recognize: {task.def_file}: {r.get('op') or 'unknown'}: {r.get('why', 'no op')}", file=sys.stderr)
    if a.write:
        write(task, r)
    return 0


def write(task, r):
    """op_type (when the definition has none and an op was recognised) and khive.op = {op, family, expression?, eps?,
    ..., ops} in definition.json; a reference that was not recognised is recorded as {op: "unknown", why}, so the
    tuner's refusal can say why."""
    import pathlib
    path = pathlib.Path(task.dir) / "definition.json"
    d = json.loads(path.read_text())
    k = d.setdefault("khive", {})
    # An op_type an earlier --write recorded (khive.op.wrote_op_type; before that flag, one equal to that run's
    # khive.op.op) is this module's, not the author's: it follows the new reading, so recognising again after an
    # upgrade does not keep the old op.
    earlier = k.get("op") if isinstance(k.get("op"), dict) else {}
    if d.get("op_type") and (earlier.get("wrote_op_type") or d.get("op_type") == earlier.get("op")):
        del d["op_type"]
    if r.get("op") in ("unknown", None):
        k["op"] = {"op": "unknown", "why": r.get("why") or "no op was recognised",
                   "from": "the PyTorch reference's ATen graph (khive_torch.recognize)"}
        path.write_text(json.dumps(d, indent=2) + "\n")
        return
    wrote = not d.get("op_type")
    if wrote:
        d["op_type"] = r["op"]
    k["op"] = {key: r[key] for key in ("op", "family", "expression", "eps", "dim", "flags", "operands", "conv", "pool", "norm",
                                       "stages", "views", "aliases", "select", "attention", "why",
                                       "unread_scalars")
               if key in r}
    if wrote:
        k["op"]["wrote_op_type"] = True
    k["op"]["ops"] = sorted(set(r.get("ops", [])))
    k["op"]["from"] = "the PyTorch reference's ATen graph (khive_torch.recognize)"
    path.write_text(json.dumps(d, indent=2) + "\n")


if __name__ == "__main__":
    sys.exit(main())
