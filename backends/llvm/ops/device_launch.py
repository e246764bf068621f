"""Device-side kernel launches (CUDA dynamic parallelism, CDP2): what a
launching grid's calls record, at run time.

CUDA C++ Programming Guide, "CUDA Dynamic Parallelism" (CDP2, the only
version on CC 9.0: https://docs.nvidia.com/cuda/cuda-programming-guide/
04-special-topics/dynamic-parallelism.html). A thread launches a grid with
``__cudaCDP2GetParameterBufferV2(func, grid, block, shared)`` (a buffer for
the child's parameters, which the thread then fills) and
``__cudaCDP2LaunchDeviceV2(buffer, stream)`` (ops/cdp_calls.py lowers the
calls). The grid does not run here: the call records a
:class:`DeviceLaunch` (kernel, grid, block, dynamic shared bytes, a copy of
the parameter bytes, stream, and the launching CTA and thread), and the
launcher runs the recorded grids after the launching grid, in an order the
guide allows (ptxc/launcher/device_launches.py, docs/runtime.md).

The calls, per executing lane in ascending lane order (one callback,
``ptxc_cdp_call``, per warp-level call, the signature of ptxc_device_call):

* GetParameterBufferV2: checks the function address (a kernel of the
  module: ptxc/ir/call_targets.function_address), the configuration (block <= 1024
  threads and (1024, 1024, 64), grid <= (2^31-1, 65535, 65535), no zero),
  the nesting depth (a grid at depth 24 cannot launch: the guide's
  hardware limit) and the pending launch count (``cudaLimitDevRuntime
  PendingLaunchCount``, 2048 by default); on failure it returns NULL and
  sets the thread's error (cudaErrorInvalidDeviceFunction 98,
  cudaErrorInvalidConfiguration 9, cudaErrorLaunchMaxDepthExceeded 65,
  cudaErrorLaunchPendingCountExceeded 69). The buffer is the kernel's
  parameter bytes, 64-byte aligned, in a segment of its own (``seg``).
* LaunchDeviceV2: records the launch; the stream is the block's NULL
  stream (0), ``cudaStreamTailLaunch`` (3), ``cudaStreamFireAndForget`` (4)
  or a stream the grid created; another buffer or stream returns (and
  sets) cudaErrorInvalidValue / cudaErrorInvalidResourceHandle.
* StreamCreateWithFlags: writes a new handle to ``*stream``; only
  ``cudaStreamNonBlocking`` is allowed on the device (else
  cudaErrorInvalidValue). StreamDestroy: 0 (pending work still runs).
* GetLastError / PeekAtLastError: the thread's last error (Get resets it).

An unreadable address (the stream pointer) returns the lane's bit, with the
address in ``out[lane]``: an out-of-bounds access at the call.
"""
from __future__ import annotations

import ctypes
import itertools
import struct
import threading
from dataclasses import dataclass, field

import numpy as np

from ptxc.backends.llvm import callbacks
from ptxc.backends.llvm import layout as Lo
from ptxc.ir.call_targets import function_address

(KIND_PARAM_BUFFER, KIND_LAUNCH, KIND_STREAM_CREATE, KIND_STREAM_DESTROY,
 KIND_GET_ERROR, KIND_PEEK_ERROR) = range(6)
_BASE = {KIND_PARAM_BUFFER: "GetParameterBufferV2", KIND_LAUNCH: "LaunchDeviceV2",
         KIND_STREAM_CREATE: "StreamCreateWithFlags", KIND_STREAM_DESTROY: "StreamDestroy",
         KIND_GET_ERROR: "GetLastError", KIND_PEEK_ERROR: "PeekAtLastError"}
# CUDA 12+ (nvcc 13 too) calls the __cudaCDP2 names; older toolkits the plain ones
KINDS = {**{"__cudaCDP2" + n: k for k, n in _BASE.items()}, **{"cuda" + n: k for k, n in _BASE.items()}}
NAMES = tuple(KINDS)
RESULT_BITS = {k: 64 if k == KIND_PARAM_BUFFER else 32 for k in _BASE}

STREAM_NULL, STREAM_TAIL, STREAM_FIRE_AND_FORGET = 0, 3, 4
NAMED_STREAMS = {STREAM_NULL: "the block's NULL stream", 1: "the block's NULL stream",
                 2: "the block's NULL stream", STREAM_TAIL: "cudaStreamTailLaunch",
                 STREAM_FIRE_AND_FORGET: "cudaStreamFireAndForget"}
FIRST_STREAM = 0x1000           # handles of device-created streams: FIRST_STREAM + 16 k
NON_BLOCKING = 1
MAX_DEPTH = 24                  # the guide: nesting is limited to 24 levels in hardware
DEFAULT_PENDING = 2048          # cudaLimitDevRuntimePendingLaunchCount's default
PARAM_ALIGN = 64

