"""Finding the native shim (ptxc's libcudart.so.13) and the directory that
puts it in front of the real CUDA runtime.

``pip install`` builds the shim into this package as libptxc_cudart.so
(setup.py). The library carries a hash of the sources it was built from;
when it is missing or stale (an editable install whose C files changed
since), native/build_shim.py builds the current sources with the C compiler
into ``$XDG_CACHE_HOME/ptxc`` (~/.cache/ptxc), keyed by that hash.
``PTXC_SHIM=/path/to/lib.so`` names a shim explicitly.
"""
from __future__ import annotations

import functools
import importlib.util
import os
import subprocess
import tempfile

from ptxc.errors import PtxcError

HERE = os.path.dirname(os.path.abspath(__file__))
NATIVE = os.path.join(HERE, "native")
LIBRARY = "libptxc_cudart.so"
SONAME = "libcudart.so.13"
MAJORS = (13, 12)         # libcudart.so.N the shim can stand in for (12: built on demand)


def library_name(major: int = 13) -> str:
    return LIBRARY if major == 13 else f"libptxc_cudart{major}.so"


@functools.lru_cache(maxsize=None)
def build_module():
    """native/build_shim.py, loaded by path (setup.py does the same)."""
    spec = importlib.util.spec_from_file_location("ptxc_build_shim",
                                                  os.path.join(NATIVE, "build_shim.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def library_path(major: int = 13) -> str:
    """The shim for applications that need libcudart.so.``major``."""
    if major != 13:
        return cached_build(major)
    explicit = os.environ.get("PTXC_SHIM")
    if explicit:
        if not os.path.isfile(explicit):
            raise PtxcError(f"PTXC_SHIM names '{explicit}', which does not exist")
        return explicit
    installed = os.path.join(HERE, LIBRARY)
    if os.path.isfile(installed) and (not os.path.isdir(NATIVE)
                                      or build_module().is_current(installed)):
        return installed
    try:
        return cached_build()
    except PtxcError:
        if os.path.isfile(installed):          # stale but usable: better than nothing
            return installed
        raise


def cached_build(major: int = 13) -> str:
    if not os.path.isdir(NATIVE):
        raise PtxcError("this ptxc installation has no CUDA runtime shim; reinstall it with pip")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    out_dir = os.path.join(base, "ptxc", f"shim-{build_module().source_hash()}")
    out = os.path.join(out_dir, library_name(major))
    if os.path.isfile(out):
        return out
    os.makedirs(out_dir, exist_ok=True)
    tmp = tempfile.mkdtemp(dir=out_dir)
    try:
        built = build_module().compile_shared(os.path.join(tmp, library_name(major)), major=major)
    except (OSError, subprocess.CalledProcessError) as e:
        detail = getattr(e, "stderr", "") or str(e)
        raise PtxcError(f"cannot build ptxc's CUDA runtime shim with the C compiler: "
                        f"{detail.strip().splitlines()[-1] if detail.strip() else e}")
    os.replace(built, out)
    return out


DRIVER_SONAME = "libcuda.so.1"   # the same library serves the driver API (native/driver.h)


def library_dir(workdir: str, majors=(13,)) -> str:
    """A directory holding ``libcudart.so.13`` -> the shim (for LD_LIBRARY_PATH),
    ``libcudart.so.12`` -> the CUDA 12 build when ``majors`` has 12, and
    ``libcuda.so.1`` -> the shim the application's runtime is (one file: the
    dynamic loader loads it once, whichever name it is asked for first)."""
    d = os.path.join(workdir, "lib")
    os.makedirs(d, exist_ok=True)
    for major in sorted(set(majors) | {13}):
        link = os.path.join(d, f"libcudart.so.{major}")
        if not os.path.lexists(link):
            os.symlink(library_path(major), link)
    driver = os.path.join(d, DRIVER_SONAME)
    if not os.path.lexists(driver):
        os.symlink(library_path(12 if 12 in majors else 13), driver)
    return d


def needed_majors(needed: list) -> tuple:
    """The CUDA runtime majors an executable's DT_NEEDED names (libcudart.so.N)."""
    out = []
    for n in needed:
        if n.startswith("libcudart.so.") and n[len("libcudart.so."):].isdigit():
            major = int(n[len("libcudart.so."):])
            if major in MAJORS:
                out.append(major)
    return tuple(out)
