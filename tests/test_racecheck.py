"""racecheck (docs/check.md): shared-memory hazards between the threads of a
CTA with no barrier between them.

The kernels are tests/cuda/racecheck.cu, compiled by
``nvcc -ptx -arch=sm_90 -O3 -lineinfo racecheck.cu -o racecheck.sm90.lineinfo.ptx``
(CUDA 13.0; tests/cuda/build.sh). Every expected hazard below is derived
from the source by hand (comments): the executor runs the warps of a CTA in
index order, each until it reaches a barrier or ends.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxc
from ptxc.check.hazards import launch_text
from ptxc.launcher.hazard_reports import as_json
from ptxc.launcher.api import launch

PTX = Path(__file__).parent / "cuda" / "racecheck.sm90.lineinfo.ptx"
LINES = PTX.read_text().splitlines()
CU = next(s.split('"')[1] for s in LINES if s.strip().startswith(".file\t1 "))   # as nvcc wrote it


def line_of(text: str, nth: int = 0) -> int:
    """The 1-based PTX line of the nth line containing ``text``."""
    return [i + 1 for i, s in enumerate(LINES) if text in s][nth]


def after(kernel: str, text: str) -> int:
    """The first line containing ``text`` after kernel ``kernel``'s entry."""
    start = line_of(f".entry {kernel}")
    return next(i + 1 for i, s in enumerate(LINES) if i >= start and text in s)


@pytest.fixture(scope="module")
def module():
    return ptxc.load(str(PTX))


def run(module, name, grid, block, args, check="racecheck", **kw):
    k = next(x for x in module.kernels if name in x.name)
    return launch(module, k, grid, block, args, mode="full", check=check, **kw)


def by_kind(prof) -> dict:
    return {(h.kind, h.severity): h for h in prof.race_hazards}


# ------------------------------------------------------ seeded hazards
def reverse_nosync(module, **kw):
    a = np.arange(64, dtype=np.float32)
    return run(module, "reverse_nosync", (1, 1, 1), (64, 1, 1), (a, np.zeros(64, np.float32)), **kw)


def test_missing_barrier_gives_raw_and_war(module):
    # s[t] = in[t]; out[t] = s[63 - t] with 2 warps and no barrier. Warp 0
    # runs first: it writes s[0..31], reads s[63..32] (nothing written there
    # yet). Warp 1 then writes s[32..63]: each byte was read by warp 0 (thread
    # 63 - t' reads s[t']) -> 32 write-after-read hazards; and reads s[31..0],
    # written by warp 0 -> 32 read-after-write hazards. Different warps: errors.
    prof = reverse_nosync(module)
    h = by_kind(prof)
    assert set(h) == {("RAW", "error"), ("WAR", "error")}
    st, ld = line_of("st.shared.f32 \t[%r4], %f1;"), line_of("ld.shared.f32 \t%f2, [%r8];")
    raw, war = h["RAW", "error"], h["WAR", "error"]
    assert (raw.first_line, raw.second_line, raw.count) == (st, ld, 32)
    assert (war.first_line, war.second_line, war.count) == (ld, st, 32)
    # First occurrence: the smallest later thread, 32. It reads s[31]
    # (byte 124), written by thread 31; it writes s[32] (byte 128), read by
    # thread 63 - 32 = 31.
    assert (raw.first_thread, raw.second_thread, raw.offset) == ((31, 0, 0), (32, 0, 0), 124)
    assert (war.first_thread, war.second_thread, war.offset) == ((31, 0, 0), (32, 0, 0), 128)
    assert raw.where.endswith("E1s + 124") and raw.size == 4 and raw.block == (0, 0, 0)


def test_barrier_removes_the_hazards(module):
    a = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    prof = run(module, "reverse_sync", (2, 1, 1), (64, 1, 1), (a, out))
    assert prof.race_hazards == []
    np.testing.assert_array_equal(out, a[::-1])


