"""Constraints evaluated safely: the subset of Python that FlashInfer-Bench / SOL-ExecBench definitions use.

    evaluate_constraint("num_kv_indices == kv_indptr[-1].item()", names, where="gqa/definition.json: constraints[1]")

`names` maps axis names to ints and input names to tensors or scalars. The text is parsed with `ast` and
interpreted node by node (never passed to eval): numbers, names from `names`, + - * / // % ** and unary
minus, comparisons (chained), and/or/not, indexing and slicing, `.item()`, `.shape`, `.numel()`, and the
functions len, min, max, abs, int. Anything else raises ConstraintError naming `where` (file and field) and
what was refused, e.g. "gqa/definition.json: constraints[0]: 'open' is not allowed (...)".
"""
import ast
import operator

__all__ = ["ConstraintError", "evaluate_constraint", "evaluate_expression", "check_constraint"]

ALLOWED_SUMMARY = ("numbers, axis and input names, + - * / // % **, comparisons, and/or/not, indexing, "
                   ".item(), .shape, .numel(), len/min/max/abs/int")

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
_CMPOPS = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
           ast.Gt: operator.gt, ast.GtE: operator.ge}
_FUNCS = {"len": len, "min": min, "max": max, "abs": abs, "int": int}
_METHODS = ("item", "numel")


class ConstraintError(ValueError):
    """A constraint outside the safe subset, naming an unknown name, or failing to evaluate."""


def _scalar(v):
    """A one-element tensor compares and computes as its Python value."""
    if hasattr(v, "numel") and hasattr(v, "item") and not isinstance(v, (int, float, bool)):
        if v.numel() == 1:
            return v.item()
    return v


class _Interpreter:
    def __init__(self, names, where):
        self.names = names
        self.where = where

    def refuse(self, node, what):
        col = getattr(node, "col_offset", 0)
        raise ConstraintError(f"{self.where}: {what} at {col} is not allowed (only {ALLOWED_SUMMARY})")

    def eval(self, node):
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            self.refuse(node, type(node).__name__)
        return method(node)

    def _Expression(self, node):
        return self.eval(node.body)

    def _Constant(self, node):
        if isinstance(node.value, bool) or isinstance(node.value, (int, float)):
            return node.value
        self.refuse(node, f"the constant {node.value!r}")

    def _Name(self, node):
        if node.id in ("True", "False"):
            return node.id == "True"
        if node.id in self.names:
            return self.names[node.id]
        if node.id in _FUNCS:
            self.refuse(node, f"'{node.id}' not called")
        raise ConstraintError(f"{self.where}: unknown name '{node.id}' at {node.col_offset}")

    def _UnaryOp(self, node):
        v = _scalar(self.eval(node.operand))
        if isinstance(node.op, ast.USub):
            return -v
        if isinstance(node.op, ast.UAdd):
            return +v
        if isinstance(node.op, ast.Not):
            return not v
        self.refuse(node, type(node.op).__name__)

    def _BinOp(self, node):
        op = _BINOPS.get(type(node.op))
        if op is None:
            self.refuse(node, type(node.op).__name__)
        a, b = _scalar(self.eval(node.left)), _scalar(self.eval(node.right))
        try:
            return op(a, b)
        except ZeroDivisionError:
            raise ConstraintError(f"{self.where}: division by zero at {node.col_offset}") from None

    def _BoolOp(self, node):
        is_and = isinstance(node.op, ast.And)
        value = None
        for v in node.values:
            value = _scalar(self.eval(v))
            if is_and and not value:
                return value
            if not is_and and value:
                return value
        return value

    def _Compare(self, node):
        left = _scalar(self.eval(node.left))
        for op, right_node in zip(node.ops, node.comparators):
            fn = _CMPOPS.get(type(op))
            if fn is None:
                self.refuse(node, type(op).__name__)
            right = _scalar(self.eval(right_node))
            if not fn(left, right):
                return False
            left = right
        return True

    def _Subscript(self, node):
        base = self.eval(node.value)
        return base[self._index(node.slice)]

    def _index(self, node):
        if isinstance(node, ast.Slice):
            parts = [None if p is None else int(_scalar(self.eval(p))) for p in (node.lower, node.upper, node.step)]
            return slice(*parts)
        if isinstance(node, ast.Tuple):
            return tuple(self._index(e) for e in node.elts)
        return int(_scalar(self.eval(node)))

    def _Attribute(self, node):
        if node.attr != "shape":
            self.refuse(node, f"the attribute '{node.attr}'")
        return tuple(self.eval(node.value).shape)

    def _Call(self, node):
        if node.keywords:
            self.refuse(node, "a keyword argument")
        if isinstance(node.func, ast.Name):
            fn = _FUNCS.get(node.func.id)
            if fn is None:
                self.refuse(node, f"the call '{node.func.id}(...)'")
            args = [_scalar(self.eval(a)) if node.func.id != "len" else self.eval(a) for a in node.args]
            return fn(*args)
        if isinstance(node.func, ast.Attribute) and node.func.attr in _METHODS:
            if node.args:
                self.refuse(node, f".{node.func.attr}() with arguments")
            target = self.eval(node.func.value)
            return getattr(target, node.func.attr)()
        self.refuse(node, "this call")


