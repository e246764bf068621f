"""Profile every kernel of a module: one launch per kernel, one row each.

``profile_module(module, launches, args, mode)`` decides a launch for every
kernel, runs the launchable ones with ``ptxc.launcher.launch`` and returns a
:class:`ModuleProfile` (rows and the module total; rendering in
module_profile_render.py). A kernel's launch is, in this order:

1. explicit: ``launches[kernel] = (grid, block)`` (``block`` None: .reqntid);
2. inferred: the linear-index bound check of an XLA-style kernel
   (``ptxc.passes.launch_infer``), with the PTX line it came from;
3. none: the kernel is listed as not launched, with the reason.

Arguments: ``args[kernel]`` is a list of ``NAME=VALUE`` strings (the launch
syntax of docs/launch.md) or a dict. A kernel whose slice reads a parameter
or memory through a parameter (its *control inputs*, passes/slice_report)
that has no argument is not launched: its counters depend on data the PTX
does not hold. Arguments that are not control inputs may be left out: a
hybrid run never reads them (launch() passes zeros / empty buffers); a full
run gets zeros and, for each pointer, a zero-filled buffer of the largest
size a segment can address (2^32 bytes, 2^24 for 32-bit modules): an
anonymous mapping (MAP_NORESERVE where Linux has it), so the OS provides only
the pages the kernel touches; since no control input reads it, the counters
do not depend on its contents.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from .errors import PtxcError
from .profile import TOTALS

EXPLICIT, INFERRED = "explicit", "inferred"
RAN, SKIPPED, FAILED = "ran", "not launched", "error"


@dataclass
class KernelRow:
    """One kernel: its launch (or why there is none) and its profile."""
    kernel: str
    status: str
    grid: tuple | None = None
    block: tuple | None = None
    source: str = ""
    inferred: object = None           # passes.launch_infer.InferredLaunch
    reason: str = ""
    profile: object = None            # ptxc.profile.Profile
    seconds: float = 0.0
    args: dict = field(default_factory=dict)


@dataclass
class ModuleProfile:
    module: object
    mode: str
    rows: list = field(default_factory=list)
    timings: dict = field(default_factory=dict)

    @property
    def ran(self) -> list:
        return [r for r in self.rows if r.status == RAN]

    def total(self) -> dict:
        """Sums of the counters of the kernels that ran, METRICS.md's ratios
        recomputed from the sums."""
        out = {k: sum(getattr(r.profile, k) for r in self.ran) for k in TOTALS}
        out["threads"] = sum(_count(r.grid) * _count(r.block) for r in self.ran)
        out["kernels_run"] = len(self.ran)
        out["kernels"] = len(self.rows)
        b = out["branch"]
        out["branch_efficiency"] = round(100.0 * (b - out["divergent_branch"]) / b, 6) if b else 100.0
        n = out["inst_executed"]
        out["warp_execution_efficiency"] = (round(100.0 * out["thread_inst_executed"] / (32 * n), 6)
                                            if n else 0.0)
        return out


def _count(dims) -> int:
    return dims[0] * dims[1] * dims[2]


# ---------------------------------------------------------------- driver
def profile_module(module, launches: dict | None = None, args: dict | None = None,
                   mode: str = "hybrid", kernels=None, threads: int | None = None,
                   max_steps: int | None = None) -> ModuleProfile:
    """Run every kernel of ``module`` (or those named in ``kernels``)."""
    from . import launcher
    if mode not in launcher.MODES:
        raise PtxcError(f"unknown mode '{mode}' (use 'hybrid' or 'full')")
    launches, args = dict(launches or {}), dict(args or {})
    chosen = select_kernels(module, kernels, launches, args)
    result = ModuleProfile(module, mode)
    t0 = time.perf_counter()
    if chosen:      # slices every function of the module, as the launches will (distinct buffers)
        from .launch_alias import ensure_launch_slice, guessed_classes
        ensure_launch_slice(module, chosen[0], guessed_classes(chosen[0]))
    t1 = time.perf_counter()
    rows = [plan_row(module, fn, launches.get(fn.name), args.get(fn.name), mode) for fn in chosen]
    t2 = time.perf_counter()
    compile_s = precompile(module, [r for r in rows if r.status == RAN], mode)
    t3 = time.perf_counter()
    for row in rows:
        if row.status == RAN:
            run_row(module, row, mode, threads, max_steps)
    result.rows = rows
    result.timings = {"slice": t1 - t0, "infer": t2 - t1, **compile_s,
                      "launches": time.perf_counter() - t3}
    return result


def select_kernels(module, names, launches: dict, args: dict) -> list:
    """The kernels to profile; an unknown name anywhere is an error."""
    from .launcher import find_kernel
    for name in list(launches) + list(args) + list(names or []):
        find_kernel(module, name)
    if names:
        wanted = set(names)
        return [k for k in module.kernels if k.name in wanted]
    return list(module.kernels)


def plan_row(module, fn, explicit, arg_items, mode: str) -> KernelRow:
    """The kernel's launch and arguments, or why it cannot be launched."""
    from . import launcher
    row = KernelRow(fn.name, RAN)
    try:
        if explicit is not None:
            grid, block = explicit
            row.grid = launcher.dim3(grid, "grid")
            row.block = launcher.dim3(block if block is not None else launcher.default_block(fn),
                                      "block")
            row.source = EXPLICIT
        else:
            inferred = infer(fn)
            row.grid, row.block, row.source, row.inferred = (inferred.grid, inferred.block,
                                                             INFERRED, inferred)
        launcher.check_config(fn, row.grid, row.block, 0)
        row.args = bind_values(fn, arg_items, mode)
    except NotLaunchable as e:
        row.status, row.reason = SKIPPED, e.reason
    except PtxcError as e:
        row.status, row.reason = FAILED, e.message.splitlines()[0]
    return row


