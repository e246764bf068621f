"""``ptxc run``: start the application with ptxc's CUDA runtime and serve it.

The application runs as a child process with ``LD_LIBRARY_PATH`` starting
with a directory whose ``libcudart.so.13`` is the shim, and with one end of
a socketpair whose descriptor number is in ``$PTXC_RUNTIME_FD``. ptxc
answers the shim's requests until the application exits, then prints the
per-kernel summary, writes the SQLite report and returns the exit status:
the application's own (128 + N if signal N killed it), or 1 when ptxc
stopped it because a kernel failed (the message says why).
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass

from ptxc.errors import PtxcError
from ptxc.report.status_line import StatusLine

from . import elfinfo, shim, workdir
from .protocol import CHECK_ENV, CLOCK_ENV, EXIT_UNSUPPORTED, FD_ENV, Channel
from .server import Options, Session

EXIT_STOPPED_BY_PTXC = 1


@dataclass
class Result:
    status: int                 # what `ptxc run` exits with
    app_status: int | None      # the application's exit status
    session: Session
    meta: dict


def find_program(argv0: str) -> str:
    path = argv0 if os.sep in argv0 else shutil.which(argv0)
    if not path or not os.path.isfile(path):
        raise PtxcError(f"cannot run '{argv0}': no such program")
    if not os.access(path, os.X_OK):
        raise PtxcError(f"cannot run '{argv0}': not executable")
    return path


def check_linkage(path: str) -> None:
    """Refuse an application whose CUDA runtime is linked in statically, or
    whose DT_RPATH would load the real libcudart.so.13 before ptxc's."""
    info = elfinfo.read(path)
    if info is None or not info.has_fatbin:
        return
    if not info.dynamic_cudart:
        raise PtxcError(f"{path} has the CUDA runtime linked in statically (nvcc's default), so "
                        f"ptxc cannot replace it; rebuild the application with "
                        f"`nvcc -cudart shared ...` (docs/runtime.md)")
    origin = os.path.dirname(os.path.abspath(path))
    for d in info.rpath:
        d = d.replace("$ORIGIN", origin).replace("${ORIGIN}", origin)
        real = [n for n in info.needed if n.startswith("libcudart.so")] or [shim.SONAME]
        if os.path.exists(os.path.join(d, real[0])):
            raise PtxcError(f"{path} has a DT_RPATH ({d}) holding the real {real[0]}, which "
                            f"the loader would take before ptxc's; relink it without that rpath "
                            f"or with -Wl,--enable-new-dtags (a DT_RUNPATH)")


class Progress(StatusLine):
    """The one-line progress report on a terminal's stderr, shown while a
    launch runs (at most ten times a second) and erased when it ends, so the
    application's own output (flushed by the shim before each launch) starts
    on a clean line."""

    def begin(self, kernel: str, done: int) -> None:
        self.show(f"ptxc: {done} launches done, running {kernel}")

    def end(self) -> None:
        self.clear()


def run_app(argv: list[str], options: Options, err=None) -> Result:
    """Run the application ``argv`` under ptxc (see the module doc)."""
    err = err or sys.stderr
    program = find_program(argv[0])
    check_linkage(program)
    work = workdir.make()              # removes those a killed ptxc left behind
    progress = Progress(err)
    parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        env = dict(os.environ)
        info = elfinfo.read(program)
        libdir = shim.library_dir(work, shim.needed_majors(info.needed) if info else ())
        env["LD_LIBRARY_PATH"] = libdir + (":" + env["LD_LIBRARY_PATH"]
                                           if env.get("LD_LIBRARY_PATH") else "")
        env[FD_ENV] = str(child.fileno())
        if options.checks:          # ptxc check: the shim reports host writes and API errors
            env[CHECK_ENV] = "1"
        env[CLOCK_ENV] = options.clock   # what the shim's events record (native/stream.c)
        t0 = time.perf_counter()
        try:
            proc = subprocess.Popen([program] + list(argv[1:]), env=env, pass_fds=(child.fileno(),))
        except OSError as e:
            raise PtxcError(f"cannot run '{argv[0]}': {e.strerror}")
        child.close()
        session = Session(options, Channel(parent), progress=progress)
        try:
            session.serve()
        finally:
            progress.clear()
            parent.close()
            app_status = proc.wait()
        if session.stopped:
            err.write(session.stopped.rstrip("\n") + "\n")
        elapsed = time.perf_counter() - t0
    finally:
        shutil.rmtree(work, ignore_errors=True)
    status = app_status if app_status >= 0 else 128 - app_status
    meta = {"application": " ".join(argv), "pid": session.pid or proc.pid, "mode": options.mode,
            "gpu": options.gpu.name, "exit_status": status, "stopped": session.stopped,
            "unsupported_call": session.unsupported, "elapsed_s": round(elapsed, 6),
            "device_error": session.faults[0].summary() if session.faults else None,
            "launches": len(session.launches),
            "memory_counters": options.memory_counters,
            "bank_bytes": options.bank_bytes if options.memory_counters else None,
            "value_profile": options.value_profile,
            "clock": options.clock, "gpu_model": options.gpu.key}
    explain(session, app_status, err)
    if session.stopped:
        status = EXIT_STOPPED_BY_PTXC
    session.devmem.close()
    return Result(status, app_status, session, meta)


def explain(session: Session, app_status: int, err) -> None:
    """Say what went wrong when the application did not end normally or
    never reached ptxc."""
    if app_status < 0:
        import signal
        try:
            name = signal.Signals(-app_status).name
        except ValueError:
            name = f"signal {-app_status}"
        err.write(f"ptxc: the application was killed by {name}\n")
    if session.unsupported:
        err.write(f"ptxc: the application stopped at {session.unsupported}, a CUDA runtime call "
                  f"ptxc does not support (exit status {EXIT_UNSUPPORTED})\n")
    elif not session.connected:
        err.write("ptxc: warning: the application made no call to the CUDA runtime "
                  "(libcudart.so.13); build CUDA applications with `nvcc -cudart shared`\n")
