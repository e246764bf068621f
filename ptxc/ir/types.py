"""PTX scalar types: sizes, kinds, and how to find an instruction's type."""
from __future__ import annotations

TYPE_SIZES = {
    "pred": 1, "b1": 1,
    "b8": 1, "s8": 1, "u8": 1, "e4m3": 1, "e5m2": 1, "e2m1": 1,
    "b16": 2, "s16": 2, "u16": 2, "f16": 2, "bf16": 2,
    "b32": 4, "s32": 4, "u32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4, "tf32": 4,
    "b64": 8, "s64": 8, "u64": 8, "f64": 8,
    "b128": 16,
    "e4m3x2": 2, "e5m2x2": 2,
}
FLOAT_TYPES = {"f16", "bf16", "f32", "f64", "f16x2", "bf16x2", "tf32",
               "e4m3", "e5m2", "e4m3x2", "e5m2x2", "e2m1"}
SIGNED_TYPES = {"s8", "s16", "s32", "s64"}


def type_size(t: str) -> int:
    """Size in bytes of a PTX type name (without the dot)."""
    return TYPE_SIZES[t]


def is_type(word: str) -> bool:
    return word in TYPE_SIZES


def instr_types(mods: tuple) -> list[str]:
    """The type modifiers of an instruction, in written order."""
    return [m for m in mods if m in TYPE_SIZES]
