"""The PTX of a cubin that a Python GPU program compiled itself (Triton).

Triton compiles each kernel's PTX to a cubin with ptxas and loads the cubin
(SASS, which ptxc cannot run) through the driver API. ``ptxc run`` points
Triton at ptxc's ptxas (``TRITON_PTXAS_PATH`` and
``TRITON_PTXAS_BLACKWELL_PATH``, unless the user set them): a wrapper of
the real ptxas (ptxas_keep.py) that keeps the PTX of each cubin in the run's
store, keyed by the SHA-256 of the cubin. The real ptxas is the one Triton
would use: Triton's own (``triton/backends/nvidia/bin``) when ptxc's Python
environment has Triton, else the CUDA toolkit's.

A cubin of an earlier run comes from Triton's cache without ptxas; Triton
keeps its PTX next to it (``<cache>/<hash>/<kernel>.cubin`` and
``.ptx``, the cache in ``$TRITON_CACHE_DIR``, else
``$TRITON_HOME/.triton/cache``, else ``~/.triton/cache``), and
``lookup`` finds it there by the cubin's bytes.
"""
from __future__ import annotations

import glob
import hashlib
import importlib.util
import os
import shlex
import shutil
import sys

TOOLS = {"ptxas": "TRITON_PTXAS_PATH", "ptxas-blackwell": "TRITON_PTXAS_BLACKWELL_PATH"}
STORE_ENV = "PTXC_CUBIN_PTX"


def store_dir(libdir: str) -> str:
    """The run's store (next to its library directory)."""
    return os.path.join(os.path.dirname(libdir), "cubin-ptx")


def apply(env: dict, libdir: str) -> None:
    """Point Triton's ptxas at the wrappers (written in ``libdir``) and name the store."""
    store = store_dir(libdir)
    env[STORE_ENV] = store
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ptxas_keep.py")
    for tool, var in TOOLS.items():
        if env.get(var):
            continue
        real = real_ptxas(tool, env)
        if not real:
            continue
        path = os.path.join(libdir, tool)
        with open(path, "w") as f:
            f.write("#!/bin/sh\n# ptxc's ptxas: the real one, keeping the PTX of each cubin\n"
                    f"exec env -u LD_PRELOAD {shlex.quote(sys.executable)} {shlex.quote(script)} "
                    f"{shlex.quote(store)} {shlex.quote(real)} \"$@\"\n")
        os.chmod(path, 0o755)
        env[var] = path


def real_ptxas(tool: str, env: dict) -> str | None:
    """Triton's bundled ``tool`` in ptxc's environment, else the toolkit's ptxas."""
    spec = importlib.util.find_spec("triton")
    for d in (spec.submodule_search_locations or []) if spec else []:
        path = os.path.join(d, "backends", "nvidia", "bin", tool)
        if os.access(path, os.X_OK):
            return path
    homes = [env.get("CUDA_HOME"), env.get("CUDA_PATH"), "/usr/local/cuda"]
    for path in [os.path.join(h, "bin", "ptxas") for h in homes if h] + [shutil.which("ptxas")]:
        if path and os.access(path, os.X_OK):
            return path
    return None


def lookup(blob: bytes, store: str | None) -> str | None:
    """The PTX text of cubin ``blob``: from the run's store, else Triton's cache."""
    if store:
        path = os.path.join(store, hashlib.sha256(blob).hexdigest() + ".ptx")
        if os.path.isfile(path):
            return _read(path)
    for cubin in glob.glob(os.path.join(triton_cache(), "*", "*.cubin")):
        ptx = cubin[:-len(".cubin")] + ".ptx"
        try:
            if os.path.getsize(cubin) != len(blob) or not os.path.isfile(ptx):
                continue
            with open(cubin, "rb") as f:
                if f.read() == blob:
                    return _read(ptx)
        except OSError:
            continue
    return None


def triton_cache() -> str:
    if os.environ.get("TRITON_CACHE_DIR"):
        return os.environ["TRITON_CACHE_DIR"]
    home = os.environ.get("TRITON_HOME") or os.path.expanduser("~")
    return os.path.join(home, ".triton", "cache")


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None