def _parse(text, where):
    if not isinstance(text, str) or not text.strip():
        raise ConstraintError(f"{where}: expected a non-empty condition")
    try:
        return ast.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        raise ConstraintError(f"{where}: not a Python expression ({e.msg} at {e.offset})") from None


def check_constraint(text, names, where="constraint"):
    """Parses and walks the tree without evaluating: refuses anything outside the subset or unknown names.

    `names` is any collection of allowed names (axes and inputs)."""
    tree = _parse(text, where)
    interp = _Interpreter({}, where)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in names and node.id not in _FUNCS and node.id not in ("True", "False"):
            raise ConstraintError(f"{where}: unknown name '{node.id}' at {node.col_offset}")
        if isinstance(node, ast.Attribute) and node.attr not in ("shape",) + _METHODS:
            interp.refuse(node, f"the attribute '{node.attr}'")
        allowed = (ast.Expression, ast.Constant, ast.Name, ast.Load, ast.UnaryOp, ast.BinOp, ast.BoolOp, ast.Compare,
                   ast.Subscript, ast.Slice, ast.Tuple, ast.Attribute, ast.Call, ast.USub, ast.UAdd, ast.Not, ast.And,
                   ast.Or) + tuple(_BINOPS) + tuple(_CMPOPS)
        if not isinstance(node, allowed):
            interp.refuse(node, type(node).__name__)
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float, bool)):
            interp.refuse(node, f"the constant {node.value!r}")
        if isinstance(node, ast.Call):
            ok_fn = isinstance(node.func, ast.Name) and node.func.id in _FUNCS
            ok_method = isinstance(node.func, ast.Attribute) and node.func.attr in _METHODS and not node.args
            if not (ok_fn or ok_method) or node.keywords:
                interp.refuse(node, "this call")


def evaluate_constraint(text, names, where="constraint"):
    """The condition's truth value on `names` (axis -> int, input -> tensor or scalar)."""
    check_constraint(text, names, where)
    try:
        return bool(_Interpreter(names, where).eval(_parse(text, where)))
    except ConstraintError:
        raise
    except (IndexError, TypeError, ValueError, RuntimeError) as e:
        raise ConstraintError(f"{where}: {text!r} could not be evaluated: {type(e).__name__}: {e}") from None


def evaluate_expression(text, names, where="expression"):
    """The value of an arithmetic expression over `names` (expr axes, cost formulas), in the same subset."""
    check_constraint(text, names, where)
    try:
        return _scalar(_Interpreter(names, where).eval(_parse(text, where)))
    except ConstraintError:
        raise
    except (IndexError, TypeError, ValueError, RuntimeError, OverflowError) as e:
        raise ConstraintError(f"{where}: {text!r} could not be evaluated: {type(e).__name__}: {e}") from None
