"""Which memory an instruction reads and writes: state space, address, size.

One :class:`Access` per memory operand an instruction touches. The state space
comes from the modifiers (``ld.global``, ``st.shared::cta``, ``cp.async.ca.
shared.global`` = destination space then source space); no space means
generic addressing. Texture and surface instructions are treated as reads and
writes of global memory at an unknown address. ``call`` is not described here
(the slice handles calls through their parameters, see slice_calls).

Only the slice uses these descriptors; the opcode table (ptxc.ir.opcodes) says
*whether* an opcode touches memory, this module says *where*.
"""
from __future__ import annotations

from dataclasses import dataclass

from ptxc import ir
from ptxc.ir.types import TYPE_SIZES

GENERIC = "generic"

# which writer spaces a read in a given space may observe (generic addressing
# may reach global, shared and local memory; const is never written by code)
ALIAS_SPACES = {
    "global": ("global", GENERIC),
    "shared": ("shared", GENERIC),
    "local": ("local", GENERIC),
    GENERIC: ("global", "shared", "local", GENERIC),
    "const": (),
    "param": ("param",),
}

# cp.async group bookkeeping and bulk prefetches move no data in the model
_CP_NO_DATA = ("commit_group", "wait_group", "wait_all", "prefetch", "wait_group_read")
_TEXTURE = ("tex", "tld4", "suld", "sust", "sured", "txq", "suq")


@dataclass(frozen=True, slots=True)
class Access:
    """One memory operand: 'r' or 'w', state space, address (Addr or None), bytes."""
    kind: str
    space: str
    addr: object = None
    size: int | None = None


_SPACE_CACHE: dict[str, str | None] = {}


def canon_space(mod: str) -> str | None:
    """The state space a modifier names, or None."""
    try:
        return _SPACE_CACHE[mod]
    except KeyError:
        space = _space_of(mod)
        _SPACE_CACHE[mod] = space
        return space


def _space_of(mod: str) -> str | None:
    if mod == "global":
        return "global"
    if mod.startswith("shared"):
        return "shared"
    if mod == "local":
        return "local"
    if mod.startswith("param"):
        return "param"
    if mod.startswith("const"):
        return "const"
    return None


def spaces_in(mods: tuple) -> list[str]:
    """State spaces named in the modifiers, in written order."""
    return [s for s in map(canon_space, mods) if s is not None]


def access_size(mods: tuple) -> int | None:
    """Bytes moved by a scalar/vector load or store (None if unknown)."""
    size = next((TYPE_SIZES[m] for m in mods if m in TYPE_SIZES), None)
    if size is None:
        return None
    for m in mods:
        if m in ("v2", "v4", "v8"):
            return size * int(m[1:])
    return size


def _addrs(ins: ir.Instr) -> list:
    return [op for op in ins.srcs if isinstance(op, ir.Addr)]


def _first_space(ins: ir.Instr, default: str = GENERIC) -> str:
    sp = spaces_in(ins.mods)
    return sp[0] if sp else default


def _simple(ins: ir.Instr, kinds: str, default: str = GENERIC) -> list[Access]:
    addrs = _addrs(ins)
    space = _first_space(ins, default)
    addr = addrs[0] if addrs else None
    size = access_size(ins.mods)
    return [Access(k, space, addr, size) for k in kinds]


def _matrix(ins: ir.Instr, kinds: str, default: str = GENERIC) -> list[Access]:
    """A matrix load/store (wmma, ldmatrix, stmatrix): a tile with a stride (or
    rows at other lanes' addresses) from its address on, so its extent is unknown."""
    return [Access(a.kind, a.space, a.addr, None) for a in _simple(ins, kinds, default)]


def _cp_accesses(ins: ir.Instr) -> list[Access]:
    if any(m in _CP_NO_DATA for m in ins.mods):
        return []
    addrs = _addrs(ins)
    spaces = spaces_in(ins.mods) or [GENERIC]
    dst_space = spaces[0]
    src_space = spaces[1] if len(spaces) > 1 else spaces[0]
    tensor = "tensor" in ins.mods
    out = []
    if addrs:
        out.append(Access("w", dst_space, None if tensor else addrs[0]))
        if "reduce" in ins.mods:
            out.append(Access("r", dst_space, None if tensor else addrs[0]))
    if len(addrs) > 1:
        out.append(Access("r", src_space, None if tensor else addrs[1]))
    for extra in addrs[2:]:            # mbarrier completion object
        out += [Access("r", "shared", extra), Access("w", "shared", extra)]
    if not addrs:
        out += [Access("r", src_space), Access("w", dst_space)]
    return out


def accesses(ins: ir.Instr) -> list[Access]:
    """Every memory read and write of one instruction (empty for most)."""
    op = ins.opcode
    info = ins.info
    if op in ("ld", "ldu"):
        return _simple(ins, "r")
    if op == "st":
        return _simple(ins, "w")
    if op in ("atom", "red"):
        return _simple(ins, "rw")
    if op == "cp":
        return _cp_accesses(ins)
    if op == "ldmatrix":
        return _matrix(ins, "r", "shared")
    if op == "stmatrix":
        return _matrix(ins, "w", "shared")
    if op == "wmma":
        if "load" in ins.mods:
            return _matrix(ins, "r")
        return _matrix(ins, "w") if "store" in ins.mods else []
    if op == "mbarrier":
        return _simple(ins, "rw")
    if op in _TEXTURE:
        kinds = ("w" if op in ("sust", "sured") else "r") if op not in ("txq", "suq") else ""
        return [Access(k, "global") for k in kinds]
    if op == "call" or info is None:
        return []
    kinds = ("r" if info.reads_mem else "") + ("w" if info.writes_mem else "")
    return _simple(ins, kinds) if kinds and _addrs(ins) else []


def reads(ins: ir.Instr) -> list[Access]:
    return [a for a in accesses(ins) if a.kind == "r"]


def writes(ins: ir.Instr) -> list[Access]:
    return [a for a in accesses(ins) if a.kind == "w"]
