#!/usr/bin/env python3
"""Which of khive's differences from bench/fidelity.py's in-process harness makes a kernel read slower in khive?

  ruler_probe.py --task DIR --workload UUID (--lib cand.so | --source k.cu | --eval-json eval.json)
                 [--samples 30] [--gap-ms 2] [--variants plain,vmm,...] [--out probe.md] [--json probe.json]
  e.g. python3 bench/ruler_probe.py --lib $KHIVE_CACHE/build/ab/ab12.../cand.so \
         --task tasks/cutegen26/kb14_matmul_upper_triangular --workload perf-4096 --gap-ms 2 --out probe.md

On the H200 the kb14/kb15 triangular fp32 SIMT GEMMs read 11-13 % slower in khive (the executor's own events agree
with the judge) than in fidelity.py, and 5-20 us kernels ~1-1.7 us slower. This probe times the very library khive
built (khive_launch via ctypes, the task's inputs made by fidelity.py's own code) in one process under variants that
each add one of khive's conditions to fidelity.py's method, interleaved round-robin so that clock drift hits all alike:

  plain          fidelity.py: caching-allocator tensors, L2 flushed (2x L2 written) before each call. The baseline.
  vmm            (1) every tensor in its own CUDA VMM allocation (cuMemCreate, POSIX-fd handle type, 2 MiB pages).
  vmm_comp       vmm with generic compression requested (CU_MEM_ALLOCATION_COMP_GENERIC): is what makes VMM memory
                 read slower than the caching allocator's (add_rmsnorm T16384 +4 % on the H100) an attribute of the
                 allocation?
  reveal         (2) no flush; right before the call the outputs are poisoned and the inputs copied in from a staging
                 copy on the same stream, so the call starts on an L2 full of its own freshly written (dirty) bytes.
  vmm+reveal     (1) and (2).
  gated          (3) the launch waits behind cuStreamWaitValue32 (GEQ on a device word; the start event after the
                 wait), opened --gate-sleep-ms later by cuStreamWriteValue32 from a second stream: the device idles
                 at a stream wait right before the kernel (clocks, front-end wake-up). The word is a counter that
                 only grows, one value per call, as khive's gate (executor/gate.hpp), so it is never reset.
  other_context  (4) a child process holds its own CUDA context with a stream blocked on cuStreamWaitValue32 during
                 the call (the judge's stream waits for `done` while the kernel runs): time-slicing between contexts.
  reveal+flush   what session.cpp's enqueue_gated_call enqueues today: the reveal, then the L2 flush, then the call.
  vmm_arena      khive's arena (src/khive/judge/arena.cpp): inputs packed (256-byte aligned) in one VMM region,
                 outputs in another, each exported as a POSIX fd and imported again, mapped at a second address.
  khive_like     vmm_arena + reveal+flush + gated + other_context: all of them at once.
  rotate, khive_like_rotate
                 reveal+flush (and gated + other_context) on 4 arenas taken in turn, as a khive batch puts each call
                 on its own input set: the kernel meets addresses it last touched 4 calls ago, just written.
  arena_local    vmm_arena without the export and import (the creating handle mapped): what the round trip costs.
  arena_reveal   vmm_arena with reveal+flush (foreign's pair).
  arena_2m       vmm_arena with every tensor at a 2 MiB boundary (the allocation granularity) instead of 256 bytes.
  arena_one      inputs and outputs packed in one VMM region (the kernel's tensors on as few pages as in torch's pool).
  foreign        the arena created by the child process in its own context, exported, its fds sent over a socket
                 and imported here (khive's executor maps the judge's memory so), then reveal+flush here.
  foreign_judge  foreign, and the child plays the judge: for each call its stream copies the inputs from a staging
                 region (also its own), writes 2x L2 of its own flush buffer, writes the gate's `ready`, and waits for
                 `done`; the call's stream waits for `ready`, records the start event, calls, records the end event,
                 writes `done`: session.cpp's enqueue_gated_call with the executor's side of executor/device_cuda.cu.
  plain_1blk     plain with a one-block kernel (a short spin) between the flush and the start event.
  judge_primed   foreign_judge with a 4 MiB zero fill (a full grid) in the call's context between `ready` and the
                 start event: does a kernel of the executor's own after the switch change the call's time?
  judge_flush    foreign_judge, and after `ready` the call's context writes 2x L2 of its own flush buffer before the
                 start event: is the small kernels' residue the L2 as the judge's context left it?
  judge_rerun    judge_flush, with one call of the kernel itself on plain's (torch) buffers before that flush: is it
                 state only the kernel's own code warms (instruction and constant caches of the SMs), which a switch of
                 contexts leaves cold and an in-process harness keeps warm between its samples?
  malloc_arena   the arena's packing in memory of cuMemAlloc (cudaMalloc's), made here: is the allocator the cost?
  ipc_foreign    the same made by the child process and shared by legacy CUDA IPC (cuIpcGetMemHandle /
                 cuIpcOpenMemHandle), as a judge could share cudaMalloc memory instead of VMM regions: does imported
                 cudaMalloc memory read as the calling process's own?
  malloc_tensors one cuMemAlloc allocation per tensor (torch's pool gives a large tensor a cudaMalloc of its own), here.
  ipc_tensors    the same made by the child and shared by legacy CUDA IPC: a judge that allocates as torch does.
  torch_s1..s3   plain's tensors allocated again by torch behind a spacer of 2, 34 or 258 MiB: how far the kernel's own
                 time moves with where its tensors land (the spread any in-process harness has between two runs).
  judge_tlb      judge_flush, with one byte per 64 KiB of each of the call's own inputs and outputs read before that
                 flush: is it the GPU's address translation (TLB entries of the call's pages), which an in-process
                 harness keeps between samples (its flush touches only its own buffer) and a switch of contexts drops?
  judge_tlb_nf   judge_tlb without the flush (the few lines the reads bring stay in L2).

Each sample is one call bracketed by CUDA events on a non-blocking stream; a spin kernel (--lead-us) is queued ahead
of each sample's preparation so the host has enqueued the call before the device reaches it (the host's launch time
never sits between the start event and the kernel; its enqueue time is reported when it outlasts the lead). When
other_context or khive_like is selected the child's (idle) context exists during every variant; run once with and
once without them to see whether an idle context alone matters. Outputs are checked to be written (not the poison
pattern) after a call with each method, before and after the timed samples; nothing else is validated.

Exit: 0 every variant measured with its outputs written, 1 some variant failed or left an output unwritten, 2 bad
arguments, no library or no CUDA GPU.
"""
import argparse
import ctypes
import datetime
import json
import os
import pathlib
import re
import select
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
import fidelity  # noqa: E402  (puts python/ on sys.path: khive_torch)
from khive_torch.task import TaskError, load_task  # noqa: E402
from khive_torch.timed import _AccessDesc, _DeviceBytes, _Location  # noqa: E402  the repo's own driver structs

