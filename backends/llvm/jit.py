"""Compile kernels (plan + code generator) to native code with llvmlite, and
cache the results per (kernel, mode, optimisation level) in ``module.attrs``
(so they live as long as the module).

Only the launched kernel and the functions it calls are compiled. Several
kernels of one module can be compiled together into one LLVM module
(``compile_many``): an LLVM module costs ~4 ms of fixed overhead, which
dominates when a whole module of small kernels is analysed (the hybrid runs
of an XLA module). Kernels whose generated code is identical are compiled
once, and object code is cached on disk per kernel (objcache.py). The
optimisation level is chosen per launch by ``choose_level`` (measurements in
docs/performance.md, "Compile time"): every kernel starts without IR
optimisation, and a kernel whose launches have run for many times its
compile time is recompiled with LLVM's O2 pipeline for its later launches
(tiered). The CTA loop (runtime_ir.py) is compiled once per process.
"""
from __future__ import annotations

import ctypes
import os
import threading
import time
from dataclasses import dataclass, field

from ptxc.errors import PtxcError
from ptxc.backends.llvm import local_regs
from ptxc.backends.llvm.guards import InvalidIR, gc_paused, invalid_ir_error

ENV_LEVEL = os.environ.get("PTXC_OPT")      # force a level (0-3) for experiments
BIG_KERNEL = 4000                           # instructions above which O2 costs seconds
TIER_UP_RATIO = float(os.environ.get("PTXC_TIER_UP_RATIO", 25))   # run s per level-0 compile s from which a kernel is recompiled at O2
                            # (O2 compiles in 6.6x level 0's time and saves ~25% of the run:
                            # docs/performance.md, "Compile time")
TIER_UP_MIN_S = 0.25        # ... and at least this many seconds of run time (choose_level)
REVERT_BELOW = 0.9          # O2's rate under this share of level 0's: the kernel stays at level 0
O2_MAX_IR_LINES = 40_000                    # generated IR lines above which O2 is not used (_levels)
_lock = threading.RLock()
_kernel_compiles = 0        # kernel compiles begun in this process (precompile_helpers' stop)
_llvm = None


@dataclass
class Compiled:
    """A compiled kernel: the plan, the counter layout and the entry point."""
    plan: object
    mode: str
    level: int
    n_counters: int
    branch_ctr: dict
    guard_ctr: dict
    ws_size: int
    uses_global_atomics: bool
    writes_global: bool
    unsupported: dict
    run_ctas: object
    warp_fn: int
    engine: object
    ir_text: str = ""
    timings: dict = field(default_factory=dict)
    memory_counters: bool = False   # coalescing / bank-conflict counters collected
    bank_bytes: int = 0             # their shared-memory bank width (4 or 8; 0 when off)
    mem_ctr: dict = field(default_factory=dict)   # instr id -> {space: counter base}
    uses_heap: bool = False         # calls device malloc / free (ops/device_heap.py)
    launches_grids: bool = False    # launches kernels (ops/cdp_calls.py, ops/device_launch.py)
    inject: bool = False            # the error-injection variant (inject_ir.py)
    value_ctr: dict = field(default_factory=dict)   # value profile: instr id -> [(dst, reg, bits, base)]
    value_or: list = field(default_factory=list)    # counters OR-reduced over workers (value_prof.py)
    value_profile: bool = False     # the value-profiling variant (value_prof.py)
    stack: dict | None = None       # a recursive kernel's call-stack sizes (ops/call_frames.py)
    atomics_commute: bool = False   # its global atomics leave the same bytes in any order (atomic_order.py)
    frame_bytes: int | None = None  # native stack its code may use (frames.py; None: unknown)
    profile_tables: object = None   # the static half of its launches' Profiles (launcher/profile_tables.py)

    @property
    def in_order(self) -> bool:
        """Its CTAs must run in linear order on one worker: global atomics
        that do not commute see one CTA order (atomic_order.py), the heap
        hands out the same addresses."""
        return ((self.uses_global_atomics and not self.atomics_commute) or self.uses_heap
                or self.launches_grids)


