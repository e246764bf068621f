"""The house rules of docs/architecture.md, checked on the source (no module
is imported: tests/import_graph.py reads the imports with ast).

* Every module belongs to a layer; layers import only downward.
* No import circle anywhere in ptxc, passes and backends, counting the lazy
  imports inside functions too.
* The deliberate exceptions are listed below by name, each with its reason;
  an exception that no longer exists fails too (the list stays true).
* Every folder with an ``__init__.py`` is a package of pyproject.toml, so a
  plain ``pip install .`` installs it.
"""
from __future__ import annotations

import os
import re

import import_graph as G

# Bottom to top (docs/architecture.md, "Layers"). A module's layer is the
# one of its longest listed prefix; "ptxc" alone is the package facade.
LAYERS = [
    ("ir", ("ptxc.errors", "ptxc.version", "ptxc.interrupts", "ptxc.ir")),
    ("frontend", ("ptxc.frontend",)),
    ("passes", ("ptxc.passes",)),
    ("backends", ("ptxc.backends",)),
    ("gpus", ("ptxc.gpus",)),
    ("launcher", ("ptxc.launcher",)),
    ("report", ("ptxc.report",)),
    ("tools", ("ptxc.profile", "ptxc.check", "ptxc.valueprof", "ptxc.predict", "ptxc.inject",
               "ptxc.runtime")),
    ("cli", ("ptxc.cli",)),
    ("api", ("ptxc",)),
]

# (importer, its function, imported module): why the import goes up or closes a circle.
DELIBERATE = {
    ("ptxc.ir.core", "print_ir", "ptxc.ir.printer"):
        "Module.print_ir(), public API (README): the printer reads the IR classes",
    ("ptxc.ir.core", "to_ptx", "ptxc.backends.ptx.emitter"):
        "Module.to_ptx(), public API (README): the PTX emitter is a backend",
    ("ptxc.passes.slice.slice_pass", "_specialise", "ptxc.launcher.alias"):
        "the slice pass of a pipeline with a launch reports the slice that launch will run, "
        "specialised to its arguments' aliasing (docs/slice.md, memory=launch)",
}


def layer_of(module: str) -> int:
    best, rank = -1, None
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, rank = len(p), i
    assert rank is not None, f"module {module} is in no layer of tests/test_layout.py"
    return rank


def name(rank: int) -> str:
    return LAYERS[rank][0]


def test_every_module_has_a_layer():
    for module in G.module_files():
        layer_of(module)


def test_layers_import_only_downward():
    graph = G.build()
    up = [f"{i.source}:{i.line} ({name(layer_of(i.source))}) imports {i.target} "
          f"({name(layer_of(i.target))}){' in ' + i.function if i.lazy else ''}"
          for i in graph.imports
          if G.key(i) not in DELIBERATE and layer_of(i.target) > layer_of(i.source)]
    assert not up, "imports from a lower layer to a higher one:\n" + "\n".join(up)


def test_no_import_circles():
    graph = G.build()
    circles = G.cycles(graph.edges(lazy=True, skip=DELIBERATE))
    assert not circles, "import circles (lazy imports included):\n" + \
        "\n".join(" -> ".join(c) for c in circles)


def test_deliberate_imports_exist():
    found = {G.key(i) for i in G.build().imports}
    stale = [k for k in DELIBERATE if k not in found]
    assert not stale, f"listed in DELIBERATE but no longer imported: {stale}"


def test_every_package_is_installed():
    with open(os.path.join(G.ROOT, "pyproject.toml"), encoding="utf-8") as f:
        listed = re.search(r"^packages = \[(.*?)\]", f.read(), re.S | re.M).group(1)
    installed = set(re.findall(r'"([\w.]+)"', listed))
    packages = {m for m, path in G.module_files().items() if path.endswith("__init__.py")}
    assert packages == installed, (f"not in pyproject.toml: {sorted(packages - installed)}; "
                                   f"listed but no package: {sorted(installed - packages)}")
