"""KernelBench problems (levels 1-3: Model, get_inputs, get_init_inputs) as khive task directories.

    import_problem(torch, "KernelBench/level1/19_ReLU.py", "tasks/kb/kb1_019_relu")

What the task holds (docs/task-format.md, "Imported KernelBench problems"):
  axes        every module-level integer that get_inputs uses and get_init_inputs does not is a var axis
              (batch_size, dim, ...) when the input and output shapes follow it (found by changing it and
              looking at the shapes on the meta device: nothing is allocated at the file's sizes); output
              dimensions that follow an axis by (a*X + b) // s, or a product of axes, become expr axes; the
              rest are fixed sizes (literal dimensions)
  inputs      get_inputs()'s tensors (forward's parameter names), then the model's parameters as inputs
              ("conv.weight" -> conv_weight): a native kernel receives its weights like any other input
  outputs     forward's result(s): output (or output0, output1, ...)
  reference   the problem file verbatim, then a run(*inputs) that calls Model(*init_inputs) with the given
              parameters (torch.func.functional_call): the PyTorch oracle
  workloads   the file's sizes (perf; CUDA only when larger than the CPU limit), a CPU-sized perf shape,
              and two small odd correctness shapes found by probing
  khive       distributions from the file's factories (torch.rand -> uniform(0, 1), randn -> normal(0, 1),
              randint(lo, hi) -> integers(lo, hi - 1), else the observed range), parameters uniform over
              the initialised values, KernelBench's tolerance (atol = rtol = 1e-2, every element), and
              khive.source (kernelbench file, init inputs, parameter names) for `khive export --solution`
Raises ImportFailure with the reason when a problem cannot be imported.
"""
import inspect
import hashlib
import json
import math
import pathlib
import re
import shutil

__all__ = ["ImportFailure", "import_problem", "probe_problem"]

CPU_ELEMENTS = 1 << 22          # a CPU-sized workload: at most this many elements in all tensors
SMALL_CANDIDATES = [3, 5, 7, 13, 17, 33, 67, 131, 257]
RESERVED = {"and", "or", "not", "True", "False", "stream", "int", "float", "double", "char", "long", "short", "bool",
            "auto", "const", "new", "delete", "default", "class", "struct", "union", "enum", "template", "this",
            "switch", "case", "return", "for", "while", "do", "if", "else", "void", "signed", "unsigned", "static",
            "register", "extern", "volatile", "inline", "operator", "private", "public", "protected", "friend",
            "virtual", "typename", "namespace", "using", "try", "catch", "throw", "goto", "break", "continue",
            "sizeof", "typedef", "explicit", "export", "mutable", "asm", "true", "false", "nullptr", "bitand",
            "bitor", "compl", "xor", "not_eq", "and_eq", "or_eq", "xor_eq", "alignas", "alignof", "concept",
            "requires", "decltype", "noexcept", "static_assert", "thread_local", "wchar_t", "char8_t", "char16_t",
            "char32_t", "consteval", "constexpr", "constinit", "const_cast", "dynamic_cast", "reinterpret_cast",
            "static_cast", "typeid", "co_await", "co_return", "co_yield"}
DTYPE_NAMES = {"float64": "float64", "float32": "float32", "float16": "float16", "bfloat16": "bfloat16",
               "int64": "int64", "int32": "int32", "int16": "int16", "int8": "int8", "bool": "bool",
               "uint8": None}


class ImportFailure(Exception):
    """Why a problem could not be imported (one line)."""


# ------------------------------------------------------------------------------------------ the module

def _load(path):
    src = pathlib.Path(path).read_text()
    ns = {"__name__": "khive_kernelbench_problem", "__file__": str(path)}
    try:
        exec(compile(src, str(path), "exec"), ns)
    except Exception as e:
        raise ImportFailure(f"the file does not run: {type(e).__name__}: {e}") from None
    for name in ("Model", "get_inputs", "get_init_inputs"):
        if name not in ns:
            raise ImportFailure(f"the file defines no {name}")
    return src, ns


def _globals_used(fn, ns):
    """Module-level names a function reads (its code's co_names, and those of nested code objects)."""
    names, stack = set(), [fn.__code__]
    while stack:
        code = stack.pop()
        names.update(code.co_names)
        stack.extend(c for c in code.co_consts if hasattr(c, "co_names"))
    return {n for n in names if n in ns}


