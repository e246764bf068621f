"""The injected launches of a Python campaign (``ptxc.inject.launch_campaign.campaign``,
``jobs=``/``dask=``; ``ptxc inject FILE.ptx``; docs/inject.md), in worker
processes or on a Dask cluster.

Each site is one launch on fresh copies of the arguments (inject.run_site),
independent of the others, so the sites can run anywhere in any order; the
outcomes come back in site order and do not depend on ``jobs`` or ``dask``.

* ``jobs`` = 1 (or one site): in this process, one after the other.
* ``jobs`` = N > 1: a ``concurrent.futures.ProcessPoolExecutor`` of N
  processes started with ``fork`` (Python docs, multiprocessing "Contexts and
  start methods"): the children inherit the parsed module, its compiled
  injection variant (the golden run compiled it), the arguments and
  ``check``, so nothing is pickled but the site and its outcome.
* ``dask``: a scheduler address or a ``distributed.Client``; each task
  carries the module's PTX text (re-parsed once per worker process), the
  arguments and ``check`` (pickled by Dask: a lambda is fine). Launches in
  one worker process run one at a time (the injection session is the
  process's), so threaded workers are correct too.
"""
from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass, replace

from ptxc.errors import PtxcError
from ptxc.inject.launch_run import run_site


@dataclass
class Payload:
    """Everything an injected launch needs besides its site."""
    module: object            # the parsed Module (None in a Dask task)
    kernel: str
    grid: object
    block: object
    args: object
    golden: list              # the golden run's output arrays
    max_steps: int | None
    shared_bytes: int
    check: object
    source: str = ""          # the module's PTX text and file name (Dask)
    filename: str = "<string>"


_forked: Payload | None = None          # the payload a forked worker inherits
_modules: dict = {}                     # PTX text digest -> Module (Dask workers)
_lock = threading.Lock()


def run(payload: Payload, sites: list, jobs: int | None = None, dask=None) -> list[dict]:
    """The outcome of every site, in site order."""
    if dask is not None:
        return _run_dask(payload, sites, dask)
    n = min(jobs or os.cpu_count() or 1, len(sites))
    if n <= 1:
        return [_one(payload, s) for s in sites]
    return _run_forked(payload, sites, n)


def _one(p: Payload, site) -> dict:
    return run_site(p.module, p.kernel, p.grid, p.block, p.args, site, p.golden, p.max_steps,
                    p.shared_bytes, p.check)


def _run_forked(payload: Payload, sites: list, n: int) -> list[dict]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    try:
        ctx = multiprocessing.get_context("fork")
    except ValueError:
        raise PtxcError("jobs > 1 needs the 'fork' start method (Linux, macOS); use jobs=1 "
                        "or dask=") from None
    global _forked
    _forked = payload
    try:
        with ProcessPoolExecutor(max_workers=n, mp_context=ctx) as pool:
            return list(pool.map(_forked_task, sites, chunksize=max(1, len(sites) // (4 * n))))
    finally:
        _forked = None


def _forked_task(site) -> dict:
    return _one(_forked, site)


def _run_dask(payload: Payload, sites: list, address) -> list[dict]:
    """The sites as Dask tasks (profile_dask's connection and install hint)."""
    from ptxc.profile.dask_cluster import INSTALL_HINT, connect
    try:
        from distributed import Client
    except ImportError:
        raise PtxcError(INSTALL_HINT) from None
    kernel = payload.kernel if payload.kernel is None or isinstance(payload.kernel, str) \
        else payload.kernel.name
    shipped = replace(payload, module=None, kernel=kernel, source=payload.module.source,
                      filename=payload.module.filename)
    if not shipped.source:
        raise PtxcError("dask= needs a module parsed from PTX text (ptxc.load or ptxc.parse)")
    client = address if isinstance(address, Client) else connect(Client, address)
    try:
        spec = client.scatter(shipped, broadcast=True)
        return client.gather(client.map(_dask_task, [spec] * len(sites), sites, pure=False))
    finally:
        if client is not address:
            client.close()


def _dask_task(payload: Payload, site) -> dict:
    with _lock:
        key = hashlib.sha256(payload.source.encode()).hexdigest()
        if key not in _modules:
            from ptxc.frontend.parser import parse_module
            _modules[key] = parse_module(payload.source, payload.filename)
        return _one(replace(payload, module=_modules[key]), site)
