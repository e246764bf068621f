"""Launch-specialised aliasing (slice memory=launch, ptxc/launcher/alias.py):
the default slice of a hybrid launch uses what the arguments say about
aliasing, and falls back to the conservative rules where they say nothing.

Every dynamic case checks hybrid == full counter by counter and the full
run's outputs against numpy; the cases with real aliasing (one array bound
twice, overlapping views, overlapping offsets in one segment, a pointer into
the module's .global variables, a pointer loaded from memory) would give a
hybrid run that misses the store if the slice dropped it.

Kernels: tests/cuda/launch_alias.cu (nvcc -ptx -arch=sm_90 -O3).
"""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

import ptxc
from ptxc.backends.llvm.layout import SEG_FIRST_BUFFER, SEG_GLOBALS, SEG_SHARED
from ptxc.backends.llvm.plan import module_layout
from ptxc.backends.llvm.runtime import ModuleMemory
from ptxc.launcher.alias import classes_for_segments, classes_for_values
from ptxc.launcher.api import launch
from ptxc.launcher.api import launch_segments
from ptxc.passes.slice.slice_pass import mark_slice

CUDA = Path(__file__).resolve().parent / "cuda"
PTX = CUDA / "launch_alias.sm90.ptx"
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "branchy.ptx"
N = 200                 # threads that pass the bounds check (grid 2 x 128)


@pytest.fixture
def m():
    return ptxc.load(PTX)


def kept(fn, text: str) -> list[bool]:
    """Marks of the instructions whose printed opcode starts with ``text``."""
    return [bool(i.attrs["slice"]) for i in fn.instructions() if i.full_opcode.startswith(text)]


def both(module, kernel, make_args, grid=2, block=128, **kw):
    """(hybrid profile, full profile, the full run's arguments)."""
    hybrid = launch(module, kernel, grid, block, make_args(), **kw)
    args = make_args()
    full = launch(module, kernel, grid, block, args, mode="full", **kw)
    assert hybrid.counters() == full.counters()
    return hybrid, full, args


# ------------------------------------------------------------- classes
def test_classes_of_arrays_follow_memory_overlap(m):
    fn = m.function("store_then_branch")
    x, y = np.zeros(8, np.int32), np.zeros(8, np.int32)
    names = [p.name for p in fn.params]
    assert classes_for_values(fn, {0: x, 1: y, 2: x, 3: 5}) == \
        ((names[0], "b0"), (names[1], "b1"), (names[2], "b0"))
    assert classes_for_values(fn, {0: x[1:], 1: x[:-1], 2: y}) == \
        ((names[0], "b0"), (names[1], "b0"), (names[2], "b1"))
    # null and arbitrary raw addresses have no class; the .global segment has
    assert classes_for_values(fn, {0: 0, 1: (SEG_GLOBALS << 32) + 8, 2: 12345}) == \
        ((names[1], "globals"),)
    # a missing argument of a hybrid run is an empty buffer of its own
    assert classes_for_values(fn, {0: x}) == \
        ((names[0], "b0"), (names[1], "b1"), (names[2], "b2"))


def test_classes_of_segments(m):
    fn = m.function("store_then_branch")
    names = [p.name for p in fn.params]
    buf = np.zeros(64, np.uint8)
    s6, s9 = SEG_FIRST_BUFFER, SEG_FIRST_BUFFER + 3

    def params(a, b, c):
        return struct.pack("<QQQI", a, b, c, 4)
    segs = {s6: buf, s9: np.zeros(64, np.uint8)}
    # two offsets in one segment alias; another segment does not
    assert classes_for_segments(fn, params(s6 << 32, (s6 << 32) + 4, s9 << 32), segs) == \
        ((names[0], "b0"), (names[1], "b0"), (names[2], "b1"))
    # segments whose arrays overlap are one allocation
    over = {s6: buf[:32], s9: buf[16:]}
    assert classes_for_segments(fn, params(s6 << 32, s9 << 32, 0), over) == \
        ((names[0], "b0"), (names[1], "b0"))
    # a shared-window address, a segment not in the table, null: no class
    assert classes_for_segments(fn, params(SEG_SHARED << 32, (s6 + 1) << 32, 0), segs) == ()
    # a segment that is the module's .global memory itself
    memory = ModuleMemory.for_module(m)
    glob = {s6: memory.globals}
    assert classes_for_segments(fn, params(s6 << 32, 0, 0), glob, memory) == \
        ((names[0], "globals"),)