VARIANTS = {  # name: (memory, preparation, gated, other context)
    "plain": ("torch", "flush", False, False), "vmm": ("vmm", "flush", False, False),
    "vmm_comp": ("vmm_comp", "flush", False, False),
    "reveal": ("torch", "reveal", False, False), "vmm+reveal": ("vmm", "reveal", False, False),
    "gated": ("torch", "flush", True, False), "other_context": ("torch", "flush", False, True),
    "reveal+flush": ("torch", "reveal+flush", False, False), "vmm_arena": ("arena", "flush", False, False),
    "khive_like": ("arena", "reveal+flush", True, True),
    # As khive's batches: each call on the next of ROTATE input sets (own arenas), its inputs revealed just before it.
    "rotate": ("arena*", "reveal+flush", False, False), "khive_like_rotate": ("arena*", "reveal+flush", True, True),
    # The arena without the export/import round trip; the arena with the reveal alone (foreign's pair).
    "arena_local": ("arena_local", "flush", False, False), "arena_reveal": ("arena", "reveal+flush", False, False),
    "arena_2m": ("arena_2m", "flush", False, False), "arena_one": ("arena_one", "flush", False, False),
    # The arena made by another process (the child, as the judge makes it) and imported here, as an executor does.
    "foreign": ("foreign", "reveal+flush", False, False),
    # ... and the child plays the judge's whole part: the reveal (copies from a staging region), the flush on its own
    # buffer, the gate's `ready` from its context; the call's stream writes `done`, which the child's stream waits for.
    "foreign_judge": ("foreign", "judge", True, True),
    # Does the kernel that ran just before in the same context change the call's time (the block scheduler's state)?
    "plain_1blk": ("torch", "flush+1blk", False, False), "judge_primed": ("foreign", "judge+prime", True, True),
    # After the switch, in the call's context: an L2 flush of its own; the kernel on other buffers, then that flush.
    "judge_flush": ("foreign", "judge+flush", True, True), "judge_rerun": ("foreign", "judge+rerun", True, True),
    # After the switch: the call's own pages read once each (address translation warmed), with and without a flush.
    "judge_tlb": ("foreign", "judge+tlb", True, True), "judge_tlb_nf": ("foreign", "judge+tlbnf", True, True),
    # The arena's packing in cudaMalloc memory: this process's own, and the child's shared by legacy IPC.
    "malloc_arena": ("malloc_arena", "flush", False, False), "ipc_foreign": ("ipc_foreign", "flush", False, False),
    # One cudaMalloc allocation per tensor, as torch's pool holds large tensors: here, and the child's shared by IPC.
    "malloc_tensors": ("malloc_tensors", "flush", False, False), "ipc_tensors": ("ipc_tensors", "flush", False, False),
    # plain's tensors made again by torch behind a spacer of SHIFTS[k] bytes: the kernel's own spread over placement.
    "torch_s1": ("torch_s1", "flush", False, False), "torch_s2": ("torch_s2", "flush", False, False),
    "torch_s3": ("torch_s3", "flush", False, False),
}
SHIFTS = {f"torch_s{j}": fidelity.PLACEMENT_SHIFTS[j] for j in (1, 2, 3)}   # fidelity.py's placements 1-3
TLB_STRIDE = 64 << 10   # judge_tlb reads one byte per this many of each buffer
ROTATE = 4


def round_up(n, a):
    return (n + a - 1) // a * a

ARENA_ALIGN = 256   # arena.cpp's kAlign
CHILD = r'''
import ctypes, os, select, socket, sys
cu, P, U64, I, SZ = ctypes.CDLL("libcuda.so.1"), ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int, ctypes.c_size_t
class Loc(ctypes.Structure): _fields_ = [("type", I), ("id", I)]
class Flags(ctypes.Structure): _fields_ = [("c", ctypes.c_ubyte), ("g", ctypes.c_ubyte), ("u", ctypes.c_ushort), ("r", ctypes.c_ubyte * 4)]
class Prop(ctypes.Structure): _fields_ = [("type", I), ("handles", I), ("loc", Loc), ("w", P), ("flags", Flags)]
class Acc(ctypes.Structure): _fields_ = [("loc", Loc), ("flags", I)]
def f(names, *args):
    fn = next(getattr(cu, n) for n in names if hasattr(cu, n))
    fn.restype, fn.argtypes = ctypes.c_int, list(args)
    return fn
def say(s): os.write(1, (s + "\n").encode())
def ck(r, what):
    if r:
        s = ctypes.c_char_p(); f(["cuGetErrorName"], I, ctypes.POINTER(ctypes.c_char_p))(r, ctypes.byref(s))
        say(f"error {what}: {(s.value or b'?').decode()} (CUresult {r})"); sys.exit(3)
wait = f(["cuStreamWaitValue32_v2", "cuStreamWaitValue32"], P, U64, ctypes.c_uint32, ctypes.c_uint)
write = f(["cuStreamWriteValue32_v2", "cuStreamWriteValue32"], P, U64, ctypes.c_uint32, ctypes.c_uint)
sync = f(["cuStreamSynchronize"], P)
ck(f(["cuInit"], ctypes.c_uint)(0), "cuInit")
ctx = P(); ck(f(["cuDevicePrimaryCtxRetain"], ctypes.POINTER(P), I)(ctypes.byref(ctx), 0), "cuDevicePrimaryCtxRetain")
ck(f(["cuCtxSetCurrent"], P)(ctx), "cuCtxSetCurrent")
if os.environ.get("KHIVE_PROBE_L2_ZERO") == "1":   # --persisting-l2-zero: as the judge's context
    ck(f(["cuCtxSetLimit"], I, SZ)(6, 0), "cuCtxSetLimit")
alloc = f(["cuMemAlloc_v2"], ctypes.POINTER(U64), SZ)
word = U64(); ck(alloc(ctypes.byref(word), 256), "cuMemAlloc")
ck(f(["cuMemsetD32_v2"], U64, ctypes.c_uint, SZ)(word.value, 0, 64), "cuMemsetD32")
ck(sync(None), "cuStreamSynchronize")
sw, ss = P(), P()
for s in (sw, ss): ck(f(["cuStreamCreate"], ctypes.POINTER(P), ctypes.c_uint)(ctypes.byref(s), 1), "cuStreamCreate")
# The judge's part (variant foreign_judge): regions this process creates and exports (the main process imports them,
# as an executor imports the judge's arena), the reveal (copies from a staging region), the flush, the gate.
sock = socket.socket(fileno=int(sys.argv[2])) if len(sys.argv) > 2 else None
gran_fn = f(["cuMemGetAllocationGranularity"], ctypes.POINTER(SZ), ctypes.POINTER(Prop), I)
create = f(["cuMemCreate"], ctypes.POINTER(U64), SZ, ctypes.POINTER(Prop), U64)
export = f(["cuMemExportToShareableHandle"], ctypes.POINTER(I), U64, I, U64)
reserve = f(["cuMemAddressReserve"], ctypes.POINTER(U64), SZ, SZ, U64, U64)
vmap = f(["cuMemMap"], U64, SZ, SZ, U64, U64)
access = f(["cuMemSetAccess"], U64, SZ, ctypes.POINTER(Acc), SZ)
copy = f(["cuMemcpyDtoDAsync_v2"], U64, U64, SZ, P)
memset = f(["cuMemsetD8Async"], U64, ctypes.c_ubyte, SZ, P)
regions, plan, flush, gate = [], [], [0, 0], None
say("ready")
v, buf = 0, b""
while True:
    while b"\n" not in buf:
        r, _, _ = select.select([0], [], [], float(sys.argv[1]))
        chunk = os.read(0, 4096) if r else b""
        if not chunk: break
        buf += chunk
    line, _, buf = buf.partition(b"\n") if b"\n" in buf else (b"quit", b"", b"")
    w = line.decode().split()
    if not w or w[0] == "quit":
        break
    if w[0] == "arm":
        v += 1; ck(wait(sw, word.value, v, 0), "cuStreamWaitValue32"); say("armed")
    elif w[0] == "release":
        ck(write(ss, word.value, v, 0), "cuStreamWriteValue32"); ck(sync(sw), "cuStreamSynchronize"); say("released")
    elif w[0] == "alloc":   # alloc BYTES: a POSIX-fd VMM region mapped here, its fd sent over the socket
        prop, g = Prop(1, 1, Loc(1, 0)), SZ(0)
        ck(gran_fn(ctypes.byref(g), ctypes.byref(prop), 0), "cuMemGetAllocationGranularity")
        size = (max(int(w[1]), 1) + g.value - 1) // g.value * g.value
        h, ptr, fd = U64(0), U64(0), I(-1)
        ck(create(ctypes.byref(h), size, ctypes.byref(prop), 0), "cuMemCreate")
        ck(reserve(ctypes.byref(ptr), size, 0, 0, 0), "cuMemAddressReserve")
        ck(vmap(ptr.value, size, 0, h.value, 0), "cuMemMap")
        ck(access(ptr.value, size, ctypes.byref(Acc(Loc(1, 0), 3)), 1), "cuMemSetAccess")
        ck(memset(ptr.value, 0, size, ss), "cuMemsetD8Async"); ck(sync(ss), "cuStreamSynchronize")
        ck(export(ctypes.byref(fd), h.value, 1, 0), "cuMemExportToShareableHandle")
        socket.send_fds(sock, [b"r"], [fd.value]); os.close(fd.value)
        regions.append(ptr.value); say(f"region {len(regions) - 1} {size}")
    elif w[0] == "ipcalloc":   # ipcalloc BYTES: cuMemAlloc memory here, its legacy IPC handle sent as hex
        ptr, h = U64(0), (ctypes.c_char * 64)()
        size = max(int(w[1]), 1)
        ck(alloc(ctypes.byref(ptr), size), "cuMemAlloc")
        ck(memset(ptr.value, 0, size, ss), "cuMemsetD8Async"); ck(sync(ss), "cuStreamSynchronize")
        ck(f(["cuIpcGetMemHandle"], ctypes.POINTER(ctypes.c_char * 64), U64)(ctypes.byref(h), ptr.value), "cuIpcGetMemHandle")
        regions.append(ptr.value); say(f"ipc {len(regions) - 1} {size} {bytes(h).hex()}")
    elif w[0] == "copy":    # copy SRC_REGION SRC_OFF DST_REGION DST_OFF BYTES: one step of the reveal
        a = [int(x) for x in w[1:6]]; plan.append((regions[a[2]] + a[3], regions[a[0]] + a[1], a[4])); say("ok")
    elif w[0] == "flush":   # flush BYTES: the judge's flush buffer
        ck(alloc(ctypes.byref(word2 := U64()), int(w[1])), "cuMemAlloc"); flush = [word2.value, int(w[1])]; say("ok")
    elif w[0] == "gate":    # gate REGION READY_OFF DONE_OFF
        gate = (regions[int(w[1])] + int(w[2]), regions[int(w[1])] + int(w[3])); say("ok")
    elif w[0] == "go":      # go V: as session.cpp's enqueue_gated_call, on one stream: reveal, flush, ready, wait done
        n = int(w[1])
        for dst, src, nb in plan: ck(copy(dst, src, nb, ss), "cuMemcpyDtoDAsync")
        if flush[1]: ck(memset(flush[0], n & 0xff, flush[1], ss), "cuMemsetD8Async")
        ck(write(ss, gate[0], n, 0), "cuStreamWriteValue32"); ck(wait(ss, gate[1], n, 0), "cuStreamWaitValue32")
        say("went")
    elif w[0] == "sync":
        ck(sync(ss), "cuStreamSynchronize"); say("synced")
    else:
        say(f"error unknown command {w[0]}")
ck(write(ss, word.value, v + 1, 0), "cuStreamWriteValue32"); ck(sync(sw), "sync"); ck(sync(ss), "sync")
ck(f(["cuMemFree_v2"], U64)(word.value), "cuMemFree")
say("bye")
'''


