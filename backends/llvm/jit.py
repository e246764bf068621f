"""Compile kernels (plan + code generator) to native code with llvmlite, and
cache the results per (kernel, mode, optimisation level) in ``module.attrs``
(so they live as long as the module).

Only the launched kernel and the functions it calls are compiled. Several
kernels of one module can be compiled together into one LLVM module
(``compile_many``): an LLVM module costs ~4 ms of fixed overhead, which
dominates when a whole module of small kernels is analysed (the hybrid runs
of an XLA module). The optimisation level is chosen per launch by
``choose_level`` (measurements in docs/executor.md): small launches are
dominated by compile time and use no IR optimisation; big full-mode launches
use LLVM's O2 pipeline. The CTA loop (runtime_ir.py) is compiled once per
process.
"""
from __future__ import annotations

import ctypes
import itertools
import os
import threading
import time
from dataclasses import dataclass, field

from ptxc.errors import PtxcError

ENV_LEVEL = os.environ.get("PTXC_OPT")      # force a level (0-3) for experiments
BIG_LAUNCH = 1 << 16                        # threads from which O2 pays off (full mode)
BIG_KERNEL = 4000                           # instructions above which O2 costs seconds
_lock = threading.RLock()
_llvm = None
_names = itertools.count()


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


def llvm():
    """llvmlite.binding, initialised once (imported lazily: it is slow)."""
    global _llvm
    if _llvm is None:
        import llvmlite.binding as b
        b.initialize_native_target()
        b.initialize_native_asmprinter()
        _llvm = b
    return _llvm


_tm = None
_host = None


def new_target_machine(opt: int = 2):
    """A fresh host TargetMachine: an execution engine takes ownership of
    (and frees) the one it is given, so engines never share one."""
    global _host
    b = llvm()
    if _host is None:
        _host = (b.Target.from_default_triple(), b.get_host_cpu_name(),
                 b.get_host_cpu_features().flatten())
    target, cpu, features = _host
    return target.create_target_machine(cpu=cpu, features=features, opt=min(opt, 3),
                                        codemodel="jitdefault", jit=True)


def target_machine():
    """The shared TargetMachine of the pass builders (never given to an engine)."""
    global _tm
    if _tm is None:
        _tm = new_target_machine()
    return _tm


# ------------------------------------------------------------- policy
def choose_level(kernel, mode: str, threads: int) -> int:
    """0 (no IR optimisation) or 2 (LLVM O2) for a launch of ``threads`` threads
    (either mode: a big hybrid launch also pays for the optimiser)."""
    if ENV_LEVEL is not None:
        return int(ENV_LEVEL)
    if threads < BIG_LAUNCH:
        return 0
    size = sum(len(b.instrs) for b in kernel.blocks)
    return 2 if size <= BIG_KERNEL else 0


# -------------------------------------------------------------- caching
def _cache(module) -> dict:
    return module.attrs.setdefault("llvm_jit_cache", {})


def _key(kernel, mode: str, level: int, memory: int = 0):
    stamp = id(kernel.attrs.get("slice_report")) if mode == "hybrid" and kernel.attrs.get("sliced") else None
    return (kernel.name, mode, level, stamp) + ((memory,) if memory else ())


def compile_kernel(module, kernel, mode: str, level: int = 0, keep_ir: bool = False,
                   memory: int = 0) -> Compiled:
    """The compiled kernel, from the cache when possible (``memory``: the
    shared bank width of the memory counters, 0 = no memory counters)."""
    with _lock:
        hit = _cache(module).get(_key(kernel, mode, level, memory))
        if hit is None:
            hit = compile_many(module, [kernel], mode, level, keep_ir, memory=memory)[0]
        return hit