OK, INVALID_VALUE, INVALID_CONFIGURATION = 0, 1, 9
MAX_DEPTH_EXCEEDED, PENDING_EXCEEDED, INVALID_FUNCTION, INVALID_HANDLE = 65, 69, 98, 400
ERROR_NAMES = {INVALID_VALUE: "cudaErrorInvalidValue",
               INVALID_CONFIGURATION: "cudaErrorInvalidConfiguration",
               MAX_DEPTH_EXCEEDED: "cudaErrorLaunchMaxDepthExceeded",
               PENDING_EXCEEDED: "cudaErrorLaunchPendingCountExceeded",
               INVALID_FUNCTION: "cudaErrorInvalidDeviceFunction",
               INVALID_HANDLE: "cudaErrorInvalidResourceHandle"}
ARGTYPES = (ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
            ctypes.c_uint32, ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p)


@dataclass
class DeviceLaunch:
    """One grid launched by a thread of a running grid."""
    kernel: str                 # the child kernel's (mangled) name
    grid: tuple
    block: tuple
    shared: int                 # dynamic shared memory bytes
    params: bytes               # the parameter buffer as the launch left it
    stream: int                 # STREAM_NULL / _TAIL / _FIRE_AND_FORGET / a created handle
    cta: int                    # the launching CTA (linear index)
    ctaid: tuple
    tid: tuple
    seq: int = 0                # order of the warp-level calls within the grid
    lane: int = 0

    @property
    def stream_name(self) -> str:
        return NAMED_STREAMS.get(self.stream, f"stream {self.stream:#x}")

    @property
    def tail(self) -> bool:
        return self.stream == STREAM_TAIL


@dataclass
class LaunchContext:
    """Where a grid stands in the launch tree: its nesting depth (0: launched
    by the host), the launches outstanding elsewhere in the tree, the limit."""
    depth: int = 0
    outstanding: int = 0
    pending_limit: int = DEFAULT_PENDING


