"""Builds the native part of ptxc: its CUDA runtime shim (ptxc/runtime/native).

Everything else is in pyproject.toml. The shim is a plain C shared library,
not a Python extension module; setuptools' Extension machinery builds it
because that is what ``pip install .`` and ``pip install -e .`` both run.
The library lands in the package as ptxc/runtime/libptxc_cudart.so (no
Python ABI tag: the application loads it, never Python). Only a C compiler
is needed: the CUDA types are declared by the shim itself.
"""
import importlib.util
import os

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
SHIM = "ptxc.runtime.libptxc_cudart"


def _build_shim_module():
    path = os.path.join(HERE, "ptxc", "runtime", "native", "build_shim.py")
    spec = importlib.util.spec_from_file_location("ptxc_build_shim", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class BuildShim(build_ext):
    """build_ext for the shim: generated stubs and version script, plain name."""

    def build_extension(self, ext):
        if ext.name != SHIM:
            return super().build_extension(ext)
        gen = _build_shim_module()
        stubs, vmap = gen.write_generated(os.path.join(self.build_temp, "ptxc_shim"))
        ext.sources = [os.path.relpath(p, HERE) for p in gen.sources()] + [stubs]
        ext.extra_compile_args = gen.compile_args()
        ext.extra_link_args = gen.link_args(vmap)
        return super().build_extension(ext)

    def get_export_symbols(self, ext):
        return [] if ext.name == SHIM else super().get_export_symbols(ext)

    def get_ext_filename(self, fullname):
        # called with the full dotted name or (in place) with its last part
        if fullname == SHIM or fullname == SHIM.rsplit(".", 1)[1]:
            return os.path.join(*fullname.split(".")) + ".so"
        return super().get_ext_filename(fullname)


setup(
    ext_modules=[Extension(SHIM, sources=["ptxc/runtime/native/conn.c"])],
    cmdclass={"build_ext": BuildShim},
)