def llvm():
    """llvmlite.binding, initialised once (imported lazily: it is slow)."""
    global _llvm
    if _llvm is not None:
        return _llvm
    with _lock:                      # warm_up may initialise it in another thread
        if _llvm is None:
            _init_llvm()
    return _llvm


def _init_llvm() -> None:
    global _llvm
    if _llvm is None:
        import llvmlite.binding as b
        b.initialize_native_target()
        b.initialize_native_asmprinter()
        from ptxc.backends.llvm.instruments import check_hooks, initcheck, inject_ctl, memcheck
        from ptxc.backends.llvm.ops import coop, device_calls, device_launch, device_heap as heap
        heap.register_symbols(b)
        inject_ctl.register_symbols(b)
        memcheck.register_symbols(b)
        initcheck.register_symbols(b)
        check_hooks.register_symbols(b)
        coop.register_symbols(b)
        device_launch.register_symbols(b)   # device-side launches (device_launch.py)
        device_calls.register_symbols(b)    # vprintf / __assertfail reach Python (device_calls.py)
        from ptxc.backends.llvm.ops import texture as ops_tex
        ops_tex.register_symbols(b)
        _llvm = b


_tm = None
_host = None


def new_target_machine(opt: int = 2):
    """A fresh host TargetMachine: an execution engine takes ownership of
    (and frees) the one it is given, so engines never share one."""
    target, cpu, features = host()
    return target.create_target_machine(cpu=cpu, features=features, opt=min(opt, 3),
                                        codemodel="jitdefault", jit=True)


def host() -> tuple:
    """(target, CPU name, CPU features) of this machine, computed once."""
    global _host
    if _host is None:
        b = llvm()
        _host = (b.Target.from_default_triple(), b.get_host_cpu_name(),
                 b.get_host_cpu_features().flatten())
    return _host


def target_machine():
    """The shared TargetMachine of the pass builders (never given to an engine)."""
    global _tm
    if _tm is None:
        _tm = new_target_machine()
    return _tm


# ------------------------------------------------------------- policy
def choose_level(kernel, mode: str, threads: int) -> int:
    """0 (no IR optimisation) or 2 (LLVM O2) for a launch of ``kernel``.
    Every kernel starts at level 0; one that has proved hot (``note_run``:
    its earlier launches ran for TIER_UP_RATIO times its level-0 compile
    time, and TIER_UP_MIN_S at least) is compiled at O2 for its later
    launches, as a tiered JIT does. Measured over the test suite's
    applications (bench/opt_levels.py, docs/performance.md "Compile time"):
    O2 costs 2.5-3.5x the compile time of level 0 and saves 10-25% of the
    run time, so it pays only for kernels that run for seconds; the number
    of threads of a launch (the rule before) did not tell which do. A single
    long launch switches to O2 code between chunks of CTAs (tier_up.py).
    A kernel whose O2 code measured slower (``jit_o2_slower``: note_run,
    tier_up.py) stays at level 0. ``mode`` and ``threads`` are kept for
    callers; PTXC_OPT forces a level."""
    if ENV_LEVEL is not None:
        return int(ENV_LEVEL)
    if not kernel.attrs.get("jit_hot") or kernel.attrs.get("jit_o2_slower"):
        return 0
    size = sum(len(b.instrs) for b in kernel.blocks)
    return 0 if size > BIG_KERNEL else 2


def note_run(kernel, compiled, run_s: float, thread_inst: int = 0) -> None:
    """Count ``run_s`` seconds (``thread_inst`` thread instructions) of a
    launch of ``kernel`` compiled as ``compiled``; mark the kernel hot (O2
    from its next launch on) once its level-0 launches have run for
    TIER_UP_RATIO times what compiling it cost (TIER_UP_MIN_S at least).
    The choice is measured: once its O2 launches have run for TIER_UP_MIN_S,
    a kernel whose O2 rate (thread instructions per second) is under
    REVERT_BELOW of its level-0 rate is marked ``jit_o2_slower``
    and stays at level 0 (choose_level)."""
    if run_s > 0 and thread_inst > 0:
        rates = kernel.attrs.setdefault("jit_rates", {})
        s, n = rates.get(compiled.level, (0.0, 0))
        rates[compiled.level] = (s + run_s, n + thread_inst)
        if compiled.level > 0 and 0 in rates and rates[compiled.level][0] >= TIER_UP_MIN_S:
            (s0, n0), (s2, n2) = rates[0], rates[compiled.level]
            if n2 / s2 < REVERT_BELOW * n0 / s0:
                kernel.attrs["jit_o2_slower"] = True
    if compiled.level > 0 or kernel.attrs.get("jit_hot") or kernel.attrs.get("jit_o2_slower"):
        return
    spent = kernel.attrs["jit_run_s"] = kernel.attrs.get("jit_run_s", 0.0) + run_s
    cost = compiled.timings.get("codegen", 0.0) + compiled.timings.get("llvm", 0.0)
    if spent >= max(TIER_UP_MIN_S, TIER_UP_RATIO * cost):
        kernel.attrs["jit_hot"] = True