def test_reduction_without_loop_barrier(module):
    # 4 warps, k = 64, 32, ..., 1 with no barrier in the loop. Warp 0 runs the
    # whole loop first: at k = 32 it reads s[32..63], which warp 1 writes
    # later at k = 64 -> 32 write-after-read errors per CTA (later thread
    # 32 writes s[32], byte 128, read by thread 0). At k = 16, 8, 4, 2, 1
    # thread t < k reads s[t + k], written by thread t + k of its own warp at
    # the step before (k = 16 reads what k = 32 wrote): 16 + 8 + 4 + 2 + 1 =
    # 31 read-after-write hazards inside warp 0 per CTA: warnings (no
    # __syncwarp between). 2 CTAs double both.
    a = np.ones(256, np.float32)
    prof = run(module, "reduce_nosync", (2, 1, 1), (128, 1, 1), (a, np.zeros(2, np.float32)))
    h = by_kind(prof)
    assert set(h) == {("WAR", "error"), ("RAW", "warning")}
    ld = after("_Z13reduce_nosyncPKfPf", "ld.shared.f32 \t%f3, [%r12];")
    st = after("_Z13reduce_nosyncPKfPf", "st.shared.f32 \t[%r3], %f4;")
    war, raw = h["WAR", "error"], h["RAW", "warning"]
    assert (war.first_line, war.second_line, war.count) == (ld, st, 64)
    assert (war.first_thread, war.second_thread, war.offset) == ((0, 0, 0), (32, 0, 0), 128)
    # first warning: thread 0 reads s[16] (byte 64), written by thread 16
    assert (raw.first_line, raw.second_line, raw.count) == (st, ld, 62)
    assert (raw.first_thread, raw.second_thread, raw.offset) == ((16, 0, 0), (0, 0, 0), 64)
    assert as_json("racecheck", prof.race_hazards)["error_count"] == 64
    assert as_json("racecheck", prof.race_hazards)["warning_count"] == 62


def test_correct_reduction_is_clean(module):
    a = np.arange(256, dtype=np.float32)
    out = np.zeros(2, np.float32)
    prof = run(module, "reduce_sync", (2, 1, 1), (128, 1, 1), (a, out))
    assert prof.race_hazards == []
    np.testing.assert_array_equal(out, a.reshape(2, 128).sum(axis=1))


def test_every_thread_writes_one_word(module):
    # s = threadIdx.x by 64 threads: the 32 lanes of one store do not race
    # with each other; each lane of warp 1 overwrites warp 0's write: 32
    # write-after-write errors per CTA, 2 CTAs.
    prof = run(module, "last_writer", (2, 1, 1), (64, 1, 1), (np.zeros(1, np.int32),))
    (h,) = prof.race_hazards
    st = after("_Z11last_writerPi", "st.shared.u32")
    assert (h.kind, h.severity, h.count, h.first_line, h.second_line) == ("WAW", "error", 64, st, st)
    assert h.second_thread == (32, 0, 0) and h.first_thread[0] < 32 and h.offset == 0


def test_atomics_and_syncwarp_are_clean(module):
    # atomicAdd on h[] between two barriers: atomics do not race with each
    # other; the barriers order them against the plain stores and loads.
    data = np.arange(64, dtype=np.int32)
    out = np.zeros(4, np.int32)
    prof = run(module, "histogram", (2, 1, 1), (64, 1, 1), (data, out))
    assert prof.race_hazards == []
    np.testing.assert_array_equal(out, [16, 16, 16, 16])       # 64 values, 16 per residue
    # s[t ^ 1] read after __syncwarp: lanes of one warp, ordered.
    out = np.zeros(64, np.int32)
    prof = run(module, "warp_exchange", (1, 1, 1), (64, 1, 1), (data, out))
    assert prof.race_hazards == []
    np.testing.assert_array_equal(out, data ^ 1)


# ------------------------------------------------------- properties
def test_same_result_for_any_worker_count(module):
    a = np.ones(128 * 8, np.float32)
    runs = [run(module, "reduce_nosync", (8, 1, 1), (128, 1, 1), (a, np.zeros(8, np.float32)),
                threads=t) for t in (1, 2)]
    assert [h.__dict__ for h in runs[0].race_hazards] == [h.__dict__ for h in runs[1].race_hazards]
    assert sum(h.count for h in runs[0].race_hazards) == 8 * (32 + 31)