def compile_many(module, kernels, mode: str, level: int = 0, keep_ir: bool = False,
                 skip_errors: bool = False, memory: int = 0) -> list:
    """Compile several kernels of ``module`` into one LLVM module (cached).
    With ``skip_errors``, kernels that cannot be compiled are left out (and
    None is returned for them)."""
    from .codegen import KernelCodegen, module_text
    from .plan import Plan
    with _lock:
        cache = _cache(module)
        todo = [k for k in kernels if _key(k, mode, level, memory) not in cache]
        if todo:
            t0 = time.perf_counter()
            gens, ok = [], []
            for k in todo:
                try:
                    g = KernelCodegen(Plan(module, k), mode, name=f"run_warp_{next(_names)}",
                                      memory_counters=memory)
                    g.generate_function()
                except PtxcError:
                    if not skip_errors:
                        raise
                    continue
                gens.append(g)
                ok.append(k)
            todo = ok
            if not todo:
                return [cache.get(_key(k, mode, level, memory)) for k in kernels]
            text = module_text(gens)
            t1 = time.perf_counter()
            engine = _native(text, level, ", ".join(k.name for k in todo))
            t2 = time.perf_counter()
            share = 1.0 / len(todo)
            for k, g in zip(todo, gens):
                cache[_key(k, mode, level, memory)] = Compiled(
                    plan=g.plan, mode=mode, level=level, n_counters=g.next_ctr,
                    branch_ctr=g.branch_ctr, guard_ctr=g.guard_ctr, ws_size=g.ws_size,
                    uses_global_atomics=g.uses_global_atomics, writes_global=g.writes_global,
                    unsupported=getattr(g, "unsupported_ids", {}), run_ctas=runtime(),
                    warp_fn=engine.get_function_address(g.name), engine=engine,
                    ir_text=text if keep_ir else "",
                    timings={"codegen": (t1 - t0) * share, "llvm": (t2 - t1) * share,
                             "batch": len(todo)},
                    memory_counters=bool(memory), bank_bytes=memory, mem_ctr=g.mem_ctr)
        return [cache.get(_key(k, mode, level, memory)) for k in kernels]


def is_compiled(module, kernel, mode: str, level: int, memory: int = 0) -> bool:
    return _key(kernel, mode, level, memory) in _cache(module)


# -------------------------------------------------------------- native
RUN_CTAS = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p,
                            ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)
_runtime = None


def runtime():
    """The CTA loop ``run_ctas`` (runtime_ir.py), compiled once per process."""
    global _runtime
    if _runtime is None:
        from .runtime_ir import runtime_text
        b = llvm()
        mod = b.parse_assembly(runtime_text())
        mod.verify()
        _optimise(mod, 2)
        engine = b.create_mcjit_compiler(mod, new_target_machine(2))
        engine.finalize_object()
        _runtime = (engine, RUN_CTAS(engine.get_function_address("run_ctas")))
    return _runtime[1]


def _optimise(mod, level: int) -> None:
    b = llvm()
    pto = b.create_pipeline_tuning_options(speed_level=level)
    pto.loop_vectorization = False
    pto.slp_vectorization = False
    pb = b.create_pass_builder(target_machine(), pto)
    pb.getModulePassManager().run(mod, pb)


def _cache_path(text: str, level: int) -> str | None:
    """Where the object code of this IR text is cached on disk (None: off).

    Keyed by a hash of the IR text, the optimisation level, the host CPU and
    the LLVM version: compile time dominates a hybrid analysis of a module of
    many small kernels, and the second analysis of the same module reuses the
    native code. PTXC_CACHE=0 turns the cache off; PTXC_CACHE_DIR moves it."""
    if os.environ.get("PTXC_CACHE", "1") == "0":
        return None
    import hashlib
    b = llvm()
    new_target_machine(level)          # fills _host
    h = hashlib.sha256()
    for part in (text, str(level), _host[1], _host[2], str(b.llvm_version_info), "ptxc-jit-1"):
        h.update(part.encode())
        h.update(b"\0")
    base = os.environ.get("PTXC_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "ptxc", "objects")
    return os.path.join(base, h.hexdigest()[:40] + ".o")


def _read_object(path):
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


CACHE_FILES = 4000          # the oldest half is dropped beyond this


def _write_object(path, buf: bytes) -> None:
    try:
        folder = os.path.dirname(path)
        os.makedirs(folder, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as fh:
            fh.write(buf)
        os.replace(tmp, path)
        names = os.listdir(folder)
        if len(names) > CACHE_FILES:
            files = sorted((os.path.getmtime(os.path.join(folder, n)), n) for n in names)
            for _, n in files[:len(files) // 2]:
                os.remove(os.path.join(folder, n))
    except OSError:
        pass


def _native(text: str, level: int, names: str):
    b = llvm()
    try:
        mod = b.parse_assembly(text)
        mod.verify()
    except RuntimeError as e:          # a code generator bug, not bad input
        path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"ptxc-{names.split(',')[0]}.ll")
        with open(path, "w") as fh:
            fh.write(text)
        first = str(e).strip().splitlines()
        raise PtxcError(f"internal error: invalid LLVM IR for kernel(s) {names} ({path}): "
                        f"{first[-1] if first else e}")
    path = _cache_path(text, level)
    cached = _read_object(path) if path else None
    if level > 0 and cached is None:
        _optimise(mod, level)
    engine = b.create_mcjit_compiler(mod, new_target_machine(level))
    if path:
        engine.set_object_cache(lambda m, buf: cached is None and _write_object(path, buf),
                                lambda m: cached)
    engine.finalize_object()
    return engine
