"""memcheck and initcheck name the user's source line of an inlined access
first, then the lines it was inlined from (the ``.loc ... inlined_at``
chain: ptxc/ir/source_lines.py): an out-of-bounds ``atomicAdd`` is at
``inlined_atomic.cu:9 > .../device_atomic_functions.hpp:107``, not at the
header's line alone. tests/cuda/inlined_atomic.cu, compiled with
``nvcc -ptx -arch=sm_90 -O3 -lineinfo`` (its .loc for the atom is
``.loc 2 107 3, function_name ..., inlined_at 1 9 9``)."""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

import ptxc
from ptxc.backends.llvm.instruments.initcheck import Shadow
from ptxc.check.initcheck import sanitizer_text as init_text
from ptxc.check.memcheck import sanitizer_text
from ptxc.launcher.api import launch_segments

PTX = Path(__file__).parent / "cuda" / "inlined_atomic.sm90.lineinfo.ptx"
SRC = (Path(__file__).parent / "cuda" / "inlined_atomic.cu").read_text().splitlines()
USER_LINE = next(i + 1 for i, s in enumerate(SRC) if "// @atomic" in s)     # 9
HEADER = "device_atomic_functions.hpp:107"


def test_memcheck_names_the_call_site_then_the_header():
    # 8 threads, keys 0..7 into a 4-int histogram: keys 4..7 miss it, 4 errors.
    m = ptxc.load(str(PTX))
    hist, keys = np.zeros(4, np.int32), np.arange(8, dtype=np.int32)
    prof = ptxc.launch(m, "count", 1, 8, [hist, keys, 8], mode="full", check="memcheck")
    assert prof.mem_error_count == 4
    [e] = prof.mem_errors
    assert (e.kind, e.error, e.thread) == ("atomic", "out-of-bounds", (4, 0, 0))
    assert e.source.endswith(f"inlined_atomic.cu:{USER_LINE}")
    assert e.inlined.endswith(HEADER) and " > " not in e.inlined
    text = sanitizer_text(prof.mem_errors, prof.mem_error_count)
    assert f"inlined_atomic.cu:{USER_LINE} > /" in text
    assert f"{HEADER} (" in text and "inlined_atomic.sm90.lineinfo.ptx:52, atom.global.add.u32)" in text
    assert list(hist) == [1, 1, 1, 1]


def test_initcheck_names_the_call_site_then_the_header():
    # hist never written: the first atomic of each of the 4 bins reads
    # unwritten bytes (and writes them): 4 reads, threads 0..3.
    m = ptxc.load(str(PTX))
    HIST, KEYS = 6, 7
    shadow = Shadow()
    segs = {HIST: np.zeros(16, np.uint8), KEYS: np.arange(4, dtype=np.int32).view(np.uint8).copy()}
    shadow.track(HIST, 16)
    params = struct.pack("<QQi", HIST << 32, KEYS << 32, 4)
    prof = launch_segments(m, "count", (1, 1, 1), (4, 1, 1), params, segs, mode="full",
                           check="initcheck", shadow=shadow)
    assert prof.init_error_count == 4
    [e] = prof.init_errors
    assert e.source.endswith(f"inlined_atomic.cu:{USER_LINE}") and e.inlined.endswith(HEADER)
    assert f"inlined_atomic.cu:{USER_LINE} > /" in init_text(prof.init_errors, prof.init_error_count)


def test_code_that_was_not_inlined_has_no_chain():
    # The load of keys[i] (line 9 too, not inlined) is the user's own code.
    from ptxc.launcher.access_errors import inlined_lines, source_line
    m = ptxc.load(str(PTX))
    fn = m.function("count")
    ld = next(i for b in fn.blocks for i in b.instrs if i.full_opcode.startswith("ld.global"))
    atom = next(i for b in fn.blocks for i in b.instrs if i.opcode == "atom")
    assert source_line(m, ld).endswith(f"inlined_atomic.cu:{USER_LINE}") and inlined_lines(m, ld) == ""
    assert source_line(m, atom).endswith(HEADER)                     # the innermost line
    assert source_line(m, atom, outermost=True).endswith(f"inlined_atomic.cu:{USER_LINE}")
