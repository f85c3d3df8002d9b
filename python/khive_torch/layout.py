"""The judge's layout and scalars as both PyTorch executors read them (executor.py for goldens, timed.py as a kernel).

    for si, args in layout_sets(torch, body):          # per set: the arguments in order, axes left out
        for a in args: a["kind"] in ("scalar", "region")
    value = decode_scalar(torch, torch.float32, "0000803f00000000")   # 1.0: raw bytes of the dtype, 8 in all

A region argument: {"kind": "region", "region", "offset", "shape", "dtype" (torch), "dtype_name", "count", "bytes"};
a scalar: {"kind": "scalar", "slot", "dtype"}. Malformed input raises channel.Fault("bad_request", ...) naming the set
and the argument.
"""
from .channel import Fault

__all__ = ["layout_sets", "decode_scalar", "region_specs", "map_memfd"]


def layout_sets(torch, body):
    from .dtypes import torch_dtype
    sets = []
    for si, s in enumerate(body.get("sets") or []):
        args = []
        for ai, a in enumerate(s.get("args") or []):
            where = f"layout: set {si}, argument {ai}"
            if "axis" in a:
                continue   # the shapes already hold them
            dtype = a.get("dtype")
            if not isinstance(dtype, str):
                raise Fault("bad_request", f"{where}: expected a dtype (the judge's layout for a PyTorch executor names them)")
            try:
                dt = torch_dtype(torch, dtype, where)
            except ValueError as e:
                raise Fault("bad_request", str(e)) from None
            if "scalar" in a:
                args.append({"kind": "scalar", "slot": int(a["scalar"]), "dtype": dt, "where": where})
                continue
            if "region" not in a or not isinstance(a.get("shape"), list):
                raise Fault("bad_request", f"{where}: expected a region argument with its shape, a scalar or an axis")
            shape = tuple(int(d) for d in a["shape"])
            count = 1
            for d in shape:
                count *= d
            args.append({"kind": "region", "region": int(a["region"]), "offset": int(a["offset"]), "shape": shape, "dtype": dt,
                         "dtype_name": dtype, "count": count, "bytes": count * torch.empty((), dtype=dt).element_size(),
                         "where": where})
        sets.append(args)
    return sets


def decode_scalar(torch, dtype, hexbytes):
    """A scalar as the judge sends it with a call: the raw bytes of its dtype, padded to 8, in hex."""
    try:
        raw = bytes.fromhex(hexbytes)
    except (TypeError, ValueError):
        raise Fault("bad_request", "call: malformed scalar") from None
    size = torch.empty((), dtype=dtype).element_size()
    if len(raw) != 8 or size > 8:
        raise Fault("bad_request", "call: malformed scalar")
    return torch.frombuffer(bytearray(raw[:size]), dtype=dtype)[0].item()


def region_specs(body, fds):
    """A map message's regions as [(bytes, writable, fd)]; a count that does not match the descriptors closes them all
    and raises."""
    import os
    specs = body.get("regions")
    if not isinstance(specs, list) or len(specs) != len(fds):
        for fd in fds:
            os.close(fd)
        raise Fault("bad_request", f"map: {len(specs) if isinstance(specs, list) else 'no'} regions but {len(fds)} descriptors")
    return [(int(spec["bytes"]), spec.get("access", "r") == "rw", fd) for spec, fd in zip(specs, fds)]


def map_memfd(fd, nbytes, writable, index):
    """A host region (a memfd), shared with the judge: read-only unless writable; None when it is empty."""
    import mmap
    prot = mmap.PROT_READ | (mmap.PROT_WRITE if writable else 0)
    try:
        return mmap.mmap(fd, nbytes, flags=mmap.MAP_SHARED, prot=prot) if nbytes else None
    except (OSError, ValueError) as e:
        raise Fault("bad_request", f"map: mmap of region {index} ({nbytes} bytes) failed: {e}") from None
