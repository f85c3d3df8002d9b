"""A khive task directory read the way khive reads it (docs/task-format.md), for the PyTorch side.

    task = load_task("tasks/sol/rmsnorm")
    w = task.workloads[0]
    axes = task.resolve_axes(w)              # const + the workload's var + expr axes
    task.input_shape("x", axes)             # (T, H)

Only what the PyTorch oracle needs is read here; khive's loader (src/khive/task/load.cpp) validates the rest.
Errors are TaskError with "file: field: message".
"""
import json
import pathlib

from .constraints import ConstraintError, evaluate_constraint, evaluate_expression

__all__ = ["TaskError", "Task", "load_task"]


class TaskError(ValueError):
    """A task file this side cannot use; the message names the file and the field."""


class Task:
    def __init__(self, directory, definition, workloads):
        self.dir = pathlib.Path(directory)
        self.definition = definition
        self.workloads = workloads
        self.name = definition.get("name", self.dir.name)
        self.axes = definition.get("axes") or {}
        self.inputs = definition.get("inputs") or {}
        self.outputs = definition.get("outputs") or {}
        self.reference = definition.get("reference") or ""
        self.custom_entrypoint = definition.get("custom_inputs_entrypoint") or ""
        self.khive = definition.get("khive") or {}
        self.def_file = f"{self.dir.name}/definition.json"

    @property
    def constraints(self):
        return list(self.definition.get("constraints") or [])

    def resolve_axes(self, workload):
        """Axis name -> int for one workload (Python arithmetic, as SOL-ExecBench resolves expr axes)."""
        values = {}
        pending = []
        for name, spec in self.axes.items():
            kind = spec.get("type")
            if kind == "const":
                values[name] = int(spec["value"])
            elif kind == "var":
                if name not in workload.get("axes", {}):
                    raise TaskError(f"{self.dir.name}/workload.jsonl: {workload.get('_where', 'workload')}: axes.{name}: "
                                    f"expected a value for var axis {name}, got none")
                values[name] = int(workload["axes"][name])
            elif kind == "expr":
                pending.append((name, spec["expression"]))
        for _ in range(len(pending) + 1):
            left = []
            for name, expr in pending:
                try:
                    v = evaluate_expression(expr, values, f"{self.def_file}: axes.{name}.expression")
                except ConstraintError as e:
                    if "unknown name" in str(e):
                        left.append((name, expr))
                        continue
                    raise TaskError(str(e)) from None
                if float(v) != int(v):
                    raise TaskError(f"{self.def_file}: axes.{name}.expression: expected an integer, got {v}")
                values[name] = int(v)
            pending = left
            if not pending:
                break
        if pending:
            raise TaskError(f"{self.def_file}: axes.{pending[0][0]}.expression: could not be resolved")
        return values

    def shape(self, spec, axes):
        if spec.get("shape") is None:
            return None
        return tuple(int(d) if str(d).isdigit() else axes[d] for d in spec["shape"])

    def input_shape(self, name, axes):
        return self.shape(self.inputs[name], axes)

    def output_shape(self, name, axes):
        return self.shape(self.outputs[name], axes)

    def check_constraints(self, axes, inputs):
        """Every constraint (axis-only and data) on resolved axes and made inputs; raises TaskError."""
        names = dict(axes)
        names.update(inputs)
        for i, text in enumerate(self.constraints):
            where = f"{self.def_file}: constraints[{i}]"
            try:
                ok = evaluate_constraint(text, names, where)
            except ConstraintError as e:
                raise TaskError(str(e)) from None
            if not ok:
                raise TaskError(f"{where}: expected {text!r} to hold, got false")


def _read_workloads(task_dir):
    p = pathlib.Path(task_dir) / "workload.jsonl"
    out = []
    if not p.is_file():
        return out
    for lineno, line in enumerate(p.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            j = json.loads(line)
        except json.JSONDecodeError as e:
            raise TaskError(f"{p.parent.name}/workload.jsonl: line {lineno}: expected valid JSON, got {e.msg}") from None
        if isinstance(j, dict) and "workload" in j and "axes" not in j and isinstance(j["workload"], dict):
            j = j["workload"]   # a FlashInfer Trace record
        j = dict(j)
        j.setdefault("uuid", f"w{lineno}")
        j["_where"] = f"line {lineno}"
        out.append(j)
    return out


def load_task(task_dir):
    task_dir = pathlib.Path(task_dir)
    p = task_dir / "definition.json"
    try:
        definition = json.loads(p.read_text())
    except FileNotFoundError:
        raise TaskError(f"{task_dir.name}/definition.json: (file): expected a definition.json file, got none found") from None
    except json.JSONDecodeError as e:
        raise TaskError(f"{task_dir.name}/definition.json: (syntax): expected valid JSON, got {e.msg}") from None
    if not isinstance(definition, dict):
        raise TaskError(f"{task_dir.name}/definition.json: (root): expected a JSON object")
    return Task(task_dir, definition, _read_workloads(task_dir))
