"""Running a compiled launch: its segments (buffers, the device heap, the
grid-sync workspace), the CTAs it runs (one per equivalence class where
that is exact, docs/cta-equivalence.md), the check tools and error
injection around the run, and the Profile it returns or the error it raises.
"""
from __future__ import annotations

import time

import numpy as np

from ptxc.ir.names import short
from ptxc.launcher import injection
from ptxc.launcher.args import addr_bits, is_pointer_param
from ptxc.launcher.buffers import private_buffers
from ptxc.launcher.checks import (activate, attach, check_tools, initcheck_active,
                                  initcheck_setup, make_checkers)
from ptxc.launcher.compile import compile_timed
from ptxc.launcher.faults import device_fault, run_error, space_sizes
from ptxc.launcher.limits import check_shared, read_only_writes
from ptxc.backends.llvm.layout import ERR_STEPS


def execute(module, fn, grid, block, params, buffers, arrays, mode, shared_bytes, max_steps, threads,
            memory: int = 0, cta_equivalence: bool = True, cooperative: bool = False,
            check: str | None = None, value_profile: bool = False, stack_size: int = 1024,
            children=None, device_ctx=None):
    """Run a launch whose buffers came from ``bind_args (one segment each,
    named after the pointer parameter it was bound to); copy results back.
    A kernel that launches kernels: ``children(prof, segments, names,
    module_memory, heap)`` runs the grids it launched (api.py) before the
    copy, on the same buffers, module variables and device heap."""
    from ptxc.backends.llvm.layout import SEG_FIRST_BUFFER
    c, compile_s = compile_timed(module, fn, mode, grid, block, memory, check, value_profile)
    buffers = private_buffers(c, mode, buffers, arrays)
    owners = [p.name for p in fn.params if is_pointer_param(p, addr_bits(fn))]
    segments, names = {}, {}
    for k, buf in enumerate(buffers):
        segments[SEG_FIRST_BUFFER + k] = buf
        names[SEG_FIRST_BUFFER + k] = ("buffer of parameter " + owners[k]) if k < len(owners) else f"buffer {k}"
    modmem = heap = None
    if c.launches_grids:        # the launched grids see this launch's variables and heap
        from ptxc.backends.llvm.ops import device_heap
        from ptxc.backends.llvm.runtime import ModuleMemory
        modmem = ModuleMemory.for_module(module)
        heap = device_heap.fresh(segments, c.plan.shift,
                                 redzone=16 if "memcheck" in check_tools(check) else 0)
        segments = {**segments, heap.seg: heap.array}
        names[heap.seg] = "the device heap (malloc)"
    prof = run_compiled(c, fn, grid, block, params, segments, shared_bytes, max_steps, threads,
                        memory=modmem, segment_names=names, compile_s=compile_s, heap=heap,
                        cta_equivalence=cta_equivalence and mode == "hybrid",
                        cooperative=cooperative, check=check, stack_size=stack_size,
                        device_ctx=device_ctx)
    if prof.device_launch_records and children is not None:
        children(prof, segments, names, modmem, heap)
    if mode == "full":
        read_only_writes(fn, buffers, arrays, owners)
        for buf, orig in zip(buffers, (o for _, o in arrays)):
            if not np.shares_memory(buf, orig) and orig.flags.writeable:
                np.copyto(orig, buf.view(orig.dtype).reshape(orig.shape), casting="no")
    return prof