class NotLaunchable(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def infer(fn):
    from .passes.domtree import DomTree
    from .passes.launch_infer import LaunchRefused, infer_launch
    from .passmanager import AnalysisManager
    try:
        return infer_launch(fn, DomTree.compute(fn, AnalysisManager(fn.module)))
    except LaunchRefused as e:
        raise NotLaunchable(f"no launch given and none inferred: {e.reason}") from None


def bind_values(fn, items, mode: str) -> dict:
    """{parameter index: value}: the given arguments, plus (full mode) zeros
    and conservative buffers for the parameters that are not control inputs."""
    from . import launcher
    given = (launcher.normalise_args(fn, items) if isinstance(items, dict)
             else launcher.parse_arg_strings(fn, items or []))
    ctl = launcher.control_params(fn)
    missing = [p.name for i, p in enumerate(fn.params)
               if i not in given and (ctl is None or p.name in ctl)]
    if missing:
        raise NotLaunchable("its control flow reads data the PTX does not hold: give "
                            + ", ".join(f"--arg {fn.name}:{_short(fn, n)}=..." for n in missing))
    if mode == "full":
        for i, p in enumerate(fn.params):
            given.setdefault(i, placeholder(fn, p))
    return given


def _short(fn, name: str) -> str:
    prefix = fn.name + "_"
    return name[len(prefix):] if name.startswith(prefix) else name


def placeholder(fn, p):
    """A value for a parameter no control input reads (full mode)."""
    from .backends.llvm.layout import seg_shift
    from .launcher import addr_bits, is_pointer_param
    if is_pointer_param(p, addr_bits(fn)):
        return lazy_zeros(fn, 1 << seg_shift(fn.module))
    if p.dims:
        return bytes(p.size)
    return 0


# MAP_NORESERVE of Linux on x86-64 and arm64 (Python's mmap module does not
# export it): the mapping is not charged against the overcommit limit.
MAP_NORESERVE = 0x4000


def lazy_zeros(fn, nbytes: int):
    """A zero-filled uint8 array of ``nbytes`` whose pages the OS maps only
    when the kernel touches them (an anonymous private mapping)."""
    import mmap
    import platform

    import numpy as np
    noreserve = MAP_NORESERVE if (platform.system() == "Linux" and
                                  platform.machine() in ("x86_64", "aarch64")) else 0
    try:
        mm = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | noreserve)
        return np.frombuffer(mm, np.uint8)
    except (OSError, ValueError, AttributeError):
        pass
    try:
        return np.zeros(nbytes, np.uint8)
    except MemoryError:
        raise PtxcError(f"kernel {fn.name}: cannot reserve {nbytes} bytes of address space for "
                        "a pointer argument of a full run; give the pointer arguments with --arg")


def precompile(module, rows: list, mode: str) -> dict:
    """Compile the kernels to run in one batch per optimisation level."""
    from .launcher import compile_launches, find_kernel
    return compile_launches(module, [(find_kernel(module, r.kernel), r.grid, r.block)
                                     for r in rows], mode)


def run_row(module, row: KernelRow, mode: str, threads, max_steps) -> None:
    from .launcher import launch
    t0 = time.perf_counter()
    try:
        row.profile = launch(module, row.kernel, row.grid, row.block, row.args, mode=mode,
                             threads=threads, max_steps=max_steps)
    except PtxcError as e:
        row.status, row.reason = FAILED, e.render().splitlines()[0]
    row.seconds = time.perf_counter() - t0
