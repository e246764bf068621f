"""Error-injection campaigns on whole CUDA applications (``ptxc inject``,
docs/inject.md): the golden run, the draw, the injected runs, the outcomes.

Every run (the golden one included) is a process of its own
(worker.py) that runs the application under ``ptxc run``'s machinery
in full mode, in a private working directory: a mirror of the current
directory (symbolic links to its entries) in which the output files the user
named (``--output FILE``, paths relative to the current directory) are not
linked, so that the application writes them afresh and parallel runs never
share one. A run that outlives the time limit is killed (its process group)
and counts as a DUE (hang). Runs are independent and go to a process pool
(``jobs``) or a Dask cluster (``dask``: an address, or a distributed
Client), in site order; the outcomes do not depend on either.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from ptxc.inject import sites as inject_sites
from ptxc.errors import PtxcError


# --------------------------------------------------------- run directory
def mirror(src: str, dst: str, outputs: list[str]) -> None:
    """Fill ``dst`` with links to the entries of ``src``, except the output
    files (relative paths); directories on an output's path are made real and
    mirrored one level further."""
    firsts: dict[str, list] = {}
    for o in outputs:
        head, _, rest = o.partition("/")
        firsts.setdefault(head, []).append(rest)
    for name in os.listdir(src):
        if name in firsts:
            continue
        os.symlink(os.path.join(src, name), os.path.join(dst, name))
    for head, rests in firsts.items():
        below = [r for r in rests if r]
        if below and os.path.isdir(os.path.join(src, head)):
            os.mkdir(os.path.join(dst, head))
            mirror(os.path.join(src, head), os.path.join(dst, head), below)


def digest(path: str) -> str | None:
    """SHA-256 of a file, None when it does not exist."""
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def run_one(argv: list, spec: dict, outputs: list, timeout: float, cwd: str) -> dict:
    """One run (a site, or none: the golden run); everything it produced."""
    work = tempfile.mkdtemp(prefix="ptxc-inject-")
    try:
        rundir = os.path.join(work, "cwd")
        os.mkdir(rundir)
        mirror(cwd, rundir, outputs)
        spec = {**spec, "result": work}
        cmd = [sys.executable, "-m", "ptxc.inject.worker", json.dumps(spec), "--", *argv]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [_root(), os.environ.get("PYTHONPATH")]))}
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=rundir, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, start_new_session=True, env=env)
        try:
            out, err = proc.communicate(timeout=timeout)
            hung = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            hung = True
        wall = time.perf_counter() - t0
        res = None
        if not hung:
            try:
                with open(os.path.join(work, "result.json")) as f:
                    res = json.load(f)
            except (OSError, ValueError):
                res = None
        counts = None
        if spec.get("site") is None and os.path.exists(os.path.join(work, "counts.npz")):
            import numpy as np
            with np.load(os.path.join(work, "counts.npz")) as z:
                counts = {k: z[k] for k in z.files}
        return {"stdout": out, "stderr": err.decode(errors="replace"), "hung": hung,
                "worker_status": proc.returncode, "result": res, "wall_s": wall,
                "files": {o: digest(os.path.join(rundir, o)) for o in outputs}, "counts": counts}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _root() -> str:
    """The directory holding the ptxc package (the worker imports the same one)."""
    package = sys.modules["ptxc"]           # loaded: this module is part of it
    return os.path.dirname(os.path.dirname(os.path.abspath(package.__file__)))


# ---------------------------------------------------------- classifying
def app_check(stdout: bytes) -> str | None:
    """The application's own verdict: FAIL if its stdout says FAIL, else PASS
    if it says PASS, else None."""
    text = stdout.decode(errors="replace")
    if "FAIL" in text:
        return "FAIL"
    return "PASS" if "PASS" in text else None


def compared(stdout: bytes, ignore) -> list[bytes]:
    """The stdout lines that the comparison looks at: those that match no
    ``--ignore`` regular expression."""
    import re
    pats = [re.compile(p.encode()) for p in ignore or ()]
    return [ln for ln in stdout.splitlines() if not any(p.search(ln) for p in pats)]


def check_deterministic(a: dict, b: dict, ignore) -> None:
    """Refuse an application whose fault-free runs differ (a timing printed
    on stdout would make every injected run an SDC)."""
    la, lb = compared(a["stdout"], ignore), compared(b["stdout"], ignore)
    if la != lb:
        k = next((i for i, (x, y) in enumerate(zip(la, lb)) if x != y), min(len(la), len(lb)))
        line = (la[k] if k < len(la) else lb[k]).decode(errors="replace")
        raise PtxcError(f"two fault-free runs printed different stdout (line '{line}'): leave such "
                        f"lines out of the comparison with --ignore REGEX")
    ca, cb = a.get("counts") or {}, b.get("counts") or {}
    import numpy as np
    if sorted(ca) != sorted(cb) or not all(np.array_equal(ca[k], cb[k]) for k in ca):
        raise PtxcError("two fault-free runs executed different kernel instructions (launches, "
                        "threads or eligible counts differ): the sites of one run would not be those "
                        "of the next; injection needs a deterministic application")
    for o in a["files"]:
        if a["files"][o] != b["files"][o]:
            raise PtxcError(f"two fault-free runs wrote different '{o}' (--output): the comparison "
                            f"needs an application whose output is deterministic")


def classify(golden: dict, run: dict, ignore=()) -> tuple[str, str | None]:
    """(outcome class, why) of an injected run against the golden run."""
    if run["hung"]:
        return "due", "hang: killed at the time limit"
    res = run["result"]
    if res is not None and "internal" in res:
        raise PtxcError(f"internal error in an injected run ({res['internal']}); "
                        f"its traceback: {run['stderr'].strip().splitlines()[-1:]}")
    if res is None or run["worker_status"] != 0:
        return "due", "crash: " + (run["stderr"].strip().splitlines() or ["no result"])[-1]
    if res["stopped"]:
        return "due", res["stopped"].strip().splitlines()[0]
    if res["faults"]:
        return "due", res["faults"][0]
    if res["status"] != 0:
        return "due", f"exit status {res['status']}"
    if compared(run["stdout"], ignore) != compared(golden["stdout"], ignore) or \
            run["files"] != golden["files"]:
        return "sdc", None
    return "masked", None


class Launches:
    """The golden run's launches, as inject_sites expects them."""

    def __init__(self, golden: dict):
        self.records = []
        launches = golden["result"]["launches"]
        modules: dict = {}
        for r in launches:
            modules.setdefault(r["kernel"], set()).add(r["module"])
        for r in launches:
            counts = {t: golden["counts"][f"{r['index']}_{t}"] for t in inject_sites.TARGETS}
            label = r["kernel"] + (f" [{r['module']}]" if len(modules[r["kernel"]]) > 1 else "")
            self.records.append(_Rec(r["index"], label, tuple(r["block"]), counts))


