"""The injection state of one process (``ptxc inject``, docs/inject.md).

While a session is active, every launch in this process compiles the
injection variant of its kernel (backends/llvm/instruments/inject_ir.py, a full run)
and runs with the process's control block armed (inject_ctl.py): per-thread
counters of eligible dynamic instructions, and the site when this launch is
the site's kernel invocation. After each launch its record keeps the kernel
name, the configuration, the per-thread eligible counts per target (the
injection space, step 1) and the flip, if one happened.

Kernel invocations are numbered 0, 1, ... in launch order in the process;
``--kernel K`` numbers only the launches of K (any name of
ptxc/ir/names.py), so a site names the same launch whether or not other
kernels ran before it. ``Session.launched`` lists every kernel that
launched, considered or not (the campaign's messages name them).
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class LaunchRecord:
    index: int               # invocation number among the launches considered
    kernel: str
    module: str              # the module's file name up to its first '.' (ptxc run: fatbinN)
    grid: tuple
    block: tuple
    counts: dict             # target -> per-thread eligible counts (numpy i64, CTA-major)
    hit: tuple | None = None     # (instruction id, bit, destination bits) of the flip
    where: dict = field(default_factory=dict)   # the flipped instruction: line, opcode


@dataclass
class Session:
    kernel: str | None = None        # consider only this kernel's launches
    site: object = None              # sites.Site, or None: count only (step 1)
    launches: list = field(default_factory=list)
    seen: int = 0
    launched: dict = field(default_factory=dict)     # every kernel launched: name -> True


_session: Session | None = None


def active() -> bool:
    return _session is not None


def wants(fn) -> bool:
    """Whether a launch of kernel ``fn`` is considered (runs the variant):
    every launch, or those of the kernel ``--kernel`` names (any form of
    ptxc/ir/names.py; the campaign refuses a name that fits two kernels)."""
    if _session is None:
        return False
    _session.launched.setdefault(fn.name, True)
    if not _session.kernel:
        return True
    from ptxc.ir.names import matches
    return matches(fn.name, _session.kernel)


def current() -> Session | None:
    return _session


@contextmanager
def session(kernel: str | None = None, site=None):
    """``with session(kernel, site) as s:`` launches in this block are
    counted (and the site's is injected); ``s.launches`` after."""
    global _session
    _session = Session(kernel=kernel, site=site)
    try:
        yield _session
    finally:
        _session = None


def module_label(module) -> str:
    """A module's label: its file name up to the first '.' (``fatbin2`` for
    the ``fatbin2.compute_90.ptx`` of ``ptxc run``, runtime/modules.py)."""
    import os
    return os.path.basename(module.filename).split(".", 1)[0]


def thread_slots(grid, block) -> tuple[int, int]:
    """(CTAs, warps per CTA) of a launch."""
    nthreads = block[0] * block[1] * block[2]
    return grid[0] * grid[1] * grid[2], (nthreads + 31) // 32


@contextmanager
def launch(c, fn, grid, block):
    """Arm the control block around one launch of compiled kernel ``c``."""
    from ptxc.backends.llvm.instruments import inject_ctl
    s = _session
    if s is None or not getattr(c, "inject", False):
        yield
        return
    nctas, nwarps = thread_slots(grid, block)
    index = len(s.launches)
    site = s.site
    armed = None
    if site is not None and site.launch == index:
        armed = (site.warp_index(nwarps), site.lane, site.target_index, site.instance, site.rand)
    arrays = inject_ctl.arm(nctas * nwarps * 32, armed)
    rec = LaunchRecord(index, fn.name, module_label(fn.module), tuple(grid), tuple(block), {})
    s.launches.append(rec)
    try:
        yield
    finally:
        rec.hit = inject_ctl.hit()
        rec.counts = {t: a.copy() for t, a in zip(inject_ctl.TARGETS, arrays)}
        if rec.hit is not None:
            rec.where = describe(c, rec.hit[0])
        inject_ctl.disarm()


def describe(c, iid: int) -> dict:
    """Line and opcode of instruction ``iid`` of compiled kernel ``c``."""
    inst, ins = c.plan.instr_table[iid]
    loc = getattr(ins, "loc", None)
    return {"line": getattr(loc, "line", 0), "opcode": ins.full_opcode}