class DriverError(RuntimeError):
    """A driver call returned an error: the message names the call and the CUresult (cuGetErrorName)."""


class Stuck(RuntimeError):
    """A call never ended (its stream behind a gate nobody opened): nothing more can run on the stream."""


class _IpcHandle(ctypes.Structure):   # CUipcMemHandle: 64 opaque bytes, passed by value
    _fields_ = [("reserved", ctypes.c_ubyte * 64)]   # not c_char: a c_char array stops copying at the first NUL


class _AllocFlags(ctypes.Structure):
    _fields_ = [("compressionType", ctypes.c_ubyte), ("gpuDirectRDMACapable", ctypes.c_ubyte),
                ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 4)]


class _AllocProp(ctypes.Structure):   # CUmemAllocationProp (cuda.h, 12.x and 13.0): 32 bytes
    _fields_ = [("type", ctypes.c_int), ("requestedHandleTypes", ctypes.c_int), ("location", _Location),
                ("win32HandleMetaData", ctypes.c_void_p), ("allocFlags", _AllocFlags)]


@dataclass
class Region:
    """One VMM allocation as mapped here; every handle (the creating one, an imported one) is released at the end."""
    ptr: int = 0
    size: int = 0
    handles: list = field(default_factory=list)
    mapped: bool = False
    how: str = "vmm"   # vmm; malloc (cuMemAlloc here: cuMemFree); ipc (opened from another process: cuIpcCloseMemHandle)


