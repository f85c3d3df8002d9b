"""The judge's reference executor for a PyTorch reference: python3 -m khive_torch.executor --socket FD --setup JSON.

khive-judge starts it instead of khive-exec when a task has no native reference for the backend but has a PyTorch
one (definition.json "reference"). It speaks the judge <-> executor protocol (src/khive/executor/protocol.hpp) for
what a reference needs:

  hello                       {"op":"hello","version":1,"pid":N,"sandbox":{...}}   (or a fault: no torch)
  map   + one fd per region   the judge's memfds: inputs read-only, goldens read-write
  layout                      per set: inputs, outputs, var axes, each region argument with its dtype and shape
  load                        the definition's reference, compiled once (its top-level run(...))
  null                        nothing, timed (the judge's calibration of one exchange)
  call                        for each call: run(*inputs of the set) into the set's golden slots
  quit                        exit 0

With setup {"as_kernel": true} the judge times this reference as a kernel under test (PyTorch's T_b on the judge's
clock): the messages are then answered by timed.py's TimedExecutor, on the judge's own regions (device memory on a
GPU) and behind its gate, as khive-exec runs a kernel.

Inputs are read from the judge's memory, never made here: goldens are for exactly the inputs the judge generated.
They are copies (the judge seals its inputs read-only, and PyTorch code may write into its arguments). Scalars come
with every call as the raw bytes of their dtype. Failures are answered as faults naming the definition and what
went wrong; the judge turns them into a harness error (the task's reference failed), never a verdict on a kernel.
"""
import json
import mmap
import os
import socket
import sys
import time
import traceback
import warnings

from .channel import PROTOCOL_VERSION, Fault, receive, send


