"""Module paths of the flat layout that docs/ showed, still importable.

Until 2026-11 ptxc was one flat folder: ``ptxc.verifier``,
``ptxc.module_profile`` ... docs/architecture.md describes the folders that
replaced it. Code written against the documented paths keeps working: the
finder below (installed by ``import ptxc``, after the normal finders, so it
sees only names nothing else finds) makes each old path an alias of the
module that now holds what the docs showed, and warns once with the new path
(a ``DeprecationWarning``, shown by default only in ``__main__`` code).
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

MOVED = {
    "ptxc.passmanager": ("ptxc.ir.passmanager", "ptxc.passes.pipeline"),   # Pass ...; run_pipeline
    "ptxc.verifier": "ptxc.passes.verifier",
    "ptxc.printer": "ptxc.ir.printer",
    "ptxc.opcodes": "ptxc.ir.opcodes",
    "ptxc.ssa": "ptxc.frontend.ssa",
    "ptxc.source_lines": "ptxc.ir.source_lines",
    "ptxc.source_profile": "ptxc.report.source_profile",
    "ptxc.module_profile": "ptxc.profile.module_profile",
    "ptxc.module_profile_render": "ptxc.profile.module_render",
    "ptxc.launch_file": "ptxc.launcher.launch_file",
    "ptxc.textures": "ptxc.backends.llvm.ops.texture_objects",
    "ptxc.memcheck_report": "ptxc.check.memcheck",
    "ptxc.hazard_report": "ptxc.check.hazards",
    "ptxc.inject_sites": "ptxc.inject.sites",
}


class MovedFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old path as the module that replaced it."""

    def find_spec(self, name, path=None, target=None):
        if name not in MOVED:
            return None
        return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec):
        return None                   # a placeholder; exec_module puts the real one in its place

    def exec_module(self, module) -> None:
        new = MOVED[module.__name__]
        warnings.warn(f"{module.__name__} is now {' and '.join(_names(new))} "
                      f"(docs/architecture.md)", DeprecationWarning, stacklevel=2)
        if isinstance(new, str):
            sys.modules[module.__name__] = importlib.import_module(new)   # the import returns it
            return
        for name in new:                   # one old module split in two: the names of both
            module.__dict__.update((k, v) for k, v in vars(importlib.import_module(name)).items()
                                   if not k.startswith("__"))


def _names(new) -> tuple:
    return (new,) if isinstance(new, str) else new
