"""The environment that puts ptxc's driver API in front of a Python GPU program.

numba-cuda, cuda.core and Triton find the CUDA libraries through
cuda-pathfinder (or their own loaders), which take a library that is
already loaded in the process by its soname before searching site-packages
for the wheel's copy. So ``ptxc run`` preloads its library (native/; one
file serving the runtime and driver APIs, nvJitLink and NVRTC) under the
names ``libcuda.so.1``, ``libnvJitLink.so.13`` and ``libnvrtc.so.13``: the
loader loads the file once and answers every later request for any of
those names, or for ``libcudart.so.13``, with it, so the real runtime of a
wheel is never loaded next to ptxc's driver.

ptxc's NVRTC forwards to the real one (native/nvrtc.c) and keeps the PTX of
each cubin; ``$PTXC_NVRTC`` names the real library when ptxc's own Python
environment or the CUDA toolkit has one (the program looks next to its own
packages otherwise).

CuPy keeps the cubins NVRTC made in an on-disk cache (``~/.cupy/kernel_cache``)
and loads them in later runs without calling NVRTC, and a cubin is SASS,
which ptxc cannot run; so ``ptxc run`` sets ``CUPY_CACHE_IN_MEMORY=1`` (unless
the user set it): each run compiles its kernels, and ptxc's NVRTC keeps
their PTX. CuPy's CUB and Thrust routines are compiled into its wheel with
the runtime linked statically: SASS, and PTX only for the newest
architecture, which ptxc's GPU models cannot load; so ``ptxc run`` sets
``CUPY_ACCELERATORS=`` (unless set), and CuPy reduces with the kernels it
compiles (a library kernel that cannot run stops the run: native/drv_module.c).

Triton compiles its PTX to cubins with ptxas: ``ptxc run`` names its own
ptxas, which keeps the PTX of each cubin (cubin_ptx.py).
"""
from __future__ import annotations

import os
import sys

from . import cubin_ptx
from .shim import DRIVER_SONAME

JITLINK_SONAME = "libnvJitLink.so.13"
NVRTC_SONAME = "libnvrtc.so.13"
PRELOAD = (DRIVER_SONAME, JITLINK_SONAME, NVRTC_SONAME)


def apply(env: dict, libdir: str) -> None:
    """Add the preloads (their links in ``libdir``) and ``PTXC_NVRTC`` to ``env``."""
    target = os.readlink(os.path.join(libdir, DRIVER_SONAME))
    for name in (JITLINK_SONAME, NVRTC_SONAME):
        link = os.path.join(libdir, name)
        if not os.path.lexists(link):
            os.symlink(target, link)
    old = env.get("LD_PRELOAD", "")
    env["LD_PRELOAD"] = " ".join(PRELOAD) + (" " + old if old else "")
    env.setdefault("CUPY_CACHE_IN_MEMORY", "1")
    env.setdefault("CUPY_ACCELERATORS", "")
    cubin_ptx.apply(env, libdir)       # Triton's ptxas keeps the PTX of its cubins
    if not env.get("PTXC_NVRTC"):
        real = real_nvrtc(env)
        if real:
            env["PTXC_NVRTC"] = real


def real_nvrtc(env: dict) -> str | None:
    """The real libnvrtc.so.13: a wheel's in ptxc's sys.path, or the toolkit's."""
    places = [os.path.join(p, "nvidia", sub, "lib") for p in sys.path
              for sub in ("cu13", "cuda_nvrtc")]
    places += [os.path.join(h, "lib64") for h in (env.get("CUDA_HOME"), env.get("CUDA_PATH"),
                                                   "/usr/local/cuda") if h]
    for d in places:
        path = os.path.join(d, NVRTC_SONAME)
        if os.path.isfile(path):
            return path
    return None
