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
import struct
import subprocess
import sys
import time
from dataclasses import dataclass

from ptxc.backends.llvm import warm_up
from ptxc.errors import PtxcError
from ptxc.interrupts import signal_name, sigterm_interrupts
from ptxc.report.status_line import StatusLine

from . import cubin_ptx, driver_env, elfinfo, shim, workdir
from .protocol import APP_ENV, CHECK_ENV, CLOCK_ENV, EXIT_UNSUPPORTED, FD_ENV, ST_FATAL, Channel
from .server import Options, Session

EXIT_STOPPED_BY_PTXC = 1
EXIT_INTERRUPTED = 130         # Ctrl-C or SIGTERM: what ptxc (and the application it stops) exit with


@dataclass
class Result:
    status: int                 # what `ptxc run` exits with
    app_status: int | None      # the application's exit status
    session: Session
    meta: dict
    interrupted: str | None = None    # 'SIGINT' or 'SIGTERM' when the run was interrupted
    program: str = ""                 # the executable's path


def stop_application(channel: Channel, proc: subprocess.Popen) -> None:
    """Stop the application after an interrupt. When the shim waits for a
    reply (a launch was running), the reply tells it to exit with status
    130: stdio buffers are flushed, as when ptxc stops a run. Otherwise (it
    runs host code, or the reply was cut short) it gets SIGTERM; SIGKILL
    when it is still there two seconds later."""
    if channel.owed and not channel.replying:
        try:
            channel.reply(ST_FATAL, struct.pack("<I", EXIT_INTERRUPTED))
        except OSError:
            pass                        # already gone: Ctrl-C reached it too
        try:
            proc.wait(timeout=2)
            return
        except subprocess.TimeoutExpired:
            pass
    for send in (proc.terminate, proc.kill):
        if proc.poll() is not None:
            return
        send()
        try:
            proc.wait(timeout=2)
            return
        except subprocess.TimeoutExpired:
            continue


def find_program(argv0: str) -> str:
    path = argv0 if os.sep in argv0 else shutil.which(argv0)
    if not path or not os.path.isfile(path):
        raise PtxcError(f"cannot run '{argv0}': no such program")
    if not os.access(path, os.X_OK):
        raise PtxcError(f"cannot run '{argv0}': not executable")
    return path


def check_linkage(path: str) -> None:
    """Refuse an application whose DT_RPATH would load the real
    libcudart.so.13 before ptxc's. Whatever runtime nvcc linked in runs:
    the shared one (``-cudart shared``) is replaced by the shim, and the
    static one (nvcc's default) dlopens libcuda.so.1, which is the shim too
    (native/drv_export.c serves its export tables; docs/runtime.md)."""
    info = elfinfo.read(path)
    if info is None or not info.has_fatbin:
        return
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
        from ptxc.ir.names import short
        self.show(f"ptxc: {done} launches done, running {short(kernel)}")

    def end(self) -> None:
        self.clear()


@sigterm_interrupts()
def run_app(argv: list[str], options: Options, err=None) -> Result:
    """Run the application ``argv`` under ptxc (see the module doc). SIGTERM
    raises Terminated (a KeyboardInterrupt) all along, as Ctrl-C does, so the
    work directory is removed and the application is not left behind also
    when it comes before the application runs, or a second time while ptxc
    stops the application."""
    err = err or sys.stderr
    program = find_program(argv[0])
    check_linkage(program)
    progress = Progress(err)
    parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    work = workdir.make()              # removes those a killed ptxc left behind
    try:                               # (nothing between that could take a signal)
        env = dict(os.environ)
        info = elfinfo.read(program)
        libdir = shim.library_dir(work, shim.needed_majors(info.needed) if info else ())
        env["LD_LIBRARY_PATH"] = libdir + (":" + env["LD_LIBRARY_PATH"]
                                           if env.get("LD_LIBRARY_PATH") else "")
        driver_env.apply(env, libdir)      # the driver API for Python GPU programs
        env[FD_ENV] = str(child.fileno())
        env.pop(APP_ENV, None)      # (the shim sets it for the programs the application starts)
        if options.checks:          # ptxc check: the shim reports host writes and API errors
            env[CHECK_ENV] = "1"
        env[CLOCK_ENV] = options.clock   # what the shim's events record (native/stream.c)
        t0 = time.perf_counter()
        warming = None
        try:
            proc = subprocess.Popen([program] + list(argv[1:]), env=env, pass_fds=(child.fileno(),))
        except OSError as e:
            raise PtxcError(f"cannot run '{argv[0]}': {e.strerror}")
        try:
            child.close()
            warming = warm_up.start(      # LLVM and the code generator, beside the app's start
                options.bank_bytes if options.memory_counters else 0)
            session = Session(options, Channel(parent), progress=progress, app=proc)
            session.driver.ptx_store = env.get(cubin_ptx.STORE_ENV)   # Triton's PTX (cubin_ptx.py)
            interrupted = None
            try:
                session.serve()
            except KeyboardInterrupt as e:         # Ctrl-C, SIGTERM: keep what finished
                interrupted = signal_name(e)
            if interrupted:                        # (a second Ctrl-C or SIGTERM ends ptxc)
                progress.clear()
                stop_application(session.channel, proc)
        except BaseException:                      # never leave the application behind
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            raise
        finally:
            progress.clear()
            parent.close()
            warm_up.finish(warming)
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
            "unsupported_driver_calls": ", ".join(session.driver.unsupported) or None,
            "device_error": session.faults[0].summary() if session.faults else None,
            "launches": len(session.launches),
            "memory_counters": options.memory_counters,
            "bank_bytes": options.bank_bytes if options.memory_counters else None,
            "value_profile": options.value_profile,
            "clock": options.clock, "gpu_model": options.gpu.key,
            "interrupted": interrupted,
            "interrupted_kernel": session.current[1] if interrupted and session.current else None,
            "abandoned_kernel": session.abandoned[1] if session.abandoned else None}
    if interrupted:
        from .report import interrupt_text
        err.write(f"ptxc: {interrupt_text(meta)}; the application was stopped\n")
        status = EXIT_INTERRUPTED
    else:
        explain(session, app_status, err, program)
    if session.stopped:
        status = EXIT_STOPPED_BY_PTXC
    session.devmem.close()
    return Result(status, app_status, session, meta, interrupted, program)


