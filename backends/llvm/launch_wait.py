"""Run a launch's CTA workers in threads and wait for them interruptibly,
with a progress line for long launches.

The native ``run_ctas`` holds no GIL, and Python delivers SIGINT only to
the main thread between bytecodes: a kernel run on the main thread could not
be interrupted until it returned (a 2**31-CTA grid runs for hours). So the
workers always run in threads (one for a serial launch) and the main thread
waits with ``join(timeout)``, which a signal interrupts: Ctrl-C raises
KeyboardInterrupt at once, the workers are told to take no more CTAs, and
the CLI exits with status 130 (the workers are daemon threads: a CTA still
running in native code does not keep the process alive).

While it waits, the main thread shows a one-line progress report on stderr
(CTAs done, elapsed time and an estimate of the time left, from the rate so
far) once a launch has run for ``DELAY`` seconds: when stderr is a terminal,
or always with ``PTXC_PROGRESS=1`` (never with ``PTXC_PROGRESS=0``). The line
is erased when the launch ends.
"""
from __future__ import annotations

import os
import sys
import threading
import time
from contextlib import contextmanager

DELAY = 2.0          # seconds before the first progress line
EVERY = 1.0          # seconds between updates
POLL = 0.2           # seconds between checks of the workers


def run_threads(loop, n: int, state: dict, total: int, label: str,
                frame: int | None = None) -> None:
    """Run ``loop(k)`` for k < n in daemon threads whose stacks fit native
    frames of ``frame`` bytes (stacks.py); ``state["done"]`` counts
    finished CTAs (of ``total``); ``state["tick"](done, total)``, if given,
    is called every POLL seconds (tier_up.py). On KeyboardInterrupt (or an exception of
    the ``watching`` check) set ``state["stop"]`` to -1 (the loops take no
    more work) and re-raise."""
    from ptxc.backends.llvm.stacks import start_threads
    progress = Progress(label, total)
    tick = state.get("tick")
    try:
        threads = start_threads(loop, n, frame, label)
        for t in threads:
            t.join(POLL)
            while t.is_alive():         # checked only while the launch runs on
                progress.update(state.get("done", 0))
                if tick is not None:
                    tick(state.get("done", 0), total)
                poll_watch()
                t.join(POLL)
    except BaseException:
        state["stop"] = -1
        raise
    finally:
        progress.close()


_watch = threading.local()


@contextmanager
def watching(check):
    """While the block runs, launches waited for in this thread call
    ``check()`` every POLL seconds (module doc)."""
    old = getattr(_watch, "check", None)
    _watch.check = check
    try:
        yield
    finally:
        _watch.check = old


def poll_watch() -> None:
    """Call the check of the enclosing ``watching`` (if any)."""
    check = getattr(_watch, "check", None)
    if check is not None:
        check()


def wanted(stream) -> bool:
    env = os.environ.get("PTXC_PROGRESS")
    if env in ("0", "1"):
        return env == "1"
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Progress:
    """``ptxc: kernel K: 1200/5000 CTAs (24%), 3.1 s, about 9.8 s left``."""

    def __init__(self, label: str, total: int, stream=None):
        self.stream = stream or sys.stderr
        self.label, self.total = label, total
        self.t0 = time.monotonic()
        self.enabled = wanted(self.stream)
        self.last = 0.0
        self.shown = False

    def update(self, done: int) -> None:
        now = time.monotonic()
        if not self.enabled or now - self.t0 < DELAY or now - self.last < EVERY:
            return
        self.last = now
        self.stream.write("\r\033[K" + line(self.label, done, self.total, now - self.t0))
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.shown = False


def line(label: str, done: int, total: int, elapsed: float) -> str:
    pct = 100.0 * done / total if total else 100.0
    text = f"ptxc: {label}: {done}/{total} CTAs ({pct:.1f}%), {duration(elapsed)}"
    if done:
        text += f", about {duration(elapsed * (total - done) / done)} left"
    return text + " (Ctrl-C stops)"


def duration(s: float) -> str:
    """3.2 s, 4 min 5 s, 2 h 3 min, 3 d 4 h."""
    if s < 60:
        return f"{s:.1f} s"
    m = int(s // 60)
    if m < 60:
        return f"{m} min {int(s % 60)} s"
    h = m // 60
    if h < 48:
        return f"{h} h {m % 60} min"
    return f"{h // 24} d {h % 24} h"