def _int_globals(ns):
    """Module-level ints, and the int elements of module-level tuples as "name[i]" (input_shape = (4096,))."""
    out = {}
    for k, v in ns.items():
        if k.startswith("_"):
            continue
        if type(v) is int:
            out[k] = v
        elif isinstance(v, tuple) and v and all(type(x) is int for x in v):
            for i, x in enumerate(v):
                out[f"{k}[{i}]"] = x
    return out


def _ident(name, taken):
    n = re.sub(r"[^A-Za-z0-9_]", "_", name)
    if not n or n[0].isdigit():
        n = "t_" + n
    if n in RESERVED:
        n += "_"
    while n in taken:
        n += "_"
    taken.add(n)
    return n


# ---------------------------------------------------------------------------------------- probing

class _Factories:
    """Records which torch factory made each tensor get_inputs returns (by identity)."""

    def __init__(self, torch):
        self.torch = torch
        self.made = {}
        self.saved = {}

    def __enter__(self):
        t = self.torch
        for name in ("rand", "randn", "randint", "rand_like", "randn_like", "zeros", "ones", "empty"):
            orig = getattr(t, name)
            self.saved[name] = orig

            def wrapper(*a, _orig=orig, _name=name, **k):
                r = _orig(*a, **k)
                self.made[id(r)] = (_name, a, k)
                return r
            setattr(t, name, wrapper)
        return self

    def __exit__(self, *exc):
        for name, orig in self.saved.items():
            setattr(self.torch, name, orig)


def _call_inputs(torch, ns, device, record=None):
    ctx = torch.device(device)
    with ctx:
        if record is not None:
            with record:
                return list(ns["get_inputs"]())
        return list(ns["get_inputs"]())


TIES = "__khive_ties__"   # in the problem's namespace: axis name -> the globals it stands for ("shape[0]" = a tuple element)


def _members(ns, name):
    return ns.get(TIES, {}).get(name, [name])


def _set(ns, key, v):
    if "[" in key:
        base, i = key[:-1].split("[")
        t = list(ns[base])
        t[int(i)] = v
        ns[base] = tuple(t)
    else:
        ns[key] = v


def _with(ns, values):
    """Context that sets module globals (each axis and the globals tied to it) and restores them."""
    class Ctx:
        def __enter__(self):
            self.old = {}
            for name, v in values.items():
                for m in _members(ns, name):
                    base = m.split("[")[0]
                    self.old.setdefault(base, ns[base])
                    _set(ns, m, v)

        def __exit__(self, *exc):
            ns.update(self.old)
    return Ctx()


def _meta_model(torch, ns, init):
    with torch.device("meta"):
        return ns["Model"](*init)


def _shapes(torch, ns, model, values):
    """Input and output shapes (and dtypes) on the meta device with these globals; None when it fails."""
    with _with(ns, values):
        try:
            ins = _call_inputs(torch, ns, "meta")
            with torch.no_grad():
                out = model(*ins)
        except Exception:
            return None
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    if not all(torch.is_tensor(o) for o in outs):
        return None
    return ([tuple(x.shape) if torch.is_tensor(x) else None for x in ins], [tuple(o.shape) for o in outs],
            [x.dtype if torch.is_tensor(x) else type(x).__name__ for x in ins], [o.dtype for o in outs])


def _fit(dim_values, axis_values):
    """An expression for a dimension seen at several probes: a var axis (a*X + b) // s, a product of axes,
    or a constant; None when nothing fits. dim_values[i] and axis_values[i] (dict) are one probe."""
    if len(set(dim_values)) == 1:
        return str(dim_values[0])
    names = list(axis_values[0])
    for n in names:
        xs = [a[n] for a in axis_values]
        if all(d == x for d, x in zip(dim_values, xs)):
            return n
    for n in names:
        xs = [a[n] for a in axis_values]
        for s in range(1, 17):
            for a in (1, 2, 3, 4):
                lo = max(d * s - a * x for d, x in zip(dim_values, xs))
                hi = min(d * s - a * x + s - 1 for d, x in zip(dim_values, xs))
                if lo <= hi:
                    b0 = 0 if lo <= 0 <= hi else (lo if abs(lo) <= abs(hi) else hi)
                    return _affine_text(n, a, b0, s)
    for i, n in enumerate(names):
        for m in names[i + 1:]:
            for c in (1, 2, 3, 4):
                if all(d == c * a[n] * a[m] for d, a in zip(dim_values, axis_values)):
                    return f"{c} * {n} * {m}" if c != 1 else f"{n} * {m}"
    return None


