"""PTX kept for cubins: what lets a cubin without PTX run under ptxc.

Programs compile CUDA C++ with NVRTC to a cubin (SASS) for the device they
see; ptxc runs PTX. When such a compilation happens under ``ptxc run``,
the PTX of the same program is kept here, keyed by the SHA-256 of the
cubin NVRTC produced, so that ``cuModuleLoadData`` of that cubin, in this
run or a later one (a kernel cache on disk), finds its PTX.

The store is a directory of ``<sha256>.ptx`` files under
``$XDG_CACHE_HOME/ptxc/ptx-by-cubin`` (~/.cache/ptxc/ptx-by-cubin), or
``$PTXC_PTX_STORE``.
"""
from __future__ import annotations

import hashlib
import os


def directory() -> str:
    explicit = os.environ.get("PTXC_PTX_STORE")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ptxc", "ptx-by-cubin")


def key(cubin: bytes) -> str:
    return hashlib.sha256(cubin).hexdigest()


def lookup(cubin: bytes) -> str | None:
    """The PTX kept for this cubin, or None."""
    try:
        with open(os.path.join(directory(), key(cubin) + ".ptx"), encoding="utf-8") as f:
            return f.read()
    except OSError:
        return None


def keep(cubin: bytes, ptx: str) -> None:
    """Keep ``ptx`` as the PTX of ``cubin`` (atomically: concurrent runs)."""
    d = directory()
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, key(cubin) + ".ptx")
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(ptx)
    os.replace(tmp, path)