class Executor:
    def __init__(self, torch, setup):
        self.torch = torch
        self.setup = setup
        self.regions = []     # [(mmap, bytes, writable)]
        self.sets = []        # [{"inputs": [...], "outputs": [...]}]
        self.task = None
        self.fn = None
        # The reference computes where the task runs when torch can: on the CPU backend (and, for goldens staged in
        # host memory, on the GPU when torch has one); the data always comes from and goes to the judge's host memory.
        self.device = "cpu"

    # ------------------------------------------------------------------------------------------------ messages
    def on_map(self, body, fds):
        specs = body.get("regions")
        if not isinstance(specs, list) or len(specs) != len(fds):
            for fd in fds:
                os.close(fd)
            n = len(specs) if isinstance(specs, list) else "no"
            raise Fault("bad_request", f"map: {n} regions but {len(fds)} descriptors")
        self.unmap()
        self.sets = []
        try:
            for i, (spec, fd) in enumerate(zip(specs, fds)):
                n = int(spec["bytes"])
                writable = spec.get("access", "r") == "rw"
                prot = mmap.PROT_READ | (mmap.PROT_WRITE if writable else 0)
                try:
                    m = mmap.mmap(fd, n, flags=mmap.MAP_SHARED, prot=prot) if n else None
                except (OSError, ValueError) as e:
                    raise Fault("bad_request", f"map: mmap of region {i} ({n} bytes) failed: {e}") from None
                self.regions.append((m, n, writable))
        finally:
            for fd in fds:
                os.close(fd)

    def unmap(self):
        for m, _, _ in self.regions:
            if m is not None:
                m.close()
        self.regions = []

    def on_layout(self, body):
        from .dtypes import torch_dtype
        torch = self.torch
        sets = []
        for si, s in enumerate(body.get("sets") or []):
            ins, outs = [], []
            for ai, a in enumerate(s.get("args") or []):
                where = f"layout: set {si}, argument {ai}"
                if "axis" in a:
                    continue   # the shapes below already hold them
                dtype = a.get("dtype")
                if not isinstance(dtype, str):
                    raise Fault("bad_request", f"{where}: expected a dtype (the judge's layout for a PyTorch reference names them)")
                try:
                    dt = torch_dtype(torch, dtype, where)
                except ValueError as e:
                    raise Fault("bad_request", str(e)) from None
                if "scalar" in a:
                    ins.append({"scalar": int(a["scalar"]), "dtype": dt})
                    continue
                if "region" not in a or not isinstance(a.get("shape"), list):
                    raise Fault("bad_request", f"{where}: expected a region argument with its shape, a scalar or an axis")
                r, off, shape = int(a["region"]), int(a["offset"]), tuple(int(d) for d in a["shape"])
                count = 1
                for d in shape:
                    count *= d
                nbytes = count * torch.empty((), dtype=dt).element_size()
                if r >= len(self.regions) or off < 0 or off + nbytes > self.regions[r][1]:
                    raise Fault("bad_request", f"{where}: {nbytes} bytes at offset {off} lie outside region {r}")
                arg = {"region": r, "offset": off, "shape": shape, "dtype": dt, "dtype_name": dtype, "count": count, "bytes": nbytes}
                (outs if self.regions[r][2] else ins).append(arg)
            sets.append({"inputs": ins, "outputs": outs})
        self.sets = sets

    def on_load(self):
        from .reference import load_reference
        from .task import TaskError, load_task
        task_dir = self.setup.get("task_dir") or ""
        try:
            self.task = load_task(task_dir)
            _, self.fn = load_reference(self.task)
        except TaskError as e:
            raise Fault("load_error", str(e)) from None
        if self.setup.get("backend") == "cuda" and self.torch.cuda.is_available():
            self.device = "cuda"

    def tensor_in(self, a):
        torch = self.torch
        m = self.regions[a["region"]][0]
        if a["count"] == 0:
            return torch.empty(a["shape"], dtype=a["dtype"], device=self.device)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # "the given buffer is not writable": the copy below is what the reference gets
            t = torch.frombuffer(m, dtype=a["dtype"], count=a["count"], offset=a["offset"])
        return t.reshape(a["shape"]).to(self.device, copy=True)

    def scalar_in(self, a, hexbytes):
        torch = self.torch
        try:
            raw = bytes.fromhex(hexbytes)
        except (TypeError, ValueError):
            raise Fault("bad_request", "call: malformed scalar") from None
        size = torch.empty((), dtype=a["dtype"]).element_size()
        if len(raw) != 8 or size > 8:
            raise Fault("bad_request", "call: malformed scalar")
        return torch.frombuffer(bytearray(raw[:size]), dtype=a["dtype"])[0].item()

    def on_call(self, body):
        from .reference import call_reference
        from .task import TaskError
        torch = self.torch
        if self.fn is None:
            raise Fault("bad_request", "call before load")
        calls = body.get("calls")
        if not isinstance(calls, list) or not calls:
            raise Fault("bad_request", "call: number of calls out of range")
        times = []
        for c in calls:
            si = c.get("set")
            if not isinstance(si, int) or not 0 <= si < len(self.sets):
                raise Fault("bad_request", "call: set out of range")
            s = self.sets[si]
            scalars = c.get("scalars") or []
            n_scalars = sum(1 for a in s["inputs"] if "scalar" in a)
            if len(scalars) != n_scalars:
                raise Fault("bad_request", "call: wrong number of scalars")
            args = [self.scalar_in(a, scalars[a["scalar"]]) if "scalar" in a else self.tensor_in(a) for a in s["inputs"]]
            names = list(self.task.outputs)
            if len(names) != len(s["outputs"]):
                raise Fault("bad_request", f"layout: {len(s['outputs'])} outputs, but {self.task.def_file} declares {len(names)}")
            outputs = [(name, a["dtype_name"], a["shape"]) for name, a in zip(names, s["outputs"])]
            t0 = time.perf_counter()
            try:
                outs = call_reference(torch, self.task, self.fn, args, outputs, self.device)
            except TaskError as e:
                raise Fault("reference_error", str(e)) from None
            except Exception as e:   # the task's code: say where it failed
                tb = traceback.extract_tb(e.__traceback__)
                at = next((f"{f.filename}:{f.lineno}" for f in reversed(tb) if f.filename.endswith(":reference")), "")
                raise Fault("reference_error", f"{self.task.def_file}: reference: run() raised {type(e).__name__}: {e}"
                                               + (f" (at {at})" if at else "")) from None
            if self.device != "cpu":
                torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
            for a, t in zip(s["outputs"], outs):
                if a["count"] == 0:
                    continue
                m = self.regions[a["region"]][0]
                dst = torch.frombuffer(m, dtype=torch.uint8, count=a["bytes"], offset=a["offset"])
                dst.copy_(t.cpu().reshape(-1).view(torch.uint8))
        return {"op": "done", "times_s": times}

    def on_null(self, body):
        n = body.get("count", 1)
        if not isinstance(n, int) or not 0 < n <= 256:
            raise Fault("bad_request", "null: count out of range")
        t = []
        for _ in range(n):
            t0 = time.perf_counter()
            t.append(time.perf_counter() - t0)
        return {"op": "done", "times_s": t}

    def on_gate(self, body, fds):
        for fd in fds:
            os.close(fd)
        raise Fault("bad_request", "gate: the goldens' reference runs ungated")


