"""definition.json dtype names -> torch dtypes."""

__all__ = ["torch_dtype", "is_integer"]

_NAMES = {
    "float64": "float64", "float32": "float32", "float16": "float16", "bfloat16": "bfloat16",
    "float8_e4m3fn": "float8_e4m3fn", "float8_e5m2": "float8_e5m2", "float4_e2m1fn_x2": "float4_e2m1fn_x2",
    "int64": "int64", "int32": "int32", "int16": "int16", "int8": "int8", "bool": "bool",
}


def torch_dtype(torch, name, where="dtype"):
    attr = _NAMES.get(name)
    dt = getattr(torch, attr, None) if attr else None
    if dt is None:
        raise ValueError(f"{where}: dtype {name!r} has no torch equivalent in torch {torch.__version__}")
    return dt


def is_integer(name):
    return name in ("int64", "int32", "int16", "int8", "bool")
