"""Inputs for one workload, made as khive makes them, plus the two kinds only the PyTorch side can make.

    inputs = make_inputs(task, workload, axes, seed=1, device="cpu")   # name -> tensor or Python scalar

  random       the task's distribution (khive.inputs; default normal(0.5, 1) for floats, integers in
               [-8, 8] for integers, 0/1 for bool), from a torch.Generator seeded with `seed`
  scalar       the workload's value (a Python number, or a 0-D tensor for shape [])
  safetensors  the tensor `tensor_key` of the file (looked for from the task directory up to the dataset root)
  custom       the definition's custom_inputs_entrypoint(axes_and_scalars, device), as SOL-ExecBench calls it
"""
import pathlib

from .dtypes import is_integer, torch_dtype
from .task import TaskError

__all__ = ["make_inputs", "load_safetensors_input", "custom_inputs", "reference_namespace"]


def _distribution(task, name, dtype_name):
    d = dict((task.khive.get("inputs") or {}).get(name) or {})
    if dtype_name == "bool":
        d.setdefault("dist", "integers")
        d.setdefault("low", 0)
        d.setdefault("high", 1)
    elif is_integer(dtype_name):
        d.setdefault("dist", "integers")
        d.setdefault("low", -8)
        d.setdefault("high", 8)
    else:
        d.setdefault("dist", "normal")
    return d


def _random(torch, shape, dtype_name, dist, gen, device):
    dt = torch_dtype(torch, dtype_name)
    kind = dist["dist"]
    if kind == "constant":
        return torch.full(shape, dist["value"], dtype=dt, device=device)
    if kind == "integers":
        t = torch.randint(int(dist["low"]), int(dist["high"]) + 1, shape, generator=gen, dtype=torch.int64)
        return t.to(dt).to(device)
    if kind == "uniform":
        lo, hi = float(dist.get("low", -1.0)), float(dist.get("high", 1.0))
        t = torch.rand(shape, generator=gen, dtype=torch.float32) * (hi - lo) + lo
    else:
        t = torch.randn(shape, generator=gen, dtype=torch.float32) * float(dist.get("std", 1.0)) + float(dist.get("mean", 0.5))
    return t.to(dt).to(device)


def load_safetensors_input(task, name, spec, where):
    """The tensor spec["tensor_key"] of spec["path"], searched from the task directory upwards."""
    from safetensors.torch import load_file

    rel = pathlib.Path(spec.get("path", ""))
    for d in [task.dir, *task.dir.parents]:
        f = rel if rel.is_absolute() else d / rel
        if f.is_file():
            tensors = load_file(str(f))
            key = spec.get("tensor_key")
            if key not in tensors:
                raise TaskError(f"{where}: inputs.{name}.tensor_key: expected a key of {f.name} ({', '.join(sorted(tensors))}), got {key!r}")
            return tensors[key]
        if rel.is_absolute():
            break
    raise TaskError(f"{where}: inputs.{name}.path: expected an existing .safetensors file, got {str(rel)!r} (not found)")


def reference_namespace(task):
    """The definition's reference source executed in a fresh namespace (it is the task's, trusted, code)."""
    ns = {"__name__": "khive_reference"}
    try:
        exec(compile(task.reference, f"{task.def_file}:reference", "exec"), ns)
    except Exception as e:   # third-party source: report which file and why
        raise TaskError(f"{task.def_file}: reference: expected Python that runs, got {type(e).__name__}: {e}") from None
    return ns


def custom_inputs(torch, task, axes, scalars, device, ns=None):
    """SOL-ExecBench: custom_inputs_entrypoint(axes_and_scalars, device) -> {input name: tensor}."""
    ns = ns or reference_namespace(task)
    fn = ns.get(task.custom_entrypoint)
    if not callable(fn):
        raise TaskError(f"{task.def_file}: custom_inputs_entrypoint: expected a function of the reference, got {task.custom_entrypoint!r}")
    arg = dict(axes)
    arg.update(scalars)
    out = fn(arg, torch.device(device))
    if not isinstance(out, dict):
        raise TaskError(f"{task.def_file}: custom_inputs_entrypoint: expected a dict of tensors, got {type(out).__name__}")
    return out


def make_inputs(torch, task, workload, axes, seed=1, device="cpu", ns=None):
    where = f"{task.dir.name}/workload.jsonl: {workload.get('_where', workload.get('uuid'))}"
    gen = torch.Generator().manual_seed(int(seed))
    specs = workload.get("inputs") or {}
    out, scalars, custom = {}, {}, []
    for name, spec in task.inputs.items():
        src = specs.get(name) or {"type": "random"}
        kind = src.get("type", "random")
        shape = task.input_shape(name, axes)
        if kind == "scalar":
            v = src["value"]
            out[name] = v if shape is None else torch.tensor(v, dtype=torch_dtype(torch, spec["dtype"]), device=device)
            scalars[name] = v
        elif kind == "safetensors":
            out[name] = load_safetensors_input(task, name, src, where).to(device)
        elif kind == "custom":
            custom.append(name)
        elif kind == "random":
            dist = _distribution(task, name, spec["dtype"])
            if shape is None:
                v = _random(torch, (), spec["dtype"], dist, gen, "cpu").item()
                out[name] = v
                scalars[name] = v
            else:
                out[name] = _random(torch, shape, spec["dtype"], dist, gen, device)
        else:
            raise TaskError(f"{where}: inputs.{name}.type: expected random, scalar, safetensors or custom, got {kind!r}")
    if custom:
        made = custom_inputs(torch, task, axes, scalars, device, ns)
        for name in custom:
            if name not in made:
                raise TaskError(f"{task.def_file}: custom_inputs_entrypoint: expected it to make input {name!r}, got {sorted(made)}")
            out[name] = made[name]
    return {name: out[name] for name in task.inputs}
