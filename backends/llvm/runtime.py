"""The Python side of a launch: memory, workers, the CTA thread pool, errors.

Memory (layout.py): every buffer, the module's .global and .const variables
and the kernel parameters are segments of a flat 64-bit address space; each
worker (a pool thread) owns its shared memory, local memory, warp states and
counters, so workers never share mutable state except global memory. CTAs
are handed out in increasing linear order in chunks; the native
``run_ctas`` releases the GIL (ctypes), so the workers run in parallel.
Counters are sums, hence identical for any number of workers. Kernels with
global atomics or device malloc/free run on one worker so that atomics see
one CTA order and the heap hands out the same addresses (Compiled.in_order).
"""
from __future__ import annotations

import struct
import threading
from contextlib import nullcontext

import numpy as np

from ptxc import ir
from ptxc.ir.types import TYPE_SIZES

from ptxc.backends.llvm.ops import device_calls
from ptxc.backends.llvm import layout as Lo
from ptxc.backends.llvm.ops.device_calls import DeviceOutput


MAX_PER_CTA = 1 << 24          # larger grids report no per-CTA statistics (memory)
DEFAULT_STACK = 1024           # call stack bytes per thread: CUDA's default cudaLimitStackSize


def aligned(nbytes: int, align: int = 64) -> np.ndarray:
    """A zeroed uint8 array whose data is ``align``-byte aligned."""
    raw = np.zeros(max(int(nbytes), 1) + align, dtype=np.uint8)
    off = (-raw.ctypes.data) % align
    return raw[off:off + max(int(nbytes), 1)]


def ptr(a: np.ndarray) -> int:
    return a.ctypes.data


class RunError(Exception):
    """A run-time error reported by the generated code (decoded by launch)."""

    def __init__(self, code, cta, warp, lane, instr_id, addr):
        super().__init__(code)
        self.code, self.cta, self.warp, self.lane = code, cta, warp, lane
        self.instr_id, self.addr = instr_id, addr
        self.ws = None          # the failing warp's state (its registers), when known


class ModuleMemory:
    """A module's .const and .global variables: created and initialised once,
    then shared by every launch given it (a CUDA program's ``__device__`` and
    ``__constant__`` variables keep their values between launches). ``alloc``
    makes the byte arrays (the CUDA runtime passes memory the application
    maps too)."""

    def __init__(self, layout, alloc=None):
        alloc = alloc or (lambda nbytes: aligned(nbytes))
        self.layout = layout
        self.consts = alloc(layout.const_size + 16)
        self.globals = alloc(layout.global_size + 16)
        init_module_vars(layout, self.consts, self.globals)

    @classmethod
    def for_module(cls, module, alloc=None) -> "ModuleMemory":
        from ptxc.backends.llvm.plan import module_layout
        return cls(module_layout(module), alloc)

    def check(self, plan) -> None:
        """Refuse a plan whose variables do not fit (function-scope .global
        variables are laid out per kernel, after the module's)."""
        if plan.global_size + 16 > self.globals.size or plan.const_size + 16 > self.consts.size:
            from ptxc.errors import PtxcError
            from ptxc.ir.names import kernel_label
            raise PtxcError(f"{kernel_label(plan.kernel)}: not supported yet: function-scope "
                            f".global variables with module memory kept between launches")


