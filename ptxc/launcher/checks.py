"""The check tools around a launch (``launch(check=...)``, docs/check.md):
which tools a ``check`` names and when they may run, the instruments
switched on around the run (memcheck and initcheck keep logs; racecheck
and synccheck are checkers the compiled variant's hooks call:
backends/llvm/instruments/check_hooks.py), and what they found attached to
the Profile as records (access_errors.py, hazard_reports.py).
"""
from __future__ import annotations

import re
from contextlib import contextmanager

from ptxc.errors import PtxcError


CHECKS = ("memcheck", "initcheck", "racecheck", "synccheck")


def check_tools(check) -> tuple:
    """The tools of a ``check`` argument: None, one name, or several (a
    tuple, or names joined by '+' or ','); ``"all"``: every tool of CHECKS."""
    if not check:
        return ()
    tools = tuple(re.split(r"[+,]", check)) if isinstance(check, str) else tuple(check)
    return CHECKS if "all" in tools else tools


def check_option(check, mode: str) -> None:
    """Refuse an unknown check tool, or a check in a hybrid run (it skips
    accesses the slice does not keep, so it would miss their errors)."""
    for tool in check_tools(check):
        if tool not in CHECKS:
            raise PtxcError(f"unknown check '{tool}' (use {', '.join(CHECKS)} or all)")
        if mode != "full":
            raise PtxcError(f"{tool} needs a full run (mode='full'): a hybrid run skips the "
                            f"accesses its slice does not keep")


def check_value_profile(value_profile: bool, mode: str) -> None:
    """Refuse value profiling in a hybrid run: the slice computes only what
    branches need, so most registers are never written (value_prof.py)."""
    if value_profile and mode != "full":
        raise PtxcError("value profiling needs a full run (mode='full'): a hybrid run computes "
                        "only the branch slice, so the other registers' values are unknown")


def initcheck_setup(check, shadow):
    """(Shadow, its log) of an initcheck launch (a fresh Shadow tracks
    nothing: launch()'s arrays come from the host, so they are initialised),
    else None."""
    if "initcheck" not in check_tools(check):
        return None
    from ptxc.backends.llvm.instruments.initcheck import Shadow
    from ptxc.backends.llvm.instruments.memcheck import MemcheckLog
    return (shadow if shadow is not None else Shadow()), MemcheckLog()


def initcheck_active(run, init):
    """The context of an initcheck launch: its shadow in the segment table,
    its log active for the callback."""
    from contextlib import nullcontext
    if init is None:
        return nullcontext()
    from ptxc.backends.llvm.instruments.initcheck import active, install
    from ptxc.backends.llvm.runtime import ptr
    install(run.seg_template, init[0])
    return active(ptr(run.L), init[0], init[1])


HOOKED = ("racecheck", "synccheck")


def make_checkers(c, tools, cooperative: bool = False) -> dict:
    """{tool: checker} of the hooked ``tools``. A cooperative launch
    interleaves CTAs: synccheck keeps every CTA's state (racecheck's is
    per worker, and a cooperative launch gives each CTA its own)."""
    from ptxc.backends.llvm.instruments.racecheck import RaceChecker
    from ptxc.backends.llvm.instruments.synccheck import SyncChecker
    out = {}
    if "racecheck" in tools:
        out["racecheck"] = RaceChecker(c.plan.shift)
    if "synccheck" in tools:
        out["synccheck"] = SyncChecker(c.plan)
    if "synccheck" in out:
        out["synccheck"].ctas.keep = cooperative
    return out


@contextmanager
def activate(run, checkers: dict):
    """Route the hooks of ``run`` (runtime.Launch) to ``checkers``."""
    if not checkers:
        yield
        return
    from ptxc.backends.llvm.instruments import check_hooks
    from ptxc.backends.llvm.runtime import ptr
    order = [checkers[t] for t in HOOKED if t in checkers]
    run.race = checkers.get("racecheck")      # each worker attaches its shadow memory
    with check_hooks.active(ptr(run.L), order):
        try:
            yield
        finally:
            for ch in order:
                ch.finish()


def attach(prof, c, fn, block, checkers: dict) -> None:
    """Describe what the checkers found into the Profile (hazard_reports.py)."""
    from ptxc.launcher import hazard_reports as H
    if "racecheck" in checkers:
        prof.race_hazards = H.describe_hazards(c, fn, block, checkers["racecheck"].hazards())
    if "synccheck" in checkers:
        prof.sync_errors = H.describe_sync(c, fn, block, checkers["synccheck"].errors())
