#!/usr/bin/env python3
"""Decode-shape bf16 GEMMs (Y = X W^T, X [M, K] with M <= 16, W [N, K]) timed in one process, outside khive:
PyTorch's F.linear (cuBLASLt) against kernels of tasks/sol/gemm_bf16 (e.g. gemm.cuda_tc_gemv points rendered by
`khive-tune point`), on the same tensors, with CUDA events and the L2 flushed before every call.

  gemv_profile.py KERNEL.cu [KERNEL.cu ...] [--shapes 1x6144x4096,16x28672x4096] [--samples 50] [--once]
                  [--out FILE.md]

Why a second harness: issue 23 asks for every speed-up that khive measures to hold in an independent one, and a
bandwidth-bound kernel is judged against the memory floor, which this table prints (bytes of X, W and Y over the
device's HBM bandwidth, H100 SXM 3.35 TB/s, H200 4.8 TB/s). Each kernel is compiled with nvcc as khive's builder
does (bench/fidelity.py's nvcc_fallback) and called through khive_launch with ctypes; its output is checked against
F.linear's (|diff| <= 0.02 + 1e-2 |ref|, the task's tolerance) before it is timed, so a broken build is reported,
never timed. The implementations are sampled round-robin (clock drift hits all alike); the table has the median.

--once: two untimed calls and one call of each implementation per shape, no flush, for a profiler
(`ncu --target-processes all python3 bench/gemv_profile.py ... --once`): every launch in the profile is one of the
implementations, in the order the table lists them.
Exit: 0 measured, 1 a kernel failed to build or was wrong, 2 bad arguments, 77 no GPU or no torch.
"""
import argparse
import ctypes
import os
import pathlib
import statistics
import sys
import types
from concurrent.futures import ThreadPoolExecutor

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO / "bench"))

DEFAULT_SHAPES = "1x6144x4096,16x4096x14336,16x28672x4096,1x4096x4096,8x4096x14336,1x8192x28672,4x1024x4096"
HBM_BYTES_PER_S = {"H200": 4.8e12, "H100": 3.35e12}   # datasheet peaks (SXM); the floor's denominator


def parse_shapes(text):
    out = []
    for part in text.split(","):
        try:
            m, n, k = (int(v) for v in part.lower().split("x"))
        except ValueError:
            raise SystemExit(f"gemv_profile.py: --shapes: expected MxNxK[,MxNxK...], got {part!r}") from None
        if min(m, n, k) < 1:
            raise SystemExit(f"gemv_profile.py: --shapes: {part!r}: every extent must be at least 1")
        out.append((m, n, k))
    return out


