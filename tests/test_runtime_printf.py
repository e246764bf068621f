"""Device printf, device faults and CUDA 12 applications under ``ptxc run``
(tests/cuda_apps/device_printf.cu, device_faults.cu; built with nvcc at
test time, skipped without it).

Expected text is computed here, independently of ptxc: the printf lines with
Python's ``%`` formatting of the values the kernel computes (with C's
``%#o`` and ``%a`` spelled out by hand, where Python differs from C), the
assertion lines from the GPU's format and the source line of the
``assert``, the error codes from the CUDA Runtime API's ``cudaError``
(cudaErrorAssert 710, cudaErrorLaunchFailure 719, cudaErrorIllegalAddress
700). Full and hybrid runs must print the same.
"""
import os
import shutil
import struct
import subprocess
import sys

import pytest

from ptxc.runtime import shim
from runtime_apps import APPS, AppBuilder, nvcc, run_ptxc


@pytest.fixture(scope="session")
def apps(tmp_path_factory):
    return AppBuilder(tmp_path_factory.mktemp("printf_apps"))


def c_hex(x: float, digits=None) -> str:
    """C's %a of a positive normal double (glibc): 0x1.<hex digits>p<exp>,
    trailing zeros dropped unless a precision is given (from float.hex)."""
    mant, exp = float.hex(x)[len("0x1."):].split("p")
    mant = mant.rstrip("0") if digits is None else mant[:digits]
    return f"0x1{'.' if mant else ''}{mant}p{int(exp):+d}"


def wrap(v: int, bits: int, signed: bool) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if signed and v >> (bits - 1) else v


def device_lines() -> list[str]:
    """The kernel's printf output in ptxc's documented order: CTA 0 then 1;
    within a CTA the first printf of every lane (lanes ascending), then
    lane 0's second printf. Thread (1,1) returns before printing."""
    out = []
    for b in range(2):
        for t in range(3):
            if (b, t) == (1, 1):
                continue
            g = b * 3 + t
            f, d = 0.5 + g, 1.25 * (g + 1)
            out.append(
                "[%d,%d] d=%d i=%+i u=%u x=%x X=%#X o=0%o c=%c f=%8.3f F=%F e=%.2e E=%E g=%g G=%G "
                "a=%s A=%s hd=%d hhu=%u ld=%d lld=%d llx=%x w=%-6d| z=%05d\n"
                % (b, t, -g, g, 4000000000 + g, 255 + g, 0xabc + g, 8 + g, ord("A") + g, f, d, d, -d,
                   d / 1000.0, d * 1e10, c_hex(d), c_hex(d, 3).upper(), wrap(70000 + g, 16, True),
                   wrap(300 + g, 8, False), -5000000000 * (g + 1), 123456789012 * g,
                   0xfeedfacecafe + g, g, g))
        out.append("ptxc (nil) %% %5d %.2f %10.2s|\n" % (b, 3.14159, "ptxc"))
    return out


def test_device_printf(apps):
    app = apps.build("device_printf")
    want = (["host before launch\n", "host after launch\n"] + device_lines()
            + ["sync: cudaSuccess\n"]
            # printf returns the number of arguments: 24 in the first printf; -100 marks (1,1)
            + ["ret[%d] = %d\n" % (i, -100 if i == 4 else 24) for i in range(6)])
    outs = {}
    for mode in ("full", "hybrid"):
        run = run_ptxc(app, mode=mode)
        assert run.returncode == 0, run.proc.stderr
        outs[mode] = run.proc.stdout
        assert run.proc.stdout == "".join(want)
    assert outs["full"] == outs["hybrid"]


def assertion_line(tid: int) -> str:
    src = os.path.join(APPS, "device_faults.cu")
    with open(src) as f:
        line = next(k for k, text in enumerate(f, 1) if "assert(gtid < N)" in text)
    return (f"{src}:{line}: void testKernel(int): block: [1,0,0], thread: [{tid},0,0] "
            f"Assertion `gtid < N` failed.")


def sticky(name: str, code: int) -> str:
    return "".join(f"{what}: {name} ({code})\n" for what in
                   ("sync", "malloc after", "second launch", "last error again", "sync again"))


@pytest.mark.parametrize("mode", ["full", "hybrid"])
def test_device_assert(apps, mode):
    """simpleAssert: N = 60 of 64 threads, so threads 28..31 of CTA 1 fail;
    the host gets cudaErrorAssert from cudaDeviceSynchronize and from every
    later call (sticky), and the launch itself returned cudaSuccess."""
    run = run_ptxc(apps.build("device_faults"), "assert", mode=mode)
    assert run.returncode == 0, run.proc.stderr
    assert run.proc.stdout == ("malloc: cudaSuccess (0)\nlaunch: cudaSuccess (0)\nhost after launch\n"
                               + sticky("cudaErrorAssert", 710))
    err = run.proc.stderr.splitlines()
    assert err[:4] == [assertion_line(t) for t in range(28, 32)]
    assert any(e.startswith("ptxc: ") and "CTA (1,0,0), thread (28,0,0)" in e for e in err)
    meta = {r["key"]: r["value"] for r in run.rows("SELECT * FROM meta")}
    assert meta["device_error"].startswith("cudaErrorAssert (710): kernel testKernel(int)")
    assert run.summary["launches"] == []          # the faulted launch has no counters


