"""Raw value-profile counters -> per-instruction entries (docs/value-profile.md).

The native code keeps one counter block per (instruction instance,
destination register) (value_prof.py). Here the blocks of the inlined
copies of one instruction of the text are combined (masks OR-ed, counts
summed) into one entry per (function, instruction, destination), keyed
``"function:index:dst"`` with ``index`` the instruction's 1-based position
among the function's instructions (as ``per_memory_instr``), and
``source`` the CUDA "file:line" of the instruction where the PTX has
``.loc`` (ptxc.ir.source_lines; the innermost line of an inlined call).
"""
from __future__ import annotations

from ptxc.backends.llvm.instruments.value_prof import words


def value_entries(c, counts) -> dict:
    """{key: entry} of a value-profiled launch (empty for any other)."""
    per, indices = {}, {}
    for iid, blocks in sorted(c.value_ctr.items()):
        inst, ins = c.plan.instr_table[iid]
        for dst, reg, bits, base in blocks:
            e = entry(per, indices, inst.fn, ins, dst, reg, bits)
            add_block(e, counts, base, bits)
    add_sources(per, c.plan.module)
    return per


def add_sources(per: dict, module) -> None:
    """Set each entry's ``source`` ("file:line" or None) from the module's .loc."""
    from ptxc.ir.source_lines import SourceMap
    smap = SourceMap(module)
    for e in per.values():
        fn = smap.by_name.get(e["function"]) if smap.has_lines else None
        locs = smap.instr(fn) if fn is not None else []
        loc = locs[e["index"] - 1] if 0 < e["index"] <= len(locs) else None
        e["source"] = f"{loc['file']}:{loc['line']}" if loc else None


def entry(per: dict, indices: dict, fn, ins, dst: int, reg: str, bits: int) -> dict:
    if id(fn) not in indices:
        indices[id(fn)] = {id(i): k + 1 for k, i in enumerate(fn.ptx_instructions())}
    index = indices[id(fn)][id(ins)]
    key = f"{fn.name}:{index}:{dst}"
    if key not in per:
        per[key] = {"function": fn.name, "index": index, "dst": dst,
                    "line": ins.loc.line if ins.loc else None, "opcode": ins.full_opcode,
                    "register": reg, "bits": bits, "ones": 0, "zeros": 0,
                    "writes": 0, "scalar_writes": 0, "lanes": 0}
    return per[key]


def add_block(e: dict, counts, base: int, bits: int) -> None:
    """OR / add one counter block (value_prof.py's layout) into entry ``e``."""
    w = words(bits)
    for k in range(w):
        e["ones"] |= (int(counts[base + 2 * k]) & (2 ** 64 - 1)) << (64 * k)
        e["zeros"] |= (int(counts[base + 2 * k + 1]) & (2 ** 64 - 1)) << (64 * k)
    e["writes"] += int(counts[base + 2 * w])
    e["scalar_writes"] += int(counts[base + 2 * w + 1])
    e["lanes"] += int(counts[base + 2 * w + 2])
