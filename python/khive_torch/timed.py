"""The task's PyTorch reference timed as a kernel under test, on the judge's clock (docs/guard.md, "PyTorch on the
judge's ruler").

The judge starts the reference executor (executor.py) with setup {"as_kernel": true} when it measures PyTorch for
T_b. It then works like khive-exec, not like the goldens' reference:

- it maps the judge's own regions, the ones a kernel gets: memfds on the CPU (inputs sealed read-only), CUDA virtual
  memory exported as POSIX descriptors on a GPU, imported here with the driver API (ctypes on libcuda, as
  src/khive/executor/vmm.cu does). PyTorch computes on those bytes: nothing is staged or copied in;
- each set's tensors are views made once, at the layout;
- on a GPU every call runs behind the judge's gate exactly as khive-exec runs a kernel (executor/gate.hpp): the
  stream waits for `ready`, records S, `go` is written from a second stream, run() is enqueued, E is recorded and
  `done` written. The judge's events bracket the call; it calibrates the bracket with the touch call below, before
  the reference is loaded, as for any kernel;
- each gated call enqueues the primer after its `ready`, before S, as khive-exec does (executor/gate.hpp: an empty
  kernel of 2 blocks per SM, KHIVE_EXEC_PRIMER's count), so PyTorch starts on the SMs as a candidate does;
- a value-returning run() allocates its results: they are copied into the judge's output slots, and that copy's own
  time (events around it on the GPU, the clock on the CPU) is answered as "copy_s". The judge takes it off the
  call's sample for this executor only (a kernel writes in place: PyTorch's time is run()'s). A destination-passing
  run(*inputs, *outputs) writes the slots itself.

Calls run under torch.inference_mode() with TF32 off, as bench/pytorch_baselines.py measured them.
"""
import ctypes
import inspect
import time
import warnings

from .channel import Fault
from .layout import decode_scalar

# CUDA driver constants (cuda.h).
CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 0x1
CU_MEM_LOCATION_TYPE_DEVICE = 0x1
CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 0x3
CU_STREAM_WAIT_VALUE_GEQ = 0x0
CU_STREAM_WRITE_VALUE_DEFAULT = 0x0
# Gate counters (executor/gate.hpp): offsets in the gate region.
GATE_READY, GATE_DONE, GATE_GO, GATE_BYTES = 0, 128, 256, 384
MAX_CALLS = 4096
# The primer (executor/gate.hpp): its default and bound on blocks per SM, and the empty kernel as PTX, which the driver
# compiles for the device at load (no nvcc here).
PRIMER_BLOCKS_PER_SM, PRIMER_MAX_BLOCKS_PER_SM = 2, 32
PRIMER_PTX = b""".version 7.0
.target sm_75
.address_size 64
.visible .entry khive_primer()
{
  ret;
}
"""


def primer_blocks_per_sm(value):
    """KHIVE_EXEC_PRIMER's value (None or "": unset) as blocks per SM, by gate.hpp's rule; None when it is not one."""
    if not value:
        return PRIMER_BLOCKS_PER_SM
    if not value.isascii() or not value.isdigit() or int(value) > PRIMER_MAX_BLOCKS_PER_SM:
        return None
    return int(value)
MAX_TOUCH_SPANS = 16