def test_device_trap(apps):
    """__trap() in thread 5 of CTA 1: cudaErrorLaunchFailure, sticky; the
    printf output of the launch (both CTAs printed before the trap) comes out
    at the synchronising call."""
    run = run_ptxc(apps.build("device_faults"), "trap", mode="full")
    assert run.returncode == 0, run.proc.stderr
    assert run.proc.stdout == ("malloc: cudaSuccess (0)\nlaunch: cudaSuccess (0)\nhost after launch\n"
                               "trapKernel block 0\ntrapKernel block 1\n"
                               + sticky("cudaErrorLaunchFailure", 719))
    assert "thread (5,0,0): trap" in run.proc.stderr


def test_out_of_bounds_on_error(apps):
    """A store one past the allocation: ptxc stops the run by default (exit
    1); with --on-error=cuda the application gets cudaErrorIllegalAddress."""
    app = apps.build("device_faults")
    stopped = run_ptxc(app, "oob")
    assert stopped.returncode == 1
    assert "out-of-bounds access" in stopped.proc.stderr
    # the text summary says where the run stopped, not "no kernel was launched"
    text = subprocess.run([sys.executable, "-m", "ptxc.cli", "run", "--", app, "oob"],
                          capture_output=True, text=True, timeout=300).stderr
    assert "no kernel was launched" not in text
    assert "the run stopped in kernel oobKernel(int*, int) (the error above); " \
        "no earlier launches completed" in text
    run = run_ptxc(app, "oob", options=("--on-error=cuda",))
    assert run.returncode == 0, run.proc.stderr
    assert run.proc.stdout.endswith("host after launch\n" + sticky("cudaErrorIllegalAddress", 700))
    strict = run_ptxc(app, "assert", options=("--on-error=stop",))
    assert strict.returncode == 1 and "device assertion failed" in strict.proc.stderr


def test_stopped_launch_keeps_its_printf(apps):
    """--on-error=stop ends the run at the trap of thread 5 of CTA 1. What
    the launch printed before (thread 0 of CTAs 0 and 1: "trapKernel block
    0", "... 1") is written to stdout before the application exits, after
    the host's own output ("malloc: ..."), as a GPU prints it at the next
    synchronising call; nothing after the launch runs. ptxc's diagnostic is
    on stderr."""
    run = run_ptxc(apps.build("device_faults"), "trap", options=("--on-error=stop",))
    assert run.returncode == 1
    assert run.proc.stdout == ("malloc: cudaSuccess (0)\n"
                               "trapKernel block 0\ntrapKernel block 1\n")
    assert "thread (5,0,0): trap" in run.proc.stderr


def link_cuda12(tmp_path, name: str, flags=()) -> str:
    """APP built from tests/cuda_apps/NAME.cu (nvcc ``flags`` too) linked
    against ptxc's CUDA 12 shim, which has soname and version node
    libcudart.so.12: the executable needs libcudart.so.12 and names that
    node, as one linked with CUDA 12."""
    if nvcc() is None:
        pytest.skip("needs nvcc")
    obj = tmp_path / f"{name}.o"
    subprocess.run([nvcc(), "-c", "-arch=sm_90", *flags, os.path.join(APPS, f"{name}.cu"), "-o",
                    str(obj)], check=True, capture_output=True)
    libdir = tmp_path / f"lib-{name}"
    libdir.mkdir()
    os.symlink(shim.library_path(12), libdir / "libcudart.so")
    app = tmp_path / f"{name}12"
    subprocess.run([shutil.which("g++") or "c++", str(obj), f"-L{libdir}", "-lcudart", "-o", str(app)],
                   check=True, capture_output=True)
    (libdir / "libcudart.so").unlink()
    dyn = subprocess.run(["readelf", "-dW", "--dyn-syms", str(app)], capture_output=True, text=True).stdout
    assert "[libcudart.so.12]" in dyn and "@libcudart.so.12" in dyn
    assert "libcudart.so.13" not in dyn
    return str(app)


def test_cuda12_application(tmp_path, apps):
    """A CUDA 12 application runs and prints what the CUDA 13 build of the
    same source prints."""
    app = link_cuda12(tmp_path, "device_printf")
    run = run_ptxc(app, mode="full")
    assert run.returncode == 0, run.proc.stderr
    assert run.proc.stdout == run_ptxc(apps.build("device_printf"), mode="full").proc.stdout


def test_cuda12_device_properties(tmp_path):
    """cudaGetDeviceProperties_v2 fills CUDA 12's cudaDeviceProp: the values
    are those of the H100 model (ptxc/gpus/devices.py), read at CUDA 12's
    offsets (clockRate and memoryClockRate exist only there);
    cudaRuntimeGetVersion says 12080 and cudaThreadSynchronize works."""
    from ptxc.gpus import devices as gpus
    g = gpus.model("h100")
    run = run_ptxc(link_cuda12(tmp_path, "cuda12_props"), mode="full")
    assert run.returncode == 0, run.proc.stderr
    assert run.proc.stdout == (
        f"props: cudaSuccess runtime=12080 name={g.name} cc={g.major}.{g.minor} sms={g.sm_count} "
        f"clock={g.clock_khz} memclock={g.mem_clock_khz} l2={g.l2_size} "
        f"blocks/sm={g.max_blocks_per_sm} optin={g.shared_per_block_optin} unifiedFunctionPointers=0\n"
        "hello from CUDA 12 block 0\nhello from CUDA 12 block 1\nsync: cudaSuccess\n")
