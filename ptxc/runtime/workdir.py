"""The temporary directory of one ``ptxc run`` (it holds the libcudart shim).

``ptxc run`` removes its directory when it ends, but a ptxc killed by
SIGKILL cannot: the directory's name carries the pid of the ptxc that made
it (``ptxc-run-PID-XXXX``), and every ``ptxc run`` first removes the ones
of this user whose ptxc is gone.
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile

PREFIX = "ptxc-run-"
_NAME = re.compile(re.escape(PREFIX) + r"([0-9]+)-")


def make() -> str:
    """A fresh work directory, after removing stale ones."""
    remove_stale(tempfile.gettempdir())
    return tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-")


def remove_stale(folder: str) -> list[str]:
    """Remove this user's ``ptxc-run-PID-*`` directories in ``folder`` whose
    process no longer exists; the paths removed."""
    removed = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        m = _NAME.match(name)
        path = os.path.join(folder, name)
        if m is None or alive(int(m.group(1))):
            continue
        try:
            if os.lstat(path).st_uid != os.getuid() or not os.path.isdir(path):
                continue
        except OSError:
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True
