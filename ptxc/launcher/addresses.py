"""What an address points into, for error messages: the state space, the
device segment (a buffer, an allocation, the .global variables), the
offset in it, or the nearest allocation and the signed distance to it
(the memory model: docs/executor.md, "Memory").
"""
from __future__ import annotations



def describe_address(addr: int, ins=None, sizes=None, space: str | None = None) -> str:
    """' (what the address points into)' for an error message; ``space``
    (default: the instruction's) is the state space ``addr`` is in."""
    from ptxc.backends.llvm import layout as Lo
    from ptxc.backends.llvm.ops.access import space_of
    sizes = sizes or {}
    space = space or (space_of(ins) if ins is not None else "generic")
    if space in ("shared", "local", "const", "param"):
        return f" (offset {addr} in .{space} memory of {sizes.get(space, '?')} bytes)"
    shift = sizes.get("shift", 32)
    seg, off = addr >> shift, addr & ((1 << shift) - 1)
    names = {Lo.SEG_NULL: "no buffer: a null or wild pointer", Lo.SEG_SHARED: "the shared window",
             Lo.SEG_LOCAL: "the local window", Lo.SEG_PARAM: "the parameter space",
             Lo.SEG_CONST: "the .const variables", Lo.SEG_GLOBALS: "the .global variables"}
    buffers = sizes.get("buffers", {})
    if seg in buffers and off < buffers[seg][1]:
        name, n = buffers[seg]
        return f" ({name} + {off}; its size is {n} bytes)"
    others = sizes.get("names", {})
    if seg in others and seg not in buffers:            # a freed allocation
        return f" ({others[seg]} + {off})"
    near = nearest_buffer(addr, buffers, shift)
    if near and (seg in buffers or seg + 1 in buffers or seg >= Lo.SEG_GLOBALS):
        return f" ({near})"
    if seg >= Lo.SEG_FIRST_BUFFER and (seg in others or None in others):
        return f" ({others[seg] if seg in others else others[None]}{' + %d' % off if seg in others else ''})"
    if seg >= Lo.SEG_FIRST_BUFFER:
        return f" (buffer {seg - Lo.SEG_FIRST_BUFFER} + {off})"
    return f" ({names.get(seg, 'segment %d' % seg)}{' + %d' % off if seg else ''})"


def in_read_only(addr: int, sizes: dict) -> bool:
    """Does generic address ``addr`` lie inside a segment kernels may not
    write (the .const variables: ``sizes['read_only']``, runtime.Launch)?"""
    from ptxc.backends.llvm import layout as Lo
    shift = sizes.get("shift", 32)
    seg, off = addr >> shift, addr & ((1 << shift) - 1)
    if seg not in sizes.get("read_only", ()):
        return False
    if seg == Lo.SEG_CONST:
        return off < sizes.get("const", 0)
    buf = sizes.get("buffers", {}).get(seg)
    return buf is not None and off < buf[1]


def nearest_buffer(addr: int, buffers: dict, shift: int) -> str:
    """Where ``addr`` lies relative to the nearest buffer, as a signed
    distance a user checks at once: '8 bytes before allocation #5
    (cudaMalloc 16384 bytes at 0x600000000)', 'right after the end of ...',
    '24 bytes after the end of ...' ('' without buffers)."""
    best = None
    for seg, (name, n) in buffers.items():
        base = seg << shift
        if addr < base:
            d, text = base - addr, f"{base - addr} bytes before {{}}"
        else:
            d = addr - (base + n)
            text = "right after the end of {}" if d == 0 else f"{d} bytes after the end of {{}}"
        if best is None or d < best[0]:
            best = (d, text.format(with_base(name, base, n)))
    return best[1] if best else ""


def with_base(name: str, base: int, n: int) -> str:
    """'allocation #5 (cudaMalloc 16384 bytes)' -> '... 16384 bytes at 0x600000000)';
    a name without its size gets it: 'buffer of parameter out (128 bytes at 0x...)'."""
    if name.endswith(")") and "bytes" in name:
        return f"{name[:-1]} at 0x{base:x})"
    if name.endswith(")"):
        return f"{name[:-1]}, {n} bytes at 0x{base:x})"
    return f"{name} ({n} bytes at 0x{base:x})"
