"""The check tools of a launch (``launch(check=...)``, docs/check.md): which
tools a ``check`` argument names, the compiled variant they need, and the
racecheck / synccheck checkers around a run.

``check`` is one tool (``"memcheck"``, ``"racecheck"``, ``"synccheck"``), a
comma-separated list of them, or ``"all"``. Every tool needs a full run: a
hybrid run skips the accesses and collectives its slice does not keep.
memcheck is memcheck.py; racecheck and synccheck are callbacks of the
variant (backends/llvm/check_hooks.py, racecheck.py, synccheck.py).
"""
from __future__ import annotations

from contextlib import contextmanager

from .errors import PtxcError

TOOLS = ("memcheck", "racecheck", "synccheck")
HOOKED = ("racecheck", "synccheck")


def tools_of(check) -> tuple:
    """The tools ``check`` names, in TOOLS order (raises PtxcError)."""
    if not check:
        return ()
    names = check.split(",") if isinstance(check, str) else list(check)
    names = [n.strip() for n in names if n.strip()]
    if "all" in names:
        return TOOLS
    bad = [n for n in names if n not in TOOLS]
    if bad:
        raise PtxcError(f"unknown check '{bad[0]}' (use {', '.join(TOOLS)} or all; initcheck is "
                        f"not supported yet)")
    return tuple(t for t in TOOLS if t in names)


def validate(check, mode: str) -> tuple:
    tools = tools_of(check)
    if tools and mode != "full":
        raise PtxcError(f"{'/'.join(tools)} needs a full run (mode='full'): a hybrid run skips the "
                        f"accesses its slice does not keep")
    return tools


def compile_variant(module, fn, mode: str, level: int, memory: int, check):
    """The compiled variant of the tools ``check`` names."""
    from .backends.llvm import jit
    tools = tools_of(check)
    return jit.compile_kernel(module, fn, mode, level, memory=memory, memcheck="memcheck" in tools,
                              checks=tuple(t for t in tools if t in HOOKED))


def make_checkers(c, block, check, cooperative: bool = False) -> dict:
    """{tool: checker} of the hooked tools ``check`` names. A cooperative
    launch interleaves CTAs on one worker: its checkers keep every CTA's state."""
    from .backends.llvm.racecheck import RaceChecker
    from .backends.llvm.synccheck import SyncChecker
    tools = tools_of(check)
    out = {}
    if "racecheck" in tools:
        out["racecheck"] = RaceChecker(c.plan.shift, tuple(block))
    if "synccheck" in tools:
        out["synccheck"] = SyncChecker(c.plan)
    for ch in out.values():
        ch.ctas.keep = cooperative
    return out


@contextmanager
def activate(run, checkers: dict):
    """Route the hooks of ``run`` (runtime.Launch) to ``checkers``."""
    if not checkers:
        yield
        return
    from .backends.llvm import check_hooks
    from .backends.llvm.runtime import ptr
    order = [checkers[t] for t in HOOKED if t in checkers]
    with check_hooks.active(ptr(run.L), order):
        try:
            yield
        finally:
            for ch in order:
                ch.finish()


def attach(prof, c, fn, block, checkers: dict) -> None:
    """Describe what the checkers found into the Profile (hazard_report)."""
    from . import hazard_report as H
    if "racecheck" in checkers:
        prof.race_hazards = H.describe_hazards(c, fn, block, checkers["racecheck"].hazards())
    if "synccheck" in checkers:
        prof.sync_errors = H.describe_sync(c, fn, block, checkers["synccheck"].errors())
