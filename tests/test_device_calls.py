"""Device printf and assert in the executor (ptxc.launch; docs/launch.md).

tests/cuda/device_calls.cu, compiled by tests/cuda/build.sh
(``nvcc -ptx -arch=sm_90 -O3``). The expected lines are written out here by
hand from the kernel source, in the order docs/launch.md documents: CTAs in
linear order; within a CTA warp 0 runs to its end before warp 1 (no
barrier); within a warp the calls in SIMT order (the first printf for every
lane, then the loop's first iteration for the lanes still in it, then its
second), lanes ascending. Hybrid and full runs print the same.
"""
from pathlib import Path

import numpy as np
import pytest

import ptxc
from ptxc.errors import PtxcError

PTX = Path(__file__).parent / "cuda" / "device_calls.sm90.ptx"


@pytest.fixture(scope="module")
def module():
    return ptxc.load(str(PTX))


def cstring(text: bytes) -> np.ndarray:
    return np.frombuffer(text + b"\0", dtype=np.uint8).copy()


def expected_prints(nblocks: int, nthreads: int, x: float) -> list[str]:
    out = []
    for b in range(nblocks):
        for w0 in range(0, nthreads, 32):
            lanes = range(w0, min(w0 + 32, nthreads))
            out += ["dev b=%d t=%02d x=%.3f %d\n" % (b, t, x * t, b << 40 | t) for t in lanes]
            for i in range(2):        # loop iteration i runs for odd t with t % 3 > i
                out += ["odd %d.%d i=%d\n" % (b, t, i) for t in lanes if t & 1 and t % 3 > i]
    return out


@pytest.mark.parametrize("mode", ["full", "hybrid"])
def test_printf_records(module, mode):
    ret = np.zeros(80, np.int32)
    prof = ptxc.launch(module, "prints", (2, 1, 1), (40, 1, 1), [ret, cstring(b"dev"), 0.5],
                       mode=mode, threads=2)
    assert prof.printf == expected_prints(2, 40, 0.5)
    if mode == "full":
        assert (ret == 5).all()          # printf returns its number of arguments: 5
    assert prof.cta_equivalence.startswith("off")


def test_printf_count_report(tmp_path):
    """`ptxc opt --pass=count` with a launch prints the records after its report."""
    from click.testing import CliRunner

    from ptxc.cli.main import cli
    res = CliRunner().invoke(cli, ["opt", "--pass=count", "--kernel", "prints", "--grid", "1",
                                    "--block", "3", "--arg", "0=zeros:s32:3", "--arg", "1=zeros:u8:4",
                                    "--arg", "2=2.0", str(PTX)])
    assert res.exit_code == 0, res.output
    # the name buffer is zeros: "%s" of an empty string
    want = " b=0 t=00 x=0.000 0\n b=0 t=01 x=2.000 1\n b=0 t=02 x=4.000 2\nodd 0.1 i=0\n"
    assert res.output.endswith("--- device printf output of prints (4 records) ---\n" + want)


@pytest.mark.parametrize("mode", ["full", "hybrid"])
def test_assert(module, mode):
    """n = 50 with 2 x 32 threads: threads 18..31 of CTA 1 fail; the error
    quotes the GPU's line of the first, carries every failing lane's line,
    and the printf records of both CTAs (every lane printed before the
    assert)."""
    with pytest.raises(PtxcError) as info:
        ptxc.launch(module, "checks", (2, 1, 1), (32, 1, 1), [50], mode=mode)
    err = info.value
    line = next(k for k, t in enumerate((PTX.parent / "device_calls.cu").read_text().splitlines(), 1)
                if "assert(g < n)" in t)
    want = [f"device_calls.cu:{line}: void checks(int): block: [1,0,0], thread: [{t},0,0] "
            f"Assertion `g < n` failed.\n" for t in range(18, 32)]
    assert err.assertions == want
    assert "CTA (1,0,0), thread (18,0,0): device assertion failed" in err.message
    assert want[0].strip() in err.message
    assert err.printf == ["check %d\n" % g for g in range(64)]


def test_passing_assert(module):
    prof = ptxc.launch(module, "checks", (2, 1, 1), (32, 1, 1), [64], mode="full")
    assert len(prof.printf) == 64


def test_format_from_buffer_and_wild_pointer(module):
    prof = ptxc.launch(module, "wild", 1, 2, [cstring(b"v=%d|"), 7], mode="full")
    assert prof.printf == ["v=7|", "v=7|"]
    with pytest.raises(PtxcError) as info:
        ptxc.launch(module, "wild", 1, 2, [0x1234, 7], mode="full")
    assert "out-of-bounds access" in info.value.message and "0x1234" in info.value.message
    with pytest.raises(PtxcError) as info:     # a format without its terminating NUL
        ptxc.launch(module, "wild", 1, 1, [np.frombuffer(b"abc", np.uint8).copy(), 7], mode="full")
    assert "out-of-bounds access" in info.value.message
