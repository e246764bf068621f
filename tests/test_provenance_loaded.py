"""The provenance check for pointers loaded from memory and pointer
arguments of called functions (passes/memory/provenance_flow.py, backends/llvm/
provenance_ir.py, docs/executor.md "Memory").

Kernels: tests/cuda/provenance.cu, compiled with nvcc 13.0 to
provenance.sm90.ptx (-O3) and provenance.sm90.G.ptx (-G); the commands are
in tests/cuda/README.md. Launches use launch_segments with buffers at fixed
segments (as ``ptxc run`` gives cudaMalloc'd memory), 16 bytes each:

    segment 6   the pointer table / struct          0x600000000
    segment 8   src (or y0)                         0x800000000
    segment 9   dst (or y1)                         0x900000000
    segment 10  next: the buffer after dst          0xa00000000

An offset of 2^30 floats is 4 GiB = 2^32 bytes, exactly one segment: thread
0's store to dst[0 + 2^30] is at 0x900000000 + 2^32 = 0xa00000000, byte 0 of
``next``, which lies 2^32 - 16 = 4294967280 bytes after the end of the
16-byte dst. Without the check (the test disables expected_segment) that
store silently writes ``next``; with it, full, hybrid and memcheck runs
report it.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxc
from ptxc.backends.llvm.instruments import provenance_ir
from ptxc.launcher.api import launch_segments
from ptxc.passes.memory.provenance import checked_address, origins

HERE = Path(__file__).resolve().parent / "cuda"
O3, G = HERE / "provenance.sm90.ptx", HERE / "provenance.sm90.G.ptx"
SRC, DST, NEXT, TABLE = 8, 9, 10, 6
NAMES = {SRC: "buffer src", DST: "buffer dst", NEXT: "buffer next", TABLE: "the table"}
OFF = 1 << 30
ADDR = (DST << 32) + 4 * OFF            # 0xa00000000
AFTER = 4 * OFF - 16                    # bytes after the end of dst: 4294967280


def le(v: int) -> bytes:
    return int(v).to_bytes(8, "little")


def line_of(path: Path, snippet: str, start: str = "") -> int:
    """The PTX line of the first line containing ``snippet`` after ``start``."""
    lines = path.read_text().splitlines()
    first = next(i for i, t in enumerate(lines) if start in t) if start else 0
    return next(i + 1 for i in range(first, len(lines)) if snippet in lines[i])


def buffers():
    src = np.arange(1, 5, dtype=np.float32)          # 1 2 3 4
    return {SRC: src.view(np.uint8).copy(), DST: np.zeros(16, np.uint8),
            NEXT: np.zeros(16, np.uint8),
            TABLE: np.array([SRC << 32, DST << 32], np.uint64).view(np.uint8)}


# kernel -> (params for an offset, the expected dst/next as floats of src)
KERNELS = {
    "pair_copy": (lambda off: le(TABLE << 32) + le(off), lambda s: s),
    "pair_copy_by_value": (lambda off: le(SRC << 32) + le(DST << 32) + le(off), lambda s: s),
    "call_put": (lambda off: le(DST << 32) + le(SRC << 32) + le(off), lambda s: s + 1),
}


# the -G build leaves pair_copy_by_value out (tests/cuda/provenance.cu says why)
CASES = [(O3, k) for k in KERNELS] + [(G, k) for k in KERNELS if k != "pair_copy_by_value"]
IDS = [f"{'G' if p == G else 'O3'}-{k}" for p, k in CASES]


def run(path, kernel, off, mode="full", module=None, **kw):
    segs = buffers()
    params = KERNELS[kernel][0](off)
    prof = launch_segments(module or ptxc.load(path), kernel, (1, 1, 1), (4, 1, 1), params, segs,
                           mode=mode, segment_names=NAMES, **kw)
    return prof, segs


def error(path, kernel, mode) -> str:
    with pytest.raises(ptxc.PtxcError) as e:
        run(path, kernel, OFF, mode)
    return str(e.value)


@pytest.fixture
def unchecked(monkeypatch):
    """The executor without the provenance check (the segment check only)."""
    monkeypatch.setattr(provenance_ir, "expected_segment", lambda cg: None)


@pytest.mark.parametrize("path,kernel", CASES, ids=IDS)
def test_without_the_check_the_store_lands_in_the_next_buffer(unchecked, path, kernel):
    """What the check prevents: dst[t + 2^30] is next[t]; the run succeeds
    and next holds the values meant for dst (src, or src + 1 for put)."""
    prof, segs = run(path, kernel, OFF)
    want = KERNELS[kernel][1](np.arange(1, 5, dtype=np.float32))
    assert (segs[NEXT].view(np.float32) == want).all() and (segs[DST] == 0).all()


def loaded_line(path, kernel) -> int | None:
    """The line of the load that gives dst: ld.global.u64 [%rd3+8] of the
    struct for pair_copy, the ld.param of put's first argument for put; -G
    code reloads the pointers from its stack. None: a parameter field."""
    if path == O3:
        return {"pair_copy": line_of(path, "ld.global.u64 \t%rd9, [%rd3+8]", "entry pair_copy("),
                "call_put": line_of(path, "ld.param.u64 \t%rd1, [put_param_0]")}.get(kernel)
    return {"pair_copy": line_of(path, "ld.u64 \t%rd7, [%rd1+8]", "entry pair_copy("),
            "call_put": line_of(path, "ld.param.u64 \t%rd1, [put_param_0]")}[kernel]


@pytest.mark.parametrize("path,kernel", CASES, ids=IDS)
def test_overflow_into_the_next_buffer_is_reported(path, kernel):
    """Full and hybrid runs stop at thread 0's store, address 0xa00000000
    (next + 0), 4294967280 bytes after the end of dst, and say where the
    pointer came from; next stays unwritten."""
    full, hybrid = error(path, kernel, "full"), error(path, kernel, "hybrid")
    assert full == hybrid
    assert f"CTA (0,0,0), thread (0,0,0): out-of-bounds access at line " in full
    assert f"address 0x{ADDR:x} (buffer next + 0; its size is 16 bytes)" in full
    base = f"buffer dst (16 bytes at 0x{DST << 32:x})"
    line = loaded_line(path, kernel)
    source = base if line is None else f"the pointer loaded at line {line}, which points into {base},"
    assert f"; it was computed from {source} and lies {AFTER} bytes after the end of it" in full
    if kernel == "call_put":
        assert " in put called from line " in full


@pytest.mark.parametrize("path,kernel", CASES, ids=IDS)
def test_memcheck_records_and_skips_the_overflow(path, kernel):
    """memcheck: the 4 threads' stores (next + 0, 4, 8, 12) are one error
    with count 4, first at thread 0, address 0xa00000000, described as in
    a full run; they are dropped, so next stays 0."""
    prof, segs = run(path, kernel, OFF, check="memcheck")
    assert prof.mem_error_count == 4 and (segs[NEXT] == 0).all()
    err = prof.mem_errors[0]
    assert (err.error, err.thread, err.count, err.address) == ("out-of-bounds", (0, 0, 0), 4, ADDR)
    base = f"buffer dst (16 bytes at 0x{DST << 32:x})"
    line = loaded_line(path, kernel)
    source = base if line is None else f"the pointer loaded at line {line}, which points into {base},"
    assert err.where == f"buffer next + 0; its size is 16 bytes; it was computed from {source} " \
                        f"and lies {AFTER} bytes after the end of it (an offset never carries " \
                        f"into another allocation)"


@pytest.mark.parametrize("path,kernel", CASES, ids=IDS)
def test_in_bounds_same_counters_with_and_without_the_check(path, kernel, monkeypatch):
    """off = 0: dst = src (src + 1 for put, the numpy model), next untouched;
    full == hybrid, and the counters do not depend on the check."""
    full, segs = run(path, kernel, 0)
    want = KERNELS[kernel][1](np.arange(1, 5, dtype=np.float32))
    assert (segs[DST].view(np.float32) == want).all() and (segs[NEXT] == 0).all()
    hybrid, _ = run(path, kernel, 0, "hybrid")
    assert full.counters() == hybrid.counters()
    monkeypatch.setattr(provenance_ir, "expected_segment", lambda cg: None)
    plain, segs = run(path, kernel, 0)
    assert plain.counters() == full.counters() and (segs[DST].view(np.float32) == want).all()


# ---------------------------------------------------------------- batched
def batched(off: int, grid: int = 2, mode: str = "full", **kw):
    """batched_scale(ys, x, a = 2, off): ys = {y0 (segment 8), y1 (9)}, x =
    segment 7 = 1 2 3 4."""
    segs = {6: np.array([8 << 32, 9 << 32], np.uint64).view(np.uint8),
            7: np.arange(1, 5, dtype=np.float32).view(np.uint8).copy(),
            8: np.zeros(16, np.uint8), 9: np.zeros(16, np.uint8)}
    params = le(6 << 32) + le(7 << 32) + np.float32(2).tobytes() + bytes(4) + le(off)
    prof = launch_segments(ptxc.load(O3), "batched_scale", (grid, 1, 1), (4, 1, 1), params, segs,
                           mode=mode, segment_names={8: "buffer y0", 9: "buffer y1"}, **kw)
    return prof, segs[8].view(np.float32), segs[9].view(np.float32)


def test_batched_in_bounds(monkeypatch):
    """CTA b writes ys[b][t] = 2 * x[t] (numpy model); full == hybrid, and
    the same counters and output without the check."""
    full, y0, y1 = batched(0)
    want = 2 * np.arange(1, 5, dtype=np.float32)
    assert (y0 == want).all() and (y1 == want).all()
    hybrid, _, _ = batched(0, mode="hybrid")
    assert full.counters() == hybrid.counters()
    monkeypatch.setattr(provenance_ir, "expected_segment", lambda cg: None)
    plain, y0, y1 = batched(0)
    assert plain.counters() == full.counters() and (y0 == want).all() and (y1 == want).all()


def test_batched_overflow(monkeypatch):
    """One CTA (batch 0), off = 2^30: y0 + 4 GiB is y1 + 0 (0x900000000),
    2^32 - 16 bytes after the end of y0. Without the check y1 = 2 * x
    silently; with it, the same error in full and hybrid runs."""
    line = line_of(O3, "ld.global.u64 \t%rd8, [%rd7]")
    msgs = []
    for mode in ("full", "hybrid"):
        with pytest.raises(ptxc.PtxcError) as e:
            batched(OFF, 1, mode)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
    assert (f"address 0x900000000 (buffer y1 + 0; its size is 16 bytes); it was computed from "
            f"the pointer loaded at line {line}, which points into buffer y0 (16 bytes at "
            f"0x800000000), and lies {AFTER} bytes after the end of it") in msgs[0]
    monkeypatch.setattr(provenance_ir, "expected_segment", lambda cg: None)
    _, y0, y1 = batched(OFF, 1)
    assert (y1 == 2 * np.arange(1, 5, dtype=np.float32)).all() and (y0 == 0).all()


# ------------------------------------------------------------ list walk
def list_buffers(vals):
    """Nodes {next, val} of 16 bytes, node k in buffer k % 2 (segments 8
    and 9) at slot k // 2; the last node's next is null."""
    a, b = np.zeros((3, 4), np.uint32), np.zeros((3, 4), np.uint32)
    for k in range(len(vals)):
        home = a if k % 2 == 0 else b
        nxt = 0 if k == len(vals) - 1 else (((8 + (k + 1) % 2) << 32) | 16 * ((k + 1) // 2))
        home[k // 2, 0], home[k // 2, 1] = nxt & 0xFFFFFFFF, nxt >> 32
        home[k // 2, 2] = vals[k:k + 1].view(np.uint32)[0]
    return a.view(np.uint8).reshape(-1), b.view(np.uint8).reshape(-1)


def test_pointer_chased_around_a_loop_is_not_a_base():
    """list_sum: in the remainder loop p = phi(head, p->next, ...) and the
    next pointer is loaded before p->val, so the latest load is the *next*
    node: the analysis must not use it (origins None: the segment check
    only). steps = 2 runs the remainder loop alone: at node 1 (buffer 9)
    the latest load gave node 1's next, null, so a check that used it would
    take the one remaining pointer candidate, head (buffer 8), and fault.
    steps = 6 runs the unrolled loop once and the remainder twice. out[t] =
    the sum of the vals (numpy, in order, float32)."""
    m = ptxc.load(O3)
    fn = next(f for f in m.functions if f.name == "list_sum")
    remainder = line_of(O3, "ld.global.f32 \t%f19, [%rd15+8]")
    ins = next(i for i in fn.instructions() if i.loc is not None and i.loc.line == remainder)
    assert checked_address(ins) and origins(ins, 64) is None
    for steps in (2, 6):
        vals = np.array([1.5, 2.0, 3.25, 4.0, 5.5, 6.0][:steps], np.float32)
        a, b = list_buffers(vals)
        out = np.zeros(4, np.float32)
        segs = {8: a, 9: b, 10: out.view(np.uint8)}
        params = le(8 << 32) + le(10 << 32) + steps.to_bytes(4, "little") + bytes(4)
        full = launch_segments(m, "list_sum", (1, 1, 1), (4, 1, 1), params, segs, mode="full")
        want = np.float32(0)
        for v in vals:
            want = np.float32(want + v)
        assert (out == want).all()
        hybrid = launch_segments(m, "list_sum", (1, 1, 1), (4, 1, 1), params, segs, mode="hybrid")
        assert full.counters() == hybrid.counters()


# ------------------------------------------------------------ candidates
def test_candidates_of_struct_fields_and_loaded_pointers():
    """pair_copy_by_value's store: dst is ``ld.param.u64 [param_0+8]`` (a
    field of the by-value struct, byte 8) plus ``off`` (param_1, byte 0, a
    64-bit index); batched_scale's store: y = ``ld.global.u64 [%rd7]``
    (loaded) plus ``off`` (param_3). The CTA classifier reads a field at its
    offset: with the parameters {src = 8 << 32, dst = 9 << 32, off = 0} the
    field at byte 8 gives segment 9."""
    from ptxc.passes.cta.segments import SegmentSizes, home_segment
    m = ptxc.load(O3)
    fns = {f.name: f for f in m.functions}
    store = next(i for i in fns["pair_copy_by_value"].instructions() if i.opcode == "st")
    got = [(c[0], c[1].name, c[2]) for c in origins(store, 64)]
    assert got == [("param", "pair_copy_by_value_param_0", 8),
                   ("param", "pair_copy_by_value_param_1", 0)]
    store = next(i for i in fns["batched_scale"].instructions() if i.opcode == "st")
    kinds = [(c[0], c[1].name if c[0] == "param" else c[1].instr.loc.line) for c in origins(store, 64)]
    assert kinds == [("param", "batched_scale_param_3"),
                     ("loaded", line_of(O3, "ld.global.u64 \t%rd8, [%rd7]"))]

    class Ev:       # the evaluator's parameter reader (cta_classes.Evaluator._param)
        params = le(SRC << 32) + le(DST << 32) + le(0)

        def _param(self, index, offset, t):
            pos = [0, 16][index] + offset
            return int.from_bytes(self.params[pos:pos + 8], "little")

    class Check:
        origins = (("param", 0, "u64", 8), ("param", 1, "u64", 0))

    segments = SegmentSizes({SRC: 16, DST: 16}, 32)
    assert home_segment(Ev(), Check(), segments, DST + 1) == DST


# .address_size 32: nvcc no longer emits 32-bit PTX (-m32 was removed), so
# this kernel is written by hand, as tests/test_hybrid_faults.py's PTX32 is:
# p = t[0] (a 32-bit pointer loaded from memory), p[tid + skip] = tid.
# Segments are 16 MiB (SHIFT 24).
PTX32 = """
.version 6.5
.target sm_50
.address_size 32

.visible .entry tab32(.param .u32 t, .param .u32 skip)
{
    .reg .b32 %r<8>;
    ld.param.u32 %r1, [t];
    ld.param.u32 %r2, [skip];
    ld.global.u32 %r3, [%r1];
    mov.u32 %r4, %tid.x;
    add.s32 %r5, %r4, %r2;
    shl.b32 %r6, %r5, 2;
    add.s32 %r7, %r3, %r6;
    st.global.u32 [%r7], %r4;
    ret;
}
"""


def test_loaded_pointer_32_bit_addresses():
    """t = segment 6 holds a = 7 << 24; skip = 2^22 words = 2^24 bytes, one
    segment: thread 0 stores at 0x8000000 (b + 0), 2^24 - 16 = 16777200
    bytes after the end of the 16-byte a; the store is line 16 of the text
    (it starts with a newline), the load line 11.
    skip = 0: a = 0 1 2 3."""
    m = ptxc.parse(PTX32, "t32.ptx")

    def go(skip, mode):
        segs = {6: np.array([7 << 24], np.uint32).view(np.uint8), 7: np.zeros(16, np.uint8),
                8: np.zeros(16, np.uint8)}
        params = (6 << 24).to_bytes(4, "little") + skip.to_bytes(4, "little")
        launch_segments(m, "tab32", (1, 1, 1), (4, 1, 1), params, segs, mode=mode,
                        segment_names={7: "buffer a", 8: "buffer b"})
        return segs

    segs = go(0, "full")
    assert (segs[7].view(np.uint32) == np.arange(4)).all() and (segs[8] == 0).all()
    msgs = []
    for mode in ("full", "hybrid"):
        with pytest.raises(ptxc.PtxcError) as e:
            go(1 << 22, mode)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
    assert ("t32.ptx:16:5: error: kernel tab32, CTA (0,0,0), thread (0,0,0): out-of-bounds access "
            "at line 16 (st.global.u32), address 0x8000000 (buffer b + 0; its size is 16 bytes); "
            "it was computed from the pointer loaded at line 11, which points into buffer a "
            "(16 bytes at 0x7000000), and lies 16777200 bytes after the end of it") in msgs[0]