def param_size(fn) -> int:
    """Bytes of ``fn``'s parameters laid out with their alignment (plan.py)."""
    from ptxc.backends.llvm.plan import var_align   # (plan names the calls: passes.slice.memory_deps)
    off = 0
    for v in fn.params:
        a = var_align(v)
        off = -(-off // a) * a + max(v.size, 1)
    return off


def buffer_bytes(module, ctx: LaunchContext) -> int:
    """The parameter-buffer segment: room for every launch the limit allows."""
    sizes = [param_size(f) for f in module.kernels] or [0]
    slot = -(-max(max(sizes), 1) // PARAM_ALIGN) * PARAM_ALIGN
    return slot * max(1, min(ctx.pending_limit, DEFAULT_PENDING * 8))


@dataclass
class _Pending:
    fn: object
    grid: tuple
    block: tuple
    shared: int
    size: int


@dataclass
class DeviceLaunches:
    """The launches one grid makes (found by its launch state, ``active``)."""
    module: object
    seg: int
    shift: int
    array: np.ndarray
    ctx: LaunchContext = field(default_factory=LaunchContext)
    records: list = field(default_factory=list)
    errors: dict = field(default_factory=dict)      # (cta, tid) -> last error
    pending: dict = field(default_factory=dict)     # buffer offset -> _Pending

    def __post_init__(self):
        self.kernels = {function_address(self.module, f.name, self.shift): f for f in self.module.kernels}
        self.top = 0
        self.streams: set = set()
        self._seq = itertools.count()
        self._lock = threading.Lock()

    def ordered(self) -> list[DeviceLaunch]:
        """The records in issue order: CTAs in linear order, calls in the
        order the CTA's warps made them, lanes ascending (device_calls.py)."""
        return sorted(self.records, key=lambda r: (r.cta, r.seq, r.lane))

    def used(self) -> int:
        return self.ctx.outstanding + len(self.records) + len(self.pending)

    def param_buffer(self, key, func, grid, block, shared) -> int:
        fn = self.kernels.get(func)
        err = (INVALID_FUNCTION if fn is None else INVALID_CONFIGURATION if bad_config(grid, block, shared)
               else MAX_DEPTH_EXCEEDED if self.ctx.depth >= MAX_DEPTH
               else PENDING_EXCEEDED if self.used() >= self.ctx.pending_limit else OK)
        size = param_size(fn) if fn is not None else 0
        slot = -(-max(size, 1) // PARAM_ALIGN) * PARAM_ALIGN
        if err == OK and self.top + slot > self.array.nbytes:
            err = PENDING_EXCEEDED
        if err != OK:
            self.errors[key] = err
            return 0
        off, self.top = self.top, self.top + slot
        self.array[off:off + slot] = 0
        self.pending[off] = _Pending(fn, grid, block, shared, size)
        return (self.seg << self.shift) | off

    def launch(self, key, buf: int, stream: int, where: tuple) -> int:
        off = buf - (self.seg << self.shift)
        p = self.pending.pop(off, None) if buf >> self.shift == self.seg else None
        err = (INVALID_VALUE if p is None else OK if stream in NAMED_STREAMS or stream in self.streams
               else INVALID_HANDLE)
        if err != OK:
            self.errors[key] = err
            return err
        cta, ctaid, tid, seq, lane = where
        self.records.append(DeviceLaunch(p.fn.name, p.grid, p.block, p.shared,
                                         self.array[off:off + p.size].tobytes(),
                                         STREAM_NULL if stream in (1, 2) else stream,
                                         cta, ctaid, tid, seq, lane))
        return OK

    def stream_create(self, key, flags: int) -> tuple[int, int]:
        if flags != NON_BLOCKING:
            self.errors[key] = INVALID_VALUE
            return INVALID_VALUE, 0
        handle = FIRST_STREAM + 16 * len(self.streams)
        self.streams.add(handle)
        return OK, handle


def bad_config(grid, block, shared) -> bool:
    if min(*grid, *block) < 1 or block[0] * block[1] * block[2] > 1024:
        return True
    if block[0] > 1024 or block[1] > 1024 or block[2] > 64:
        return True
    return grid[0] > 2**31 - 1 or grid[1] > 65535 or grid[2] > 65535 or shared > 227 * 1024


_sinks: dict[int, DeviceLaunches] = {}


class active:
    """``with active(L address, launches):`` the grid's launches go to ``launches``."""

    def __init__(self, L: int, launches: DeviceLaunches | None):
        self.L, self.launches = L, launches

    def __enter__(self):
        if self.launches is not None:
            _sinks[self.L] = self.launches
        return self.launches

    def __exit__(self, *exc):
        _sinks.pop(self.L, None)


def _host(segs: int, nsegs: int, shift: int, lane: int, addr: int, n: int) -> int | None:
    """The host address of ``n`` writable bytes at ``addr`` for ``lane``
    (the write half of the segment table, runtime.Launch._segments)."""
    seg, off = addr >> shift, addr & ((1 << shift) - 1)
    if seg == Lo.SEG_NULL or seg >= nsegs or off % n:
        return None
    base, size, stride, _ = struct.unpack("<4q", ctypes.string_at(
        segs + Lo.SEG_ENTRY_BYTES * (nsegs + seg), 32))
    if off + n > size:
        return None
    return base + off + lane * stride


def _call(kind, L, cta, ws, segs, lanes, args, nargs, out) -> int:
    sink = _sinks.get(L)
    if sink is None:
        raise RuntimeError("a device-runtime call outside a launch that records device launches")
    nsegs = struct.unpack("<i", ctypes.string_at(L + Lo.L_NSEGS, 4))[0]
    ctaid = struct.unpack("<3i", ctypes.string_at(cta + Lo.CTA_ID, 12))
    linear = callbacks.cta_linear(cta)
    tids = [struct.unpack("<32i", ctypes.string_at(ws + Lo.WS_TID + 128 * k, 128)) for k in range(3)]
    vals = struct.unpack(f"<{32 * nargs}Q", ctypes.string_at(args, 256 * nargs)) if nargs else ()
    results = [0] * 32
    with sink._lock:
        seq = next(sink._seq)
        for lane in range(32):
            if not lanes >> lane & 1:
                continue
            a = [vals[k * 32 + lane] for k in range(nargs)]
            tid = tuple(t[lane] for t in tids)
            key = (linear, tid)
            if kind == KIND_PARAM_BUFFER:
                results[lane] = sink.param_buffer(key, a[0], tuple(a[1:4]), tuple(a[4:7]), a[7] & 0xFFFFFFFF)
            elif kind == KIND_LAUNCH:
                results[lane] = sink.launch(key, a[0], a[1], (linear, tuple(ctaid), tid, seq, lane))
            elif kind == KIND_STREAM_CREATE:
                host = _host(segs, nsegs, sink.shift, lane, a[0], 8)
                if host is None:
                    ctypes.memmove(out + 8 * lane, struct.pack("<Q", a[0]), 8)
                    return 1 << lane
                results[lane], handle = sink.stream_create(key, a[1] & 0xFFFFFFFF)
                if results[lane] == OK:
                    ctypes.memmove(host, struct.pack("<Q", handle), 8)
            elif kind == KIND_GET_ERROR:
                results[lane] = sink.errors.pop(key, OK)
            elif kind == KIND_PEEK_ERROR:
                results[lane] = sink.errors.get(key, OK)
    ctypes.memmove(out, struct.pack("<32q", *results), 256)
    return 0


_callback = callbacks.c_function(callbacks.guarded(_call, failed=1), ctypes.c_int32, *ARGTYPES)


def register_symbols(binding) -> None:
    """Make ``ptxc_cdp_call`` resolvable by the JIT (llvmlite.binding)."""
    callbacks.add_symbols(binding, {"ptxc_cdp_call": _callback})