def run_compiled(c, fn, grid, block, params, segments, shared_bytes, max_steps, threads,
                 memory=None, segment_names=None, compile_s: float = 0.0,
                 cta_equivalence: bool = False, heap=None, cooperative: bool = False,
                 check: str | None = None, shadow=None, stack_size: int = 1024, read_only=(),
                 device_ctx=None):
    """Run compiled kernel ``c`` on ``segments``; the Profile (raises PtxcError).
    ``stack_size``: the call stack of each thread, in bytes (cudaLimitStackSize).
    With ``check="memcheck"`` invalid accesses are recorded, not raised:
    ``prof.mem_errors`` (access_errors.MemcheckError list, first
    occurrence order) and ``prof.mem_error_count``.
    A kernel that calls malloc/free uses ``heap`` (a backends.llvm.heap
    DeviceHeap kept by the caller, or a function making it on first use, as
    the CUDA runtime does), or a fresh one
    for this launch; it runs every CTA (no CTA equivalence: each CTA's calls
    change the heap). A kernel that launches kernels records them in a
    parameter-buffer segment of its own (``device_ctx``: its place in the
    launch tree, ops/device_launch.LaunchContext); the Profile's
    ``device_launch_records`` lists them, run by device_launches.py."""
    from ptxc.backends.llvm import tier_up
    from ptxc.backends.llvm.jit import note_run
    from ptxc.backends.llvm.ops import device_heap
    from ptxc.backends.llvm.layout import spare_segment
    from ptxc.launcher.results import build_profile
    from ptxc.backends.llvm.runtime import Launch, RunError
    from ptxc.launcher.cta_classes import cta_classes
    check_shared(shared_bytes, c.plan.shared_static, short(fn.name, 100))
    t1 = time.perf_counter()
    memcheck = "memcheck" in check_tools(check)
    if c.uses_heap:
        heap = heap() if callable(heap) else heap      # the CUDA runtime makes it on demand
        heap = heap or device_heap.fresh(segments, c.plan.shift, redzone=16 if memcheck else 0)
        segments = {**segments, heap.seg: heap.array}
        segment_names = {**(segment_names or {}), heap.seg: "the device heap (malloc)"}
    elif callable(heap):        # a heap made by earlier launches (a bound method's object's .heap)
        heap = getattr(getattr(heap, "__self__", None), "heap", None)
    launches = None
    if c.launches_grids:
        segments, segment_names, launches = param_buffers(c, segments, segment_names, device_ctx)
    grid_ws = None
    if cooperative:      # the grid-sync workspace (%envreg1:2), zeroed, in a segment of its own
        seg = spare_segment(segments)
        segments = {**segments, seg: np.zeros(64, np.uint8)}
        segment_names = {**(segment_names or {}), seg: "the grid-sync workspace"}
        grid_ws = seg << c.plan.shift
    if not cta_equivalence:
        classes, note = None, "off"
    elif cooperative:
        classes, note = None, "off: a cooperative launch (its CTAs wait for each other)"
    else:
        classes, note = cta_classes(c, fn, grid, block, params, segment_sizes(c, segments))
    t_classes = time.perf_counter() - t1
    log = None
    if memcheck:
        from ptxc.backends.llvm.instruments.memcheck import MemcheckLog
        log = MemcheckLog()
        log.shadow_offsets = tuple(sorted(set(getattr(c.plan, "provenance_shadow", {}).values())))
    init = initcheck_setup(check, shadow)
    if init is not None:
        threads = 1          # CTAs in linear order: one answer for racing CTAs (docs/check.md)
    checkers = make_checkers(c, check_tools(check), cooperative)   # racecheck, synccheck
    run = Launch(c, grid, block, params, segments, shared_bytes, max_steps, threads, memory=memory,
                 grid_ws=grid_ws, memcheck=log, heap=heap if c.uses_heap else None,
                 stack_size=stack_size, read_only=read_only,
                 heap_bounds=heap if memcheck and heap is not None and heap.seg in segments else None)
    run.launches = launches
    run.tier = tier_up.for_launch(run, c, fn, plain=not check_tools(check) and not injection.wants(fn))
    try:
        with initcheck_active(run, init), injection.launch(c, fn, grid, block), \
                activate(run, checkers):
            counts = run.run(classes)
        tier_up.finish(run.tier)
    except RunError as e:
        tier_up.finish(run.tier)
        sizes = space_sizes(run, segment_names or {})
        sizes["shift"], sizes["params"] = c.plan.shift, bytes(params)
        err = run_error(c, fn, grid, block, e, max_steps, sizes, run.output.assertions(e.cta))
        if launches is not None and launches.records and e.code == ERR_STEPS:
            err.notes = "\n".join(filter(None, [err.notes, waits_note(len(launches.records))]))
        device_fault(err, e.code, run.output.printf(e.cta), run.output.assertions(e.cta))
        raise err from None
    t2 = time.perf_counter()
    prof = build_profile(c, counts, run.per_cta, fn, c.mode, grid, block)
    # a rate only for a launch that ran all its CTAs in one code (jit.note_run)
    mixed = (run.tier is not None and run.tier.switched is not None) or run.ctas_run != run.nctas
    note_run(fn, c, t2 - t1, 0 if mixed else prof.thread_inst_executed)   # tiered JIT (jit.py)
    prof.printf = run.output.printf()
    prof.device_launch_records = launches.ordered() if launches is not None else []
    prof.timings = {"compile": compile_s, "run": t2 - t1, "cta_classes": t_classes, **c.timings}
    if run.tier is not None and run.tier.switched is not None:   # O2 compiled during the run
        o2 = run.tier.switched.timings
        prof.timings["tier_up"] = o2.get("codegen", 0.0) + o2.get("llvm", 0.0)
    prof.ctas_launched, prof.ctas_run, prof.cta_equivalence = run.nctas, run.ctas_run, note
    if log is not None:
        from ptxc.launcher.access_errors import describe_errors
        sizes = space_sizes(run, segment_names or {})
        sizes["shift"], sizes["params"] = c.plan.shift, bytes(params)
        sizes["heap"] = run.heap_bounds
        prof.mem_errors = describe_errors(c, fn, log, sizes)
        prof.mem_error_count = log.total()
    if init is not None:
        from ptxc.launcher.access_errors import describe_uninit
        sizes = space_sizes(run, segment_names or {})
        sizes["shift"] = c.plan.shift
        prof.init_errors = describe_uninit(c, fn, init[1], sizes)
        prof.init_error_count = init[1].total()
    if c.value_profile:
        from ptxc.launcher.results_value import value_entries
        from ptxc.launcher.value_profile import make
        prof.value_profile = make(value_entries(c, counts))
    if checkers:
        attach(prof, c, fn, block, checkers)
    return prof


