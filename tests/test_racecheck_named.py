"""racecheck's ordering by named barriers and its INFO level (docs/check.md,
"racecheck"; backends/llvm/instruments/racecheck_mbar.NamedBarriers,
racecheck.same_value).

PTX ISA ``bar``/``barrier``: ``bar.arrive a, b`` counts the warp at barrier
``a`` without waiting, ``bar.sync a, b`` counts it and waits until ``b``
threads arrived; what a thread wrote before its arrive is visible to the
threads that synced on that phase, what it writes after is not. One CTA of
64 threads: warp 0 (threads 0-31) is the producer, warp 1 the consumer;
thread t of warp 1 reads the word warp 0's thread t - 32 wrote. Before this
model every ``bar.sync`` counted as a CTA barrier (warp 1's count 1 > warp
0's 0: "ordered") and the race was missed: 0 errors where 32 are expected.
"""
from __future__ import annotations

import numpy as np
import pytest

import ptxc
from ptxc.check.hazards import launch_text

HDR = ".version 8.0\n.target sm_90\n.address_size 64\n"


def producer_consumer(producer: str, consumer: str) -> str:
    return HDR + """
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<8>; .reg .b64 %rd<4>; .reg .pred %p;
  .shared .align 4 .b32 s[32];
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 31;
  shl.b32 %r3, %r2, 2;
  mov.u32 %r4, s;
  add.u32 %r5, %r4, %r3;
  setp.ge.u32 %p, %r1, 32;
  @%p bra CONSUMER;
""" + producer + """
  bra.uni DONE;
CONSUMER:
""" + consumer + """
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r2, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r6;
DONE:
  ret;
}
"""


STORE, LOAD = "  st.shared.u32 [%r5], %r1;", "  ld.shared.u32 %r6, [%r5];"


def hazards(text: str, block: int = 64):
    out = np.zeros(32, np.int32)
    prof = ptxc.launch(ptxc.parse(text, "k.ptx"), "k", 1, block, [out], mode="full",
                       check="racecheck")
    return prof, out


@pytest.mark.parametrize("producer, consumer, expected", [
    # the write is released by the arrive, acquired by the consumer's sync: ordered
    (STORE + "\n  bar.arrive 1, 64;", "  bar.sync 1, 64;\n" + LOAD, []),
    # the write comes after the arrive: 32 RAW errors (each consumer thread)
    ("  bar.arrive 1, 64;\n" + STORE, "  bar.sync 1, 64;\n" + LOAD, [("RAW", "error", 32)]),
    # both sync on barrier 1: ordered
    (STORE + "\n  bar.sync 1, 64;", "  bar.sync 1, 64;\n" + LOAD, []),
    # barrier.sync / barrier.arrive spellings, id 3, count 64
    ("  barrier.arrive 3, 64;\n" + STORE, "  barrier.sync 3, 64;\n" + LOAD, [("RAW", "error", 32)]),
    # the consumer only arrives: nothing orders its read after the write
    (STORE + "\n  bar.sync 2, 64;", "  bar.arrive 2, 64;\n" + LOAD, [("RAW", "error", 32)]),
    # no barrier at all / a CTA barrier (bar.sync 0): the model as before
    (STORE, LOAD, [("RAW", "error", 32)]),
    (STORE + "\n  bar.sync 0;", "  bar.sync 0;\n" + LOAD, []),
])
def test_named_barrier_ordering(producer, consumer, expected):
    prof, out = hazards(producer_consumer(producer, consumer))
    assert [(r.kind, r.severity, r.count) for r in prof.race_hazards] == expected
    assert prof.to_dict()["racecheck"]["error_count"] == sum(n for _, s, n in expected if s == "error")


def test_a_phase_orders_only_the_warps_of_that_phase():
    # 96 threads: warp 2 writes and arrives on barrier 1 after warp 0 and 1
    # synced on barrier 1 with count 64 (a phase warp 2 is not part of). Its
    # arrive starts the next phase: warp 1's read (after its first sync) is
    # not ordered after warp 2's write: 32 RAW errors (warp 1's threads).
    text = HDR + """
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<8>; .reg .pred %p<3>;
  .shared .align 4 .b32 s[32];
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 31;
  shl.b32 %r3, %r2, 2;
  mov.u32 %r4, s;
  add.u32 %r5, %r4, %r3;
  setp.ge.u32 %p1, %r1, 64;
  @%p1 bra WRITER;
  bar.sync 1, 64;
  setp.lt.u32 %p2, %r1, 32;
  @%p2 bra DONE;
  ld.shared.u32 %r6, [%r5];
  bra.uni DONE;
WRITER:
  st.shared.u32 [%r5], %r1;
  bar.arrive 1, 64;
DONE:
  ret;
}
"""
    prof, _ = hazards(text, block=96)
    assert [(r.kind, r.severity, r.count) for r in prof.race_hazards] == [("RAW", "error", 32)]


WAW = HDR + """
.visible .entry k(.param .u64 out, .param .u32 v)
{
  .reg .b32 %r<8>; .reg .pred %p;
  .shared .align 4 .b32 flag[2];
  mov.u32 %r1, %tid.x;
  ld.param.u32 %r2, [v];
  setp.lt.u32 %p, %r1, 32;
  selp.u32 %r3, 1, %r2, %p;
  st.shared.u32 [flag], %r3;
  ret;
}
"""


def test_a_write_of_the_same_value_is_info():
    # Warp 0 writes 1 into flag (its lanes are one instruction: no hazard),
    # then warp 1 writes v there, unordered: 32 WAW hazards (each thread of
    # warp 1 against thread 31's write). v = 1: the byte keeps its value,
    # compute-sanitizer's INFO level, not counted in ERROR SUMMARY; v = 2: 32
    # errors.
    m = ptxc.parse(WAW, "w.ptx")
    same = ptxc.launch(m, "k", 1, 64, [np.zeros(1, np.int32), 1], mode="full", check="racecheck")
    assert [(r.kind, r.severity, r.count) for r in same.race_hazards] == [("WAW", "info", 32)]
    d = same.to_dict()["racecheck"]
    assert (d["error_count"], d["warning_count"], d["info_count"]) == (0, 0, 32)
    text = launch_text("racecheck", same.race_hazards)
    assert "========= Info: Race reported between Write access at k in w.ptx:13" in text
    assert "RACECHECK SUMMARY: 1 hazard displayed (0 errors, 0 warnings, 1 info)" in text
    assert text.endswith("ERROR SUMMARY: 0 errors\n")
    other = ptxc.launch(m, "k", 1, 64, [np.zeros(1, np.int32), 2], mode="full", check="racecheck")
    assert [(r.kind, r.severity, r.count) for r in other.race_hazards] == [("WAW", "error", 32)]


def test_same_value_is_decided_per_byte_written():
    # st.shared.v2: warp 1 writes (1, v) over warp 0's (1, 1): with v = 1 every
    # byte keeps its value (info); with v = 5 the second word changes: error.
    text = WAW.replace("st.shared.u32 [flag], %r3;", "mov.u32 %r4, 1;\n  st.shared.v2.u32 [flag], {%r4, %r3};")
    m = ptxc.parse(text, "v.ptx")
    for v, sev in ((1, "info"), (5, "error")):
        prof = ptxc.launch(m, "k", 1, 64, [np.zeros(1, np.int32), v], mode="full", check="racecheck")
        assert [(r.kind, r.severity, r.count) for r in prof.race_hazards] == [("WAW", sev, 32)]