# -------------------------------------------------------------- caching
def _cache(module) -> dict:
    return module.attrs.setdefault("llvm_jit_cache", {})


def _key(kernel, mode: str, level: int, memory: int = 0,
         variants: frozenset = frozenset()):
    stamp = id(kernel.attrs.get("slice_report")) if mode == "hybrid" and kernel.attrs.get("sliced") else None
    return (kernel.name, mode, level, stamp) + ((memory,) if memory else ()) + tuple(sorted(variants))


VARIANTS = ("memcheck", "initcheck", "inject", "value_profile",    # compiled variants; the default
            "racecheck", "synccheck")                              # code is unchanged


def compile_kernel(module, kernel, mode: str, level: int = 0, keep_ir: bool = False,
                   memory: int = 0, **variant_flags) -> Compiled:
    """The compiled kernel, from the cache when possible (``memory``: the
    shared bank width of the memory counters, 0 = no memory counters).
    ``variant_flags`` name compiled variants (VARIANTS), e.g. memcheck=True:
    ``memcheck`` records invalid accesses and goes on (memcheck.py),
    ``initcheck`` tracks initialised global memory (initcheck.py),
    ``inject`` is the error-injection variant (inject_ir.py),
    ``value_profile`` profiles register values (value_prof.py),
    ``racecheck`` / ``synccheck`` call their checkers (check_hooks.py)."""
    variants = variant_set(variant_flags)
    _count_compile()
    with _lock:
        hit = _cache(module).get(_key(kernel, mode, level, memory, variants))
        if hit is None:
            hit = compile_many(module, [kernel], mode, level, keep_ir, memory=memory,
                               variants=variants)[0]
        return hit


def compile_many(module, kernels, mode: str, level: int = 0, keep_ir: bool = False,
                 skip_errors: bool = False, memory: int = 0,
                 variants: frozenset = frozenset()) -> list:
    """Compile several kernels of ``module`` into one LLVM module (cached).
    Kernels whose generated code is identical (XLA's many copies of one
    elementwise kernel) are compiled once; kernels found in the on-disk cache
    (objcache) are not compiled at all. With ``skip_errors``, kernels that
    cannot be compiled are left out (and None is returned for them)."""
    _count_compile()
    with _lock:
        cache = _cache(module)
        todo = list({_key(k, mode, level, memory, variants): k for k in kernels
                     if _key(k, mode, level, memory, variants) not in cache}.values())
        if todo:
            _compile_into(cache, module, todo, mode, level, keep_ir, skip_errors, memory, variants)
        return [cache.get(_key(k, mode, level, memory, variants)) for k in kernels]


def _count_compile() -> None:
    global _kernel_compiles
    _kernel_compiles += 1


def kernel_compiles() -> int:
    """A count that grows whenever a kernel compile is asked for in this
    process (compile_kernel counts before it waits for the JIT lock, and
    compile_many, which it calls, again: only a change matters)."""
    return _kernel_compiles


PLACEHOLDER = "run_warp"