class Driver:
    """The driver calls the variants need, from libcuda (ctypes, as khive_torch/timed.py); torch's primary context is
    current on this thread. Every call's CUresult is checked; the versioned symbols (_v2) are the ones cuda.h uses."""

    def __init__(self, device):
        self.lib, self.device, self.free_errors, self._gran = ctypes.CDLL("libcuda.so.1"), device, [], None
        u64, sz, p, pu64 = ctypes.c_uint64, ctypes.c_size_t, ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64)
        self.error_name = self._fn(["cuGetErrorName"], ctypes.c_int, ctypes.POINTER(ctypes.c_char_p))
        self.granularity_fn = self._fn(["cuMemGetAllocationGranularity"], ctypes.POINTER(sz), ctypes.POINTER(_AllocProp),
                                       ctypes.c_int)
        self.create = self._fn(["cuMemCreate"], pu64, sz, ctypes.POINTER(_AllocProp), u64)
        self.export = self._fn(["cuMemExportToShareableHandle"], ctypes.POINTER(ctypes.c_int), u64, ctypes.c_int, u64)
        self.import_ = self._fn(["cuMemImportFromShareableHandle"], pu64, p, ctypes.c_int)
        self.reserve = self._fn(["cuMemAddressReserve"], pu64, sz, sz, u64, u64)
        self.map = self._fn(["cuMemMap"], u64, sz, sz, u64, u64)
        self.set_access = self._fn(["cuMemSetAccess"], u64, sz, ctypes.POINTER(_AccessDesc), sz)
        self.unmap = self._fn(["cuMemUnmap"], u64, sz)
        self.free_va = self._fn(["cuMemAddressFree"], u64, sz)
        self.release = self._fn(["cuMemRelease"], u64)
        self.mem_alloc = self._fn(["cuMemAlloc_v2"], pu64, sz)
        self.mem_free = self._fn(["cuMemFree_v2"], u64)
        self.ipc_open_fn = self._fn(["cuIpcOpenMemHandle_v2", "cuIpcOpenMemHandle"], pu64, _IpcHandle, ctypes.c_uint)
        self.ipc_close = self._fn(["cuIpcCloseMemHandle"], u64)
        self.wait_fn = self._fn(["cuStreamWaitValue32_v2", "cuStreamWaitValue32"], p, u64, ctypes.c_uint32, ctypes.c_uint)
        self.write_fn = self._fn(["cuStreamWriteValue32_v2", "cuStreamWriteValue32"], p, u64, ctypes.c_uint32, ctypes.c_uint)
        ctx, ver = ctypes.c_void_p(), ctypes.c_int()
        self.ck(self._fn(["cuCtxGetCurrent"], ctypes.POINTER(p))(ctypes.byref(ctx)), "cuCtxGetCurrent")
        if not ctx.value:
            raise DriverError("no current CUDA context on this thread (torch's primary context was expected)")
        self.ck(self._fn(["cuDriverGetVersion"], ctypes.POINTER(ctypes.c_int))(ctypes.byref(ver)), "cuDriverGetVersion")
        self.version = ver.value

    def _fn(self, names, *args):
        for n in names:
            f = getattr(self.lib, n, None)
            if f is not None:
                f.restype, f.argtypes = ctypes.c_int, list(args)
                return f
        raise DriverError(f"libcuda.so.1 has no {names[0]}")

    def ck(self, r, what):
        if r != 0:
            s = ctypes.c_char_p()
            name = s.value.decode() if self.error_name(r, ctypes.byref(s)) == 0 and s.value else "?"
            raise DriverError(f"{what}: {name} (CUresult {r})")

    def prop(self, compress=False):
        p = _AllocProp(type=1, requestedHandleTypes=1, location=_Location(1, self.device))   # PINNED, POSIX_FD, DEVICE
        p.allocFlags.compressionType = 1 if compress else 0   # CU_MEM_ALLOCATION_COMP_GENERIC
        return p

    def granularity(self):
        if self._gran is None:
            g, prop = ctypes.c_size_t(0), self.prop()
            self.ck(self.granularity_fn(ctypes.byref(g), ctypes.byref(prop), 0), "cuMemGetAllocationGranularity")   # MINIMUM
            self._gran = g.value or (2 << 20)
        return self._gran

    def alloc(self, nbytes, reimport=False, compress=False):
        """A read-write mapping of a fresh allocation, as src/khive/executor/vmm.cu makes one; reimport: exported as a
        POSIX fd and imported again (the executor's view of the judge's memory). Returns (Region, note)."""
        g, note = self.granularity(), ""
        r, h, prop = Region(size=round_up(max(nbytes, 1), g)), ctypes.c_uint64(0), self.prop(compress)
        self.ck(self.create(ctypes.byref(h), r.size, ctypes.byref(prop), 0), "cuMemCreate")
        r.handles.append(h.value)
        use = h.value
        if reimport:
            try:
                use = self._reimport(h.value)
                r.handles.append(use)
            except DriverError as e:
                note = f"export/import failed ({e}); the creating handle is mapped"
        return self._map_rw(r, use), note

    def malloc(self, nbytes):
        """cuMemAlloc memory (what cudaMalloc returns) of this process."""
        ptr = ctypes.c_uint64(0)
        self.ck(self.mem_alloc(ctypes.byref(ptr), max(nbytes, 1)), "cuMemAlloc")
        return Region(ptr=ptr.value, size=max(nbytes, 1), how="malloc")

    def ipc_open(self, handle, size):
        """Another process's cuMemAlloc memory, opened from its legacy IPC handle (64 bytes)."""
        ptr = ctypes.c_uint64(0)
        self.ck(self.ipc_open_fn(ctypes.byref(ptr), _IpcHandle.from_buffer_copy(handle), 1), "cuIpcOpenMemHandle")   # LAZY_ENABLE_PEER_ACCESS
        return Region(ptr=ptr.value, size=size, how="ipc")

    def import_fd(self, fd, size):
        """Another process's region (its exported POSIX fd, closed here), mapped read-write: an executor's view."""
        r, h = Region(size=size), ctypes.c_uint64(0)
        try:
            self.ck(self.import_(ctypes.byref(h), ctypes.c_void_p(fd), 1), "cuMemImportFromShareableHandle")
        finally:
            os.close(fd)
        r.handles.append(h.value)
        return self._map_rw(r, h.value)

    def _map_rw(self, r, handle):
        """handle mapped read-write over a fresh address range of r.size; on a failure r is freed (handles included)."""
        try:
            ptr = ctypes.c_uint64(0)
            self.ck(self.reserve(ctypes.byref(ptr), r.size, 0, 0, 0), "cuMemAddressReserve")
            r.ptr = ptr.value
            self.ck(self.map(r.ptr, r.size, 0, handle, 0), "cuMemMap")
            r.mapped = True
            desc = _AccessDesc(_Location(1, self.device), 3)   # DEVICE, PROT_READWRITE
            self.ck(self.set_access(r.ptr, r.size, ctypes.byref(desc), 1), "cuMemSetAccess")
        except DriverError:
            self.free(r)
            raise
        return r

    def _reimport(self, handle):
        fd = ctypes.c_int(-1)
        self.ck(self.export(ctypes.byref(fd), handle, 1, 0), "cuMemExportToShareableHandle")
        try:
            h = ctypes.c_uint64(0)
            self.ck(self.import_(ctypes.byref(h), ctypes.c_void_p(fd.value), 1), "cuMemImportFromShareableHandle")
            return h.value
        finally:
            os.close(fd.value)

    def free(self, r):
        """Unmap, free the address range, release every handle; errors are kept (reported), never raised."""
        if r.how != "vmm":
            calls = [(self.mem_free, (r.ptr,), "cuMemFree")] if r.how == "malloc" else \
                [(self.ipc_close, (r.ptr,), "cuIpcCloseMemHandle")]
        else:
            calls = ([(self.unmap, (r.ptr, r.size), "cuMemUnmap")] if r.mapped else []) + \
                ([(self.free_va, (r.ptr, r.size), "cuMemAddressFree")] if r.ptr else []) + \
                [(self.release, (h,), "cuMemRelease") for h in r.handles]
        for fn, args, what in calls:
            try:
                self.ck(fn(*args), what)
            except DriverError as e:
                self.free_errors.append(str(e))
        r.mapped, r.ptr, r.handles = False, 0, []

    def wait(self, stream, addr, value):
        self.ck(self.wait_fn(ctypes.c_void_p(stream), addr, value, 0), "cuStreamWaitValue32")     # GEQ (cyclic)

    def write(self, stream, addr, value):
        self.ck(self.write_fn(ctypes.c_void_p(stream), addr, value, 0), "cuStreamWriteValue32")   # DEFAULT (fenced)


