"""Error-injection campaigns on one kernel launch, from Python
(docs/inject.md; ``ptxc inject`` does the same for whole applications:
inject_app.py).

    result = ptxc.inject.campaign(module, "kernel", grid, block, args, runs=100, seed=1,
                                  target="register", check=lambda arrays: ...)
    print(result.text())

Step 1 runs the launch fault-free (full mode) with the injection variant
counting every thread's eligible dynamic instructions; step 2 draws the
sites (inject_sites.py); step 3 reruns the launch once per site on fresh
copies of the arguments with that one bit flipped, and classifies it against
the golden run (inject_stats.py): a PtxcError (bad access, trap, step
budget) is a DUE; otherwise output arrays equal to the golden ones are
masked, different ones an SDC. ``check(arrays)`` (optional) is the app's
own verdict: True for PASS. The injected launches run in ``jobs`` worker
processes (default: all cores) or on a Dask cluster (``dask``): see
inject_pool.py; the outcomes are the same for any ``jobs`` or ``dask``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import time

from ptxc.inject import pool as inject_pool, sites as inject_sites, stats as inject_stats
from ptxc.launcher import injection as inject_session
from ptxc.errors import PtxcError


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


def _copy_args(args):
    if isinstance(args, dict):
        return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in args.items()}
    return [v.copy() if isinstance(v, np.ndarray) else v for v in args]


def _arrays(args) -> list:
    vals = args.values() if isinstance(args, dict) else args
    return [v for v in vals if isinstance(v, np.ndarray)]


def _launch(module, kernel, grid, block, args, max_steps, shared_bytes):
    from ptxc.launcher.launcher import launch
    return launch(module, kernel, grid, block, args, mode="full", max_steps=max_steps,
                  shared_bytes=shared_bytes, threads=1)


def golden_run(module, kernel, grid, block, args, max_steps=None, shared_bytes=0):
    """(launch records, output arrays) of the fault-free run (step 1)."""
    a = _copy_args(args)
    with inject_session.session() as s:
        _launch(module, kernel, grid, block, a, max_steps, shared_bytes)
    return s.launches, _arrays(a)


def run_site(module, kernel, grid, block, args, site, golden_arrays, max_steps=None,
             shared_bytes=0, check=None) -> dict:
    """Step 3 for one site: the outcome record."""
    a = _copy_args(args)
    error = None
    with inject_session.session(site=site) as s:
        try:
            _launch(module, kernel, grid, block, a, max_steps, shared_bytes)
        except PtxcError as e:
            error = e.message.splitlines()[0]
    rec = s.launches[0] if s.launches else None
    out = {"site": site.text(), "launch": site.launch, "kernel": rec.kernel if rec else str(kernel),
           "flipped": rec.hit is not None if rec else False, "error": error,
           "line": rec.where.get("line") if rec and rec.hit else None,
           "opcode": rec.where.get("opcode") if rec and rec.hit else None,
           "bit": rec.hit[1] if rec and rec.hit else None,
           "bits": rec.hit[2] if rec and rec.hit else None, "app_check": None}
    if error is not None:
        out["outcome"] = "due"
        return out
    got = _arrays(a)
    same = all(np.array_equal(x.view(np.uint8), y.view(np.uint8)) for x, y in zip(got, golden_arrays))
    out["outcome"] = "masked" if same else "sdc"
    if check is not None:
        out["app_check"] = "PASS" if check(got) else "FAIL"
    return out


def campaign(module, kernel, grid, block, args, runs: int = 100, seed: int = 0,
             target: str = "register", check=None, max_steps: int | None = None,
             shared_bytes: int = 0, sites=None, jobs: int | None = None,
             dask=None) -> Campaign:
    """An injection campaign on one launch (see the module doc); ``sites``
    replaces the draw (a list of inject_sites.Site, e.g. every site of a
    tiny kernel); ``jobs``: worker processes (default: all cores);
    ``dask``: a scheduler address or a distributed Client."""
    if isinstance(module, str):
        from ptxc import load
        module = load(module)
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