class _Rec:
    """One launch of the fault-free run; ``kernel`` is its kernel's name,
    with ``[module]`` added when kernels of that name in two modules ran
    (two different kernels: their outcomes are never merged)."""

    def __init__(self, index, kernel, block, counts):
        self.index, self.kernel, self.block, self.counts = index, kernel, block, counts


# ------------------------------------------------------------ campaign
def golden_run(argv, kernel, outputs, timeout, cwd, options) -> dict:
    g = run_one(argv, {"kernel": kernel, "site": None, **options}, outputs, timeout, cwd)
    res = g["result"]
    if res is not None and "internal" in res:
        raise PtxcError(f"internal error in the fault-free run: {res['internal']}")
    if g["hung"]:
        raise PtxcError(f"the fault-free run did not end within {timeout:g} s (--timeout)")
    if res is None or res["stopped"] or res["faults"] or res["status"] != 0:
        why = (res or {}).get("stopped") or ((res or {}).get("faults") or [None])[0] or \
            f"exit status {(res or {}).get('status')}"
        raise PtxcError(f"the fault-free run of {argv[0]} failed ({why.strip().splitlines()[0]}); "
                        f"injection needs an application that runs correctly under `ptxc run --mode full`")
    for o, d in g["files"].items():
        if d is None:
            raise PtxcError(f"the fault-free run wrote no output file '{o}' (--output)")
    from ptxc.ir.names import listing
    if not res["launches"]:
        launched = res.get("launched") or []
        raise PtxcError("the fault-free run made no kernel launch" +
                        (f" of kernel '{kernel}' (it launched: {listing(launched)})"
                         if kernel else ""))
    considered = list(dict.fromkeys(r["kernel"] for r in res["launches"]))
    if kernel and len(considered) > 1:          # --kernel: one kernel (ptxc/ir/names.py)
        raise PtxcError(f"kernel name '{kernel}' is ambiguous: it names {listing(considered)} "
                        f"(give the signature or the PTX name)")
    return g


