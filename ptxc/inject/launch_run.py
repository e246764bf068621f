"""One launch of an error-injection campaign (docs/inject.md; SASSI
section 8): the fault-free golden run (step 1: the injection space), and a
run with one site's bit flipped, classified against the golden outputs
(step 3: masked, SDC or DUE). launch_campaign.py draws the sites; pool.py
runs the injected launches in processes or on Dask.
"""
from __future__ import annotations

import numpy as np

from ptxc.errors import PtxcError
from ptxc.launcher import injection as inject_session


def _copy_args(args):
    if isinstance(args, dict):
        return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in args.items()}
    return [v.copy() if isinstance(v, np.ndarray) else v for v in args]


def _arrays(args) -> list:
    vals = args.values() if isinstance(args, dict) else args
    return [v for v in vals if isinstance(v, np.ndarray)]


def _launch(module, kernel, grid, block, args, max_steps, shared_bytes):
    from ptxc.launcher.api import launch
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
