"""The module paths of the flat layout that docs/ showed still import
(ptxc/_moved.py, docs/architecture.md), as the very module that replaced
them, with a DeprecationWarning naming it; and the documented entry points
of the packages that replaced old modules resolve."""
from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import ptxc
from ptxc._moved import MOVED

# old path -> names docs/ showed in it
SHOWN = {
    "ptxc.passmanager": ["AnalysisManager", "Pass", "PassResult", "ALL", "run_pipeline",
                         "parse_pipeline", "make_pass"],
    "ptxc.verifier": ["verify_function", "verify_module"],
    "ptxc.printer": ["print_function"],
    "ptxc.opcodes": ["CLASSES", "count_class"],
    "ptxc.ssa": ["name_values"],
    "ptxc.source_lines": ["SourceMap"],
    "ptxc.source_profile": ["locate"],
    "ptxc.module_profile": ["profile_module"],
    "ptxc.module_profile_render": ["render"],
    "ptxc.launch_file": ["load_launches"],
    "ptxc.textures": ["destroy", "texture", "surface"],
    "ptxc.memcheck_report": ["MemcheckError"],
    "ptxc.hazard_report": ["RaceReport", "SyncReport"],
    "ptxc.inject_sites": ["Site"],
}


def test_every_moved_path_is_tested():
    assert set(SHOWN) == set(MOVED)


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_path_is_the_new_module(old):
    code = (f"import warnings, importlib; warnings.simplefilter('error'); import ptxc\n"
            f"try:\n    importlib.import_module({old!r})\n"
            f"except DeprecationWarning as w:\n    print(w)\n")
    warned = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    new = (MOVED[old],) if isinstance(MOVED[old], str) else MOVED[old]
    assert warned.stdout.strip() == f"{old} is now {' and '.join(new)} (docs/architecture.md)", \
        warned.stderr
    with pytest.warns(DeprecationWarning):
        sys.modules.pop(old, None)
        module = importlib.import_module(old)
    if len(new) == 1:
        assert module is importlib.import_module(new[0])
    for name in SHOWN[old]:
        assert any(getattr(module, name) is getattr(importlib.import_module(n), name, None)
                   for n in new), f"{old}.{name}"


@pytest.mark.parametrize("path", ["ptxc.launcher.launch_segments", "ptxc.launcher.compile_launches",
                                  "ptxc.launcher.launch_from_options", "ptxc.launcher.launch",
                                  "ptxc.inject.campaign", "ptxc.passes.slice.mark_slice",
                                  "ptxc.passes.slice.select_slice"])
def test_documented_entry_points_resolve(path):
    package, _, name = path.rpartition(".")
    assert callable(getattr(importlib.import_module(package), name))


def test_public_api_is_unchanged():
    for name in ("parse", "load", "run_pipeline", "launch", "texture", "surface"):
        assert callable(getattr(ptxc, name))
    assert issubclass(ptxc.PtxcError, Exception) and ptxc.__version__
    importlib.import_module("ptxc.launcher")
    assert callable(ptxc.launch)            # the package ptxc.launcher did not replace it
