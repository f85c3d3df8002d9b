"""The PyTorch reference as the correctness oracle (issue 14): run(...) of a definition, outputs in order.

    outs = run_reference(task_dir_or_task, axes, inputs)     # [tensor, ...] in the task's output order and dtypes

The definition's `reference` (SOL-ExecBench / FlashInfer-Bench: Python with a top-level run(*inputs)) is
called with the inputs in definition order. Value-returning style (a tensor, or a tuple/list in output
order) and destination-passing style (run(*inputs, *outputs) writing preallocated outputs and returning
None) are both accepted. Each output must have the declared shape; its dtype is converted to the declared
one when they differ (the reference is authoritative about values, the task about storage). Errors raise
TaskError naming the file and field.
"""
from .dtypes import torch_dtype
from .inputs import reference_namespace
from .task import TaskError, load_task

__all__ = ["run_reference", "call_reference", "load_reference"]


def load_reference(task):
    ns = reference_namespace(task)
    fn = ns.get("run")
    if not callable(fn):
        raise TaskError(f"{task.def_file}: reference: expected a top-level function run(...), got none")
    return ns, fn


def _as_list(result, n):
    if isinstance(result, (tuple, list)):
        return list(result)
    if isinstance(result, dict):
        return result
    return [result] if n == 1 else None


def run_reference(torch, task, axes, inputs, device="cpu", fn=None):
    if not hasattr(task, "outputs"):
        task = load_task(task)
    if fn is None:
        _, fn = load_reference(task)
    args = [inputs[name] for name in task.inputs]
    outputs = [(name, task.outputs[name]["dtype"], task.output_shape(name, axes)) for name in task.outputs]
    return call_reference(torch, task, fn, args, outputs, device)


def call_reference(torch, task, fn, args, outputs, device="cpu"):
    """run(*args) with the outputs given as (name, dtype name, shape or None), in the task's order: the tensors,
    converted to the declared dtypes, contiguous, shapes checked (the judge's reference executor calls this with the
    shapes of its layout)."""
    names = [name for name, _, _ in outputs]
    with torch.no_grad():
        result = fn(*args)
        if result is None:   # destination-passing style: preallocated outputs written in place
            outs = []
            for name, dtype, shape in outputs:
                outs.append(torch.empty(shape or (), dtype=torch_dtype(torch, dtype), device=device))
            fn(*args, *outs)
            result = outs
    got = _as_list(result, len(names))
    if isinstance(got, dict):
        got = [got.get(n) for n in names]
    if got is None or len(got) != len(names):
        count = "one value" if got is None else f"{len(got)} values"
        raise TaskError(f"{task.def_file}: reference: expected run() to return {len(names)} output(s) ({', '.join(names)}), got {count}")
    outs = []
    for (name, dtype, shape), value in zip(outputs, got):
        dt = torch_dtype(torch, dtype, f"{task.def_file}: outputs.{name}.dtype")
        if not torch.is_tensor(value):
            value = torch.tensor(value, dtype=dt)
        want = () if shape is None else tuple(shape)
        if tuple(value.shape) != want:
            raise TaskError(f"{task.def_file}: outputs.{name}.shape: expected {list(want)} from the axes, got {list(value.shape)} from the reference")
        outs.append(value.to(dt).contiguous())
    return outs
