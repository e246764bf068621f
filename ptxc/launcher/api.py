"""The entry points of a launch (docs/launch.md): ``launch`` on numpy
arrays (``ptxc.launch``), ``launch_segments`` on device memory the caller
manages (the CUDA runtime of ``ptxc run``), ``launch_from_options`` for
the CLI's ``--kernel --grid --block --arg`` (the ``count`` pass).

``launch(module, kernel, grid, block, args, mode)`` compiles the kernel (the
branch slice in a ``hybrid`` run, every instruction in a ``full`` run) with
ptxc.backends.llvm, runs every CTA with the SIMT model of METRICS.md and
returns a :class:`ptxc.launcher.profile.Profile`. In a full run, numpy arrays passed
as buffers are written back.
"""
from __future__ import annotations

import os

from ptxc.launcher.alias import classes_for_segments, classes_for_values
from ptxc.launcher.args import bind_args, normalise_args, parse_arg_strings
from ptxc.launcher.checks import check_option, check_value_profile
from ptxc.launcher.compile import compile_timed, place_slice
from ptxc.launcher.config import configure, default_block, find_kernel
from ptxc.launcher.device_launches import run_tree, tree_slice
from ptxc.launcher.execute import execute, run_compiled
from ptxc.backends.llvm.runtime import DEFAULT_STACK
from ptxc.backends.llvm.ops.device_launch import DEFAULT_PENDING, LaunchContext
from ptxc.launcher.limits import check_max_steps, check_stack_size


DEFAULT_MAX_STEPS = 100_000_000     # block executions per warp

UNCHECKED = {"faults": "unchecked"}     # launch(check_faults=False): the slice option


def launch(module, kernel=None, grid=(1, 1, 1), block=None, args=(), mode: str = "hybrid",
           shared_bytes: int = 0, max_steps: int | None = None, threads: int | None = None,
           memory_counters: bool = False, bank_bytes: int = 4, cta_equivalence: bool = True,
           cooperative: bool = False, check: str | None = None, value_profile: bool = False,
           check_faults: bool = True, stack_size: int = DEFAULT_STACK,
           pending_launch_limit: int = DEFAULT_PENDING):
    """Run ``kernel`` of ``module`` and return its Profile (see module doc).
    A hybrid run checks every access it skips, as the full run would, and
    stops at the same out-of-bounds, null or misaligned access
    (docs/slice.md, ``faults``); ``check_faults=False`` skips those checks
    for speed (the slice option ``faults=unchecked``): a hybrid run may then
    finish, with counters, where the full run stops at a bad access.
    ``value_profile=True`` (a full run) also profiles every register write
    (docs/value-profile.md): the Profile's ``value_profile``.
    ``check="memcheck"`` (a full run) records invalid accesses and goes on
    (docs/check.md): the Profile's ``mem_errors`` lists them.
    ``cooperative`` makes every CTA resident at once, as
    cudaLaunchCooperativeKernel does, so that the grid may synchronise
    (``cg::this_grid().sync()``; backends/llvm/ops/coop.py).
    ``memory_counters`` also collects the coalescing / bank-conflict counters
    (docs/metrics.md), with shared-memory banks of ``bank_bytes`` (4 or 8).
    ``stack_size`` is each thread's call stack in bytes (CUDA's
    ``cudaLimitStackSize``, 1024 by default): recursion deeper than it
    holds stops the launch with a stack overflow (docs/executor.md, "Calls").
    A kernel that launches kernels (dynamic parallelism) has the grids it
    launched run after it (launcher/device_launches.py): the Profile's
    ``device_launches``; ``pending_launch_limit`` is CUDA's
    ``cudaLimitDevRuntimePendingLaunchCount``.
    A hybrid run executes one CTA per equivalence class when the slice
    allows it (docs/cta-equivalence.md); ``cta_equivalence=False`` runs every CTA."""
    check_max_steps(max_steps)
    if isinstance(module, (str, os.PathLike)):
        from ptxc.frontend.parser import load_module
        module = load_module(module)
    fn, grid, block, memory = configure(module, kernel, grid, block, mode, shared_bytes,
                                        memory_counters, bank_bytes)
    check_option(check, mode)
    check_value_profile(value_profile, mode)
    slice_options = tree_slice(module, None if check_faults else UNCHECKED)
    threads = place_slice(module, fn, mode, classes_for_values(fn, normalise_args(fn, args)),
                          memory, threads, slice_options)
    params, buffers, arrays = bind_args(fn, args, mode)
    if int(pending_launch_limit) < 1:
        from ptxc.errors import PtxcError
        raise PtxcError(f"pending_launch_limit must be at least 1, not {pending_launch_limit}")
    top = LaunchContext(pending_limit=int(pending_launch_limit))

    def children(prof, segments, names, modmem, heap):   # device-side launches: device_launches.py
        run_tree(prof, lambda rec, ctx: launch_segments(
            module, rec.kernel, rec.grid, rec.block, rec.params, segments, mode, rec.shared,
            max_steps, threads, memory=modmem, segment_names=names, heap=heap,
            memory_counters=memory_counters,
            bank_bytes=bank_bytes, cta_equivalence=cta_equivalence, check=check,
            stack_size=stack_size, device_ctx=ctx, children=False,
            slice_options=slice_options), top)

    return execute(module, fn, grid, block, params, buffers, arrays, mode, shared_bytes,
                   max_steps or DEFAULT_MAX_STEPS, threads, memory,
                   cta_equivalence=cta_equivalence, cooperative=cooperative, check=check,
                   value_profile=value_profile, stack_size=check_stack_size(stack_size),
                   children=children, device_ctx=top)