# ------------------------------------------------------------ dynamic
def expected_store_then_branch(a_after_store: np.ndarray) -> np.ndarray:
    return np.where(a_after_store > 0, 1, a_after_store * 2).astype(np.int32)


def test_distinct_arrays_drop_the_store(m):
    a = np.random.default_rng(1).integers(-3, 4, 256).astype(np.int32)
    hybrid, full, args = both(m, "store_then_branch",
                              lambda: [a.copy(), np.zeros(256, np.int32), np.zeros(256, np.int32), N])
    fn = m.function("store_then_branch")
    assert hybrid.slice_fraction < 1.0
    assert kept(fn, "st.global.u32") == [False, False, False]
    assert args[2][:N].tolist() == expected_store_then_branch(a[:N]).tolist()


def test_one_array_bound_twice(m):
    """a and b are the same array: a[i] is read after b[i] = i % 3 - 1 was
    stored, so the branch depends on the store; the slice must keep it and
    the hybrid run must see it (its private copies overlap too)."""
    x0 = np.full(256, 5, np.int32)

    def make():
        x = x0.copy()
        return [x, x, np.zeros(256, np.int32), N]
    hybrid, full, args = both(m, "store_then_branch", make)
    fn = m.function("store_then_branch")
    assert kept(fn, "st.global.u32")[0] is True
    stored = (np.arange(N) % 3 - 1).astype(np.int32)
    assert args[2][:N].tolist() == expected_store_then_branch(stored).tolist()
    assert hybrid.divergent_branch > 0
    x = x0.copy()
    launch(m, "store_then_branch", 2, 128, [x, x, np.zeros(256, np.int32), N])
    assert (x == 5).all()                       # a hybrid run never changes the arrays


def warp_order_result(n: int, size: int) -> np.ndarray:
    """store_then_branch with a = x[1:], b = x[:-1] (a[i] is b[i + 1]): warps
    run in order, each stores for all its lanes before any lane loads."""
    x = np.full(size, 4, np.int64)
    out = np.zeros(size - 1, np.int64)
    for w0 in range(0, n, 32):
        lanes = np.arange(w0, min(w0 + 32, n))
        x[lanes] = lanes % 3 - 1                 # b[i] = x[i]
        a = x[lanes + 1]
        out[lanes] = np.where(a > 0, 1, a * 2)
    return out[:n]


def test_overlapping_views(m):
    x0 = np.full(257, 4, np.int32)
    hybrid, full, args = both(m, "store_then_branch", lambda: (
        lambda x: [x[1:], x[:-1], np.zeros(256, np.int32), N])(x0.copy()))
    assert kept(m.function("store_then_branch"), "st.global.u32")[0] is True
    assert args[2][:N].tolist() == warp_order_result(N, 257).tolist()


def test_overlapping_offsets_in_one_segment(m):
    """launch_segments: a and b point into one segment 4 bytes apart."""
    seg, out_seg = SEG_FIRST_BUFFER, SEG_FIRST_BUFFER + 1
    params = struct.pack("<QQQI", (seg << 32) + 4, seg << 32, out_seg << 32, N)
    runs = {}
    for mode in ("hybrid", "full"):
        mem = np.full(257, 4, np.int32)
        out = np.zeros(256, np.int32)
        runs[mode] = (launch_segments(m, "store_then_branch", 2, 128, params,
                                      {seg: mem.view(np.uint8), out_seg: out.view(np.uint8)},
                                      mode=mode), out)
    assert runs["hybrid"][0].counters() == runs["full"][0].counters()
    assert runs["full"][1][:N].tolist() == warp_order_result(N, 257).tolist()
    assert kept(m.function("store_then_branch"), "st.global.u32")[0] is True


