"""A small LLVM IR text builder (faster to drive than llvmlite.ir objects).

Values are plain strings: an SSA name (``%t12``) or a constant literal
(``7``, ``splat (i32 7)``, ``zeroinitializer``). Callers pass LLVM types
explicitly, so the builder never infers anything; ``verify()`` of the parsed
module catches mistakes.
"""
from __future__ import annotations

import struct

LANES = 32


def vt(t: str) -> str:
    """The 32-lane vector type of scalar type ``t``."""
    return f"<{LANES} x {t}>"


def splat(t: str, c) -> str:
    """A constant vector with every lane ``c`` (a literal of type ``t``)."""
    return f"splat ({t} {c})"


def fconst(x: float, t: str = "double") -> str:
    """An LLVM literal for a float constant (hex form: exact, any value)."""
    if t == "float":
        x = struct.unpack("<f", struct.pack("<f", x))[0]
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", x))[0]


def lane_consts(t: str, values) -> str:
    """A constant vector with one literal per lane."""
    return "<" + ", ".join(f"{t} {v}" for v in values) + ">"


LANE_IDS = lane_consts("i32", range(LANES))


class Fn:
    """One function under construction: lines of text plus fresh names."""

    def __init__(self, header: str):
        self.header = header
        self.entry: list[str] = []       # allocas and entry code
        self.lines: list[str] = []
        self.n = 0
        self.cur_label = None
        self.label_at = 0                # len(lines) where the current block started
        self.on_label = None

    def tmp(self, hint: str = "t") -> str:
        self.n += 1
        return f"%{hint}{self.n}"

    def fresh_label(self, hint: str = "L") -> str:
        self.n += 1
        return f"{hint}{self.n}"

    def emit(self, text: str) -> None:
        self.lines.append("  " + text)

    def val(self, text: str, hint: str = "t") -> str:
        """Emit ``%new = text`` and return %new."""
        name = self.tmp(hint)
        self.lines.append(f"  {name} = {text}")
        return name

    def label(self, name: str, dominated: bool = False) -> None:
        """Start block ``name``. Unless ``dominated`` (only reachable from the
        code just emitted), values cached by the code generator are dropped."""
        self.lines.append(f"{name}:")
        self.cur_label = name
        self.label_at = len(self.lines)
        if not dominated and self.on_label is not None:
            self.on_label()

    def alloca(self, t: str, hint: str = "a", align: int = 64) -> str:
        name = self.tmp(hint)
        self.entry.append(f"  {name} = alloca {t}, align {align}")
        return name

    # ------------------------------------------------------------ helpers
    def br(self, target: str) -> None:
        self.emit(f"br label %{target}")

    def cbr(self, cond: str, a: str, b: str) -> None:
        self.emit(f"br i1 {cond}, label %{a}, label %{b}")

    def load(self, t: str, ptr: str, align: int = 1, hint: str = "t") -> str:
        return self.val(f"load {t}, ptr {ptr}, align {align}", hint)

    def store(self, t: str, v: str, ptr: str, align: int = 1) -> None:
        self.emit(f"store {t} {v}, ptr {ptr}, align {align}")

    def gep(self, ptr: str, off) -> str:
        """Byte offset from a pointer (``off`` an i64 literal or value)."""
        if off == 0 or off == "0":
            return ptr
        return self.val(f"getelementptr inbounds i8, ptr {ptr}, i64 {off}", "p")

    def field(self, t: str, base: str, off: int, align: int = 4) -> str:
        return self.load(t, self.gep(base, off), align)

    def set_field(self, t: str, v: str, base: str, off: int, align: int = 4) -> None:
        self.store(t, v, self.gep(base, off), align)

    def bin(self, op: str, t: str, a: str, b: str) -> str:
        return self.val(f"{op} {t} {a}, {b}")

    def icmp(self, pred: str, t: str, a: str, b: str) -> str:
        return self.val(f"icmp {pred} {t} {a}, {b}")

    def fcmp(self, pred: str, t: str, a: str, b: str) -> str:
        return self.val(f"fcmp {pred} {t} {a}, {b}")

    def select(self, ct: str, c: str, t: str, a: str, b: str) -> str:
        return self.val(f"select {ct} {c}, {t} {a}, {t} {b}")

    def cast(self, op: str, ft: str, v: str, tt: str) -> str:
        if ft == tt and op in ("bitcast", "zext", "sext", "trunc"):
            return v
        return self.val(f"{op} {ft} {v} to {tt}")

    def call(self, rt: str, fname: str, args: list[tuple[str, str]], hint: str = "t") -> str | None:
        a = ", ".join(f"{t} {v}" for t, v in args)
        if rt == "void":
            self.emit(f"call void @{fname}({a})")
            return None
        return self.val(f"call {rt} @{fname}({a})", hint)

    def text(self) -> str:
        return "\n".join([self.header + " {", "entry:", *self.entry, *self.lines, "}"])