def _generate(module, kernels, mode: str, level: int, skip_errors: bool, memory: int,
              variants: frozenset = frozenset()) -> list:
    """[(kernel, generator, function text)] with each function named after
    its key (objcache.key): identical code gets the same name."""
    from ptxc.backends.llvm.codegen import KernelCodegen
    from ptxc.backends.llvm.plan import Plan
    if "inject" in variants:
        from ptxc.backends.llvm.instruments.inject_ir import InjectCodegen as KernelCodegen   # noqa: N814
    out = []
    with gc_paused():                 # guards.py: compile time linear in kernel size
        for k in kernels:
            try:
                g = KernelCodegen(Plan(module, k), mode, name=PLACEHOLDER, memory_counters=memory)
                g.memcheck = "memcheck" in variants
                g.initcheck = "initcheck" in variants
                g.value_profile = "value_profile" in variants
                g.checks = tuple(v for v in ("racecheck", "synccheck") if v in variants)
                g.level = level
                g.plan.local_regs = local_regs.enabled() and not variants
                g.generate_function()
                text = g.function_text()
            except PtxcError:
                if not skip_errors:
                    raise
                continue
            g.name = f"run_warp_{_kernel_key(text, g, level)}"
            out.append((k, g, text.replace(f"@{PLACEHOLDER}(", f"@{g.name}(", 1)))
    return out


def _kernel_key(text: str, g, level: int) -> str:
    from ptxc.backends.llvm import objcache
    from ptxc.backends.llvm.prelude_ir import MEM_ERROR, PRELUDE, REPORT, RESOLVE
    _, cpu, features = host()
    from ptxc.backends.llvm import helper_lib
    return objcache.key([text, *sorted(g.helpers.values()), *sorted(g.decls), PRELUDE, RESOLVE, MEM_ERROR,
                         REPORT, str(level), cpu, features, str(llvm().llvm_version_info),
                         helper_lib.KEY, str(helper_lib.helpers_apart())])


def _compile_into(cache, module, todo, mode, level, keep_ir, skip_errors, memory,
                  variants=frozenset()) -> None:
    from ptxc.backends.llvm.codegen import module_text_of
    from ptxc.backends.llvm.atomic_order import commute
    from ptxc.backends.llvm.ops.call_frames import stack_info
    from ptxc.backends.llvm.pipeline import compile_pipelined
    t0 = time.perf_counter()
    frames: dict = {}
    made, engine, compiled, t_gen = compile_pipelined(
        todo, lambda part: _generate(module, part, mode, level, skip_errors, memory, variants),
        lambda unique, names: _objects(unique, level, names),
        lambda objs: _engine(objs, level, frames))
    if not made:
        return
    unique = {g.name: (g, text) for _, g, text in made}
    t1 = t0 + t_gen
    t2 = time.perf_counter()
    share = 1.0 / len(made)
    for k, g, text in made:
        cache[_key(k, mode, level, memory, variants)] = Compiled(
            plan=g.plan, mode=mode, level=level, n_counters=g.next_ctr,
            branch_ctr=g.branch_ctr, guard_ctr=g.guard_ctr, ws_size=g.ws_size,
            uses_global_atomics=g.uses_global_atomics, writes_global=g.writes_global,
            unsupported=getattr(g, "unsupported_ids", {}), run_ctas=runtime(),
            warp_fn=engine.get_function_address(g.name), engine=engine,
            ir_text=module_text_of([text], [g]) if keep_ir else "",
            timings={"codegen": (t1 - t0) * share, "llvm": (t2 - t1) * share,
                     "batch": len(made), "distinct": len(unique), "compiled": compiled},
            memory_counters=bool(memory), bank_bytes=memory, mem_ctr=g.mem_ctr,
            uses_heap=g.uses_heap, launches_grids=g.launches_grids, inject="inject" in variants, value_ctr=g.value_ctr,
            value_or=g.value_or, value_profile="value_profile" in variants,
            stack=stack_info(g), atomics_commute=commute(g.plan), frame_bytes=frames.get(g.name))


def variant_set(flags: dict) -> frozenset:
    """The compiled variants named by ``flags`` (name -> bool), checked."""
    unknown = set(flags) - set(VARIANTS)
    if unknown:
        raise TypeError(f"unknown compiled variant(s) {sorted(unknown)} (known: {VARIANTS})")
    return frozenset(name for name, on in flags.items() if on)


def is_compiled(module, kernel, mode: str, level: int, memory: int = 0) -> bool:
    return _key(kernel, mode, level, memory) in _cache(module)


