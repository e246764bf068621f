"""The ptxc side of a run: answering the shim's requests, running launches.

One Session per application. Requests arrive one at a time (the shim holds
a lock around each), so the session needs no locking. A launch runs with
``launcher.launch_segments`` on the allocation table's segments and the
kernel's module memory; in hybrid mode with the ``effects`` slice (the
branch slice plus everything that writes memory the host can observe), so
that output buffers are those of a full run. A PtxcError during a launch
(out-of-bounds access, step budget, unsupported instruction, bad PTX) stops
the run: ptxc prints it and the shim exits the application; a failed device
assertion or a trap (any device fault with ``--on-error=cuda``) is a CUDA
error instead (faults.py). A launch reply carries the launch's device
printf output (faults.launch_reply). When the application dies while a
launch runs (a host thread crashed, it was killed), the launch is abandoned
within a fraction of a second (launch_wait.watching: its CTA workers take no
more work, as on Ctrl-C) and the session ends (``abandoned`` says which
launch it was; app.explain reports the death).
Under ``--clock model`` the reply also carries the launch's modelled GPU
time: the server predicts each launch as it completes
(ptxc/predict/app_report.py) and the shim adds that time to its device
clock (native/stream.c).
"""
from __future__ import annotations

import struct
import time
from dataclasses import dataclass, field

from ptxc.errors import PtxcError

from . import checks, faults
from . import protocol as P
from .devmem import DeviceMemory
from .modules import Registry

HYBRID_SLICE = {"criteria": "effects"}
# kernel, grid, block, flags, shared bytes, stream, graph launch (0: none), then the params
LAUNCH = struct.Struct("<I3I3IIQQQ")


class AppDied(P.Closed):
    """The application died (or closed its end of the socket) while a launch
    ran: the launch is abandoned and the session ends."""


@dataclass
class Options:
    mode: str = "hybrid"
    gpu: object = None               # ptxc.gpus.devices.GpuModel
    max_steps: int | None = None
    threads: int | None = None
    ptx: str | None = None
    keep_ptx: str | None = None
    memory_counters: bool = False    # coalescing / bank-conflict counters (docs/metrics.md)
    bank_bytes: int = 4
    value_profile: bool = False      # profile register values (a full run; docs/value-profile.md)
    on_error: str | None = None      # device faults: 'stop', 'cuda', 'continue' (memcheck:
                                     # bad accesses recorded, docs/check.md), 'abort' (ptxc
                                     # check: recorded, then the launch fails as under
                                     # compute-sanitizer, faults.memcheck_abort),
                                     # None = faults.DEFAULT
    checks: tuple = ()               # ptxc check's tools (runtime/checks.py, docs/check.md)
    kernel_filter: object = None     # ptxc check --kernel-name: kernel -> checked? (check/filters.py)
    clock: str = "host"              # 'model': predict each launch's GPU time (needs
                                     # memory_counters; runtime/gpu_time.py), 'host': host time


@dataclass
class LaunchRecord:
    """One kernel launch as the report shows it."""
    id: int
    kernel: str
    module: str
    grid: tuple
    block: tuple
    shared_bytes: int
    stream: int
    mode: str
    profile: object
    wall_s: float
    compile_s: float
    ptx_module: object = None         # the Module the launch ran (ptxc run --topdown, --by source, --html)
    graph: int = 0                    # the cudaGraphLaunch (1, 2, ...) that ran it; 0: none
    parent: int = 0                   # a device-side launch: the id of the launch whose grid
                                      # launched it (docs/runtime.md); 0: the host launched it
    prediction: dict | None = None    # ptxc.predict.analyse's result (--clock model, --topdown)
    prediction_error: str | None = None   # why the model could not predict it

    @property
    def gpu_s(self) -> float | None:
        """The modelled GPU seconds (None: not predicted)."""
        return self.prediction["prediction"].seconds if self.prediction is not None else None