def test_counters_equal_unchecked_runs(module):
    # The check variant counts exactly what the default code counts, full and hybrid.
    a = np.arange(256, dtype=np.float32)
    k = next(x for x in module.kernels if "reduce_sync" in x.name)
    profs = {}
    for name, kw in (("check", dict(mode="full", check="all")), ("full", dict(mode="full")),
                     ("hybrid", dict(mode="hybrid"))):
        profs[name] = launch(module, k, (2, 1, 1), (128, 1, 1), (a, np.zeros(2, np.float32)), **kw)
    assert profs["check"].counters() == profs["full"].counters() == profs["hybrid"].counters()
    assert profs["check"].race_hazards == [] and profs["check"].sync_errors == []


def test_default_code_unchanged(module):
    # Without a check the generated LLVM IR has no hook.
    from ptxc.backends.llvm import jit
    k = next(x for x in module.kernels if "reverse_nosync" in x.name)
    plain = jit.compile_kernel(module, k, "full", 0, keep_ir=True)
    hooked = jit.compile_many(module, [k], "full", 1, keep_ir=True,
                              variants=frozenset({"racecheck", "synccheck"}))[0]
    assert "ptxc_race" not in plain.ir_text and "ptxc_sync" not in plain.ir_text
    assert "@ptxc_race(" in hooked.ir_text


def test_hybrid_refused(module):
    with pytest.raises(ptxc.PtxcError, match="racecheck needs a full run"):
        launch(module, module.kernels[0], (1, 1, 1), (64, 1, 1),
               (np.zeros(64, np.float32), np.zeros(64, np.float32)), check="racecheck")


def test_report_shape(module):
    text = launch_text("racecheck", reverse_nosync(module).race_hazards).splitlines()
    ld = line_of("ld.shared.f32 \t%f2, [%r8];")
    assert text[0] == "========= COMPUTE-SANITIZER (ptxc racecheck)"
    assert any(s.startswith("========= Error: Race reported between Write access at "
                            "_Z14reverse_nosyncPKfPf in ") for s in text)
    # racecheck.cu line 13 is out[t] = s[63 - t]; the .file table names the .cu
    assert f"=========     and Read access at _Z14reverse_nosyncPKfPf in {CU}:13 " \
           f"({PTX}:{ld}, ld.shared.f32) [32 hazards]" in text
    assert text[-2] == "========= RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)"
    assert text[-1] == "========= ERROR SUMMARY: 64 errors"


def test_opt_check_cli():
    from click.testing import CliRunner

    from ptxc.cli.main import cli
    base = ["opt", "--pass=count", "--kernel", "_Z14reverse_nosyncPKfPf", "--grid", "1",
            "--block", "64", "--arg", "0=arange:f32:64", "--arg", "1=zeros:f32:64", str(PTX)]
    r = CliRunner().invoke(cli, base + ["--check", "racecheck"])
    assert r.exit_code == 1, r.output
    assert "========= ERROR SUMMARY: 64 errors" in r.output
    r = CliRunner().invoke(cli, base + ["--check", "racecheck", "--mode", "hybrid"])
    assert r.exit_code == 2 and "needs --mode full" in r.output
    r = CliRunner().invoke(cli, base[:3] + ["_Z12reverse_syncPKfPf"] + base[4:] + ["--check", "all"])
    assert r.exit_code == 0, r.output
    assert "RACECHECK SUMMARY: 0 hazards" in r.output


def test_check_lists():
    from ptxc.launcher.checks import CHECKS, check_tools
    assert check_tools("racecheck+synccheck") == check_tools("racecheck,synccheck") == \
        ("racecheck", "synccheck")
    assert check_tools("all") == CHECKS and "racecheck" in CHECKS and "synccheck" in CHECKS
    assert check_tools(None) == ()


def test_a_failing_checker_is_an_error_not_a_silent_report(module, monkeypatch):
    # An exception inside the callback cannot cross the native frames; it is
    # kept and raised when the launch ends, so no report silently lacks hazards.
    from ptxc.backends.llvm.instruments import racecheck

    def broken(*a):
        raise ValueError("boom")
    monkeypatch.setattr(racecheck.RaceChecker, "access", broken)
    with pytest.raises(RuntimeError, match="a check callback failed"):
        reverse_nosync(module)
