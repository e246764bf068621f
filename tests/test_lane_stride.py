"""passes/memory/lane_stride.py on nvcc PTX (tests/cuda/fast_access.cu):
the lane strides of the addresses of ld/st, derived by hand from the source
(4-byte elements indexed by i = blockIdx.x * blockDim.x + threadIdx.x)."""
from __future__ import annotations

from pathlib import Path

import ptxc
from ptxc.passes.memory.lane_stride import LaneStrides

PTX = Path(__file__).parent / "cuda" / "fast_access.sm90.ptx"


def strides(kernel: str) -> list:
    m = ptxc.load(str(PTX))
    fn = next(k for k in m.kernels if k.name == kernel)
    ls = LaneStrides(fn)
    out = []
    for ins in fn.instructions():
        if ins.opcode in ("ld", "st") and "param" not in ins.mods:
            addr = ins.srcs[0] if ins.opcode == "ld" else (ins.dsts[0] if ins.dsts else ins.srcs[0])
            out.append((ins.opcode, ls.stride(addr)))
    return out


def test_copy_is_contiguous():
    assert strides("copy_n") == [("ld", 4), ("st", 4)]        # in[i], out[i]


def test_offsets_share_the_stride():
    assert strides("offsets") == [("ld", 4)] * 3 + [("st", 4)]   # in[i+8], in[i], in[i+40]


def test_shapes():
    got = strides("shapes")
    assert got[0] == ("ld", 4)              # in[i]
    assert got[1] == ("ld", 0)              # in[0]
    assert got[2] == ("ld", None)           # in[(i * stride) % n]: a remainder
    assert ("st", 4) in got                 # out[i]
    assert got[-1] == ("st", None)          # out[n + i / 5]: a quotient


def test_vectors_stride_is_the_vector_size():
    got = strides("vectors")
    assert got[0] == ("ld", 16) and got[1] == ("st", 16)     # float4 in[i], out[i]
    assert ("st", 8) in got                                  # float2 out2[i]