# -------------------------------------------------------------- native
RUN_CTAS = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p,
                            ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)
_runtime = None
RUNTIME_LEVEL = 2                   # the CTA loop's optimisation level when it is cached


def precompile_helpers(bank_bytes: int, stop=None) -> None:
    """Compile the helper-library entries that most kernels call, at the
    level first launches get, before a kernel needs them: ``ptxc_resolve``
    and the fast path's shape test of 4-byte accesses (level 0 only:
    optimised code has their code inline) and, when
    ``bank_bytes`` (the launches count memory accesses), the memory
    counters' most common helpers (mem_count.common_helpers), in that
    order. ``stop()`` true ends it early (the warm-up's: once a kernel
    compile has begun; LLVM runs one call at a time, so a helper that kernel
    may not call would delay it, and one it calls is compiled then, once:
    helper_lib.entry_object)."""
    from ptxc.backends.llvm import helper_lib
    from ptxc.backends.llvm.instruments.mem_count import HelperSet, common_helpers
    from ptxc.backends.llvm.ops import fast_access
    from ptxc.backends.llvm.prelude_ir import RESOLVE
    if not helper_lib.helpers_apart():
        return
    level = int(ENV_LEVEL) if ENV_LEVEL is not None else 0
    h, names = common_helpers(bank_bytes) if bank_bytes else (HelperSet(), [])
    if level == 0:
        h.helpers["ptxc_resolve"] = RESOLVE
        names[:0] = ["ptxc_resolve", fast_access.define_shapes(h, 4)]
    _, lib = helper_lib.split(h.helpers)
    _, cpu, features = host()
    for name in names:
        if stop is not None and stop():
            return
        helper_lib.entry_object(name, lib, h.decls, helper_lib.entry_level(name, level), _emit,
                                [cpu, features, str(llvm().llvm_version_info)])


def runtime():
    """The CTA loop ``run_ctas`` (runtime_ir.py), compiled once per process.
    Its object code is cached on disk like the kernels', compiled at O2; with
    the cache off (PTXC_CACHE=0) every process compiles it, at O0: 5 ms
    instead of 40 ms, and a full run of 16384 CTAs of 64 threads with
    barriers (tests/cuda/reduce_shared) took the same time with either
    (13.2-14.1 ms, best of 3, within the noise)."""
    global _runtime
    if _runtime is not None:
        return _runtime[1]
    with _lock:
        _init_runtime()
    return _runtime[1]


def _init_runtime() -> None:
    global _runtime
    if _runtime is None:
        from llvmlite.binding.object_file import ObjectFileRef

        from ptxc.backends.llvm import objcache
        from ptxc.backends.llvm.runtime_ir import runtime_text
        b = llvm()
        text = runtime_text()
        _, cpu, features = host()
        level = RUNTIME_LEVEL if objcache.enabled() else 0
        key = objcache.key([text, "run_ctas", str(level), cpu, features, str(b.llvm_version_info)])
        obj = next(iter(objcache.lookup([key])), None)
        if obj is None:
            try:
                obj = _emit(text, level, "run_ctas")
            except InvalidIR as e:
                raise invalid_ir_error(e, [], "run_ctas") from None
            objcache.store(obj, [key])
        engine = b.create_mcjit_compiler(b.parse_assembly(""), new_target_machine(2))
        engine.add_object_file(ObjectFileRef.from_data(obj))
        engine.finalize_object()
        _runtime = (engine, RUN_CTAS(engine.get_function_address("run_ctas")))


def _optimise(mod, level: int) -> None:
    b = llvm()
    pto = b.create_pipeline_tuning_options(speed_level=level)
    pto.loop_vectorization = False
    pto.slp_vectorization = False
    pb = b.create_pass_builder(target_machine(), pto)
    pb.getModulePassManager().run(mod, pb)