def waits_note(n: int) -> str:
    """Why a grid that launched grids may never end under ptxc."""
    return (f"note: this grid launched {n} grid{'s' if n != 1 else ''}, which ptxc runs after it "
            f"ends (docs/runtime.md, \"Device-side launches\"): a grid that waits for its "
            f"children through memory never sees them run")


def param_buffers(c, segments: dict, names, ctx):
    """The segment that device-side launches' parameter buffers live in,
    added to ``segments``; (segments, names, DeviceLaunches)."""
    from ptxc.backends.llvm.layout import spare_segment
    from ptxc.backends.llvm.ops.device_launch import DeviceLaunches, LaunchContext, buffer_bytes
    ctx = ctx or LaunchContext()
    seg = spare_segment(segments)
    array = np.zeros(buffer_bytes(c.plan.module, ctx), np.uint8)
    launches = DeviceLaunches(c.plan.module, seg, c.plan.shift, array, ctx)
    return ({**segments, seg: array}, {**(names or {}), seg: "the device-side launches' parameter buffers"},
            launches)


def segment_sizes(c, segments: dict) -> dict:
    """{segment: bytes} of the .global variables and the buffers of a launch
    (what the fault checks of CTA classes compare addresses with)."""
    from ptxc.backends.llvm.layout import SEG_GLOBALS
    return {SEG_GLOBALS: c.plan.global_size, **{s: b.nbytes for s, b in segments.items()}}
