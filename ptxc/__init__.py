"""ptxc: a Python compiler framework for NVIDIA PTX.

Public API:
    parse(text, filename="<string>") -> Module
    load(path) -> Module
    run_pipeline(module, "a,b{k=v}") -> PipelineResult
    launch(module, kernel, grid, block, args, mode="hybrid"|"full") -> Profile
    PtxcError: the one exception class for bad input
"""
from __future__ import annotations

import sys

from ptxc._moved import MovedFinder
from ptxc.errors import PtxcError, SrcLoc
from ptxc.version import __version__

if not any(isinstance(f, MovedFinder) for f in sys.meta_path):
    sys.meta_path.append(MovedFinder())     # the flat layout's documented module paths

__all__ = ["parse", "load", "run_pipeline", "launch", "texture", "surface", "PtxcError", "SrcLoc", "__version__"]


def parse(text: str, filename: str = "<string>"):
    """Parse PTX text into an SSA-form Module."""
    from ptxc.frontend.parser import parse_module
    return parse_module(text, filename)


def load(path: str):
    """Read and parse a PTX file."""
    from ptxc.frontend.parser import load_module
    return load_module(path)


def run_pipeline(module, pipeline, **kwargs):
    """Run a pass pipeline such as 'slice,count' and return the PipelineResult."""
    from ptxc.passes.pipeline import run_pipeline as _run
    return _run(module, pipeline, **kwargs)


def launch(module, kernel, grid, block, args, mode: str = "hybrid", shared_bytes: int = 0, **kw):
    """Run a kernel on the CPU with the SIMT model and return its Profile."""
    from ptxc.launcher.api import launch as _launch
    return _launch(module, kernel, grid, block, args, mode=mode, shared_bytes=shared_bytes, **kw)


def texture(array, **kw):
    """A texture object over a numpy array for a launch argument (backends/llvm/ops/texture_objects.py)."""
    from ptxc.backends.llvm.ops.texture_objects import texture as _texture
    return _texture(array, **kw)


def surface(array, **kw):
    """A surface object over a numpy array for a launch argument (backends/llvm/ops/texture_objects.py)."""
    from ptxc.backends.llvm.ops.texture_objects import surface as _surface
    return _surface(array, **kw)