def explain(session: Session, app_status: int, err, program: str = "") -> None:
    """Say what went wrong when the application did not end normally or
    never reached ptxc."""
    if session.abandoned:             # it died while a launch ran (server.AppDied)
        number, kernel = session.abandoned
        from ptxc.report.kernel_names import demangle
        done = len(session.launches)
        err.write(f"ptxc: the application {death(app_status)} during launch {number} "
                  f"(kernel {demangle([kernel])[kernel]}), which ptxc abandoned and does not count; "
                  f"{done or 'no'} earlier launch{'' if done == 1 else 'es'} completed\n")
    elif app_status < 0:
        err.write(f"ptxc: the application {death(app_status)}\n")
    if session.unsupported:
        err.write(f"ptxc: the application stopped at {session.unsupported}, a CUDA runtime call "
                  f"ptxc does not support (exit status {EXIT_UNSUPPORTED})\n")
    if session.driver.unsupported:
        names = ", ".join(session.driver.unsupported)
        err.write(f"ptxc: the application called CUDA driver functions ptxc does not support "
                  f"(each returned CUDA_ERROR_NOT_SUPPORTED): {names}"
                  f"{static_runtime_advice(program)}\n")
    if not session.connected and not session.unsupported:
        err.write(f"ptxc: warning: the application made no call to the CUDA runtime "
                  f"(libcudart.so.13) or driver (libcuda.so.1){no_call_advice(program)}\n")


def static_runtime_advice(program: str) -> str:
    """After unsupported driver calls: a program with nvcc's static runtime
    reaches ptxc only through the driver API, which lacks what only ptxc's
    runtime API has (stream capture, graphs); its -cudart shared build
    uses that runtime API."""
    info = elfinfo.read(program) if program else None
    if info is None or not info.has_fatbin or info.dynamic_cudart:
        return ""
    return ("; the application's static CUDA runtime (nvcc's default) reaches ptxc through "
            "these driver calls: rebuild it with `nvcc -cudart shared ...` to use ptxc's "
            "runtime API, which has stream capture and graphs")


def no_call_advice(program: str) -> str:
    """What to do when the program never called CUDA: nothing when it loads
    the runtime or the driver itself or carries a fat binary (it had no
    work for them); else run
    the CUDA program itself (the programs an application starts are not
    measured; any runtime linkage runs, see check_linkage)."""
    info = elfinfo.read(program) if program else None
    if info is not None and (info.dynamic_cudart or info.has_fatbin
                             or shim.DRIVER_SONAME in info.needed):
        return ""                     # a CUDA program (a static runtime: the fat binary)
    return ("; ptxc measures the program it starts, not the programs that one starts: run the "
            "CUDA program itself (`ptxc run -- ./app`)")


def death(app_status: int) -> str:
    """'was killed by SIGSEGV' (signal N: a negative status) or 'exited with status S'."""
    if app_status >= 0:
        return f"exited with status {app_status}"
    import signal
    try:
        name = signal.Signals(-app_status).name
    except ValueError:
        name = f"signal {-app_status}"
    return f"was killed by {name}"
