"""Alias rules of the slice's memory modes, and the launch-specialised one.

``slice{memory=launch}`` with ``alias`` (what ``ptxc.launch`` passes) knows,
for one launch, which allocation every kernel pointer parameter points into.
``alias`` is a tuple of ``(kernel name, ((param name, class), ...))``: class
``"globals"`` means the value points into the module's named ``.global``
variables, any other class (``"b0"``, ``"b1"`` ...) is one allocation (a
launch segment, or segments whose host memory overlaps); a parameter that is
not listed (a null, wild or unknown value, a non-pointer) has no class.

Under the in-bounds rule (an address computed from a pointer by arithmetic
stays inside the allocation the pointer points into; docs/slice.md), two
parameters of different classes point into disjoint memory, a parameter of a
buffer class is disjoint from every named variable, and one of class
``globals`` is disjoint from shared and local variables. A parameter without
a class is an *unknown* region: every write may reach it, as in the
conservative mode. Everything else (variables, unknown regions) follows the
``refined`` rules. The launcher (ptxc.launcher.alias) derives the classes from
the parameter bytes and the segment table of the launch.
"""
from __future__ import annotations

GLOBALS = "globals"


def check_alias(memory: str, alias) -> tuple | None:
    """``alias`` as a canonical hashable tuple (sorted by kernel), or an error."""
    if alias is None or alias == ():
        return None
    if memory != "launch":
        raise ValueError("option 'alias' needs memory=launch")
    try:
        out = tuple(sorted((str(k), tuple((str(p), str(c)) for p, c in classes))
                           for k, classes in alias))
    except (TypeError, ValueError):
        raise ValueError("option 'alias' must be ((kernel, ((param, class), ...)), ...)") from None
    return out


def alias_classes(alias, kernel: str) -> dict | None:
    """{param name: class} of ``kernel`` in ``alias`` (None if not listed)."""
    for name, classes in alias or ():
        if name == kernel:
            return dict(classes)
    return None


class AliasRules:
    """Which regions a memory mode lets the slice tell apart.

    ``mode`` is the effective mode: ``launch`` without ``alias`` is
    ``conservative``. ``region(fn, r)`` turns a provenance region into the
    one the mode uses (``launch``: a parameter region gets its class, or
    becomes unknown (None) when it has none)."""

    def __init__(self, memory: str, alias=None):
        self.mode = "conservative" if memory == "launch" and not alias else memory
        self.classes = {name: dict(classes) for name, classes in alias or ()}
        self._keys = {name: (self.mode, tuple(sorted(classes))) for name, classes in alias or ()}

    @property
    def uses_regions(self) -> bool:
        return self.mode != "conservative"

    @property
    def noalias(self) -> bool:
        return self.mode == "noalias"

    @property
    def launch(self) -> bool:
        return self.mode == "launch"

    def key(self, fn) -> tuple:
        """What of these rules matters to ``fn``'s accesses: the mode, and for
        a kernel in launch mode its parameter classes (for caching)."""
        if self.launch and fn.is_kernel:
            return self._keys.get(fn.name, (self.mode, ()))
        return (self.mode,)

    def region(self, fn, region):
        if region is None or not self.launch or region[0] != "param":
            return region
        cls = self.classes.get(fn.name, {}).get(region[1]) if fn.is_kernel else None
        return None if cls is None else ("param", region[1], cls)

    @staticmethod
    def params_alias(r1, r2) -> bool:
        """Two parameter regions of one launch: same allocation class."""
        return r1[2] == r2[2]

    @staticmethod
    def param_aliases_globals(r) -> bool:
        return r[2] == GLOBALS