def serve(sock, handler):
    """Answers the judge's messages with handler's on_<op> methods until quit or the judge is gone."""
    while True:
        try:
            body, fds = receive(sock)
        except Fault as f:
            send(sock, {"op": "fault", "reason": f.reason, "message": str(f)})
            continue
        if body is None:
            return 0   # the judge is gone
        op = body.get("op", "")
        reply = {"op": "ok"}
        try:
            if op == "quit":
                handler.unmap()
                return 0
            if fds and op not in ("map", "gate"):
                for fd in fds:
                    os.close(fd)
                raise Fault("bad_request", f"descriptors attached to '{op}'")
            if op == "map":
                handler.on_map(body, fds)
            elif op == "layout":
                handler.on_layout(body)
            elif op == "load":
                handler.on_load()
            elif op == "gate":
                handler.on_gate(body, fds)
            elif op == "null":
                reply = handler.on_null(body)
            elif op == "call":
                reply = handler.on_call(body)
            else:
                raise Fault("bad_request", f"unknown op '{op}'")
        except Fault as f:
            reply = {"op": "fault", "reason": f.reason, "message": str(f)}
        except (KeyError, TypeError, ValueError) as e:
            reply = {"op": "fault", "reason": "bad_request", "message": f"malformed request: {type(e).__name__}: {e}"}
        send(sock, reply)


# What this process is, for the judge's sandbox report (docs/guard.md, "Isolation").
SANDBOX = {
    "process": "own process: python3 -m khive_torch.executor (the task's PyTorch reference)",
    "seccomp": "off: the interpreter and torch need more system calls than a kernel's allowlist",
    "landlock": "off: not started in khive-jail (KHIVE_JAIL=off)",
    "netns": "off: not started in khive-jail (KHIVE_JAIL=off)",
    "capabilities": "inherited",
    "rlimits": "off",
}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    fd, setup_json = -1, ""
    i = 0
    while i + 1 < len(argv):
        if argv[i] == "--socket":
            fd = int(argv[i + 1])
        elif argv[i] == "--setup":
            setup_json = argv[i + 1]
        i += 2
    if fd < 0 or not setup_json:
        print("khive_torch.executor: started by khive-judge, not by hand", file=sys.stderr)
        return 2
    sock = socket.socket(fileno=fd)
    try:
        setup = json.loads(setup_json)
    except ValueError as e:
        send(sock, {"op": "fault", "reason": "bad_request", "message": f"--setup: expected JSON, got {e}"})
        return 3
    try:
        import torch
    except ImportError as e:
        send(sock, {"op": "fault", "reason": "device_init",
                    "message": f"PyTorch is not installed for {sys.executable} ({e}): run scripts/setup.sh (it installs torch into "
                               ".deps/torch), or set KHIVE_PYTHON to an interpreter that has torch"})
        return 3
    threads = os.environ.get("OMP_NUM_THREADS", "")
    if threads.isdigit() and int(threads) > 0:
        torch.set_num_threads(int(threads))
    sandbox = dict(SANDBOX)
    try:   # confined by khive-jail (the judge starts it so unless KHIVE_JAIL=off): what it applied
        sandbox.update(json.loads(os.environ.get("KHIVE_JAIL_REPORT", "{}")))
    except ValueError:
        pass
    sandbox["torch"] = torch.__version__
    if setup.get("as_kernel"):   # timed as a kernel under test (timed.py)
        from .timed import TimedExecutor
        try:
            handler = TimedExecutor(torch, setup)
        except Fault as f:
            send(sock, {"op": "fault", "reason": f.reason, "message": str(f)})
            return 3
        sandbox["as_kernel"] = "the judge's own regions and gate; result copies answered as copy_s"
    else:
        handler = Executor(torch, setup)
    send(sock, {"op": "hello", "version": PROTOCOL_VERSION, "pid": os.getpid(), "sandbox": sandbox})
    return serve(sock, handler)


if __name__ == "__main__":
    sys.exit(main())
