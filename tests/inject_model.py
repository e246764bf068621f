"""An independent model of single-bit fault injection for tests/test_inject.py.

A small interpreter, written for the tests and sharing no code with ptxc, of
the straight-line PTX of the test kernels (tests/cuda_apps/inject_poly.sm90.ptx,
tests/apps/vectorAdd/vectorAdd.sm90.ptx): one thread at a time (the kernels
do not communicate between threads), registers as Python ints masked to
their declared width, memory as named little-endian byte buffers at the
generic addresses the test passes. It follows the definitions of
docs/inject.md: an eligible instance of target ``register`` is an executed
instruction writing a non-predicate register, ``predicate`` one writing a
predicate, ``memory`` an executed st; the flip XORs bit ``bit`` of the
destination (of the stored value for st) after the write. ``run`` returns
("ok", memory), ("fault", why) for an access outside every buffer or
misaligned, or ("hang", None) when the thread executes more than
``max_blocks`` basic blocks.
"""
from __future__ import annotations

import re
import struct

WIDTH = {"pred": 1, "b32": 32, "f32": 32, "b64": 64}


def parse(ptx: str, kernel: str):
    """(register widths, [(label or None, guard, negated, opcode, operands)])."""
    body = ptx[ptx.index(f".entry {kernel}("):]
    body = body[body.index("{") + 1:body.index("\n}")]
    widths, code = {}, []
    for raw in body.splitlines():
        line = raw.split("//")[0].strip()
        if not line or line.startswith(".pragma"):
            continue
        m = re.match(r"\.reg \.(\w+)\s+%(\w+)<(\d+)>;", line)
        if m:
            for i in range(int(m.group(3))):
                widths[f"%{m.group(2)}{i}"] = WIDTH[m.group(1)]
            continue
        if line.endswith(":"):
            code.append((line[:-1], None, False, "label", []))
            continue
        m = re.match(r"(@(!?)(%\w+)\s+)?([\w.]+)\s*(.*);", line)
        ops = [o.strip() for o in m.group(5).split(",")] if m.group(5) else []
        code.append((None, m.group(3), m.group(2) == "!", m.group(4), ops))
    return widths, code


def f32(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]


def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def s32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >> 31 else v


class Fault(Exception):
    pass


def run(ptx, kernel, params: dict, special: dict, buffers: dict, flip=None, max_blocks=10**6):
    """Run one thread. ``params``: {param name: int}; ``special``: {'%tid.x': ..};
    ``buffers``: {base address: bytearray} (changed in place); ``flip``:
    (target, instance, bit) or None. Returns (status, eligible counts per target)."""
    widths, code = parse(ptx, kernel)
    labels = {c[0]: i for i, c in enumerate(code) if c[0]}
    regs: dict = {}
    counts = {"register": 0, "memory": 0, "predicate": 0}

    def val(o):
        o = o.strip("[]")
        if o.startswith("%") and o in widths:
            return regs.get(o, 0)
        if o in special:
            return special[o]
        if o in params:
            return params[o]
        return int(o, 0) & 0xFFFFFFFFFFFFFFFF

    def find(addr, n):
        for base, buf in buffers.items():
            if base <= addr and addr + n <= base + len(buf):
                if addr % n:
                    raise Fault("misaligned")
                return buf, addr - base
        raise Fault(f"address {addr:#x} outside every buffer")

    def eligible(target, dst_width):
        k = counts[target]
        counts[target] += 1
        if flip and flip[0] == target and flip[1] == k:
            return 1 << (flip[2] % dst_width)
        return 0

    pc, blocks = 0, 1
    try:
        while True:
            label, guard, neg, op, ops = code[pc]
            pc += 1
            if op == "label":
                blocks += 1
                if blocks > max_blocks:
                    return "hang", counts
                continue
            if guard is not None and bool(regs.get(guard, 0)) == neg:
                continue
            if op == "ret":
                return "ok", counts
            if op == "bra":
                pc = labels[ops[0]]
                continue
            if op.startswith("st."):
                addr = val(ops[0])
                x = val(ops[1]) ^ eligible("memory", 32)
                buf, off = find(addr, 4)
                buf[off:off + 4] = struct.pack("<I", x & 0xFFFFFFFF)
                continue
            d, srcs = ops[0], ops[1:]
            w = widths[d]
            a = [val(s) for s in srcs]
            if op.startswith("ld.param"):
                r = params[srcs[0].strip("[]")]
            elif op.startswith("ld.global"):
                buf, off = find(a[0], 4)
                r = struct.unpack("<I", bytes(buf[off:off + 4]))[0]
            elif op.startswith("mov"):
                r = a[0]
            elif op.startswith("cvta.to.global"):
                r = a[0]
            elif op == "setp.eq.s32":
                r = int(s32(a[0]) == s32(a[1]))
            elif op == "setp.ge.s32":
                r = int(s32(a[0]) >= s32(a[1]))
            elif op == "setp.lt.u32":
                r = int((a[0] & 0xFFFFFFFF) < (a[1] & 0xFFFFFFFF))
            elif op in ("add.s32", "add.s64"):
                r = a[0] + a[1]
            elif op == "mul.lo.s32":
                r = a[0] * a[1]
            elif op == "mad.lo.s32":
                r = a[0] * a[1] + a[2]
            elif op == "mul.wide.u32":
                r = (a[0] & 0xFFFFFFFF) * (a[1] & 0xFFFFFFFF)
            elif op == "mul.wide.s32":
                r = s32(a[0]) * s32(a[1])
            elif op == "add.f32":
                r = f32_bits(_f32_add(f32(a[0]), f32(a[1])))
            else:
                raise NotImplementedError(op)
            r &= (1 << w) - 1
            r ^= eligible("predicate" if w == 1 else "register", w)
            regs[d] = r
    except Fault as e:
        return "fault:" + str(e), counts


def _f32_add(x: float, y: float) -> float:
    import numpy as np
    return float(np.float32(x) + np.float32(y))