class Launch:
    """One launch of a compiled kernel.

    ``segments`` maps segment numbers (>= layout.SEG_FIRST_BUFFER) to uint8
    arrays: the device memory the kernel may reach through generic/global
    addresses ``segment << shift | offset``. ``memory`` (a ModuleMemory) holds
    the module's variables; without it the launch gets fresh ones."""

    def __init__(self, compiled, grid, block, params: bytes, segments: dict,
                 dyn_shared: int, max_steps: int, threads: int, per_cta: bool = True,
                 memory: ModuleMemory | None = None, grid_ws: int | None = None,
                 memcheck=None, heap=None, stack_size: int = DEFAULT_STACK,
                 read_only=(), heap_bounds=None):
        self.c = compiled
        self.heap_bounds = heap_bounds      # memcheck: the DeviceHeap whose blocks bound accesses
        # segments kernels may read but not write: the .const variables (the
        # window cvta.const reaches and, under ptxc run, their allocation)
        self.read_only = frozenset(read_only) | {Lo.SEG_CONST}
        self.stack_size = int(stack_size)   # bytes of call stack per thread (cudaLimitStackSize)
        self.heap = heap                    # the ops/device_heap.DeviceHeap malloc/free use (or None)
        self.launches = None                # ops/device_launch.DeviceLaunches: device-side launches
        self.memcheck = memcheck            # a memcheck.MemcheckLog: record bad accesses, go on
        self.grid_ws = grid_ws              # cooperative launch: workspace address (coop.py)
        self.coop_abort = None
        plan = compiled.plan
        self.grid, self.block = grid, block
        self.nctas = grid[0] * grid[1] * grid[2]
        self.nthreads = block[0] * block[1] * block[2]
        self.nwarps = (self.nthreads + 31) // 32
        self.shared_total = plan.dyn_shared_base + dyn_shared if plan.has_dynamic_shared \
            else plan.shared_static + dyn_shared
        self.local_size = plan.local_size
        self.ws_size = compiled.ws_size     # bytes per warp state (+ the save area of a call stack)
        if compiled.stack is not None:      # recursion: the threads' call stacks (ops/call_frames.py)
            from ptxc.backends.llvm.ops.call_frames import stack_sizes
            local_stack, save = stack_sizes(compiled.stack, self.stack_size)
            self.local_size = plan.local_size + local_stack
            self.ws_size = compiled.ws_size + save
        self.params = aligned(max(plan.param_size, len(params)) + 16)
        self.params[:len(params)] = np.frombuffer(params, dtype=np.uint8)
        if memory is None:
            memory = ModuleMemory(plan)
        else:
            memory.check(plan)
        self.memory = memory
        self.consts, self.globals = memory.consts, memory.globals
        self.segments = segments
        self.nsegs = max([Lo.SEG_FIRST_BUFFER - 1] + list(segments)) + 1
        self.threads = max(1, int(threads))
        per_cta = per_cta and self.nctas <= MAX_PER_CTA
        self.per_cta = np.zeros(2 * self.nctas, dtype=np.int64) if per_cta else None
        self.L = self._launch_state(dyn_shared, max_steps)
        self.seg_template = self._segments()
        self.output = DeviceOutput(plan.shift)     # printf records, failed assertions
        self.race = None        # a racecheck.RaceChecker (ptxc.launcher.checks.activate): shadow per worker
        self.warp_fn = compiled.warp_fn     # the code CTAs run; tier_up.py may switch it to O2 code
        self.tier = None        # a tier_up.TierUp (set by the launcher), ticked while the workers run

    # ---------------------------------------------------------- structs
    def _launch_state(self, dyn_shared: int, max_steps: int) -> np.ndarray:
        L = aligned(Lo.L_SIZE)
        hb = self.heap_bounds
        if hb is not None:      # instruments/memcheck_heap.py
            struct.pack_into("<IIQQ", L, Lo.L_HEAP_SEG, hb.seg, len(hb.owner), ptr(hb.owner),
                             ptr(hb.ends))
        g, b = self.grid, self.block
        struct.pack_into("<4I4IQqIIIIQQII", L, 0, b[0], b[1], b[2], self.nthreads,
                         g[0], g[1], g[2], self.nwarps, ptr(self.params), max_steps,
                         self.shared_total, dyn_shared, self.local_size, self.nsegs,
                         ptr(self.per_cta) if self.per_cta is not None else 0,
                         self.grid_ws or 0, int(self.grid_ws is not None),
                         min(self.stack_size, 0xFFFFFFFF))
        return L

    def _segments(self) -> np.ndarray:
        """The segment table, twice: entries 0..nsegs-1 for reads, then the
        same for writes (generic stores, atomics) with the read-only
        segments of size 0, so that a write there fails its bounds check."""
        segs = self._read_segments()
        writes = segs.copy()
        for seg in self.read_only:
            if seg < self.nsegs:
                writes[seg, 1] = 0
        return np.concatenate([segs, writes])

    def _read_segments(self) -> np.ndarray:
        segs = np.zeros((self.nsegs, 4), dtype=np.int64)
        segs[:, 0] = ptr(self.params)          # a valid pointer everywhere (size 0 = no access)
        segs[Lo.SEG_PARAM] = (ptr(self.params), self.c.plan.param_size, 0, 0)
        segs[Lo.SEG_CONST] = (ptr(self.consts), self.c.plan.const_size, 0, 0)
        segs[Lo.SEG_GLOBALS] = (ptr(self.globals), self.c.plan.global_size, 0, 0)
        for seg, buf in self.segments.items():
            if seg < Lo.SEG_FIRST_BUFFER:
                raise ValueError(f"segment {seg} is reserved")
            segs[seg] = (ptr(buf) if buf.size else ptr(self.params), buf.nbytes, 0, 0)
        return segs

    # ------------------------------------------------------------- runs
    def run(self, classes=None) -> np.ndarray:
        """Run every CTA; returns the summed counters (raises RunError).
        With ``classes`` (passes.cta_classes.CtaClasses: CTAs that execute
        identically) run one representative per class and weight its
        counters by the class size; per-CTA numbers are copied to the members."""
        from ptxc.backends.llvm.ops import device_heap as heap
        from ptxc.backends.llvm.instruments import memcheck
        from ptxc.backends.llvm.ops import device_launch
        from ptxc.backends.llvm import crash
        with crash.running(self.crash_label()), device_calls.active(ptr(self.L), self.output), \
                device_launch.active(ptr(self.L), self.launches), \
                memcheck.active(ptr(self.L), self.memcheck or memcheck.MemcheckLog()), \
                (heap.active(self.heap) if self.heap is not None else nullcontext()):
            if classes is not None:
                return self._run_classes(classes)
            return self._run_all()

    def crash_label(self) -> str:
        """What a crash report says was running (crash.py)."""
        from ptxc.ir.names import short
        return (f"kernel {short(self.c.plan.kernel.name)} (grid {tuple(self.grid)}, "
                f"block {tuple(self.block)})")

    def _run_all(self) -> np.ndarray:
        self.ctas_run = self.nctas
        if self.grid_ws is not None:
            return self._run_cooperative()
        threads = 1 if self.c.in_order else min(self.threads, self.nctas)
        workers = [Worker(self) for _ in range(threads)]
        self._run_parallel(workers)          # in threads, also one: Ctrl-C stops it (launch_wait)
        errors = [w.error for w in workers if w.error is not None]
        if errors:
            raise min(errors, key=lambda e: e.cta)
        return self.reduce([w.counters for w in workers])

    def reduce(self, arrays: list) -> np.ndarray:
        """The workers' counters summed, except the value profile's masks
        (Compiled.value_or, value_prof.py), which are OR-ed: the same result
        for any number of workers."""
        total = sum(arrays)
        if self.c.value_or:
            idx = np.asarray(self.c.value_or, dtype=np.int64)
            total[idx] = np.bitwise_or.reduce(np.stack([a[idx] for a in arrays]), axis=0)
        return total

    def _run_classes(self, classes) -> np.ndarray:
        if self.c.value_or:             # CTAs of a class share counters, not register values
            raise ValueError("internal error: a value-profiled launch runs every CTA")
        reps, counts = classes.reps, classes.counts
        threads = 1 if self.c.in_order else min(self.threads, len(reps))
        workers = [Worker(self) for _ in range(threads)]
        totals = [np.zeros_like(w.counters) for w in workers]
        state = {"next": 0, "stop": len(reps), "done": 0}
        lock = threading.Lock()

        def loop(k_worker):
            w, total = workers[k_worker], totals[k_worker]
            while True:
                with lock:
                    k = state["next"]
                    if k >= state["stop"]:
                        return
                    state["next"] = k + 1
                w.counters[:] = 0
                w.run_range(int(reps[k]), int(reps[k]) + 1)
                if w.error is not None:
                    with lock:
                        state["stop"] = min(state["stop"], k)
                    return
                total += int(counts[k]) * w.counters
                state["done"] += 1

        self._run_pool(loop, len(workers), state, len(reps))
        errors = [w.error for w in workers if w.error is not None]
        if errors:
            raise min(errors, key=lambda e: e.cta)
        if self.per_cta is not None and classes.cta_class is not None:
            for half in (self.per_cta[0::2], self.per_cta[1::2]):
                half[:] = half[reps][classes.cta_class]
        self.ctas_run = len(reps)
        return sum(totals)

    def _run_cooperative(self) -> np.ndarray:
        """Every CTA resident at once, one worker each, under coop.py's baton.
        The first real error is raised; a launch stopped with no progress
        raises a RunError of code ERR_COOP_ABORT."""
        from ptxc.backends.llvm.ops.coop import run_cooperative
        workers = [Worker(self) for _ in range(self.nctas)]
        run_cooperative(self, workers)
        errors = [w.error for w in workers if w.error is not None]
        real = [e for e in errors if e.code != Lo.ERR_COOP_ABORT]
        if real or errors:
            raise min(real or errors, key=lambda e: e.cta)
        return self.reduce([w.counters for w in workers])

    def _run_pool(self, loop, n: int, state: dict, total: int) -> None:
        from ptxc.backends.llvm.launch_wait import run_threads
        from ptxc.backends.llvm.stacks import stack_bytes
        from ptxc.ir.names import short
        if self.tier is not None:
            state["tick"] = self.tier.tick
        self.thread_stack = stack_bytes(self.c.frame_bytes)     # tier_up.fits
        run_threads(loop, n, state, total, f"kernel {short(self.c.plan.kernel.name)}",
                    self.c.frame_bytes)

    def _run_parallel(self, workers) -> None:
        # chunks of at most 4096 CTAs: a progress line and Ctrl-C between them
        chunk = max(1, min(4096, self.nctas // (len(workers) * 16)))
        state = {"next": 0, "stop": self.nctas, "done": 0}
        lock = threading.Lock()

        def loop(k_worker):
            w = workers[k_worker]
            while True:
                with lock:
                    begin = state["next"]
                    if begin >= state["stop"]:
                        return
                    state["next"] = begin + chunk
                w.run_range(begin, min(begin + chunk, self.nctas))
                if w.error is not None:
                    with lock:
                        state["stop"] = min(state["stop"], w.error.cta)
                    return
                with lock:
                    state["done"] += min(chunk, self.nctas - begin)

        self._run_pool(loop, len(workers), state, self.nctas)


class Worker:
    """The private memory of one pool thread."""

    def __init__(self, launch: Launch):
        c = launch.c
        self.launch = launch
        self.ws_size = launch.ws_size
        self.ws = aligned(launch.nwarps * launch.ws_size)
        self.local = aligned(launch.nwarps * 32 * max(launch.local_size, 1))
        self.shared = aligned(launch.shared_total + 16)
        self.segs = launch.seg_template.copy()
        for half in (0, launch.nsegs):              # the read and the write table
            self.segs[half + Lo.SEG_SHARED] = (ptr(self.shared), launch.shared_total, 0, 0)
            self.segs[half + Lo.SEG_LOCAL] = (ptr(self.local), launch.local_size, launch.local_size, 0)
        self.counters = np.zeros(max(c.n_counters, 1), dtype=np.int64)
        self.cta = aligned(Lo.CTA_SIZE)
        if launch.race is not None:         # racecheck: this worker's shadow memory
            struct.pack_into("<Q", self.cta, Lo.CTA_RACE,
                             launch.race.attach(launch.shared_total, launch.nwarps, ptr(self.shared)))
        self.W = aligned(Lo.W_SIZE)
        struct.pack_into("<6Qq", self.W, 0, ptr(self.ws), ptr(self.local), ptr(self.shared),
                         ptr(self.segs), ptr(self.counters), ptr(self.cta), self.ws_size)
        self.error = None

    def run_range(self, begin: int, end: int) -> None:
        c = self.launch.c
        rc = c.run_ctas(ptr(self.launch.L), ptr(self.W), begin, end, self.launch.warp_fn)
        if rc != 0:
            cta, = struct.unpack_from("<q", self.W, Lo.W_ERR_CTA)
            warp, = struct.unpack_from("<i", self.W, Lo.W_ERR_WARP)
            base = warp * self.ws_size
            code, iid, lane = struct.unpack_from("<3i", self.ws, base + Lo.WS_ERR_CODE)
            addr, = struct.unpack_from("<Q", self.ws, base + Lo.WS_ERR_ADDR)
            self.error = RunError(code, cta, warp, lane, iid, addr)
            self.error.ws = bytes(self.ws[base:base + self.ws_size])   # provenance_message.py


# ------------------------------------------------------ module variables
def init_module_vars(plan, consts: np.ndarray, globals_: np.ndarray) -> None:
    """Write the initializers of .const and .global variables."""
    for v in plan.module.globals:
        if v.init is None:
            continue
        if v.space == "const" and v.name in plan.const_layout:
            write_init(plan, consts, plan.const_layout[v.name], v)
        elif v.space == "global" and v.name in plan.global_layout:
            write_init(plan, globals_, plan.global_layout[v.name], v)
    for v, off in plan.func_globals:
        if v.init is not None:
            write_init(plan, globals_, off, v)


def flatten(init):
    if isinstance(init, list):
        for x in init:
            yield from flatten(x)
    else:
        yield init


def write_init(plan, buf: np.ndarray, off: int, var) -> None:
    t = var.type
    es = TYPE_SIZES.get(t, 1)
    for i, item in enumerate(flatten(var.init)):
        pos = off + i * es
        if pos + es > buf.size or pos + es > off + max(var.size, es):
            break
        raw = init_bytes(plan, item, t, es)
        buf[pos:pos + es] = np.frombuffer(raw, dtype=np.uint8)


def init_bytes(plan, item, t: str, es: int) -> bytes:
    from ptxc.backends.llvm.values import const_bits
    generic = False
    if isinstance(item, tuple) and len(item) == 2:
        generic, item = item[0] == "generic", item[1]
    if isinstance(item, ir.Sym):
        val = symbol_value(plan, item, generic)
        return (val & ((1 << (8 * es)) - 1)).to_bytes(es, "little")
    if isinstance(item, ir.Imm):
        bt = t if t in ("f32", "f64", "f16", "bf16") else f"b{es * 8}"
        return const_bits(item, bt).to_bytes(es, "little")
    return bytes(es)


def symbol_value(plan, sym, generic: bool = False) -> int:
    """The value of a symbol in an initializer: what ``mov r, sym`` gives (a
    .global variable's address, a .const variable's offset in the .const
    space, a function's address), or its generic address for ``generic(sym)``."""
    name = sym.name
    if name in plan.global_layout:
        return (Lo.SEG_GLOBALS << plan.shift) | (plan.global_layout[name] + sym.offset)
    if name in plan.const_layout:
        off = plan.const_layout[name] + sym.offset
        return (Lo.SEG_CONST << plan.shift) | off if generic else off
    from ptxc.ir.call_targets import function_address     # a vtable's entries
    return function_address(plan.module, name, plan.shift) or 0
