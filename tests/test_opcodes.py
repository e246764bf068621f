"""The opcode table knows every base opcode of the PTX census, and its
counting classes and FLOP weights follow METRICS.md."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from ptxc.ir.opcodes import OPCODES, count_class, flop_weight, lookup

CENSUS = Path(__file__).resolve().parents[2] / "shared" / "PTX_CENSUS.md"


def census_opcodes() -> list[str]:
    text = CENSUS.read_text().split("## Base opcodes")[1].split("##")[0]
    return re.findall(r"`(\w+)` [\d,]+", text)


@pytest.mark.skipif(not CENSUS.exists(), reason="shared/PTX_CENSUS.md not found beside the repo")
def test_every_census_opcode_is_known():
    ops = census_opcodes()
    assert len(ops) > 80
    assert [op for op in ops if op not in OPCODES] == []


@pytest.mark.parametrize("op, mods, cls, flops", [
    ("add", ("f32",), "fp32", ("flop_count_sp", 1)),
    ("fma", ("rn", "f64"), "fp64", ("flop_count_dp", 2)),
    ("mul", ("rn", "f16x2"), "fp16", ("flop_count_hp", 2)),      # packed: 2 per lane
    ("fma", ("rn", "bf16x2"), "fp16", ("flop_count_hp", 4)),
    ("mad", ("lo", "s32"), "integer", (None, 0)),
    ("sqrt", ("rn", "f32"), "special", ("flop_count_sp_special", 1)),
    ("sqrt", ("rn", "f64"), "special", (None, 0)),
    ("div", ("rn", "f32"), "fp32", (None, 0)),
    ("ld", ("global", "f32"), "load", (None, 0)),
    ("bar", ("sync",), "barrier", (None, 0)),
    ("cvt", ("rn", "f32", "s32"), "conversion", (None, 0)),
])
def test_classes_and_flops(op, mods, cls, flops):
    info = lookup(op)
    assert count_class(info, mods) == cls
    assert flop_weight(info, mods) == flops


def test_terminators():
    assert {n for n, i in OPCODES.items() if i.terminator} == {"bra", "brx", "ret", "exit", "trap"}