class OtherContext:
    """A child process (CHILD, libcuda through ctypes, no torch) with its own context on the same GPU, as the judge
    holds one. "arm" leaves a stream of it blocked on cuStreamWaitValue32 (the judge's wait for `done`), "release"
    writes the word. It quits on EOF or after --child-timeout seconds without a command, and is killed in close()."""

    def __init__(self, idle_s):
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.proc = subprocess.Popen([sys.executable, "-c", CHILD, str(idle_s), str(theirs.fileno())], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, pass_fds=(theirs.fileno(),))
        finally:
            theirs.close()
        self.buf, self.log, self.last = b"", [], ""
        try:
            self.ask(None, "ready", timeout=60)
        except BaseException:
            self.close()
            raise

    def ask(self, cmd, expect, timeout=10.0):
        if cmd:
            os.write(self.proc.stdin.fileno(), (cmd + "\n").encode())
        end, fd = time.monotonic() + timeout, self.proc.stdout.fileno()
        while True:
            while b"\n" in self.buf:
                line, _, self.buf = self.buf.partition(b"\n")
                text = line.decode(errors="replace").strip()
                if text == expect or text.startswith(expect + " "):
                    self.last = text
                    return
                if text.startswith("error"):
                    raise RuntimeError(f"other context: {text}")
                self.log.append(text)
            left = end - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"other context: no '{expect}' within {timeout:g} s")
            if select.select([fd], [], [], left)[0]:
                chunk = os.read(fd, 4096)
                if not chunk:
                    raise RuntimeError(f"other context: the child exited (rc {self.proc.poll()}): {' '.join(self.log)[-300:]}")
                self.buf += chunk

    def ipc_region(self, nbytes):
        """cuMemAlloc memory of the child's context: (its id there, its IPC handle's 64 bytes, its size)."""
        self.ask(f"ipcalloc {nbytes}", "ipc", timeout=30)
        _, rid, size, handle = self.last.split()
        return int(rid), bytes.fromhex(handle), int(size)

    def region(self, nbytes):
        """A VMM region of the child's context: (its id there, the fd of its exported handle, its size)."""
        self.ask(f"alloc {nbytes}", "region", timeout=30)
        _, fds, _, _ = socket.recv_fds(self.sock, 16, 1)
        if len(fds) != 1:
            raise RuntimeError(f"other context: 'alloc' sent {len(fds)} descriptors")
        _, rid, size = self.last.split()
        return int(rid), fds[0], int(size)

    def close(self):
        self.sock.close()
        try:
            if self.proc.poll() is None:
                self.ask("quit", "bye", timeout=10)
            self.proc.wait(timeout=10)
        except (OSError, RuntimeError, TimeoutError, subprocess.TimeoutExpired):
            pass
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait(timeout=10)
            self.proc.stdin.close()
            self.proc.stdout.close()


@dataclass
class Buffers:
    """khive_launch's arguments on one kind of memory; slots: (position in vals, Arg, tensor) of inputs and outputs."""
    vals: list
    slots: list
    regions: list = field(default_factory=list)
    note: str = ""
    error: str = ""   # making this memory failed: every variant on it reports this
    gate: tuple = None   # foreign: (ready, done) word addresses here, in a region of the child's
    keep: list = field(default_factory=list)   # torch_s*: the torch tensors (spacer first) that hold this memory

    def of(self, kind):
        return [(a, t) for _, a, t in self.slots if a.kind == kind]


@dataclass
class State:
    name: str
    bufs: Buffers = None
    rotation: list = field(default_factory=list)   # the sets a rotating variant cycles through (rotation[0] is bufs)
    turn: int = -1
    samples: list = field(default_factory=list)
    host: list = field(default_factory=list)
    written: list = field(default_factory=list)
    error: str = ""


def describe(e):
    return f"{type(e).__name__}: {str(e).strip()[:300]}"


def poison_byte(a):
    return fidelity.SENTINEL_BYTE if a.dtype in fidelity.INT_DTYPES else 0xFF   # floats: all-ones bits, NaN


