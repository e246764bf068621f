"""racecheck and synccheck around a launch (``launch(check=...)``,
docs/check.md): their checkers, routed to by the compiled variant's hooks
(backends/llvm/instruments/check_hooks.py, racecheck.py, synccheck.py), and their
findings attached to the Profile. Which tools a ``check`` names is
launcher.check_tools; memcheck and initcheck have their own logs.
"""
from __future__ import annotations

from contextlib import contextmanager

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
    """Describe what the checkers found into the Profile (hazard_report)."""
    from ptxc.check import hazards as H
    if "racecheck" in checkers:
        prof.race_hazards = H.describe_hazards(c, fn, block, checkers["racecheck"].hazards())
    if "synccheck" in checkers:
        prof.sync_errors = H.describe_sync(c, fn, block, checkers["synccheck"].errors())
