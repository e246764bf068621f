"""The environment that puts ptxc's driver API in front of a Python GPU program.

numba-cuda, CuPy, cuda.core and Triton find the CUDA libraries through
cuda-pathfinder (or their own loaders), which take a library that is
already loaded in the process by its soname before searching site-packages
for the wheel's copy. So ``ptxc run`` preloads its library (native/; one
file serving the runtime and driver APIs and nvJitLink) under the names
``libcuda.so.1`` and ``libnvJitLink.so.13``: the loader loads the file once
and answers every later request for ``libcuda.so.1``, ``libcudart.so.13``
or ``libnvJitLink.so.13`` with it, so the real runtime of a wheel is never
loaded next to ptxc's driver.
"""
from __future__ import annotations

import os

from .shim import DRIVER_SONAME

JITLINK_SONAME = "libnvJitLink.so.13"
PRELOAD = (DRIVER_SONAME, JITLINK_SONAME)


def apply(env: dict, libdir: str) -> None:
    """Add the preloads (their links in ``libdir``) to ``env``."""
    target = os.readlink(os.path.join(libdir, DRIVER_SONAME))
    link = os.path.join(libdir, JITLINK_SONAME)
    if not os.path.lexists(link):
        os.symlink(target, link)
    old = env.get("LD_PRELOAD", "")
    env["LD_PRELOAD"] = " ".join(PRELOAD) + (" " + old if old else "")
