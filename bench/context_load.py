#!/usr/bin/env python3
"""Hold CUDA contexts of other processes on GPU 0 while something else is measured: do they change its time?

  context_load.py [--idle N] [--pending N] [--spacer-mib M] [--timeout-s 600]
  e.g. python3 bench/context_load.py --pending 1 <&- &   (then measure; close its stdin or kill it to end)

A khive evaluation has several processes with a context on the GPU (the judge, the reference's executor, the
candidate's executor), and the judge's stream waits on the device for the candidate's `done` while the kernel runs.
An in-process harness has one. This holds N more: `idle` ones (a context with nothing queued) and `pending` ones (a
stream blocked on cuStreamWaitValue32 for a word nobody writes, as the judge's wait). Each is its own process (libcuda
through ctypes, no torch). It prints "ready N" once all hold their contexts and ends when its stdin closes (EOF), on
SIGTERM, or after --timeout-s. --spacer-mib M: the first child also holds M MiB of device memory, so whatever is
allocated after it lands elsewhere in the GPU's memory (a kernel's time moves with where its tensors land, by up to
~5 %: bench/ruler_probe.py's torch_s1..s3); compare idle1 with idle1 and a spacer to tell the context from the place.

Exit: 0 ended as asked, 1 a child failed to set up its context, 2 bad arguments.
"""
import argparse
import os
import select
import signal
import subprocess
import sys
import time

CHILD = r'''
import ctypes, os, select, sys
cu, P, U64 = ctypes.CDLL("libcuda.so.1"), ctypes.c_void_p, ctypes.c_uint64
def f(name, *args):
    fn = getattr(cu, name); fn.restype, fn.argtypes = ctypes.c_int, list(args); return fn
def ck(r, what):
    if r: os.write(1, f"error {what}: CUresult {r}\n".encode()); sys.exit(3)
ck(f("cuInit", ctypes.c_uint)(0), "cuInit")
ctx = P(); ck(f("cuDevicePrimaryCtxRetain", ctypes.POINTER(P), ctypes.c_int)(ctypes.byref(ctx), 0), "retain")
ck(f("cuCtxSetCurrent", P)(ctx), "cuCtxSetCurrent")
word = U64(); ck(f("cuMemAlloc_v2", ctypes.POINTER(U64), ctypes.c_size_t)(ctypes.byref(word), 256), "cuMemAlloc")
ck(f("cuMemsetD32_v2", U64, ctypes.c_uint, ctypes.c_size_t)(word.value, 0, 64), "cuMemsetD32")
if int(sys.argv[3]) > 0:
    spacer = U64(); ck(f("cuMemAlloc_v2", ctypes.POINTER(U64), ctypes.c_size_t)(ctypes.byref(spacer), int(sys.argv[3]) << 20), "spacer")
ck(f("cuCtxSynchronize")(), "cuCtxSynchronize")
if sys.argv[1] == "pending":
    s = P(); ck(f("cuStreamCreate", ctypes.POINTER(P), ctypes.c_uint)(ctypes.byref(s), 1), "cuStreamCreate")
    wait = next(getattr(cu, n) for n in ("cuStreamWaitValue32_v2", "cuStreamWaitValue32") if hasattr(cu, n))
    wait.restype, wait.argtypes = ctypes.c_int, [P, U64, ctypes.c_uint32, ctypes.c_uint]
    ck(wait(s, word.value, 1, 0), "cuStreamWaitValue32")   # GEQ 1: never, until this process ends
os.write(1, b"ready\n")
select.select([0], [], [], float(sys.argv[2]))   # stdin closes (the parent ends) or the timeout
os._exit(0)   # a blocked stream would make a clean context teardown wait; the driver reclaims it
'''


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--idle", type=int, default=0, help="contexts with nothing queued (default 0)")
    p.add_argument("--pending", type=int, default=0, help="contexts with a stream blocked on a device wait (default 0)")
    p.add_argument("--spacer-mib", type=int, default=0, help="device memory the first child also holds (default 0)")
    p.add_argument("--timeout-s", type=float, default=600.0, help="end after this long at the latest (default 600)")
    a = p.parse_args(argv)
    if a.idle < 0 or a.pending < 0 or a.idle + a.pending > 16 or a.timeout_s <= 0 or not 0 <= a.spacer_mib <= 65536:
        p.error("--idle and --pending: 0 to 16 together; --spacer-mib: 0 to 65536; --timeout-s: above 0")
    if a.spacer_mib and not a.idle + a.pending:
        p.error("--spacer-mib needs a child to hold it (--idle or --pending)")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))   # the children are ended in `finally`
    kids = [subprocess.Popen([sys.executable, "-c", CHILD, kind, str(a.timeout_s), str(a.spacer_mib if i == 0 else 0)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            for i, kind in enumerate(["idle"] * a.idle + ["pending"] * a.pending)]
    try:
        for k in kids:
            line = k.stdout.readline().decode(errors="replace").strip()
            if line != "ready":
                print(f"context_load: a child did not set up its context: {line or 'exit ' + str(k.wait())}",
                      file=sys.stderr)
                return 1
        print(f"ready {len(kids)} (idle {a.idle}, pending {a.pending}, spacer {a.spacer_mib} MiB)", flush=True)
        end = time.monotonic() + a.timeout_s
        while time.monotonic() < end:
            r, _, _ = select.select([sys.stdin], [], [], max(0.0, end - time.monotonic()))
            if r and not os.read(sys.stdin.fileno(), 4096):
                break
        return 0
    finally:
        for k in kids:
            k.kill()
            k.wait()


if __name__ == "__main__":
    sys.exit(main())
