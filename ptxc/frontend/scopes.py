"""Registers before SSA and the lexical scopes that name them.

A :class:`Var` is one register declaration (``.reg .b32 %r<4>`` makes one per
register, on first use); a :class:`Scope` is an ir.Scope plus the name table
the builder resolves register names in (``{ }`` scopes shadow outer
registers). SPECIAL_REGS are the special registers (``%tid.x`` ...) a name
resolves to when no declaration has it, with their types.
"""
from __future__ import annotations

from ptxc import ir

SPECIAL_REGS = {
    **{f"%{r}.{c}": "u32" for r in ("tid", "ntid", "ctaid", "nctaid", "cluster_ctaid",
                                    "cluster_nctaid", "clusterid", "nclusterid") for c in "xyz"},
    **{f"%{r}": "u32" for r in ("laneid", "warpid", "nwarpid", "smid", "nsmid", "gridid",
                                "lanemask_eq", "lanemask_le", "lanemask_lt", "lanemask_ge",
                                "lanemask_gt", "clock", "clock_hi", "globaltimer_lo",
                                "globaltimer_hi", "total_smem_size", "dynamic_smem_size",
                                "aggr_smem_size", "cluster_ctarank", "cluster_nctarank",
                                "is_explicit_cluster", "tid", "ntid", "ctaid", "nctaid")},
    "%clock64": "u64", "%globaltimer": "u64", "%gridid": "u64", "%current_graph_exec": "u64",
    **{f"%envreg{i}": "b32" for i in range(32)},
    **{f"%pm{i}": "u32" for i in range(8)}, **{f"%pm{i}_64": "u64" for i in range(8)},
    **{f"%reserved_smem_offset_{s}": "b32" for s in ("begin", "end", "cap", "0", "1")},
}


class Var(ir.Value):
    """A declared register before SSA: one object per declaration."""
    __slots__ = ()

    def __init__(self, name: str, type: str):
        super().__init__(type, name, name)

    def __repr__(self) -> str:
        return f"Var({self.name})"


class Scope(ir.Scope):
    """An ir.Scope plus the name table used while building."""
    __slots__ = ("singles", "ranges", "vectors")

    def __init__(self, parent=None):
        super().__init__(parent)
        self.vectors: dict[str, list[Var]] = {}
        self.singles: dict[str, Var] = {}
        # prefix -> (count, type, the set that collects its registers when it
        # is a range of vector registers, else None)
        self.ranges: dict[str, tuple[int, str, set | None]] = {}

    def find(self, name: str) -> Var | None:
        s = self
        while s is not None:
            v = s.singles.get(name)
            if v is not None:
                return v
            if s.ranges:
                v = s._in_range(name)
                if v is not None:
                    return v
            s = s.parent
        return None

    def find_vector(self, name: str) -> list[Var] | None:
        s = self
        while s is not None:
            if name in s.vectors:
                return s.vectors[name]
            s = s.parent
        return None

    def _in_range(self, name: str) -> Var | None:
        """The register ``name`` = prefix + decimal number (no leading zero)
        declared by a range ``prefix<count>`` here (memoised), or None."""
        if name.isascii():
            i = len(name.rstrip("0123456789"))
        else:                                  # other str.isdigit() digits count too
            i = len(name)
            while i > 0 and name[i - 1].isdigit():
                i -= 1
        if i == len(name) or (len(name) - i > 1 and name[i] == "0"):
            return None
        entry = self.ranges.get(name[:i])
        if entry is None or int(name[i:]) >= entry[0]:
            return None
        v = self.singles[name] = Var(name, entry[1])   # memoised: next lookups are direct
        if entry[2] is not None:
            entry[2].add(name)
        return v
