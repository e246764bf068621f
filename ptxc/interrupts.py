"""Ctrl-C, SIGTERM and a parent's death: what the long-running commands
share (``ptxc run`` and ``ptxc check``, ptxc/runtime/app.py; ``ptxc
profile`` of many modules, ptxc/profile/batch.py, and its forked kernel
processes, ptxc/profile/fork.py).

Python turns SIGINT into KeyboardInterrupt in the main thread;
:func:`sigterm_interrupts` makes SIGTERM raise :class:`Terminated` (a
KeyboardInterrupt) there too, so that one ``except KeyboardInterrupt``
keeps what finished for both, and ``finally`` blocks run (temporary
directories are removed, child processes stopped) instead of the process
dying at once.

SIGKILL cannot be caught: :func:`die_with_parent` makes a worker process
end when the process that started it dies, so that no worker outlives a
killed ptxc (Linux: ``prctl(PR_SET_PDEATHSIG)``; elsewhere a thread that
watches the parent's pid).
"""
from __future__ import annotations

import os
import signal
import sys
import threading
from contextlib import contextmanager


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where SIGINT raises KeyboardInterrupt (main thread)."""


def signal_name(exc: BaseException) -> str:
    """'SIGTERM' for :class:`Terminated`, else 'SIGINT' (a KeyboardInterrupt)."""
    return "SIGTERM" if isinstance(exc, Terminated) else "SIGINT"


@contextmanager
def sigterm_interrupts():
    """SIGTERM raises Terminated in the main thread while the block runs (Python
    runs signal handlers there only; elsewhere this does nothing). The
    previous handler is restored at the end."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise Terminated()

    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


class InterruptFlag:
    """What :func:`interrupt_flag` noted: ``signal`` is 'SIGINT' or 'SIGTERM'
    once one came, else None."""
    signal: str | None = None


@contextmanager
def interrupt_flag():
    """While the block runs, SIGINT and SIGTERM only set the flag's
    ``signal`` (main thread; elsewhere it never rises), so that a loop that
    polls it stops cleanly at a point of its choosing (``ptxc profile DIR``
    waiting for its worker processes); a second one raises
    KeyboardInterrupt or Terminated at once. The previous handlers are
    restored at the end."""
    flag = InterruptFlag()
    if threading.current_thread() is not threading.main_thread():
        yield flag
        return

    def handler(signum, frame):
        if flag.signal is not None:
            raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()
        flag.signal = "SIGTERM" if signum == signal.SIGTERM else "SIGINT"

    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield flag
    finally:
        for s, h in old.items():
            signal.signal(s, h)


@contextmanager
def sigint_blocked():
    """SIGINT blocked in this thread while the block runs: a process started
    in it (a worker spawned by multiprocessing) starts with SIGINT blocked,
    so a terminal's Ctrl-C, sent to the whole process group, reaches only
    ptxc, which then stops its workers itself. A SIGINT that comes meanwhile
    waits until the end of the block (or is taken by another thread)."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


PR_SET_PDEATHSIG = 1        # linux/prctl.h


def die_with_parent(parent: int, signum: int = signal.SIGKILL) -> None:
    """Make this process get ``signum`` when ``parent`` (the pid of the
    process that started it) dies; if it is already gone, end now. Called
    first thing in a worker process. On Linux the kernel sends the signal
    (``PR_SET_PDEATHSIG``: when the thread that forked this process ends,
    so ``parent`` must start its workers from its main thread); elsewhere a
    daemon thread checks the parent's pid once a second."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0) == 0:
                if os.getppid() != parent:          # it died before the prctl
                    os.kill(os.getpid(), signum)
                return
        except (OSError, AttributeError):
            pass
    _watch_parent(parent, signum)


def _watch_parent(parent: int, signum: int) -> None:
    def watch():
        import time
        while os.getppid() == parent:
            time.sleep(1.0)
        os.kill(os.getpid(), signum)

    if os.getppid() != parent:
        os.kill(os.getpid(), signum)
    threading.Thread(target=watch, name="ptxc-parent-watch", daemon=True).start()