def test_two_segments_on_one_memory(m):
    """launch_segments: segments 6 and 7 are overlapping views of one array."""
    s_a, s_b, s_out = SEG_FIRST_BUFFER, SEG_FIRST_BUFFER + 1, SEG_FIRST_BUFFER + 2
    params = struct.pack("<QQQI", s_a << 32, s_b << 32, s_out << 32, N)
    runs = {}
    for mode in ("hybrid", "full"):
        mem = np.full(257, 4, np.int32)
        out = np.zeros(256, np.int32)
        segs = {s_a: mem[1:].view(np.uint8), s_b: mem[:-1].view(np.uint8),
                s_out: out.view(np.uint8)}
        runs[mode] = (launch_segments(m, "store_then_branch", 2, 128, params, segs, mode=mode), out)
    assert runs["hybrid"][0].counters() == runs["full"][0].counters()
    assert runs["full"][1][:N].tolist() == warp_order_result(N, 257).tolist()


def flags_address(m) -> int:
    return (SEG_GLOBALS << 32) | module_layout(m).global_layout["flags"]


def test_pointer_into_global_variables(m):
    """p points at the __device__ array flags, which the kernel writes before
    the branch reads p[i]: out[i] = 7 for odd i, 9 for even i."""
    want = np.where(np.arange(N) & 1, 7, 9).tolist()
    hybrid, full, args = both(m, "global_then_branch",
                              lambda: [flags_address(m), np.zeros(256, np.int32), N])
    assert kept(m.function("global_then_branch"), "st.global.u32")[0] is True
    assert args[1][:N].tolist() == want
    # the same through launch_segments, with module memory kept by the caller
    params = struct.pack("<QQI", flags_address(m), SEG_FIRST_BUFFER << 32, N)
    runs = {}
    for mode in ("hybrid", "full"):
        out = np.zeros(256, np.int32)
        runs[mode] = launch_segments(m, "global_then_branch", 2, 128, params,
                                     {SEG_FIRST_BUFFER: out.view(np.uint8)}, mode=mode,
                                     memory=ModuleMemory.for_module(m))
        if mode == "full":
            assert out[:N].tolist() == want
    assert runs["hybrid"].counters() == runs["full"].counters()


def test_pointer_to_a_buffer_does_not_alias_global_variables(m):
    p = np.random.default_rng(3).integers(0, 2, 256).astype(np.int32)
    hybrid, full, args = both(m, "global_then_branch",
                              lambda: [p.copy(), np.zeros(256, np.int32), N])
    assert kept(m.function("global_then_branch"), "st.global.u32") == [False, False, False]
    assert args[1][:N].tolist() == np.where(p[:N] != 0, 7, 9).tolist()


def test_pointer_loaded_from_memory(m):
    """q = table[0] points at a (segment 7: the second array argument), so
    q[i] = i % 4 decides the branch on a[i] == 2. A loaded pointer is an
    unknown region: the store is kept whatever the arguments."""
    a_seg = SEG_FIRST_BUFFER + 1
    hybrid, full, args = both(m, "loaded_pointer", lambda: [
        np.array([a_seg << 32], np.uint64), np.zeros(256, np.int32), np.zeros(256, np.int32), N])
    fn = m.function("loaded_pointer")
    assert kept(fn, "st.global.u32")[0] is True
    assert args[2][:N].tolist() == (np.arange(N) % 4 == 2).astype(int).tolist()


# --------------------------------------------------- options and caching
def test_explicit_memory_option_is_honoured(m):
    mark_slice(m, memory="conservative")
    a = np.zeros(256, np.int32)
    prof = launch(m, "store_then_branch", 2, 128, [a, np.zeros(256, np.int32),
                                                  np.zeros(256, np.int32), N])
    assert m.attrs["slice"]["memory"] == "conservative"
    assert prof.slice_fraction == 1.0


def test_one_variant_per_alias_pattern(m):
    a, b, c = (np.zeros(256, np.int32) for _ in range(3))
    launch(m, "store_then_branch", 2, 128, [a, b, c, N])
    n1 = len(m.attrs["slice_variants"])
    launch(m, "store_then_branch", 2, 128, [b, c, a, N])      # same pattern
    assert len(m.attrs["slice_variants"]) == n1
    launch(m, "store_then_branch", 2, 128, [a, a, c, N])      # a new pattern
    assert len(m.attrs["slice_variants"]) == n1 + 1
    # the first variant also specialised the other kernels to distinct
    # buffers: launching one of them that way reuses it
    launch(m, "global_then_branch", 2, 128, [a, b, N])
    assert len(m.attrs["slice_variants"]) == n1 + 1