class _Location(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class _AccessDesc(ctypes.Structure):
    _fields_ = [("location", _Location), ("flags", ctypes.c_int)]


class Driver:
    """The few driver calls the gate and the regions need, from libcuda (the process already holds torch's context)."""

    def __init__(self):
        try:
            self.lib = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise Fault("device_init", f"libcuda.so.1: {e}") from None
        u64, sz, p = ctypes.c_uint64, ctypes.c_size_t, ctypes.c_void_p

        def fn(name, *args, alt=None):
            f = getattr(self.lib, name, None) or (getattr(self.lib, alt, None) if alt else None)
            if f is None:
                raise Fault("device_init", f"libcuda.so.1 has no {name}")
            f.restype = ctypes.c_int
            f.argtypes = list(args)
            return f

        self.import_handle = fn("cuMemImportFromShareableHandle", ctypes.POINTER(u64), p, ctypes.c_int)
        self.reserve = fn("cuMemAddressReserve", ctypes.POINTER(u64), sz, sz, u64, u64)
        self.map = fn("cuMemMap", u64, sz, sz, u64, u64)
        self.set_access = fn("cuMemSetAccess", u64, sz, ctypes.POINTER(_AccessDesc), sz)
        self.unmap = fn("cuMemUnmap", u64, sz)
        self.free_va = fn("cuMemAddressFree", u64, sz)
        self.release = fn("cuMemRelease", u64)
        self.wait = fn("cuStreamWaitValue32_v2", p, u64, ctypes.c_uint32, ctypes.c_uint, alt="cuStreamWaitValue32")
        self.write = fn("cuStreamWriteValue32_v2", p, u64, ctypes.c_uint32, ctypes.c_uint, alt="cuStreamWriteValue32")
        self.load_data = fn("cuModuleLoadData", ctypes.POINTER(p), ctypes.c_char_p)
        self.get_function = fn("cuModuleGetFunction", ctypes.POINTER(p), p, ctypes.c_char_p)
        u32 = ctypes.c_uint
        self.launch = fn("cuLaunchKernel", p, u32, u32, u32, u32, u32, u32, u32, p, p, p)

    @staticmethod
    def check(r, what):
        if r != 0:
            raise Fault("cuda_error", f"{what} failed: CUresult {r}")

    def primer(self):
        """The primer's kernel, loaded into the current context."""
        mod, fun = ctypes.c_void_p(), ctypes.c_void_p()
        self.check(self.load_data(ctypes.byref(mod), PRIMER_PTX), "cuModuleLoadData(primer)")
        self.check(self.get_function(ctypes.byref(fun), mod, b"khive_primer"), "cuModuleGetFunction(primer)")
        return fun

    def import_region(self, fd, nbytes, device):
        """The judge's exported allocation mapped read-write at a new address: (ptr, handle)."""
        h = ctypes.c_uint64(0)
        self.check(self.import_handle(ctypes.byref(h), ctypes.c_void_p(fd), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
                   "cuMemImportFromShareableHandle")
        ptr = ctypes.c_uint64(0)
        try:
            self.check(self.reserve(ctypes.byref(ptr), nbytes, 0, 0, 0), "cuMemAddressReserve")
            self.check(self.map(ptr.value, nbytes, 0, h.value, 0), "cuMemMap")
            desc = _AccessDesc(_Location(CU_MEM_LOCATION_TYPE_DEVICE, device), CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
            self.check(self.set_access(ptr.value, nbytes, ctypes.byref(desc), 1), "cuMemSetAccess")
        except Fault:
            self.release_region(ptr.value, nbytes, h.value)
            raise
        return ptr.value, h.value

    def release_region(self, ptr, nbytes, handle):
        if ptr:
            self.unmap(ptr, nbytes)
            self.free_va(ptr, nbytes)
        if handle:
            self.release(handle)


class _DeviceBytes:
    """A raw device range as an object torch.as_tensor takes (CUDA array interface, one byte per element)."""

    def __init__(self, ptr, nbytes):
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (ptr, False), "version": 3}


class TimedExecutor:
    """The message handlers of executor.py's loop when setup.as_kernel is set."""

    def __init__(self, torch, setup):
        self.torch = torch
        self.setup = setup
        self.cuda = setup.get("backend") == "cuda"
        self.regions = []   # CPU: (mmap, bytes, writable); GPU: (ptr, bytes, writable, handle)
        self.sets = []      # per set: {"args": [tensor or scalar slot], "outputs": [tensor], "scalars": [(slot, dtype)]}
        self.task = None
        self.fn = None
        self.destination_passing = False
        self.gate = None    # GPU: (ptr, bytes, handle)
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        if self.cuda:
            if not torch.cuda.is_available():
                raise Fault("device_init", "torch sees no CUDA device")
            torch.cuda.set_device(0)
            torch.empty(1, device="cuda")   # the primary context, current on this thread for the driver calls
            import os
            self.driver = Driver()
            per_sm = primer_blocks_per_sm(os.environ.get("KHIVE_EXEC_PRIMER"))
            if per_sm is None:   # the judge refuses such a value before it starts an executor
                raise Fault("bad_request", f"KHIVE_EXEC_PRIMER={os.environ['KHIVE_EXEC_PRIMER']!r}: not a count 0-32")
            self.primer_blocks = per_sm * torch.cuda.get_device_properties(0).multi_processor_count
            self.primer = self.driver.primer() if self.primer_blocks else None
            self.stream = torch.cuda.Stream()
            self.signal = torch.cuda.Stream()
            self.events = []

    # ------------------------------------------------------------------------------------------------ regions
    def on_map(self, body, fds):
        import os

        from .layout import map_memfd, region_specs
        regions = region_specs(body, fds)
        self.unmap()
        self.sets = []
        try:
            for i, (n, writable, fd) in enumerate(regions):
                if self.cuda:
                    ptr, h = self.driver.import_region(fd, n, 0)
                    self.regions.append((ptr, n, writable, h))
                else:
                    self.regions.append((map_memfd(fd, n, writable, i), n, writable, None))
        finally:
            for fd in fds:
                os.close(fd)

    def unmap(self):
        if self.cuda and self.regions:
            self.torch.cuda.synchronize()
        self.sets = []
        for r in self.regions:
            if self.cuda:
                self.driver.release_region(r[0], r[1], r[3])
            elif r[0] is not None:
                try:
                    r[0].close()
                except BufferError:   # a tensor view still holds it; it goes with the process
                    pass
        self.regions = []

    def on_gate(self, body, fds):
        import os
        if not self.cuda:
            for fd in fds:
                os.close(fd)
            raise Fault("bad_request", "gate: not on this backend")
        if len(fds) != 1:
            for fd in fds:
                os.close(fd)
            raise Fault("bad_request", "gate: expected one descriptor")
        n = int(body.get("bytes", 0))
        try:
            if self.gate is not None:
                raise Fault("bad_request", "gate: already mapped")
            if n < GATE_BYTES:
                raise Fault("bad_request", "gate: region too small")
            ptr, h = self.driver.import_region(fds[0], n, 0)
            self.gate = (ptr, n, h)
        finally:
            os.close(fds[0])

    def view(self, region, offset, nbytes):
        """Bytes [offset, offset + nbytes) of a region as a uint8 tensor aliasing the judge's memory."""
        torch = self.torch
        if region >= len(self.regions) or offset < 0 or nbytes < 0 or offset + nbytes > self.regions[region][1]:
            raise Fault("bad_request", f"{nbytes} bytes at offset {offset} lie outside region {region}")
        if nbytes == 0:
            return torch.empty(0, dtype=torch.uint8, device="cuda" if self.cuda else "cpu")
        r = self.regions[region]
        if self.cuda:
            return torch.as_tensor(_DeviceBytes(r[0] + offset, nbytes), device="cuda")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # "the given buffer is not writable": the inputs are sealed, on purpose
            return torch.frombuffer(r[0], dtype=torch.uint8, count=nbytes, offset=offset)

    def on_layout(self, body):
        from .layout import layout_sets
        sets = []
        for layout in layout_sets(self.torch, body):
            args, outs, scalars = [], [], []
            for a in layout:
                if a["kind"] == "scalar":
                    scalars.append((len(args), a["slot"], a["dtype"]))
                    args.append(None)
                    continue
                r = a["region"]
                try:
                    t = self.view(r, a["offset"], a["bytes"]).view(a["dtype"]).reshape(a["shape"])
                except Fault as f:
                    raise Fault("bad_request", f"{a['where']}: {f}") from None
                (outs if r < len(self.regions) and self.regions[r][2] else args).append(t)
            sets.append({"args": args, "outputs": outs, "scalars": scalars})
        self.sets = sets

    # ------------------------------------------------------------------------------------------------ the reference
    def on_load(self):
        from .reference import load_reference
        from .task import TaskError, load_task
        try:
            self.task = load_task(self.setup.get("task_dir") or "")
            _, self.fn = load_reference(self.task)
        except TaskError as e:
            raise Fault("load_error", str(e)) from None
        # Destination-passing when run() takes a parameter for every input and output (reference.py's two styles).
        n_in, n_out = len(self.task.inputs), len(self.task.outputs)
        try:
            params = [p for p in inspect.signature(self.fn).parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            self.destination_passing = len(params) >= n_in + n_out and not any(
                p.kind == p.VAR_POSITIONAL for p in inspect.signature(self.fn).parameters.values())
        except (TypeError, ValueError):
            self.destination_passing = False

    def arguments(self, c):
        si = c.get("set")
        if not isinstance(si, int) or not 0 <= si < len(self.sets):
            raise Fault("bad_request", "call: set out of range")
        s = self.sets[si]
        hexes = c.get("scalars") or []
        if len(hexes) != len(s["scalars"]):
            raise Fault("bad_request", "call: wrong number of scalars")
        args = list(s["args"])
        for pos, slot, dt in s["scalars"]:
            if not 0 <= slot < len(hexes):
                raise Fault("bad_request", "call: scalar slot out of range")
            args[pos] = decode_scalar(self.torch, dt, hexes[slot])
        return args, s["outputs"]

    def run(self, args, outs):
        """run() on one call's arguments; the results not yet in the slots (value-returning style), else []."""
        try:
            if self.destination_passing:
                self.fn(*args, *outs)
                return []
            result = self.fn(*args)
        except Exception as e:   # the task's code: its first line (PyTorch's dispatcher errors list every backend)
            first = (str(e).strip().splitlines() or [""])[0][:400]
            raise Fault("reference_error", f"{self.task.def_file}: reference: run() raised {type(e).__name__}: {first}") from None
        got = list(result) if isinstance(result, (tuple, list)) else [result]
        if len(got) != len(outs):
            raise Fault("reference_error", f"{self.task.def_file}: reference: run() returned {len(got)} outputs, the task declares {len(outs)}")
        for name, t, o in zip(self.task.outputs, got, outs):
            if not isinstance(t, self.torch.Tensor) or tuple(t.shape) != tuple(o.shape):
                shape = tuple(t.shape) if isinstance(t, self.torch.Tensor) else type(t).__name__
                raise Fault("reference_error", f"{self.task.def_file}: reference: output {name}: expected shape {tuple(o.shape)}, got {shape}")
        return got

    # ------------------------------------------------------------------------------------------------ calls
    def touch(self, spans):
        """executor/device.hpp's TouchCall with torch: every byte of the read spans read, the written ones zeroed."""
        if not isinstance(spans, list) or len(spans) > MAX_TOUCH_SPANS:
            raise Fault("bad_request", "touch: too many spans")
        if self.fn is not None:
            raise Fault("bad_request", "touch: after load")
        views = []
        for sp in spans:
            try:
                v = self.view(int(sp["region"]), int(sp["offset"]), int(sp["bytes"]))
            except Fault:
                raise Fault("bad_request", "touch: a span outside the regions") from None
            views.append((v, bool(sp["write"])))
        torch = self.torch

        def call():
            for v, write in views:
                if write:
                    v.zero_()
                else:
                    v.sum(dtype=torch.int64)
        return call

    def on_null(self, body):
        n = body.get("count", 1)
        if not isinstance(n, int) or not 0 < n <= MAX_CALLS:
            raise Fault("bad_request", "null: count out of range")
        work = self.touch(body["touch"]) if "touch" in body else None
        return self.calls([(work, None)] * n, body)

    def on_call(self, body):
        if self.fn is None:
            raise Fault("bad_request", "call before load")
        calls = body.get("calls")
        if not isinstance(calls, list) or not calls or len(calls) > MAX_CALLS:
            raise Fault("bad_request", "call: number of calls out of range")
        items = []
        for c in calls:
            args, outs = self.arguments(c)
            items.append((None, (args, outs)))
        return self.calls(items, body)

    def calls(self, items, body):
        gate = body.get("gate")
        first = None
        if gate is not None:
            first = gate.get("first") if isinstance(gate, dict) else None
            if not isinstance(first, int) or first <= 0 or first + len(items) > 0xFFFFFFFF:
                raise Fault("bad_request", "call: gate values out of range")
            if self.gate is None:
                raise Fault("bad_request", "call: no gate mapped")
        torch = self.torch
        with torch.inference_mode():
            if not self.cuda:
                return self.cpu_calls(items)
            return self.cuda_calls(items, first)

    def cpu_calls(self, items):
        times, copies = [], []
        for work, call in items:
            t0 = time.perf_counter()
            if work is not None:
                work()
            if call is None:
                t = time.perf_counter()
                times.append(t - t0)
                copies.append(0.0)
                continue
            args, outs = call
            got = self.run(args, outs)
            t1 = time.perf_counter()
            for o, t in zip(outs, got):
                o.copy_(t)
            t2 = time.perf_counter() if got else t1   # destination-passing: nothing was copied
            times.append(t2 - t0)
            copies.append(t2 - t1)
        return {"op": "done", "times_s": times, "copy_s": copies}

    def cuda_calls(self, items, first):
        torch = self.torch
        drv = self.driver
        need = 3 * len(items)
        while len(self.events) < need:
            self.events.append(torch.cuda.Event(enable_timing=True))
        ev = self.events
        g = self.gate[0] if self.gate else 0
        stream = self.stream
        with torch.cuda.stream(stream):
            for i, (work, call) in enumerate(items):
                if first is not None:
                    v = first + i
                    drv.check(drv.wait(ctypes.c_void_p(stream.cuda_stream), g + GATE_READY, v, CU_STREAM_WAIT_VALUE_GEQ), "cuStreamWaitValue32")
                    if self.primer:
                        drv.check(drv.launch(self.primer, self.primer_blocks, 1, 1, 128, 1, 1, 0,
                                             ctypes.c_void_p(stream.cuda_stream), None, None), "cuLaunchKernel(primer)")
                ev[3 * i].record(stream)
                if first is not None:
                    drv.check(drv.write(ctypes.c_void_p(self.signal.cuda_stream), g + GATE_GO, v, CU_STREAM_WRITE_VALUE_DEFAULT),
                              "cuStreamWriteValue32")
                if work is not None:
                    work()
                got = []
                if call is not None:
                    args, outs = call
                    got = self.run(args, outs)
                ev[3 * i + 1].record(stream)
                for o, t in zip(call[1] if call else [], got):
                    o.copy_(t)
                ev[3 * i + 2].record(stream)
                if first is not None:
                    drv.check(drv.write(ctypes.c_void_p(stream.cuda_stream), g + GATE_DONE, v, CU_STREAM_WRITE_VALUE_DEFAULT),
                              "cuStreamWriteValue32")
        torch.cuda.synchronize()   # every stream of the device, as khive-exec's finish()
        times, copies = [], []
        for i, (_, call) in enumerate(items):
            times.append(ev[3 * i].elapsed_time(ev[3 * i + 2]) * 1e-3)
            copied = call is not None and not self.destination_passing
            copies.append(min(times[-1], ev[3 * i + 1].elapsed_time(ev[3 * i + 2]) * 1e-3) if copied else 0.0)
        return {"op": "done", "times_s": times, "copy_s": copies}
