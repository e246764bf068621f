"""Error-injection campaigns on one kernel launch, from Python
(docs/inject.md; ``ptxc inject`` does the same for whole applications:
app_campaign.py).

    result = ptxc.inject.campaign(module, "kernel", grid, block, args, runs=100, seed=1,
                                  target="register", check=lambda arrays: ...)
    print(result.text())

Step 1 runs the launch fault-free (full mode) with the injection variant
counting every thread's eligible dynamic instructions; step 2 draws the
sites (sites.py); step 3 reruns the launch once per site on fresh
copies of the arguments with that one bit flipped, and classifies it against
the golden run (stats.py): a PtxcError (bad access, trap, step
budget) is a DUE; otherwise output arrays equal to the golden ones are
masked, different ones an SDC. ``check(arrays)`` (optional) is the app's
own verdict: True for PASS. The injected launches run in ``jobs`` worker
processes (default: all cores) or on a Dask cluster (``dask``): see
pool.py; the outcomes are the same for any ``jobs`` or ``dask``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from ptxc.errors import PtxcError
from ptxc.inject import pool as inject_pool, sites as inject_sites, stats as inject_stats
from ptxc.inject.launch_run import golden_run


@dataclass
class Campaign:
    target: str
    seed: int
    space: int                   # eligible dynamic instances (step 1)
    golden: list                 # LaunchRecord of the fault-free run
    outcomes: list = field(default_factory=list)   # one dict per run
    golden_s: float = 0.0        # wall time of the fault-free launch
    injected_s: float = 0.0      # wall time of all the injected launches

    def summary(self) -> list[dict]:
        return inject_stats.summarise(self.outcomes)

    def text(self) -> str:
        return (f"injection space ({self.target}): {self.space} dynamic instances; "
                f"{len(self.outcomes)} runs, seed {self.seed}\n" + inject_stats.table(self.summary()))


def campaign(module, kernel, grid, block, args, runs: int = 100, seed: int = 0,
             target: str = "register", check=None, max_steps: int | None = None,
             shared_bytes: int = 0, sites=None, jobs: int | None = None,
             dask=None) -> Campaign:
    """An injection campaign on one launch (see the module doc); ``sites``
    replaces the draw (a list of inject_sites.Site, e.g. every site of a
    tiny kernel); ``jobs``: worker processes (default: all cores);
    ``dask``: a scheduler address or a distributed Client."""
    if isinstance(module, str):
        from ptxc.frontend.parser import load_module
        module = load_module(module)
    if target not in inject_sites.TARGETS:
        raise PtxcError(f"unknown target '{target}' (use {', '.join(inject_sites.TARGETS)})")
    if sites:
        target = sites[0].target
        if any(s.target != target for s in sites):
            raise PtxcError("the sites of one campaign have one target")
    if jobs is not None and jobs < 1:
        raise PtxcError(f"jobs must be at least 1, got {jobs}")
    t0 = time.perf_counter()
    launches, gold = golden_run(module, kernel, grid, block, args, max_steps, shared_bytes)
    golden_s = time.perf_counter() - t0
    size = inject_sites.space_size(launches, target)
    if sites is None:
        sites = inject_sites.draw(launches, target, runs, seed)
    elif any(s.launch >= len(launches) for s in sites):
        raise PtxcError(f"site {next(s for s in sites if s.launch >= len(launches)).text()}: "
                        f"a campaign on one launch has launch 0 only")
    result = Campaign(target, seed, size, launches, golden_s=golden_s)
    payload = inject_pool.Payload(module, kernel, grid, block, args, gold, max_steps,
                                  shared_bytes, check)
    t0 = time.perf_counter()
    result.outcomes = inject_pool.run(payload, list(sites), jobs, dask)
    result.injected_s = time.perf_counter() - t0
    return result
