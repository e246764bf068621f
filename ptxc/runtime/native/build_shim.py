"""Build ptxc's libcudart.so.13 replacement (the shim) from the C files here.

setup.py loads this file by path (the ptxc package is not importable while
it is being built) and so does ptxc.runtime.shim when the installed package
has no built shim (a source checkout). Both need only a C compiler.

Generated at build time from cudart_exports.txt (the names the real
libcudart.so.13 exports, committed; gen_exports.py made it):

* stubs.c: a weak definition of every exported name that prints
  ``ptxc: unsupported CUDA runtime call: NAME`` and exits; the functions the
  shim implements are strong definitions in the other files and win at link
  time, so the list never needs editing when a function is implemented.
* cudart.map: a linker version script that puts every exported name in
  version node ``libcudart.so.13``, the node the application's references
  name (``nm -D app`` shows ``cudaMalloc@libcudart.so.13``), and hides the
  rest.

The same library serves the driver API (driver.h, drv_*.c: every name of
cuda_exports.txt, weak stubs returning CUDA_ERROR_NOT_SUPPORTED for the ones
not implemented, in version node ``libcuda.so.1``, and the table
cuGetProcAddress reads), nvJitLink (nvjitlink.c, node
``libnvJitLink.so.13``) and NVRTC (nvrtc.c, node ``libnvrtc.so.13``), so
that one connection and one allocation table serve every API
(docs/python-gpu.md).

An application linked against CUDA 12 needs ``libcudart.so.12`` and names
version node ``libcudart.so.12`` (same function names). A version node is
one per symbol, so the CUDA 12 library is a second build of the same
sources (``major=12``: soname and node ``libcudart.so.12``,
cudaRuntimeGetVersion 12080, and the CUDA 12 names of CUDA12_ONLY:
device12.c's CUDA 12 cudaGetDeviceProperties_v2, stubs for the others).
"""
from __future__ import annotations

import hashlib
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = ("conn.c", "memory.c", "register.c", "device.c", "stream.c", "errors.c", "graph.c",
           "graph_api.c", "graph_exec.c", "graph_cond.c", "capture.c", "stream_attr.c", "devout.c", "device12.c",
           "texture.c", "memcpy3d.c", "mempool.c", "mempool_access.c", "graph_mem.c", "drv_init.c",
           "drv_device.c", "drv_context.c", "drv_module.c", "drv_link.c", "drv_memory.c",
           "drv_mempool.c", "drv_stream.c", "drv_launch.c", "drv_export.c", "drv_integrity.c",
           "drv_texture.c",
           "nvjitlink.c", "nvrtc.c")
DRIVER_NODE = "libcuda.so.1"   # the driver API's names (driver.h): the same library serves both
JITLINK_NODE = "libnvJitLink.so.13"   # ptxc's nvJitLink (nvjitlink.c), preloaded under that name
JITLINK_NAMES = ("nvJitLinkCreate", "nvJitLinkDestroy", "nvJitLinkAddData", "nvJitLinkAddFile",
                 "nvJitLinkComplete", "nvJitLinkGetLinkedCubinSize", "nvJitLinkGetLinkedCubin",
                 "nvJitLinkGetLinkedPtxSize", "nvJitLinkGetLinkedPtx",
                 "nvJitLinkGetLinkedLTOIRSize", "nvJitLinkGetLinkedLTOIR",
                 "nvJitLinkGetErrorLogSize", "nvJitLinkGetErrorLog", "nvJitLinkGetInfoLogSize",
                 "nvJitLinkGetInfoLog", "nvJitLinkVersion")
NVRTC_NODE = "libnvrtc.so.13"       # ptxc's NVRTC (nvrtc.c), preloaded under that name
NVRTC_NAMES = ("nvrtcVersion", "nvrtcGetNumSupportedArchs", "nvrtcGetSupportedArchs",
               "nvrtcGetPTXSize", "nvrtcGetPTX", "nvrtcGetCUBINSize", "nvrtcGetLTOIRSize",
               "nvrtcGetLTOIR", "nvrtcGetOptiXIRSize", "nvrtcGetOptiXIR", "nvrtcGetProgramLogSize",
               "nvrtcGetProgramLog", "nvrtcGetLoweredName", "nvrtcGetPCHHeapSize",
               "nvrtcSetPCHHeapSize", "nvrtcGetPCHCreateStatus", "nvrtcGetPCHHeapSizeRequired",
               "nvrtcSetFlowCallback", "nvrtcGetTileIRSize", "nvrtcGetTileIR",
               "nvrtcInstallBundledHeaders", "nvrtcGetBundledHeadersInfo",
               "nvrtcRemoveBundledHeaders", "__nvrtcCPEx", "__nvrtcNvvmHandle",
               "nvrtcGetErrorString", "nvrtcCreateProgram", "nvrtcAddNameExpression",
               "nvrtcCompileProgram", "nvrtcGetCUBIN", "nvrtcDestroyProgram")
SONAME = "libcudart.so.13"
VERSION_NODE = "libcudart.so.13"
MAJORS = (13, 12)       # CUDA 12 applications: the same library as libcudart.so.12 (below)
# names a CUDA 12 application may reference that CUDA 13 no longer exports:
# device12.c implements the first three and graph_cond.c cudaGraphAddNode_v2
# (CUDA 12's cudaGraphAddNode has no edge data; the _v2 call has), the others
# are unsupported calls (a clear message rather than a loader error)
CUDA12_ONLY = ("cudaGetDeviceProperties_v2", "cudaThreadSynchronize", "cudaThreadExit",
               "cudaThreadGetLimit", "cudaThreadSetLimit", "cudaThreadGetCacheConfig",
               "cudaThreadSetCacheConfig", "cudaGraphAddNode_v2")
