"""The import graph of ptxc's own modules, read from the source with ``ast``.

No module is imported: every ``.py`` file under the three source folders
(``ptxc/``, ``passes/`` installed as ``ptxc.passes``, ``backends/`` installed
as ``ptxc.backends``) is parsed, and each ``import``/``from ... import`` that
names a ptxc module becomes an edge. An import at module level (including
inside a top-level ``if``/``try``) is *eager*: it runs when the importing
module is loaded. An import inside a function or method body is *lazy*: it
runs at the first call. Imports under ``if TYPE_CHECKING:`` never run and are
left out. Importing ``a.b.c`` also runs the ``__init__`` of ``a`` and
``a.b``: those are edges too, except to the importer's own enclosing
packages (they are already loading). tests/test_layout.py checks the graph
against the layer order of docs/architecture.md.
"""
from __future__ import annotations

import ast
import os
import sys
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE_FOLDERS = {"ptxc": "ptxc", "passes": "ptxc.passes", "backends": "ptxc.backends"}


@dataclass(frozen=True)
class Import:
    source: str          # the importing module, e.g. 'ptxc.launcher.launcher'
    target: str          # the imported module, e.g. 'ptxc.ir.core'
    line: int
    lazy: bool
    function: str = ""   # the outermost enclosing function of a lazy import
    named: str = ""      # the module the statement names (target, or a module inside it)


@dataclass
class ImportGraph:
    modules: dict[str, str] = field(default_factory=dict)   # name -> file path
    imports: list[Import] = field(default_factory=list)

    def edges(self, lazy: bool = True, skip=()) -> dict[str, set[str]]:
        """source -> targets; ``skip``: imports (as returned by ``key``) to leave out."""
        out: dict[str, set[str]] = {m: set() for m in self.modules}
        for imp in self.imports:
            if (lazy or not imp.lazy) and key(imp) not in skip:
                out[imp.source].add(imp.target)
        return out


def key(imp: Import) -> tuple[str, str, str]:
    """How a deliberate import is named in a list: (importer, function, the
    module its statement names); the packages that import loads share it."""
    return imp.source, imp.function, imp.named


def module_files(root: str = ROOT) -> dict[str, str]:
    """Every ptxc module name -> its file; a package is its ``__init__.py``."""
    found = {}
    for folder, package in SOURCE_FOLDERS.items():
        base = os.path.join(root, folder)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            rel = os.path.relpath(dirpath, base)
            prefix = package if rel == "." else package + "." + rel.replace(os.sep, ".")
            for name in sorted(filenames):
                if not name.endswith(".py"):
                    continue
                module = prefix if name == "__init__.py" else prefix + "." + name[:-3]
                found[module] = os.path.join(dirpath, name)
    return found


def _resolve(source: str, level: int, name: str | None, modules: dict[str, str]) -> str:
    if level == 0:
        return name or ""
    parts = source.split(".")
    if not modules.get(source, "").endswith("__init__.py"):
        parts = parts[:-1]
    parts = parts[: len(parts) - (level - 1)]
    return ".".join(parts + ([name] if name else []))


def _known_prefix(name: str, modules: dict[str, str]) -> str:
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name


def _targets(node, source: str, modules: dict[str, str]) -> list[str]:
    """The ptxc modules an import statement names (the longest known names)."""
    if isinstance(node, ast.Import):
        found = [_known_prefix(alias.name, modules) for alias in node.names]
        return [t for t in found if t]
    base = _resolve(source, node.level, node.module, modules)
    found = []
    for alias in node.names:
        full = base + "." + alias.name
        found.append(full if full in modules else _known_prefix(base, modules))
    return [t for t in found if t]


def _with_parents(targets: list[str], source: str, modules: dict[str, str]) -> list[str]:
    """The named targets and the packages they load first (not the importer's own)."""
    own = set()
    name = source
    while name:
        own.add(name)
        name = name.rpartition(".")[0]
    out: list[str] = []
    for target in targets:
        parts = target.split(".")
        for i in range(1, len(parts) + 1):
            name = ".".join(parts[:i])
            explicit = i == len(parts)
            if name in modules and name != source and (explicit or name not in own) \
                    and name not in out:
                out.append(name)
    return out


def _is_type_checking(test) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _walk(body, source, modules, out, function=""):
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for named in _targets(node, source, modules):
                for target in _with_parents([named], source, modules):
                    out.append(Import(source, target, node.lineno, bool(function), function,
                                      named))
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            _walk(node.orelse, source, modules, out, function)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _walk(node.body, source, modules, out, function or node.name)
        elif isinstance(node, ast.ClassDef):
            _walk(node.body, source, modules, out, function)
        else:
            for attr in ("body", "orelse", "finalbody", "handlers"):
                children = getattr(node, attr, None)
                if isinstance(children, list):
                    _walk(children, source, modules, out, function)


def build(root: str = ROOT) -> ImportGraph:
    graph = ImportGraph(modules=module_files(root))
    for name, path in graph.modules.items():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        _walk(tree.body, name, graph.modules, graph.imports)
    return graph


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan 1972)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    result: list[list[str]] = []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10000))
    try:
        for v in sorted(edges):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(result)
