"""Compiling a launch's kernel: the slice a hybrid run executes and whether
its CTAs must run in order, the variant its tools need (checks, value
profile, error injection), and the kernels of a module compiled together
(one LLVM module: its fixed cost dominates small kernels).
"""
from __future__ import annotations

import os
import time

from ptxc.errors import PtxcError
from ptxc.launcher import injection
from ptxc.launcher.alias import ensure_launch_slice, guessed_classes
from ptxc.launcher.checks import check_tools


def place_slice(module, fn, mode: str, classes, memory: int, threads,
                slice_options: dict | None = None) -> int:
    """Put the slice of this launch in place (a hybrid run executes it; a
    full run needs it to know whether CTAs must run in order: ctas_in_order)
    and return the worker threads to use, 1 when the CTAs must run in order."""
    opts = (slice_options or {}) if mode == "hybrid" else {}
    ensure_launch_slice(module, fn, classes, criteria=opts.get("criteria"),
                        memory=opts.get("memory"), addresses=bool(memory) and mode == "hybrid",
                        faults=opts.get("faults"))
    return 1 if ctas_in_order(module, fn) else threads or os.cpu_count() or 1


def ctas_in_order(module, fn) -> bool:
    """Must the CTAs of ``fn``'s launch run one after another, in linear CTA
    order (the order METRICS.md defines)? Yes when a read that decides
    control flow or guards may see a global write of the same launch
    (passes.slice SliceVariant.ordered, for the slice just put in place):
    run in parallel, a CTA could see another CTA's write or not, and the
    counters would depend on timing. Kernels with global atomics always run
    in order (runtime.Launch)."""
    variant = module.attrs.get("slice_variants", {}).get(module.attrs.get("slice_variant"))
    return True if variant is None else variant.ordered.get(fn.name, True)


def ensure_slice(module, fn, **options) -> None:
    """Mark the branch slice for a hybrid run. Without ``options`` the marks
    already on the module are used (a ``slice`` pass earlier in a pipeline
    chose them), else the default slice is computed; with ``options``
    (``mark_slice``'s keywords) that variant of the slice is put in place
    (computed once per module and options: passes.slice.select_slice)."""
    if not options and fn.attrs.get("sliced"):
        return
    try:
        from ptxc.passes.slice.slice_pass import select_slice
    except ImportError:                 # no slice pass: a hybrid run executes everything
        return
    select_slice(module, **options)


def compile_timed(module, fn, mode: str, grid, block, memory: int, check: str | None = None,
                  value_profile: bool = False):
    """(compiled kernel, seconds spent) for a launch of ``fn``."""
    from ptxc.backends.llvm import jit
    t0 = time.perf_counter()
    level = jit.choose_level(fn, mode, count(grid) * count(block))
    if injection.wants(fn):     # ptxc inject: its own variant (injection.py)
        if mode != "full":
            raise PtxcError("error injection needs a full run (mode='full')")
        return jit.compile_kernel(module, fn, mode, level, memory=memory, inject=True), \
            time.perf_counter() - t0
    tools = check_tools(check)
    # memcheck, initcheck, racecheck, synccheck, value profiling: variants (the
    # default code is unchanged)
    if tools or value_profile:
        return jit.compile_kernel(module, fn, mode, level, memory=memory,
                                  value_profile=value_profile,
                                  **{t: True for t in tools}), \
            time.perf_counter() - t0
    return compile_for_launch(module, fn, mode, level, memory), time.perf_counter() - t0


def compile_for_launch(module, fn, mode: str, level: int, memory: int = 0):
    """Compile ``fn``; on the second kernel of one module analysed in hybrid
    mode, compile every remaining kernel of the module in one batch (one LLVM
    module: its fixed cost dominates small kernels). ``memory``: the memory
    counters' bank width (0 = off; such launches are compiled one by one)."""
    from ptxc.backends.llvm import jit
    if memory:
        return jit.compile_kernel(module, fn, mode, level, memory=memory)
    if mode == "hybrid" and not jit.is_compiled(module, fn, mode, level) and len(module.kernels) > 2:
        seen = module.attrs.setdefault("hybrid_launched", set())
        seen.add(fn.name)
        if len(seen) >= 2:
            rest = [k for k in module.kernels if not jit.is_compiled(module, k, mode, level)]
            if fn not in rest:
                rest.append(fn)
            for k in rest:
                ensure_slice(module, k)
            jit.compile_many(module, rest, mode, level, skip_errors=True)
    return jit.compile_kernel(module, fn, mode, level)


def compile_launches(module, launches, mode: str, faults: str | None = None) -> dict:
    """Compile the kernels of several launches ``[(fn, grid, block)]`` ahead of
    running them, in one LLVM module per optimisation level (the launches then
    find them compiled). Kernels that cannot be compiled are left for their
    launch to report. Returns the seconds spent: {"codegen", "llvm"}. A
    hybrid kernel is compiled with the slice its launch will select for
    distinct buffers (alias.guessed_classes), so the launch finds it;
    ``faults`` is the slice option those launches will use (default: checked)."""
    from ptxc.backends.llvm import jit
    by_level: dict[int, list] = {}
    for fn, grid, block in launches:
        if mode == "hybrid":
            ensure_launch_slice(module, fn, guessed_classes(fn), faults=faults)
        by_level.setdefault(jit.choose_level(fn, mode, count(grid) * count(block)), []).append(fn)
    if not by_level:
        return {"codegen": 0.0, "llvm": 0.0}
    t0 = time.perf_counter()
    jit.runtime()                       # LLVM's start-up and the CTA loop (once per process)
    spent = {"codegen": 0.0, "llvm": time.perf_counter() - t0}
    for level, fns in by_level.items():
        for c in jit.compile_many(module, fns, mode, level, skip_errors=True):
            for key in spent:
                spent[key] += c.timings.get(key, 0.0) if c is not None else 0.0
    return spent


def count(dims) -> int:
    return dims[0] * dims[1] * dims[2]