BASE_COMPILE_ARGS = ["-O2", "-fvisibility=hidden", "-Wall", "-Wno-unused-parameter"]
TAG = "ptxc-shim-source:"


def source_hash() -> str:
    """A hash of everything the shim is built from: the built library carries
    it (``ptxc-shim-source:HASH``), so ptxc can tell a stale build."""
    h = hashlib.sha256()
    for name in sorted(os.listdir(HERE)):
        if name.endswith((".c", ".h", ".inc", ".txt")) or name == "build_shim.py":
            with open(os.path.join(HERE, name), "rb") as f:
                h.update(name.encode() + b"\0" + f.read())
    return h.hexdigest()[:16]


def compile_args() -> list[str]:
    return BASE_COMPILE_ARGS + [f'-DPTXC_SOURCE_TAG="{TAG}{source_hash()}"']


def is_current(library: str) -> bool:
    """Was ``library`` built from the sources here?"""
    try:
        with open(library, "rb") as f:
            return (TAG + source_hash()).encode() in f.read()
    except OSError:
        return False


def export_names() -> list[str]:
    with open(os.path.join(HERE, "cudart_exports.txt")) as f:
        return [line.strip() for line in f if line.strip()]


def driver_names() -> list[str]:
    """The names the real libcuda.so.1 exports (cuda_exports.txt, sorted)."""
    with open(os.path.join(HERE, "cuda_exports.txt")) as f:
        return [line.strip() for line in f if line.strip()]


def node(major: int = 13) -> str:
    return f"libcudart.so.{major}"


def write_generated(outdir: str, major: int = 13) -> tuple[str, str]:
    """Write stubs.c and cudart.map into ``outdir``; their paths."""
    os.makedirs(outdir, exist_ok=True)
    names = export_names() + (list(CUDA12_ONLY) if major == 12 else [])
    stubs = os.path.join(outdir, "stubs.c")
    with open(stubs, "w") as f:
        f.write("/* generated by build_shim.py from cudart_exports.txt */\n"
                f'#include "{os.path.join(HERE, "shim.h")}"\n'
                "#define STUB(n) __attribute__((weak)) EXPORT int n(void) "
                "{ shim_unsupported(#n); }\n")
        f.writelines(f"STUB({n})\n" for n in names)
        f.write(driver_stubs(driver_names()))
    vmap = os.path.join(outdir, "cudart.map")
    with open(vmap, "w") as f:
        f.write(f"{node(major)} {{\n  global:\n")
        f.writelines(f"    {n};\n" for n in names)
        f.write("  local: *;\n};\n")
        f.write(f"{DRIVER_NODE} {{\n  global:\n")
        f.writelines(f"    {n};\n" for n in driver_names())
        f.write("};\n")
        f.write(f"{JITLINK_NODE} {{\n  global:\n")
        f.writelines(f"    {n};\n" for n in JITLINK_NAMES)
        f.write("};\n")
        f.write(f"{NVRTC_NODE} {{\n  global:\n")
        f.writelines(f"    {n};\n" for n in NVRTC_NAMES)
        f.write("};\n")
    return stubs, vmap


def driver_stubs(names: list[str]) -> str:
    """A weak stub per driver name that returns CUDA_ERROR_NOT_SUPPORTED
    (drv_init.c names it), and the sorted table cuGetProcAddress reads."""
    out = ["int drv_unsupported(const char *name);\n",
           "#define DSTUB(n) __attribute__((weak)) EXPORT int n(void) "
           "{ return drv_unsupported(#n); }\n"]
    out += [f"DSTUB({n})\n" for n in names]
    out.append("struct drv_export { const char *name; void *fn; };\n"
               "const struct drv_export drv_exports[] = {\n")
    out += [f'    {{"{n}", (void *){n}}},\n' for n in sorted(names)]
    out.append(f"}};\nconst size_t drv_nexports = {len(names)};\n")
    return "".join(out)


def sources() -> list[str]:
    return [os.path.join(HERE, s) for s in SOURCES]


def link_args(vmap: str, major: int = 13) -> list[str]:
    # -Bsymbolic-functions: the library's calls to its own exported functions
    # (the driver half calls runtime functions) stay inside it, even when
    # another libcudart.so.13 is loaded in the process before it
    return [f"-Wl,--version-script={vmap}", f"-Wl,-soname,{node(major)}",
            "-Wl,-Bsymbolic-functions", "-lpthread", "-ldl"]


def compile_shared(out: str, cc: str | None = None, major: int = 13) -> str:
    """Build the shim (for applications of CUDA ``major``) into ``out`` with
    the C compiler (``$CC`` or cc)."""
    cc = cc or os.environ.get("CC") or "cc"
    tmp = os.path.join(os.path.dirname(os.path.abspath(out)), f"gen{major}")
    stubs, vmap = write_generated(tmp, major)
    cmd = [cc, "-shared", "-fPIC", *compile_args(), f"-DPTXC_CUDART_MAJOR={major}", "-o", out,
           *sources(), stubs, *link_args(vmap, major)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return out