def launch_from_options(module, opts: dict, mode: str):
    """The CLI's launch: ``opts`` as documented in docs/launch.md."""
    fn = find_kernel(module, opts.get("kernel"))
    block = opts.get("block") or default_block(fn)
    grid = opts.get("grid") or (1, 1, 1)
    args = parse_arg_strings(fn, opts.get("args") or [])
    return launch(module, fn, grid, block, args, mode=mode,
                  shared_bytes=int(opts.get("shared") or 0),
                  max_steps=opts.get("max_steps"), threads=opts.get("threads"),
                  memory_counters=bool(opts.get("memory_counters")),
                  bank_bytes=int(opts.get("bank_bytes") or 4),
                  cta_equivalence=opts.get("cta_equivalence", True), check=opts.get("check"),
                  value_profile=bool(opts.get("value_profile")))


def launch_segments(module, kernel, grid, block, params: bytes, segments: dict, mode: str = "hybrid",
                    shared_bytes: int = 0, max_steps: int | None = None, threads: int | None = None,
                    memory=None, segment_names: dict | None = None, slice_options: dict | None = None,
                    memory_counters: bool = False, bank_bytes: int = 4,
                    cta_equivalence: bool = True, heap=None, cooperative: bool = False,
                    check: str | None = None, shadow=None, value_profile: bool = False,
                    stack_size: int = DEFAULT_STACK, read_only=(), device_ctx=None,
                    children: bool = True):
    """Run a launch on device memory the caller manages (the CUDA runtime):
    ``params`` are the kernel parameter bytes as the kernel sees them (pointer
    values are generic addresses ``segment << 32 | offset``), ``segments``
    maps segment numbers (>= layout.SEG_FIRST_BUFFER) to uint8 arrays that are
    used in place, ``memory`` is a runtime.ModuleMemory kept between launches,
    ``segment_names`` ({segment: text}) name segments in error messages
    (also segments not in ``segments``, such as freed ones; the key None
    names any other segment). ``slice_options`` (``memory``, ``criteria``,
    ``faults`` as for mark_slice, e.g. ``{"criteria": "effects"}``) choose the slice of
    a hybrid run instead of the module's requested one, and
    ``memory_counters`` / ``bank_bytes`` are launch()'s. A hybrid run may
    execute one CTA per equivalence class (docs/cta-equivalence.md) unless
    ``cta_equivalence=False`` or the slice keeps writes to global memory
    (``criteria="effects"``: the outputs are needed). ``heap`` (a
    backends.llvm.heap.DeviceHeap) is the device heap that malloc/free use,
    kept by the caller between launches (default: a fresh one per launch);
    ``cooperative``, ``check`` and ``value_profile`` are launch()'s; ``shadow``
    (an initcheck.Shadow kept by the caller) records which bytes were
    written, for ``check="initcheck"``; ``stack_size`` is launch()'s
    (``cudaLimitStackSize``); ``read_only`` names segments kernels may read
    but not write (the .const variables' allocations: a store or atomic
    there is an error, as a write to a .const variable through a generic
    pointer is). A kernel that launches kernels (dynamic parallelism) has
    them run after it, with the same segments and module memory
    (device_launches.py): the Profile's ``device_launches``; ``children=False``
    leaves that to the caller, ``device_ctx`` is the grid's place in the
    launch tree (ops/device_launch.LaunchContext)."""
    check_max_steps(max_steps)
    fn, grid, block, mem = configure(module, kernel, grid, block, mode, shared_bytes,
                                     memory_counters, bank_bytes)
    check_option(check, mode)
    check_value_profile(value_profile, mode)
    classes = classes_for_segments(fn, bytes(params), segments, memory)
    slice_options = tree_slice(module, slice_options)      # device launches: criteria=effects
    threads = place_slice(module, fn, mode, classes, mem, threads, slice_options)
    c, compile_s = compile_timed(module, fn, mode, grid, block, mem, check, value_profile)
    if memory is None and c.launches_grids:     # the launched grids see this launch's variables
        from ptxc.backends.llvm.runtime import ModuleMemory
        memory = ModuleMemory.for_module(module)
    prof = run_compiled(c, fn, grid, block, bytes(params), segments, shared_bytes,
                        max_steps or DEFAULT_MAX_STEPS, threads,
                        memory=memory, segment_names=segment_names, compile_s=compile_s,
                        cta_equivalence=cta_equivalence and mode == "hybrid", heap=heap,
                        cooperative=cooperative, check=check, shadow=shadow,
                        stack_size=check_stack_size(stack_size), read_only=read_only,
                        device_ctx=device_ctx)
    if children and prof.device_launch_records:
        run_tree(prof, lambda rec, ctx: launch_segments(
            module, rec.kernel, rec.grid, rec.block, rec.params, segments, mode, rec.shared,
            max_steps, threads, memory=memory, segment_names=segment_names,
            slice_options=slice_options, memory_counters=memory_counters, bank_bytes=bank_bytes,
            cta_equivalence=cta_equivalence, heap=heap, check=check, shadow=shadow,
            stack_size=stack_size, read_only=read_only, device_ctx=ctx, children=False),
            device_ctx)
    return prof