def _affine_text(n, a, b, s):
    t = n if a == 1 else f"{a} * {n}"
    if b:
        t = f"{t} {'+' if b > 0 else '-'} {abs(b)}"
    if s != 1:
        t = f"({t}) // {s}" if " " in t else f"{t} // {s}"
    return t


def probe_problem(torch, path):
    """Everything import_problem needs to know about a problem, found without allocating its tensors."""
    src, ns = _load(path)
    init = list(ns["get_init_inputs"]())
    ints = _int_globals(ns)
    init_names = _globals_used(ns["get_init_inputs"], ns)
    used = _globals_used(ns["get_inputs"], ns)
    candidates = [n for n in sorted(ints) if n.split("[")[0] in used and n.split("[")[0] not in init_names]
    try:
        model = _meta_model(torch, ns, init)
    except Exception as e:
        raise ImportFailure(f"Model(*get_init_inputs()) fails on the meta device: {type(e).__name__}: {e}") from None
    base = _shapes(torch, ns, model, {})
    if base is None:
        raise ImportFailure("forward(*get_inputs()) fails on the meta device (an op without a meta kernel, or a non-tensor output)")
    var = _find_var_axes(torch, ns, model, candidates, ints, base)
    return src, ns, init, ints, var, base, model


def _probe_values(v):
    # v and four more: consecutive values cover every residue of a stride up to 4, so (a*X + b) // s is pinned down
    return [v, v + 1, v + 2, v + 3, v + 5] if v > 0 else [v]


def _small_probes(v):
    """Small values too, so that a fitted (a*X + b) // s also holds at the small correctness shapes (a pooling with
    stride 11 looks constant over v..v+5)."""
    return [c for c in (3, 5, 7, 13, 17, 33, 67) if c < v]


def _find_var_axes(torch, ns, model, candidates, ints, base):
    """Axes whose change moves only dimensions we can express; each tried alone, then tied to the globals of the same
    value when it cannot change alone (batch_size == input_shape[0] in a loss: one axis for both)."""
    var, taken = [], set()
    ns[TIES] = {}
    for name in candidates:
        if name in taken:
            continue
        v = ints[name]
        if v <= 0:
            continue
        group = [name]
        probes = [_shapes(torch, ns, model, {name: v2}) for v2 in _probe_values(v)]
        if any(p is None for p in probes):
            group = [c for c in candidates if ints[c] == v and c not in taken]
            ns[TIES][name] = group
            probes = [_shapes(torch, ns, model, {name: v2}) for v2 in _probe_values(v)]
            if len(group) == 1 or any(p is None for p in probes):
                del ns[TIES][name]
                continue
        if all(p[0] == base[0] and p[1] == base[1] for p in probes):
            ns[TIES].pop(name, None)
            continue   # no shape follows it
        var.append(name)
        taken.update(group)
    return var


def _axis_name(name):
    """A var axis's name in the task: the global's, or for a tuple element "input_shape[0]" -> "input_shape_0"."""
    return name.replace("[", "_").replace("]", "")


def _dim_exprs(torch, ns, model, var, ints, base):
    """Per input and output dimension: an axis name, an expression or a literal; None if one cannot be fit."""
    probes = [({}, base)]
    for name in var:
        for v2 in _probe_values(ints[name])[1:] + _small_probes(ints[name]):
            s = _shapes(torch, ns, model, {name: v2})
            if s is None:
                if v2 > ints[name]:
                    return None
                continue   # a small value the model refuses (a kernel larger than the input): not a probe
            probes.append(({name: v2}, s))
    axis_values = [{_axis_name(n): over.get(n, ints[n]) for n in var} for over, _ in probes]
    result = []
    for which in (0, 1):
        per_tensor = []
        for ti, shape in enumerate(base[which]):
            if shape is None:
                per_tensor.append(None)
                continue
            dims = []
            for di in range(len(shape)):
                seen = [p[1][which][ti][di] for p in probes]
                e = _fit(seen, axis_values)
                if e is None:
                    return None
                dims.append(e)
            per_tensor.append(dims)
        result.append(per_tensor)
    return result


