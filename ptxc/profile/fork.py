"""The compiles and launches of `ptxc profile` on one module split over
processes: the module is parsed, sliced and its launches chosen once, then
``os.fork()`` gives each extra process a copy of all of it (copy-on-write)
and a share of the kernels to compile and run; each child sends back its
rows' results (status, reason, Profile, seconds) through a pipe.

The rows are the same as those of a serial run, in the same order (each
kernel's launch is compiled and run from the same IR, its counters do not
depend on the other kernels); a child that fails or dies leaves its kernels
to the parent, which runs them itself, and a child ends when its parent dies
(also of SIGKILL: ptxc/interrupts.py, die_with_parent). Used only where fork is safe and
cheap (Linux, a CLI process: ptxc/cli/main.py passes ``jobs``), and only when every
process gets at least MIN_KERNELS kernels: a fork costs a few ms plus
the pages the child writes.
"""
from __future__ import annotations

import os
import pickle
import sys

MIN_KERNELS = 16          # kernels per process at least


def processes(n_rows: int, jobs: int | None, per_process: int | None = None) -> int:
    """How many processes share ``n_rows`` kernels, ``per_process`` at least
    each (default MIN_KERNELS; 1: no fork; fork only where it is safe and
    cheap, Linux)."""
    if not jobs or jobs < 2 or not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return 1
    return max(1, min(jobs, n_rows // (per_process or MIN_KERNELS)))


def run_rows(module, rows: list, mode: str, threads, max_steps, n: int, precompile, run_row):
    """Compile and run ``rows`` (a module profile's launchable rows) in ``n``
    processes; returns the parent's compile seconds {"codegen", "llvm"}."""
    groups = [rows[j::n] for j in range(n)]       # round robin: neighbours are alike in cost
    prepare()
    children = []
    for group in groups[1:]:
        pid, read = fork_child(lambda group=group: _run_group(
            module, group, mode, threads, max_steps, precompile, run_row))
        children.append((pid, read, group))
    spent = precompile(module, groups[0], mode)
    for row in groups[0]:
        run_row(module, row, mode, threads, max_steps)
    for pid, read, group in children:
        results = collect(pid, read)
        if results is None or len(results) != len(group):      # the child failed: run them here
            precompile(module, group, mode)
            for row in group:
                run_row(module, row, mode, threads, max_steps)
            continue
        for row, (status, reason, profile, seconds) in zip(group, results):
            row.status, row.reason, row.profile, row.seconds = status, reason, profile, seconds
    return spent


def prepare() -> None:
    """What every process needs, done once before the fork: LLVM's start-up
    with the CTA loop (jit.runtime) and the modules the launches import."""
    from ptxc.launcher import cta_classes as cta_launch  # noqa: F401
    from ptxc.backends.llvm import jit, runtime
    from ptxc.launcher import results  # noqa: F401
    from ptxc.backends.llvm.codegen import KernelCodegen  # noqa: F401
    from ptxc.backends.llvm.plan import Plan  # noqa: F401
    try:
        from ptxc.passes.cta import classes as cta_classes, equivalence as cta_equivalence  # noqa: F401
    except ImportError:
        pass
    jit.runtime()


def _run_group(module, group, mode, threads, max_steps, precompile, run_row) -> list:
    """A child's work: compile and run ``group``; what each row got."""
    precompile(module, group, mode)
    for row in group:
        run_row(module, row, mode, threads, max_steps)
    return [(r.status, r.reason, r.profile, r.seconds) for r in group]


def fork_child(work):
    """Run ``work()`` in a forked child; returns (pid, the read end of its
    pipe) for :func:`collect`. The child sends ``work()``'s result pickled
    and exits 0; when ``work`` raises or returns None it exits 1 (and the
    parent redoes the work)."""
    read, write = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:                        # the child: never returns
        os.close(read)
        code = 1
        try:
            from ptxc.interrupts import die_with_parent
            die_with_parent(parent)     # no child outlives a killed ptxc
            got = work()
            if got is not None:
                data = pickle.dumps(got, protocol=pickle.HIGHEST_PROTOCOL)
                with os.fdopen(write, "wb") as out:
                    out.write(data)
                code = 0
        except BaseException:  # noqa: BLE001 - the parent redoes this work
            pass
        finally:
            os._exit(code)
    os.close(write)
    return pid, read


def collect(pid: int, read: int):
    """What a forked child wrote to ``read`` (unpickled), or None when it
    failed (a non-zero exit, no data, a truncated message)."""
    with os.fdopen(read, "rb") as fh:
        data = fh.read()
    _, status = os.waitpid(pid, 0)
    if status != 0 or not data:
        return None
    try:
        return pickle.loads(data)
    except Exception:  # noqa: BLE001 - a truncated message: run the group here
        return None