# -------------------------------------------------- the README example
# examples/branchy.ptx, vecadd_branchy, derived by hand from the PTX with a,
# b, c three distinct arrays. Criteria: the four conditional branches, ret,
# and the guards %p1 %p4 %p5 %p6. Data closure:
#   %p1 = setp.ge %r2, %r6: mad %r2 (mov ctaid, mov ntid, mov tid), ld.param %r6
#   %p4 = xor %p2, %p3: setp.eq %p2 <- and %r9 <- %r1 (tid); mov.pred %p3
#   %p5 = setp.eq %r3: and %r3 <- cvt.rzi %r10 <- abs %f7 <- ld.global %f1
#         [%rd7] <- add %rd7 (cvta %rd5 <- ld.param %rd2, mul.wide %rd6 <- %r2)
#   %p6 = setp.lt %r12, %r3: %r12 = phi(mov 0, add %r12)
# Memory: ld.global [%rd7] reads a (param_0); the only store writes c
# (param_2), another allocation: not kept, nor its address and value
# (cvta %rd10, shl %rd11, add %rd12, cvt.s64 %rd1, the b load, add.f32, fma).
EXAMPLE_KEPT = [
    "ld.param.u64 %rd2", "ld.param.u32 %r6", "mov.u32 %r7", "mov.u32 %r8", "mov.u32 %r1",
    "mad.lo.s32 %r2", "setp.ge.s32 %p1", "bra",
    "cvta.to.global.u64 %rd5", "mul.wide.s32 %rd6", "add.s64 %rd7", "ld.global.f32 %f1",
    "and.b32 %r9", "setp.eq.b32 %p2", "mov.pred %p3", "xor.pred %p4", "bra",
    "abs.f32 %f7", "cvt.rzi.s32.f32 %r10", "and.b32 %r3", "setp.eq.s32 %p5", "bra",
    "mov.u32 %r12", "add.s32 %r12", "setp.lt.u32 %p6", "bra", "ret",
]

# what the default launch adds to check the accesses it skips (faults=checked)
EXAMPLE_CHECKS = ["ld.param.u64 %rd3", "ld.param.u64 %rd4", "cvt.s64.s32 %rd1",
                  "cvta.to.global.u64 %rd8", "add.s64 %rd9", "cvta.to.global.u64 %rd10",
                  "shl.b64 %rd11", "add.s64 %rd12"]


def instruction_text(ins) -> str:
    first = ins.results[0].reg if ins.results else ""
    return f"{ins.full_opcode} {first}".strip()


def test_readme_example_slice_is_small():
    m = ptxc.load(EXAMPLE)
    a = np.arange(512, dtype=np.float32)
    b = np.random.default_rng(2).random(512).astype(np.float32)
    args = [a, b, np.zeros(512, np.float32), 500]
    prof = launch(m, "vecadd_branchy", 4, 128, args, check_faults=False)
    fn = m.function("vecadd_branchy")
    kept_text = [instruction_text(i) for i in fn.instructions()
                 if not i.is_phi and i.attrs["slice"]]
    assert kept_text == EXAMPLE_KEPT
    assert prof.slice_fraction == pytest.approx(27 / 39)
    full = launch(m, "vecadd_branchy", 4, 128, args, mode="full")
    assert prof.counters() == full.counters()
    # The default launch also checks the accesses it skips (faults=checked):
    # the loads of b[i] and the store to c[i] keep their addresses: b's and
    # c's pointers (2 ld.param), b's cvta and add, c's cvta, shl and add, and
    # the cvt.s64 of the index that shl reads: 8 more, 35 of 39.
    checked = launch(m, "vecadd_branchy", 4, 128, args)
    kept_text = [instruction_text(i) for i in fn.instructions()
                 if not i.is_phi and i.attrs["slice"]]
    assert sorted(kept_text) == sorted(EXAMPLE_KEPT + EXAMPLE_CHECKS)
    assert checked.slice_fraction == pytest.approx(35 / 39)
    assert checked.counters() == full.counters()


