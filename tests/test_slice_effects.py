"""criteria=effects (passes/slice/facts.py): a hybrid run with this slice
writes every buffer exactly as a full run does, and gives the same counters.

Checked on every kernel of the committed nvcc PTX in tests/cuda (sm_90):
each pointer parameter gets its own 4 KiB buffer of random bytes (the same
bytes in both runs), every integer parameter is 200, every float 1.5; a
launch the full run rejects (an out-of-bounds access with these arguments,
more than 20000 block executions per warp, an unsupported instruction) is
skipped. The effects slice must also be a
superset of the default slice.
"""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

import ptxc
from ptxc.backends.llvm.layout import SEG_FIRST_BUFFER
from ptxc.errors import PtxcError
from ptxc.launcher.args import is_pointer_param
from ptxc.launcher.api import launch_segments
from ptxc.passes.slice.slice_pass import select_slice

CUDA = Path(__file__).parent / "cuda"
FILES = sorted(p for p in CUDA.glob("*.sm90.ptx"))


def arguments(fn, seed: int):
    from ptxc.backends.llvm.plan import align_up, var_align
    rng = np.random.default_rng(seed)
    params, segments = bytearray(), {}
    for p in fn.params:
        off = align_up(len(params), var_align(p))
        params += bytes(off - len(params))
        if is_pointer_param(p):
            seg = SEG_FIRST_BUFFER + len(segments)
            segments[seg] = rng.integers(0, 256, 4096, dtype=np.uint8)
            params += struct.pack("<Q", seg << 32)
        elif p.dims:
            params += bytes(p.size)
        elif p.type.startswith("f"):
            params += struct.pack({"f32": "<f", "f64": "<d"}.get(p.type, "<e"), 1.5)
        else:
            params += (200).to_bytes(p.size, "little")
    return bytes(params), segments


def test_effects_slice_contains_default_slice():
    for path in FILES:
        m = ptxc.load(path)
        select_slice(m)
        default = {id(i) for f in m.functions for i in f.instructions() if i.attrs.get("slice")}
        select_slice(m, criteria="effects")
        effects = {id(i) for f in m.functions for i in f.instructions() if i.attrs.get("slice")}
        assert default <= effects, path.name
        for f in m.functions:
            for ins in f.instructions():
                if ins.opcode in ("st", "atom", "red") and not any(
                        s in ins.mods for s in ("shared", "local", "param")):
                    assert ins.attrs["slice"], f"{path.name}: {ins.full_opcode} not kept"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_hybrid_effects_writes_what_full_writes(path):
    m = ptxc.load(path)
    checked = 0
    for k, fn in enumerate(m.kernels):
        params, base = arguments(fn, k)
        full_mem = {s: b.copy() for s, b in base.items()}
        hyb_mem = {s: b.copy() for s, b in base.items()}
        block = fn.reqntid or (128,)
        try:
            full = launch_segments(m, fn, 2, block, params, full_mem, mode="full", threads=1,
                                   max_steps=20000)
        except PtxcError:
            continue                  # these arguments do not make a valid launch
        hybrid = launch_segments(m, fn, 2, block, params, hyb_mem, mode="hybrid", threads=1,
                                 max_steps=20000, slice_options={"criteria": "effects"})
        assert hybrid.counters() == full.counters(), fn.name
        for s in base:
            assert np.array_equal(full_mem[s], hyb_mem[s]), (fn.name, s)
        checked += 1
    print(f"{path.name}: {checked} of {len(m.kernels)} kernels checked")
    if not checked:
        pytest.skip("no kernel of this file runs with the generic arguments")