def outcome(golden: dict, launches: Launches, site, run: dict, ignore=()) -> dict:
    cls, why = classify(golden, run, ignore)
    rec = next((r for r in (run["result"] or {}).get("launches", []) if r.get("hit")), None)
    return {"site": site.text(), "kernel": launches.records[site.launch].kernel,
            "launch": site.launch, "outcome": cls, "error": why,
            "flipped": rec is not None, "line": rec.get("line") if rec else None,
            "opcode": rec.get("opcode") if rec else None,
            "bit": rec["hit"][1] if rec else None,
            "app_check": app_check(run["stdout"]) if run["result"] is not None else None,
            "wall_s": round(run["wall_s"], 3)}


def campaign(argv: list, runs: int = 100, seed: int = 0, kernel: str | None = None,
             target: str = "register", jobs: int | None = None, dask=None,
             outputs: tuple = (), timeout: float | None = None, options: dict | None = None,
             sites=None, keep_runs: bool = False, ignore: tuple = ()) -> dict:
    """The whole campaign: {"golden", "launches", "space", "outcomes"} (and
    "runs", every run's output, with ``keep_runs``); ``sites`` replaces the
    draw (--replay); ``ignore``: regular expressions of stdout lines left
    out of the comparison (timings). The fault-free run is made twice, and
    the campaign refused if the two differ."""
    cwd = os.getcwd()
    argv = [_program(argv[0]), *argv[1:]]
    outputs = [os.path.normpath(o) for o in outputs]
    options = options or {}
    golden = golden_run(argv, kernel, outputs, timeout or 600, cwd, options)
    check_deterministic(golden, golden_run(argv, kernel, outputs, timeout or 600, cwd, options),
                        ignore)
    limit = timeout or max(10.0, 10 * golden["wall_s"])
    launches = Launches(golden)
    if sites is None:
        sites = inject_sites.draw(launches.records, target, runs, seed)
    else:
        for s in sites:
            if s.launch >= len(launches.records):
                raise PtxcError(f"site {s.text()}: the fault-free run has only "
                                f"{len(launches.records)} launches considered")
    specs = [{"kernel": kernel, "site": s.text(), **options} for s in sites]
    t0 = time.perf_counter()
    results = _map(specs, argv, outputs, limit, cwd, jobs, dask)
    injected_s = time.perf_counter() - t0
    return {"golden": golden, "launches": launches, "target": target, "seed": seed,
            "space": inject_sites.space_size(launches.records, target), "time_limit": limit,
            "injected_s": injected_s,
            "outcomes": [outcome(golden, launches, s, r, ignore) for s, r in zip(sites, results)],
            **({"runs": results} if keep_runs else {})}


def _program(argv0: str) -> str:
    from ptxc.runtime.app import find_program
    return os.path.abspath(find_program(argv0))


def _map(specs, argv, outputs, limit, cwd, jobs, dask) -> list:
    if dask is not None:
        return _map_dask(specs, argv, outputs, limit, cwd, dask)
    from concurrent.futures import ThreadPoolExecutor
    n = jobs or os.cpu_count() or 1
    with ThreadPoolExecutor(max_workers=n) as pool:   # each run is a process of its own
        return list(pool.map(lambda s: run_one(argv, s, outputs, limit, cwd), specs))


def _map_dask(specs, argv, outputs, limit, cwd, address) -> list:
    """The runs as Dask tasks (profile_dask's connection and install hint);
    the workers must see the same files (the application, the current
    directory), as on one machine or a shared file system."""
    from ptxc.profile.dask_cluster import INSTALL_HINT, connect
    try:
        from distributed import Client
    except ImportError:
        raise PtxcError(INSTALL_HINT) from None
    client = address if isinstance(address, Client) else connect(Client, address)
    try:
        n = len(specs)
        futures = client.map(run_one, [argv] * n, specs, [outputs] * n, [limit] * n, [cwd] * n,
                             pure=False)
        return client.gather(futures)
    finally:
        if client is not address:
            client.close()