@dataclass
class Session:
    options: Options
    channel: P.Channel
    progress: object = None           # .begin(kernel name, launches done), .end() (app.Progress)
    devmem: DeviceMemory = field(default_factory=DeviceMemory)
    launches: list = field(default_factory=list)
    connected: bool = False
    pid: int | None = None
    stopped: str | None = None        # why ptxc stopped the run
    unsupported: str | None = None    # the unsupported call the application made
    _pending: list = field(default_factory=list)
    heap: object = None               # the device heap of malloc/free (made at first use)
    heap_bytes: int = 8 << 20         # its size: cudaLimitMallocHeapSize (default 8 MiB)
    stack_bytes: int = 1024           # call stack per thread: cudaLimitStackSize (default 1 KiB)
    pending_launches: int = 2048      # device-side launches outstanding at most:
                                      # cudaLimitDevRuntimePendingLaunchCount (ops/device_launch.py)
    faults: list = field(default_factory=list)   # device faults returned as CUDA errors (faults.py)
    api_errors: list = field(default_factory=list)   # ptxc check: failed memory calls (checks.py)
    shadow: object = None             # ptxc check --tool initcheck: written bytes (checks.py)
    current: tuple | None = None      # (launch number, kernel) of the launch running now
    app: object = None                # the application's process (subprocess.Popen), if known
    abandoned: tuple | None = None    # (launch number, kernel) running when the application died
    predictor: object = None          # --clock model: app_report.LaunchPredictor (made at first use)

    def __post_init__(self):
        program = self.app.args[0] if self.app is not None and isinstance(self.app.args, list) \
            else None
        self.registry = Registry(self.devmem, self.options.gpu.sm, self.options.ptx,
                                 self.options.keep_ptx, program)
        self.handlers = {P.OP_HELLO: self.hello, P.OP_REGISTER_FATBIN: self.register_fatbin,
                         P.OP_REGISTER_FUNCTION: self.register_function,
                         P.OP_KERNEL_INFO: self.kernel_info, P.OP_SYMBOL: self.symbol,
                         P.OP_MALLOC: self.malloc, P.OP_REMAP: self.remap, P.OP_FREE: self.free,
                         P.OP_LAUNCH: self.launch, P.OP_UNSUPPORTED: self.note_unsupported,
                         P.OP_SET_HEAP_LIMIT: self.set_heap_limit,
                         P.OP_SET_STACK_LIMIT: self.set_stack_limit,
                         P.OP_SET_PENDING_LIMIT: self.set_pending_limit}
        from . import driver_modules, graph_memory, textures
        self.handlers.update(textures.handlers(self))
        self.handlers.update(graph_memory.handlers(self))     # graph memory nodes
        self.handlers.update(driver_modules.handlers(self))   # the driver API (libcuda.so.1)
        self.handlers.update(checks.handlers(self))

    # -------------------------------------------------------------- loop
    def serve(self) -> None:
        """Answer requests until the application closes the connection (or
        dies while a launch runs: AppDied)."""
        from ptxc.backends.llvm.launch_wait import watching
        try:
            with watching(self.check_app):
                self._serve()
        except (P.Closed, ConnectionResetError, BrokenPipeError):
            pass
        finally:
            self._close_pending()

    def _serve(self) -> None:
        while True:
            op, payload = self.channel.request()
            if op != P.OP_REMAP:
                self._close_pending()
            handler = self.handlers.get(op)
            if handler is None:
                raise PtxcError(f"internal error: unknown request {op} from the shim")
            try:
                handler(payload)
            except PtxcError as e:
                self.stop(e)

    def check_app(self) -> None:
        """Called while a launch runs (every launch_wait.POLL seconds): raise
        AppDied when the application's process has ended or its end of the
        socket is closed (no one is left to reply to)."""
        if self.app is None:
            return
        if self.app.poll() is None and not self.channel.peer_closed():
            return
        self.abandoned = self.current
        raise AppDied()

    def stop(self, err: PtxcError) -> None:
        """Stop the run: the shim exits the application with EXIT_STOPPED,
        after writing what the stopped launch printed (faults.fatal_reply)."""
        from ptxc.errors import render_error
        self.stopped = render_error(self.registry.with_source_line(err))
        self.channel.reply(P.ST_FATAL, faults.fatal_reply(P.EXIT_STOPPED, err))

    def _close_pending(self) -> None:
        """The shim maps a new allocation at once or asks for another number
        (OP_REMAP) in its very next request: after any other request the
        descriptors it was sent are no longer needed here."""
        for a in self._pending:
            self.devmem.close_fd(a)
        self._pending.clear()

    def _mapping_reply(self, allocations, head: bytes = b"") -> None:
        body = head + b"".join(P.mapping(a.seg, a.kind, a.size) for a in allocations)
        self._pending.extend(allocations)
        self.channel.reply(0, body, [a.fd for a in allocations])

    # ---------------------------------------------------------- requests
    def hello(self, payload: bytes) -> None:
        version, pid = struct.unpack_from("<II", payload)
        if version != P.PROTOCOL_VERSION:
            raise PtxcError(f"the application loaded a ptxc runtime of protocol {version}, "
                            f"this ptxc speaks {P.PROTOCOL_VERSION} (reinstall ptxc)")
        self.connected, self.pid = True, pid
        self.channel.reply(0, P.gpu_info_bytes(self.options.gpu))

    def register_fatbin(self, payload: bytes) -> None:
        _, version, n = struct.unpack_from("<QII", payload)
        end = len(payload) - n                  # a library's path follows its fat binary
        blob, objects = payload[16:end], []
        if version == 2:                        # -rdc=true: the objects' fat binaries follow
            from .rdc import split
            blob, objects = split(blob)
        fid = self.registry.register_fatbin(blob, linked=version == 2,
                                            origin=payload[end:].decode("utf-8", "replace") or None,
                                            objects=objects)
        self.channel.reply(0, struct.pack("<I", fid))

    def register_function(self, payload: bytes) -> None:
        fid, host = struct.unpack_from("<IQ", payload)
        name = payload[12:].decode("utf-8", "replace")
        self.channel.reply(0, struct.pack("<I", self.registry.register_function(fid, host, name)))

    def kernel_info(self, payload: bytes) -> None:
        k = self.registry.kernel(struct.unpack_from("<I", payload)[0])
        self.channel.reply(0, self.registry.kernel_info(k))

    def symbol(self, payload: bytes) -> None:
        fid, = struct.unpack_from("<I", payload)
        name = payload[4:].decode("utf-8", "replace")
        try:
            address, size, lm = self.registry.symbol(fid, name)
        except KeyError:
            self.channel.reply(P.CUDA_ERROR_INVALID_SYMBOL)
            return
        new = [a for a in lm.allocations if a.seg not in lm.mapped]
        lm.mapped.update(a.seg for a in new)
        head = struct.pack("<QQII", address, size, len(new), 0)
        self._mapping_reply(new, head)

    def malloc(self, payload: bytes) -> None:
        size, kind = struct.unpack_from("<QI", payload)
        gpu = self.options.gpu
        # KIND_MODULE from the shim: memory the runtime owns (graph conditional values)
        if kind not in (P.KIND_DEVICE, P.KIND_MANAGED, P.KIND_HOST, P.KIND_MODULE) or \
                (kind not in (P.KIND_HOST, P.KIND_MODULE)
                 and self.devmem.bytes_live + size > gpu.total_mem):
            self.channel.reply(P.CUDA_ERROR_MEMORY_ALLOCATION)
            return
        label = f"the CUDA runtime's memory ({size} bytes)" if kind == P.KIND_MODULE else None
        try:
            a = self.devmem.allocate(size, kind, label)
        except MemoryError:
            self.channel.reply(P.CUDA_ERROR_MEMORY_ALLOCATION)
            return
        checks.on_malloc(self, a, payload[12:])
        self._mapping_reply([a])

    def remap(self, payload: bytes) -> None:
        seg, = struct.unpack_from("<I", payload)
        a = self.devmem.by_seg.get(seg)
        if a is None or a.fd < 0:
            self.channel.reply(P.CUDA_ERROR_MEMORY_ALLOCATION)
            return
        self.devmem.remap(seg)
        checks.on_remap(self, seg, a.seg)
        for lm in {id(f.module): f.module for f in self.registry.fatbins if f.module}.values():
            if seg in lm.mapped:
                lm.mapped.discard(seg)
                lm.mapped.add(a.seg)
        self._mapping_reply([a])

    def free(self, payload: bytes) -> None:
        seg, = struct.unpack_from("<I", payload)
        ok = self.devmem.free(seg)
        checks.on_free(self, seg)
        self.channel.reply(0 if ok else P.CUDA_ERROR_INVALID_VALUE)

    def note_unsupported(self, payload: bytes) -> None:
        self.unsupported = payload.decode("utf-8", "replace")
        self.channel.reply(0)

    # ------------------------------------------------------------ launch
    def launch(self, payload: bytes) -> None:
        kid, gx, gy, gz, bx, by, bz, flags, shared, stream, graph = LAUNCH.unpack_from(payload)
        params = payload[LAUNCH.size:]
        k = self.registry.kernel(kid)
        fn = k.function
        grid, block = (gx, gy, gz), (bx, by, bz)
        err = self.check_config(fn, grid, block, shared)
        if err:
            self.channel.reply(err)
            return
        if self.progress:
            self.progress.begin(k.name, len(self.launches))
        self.current = (len(self.launches) + 1, k.name)
        try:
            record = self.run_launch(k, fn, grid, block, shared, stream, params,
                                     cooperative=bool(flags & P.LAUNCH_COOPERATIVE))
            record.graph = graph
        except PtxcError as e:
            self.current = None          # (still set when an interrupt ends the launch)
            fault = faults.as_cuda_error(e, checks.fault_policy(self.options, k.name))
            if fault is None:
                raise
            self.faults.append(fault)
            self.channel.reply(0, faults.launch_reply(fault.code, e.printf,
                                                      fault.stderr_text(self.registry.with_source_line(e))))
            return
        finally:
            if self.progress:
                self.progress.end()
        self.current = None
        self.launches.append(record)
        self.predict(record)
        printf = self.add_device_launches(record)
        abort = faults.memcheck_abort(record, self.options.on_error)
        if abort is not None:                 # ptxc check: as compute-sanitizer's application sees
            self.faults.append(abort)
            self.channel.reply(0, faults.launch_reply(abort.code, printf, gpu_s=record.gpu_s))
            return
        self.channel.reply(0, faults.launch_reply(0, printf, gpu_s=record.gpu_s))

    def add_device_launches(self, record: LaunchRecord) -> list:
        """The grids that ``record``'s kernel launched from the device (and
        theirs, in the order they ran: launcher/device_launches.py), each a
        launch of its own whose ``parent`` is the launch that made it; the
        printf output of the whole tree, in that order."""
        printf = list(record.profile.printf)
        ids = [record.id]
        for child in record.profile.device_launches:
            r = child.launched_by
            rec = LaunchRecord(len(self.launches) + 1, child.kernel, record.module, tuple(child.grid),
                               tuple(child.block), r.shared, record.stream, record.mode, child,
                               float(child.timings.get("run", 0.0)),
                               float(child.timings.get("compile", 0.0)),
                               ptx_module=record.ptx_module, graph=record.graph,
                               parent=ids[child.parent_index + 1])
            ids.append(rec.id)
            self.launches.append(rec)
            self.predict(rec)
            printf += child.printf
        return printf

    def predict(self, record: LaunchRecord) -> None:
        """Under ``--clock model``: the launch's modelled GPU time (or why
        there is none) on the record (ptxc/predict/app_report.py)."""
        if self.options.clock != "model":
            return
        if self.predictor is None:
            from ptxc.predict.app_report import LaunchPredictor
            self.predictor = LaunchPredictor(self.options.gpu.key)
        self.predictor.predict(record)

    def check_config(self, fn, grid, block, shared) -> int:
        """The cudaError_t a GPU would give this configuration (0: fine)."""
        gpu = self.options.gpu
        if min(grid) < 1 or min(block) < 1 or grid[0] > 2**31 - 1 or max(grid[1:]) > 65535:
            return P.CUDA_ERROR_INVALID_CONFIGURATION
        if block[0] > 1024 or block[1] > 1024 or block[2] > 64 or \
                block[0] * block[1] * block[2] > gpu.max_threads_per_block:
            return P.CUDA_ERROR_INVALID_CONFIGURATION
        req = fn.reqntid
        if req and tuple(req) + (1,) * (3 - len(req)) != block:
            return P.CUDA_ERROR_INVALID_CONFIGURATION
        if shared > gpu.shared_per_block_optin:
            return P.CUDA_ERROR_INVALID_CONFIGURATION
        return 0

    def device_heap(self):
        """The application's device heap (backends/llvm/ops/device_heap.py), one
        allocation of ``heap_bytes`` kept for the whole run, made when a
        kernel first calls malloc or free."""
        if self.heap is None:
            from ptxc.backends.llvm.ops.device_heap import DeviceHeap
            n = self.heap_bytes
            a = self.devmem.allocate(n, P.KIND_MODULE, f"the device heap (malloc, {n} bytes)")
            memcheck = "memcheck" in (checks.launch_check(self.options) or "")
            self.heap = DeviceHeap(a.seg, a.array, redzone=16 if memcheck else 0)
        return self.heap

    def set_heap_limit(self, payload: bytes) -> None:
        """cudaDeviceSetLimit(cudaLimitMallocHeapSize, n): the heap's size,
        refused (cudaErrorInvalidValue) once a kernel has used the heap."""
        from ptxc.backends.llvm.ops.device_heap import heap_size_for
        n, = struct.unpack_from("<Q", payload)
        if self.heap is not None:
            self.channel.reply(P.CUDA_ERROR_INVALID_VALUE)
            return
        self.heap_bytes = heap_size_for(n)
        self.channel.reply(0)

    def set_stack_limit(self, payload: bytes) -> None:
        """cudaDeviceSetLimit(cudaLimitStackSize, n): each thread's call
        stack in later launches (ops/call_frames.py); more than ptxc gives a
        thread (launcher.limits.MAX_STACK) is cudaErrorMemoryAllocation."""
        from ptxc.launcher.limits import MAX_STACK
        n, = struct.unpack_from("<Q", payload)
        if n > MAX_STACK:
            self.channel.reply(P.CUDA_ERROR_MEMORY_ALLOCATION)
            return
        self.stack_bytes = n
        self.channel.reply(0)

    def set_pending_limit(self, payload: bytes) -> None:
        """cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, n): how
        many device-side launches may be outstanding in later launches'
        trees (0 is cudaErrorInvalidValue)."""
        n, = struct.unpack_from("<Q", payload)
        if n < 1:
            self.channel.reply(P.CUDA_ERROR_INVALID_VALUE)
            return
        self.pending_launches = n
        self.channel.reply(0)

    def run_launch(self, k, fn, grid, block, shared, stream, params,
                   cooperative: bool = False) -> LaunchRecord:
        from ptxc.backends.llvm import crash
        from ptxc.launcher.api import launch_segments
        opts = self.options
        lm = k.fatbin.loaded()
        names = self.devmem.names()
        names[None] = "no allocation: a host pointer or a wild pointer"
        t0 = time.perf_counter()
        with crash.reply_to(self.channel.sock.fileno(), self.pid, P.EXIT_CRASHED,
                            f"launch {len(self.launches) + 1} of the application: "):
            prof = self._launch_segments(launch_segments, lm, fn, grid, block, shared, params,
                                         names, cooperative, k)
        checks.drop_unchecked(opts, k.name, prof)
        wall = time.perf_counter() - t0
        return LaunchRecord(len(self.launches) + 1, k.name, lm.label, grid, block, shared,
                            stream, opts.mode, prof, wall, prof.timings.get("compile", 0.0),
                            ptx_module=lm.module)

    def _launch_segments(self, launch_segments, lm, fn, grid, block, shared, params, names,
                         cooperative, k):
        from ptxc.backends.llvm.ops.device_launch import LaunchContext
        opts = self.options
        return launch_segments(lm.module, fn, grid, block, params, self.devmem.segments(),
                               mode=opts.mode, shared_bytes=shared, max_steps=opts.max_steps,
                               threads=opts.threads, memory=lm.memory, segment_names=names,
                               slice_options=HYBRID_SLICE if opts.mode == "hybrid" else None,
                               memory_counters=opts.memory_counters, bank_bytes=opts.bank_bytes,
                               heap=self.device_heap, cooperative=cooperative,
                               check=checks.launch_check(opts, k.name),
                               shadow=checks.shadow_of(self), value_profile=opts.value_profile,
                               stack_size=self.stack_bytes,
                               read_only=self.registry.read_only_segments(),
                               device_ctx=LaunchContext(pending_limit=self.pending_launches))