def _settle_var_axes(torch, ns, model, var, ints, base):
    """The largest set of var axes whose dimensions can all be expressed (frozen otherwise)."""
    dims = _dim_exprs(torch, ns, model, var, ints, base)
    if dims is not None:
        return var, dims
    alone = [v for v in var if _dim_exprs(torch, ns, model, [v], ints, base) is not None]
    dims = _dim_exprs(torch, ns, model, alone, ints, base)
    if dims is not None:
        return alone, dims
    return [], _dim_exprs(torch, ns, model, [], ints, base)


def _elements(shapes):
    return sum(math.prod(s) for s in shapes if s is not None)


def _small_values(torch, ns, model, var, ints, avoid=()):
    """Odd values, smallest first, per var axis (others at theirs), keeping forward working on meta."""
    values = {}
    for name in var:
        for c in SMALL_CANDIDATES:
            if c >= ints[name] or c in avoid:
                continue
            trial = dict(values)
            trial[name] = c
            if _shapes(torch, ns, model, trial) is not None:
                values[name] = c
                break
        else:
            values[name] = ints[name]
    return values


def _cpu_values(torch, ns, model, var, ints):
    """The file's sizes halved (largest axis first) until every tensor together holds <= CPU_ELEMENTS."""
    values = {n: ints[n] for n in var}
    for _ in range(64):
        s = _shapes(torch, ns, model, values)
        if s is None:
            return None
        if _elements(s[0] + s[1]) <= CPU_ELEMENTS:
            return values
        big = max(var, key=lambda n: values[n], default=None)
        if big is None or values[big] <= 1:
            return None
        values[big] = max(1, values[big] // 2)
    return None


# ------------------------------------------------------------------------------------------ writing

def _dtype_name(torch, dt, where):
    name = str(dt).replace("torch.", "")
    if DTYPE_NAMES.get(name) is None:
        raise ImportFailure(f"{where} has dtype {name}, which a task cannot declare")
    return name


def _distribution(torch, tensor, origin):
    """khive.inputs entry for one input from the factory that made it, else from its observed values."""
    if origin is not None:
        fn, a, k = origin
        if fn in ("rand", "rand_like"):
            return {"dist": "uniform", "low": 0.0, "high": 1.0}
        if fn in ("randn", "randn_like"):
            return {"dist": "normal", "mean": 0.0, "std": 1.0}
        if fn == "randint":
            ints = [x for x in a if isinstance(x, int)]
            lo, hi = (0, ints[0]) if len(ints) == 1 else (ints[0], ints[1])
            return {"dist": "integers", "low": lo, "high": hi - 1}
        if fn in ("zeros", "ones"):
            return {"dist": "constant", "value": 0.0 if fn == "zeros" else 1.0}
    x = tensor.detach().to("cpu")
    if x.numel() == 0:
        return None
    if not x.is_floating_point():
        lo, hi = int(x.min()), int(x.max())
        return {"dist": "integers", "low": lo, "high": hi} if x.dtype != torch.bool else None
    lo, hi = float(x.min()), float(x.max())
    if hi - lo < 1e-6:
        lo, hi = lo - 0.5, hi + 0.5
    return {"dist": "uniform", "low": lo, "high": hi}


def _param_distribution(p):
    lo, hi = float(p.min()), float(p.max())
    if hi - lo < 1e-6:   # ones / zeros (norm weights, biases): vary them, or a kernel could ignore them
        lo, hi = lo - 0.5, hi + 0.5
    return {"dist": "uniform", "low": lo, "high": hi}


RUN_TEMPLATE = '''

# ---- khive: this KernelBench problem as a definition's run(); generated by `khive import kernelbench` ----
_KHIVE_INIT_INPUTS = {init!r}
_KHIVE_PARAMETERS = {params!r}
_khive_models = {{}}


def run({args}):
    import torch as _torch
    _inputs = [{inputs}]
    _values = [{param_args}]
    _device = next((t.device for t in _inputs + _values if _torch.is_tensor(t)), _torch.device("cpu"))
    if str(_device) not in _khive_models:
        _khive_models[str(_device)] = Model(*_KHIVE_INIT_INPUTS).to(_device)
    _model = _khive_models[str(_device)]
    _params = dict(zip(_KHIVE_PARAMETERS, _values))
    return _torch.func.functional_call(_model, _params, tuple(_inputs))
'''


def _freeze_value_bounds(torch, ns, var, ints):
    """An axis that also bounds random values (randint(0, num_classes, ...) for class targets) stays fixed: the
    task's distribution cannot follow it, and targets past a smaller axis would be out of range."""
    record = _Factories(torch)
    try:
        _call_inputs(torch, ns, "meta", record)
    except Exception:
        return var
    bounds = set()
    for fn, a, k in record.made.values():
        if fn == "randint":
            bounds.update(x for x in list(a) + list(k.values()) if type(x) is int)
    return [v for v in var if ints[v] not in bounds]


def task_name(path, level=None):
    """The task's name as `khive import kernelbench` names its folder: "kb1_019_relu" for level 1's 19_ReLU.py."""
    stem = pathlib.Path(path).stem
    m = re.fullmatch(r"(\d+)_(.*)", stem)
    number, slug = (int(m.group(1)), m.group(2)) if m else (0, stem)
    clean = re.sub(r"_+", "_", re.sub(r"[^a-z0-9]", "_", slug.lower())).rstrip("_")
    return f"kb{level or 0}_{number:03d}_{clean}"


def import_problem(torch, path, out_dir, level=None, problem_id=None, task=None):
    """Writes out_dir/{definition.json, workload.jsonl, kernelbench.py}. Returns the definition."""
    path = pathlib.Path(path)
    src, ns, init, ints, var, base, model = probe_problem(torch, path)
    var = _freeze_value_bounds(torch, ns, var, ints)
    var, dims = _settle_var_axes(torch, ns, model, var, ints, base)
    if dims is None:
        raise ImportFailure("the shapes at the file's sizes cannot be described (a dimension follows no axis)")
    in_shapes, out_shapes, in_dtypes, out_dtypes = base

    taken = {_axis_name(n) for n in var}
    sig = inspect.signature(ns["Model"].forward)
    fwd = [p.name for p in list(sig.parameters.values())[1:] if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    in_names = [_ident(fwd[i] if i < len(fwd) else f"input{i}", taken) for i in range(len(in_shapes))]
    params = [(n, p) for n, p in model.named_parameters()]
    param_names = [_ident(n.replace(".", "_"), taken) for n, _ in params]
    out_names = [_ident("output" if len(out_shapes) == 1 else f"output{i}", taken) for i in range(len(out_shapes))]

    axes = {_axis_name(n): {"type": "var", "description": f"{' = '.join(_members(ns, n))} in the KernelBench file (file value {ints[n]})"}
            for n in var}
    expr_count = [0]

    def dim_name(e):
        if e.isdigit() or e in axes:
            return e
        for n, spec in axes.items():
            if spec.get("expression") == e:
                return n
        name = _ident(f"d{expr_count[0]}", taken)
        expr_count[0] += 1
        axes[name] = {"type": "expr", "expression": e}
        return name

    inputs, outputs, scalars = {}, {}, {}
    for i, name in enumerate(in_names):
        if in_shapes[i] is None:   # a Python number: a scalar input with the file's value
            kind = in_dtypes[i]
            inputs[name] = {"shape": None, "dtype": "int64" if kind == "int" else ("bool" if kind == "bool" else "float32")}
            continue
        inputs[name] = {"shape": [dim_name(e) for e in dims[0][i]], "dtype": _dtype_name(torch, in_dtypes[i], f"input {name}")}
    for name, (pname, p) in zip(param_names, params):
        inputs[name] = {"shape": [str(d) for d in p.shape], "dtype": _dtype_name(torch, p.dtype, f"parameter {pname}"),
                        "description": f"Model parameter {pname}"}
    for i, name in enumerate(out_names):
        outputs[name] = {"shape": [dim_name(e) for e in dims[1][i]], "dtype": _dtype_name(torch, out_dtypes[i], f"output {name}")}

    # Distributions: get_inputs at small sizes on the CPU, factories recorded; parameters from a real model.
    small = _small_values(torch, ns, model, var, ints)
    small2 = _small_values(torch, ns, model, var, ints, avoid=set(small.values()))
    record = _Factories(torch)
    with _with(ns, small):
        try:
            real = _call_inputs(torch, ns, "cpu", record)
        except Exception as e:
            raise ImportFailure(f"get_inputs() fails at small sizes {small}: {type(e).__name__}: {e}") from None
    dists = {}
    for name, x in zip(in_names, real):
        if torch.is_tensor(x):
            d = _distribution(torch, x, record.made.get(id(x)))
            if d is not None:
                dists[name] = d
        else:
            scalars[name] = x
    try:
        torch.manual_seed(0)
        real_model = ns["Model"](*init)
    except Exception as e:
        raise ImportFailure(f"Model(*get_init_inputs()) fails on the CPU: {type(e).__name__}: {e}") from None
    for name, (_, p) in zip(param_names, real_model.named_parameters()):
        dists[name] = _param_distribution(p.detach())

    level_s = f"level {level}" if level else "KernelBench"
    title = path.stem
    definition = {
        "name": task or task_name(path, level),   # the folder's name too (issue 24: kb1_88_relu in kb1_088_relu/)
        "description": f"KernelBench {level_s} problem {title} ({path.name}), imported by khive: inputs from get_inputs(), "
                       f"the model's parameters as inputs, forward's result as output(s); the PyTorch Model is the reference.",
        "op_type": "kernelbench",
        "tags": ["kernelbench"] + ([f"level:{level}"] if level else []),
        "axes": axes,
        "inputs": inputs,
        "outputs": outputs,
        "reference": src.rstrip() + "\n" + RUN_TEMPLATE.format(
            init=init, params=[n for n, _ in params], args=", ".join(in_names + param_names),
            inputs=", ".join(in_names), param_args=", ".join(param_names)),
        "khive": {
            "inputs": dists,
            "source": {"kind": "kernelbench", "file": "kernelbench.py", "level": level, "problem": problem_id,
                       "init_inputs": init, "forward_inputs": in_names,
                       "parameters": {n: pn for n, (pn, _) in zip(param_names, params)}},
        },
    }
    # What was imported, so that khive refuses a changed reference or problem file later (task/load.cpp).
    definition["khive"]["source"]["sha256"] = _sha256(path.read_bytes())
    definition["khive"]["source"]["reference_sha256"] = _sha256(definition["reference"].encode())
    definition["khive"]["tolerance"] = {n: {"atol": 1e-2, "rtol": 1e-2} for n, dt in zip(out_names, out_dtypes) if dt.is_floating_point}
    if not definition["khive"]["tolerance"]:
        del definition["khive"]["tolerance"]

    workloads = _workloads(torch, ns, model, var, ints, small, small2, scalars, list(definition["inputs"]))
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "definition.json").write_text(json.dumps(definition, indent=2) + "\n")
    (out_dir / "workload.jsonl").write_text("".join(json.dumps(w) + "\n" for w in workloads))
    shutil.copyfile(path, out_dir / "kernelbench.py")
    return definition


def _sha256(data):
    return hashlib.sha256(data).hexdigest()


def _workloads(torch, ns, model, var, ints, small, small2, scalars, input_names=()):
    def line(uuid, values, role, backends=None):
        w = {"uuid": uuid, "axes": {_axis_name(n): values[n] for n in var}}
        # Every input named, as the upstream Workload models require (SOL-ExecBench, FlashInfer-Bench): scalars with
        # their value, tensors drawn at random from the definition's distributions (khive.inputs).
        named = {n: {"type": "random"} for n in input_names if n not in scalars}
        named.update({n: {"type": "scalar", "value": v} for n, v in scalars.items()})
        if named:
            w["inputs"] = {n: named[n] for n in list(input_names) + [m for m in scalars if m not in input_names]}
        k = {"role": role}
        if backends:
            k["backends"] = backends
        w["khive"] = k
        return w

    out = []
    file_values = {n: ints[n] for n in var}
    shapes = _shapes(torch, ns, model, file_values)
    file_fits_cpu = shapes is not None and _elements(shapes[0] + shapes[1]) <= CPU_ELEMENTS
    if var:
        out.append(line("odd-small", small, "correctness"))
        if small2 != small:
            out.append(line("odd-small-2", small2, "correctness"))
        cpu = _cpu_values(torch, ns, model, var, ints)
        if file_fits_cpu:
            out.append(line("file-size", file_values, "both"))
        else:
            out.append(line("file-size", file_values, "perf", ["cuda"]))
            if cpu is not None and cpu != small:
                out.append(line("cpu-perf", cpu, "both", ["cpu"]))
            else:
                out[0]["khive"]["role"] = "both"
    else:
        out.append(line("file-size", file_values, "both", None if file_fits_cpu else ["cuda"]))
    return out
