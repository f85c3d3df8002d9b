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
        from .layout import map_memfd, region_specs
        regions = region_specs(body, fds)
        self.unmap()
        self.sets = []
        try:
            for i, (n, writable, fd) in enumerate(regions):
                self.regions.append((map_memfd(fd, n, writable, i), n, writable))
        finally:
            for fd in fds:
                os.close(fd)

    def unmap(self):
        for m, _, _ in self.regions:
            if m is not None:
                m.close()
        self.regions = []

    def on_layout(self, body):
        from .layout import layout_sets
        sets = []
        for args in layout_sets(self.torch, body):
            ins, outs = [], []
            for a in args:
                if a["kind"] == "scalar":
                    ins.append({"scalar": a["slot"], "dtype": a["dtype"]})
                    continue
                r, off, nbytes = a["region"], a["offset"], a["bytes"]
                if r >= len(self.regions) or off < 0 or off + nbytes > self.regions[r][1]:
                    raise Fault("bad_request", f"{a['where']}: {nbytes} bytes at offset {off} lie outside region {r}")
                (outs if self.regions[r][2] else ins).append(a)
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
        from .layout import decode_scalar
        return decode_scalar(self.torch, a["dtype"], hexbytes)

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