def build(task, path, scratch):
    from fidelity import nvcc_fallback
    plan = types.SimpleNamespace(key="sol/gemm_bf16", task=task, policy=[])
    kernel = types.SimpleNamespace(label=path.stem, path=path)
    return nvcc_fallback(plan, kernel, scratch)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("kernels", nargs="*", type=pathlib.Path, help="kernel sources for tasks/sol/gemm_bf16 (.cu)")
    p.add_argument("--shapes", default=DEFAULT_SHAPES, help=f"MxNxK list (default {DEFAULT_SHAPES})")
    p.add_argument("--samples", type=int, default=50, help="timed calls per implementation and shape (default 50)")
    p.add_argument("--lead-us", type=float, default=200, help="spin kernel queued before each timed call (default 200)")
    p.add_argument("--once", action="store_true", help="one call each, no flush: for ncu")
    p.add_argument("--scratch", type=pathlib.Path, default=pathlib.Path("/tmp/khive-gemv-profile"))
    p.add_argument("--out", type=pathlib.Path, help="also write the markdown table here")
    a = p.parse_args(argv)
    shapes = parse_shapes(a.shapes)
    for k in a.kernels:
        if not k.is_file():
            print(f"gemv_profile.py: {k}: no such kernel source", file=sys.stderr)
            return 2
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        print("gemv_profile.py: skipped: torch does not import", file=sys.stderr)
        return 77
    if not torch.cuda.is_available():
        print("gemv_profile.py: skipped: no CUDA device", file=sys.stderr)
        return 77
    from khive_torch.task import load_task
    task = load_task(REPO / "tasks" / "sol" / "gemm_bf16")

    impls = [("torch F.linear", None)]
    failed = []
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as pool:   # nvcc is the slow part: all at once
        built = list(pool.map(lambda k: build(task, k.resolve(), a.scratch), a.kernels))
    for k, (lib, how) in zip(a.kernels, built):
        if lib is None:
            print(f"gemv_profile.py: {k}: {how}", file=sys.stderr)
            failed.append(k.name)
            continue
        fn = ctypes.CDLL(str(lib)).khive_launch
        fn.restype = None
        fn.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int64] * 3 + [ctypes.c_void_p]
        impls.append((k.stem, fn))

    dev = torch.device("cuda")
    name = torch.cuda.get_device_name(0)
    peak = next((v for kname, v in HBM_BYTES_PER_S.items() if kname in name), None)
    l2 = int(getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 50 << 20) or (50 << 20))
    flush = torch.empty(2 * l2, dtype=torch.uint8, device=dev)
    stream = torch.cuda.current_stream()
    lead = int(a.lead_us * 1e-6 * torch.cuda.get_device_properties(0).clock_rate * 1e3)   # clock_rate is in kHz
    gen = torch.Generator(device=dev).manual_seed(23)
    rows = []
    for (m, n, k) in shapes:
        x = (torch.randn(m, k, device=dev, generator=gen) + 0.5).to(torch.bfloat16)
        w = (torch.randn(n, k, device=dev, generator=gen) * 0.02).to(torch.bfloat16)
        # Our kernels' outputs, made once per shape (never inside the timed window), NaN until a call writes them.
        ys = {label: torch.full((m, n), float("nan"), dtype=torch.bfloat16, device=dev) for label, fn in impls if fn}

        def call(label, fn):
            if fn is None:
                ys[label] = F.linear(x, w)
            else:
                fn(x.data_ptr(), w.data_ptr(), ys[label].data_ptr(), m, n, k, stream.cuda_stream)

        ref = F.linear(x, w).float()
        bad = {}
        for label, fn in impls:
            call(label, fn)
            call(label, fn)
            torch.cuda.synchronize()
            d = (ys[label].float() - ref).abs()
            over = int((d > 0.02 + 1e-2 * ref.abs()).sum())
            if over or not torch.isfinite(ys[label].float()).all():
                bad[label] = f"{over} of {m * n} elements outside the tolerance (max |diff| {float(d.max()):.3g})"
                print(f"gemv_profile.py: {label} at {m}x{n}x{k}: {bad[label]}", file=sys.stderr)
                failed.append(label)
        if a.once:
            torch.cuda.synchronize()
            for label, fn in impls:
                if label not in bad:
                    call(label, fn)
            torch.cuda.synchronize()
            continue
        times = {label: [] for label, _ in impls if label not in bad}
        for _ in range(a.samples):
            for label, fn in impls:
                if label in bad:
                    continue
                flush.zero_()
                torch.cuda._sleep(lead)   # the GPU is busy while Python launches the call: its host cost is not timed
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                e0.record(stream)
                call(label, fn)
                e1.record(stream)
                e1.synchronize()
                times[label].append(e0.elapsed_time(e1) * 1e-3)
        nbytes = 2 * (m * k + n * k + m * n)
        t_torch = statistics.median(times["torch F.linear"])
        for label, ts in times.items():
            t = statistics.median(ts)
            rows.append((f"{m}x{n}x{k}", label, t, nbytes / t, (nbytes / peak) / t if peak else None, t_torch / t,
                         (max(ts) - min(ts)) / t))
    if a.once:
        print("gemv_profile.py: --once: one call of each implementation per shape done")
        return 1 if failed else 0
    lines = [f"# Decode GEMMs in one process (bench/gemv_profile.py): {name}", "",
             f"Median of {a.samples} calls each, L2 flushed before every call, implementations round-robin. "
             "floor: X, W and Y bytes at the datasheet HBM bandwidth"
             + (f" ({peak / 1e12:.2f} TB/s)" if peak else " (unknown for this device)") + ".", "",
             "| M x N x K | implementation | median | TB/s | of the floor | T_torch / T | range / median |",
             "|---|---|---|---|---|---|---|"]
    for shape, label, t, bw, frac, vs, rng in rows:
        lines.append(f"| {shape} | {label} | {t * 1e6:.2f} us | {bw / 1e12:.2f} | "
                     f"{'-' if frac is None else f'{frac:.0%}'} | {vs:.3f}x | {rng:.1%} |")
    if failed:
        lines += ["", "Failed (not timed): " + ", ".join(sorted(set(failed)))]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        a.out.write_text(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