def test_readme_command_reports_the_launch_slice(tmp_path):
    from click.testing import CliRunner
    from ptxc.cli.main import cli
    res = CliRunner().invoke(cli, [
        "opt", "--pass=slice,count", "--kernel", "vecadd_branchy", "--grid", "4",
        "--block", "128", "--arg", "0=arange:f32:512", "--arg", "1=random:f32:512:2",
        "--arg", "2=zeros:f32:512", "--arg", "3=500", str(EXAMPLE)])
    assert res.exit_code == 0, res.output
    assert "slice kernel @vecadd_branchy: 27/39 instructions (69.2%), memory=launch" in res.output
    # the slice pass reports the branch slice; the run also checks the
    # accesses it skips (35 of 39 instructions, test above)
    assert "slice_fraction = 0.8974" in res.output


# ------------------------------------------------------ variant caching
def marks(module) -> list[bool]:
    return [bool(i.attrs.get("slice")) for fn in module.functions if not fn.is_decl
            for i in fn.instructions()]


def test_cached_and_derived_variants_equal_fresh_slices():
    """Launch variants are built from per-universe slices (slice_cache) and
    derived from the variant in place when one kernel's pattern changes;
    after every launch the marks must equal a fresh slice of the same
    options. pick() is shared by two kernels (their slices close together)."""
    from ptxc.passes.slice.slice_pass import select_slice
    m = ptxc.load(PTX)
    x, y, z = (np.zeros(256, np.int32) for _ in range(3))
    launches = [("store_then_branch", [x, y, z, N]), ("store_then_branch", [x, x, z, N]),
                ("global_then_branch", [x, z, N]), ("global_then_branch", [flags_address(m), z, N]),
                ("shared_pick_a", [x, y, z, N]), ("shared_pick_a", [x, x, z, N]),
                ("shared_pick_b", [x, z, N]), ("store_then_branch", [x, y, z, N]),
                ("loaded_pointer", [np.array([(SEG_FIRST_BUFFER + 1) << 32], np.uint64), x, z, N])]
    for kernel, args in launches:
        launch(m, kernel, 2, 128, args, cta_equivalence=False)
        fresh = ptxc.load(PTX)
        select_slice(fresh, memory="launch", alias=m.attrs["slice"]["alias"],
                     faults=m.attrs["slice"].get("faults", "unchecked"))
        assert marks(m) == marks(fresh), kernel
        for fn in m.functions:
            if not fn.is_decl:
                mine = {k: v for k, v in fn.attrs["slice_report"].items()}
                assert mine == fresh.function(fn.name).attrs["slice_report"], (kernel, fn.name)


def test_shared_function_aliasing_is_exact():
    m = ptxc.load(PTX)
    x0 = np.full(256, 3, np.int32)

    def make():
        x = x0.copy()
        return [x, x, np.zeros(256, np.int32), N]
    hybrid, full, args = both(m, "shared_pick_a", make)
    assert args[2][:N].tolist() == (np.arange(N) % 5 > 2).astype(int).tolist()


def test_unchanged_kernels_keep_their_compiled_code():
    """A new alias pattern for one kernel re-slices only that kernel; the
    others keep their report objects, so the JIT does not compile them again."""
    from ptxc.backends.llvm import jit
    m = ptxc.load(PTX)
    x, y, z = (np.zeros(256, np.int32) for _ in range(3))
    launch(m, "global_then_branch", 2, 128, [x, z, N])
    before = m.function("global_then_branch").attrs["slice_report"]
    first = dict(jit._cache(m))
    launch(m, "store_then_branch", 2, 128, [x, x, z, N])        # a new pattern
    assert m.function("global_then_branch").attrs["slice_report"] is before
    compiled = dict(jit._cache(m))
    launch(m, "global_then_branch", 2, 128, [x, z, N])
    assert dict(jit._cache(m)) == compiled                      # nothing compiled again
    assert all(compiled.get(k) is v for k, v in first.items())