def _objects(unique: dict, level: int, names: str) -> tuple:
    """([object code], how many functions were compiled) for every function
    of ``unique``: cached objects, and one LLVM module per optimisation level
    for the rest (its object cached). Calls no Python that the code
    generator uses, so it may run in a second thread (pipeline.py)."""
    from ptxc.backends.llvm import objcache
    keys = {name: name[len("run_warp_"):] for name in unique}
    found = objcache.lookup(keys.values())
    hits = {k for ks in found.values() for k in ks}
    missing = [name for name, k in keys.items() if k not in hits]
    objs = list(found)
    from ptxc.backends.llvm import helper_lib
    _, cpu, features = host()
    gens = [g for g, _ in unique.values()]
    try:
        objs += helper_lib.objects(gens, _emit, [cpu, features, str(llvm().llvm_version_info)])
    except InvalidIR as e:              # a code generator bug in a helper, reported as such
        raise invalid_ir_error(e, gens, names) from None
    if missing:
        for lvl, group in _levels(unique, missing, level).items():
            for group in helper_lib.apart(group, unique):
                objs.append(_emit_group(unique, group, lvl, names, keys))
    return objs, len(missing)


def _emit_group(unique: dict, group: list, lvl: int, names: str, keys: dict) -> bytes:
    """Object code of the functions ``group`` in one LLVM module (cached)."""
    from ptxc.backends.llvm import objcache
    from ptxc.backends.llvm.codegen import module_text_of
    gens = [unique[n][0] for n in group]
    try:
        obj = _emit(module_text_of([unique[n][1] for n in group], gens), lvl, names)
    except InvalidIR as e:
        raise invalid_ir_error(e, gens, names) from None
    objcache.store(obj, [keys[n] for n in group])
    return obj


def _engine(objs: list, level: int, frames: dict | None = None):
    """An execution engine holding the object code ``objs``; ``frames``
    (if given) receives {function name: the native stack bytes its object's
    code may use} (frames.py)."""
    from llvmlite.binding.object_file import ObjectFileRef
    from ptxc.backends.llvm.frames import object_frames
    b = llvm()
    for obj in dict.fromkeys(objs) if frames is not None else ():
        frames.update(object_frames(obj) or {})
    engine = b.create_mcjit_compiler(b.parse_assembly(""), new_target_machine(level))
    for obj in dict.fromkeys(objs):          # a helper_lib object once, whatever the chunks
        engine.add_object_file(ObjectFileRef.from_data(obj))
    engine.finalize_object()
    return engine


def _levels(unique: dict, names: list, level: int) -> dict:
    """{optimisation level: function names}: a function of more than
    O2_MAX_IR_LINES lines of IR is compiled at level 0 whatever was asked.
    LLVM's O2 pipeline and O2 code generation grow much faster than linearly
    with the size of one function (run_warp is one function with a dispatch
    switch over every block): 29k lines took 7.8 s at O2 against 1.0 s at
    level 0, 150k lines (a 7.6k-instruction unrolled GEMM) 282 s against
    2.8 s (docs/executor.md, "Optimisation level")."""
    out: dict[int, list] = {}
    for n in names:
        big = level > 0 and unique[n][1].count("\n") > O2_MAX_IR_LINES
        out.setdefault(0 if big else level, []).append(n)
    return out


def _emit(text: str, level: int, names: str) -> bytes:
    """Object code of one LLVM module of kernels (InvalidIR when LLVM refuses it)."""
    b = llvm()
    try:
        mod = b.parse_assembly(text)
        mod.verify()
    except RuntimeError as e:          # a code generator bug, not bad input
        raise InvalidIR(text, str(e)) from None
    if level > 0:
        _optimise(mod, level)
    elif local_regs.enabled():
        _promote(mod)
    return new_target_machine(level).emit_object(mod)


def _promote(mod) -> None:
    """Level 0's IR passes: the always-inliner (the prelude helpers' calls of
    each other, prelude_ir.py), then SROA, which turns the local registers'
    allocas (local_regs.py) and the code generator's scalar allocas into SSA
    values; linear in the code, compile time within noise
    (docs/performance.md, "Registers")."""
    b = llvm()
    pb = b.create_pass_builder(target_machine(), b.create_pipeline_tuning_options(speed_level=0))
    mpm = b.create_new_module_pass_manager()
    mpm.add_always_inliner_pass()
    mpm.run(mod, pb)
    fpm = b.create_new_function_pass_manager()
    fpm.add_sroa_pass()
    for fn in mod.functions:
        if not fn.is_declaration:
            fpm.run(fn, pb)
