"""A one-line progress report on a terminal: redrawn in place (``\\r`` and
erase-to-end-of-line) at most ten times a second, erased when the work
ends, and nothing at all when the stream is not a terminal (a pipe or a
file gets only the real output). ``ptxc profile DIR`` counts its modules
with it, ``ptxc run`` its launches.
"""
from __future__ import annotations

import time

EVERY = 0.1        # seconds between two redraws


class StatusLine:
    def __init__(self, stream, enabled: bool = True):
        self.stream = stream
        self.enabled = enabled and isatty(stream)
        self.shown = False
        self.last = 0.0

    def show(self, text: str, now: bool = False) -> None:
        """Draw ``text`` over the line, unless it was drawn less than EVERY
        seconds ago (``now``: draw anyway)."""
        t = time.monotonic()
        if self.enabled and (now or t - self.last >= EVERY):
            self.last = t
            self.stream.write("\r\033[K" + text)
            self.stream.flush()
            self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.shown = False


def isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