class Probe:
    """The variants of one (library, task, workload), on one input set made by fidelity.Harness.make_set."""

    def __init__(self, torch, a, plan, case, fn):
        self.torch, self.a, self.fn = torch, a, fn
        self.h = fidelity.Harness(torch, a)   # the flush buffer (2x L2) and make_set, as fidelity.py uses them
        # Created one after the other: consecutive pool streams sit on different hardware queues, so the gate's write
        # on `side` is never queued behind the wait on `stream` (a false dependency would hold the gate shut).
        self.stream, self.side = torch.cuda.Stream(), torch.cuda.Stream()
        self.start, self.stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        vals, _, keep = self.h.make_set(plan, case, a.seed)
        torch.cuda.synchronize()
        tensors = iter(keep)   # make_set keeps the input and output tensors in khive_launch's order
        slots = [(i, x, next(tensors)) for i, x in enumerate(case.args) if x.kind in ("input", "output")]
        vals[[x.kind for x in case.args].index("stream")] = ctypes.c_void_p(self.stream.cuda_stream)
        fn.restype, fn.argtypes = None, [type(v) for v in vals]
        self.memory = {"torch": Buffers(vals, slots)}
        self.staging = [t.clone() for _, t in self.memory["torch"].of("input")]
        self.gate_word, self.gate_v = torch.zeros(64, dtype=torch.int32, device="cuda"), 0
        self.lead_cycles = int(a.lead_us * 2000)   # ~2 GHz SM clock: about lead_us of spinning
        self.drv, self.child, self.stuck = None, None, False
        self.scratch = torch.empty(1 << 20, dtype=torch.float32, device="cuda")   # judge_primed's fill
        self.tlb_sink = torch.zeros(1 << 20, dtype=torch.uint8, device="cuda")   # judge_tlb's reads (64 GB of pages)

    def driver(self):
        if self.drv is None:
            self.drv = Driver(self.torch.cuda.current_device())
        return self.drv

    def buffers(self, kind):
        """The memory of a variant, made once per kind (variants of one kind share it): torch, vmm or arena."""
        if kind in self.memory:
            if self.memory[kind].error:
                raise RuntimeError(f"{kind} memory: {self.memory[kind].error}")
            return self.memory[kind]
        bufs = Buffers(list(self.memory["torch"].vals), [])
        self.memory[kind] = bufs   # registered first: close() frees whatever was mapped even if this fails
        try:
            return self._fill(kind, bufs)
        except Exception as e:
            bufs.error = describe(e)
            raise

    def _region(self, kind, nbytes, bufs):
        """One region of an arena-like memory kind: (its address here, the child's region id or None)."""
        if kind == "foreign":
            rid, fd, size = self.child.region(nbytes)
            r = self.driver().import_fd(fd, size)
        elif kind in ("ipc_foreign", "ipc_tensors"):
            rid, handle, size = self.child.ipc_region(nbytes)
            r = self.driver().ipc_open(handle, size)
        elif kind in ("malloc_arena", "malloc_tensors"):
            r, rid = self.driver().malloc(nbytes), None
        else:
            r, note = self.driver().alloc(nbytes, reimport=kind in ("arena", "arena_2m", "arena_one"))
            bufs.note = bufs.note or note
            rid = None
        bufs.regions.append(r)
        return r.ptr, rid

    def _fill(self, kind, bufs):
        torch, base, ptrs = self.torch, self.memory["torch"], []
        if kind.startswith("arena#"):   # one of the rotating sets: an arena of its own
            kind = "arena"
        if kind in ("vmm", "vmm_comp"):
            for _, _, t in base.slots:
                r, _ = self.driver().alloc(t.nbytes, compress=kind == "vmm_comp")
                bufs.regions.append(r)
                ptrs.append(r.ptr)
        elif kind in ("malloc_tensors", "ipc_tensors"):   # a region of its own per tensor, in argument order
            for _, _, t in base.slots:
                ptr, _ = self._region(kind, max(t.nbytes, 1), bufs)
                ptrs.append(ptr)
        elif kind in SHIFTS:   # torch's memory again, the spacer made first and kept while the tensors live
            bufs.keep = [torch.empty(SHIFTS[kind], dtype=torch.uint8, device="cuda")]
            for _, _, t in base.slots:
                bufs.keep.append(torch.empty(max(t.nbytes, 1), dtype=torch.uint8, device="cuda"))
                ptrs.append(bufs.keep[-1].data_ptr())
        elif kind == "arena_one":   # inputs and outputs packed in one region, in argument order
            sizes = [round_up(t.nbytes, ARENA_ALIGN) for _, _, t in base.slots]
            ptr, _ = self._region(kind, max(sum(sizes), 1), bufs)
            ptrs = [ptr + sum(sizes[:i]) for i in range(len(sizes))]
        else:   # arena: inputs packed in one region, outputs in another
            layout = {}
            for k in ("input", "output"):
                ts = [t for _, a, t in base.slots if a.kind == k]
                align = self.driver().granularity() if kind == "arena_2m" else ARENA_ALIGN
                sizes = [round_up(x.nbytes, align) for x in ts]
                offs = [sum(sizes[:i]) for i in range(len(ts) + 1)]
                if not ts:
                    continue
                ptr, rid = self._region(kind, offs[-1], bufs)
                layout[k] = (rid, offs)
                ptrs += [ptr + o for o in offs[:-1]]
            if kind == "foreign" and "input" in layout:
                # The child's reveal copies each input from a staging region (filled here once) into the arena.
                rid, offs = layout["input"]
                sid = self.staging_region(offs, bufs)
                for i in range(len(offs) - 1):
                    self.child.ask(f"copy {sid} {offs[i]} {rid} {offs[i]} {offs[i + 1] - offs[i]}", "ok")
        if kind == "foreign":
            gptr, gid = self._region("foreign", 4096, bufs)
            self.child.ask(f"gate {gid} 0 64", "ok")
            self.child.ask(f"flush {self.h.flush_buf.nbytes}", "ok")
            bufs.gate = (gptr, gptr + 64)
        for p, (i, a, t) in zip(ptrs, base.slots):
            v = torch.as_tensor(_DeviceBytes(p, t.nbytes), device="cuda").view(t.dtype).view(t.shape) if t.nbytes else t
            v.copy_(t)
            bufs.slots.append((i, a, v))
            bufs.vals[i] = ctypes.c_void_p(p)
        torch.cuda.synchronize()
        return bufs

    def staging_region(self, offs, bufs):
        """foreign: a region of the child's holding the inputs' staging copies (the arena's packing); its id there."""
        ptr, sid = self._region("foreign", offs[-1], bufs)
        torch = self.torch
        for o, src in zip(offs, self.staging):
            if src.nbytes:
                torch.as_tensor(_DeviceBytes(ptr + o, src.nbytes), device="cuda").copy_(src.view(-1).view(torch.uint8))
        torch.cuda.synchronize()
        return sid

    def sample(self, name, bufs):
        """One call under the variant: (device seconds between the events around the launch, host enqueue seconds)."""
        torch, S = self.torch, self.stream
        _, prep, gated, other = VARIANTS[name]
        if prep.startswith("judge"):
            return self.judge_sample(bufs, after_ready=prep.partition("+")[2])
        gate = None
        if other:
            self.child.ask("arm", "armed")
        try:
            h0 = time.perf_counter()
            with torch.cuda.stream(S):
                if self.lead_cycles:
                    torch.cuda._sleep(self.lead_cycles)
                if prep.startswith("reveal"):
                    for a, t in bufs.of("output"):
                        t.view(torch.uint8).fill_(poison_byte(a))
                    for (_, t), src in zip(bufs.of("input"), self.staging):
                        t.copy_(src)
                if prep.endswith("flush") or prep.endswith("flush+1blk"):
                    self.h.flush_buf.zero_()
                if prep.endswith("1blk"):
                    torch.cuda._sleep(1000)
                if gated:
                    self.gate_v += 1
                    gate = self.gate_v
                    self.driver().wait(S.cuda_stream, self.gate_word.data_ptr(), gate)
                self.start.record(S)
                self.fn(*bufs.vals)
                self.stop.record(S)
            host = time.perf_counter() - h0
            if gate is not None:
                time.sleep(self.a.gate_sleep_ms * 1e-3)   # the device idles at the gate meanwhile
                self.driver().write(self.side.cuda_stream, self.gate_word.data_ptr(), gate)
                gate = None
            self.wait_event(self.stop)
        finally:
            if gate is not None:   # a failure left the stream behind the gate: open it without the driver
                with torch.cuda.stream(self.side):
                    self.gate_word.fill_(gate)
            if other:
                self.child.ask("release", "released")
        return self.start.elapsed_time(self.stop) * 1e-3, host

    def judge_sample(self, bufs, after_ready=""):
        """foreign_judge: the child reveals, flushes and opens the gate from its context, and waits for `done`.
        after_ready: what the call's stream does between `ready` and the start event ("", prime, flush, rerun, tlb or
        tlbnf)."""
        torch, S = self.torch, self.stream
        self.gate_v += 1
        v = self.gate_v
        ready, done = bufs.gate
        h0 = time.perf_counter()
        with torch.cuda.stream(S):
            if self.lead_cycles:
                torch.cuda._sleep(self.lead_cycles)
            for a, t in bufs.of("output"):
                t.view(torch.uint8).fill_(poison_byte(a))
            self.driver().wait(S.cuda_stream, ready, v)
            if after_ready == "prime":
                self.scratch.zero_()
            if after_ready == "rerun":   # the kernel's code and constants warmed on other memory than the timed call's
                self.fn(*self.memory["torch"].vals)
            if after_ready in ("tlb", "tlbnf"):
                # A copy into a buffer made earlier: nothing here may allocate (a cudaMalloc can wait for the device,
                # whose stream waits for `ready`, which the child writes only once this host says `go`: a deadlock).
                for _, t in bufs.of("input") + bufs.of("output"):
                    if t.numel():
                        pages = t.reshape(-1).view(torch.uint8)[::TLB_STRIDE]
                        self.tlb_sink[:pages.numel()].copy_(pages)
            if after_ready in ("flush", "rerun", "tlb"):
                self.h.flush_buf.zero_()
            self.start.record(S)
            self.fn(*bufs.vals)
            self.stop.record(S)
            self.driver().write(S.cuda_stream, done, v)
        host = time.perf_counter() - h0
        self.child.ask(f"go {v}", "went")
        self.wait_event(self.stop)
        self.child.ask("sync", "synced")
        return self.start.elapsed_time(self.stop) * 1e-3, host

    def wait_event(self, ev, timeout=20.0):
        """Polls instead of synchronize(): a stream stuck behind a gate stops the probe instead of hanging it."""
        end = time.monotonic() + timeout
        while not ev.query():
            if time.monotonic() > end:
                self.stuck = True
                raise Stuck(f"the call did not end within {timeout:g} s (stream stuck; the process exits without freeing)")
            time.sleep(50e-6)

    def written(self, st):
        """Outputs poisoned, one call with the variant's method, then: is any output element still the poison?"""
        torch = self.torch
        with torch.cuda.stream(self.stream):
            for a, t in st.bufs.of("output"):
                t.view(torch.uint8).fill_(poison_byte(a))
        self.sample(st.name, st.bufs)
        bad = []
        for a, t in st.bufs.of("output"):
            if a.dtype == "bool" or not t.numel():
                continue   # any byte is a written bool
            size = t.element_size()
            pat = int.from_bytes(bytes([poison_byte(a)]) * size, "little", signed=True)
            n = int((t.view({1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[size]) == pat).sum().item())
            if n:
                bad.append(f"{a.name} {n}/{t.numel()}")
        return "yes" if not bad else "NO (" + ", ".join(bad) + " still poison)"

    def guarded(self, st, work):
        """work() for one variant: whatever it raises becomes that variant's error, and the others go on."""
        if self.stuck and not st.error:
            st.error = "not run on: an earlier call never ended"
        if st.error:
            return
        try:
            work()
        except Exception as e:   # noqa: BLE001  a driver error, a CUDA error, the child, a timeout: all go in the row
            st.error = describe(e)

    def next_bufs(self, st):
        """The memory of the variant's next call: its one Buffers, or the next set of a rotating variant."""
        if not st.rotation:
            return st.bufs
        st.turn += 1
        return st.rotation[st.turn % len(st.rotation)]

    def setup(self, st):
        kind = VARIANTS[st.name][0]
        if (VARIANTS[st.name][3] or kind in ("foreign", "ipc_foreign", "ipc_tensors")) and not isinstance(self.child, OtherContext):
            if self.child:   # an earlier variant's attempt failed: the same error, no second wait
                raise RuntimeError(self.child)
            try:
                self.child = OtherContext(self.a.child_timeout)
            except Exception as e:
                self.child = describe(e)
                raise
        if kind.endswith("*"):
            st.rotation = [self.buffers(f"{kind[:-1]}#{i}") for i in range(ROTATE)]
            st.bufs = st.rotation[0]
        else:
            st.bufs = self.buffers(kind)
        st.written.append(self.written(st))
        for _ in range(self.a.warmup * max(1, len(st.rotation))):
            self.sample(st.name, self.next_bufs(st))

    def one(self, st):
        t, host = self.sample(st.name, self.next_bufs(st))
        st.samples.append(t)
        st.host.append(host)

    def run(self, names):
        """Setup, written check and warm-up per variant, then the round-robin samples, then the written check again."""
        states = [State(n) for n in names]
        for st in states:
            self.guarded(st, lambda: self.setup(st))
        for _ in range(self.a.samples):
            for st in states:
                if not st.error:
                    self.guarded(st, lambda: self.one(st))
                    time.sleep(self.a.gap_ms * 1e-3)
        for st in states:
            self.guarded(st, lambda: st.written.append(self.written(st)))
        return states

    def close(self):
        """The child stopped, every VMM allocation unmapped and released (after the device is idle; not when a stream
        is stuck: synchronising would hang, and the process's exit frees everything)."""
        if isinstance(self.child, OtherContext):
            self.child.close()
        if self.stuck:
            return
        try:
            self.torch.cuda.synchronize()
        except RuntimeError:
            pass
        for kind, bufs in list(self.memory.items()):
            if kind != "torch":
                bufs.slots.clear()   # the views go before their memory
                for r in bufs.regions:
                    self.drv.free(r)


def load_case(a):
    """(Plan, Case) of --task and --workload: an exact uuid, else a regex matching exactly one workload."""
    d = pathlib.Path(a.task)
    t = load_task(d)
    ws = [w for w in t.workloads if w["uuid"] == a.workload] or \
        [w for w in t.workloads if re.search(a.workload, w["uuid"])]
    if len(ws) != 1:
        perf = [w["uuid"] for w in t.workloads if fidelity.perf_on_cuda(w)]
        raise TaskError(f"--workload {a.workload!r} matches {len(ws)} workloads of {d}; "
                        f"perf workloads on cuda: {', '.join(perf)}")
    axes = t.resolve_axes(ws[0])
    suite = d.resolve().parent.name
    plan = fidelity.Plan(key=f"{suite}/{d.resolve().name}", dir=d, suite=suite, name=t.name, task=t,
                         policy=list((t.khive.get("policy") or {}).get("libraries") or []))
    return plan, fidelity.Case(ws[0]["uuid"], ws[0].get("_where", ""), axes, fidelity.launch_args(t, ws[0], axes))


def find_library(a, plan, case):
    """(library path, how it was found, khive's numbers from --eval-json or None); path None: the error is in how."""
    khive = None
    key = None
    if a.eval_json:
        report = fidelity.parse_eval_output(pathlib.Path(a.eval_json).read_text()) or {}
        key = ((report.get("candidate") or {}).get("build") or {}).get("key")
        khive = fidelity.khive_times(report).get(case.uuid)
    if a.lib:
        return pathlib.Path(a.lib), "--lib", khive
    if a.source:
        k = fidelity.Kernel("source", a.source, path=pathlib.Path(a.source))
        lib, how = fidelity.nvcc_fallback(plan, k, pathlib.Path(a.scratch))
        return lib, (f"nvcc (not khive's build): {how}" if lib else how), khive
    lib = fidelity.cached_library(key)
    return lib, (f"khive cache, build key {key}" if lib else f"build key {key} not in khive's cache {fidelity.cache_root()} "
                 "(KHIVE_CACHE as when khive eval ran?)"), khive


def stats(xs):
    s = sorted(xs)
    return {"median_s": statistics.median(s), "p10_s": s[len(s) // 10], "p90_s": s[(9 * len(s)) // 10], "n": len(s)} if s else {}


def report(meta, states, khive, lead_s):
    """The markdown table and the JSON object (raw samples included)."""
    base = stats(next((st.samples for st in states if st.name == "plain"), []))
    us = lambda s: "-" if s is None else f"{s * 1e6:.2f}"   # noqa: E731
    L = [f"# Ruler probe: {meta['task']} {meta['workload']} ({meta['date']})", "",
         f"Device {meta['device']}; driver {meta['driver']}; torch {meta['torch']}; library `{meta['library']}` ({meta['how']}).",
         f"Axes {meta['axes']}; {meta['samples']} samples per variant after {meta['warmup']} warm-up calls, round-robin, "
         f"gap {meta['gap_ms']:g} ms, lead {meta['lead_us']:g} us, flush {meta['flush_mb']} MB. Command: `{meta['command']}`", ""]
    if khive:
        L += [f"khive eval: judge median {us(khive.get('median_s'))} us, executor events {us(khive.get('events_s'))} us"
              + (f" (judge / plain {khive['median_s'] / base['median_s']:.3f})" if base and khive.get("median_s") else ""), ""]
    L += ["| variant | n | median us | p10 | p90 | ratio to plain | written | error |", "|---|---|---|---|---|---|---|---|"]
    out = {"meta": meta, "khive": khive, "variants": {}}
    for st in states:
        s = stats(st.samples)
        ratio = s["median_s"] / base["median_s"] if s and base else None
        notes = [st.error] if st.error else []
        if st.bufs is not None and st.bufs.note:
            notes.append(st.bufs.note)
        host = statistics.median(st.host) if st.host else None
        if host is not None and lead_s and host > lead_s and not VARIANTS[st.name][2]:
            notes.append(f"host enqueue {host * 1e6:.1f} us > lead: launch time may be in the sample (raise --lead-us)")
        written = " / ".join(st.written) or "-"
        L.append(f"| {st.name} | {s.get('n', 0)} | {us(s.get('median_s'))} | {us(s.get('p10_s'))} | {us(s.get('p90_s'))} | "
                 f"{'-' if ratio is None else f'{ratio:.3f}'} | {written} | {'; '.join(notes).replace('|', '/') or '-'} |")
        out["variants"][st.name] = {**s, "ratio": ratio, "written": st.written, "error": st.error, "notes": notes,
                                    "host_enqueue_s": host, "samples_s": st.samples, "what": VARIANTS[st.name]}
    if meta.get("free_errors"):
        L += ["", "Freeing VMM memory: " + "; ".join(meta["free_errors"])]
    return "\n".join(L) + "\n", out


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n\n", 2)[2])
    p.add_argument("--task", required=True, help="task directory (tasks/cutegen26/kb14_matmul_upper_triangular)")
    p.add_argument("--workload", required=True, help="workload uuid (perf-4096), else a regex matching exactly one")
    p.add_argument("--lib", help="the library khive built: $KHIVE_CACHE/build/<key[:2]>/<key>/cand.so")
    p.add_argument("--source", help="a kernel .cu compiled with nvcc as fidelity.py's nvcc_fallback does (no --lib)")
    p.add_argument("--eval-json", help="a `khive eval --json` report: its candidate.build.key finds cand.so in khive's cache "
                                       "(when no --lib/--source), and its median for the workload is shown")
    p.add_argument("--samples", type=int, default=30, help="timed samples per variant (default 30)")
    p.add_argument("--warmup", type=int, default=3, help="untimed calls per variant first (default 3)")
    p.add_argument("--gap-ms", type=float, default=2.0, help="host sleep after every sample (default 2)")
    p.add_argument("--variants", "--repeat-variants", dest="variants", default=",".join(VARIANTS),
                   help=f"comma-separated subset, in round-robin order (default all: {','.join(VARIANTS)})")
    p.add_argument("--lead-us", type=float, default=100.0, help="spin kernel queued ahead of each sample (0: none; default 100)")
    p.add_argument("--gate-sleep-ms", type=float, default=1.0, help="gated: host sleep before opening the gate (default 1)")
    p.add_argument("--child-timeout", type=float, default=300.0, help="other context: the child quits after this many "
                                                                      "seconds without a command (default 300)")
    p.add_argument("--persisting-l2-zero", action="store_true",
                   help="set the persisting-L2 limit to 0 (cuCtxSetLimit) in this process's context and the child's, as "
                        "khive's judge and executors do (cudaDeviceSetLimit) before any variant runs")
    p.add_argument("--seed", type=int, default=11000, help="input set seed (default 11000: fidelity.py's first set)")
    p.add_argument("--scratch", default=f"/tmp/khive-ruler-probe-{os.getpid()}", help="folder for --source's build")
    p.add_argument("--out", help="also write the markdown here")
    p.add_argument("--json", help="write the raw samples and the table's numbers here")
    a = p.parse_args(argv)
    a.names = [v.strip() for v in a.variants.split(",") if v.strip()]
    bad = [v for v in a.names if v not in VARIANTS]
    if bad or not a.names:
        p.error(f"--variants: unknown {', '.join(bad) or '(none given)'}; known: {', '.join(VARIANTS)}")
    if not (a.lib or a.source or a.eval_json):
        p.error("give --lib, --source or --eval-json")
    if a.samples < 1 or a.warmup < 0:
        p.error("--samples must be >= 1 and --warmup >= 0")
    return a


def import_torch():
    try:
        import torch
    except ImportError:
        sys.path.insert(0, str(REPO / ".deps" / "torch"))
        try:
            import torch
        except ImportError:
            return None
    return torch


def main(argv=None):
    a = parse_args(argv)
    try:
        plan, case = load_case(a)
    except (TaskError, KeyError, ValueError, OSError) as e:
        print(f"ruler_probe: {describe(e)}", file=sys.stderr)
        return 2
    torch = import_torch()
    if torch is None or not torch.cuda.is_available():
        print("ruler_probe: needs a CUDA GPU (torch is missing or sees no CUDA device)", file=sys.stderr)
        return 2
    try:
        lib, how, khive = find_library(a, plan, case)
    except (OSError, ValueError) as e:
        print(f"ruler_probe: --eval-json: {describe(e)}", file=sys.stderr)
        return 2
    if not lib or not pathlib.Path(lib).is_file():
        print(f"ruler_probe: no library: {how if not lib else f'{lib}: no such file'}", file=sys.stderr)
        return 2
    torch.cuda.init()
    torch.empty(1, device="cuda")   # the primary context, current on this thread for the driver calls
    if a.persisting_l2_zero:   # CU_LIMIT_PERSISTING_L2_CACHE_SIZE; the child reads the variable (CHILD)
        os.environ["KHIVE_PROBE_L2_ZERO"] = "1"
        r = ctypes.CDLL("libcuda.so.1").cuCtxSetLimit(ctypes.c_int(6), ctypes.c_size_t(0))
        if r:
            print(f"ruler_probe: cuCtxSetLimit(persisting L2, 0): CUresult {r}", file=sys.stderr)
            return 2
    try:
        fn = ctypes.CDLL(str(lib), mode=os.RTLD_NOW | os.RTLD_LOCAL).khive_launch
        probe = Probe(torch, a, plan, case, fn)
    except Exception as e:   # noqa: BLE001  no variant can run: say why
        print(f"ruler_probe: setting up {lib} on {case.uuid}: {describe(e)}", file=sys.stderr)
        return 2
    try:
        states = probe.run(a.names)
    finally:
        probe.close()
    props = torch.cuda.get_device_properties(0)
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "task": plan.key,
            "workload": case.uuid, "axes": " ".join(f"{k}={v}" for k, v in case.axes.items()), "device": props.name,
            "driver": probe.drv.version if probe.drv else "-", "torch": f"{torch.__version__} (CUDA {torch.version.cuda})",
            "library": str(lib), "how": how, "samples": a.samples, "warmup": a.warmup, "gap_ms": a.gap_ms, "lead_us": a.lead_us,
            "flush_mb": f"{2 * probe.h.l2 / 1e6:.0f}",
            "command": " ".join(["ruler_probe.py"] + (sys.argv[1:] if argv is None else list(argv))),
            "free_errors": probe.drv.free_errors if probe.drv else []}
    md, js = report(meta, states, khive, a.lead_us * 1e-6)
    print(md, end="")
    if a.out:
        pathlib.Path(a.out).write_text(md)
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(js, indent=1))
    rc = 1 if any(st.error or any(w != "yes" for w in st.written) for st in states) else 0
    if probe.stuck:   # a stream is still behind its gate: no synchronisation, no finalisers; the driver cleans up
        sys.stdout.flush()
        os._exit(rc or 1)
    return rc


if __name__ == "__main__":
    sys.exit(main())
