"""Compile a kernel (plan + code generator) to native code with llvmlite, and
cache the result per (module, kernel, mode) in ``module.attrs`` (so it lives
as long as the module).

Only the launched kernel and the functions it calls are compiled. The LLVM
pipeline is the new pass manager's default pipeline at ``OPT_LEVEL`` (chosen
by measurement, docs/executor.md) and the host CPU's features, so the 32-lane
vectors map onto AVX-512/AVX2 registers.
"""
from __future__ import annotations

import ctypes
import os
import threading
import time
from dataclasses import dataclass, field

from ptxc.errors import PtxcError

OPT_LEVEL = int(os.environ.get("PTXC_OPT", "2"))
_lock = threading.Lock()
_llvm = None


@dataclass
class Compiled:
    """A compiled kernel: the plan, the counter layout and the entry point."""
    plan: object
    mode: str
    n_counters: int
    branch_ctr: dict
    guard_ctr: dict
    ws_size: int
    uses_global_atomics: bool
    unsupported: dict
    run_ctas: object
    warp_fn: int
    engine: object
    ir_text: str = ""
    timings: dict = field(default_factory=dict)


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


def new_target_machine(opt: int | None = None):
    """A fresh host TargetMachine: an execution engine takes ownership of
    (and frees) the one it is given, so engines never share one."""
    global _host
    b = llvm()
    if _host is None:
        _host = (b.Target.from_default_triple(), b.get_host_cpu_name(),
                 b.get_host_cpu_features().flatten())
    target, cpu, features = _host
    return target.create_target_machine(cpu=cpu, features=features,
                                        opt=min(OPT_LEVEL if opt is None else opt, 3),
                                        codemodel="jitdefault", jit=True)


def target_machine():
    """The shared TargetMachine of the pass builders (never given to an engine)."""
    global _tm
    if _tm is None:
        _tm = new_target_machine()
    return _tm


def compile_kernel(module, kernel, mode: str, keep_ir: bool = False) -> Compiled:
    """The compiled kernel, from the cache when possible."""
    key = (kernel.name, mode, _slice_stamp(kernel, mode))
    with _lock:
        per_module = module.attrs.setdefault("llvm_jit_cache", {})
        hit = per_module.get(key)
        if hit is not None:
            return hit
        c = _compile(module, kernel, mode, keep_ir)
        per_module[key] = c
        return c


def _slice_stamp(kernel, mode):
    """Hybrid code depends on the slice marks: key the cache on them."""
    if mode != "hybrid":
        return None
    return id(kernel.attrs.get("slice_report")) if kernel.attrs.get("sliced") else None


def _compile(module, kernel, mode: str, keep_ir: bool) -> Compiled:
    from .codegen import KernelCodegen
    from .plan import Plan
    t0 = time.perf_counter()
    plan = Plan(module, kernel)
    cg = KernelCodegen(plan, mode)
    text = cg.generate()
    t1 = time.perf_counter()
    engine, warp = _native(text, kernel.name)
    t2 = time.perf_counter()
    return Compiled(plan=plan, mode=mode, n_counters=cg.next_ctr, branch_ctr=cg.branch_ctr,
                    guard_ctr=cg.guard_ctr, ws_size=cg.ws_size,
                    uses_global_atomics=cg.uses_global_atomics,
                    unsupported=getattr(cg, "unsupported_ids", {}), run_ctas=runtime(),
                    warp_fn=warp, engine=engine,
                    ir_text=text if keep_ir else "", timings={"codegen": t1 - t0, "llvm": t2 - t1})


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
    tm = target_machine()
    pto = b.create_pipeline_tuning_options(speed_level=level)
    pto.loop_vectorization = False
    pto.slp_vectorization = level >= 2
    pb = b.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)


def _native(text: str, name: str):
    b = llvm()
    try:
        mod = b.parse_assembly(text)
        mod.verify()
    except RuntimeError as e:          # a code generator bug, not bad input
        path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"ptxc-{name}.ll")
        with open(path, "w") as fh:
            fh.write(text)
        raise PtxcError(f"internal error: invalid LLVM IR for kernel {name} ({path}): "
                        f"{str(e).splitlines()[0] if str(e) else e}")
    if OPT_LEVEL > 0:
        _optimise(mod, OPT_LEVEL)
    engine = b.create_mcjit_compiler(mod, new_target_machine())
    engine.finalize_object()
    from .codegen import WARP_FN
    return engine, engine.get_function_address(WARP_FN)
