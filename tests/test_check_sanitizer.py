"""`ptxc check` behaves as compute-sanitizer does for its application
(issue 26, item 9): a launch with an invalid access fails with the sticky
cudaErrorLaunchFailure (`--on-error=abort`, the default; `continue` goes
on), `--leak-check full`, `--print-limit`, `--kernel-name` /
`--kernel-name-exclude` and `--error-exitcode`. docs/check.md.

tests/cuda_apps/sanitizer_app.cu (built with nvcc at test time; skipped
without it), counted by hand:

* abort: fill<<<3, 100>>>(d, 256) with `if (i <= n) p[i] = i`: threads
  0..299 and i = 256 (thread 56 of CTA 2) writes d[256], right after the
  end of the 1024-byte allocation #1: 1 error. Under abort the
  application's cudaGetLastError after the launch is cudaSuccess (a launch
  is asynchronous), cudaDeviceSynchronize, the next launch and the copy
  back return cudaErrorLaunchFailure, and d[0..2] keep the host's -1 (the
  copy did not happen). Under continue everything succeeds and d[i] = 2i.
* leak: cudaMalloc 100, 200 (freed), 300 bytes, cudaMallocPitch of 3 rows of
  100 bytes (pitch 512: 1536 bytes), cudaMallocManaged 64 bytes,
  cudaMallocHost 128 bytes (host memory, not a leak): 4 leaks, 2000 bytes,
  allocations #1, #3, #4, #5.
* filters: a_bad then b_bad, each on one CTA of 32 threads reading
  p[threadIdx.x + 1] of a 32-int buffer: lane 31 reads p[32], 1 error each.

The unit tests of the filter syntax need no nvcc.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from ptxc.check import filters
from ptxc.check.leaks import Frame, _symbols, short_backtrace

from runtime_apps import TIMEOUT, AppBuilder

P = "========= "
ABORTED = ("launch: cudaSuccess\nsync: cudaErrorLaunchFailure\nnext launch: cudaErrorLaunchFailure\n"
           "copy: cudaErrorLaunchFailure\nd[0..2] = -1 -1 -1\n")
CONTINUED = ("launch: cudaSuccess\nsync: cudaSuccess\nnext launch: cudaSuccess\n"
             "copy: cudaSuccess\nd[0..2] = 0 2 4\n")
FILL_BLOCK = [P + "Invalid __global__ write of size 4 bytes",
              P + "    by thread (56,0,0) in block (2,0,0)",
              P + "    Address 0x600000400 is out of bounds",
              P + "    and is right after the end of allocation #1 (cudaMalloc 1024 bytes at "
                  "0x600000000)",
              P + "    1 time in this launch (first occurrence shown)"]


# ------------------------------------------------------------ filters (no nvcc)
@pytest.mark.parametrize("spec,kernel,readable,match", [
    ("kne=_Z4fillPii", "_Z4fillPii", "fill(int*, int)", True),
    ("kernel_name=fill(int*, int)", "_Z4fillPii", "fill(int*, int)", True),
    ("kne=fill", "_Z4fillPii", "fill(int*, int)", False),
    ("kns=fill", "_Z4fillPii", "fill(int*, int)", True),
    ("kernel_substring=fil,kns=Pii", "_Z4fillPii", "fill(int*, int)", True),
    ("kns=fill,kns=xyz", "_Z4fillPii", "fill(int*, int)", False),
    ("regex=^_Z[0-9]+f", "_Z4fillPii", "fill(int*, int)", True),
    ("regex=[a-z]{7}", "_Z4fillPii", "fill(int*, int)", False),
    ("regex=l{2},P", "_Z4fillPii", "fill(int*, int)", False),     # the comma is the regex's
])
def test_filter_syntax(spec, kernel, readable, match):
    assert filters.parse(spec).matches(kernel, readable) is match


@pytest.mark.parametrize("spec,message", [
    ("fill", "'fill' is not key=value (keys: kne, kns, regex, kernel_name, kernel_substring)"),
    ("name=fill", "unknown key 'name' (keys: kne, kns, regex, kernel_name, kernel_substring)"),
    ("kns=", "'kns=' has no value"),
    ("regex=(", "regex '(': missing ), unterminated subpattern at position 0"),
])
def test_bad_filters(spec, message):
    with pytest.raises(ValueError) as e:
        filters.parse(spec)
    assert str(e.value) == message


def test_include_and_exclude():
    keep = filters.KernelFilter(["kns=bad"], ["kne=_Z5b_badPKiPi"])
    assert keep("_Z5a_badPKiPi") and not keep("_Z5b_badPKiPi") and not keep("_Z4fillPii")
    assert filters.KernelFilter()("_Z4fillPii") and not filters.KernelFilter()


def test_bad_filter_is_a_usage_error():
    r = subprocess.run([sys.executable, "-m", "ptxc.cli", "check", "--kernel-name", "fill", "--",
                        "./app"], capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 2
    assert r.stderr.splitlines()[-1] == ("Error: --kernel-name: 'fill' is not key=value (keys: "
                                         "kne, kns, regex, kernel_name, kernel_substring)")


def test_short_backtrace_leaves_out_runtime_wrappers():
    frames = [Frame("app", 1, "cudaError cudaMalloc<float>(float**, unsigned long)",
                    "/usr/local/cuda/include/cuda_runtime.h", 879),
              Frame("app", 2, "make_buffers()"), Frame("app", 3, "main", "app.cu", 7),
              Frame("libc.so.6", 4, "__libc_start_call_main")]
    assert [f.function for f in short_backtrace(frames)] == ["make_buffers()", "main"]
    assert frames[2].text() == "Host Frame: main in app.cu:7 [0x3] in app"
    assert frames[1].text() == "Host Frame: make_buffers() [0x2] in app"
    assert Frame("/lib/libx.so", 0x1f).text() == "Host Frame: [0x1f] in libx.so"


# ------------------------------------------------------------ the application
@pytest.fixture(scope="module")
def app(tmp_path_factory):
    return AppBuilder(tmp_path_factory.mktemp("sanitizer_app")).build(
        "sanitizer_app", flags=("-cudart", "shared", "-arch=sm_90", "-g"))


def check(app, *options, mode="abort"):
    out = os.path.join(os.path.dirname(app), "report.txt")
    proc = subprocess.run([sys.executable, "-m", "ptxc.cli", "check", *options, "-o", out, "--",
                           app, mode], capture_output=True, text=True, timeout=TIMEOUT,
                          cwd=os.path.dirname(app))
    with open(out) as f:
        return proc, f.read().splitlines()


def test_abort_is_what_the_application_sees_under_compute_sanitizer(app):
    proc, report = check(app)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == ABORTED
    assert proc.stderr == ""                          # nothing on the application's stderr
    assert report[0] == "========= COMPUTE-SANITIZER (ptxc memcheck)"
    assert [report[1]] + report[3:7] == FILL_BLOCK
    # built without -lineinfo: the PTX line (ptxc's demangler names the kernel)
    assert re.fullmatch(re.escape(P + "    at fill(int*, int) in line ") + r"\d+"
                        + re.escape(" of the PTX of fatbin1 (st.global.u32)"), report[2])
    assert report[8] in (
        P + "Kernel launch 1 (fill(int*, int)) aborted after its invalid accesses: the application "
        "gets cudaErrorLaunchFailure (error 719, \"unspecified launch failure\") from its next "
        "synchronising call on",
        P + "Kernel launch 1 (_Z4fillPii) aborted after its invalid accesses: the application "
        "gets cudaErrorLaunchFailure (error 719, \"unspecified launch failure\") from its next "
        "synchronising call on")
    assert report[-1] == P + "ERROR SUMMARY: 1 error"


def test_continue_goes_on(app):
    proc, report = check(app, "--on-error", "continue")
    assert proc.returncode == 1 and proc.stdout == CONTINUED
    assert [report[1]] + report[3:7] == FILL_BLOCK
    assert not any("aborted" in line for line in report)
    assert report[-1] == P + "ERROR SUMMARY: 1 error"


def test_abort_json(app):
    proc, _ = check(app, "--format", "json")
    doc = json.loads(open(os.path.join(os.path.dirname(app), "report.txt")).read())
    assert doc["error_count"] == 1 and [e["count"] for e in doc["errors"]] == [1]
    assert [(f["code"], f["message"]) for f in doc["device_faults"]] == [
        (719, "launch 1 of kernel _Z4fillPii aborted after 1 invalid memory access (memcheck)")]
    assert doc["meta"]["device_error"] == ("cudaErrorLaunchFailure (719): launch 1 of kernel "
                                           "_Z4fillPii aborted after 1 invalid memory access "
                                           "(memcheck)")


def test_on_error_without_memcheck_is_refused(app):
    proc = subprocess.run([sys.executable, "-m", "ptxc.cli", "check", "--tool", "racecheck",
                           "--on-error", "continue", "--", app], capture_output=True, text=True,
                          timeout=TIMEOUT)
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == ("Error: --on-error=continue is memcheck's: add "
                                            "--tool memcheck or --tool all")


def test_error_exitcode(app):
    assert check(app)[0].returncode == 1                              # ptxc's default
    assert check(app, "--error-exitcode", "7")[0].returncode == 7
    assert check(app, "--error-exitcode", "0")[0].returncode == 0    # compute-sanitizer's default
    # the application failed (exit 3): its status, as compute-sanitizer does
    assert check(app, "--error-exitcode", "7", mode="fail")[0].returncode == 3
    # no error: the application's status
    assert check(app, "--error-exitcode", "7", mode="leak")[0].returncode == 0


def leak_frames(report, i):
    """The Host Frame lines of the block starting at line i."""
    frames = []
    for line in report[i + 3:]:
        if not line.startswith(P + "        Host Frame: "):
            break
        frames.append(line[len(P) + 8:])
    return frames


def test_leak_check(app):
    proc, report = check(app, "--leak-check", "full", mode="leak")
    assert proc.returncode == 1 and proc.stdout == "pitch 512\n"
    starts = [i for i, line in enumerate(report) if line.startswith(P + "Leaked ")]
    assert [report[i] for i in starts] == [P + "Leaked 100 bytes at 0x600000000",
                                           P + "Leaked 300 bytes at 0x800000000",
                                           P + "Leaked 1,536 bytes at 0x900000000",
                                           P + "Leaked 64 bytes at 0xa00000000"]
    assert [report[i + 1] for i in starts] == [P + "    allocation #1, made by cudaMalloc",
                                               P + "    allocation #3, made by cudaMalloc",
                                               P + "    allocation #4, made by cudaMallocPitch",
                                               P + "    allocation #5, made by cudaMallocManaged"]
    assert all(report[i + 2] == P + "    Saved host backtrace up to driver entry point at "
                                    "allocation time" for i in starts)
    for i in starts:                  # leak_mode() called by main (nvcc -g: with lines)
        frames = leak_frames(report, i)
        assert [f.split(" [0x")[0].split(" in ")[0] for f in frames] == \
            ["Host Frame: leak_mode()", "Host Frame: main"], frames
        assert all(f.endswith("] in sanitizer_app") for f in frames)
    assert report[-2:] == [P + "LEAK SUMMARY: 2000 bytes leaked in 4 allocations",
                           P + "ERROR SUMMARY: 4 errors"]
    _, report = check(app, mode="leak")                       # not asked for: no leak report
    assert report == ["========= COMPUTE-SANITIZER (ptxc memcheck)", P + "ERROR SUMMARY: 0 errors"]


def test_leak_check_json_and_symbols_without_addr2line(app):
    proc, _ = check(app, "--leak-check", "full", "--format", "json", mode="leak")
    doc = json.loads(open(os.path.join(os.path.dirname(app), "report.txt")).read())
    assert doc["error_count"] == 4 and doc["leak_bytes"] == 2000
    assert [(x["allocation"], x["size"], x["call"]) for x in doc["leaks"]] == [
        (1, 100, "cudaMalloc"), (3, 300, "cudaMalloc"), (4, 1536, "cudaMallocPitch"),
        (5, 64, "cudaMallocManaged")]
    frame = doc["leaks"][0]["frames"][0]
    assert frame["function"] == "leak_mode()" and frame["line"] > 0
    assert frame["file"].endswith("sanitizer_app.cu")
    # the symbol table names the same function when addr2line is missing
    bare = [Frame(app, f["offset"]) for f in doc["leaks"][0]["frames"]]
    _symbols(app, bare)
    assert [f.function for f in bare] == ["leak_mode()", "main"]


def test_print_limit(app):
    # filters mode under continue: 2 blocks (a_bad's and b_bad's error)
    _, full = check(app, "--on-error", "continue", mode="filters")
    assert full[-1] == P + "ERROR SUMMARY: 2 errors"
    _, report = check(app, "--on-error", "continue", "--print-limit", "1", mode="filters")
    assert report[:8] == full[:8]                         # the first block
    assert report[8:] == [P + "Print limit reached (--print-limit 1): 1 more error report not "
                              "shown", "=========", P + "ERROR SUMMARY: 2 errors"]
    assert check(app, "--on-error", "continue", "--print-limit", "0", mode="filters")[1] == full


def kernels_in(report) -> list[str]:
    """The kernel of each memcheck block ('a' or 'b'), and 'fault x' for a
    kernel that was not checked."""
    out = []
    for i, line in enumerate(report):
        if line == P + "Invalid __global__ read of size 4 bytes":
            out.append("a" if "a_bad" in report[i + 1] else "b")
        elif line.startswith(P + "Invalid memory access in a kernel not checked (--kernel-name) "
                                 "(cudaErrorIllegalAddress, error 700)"):
            out.append("fault " + ("a" if "a_bad" in report[i + 1] else "b"))
    return out


@pytest.mark.parametrize("options,kernels,errors,sync", [
    ((), ["a", "b"], 2, "cudaSuccess"),
    (("--kernel-name", "kns=a_bad"), ["a", "fault b"], 2, "cudaErrorIllegalAddress"),
    (("--kernel-name-exclude", "kne=_Z5b_badPKiPi"), ["a", "fault b"], 2,
     "cudaErrorIllegalAddress"),
    (("--kernel-regex", "kns=b_bad"), ["fault a"], 1, "cudaErrorIllegalAddress"),
    (("--kernel-name", "regex=^_Z5[ab]_bad"), ["a", "b"], 2, "cudaSuccess"),
    (("--kernel-name", "kns=a_bad", "--kernel-name", "kns=b_bad"), ["a", "b"], 2, "cudaSuccess"),
])
def test_kernel_filters(app, options, kernels, errors, sync):
    # a kernel left out runs unchecked: its bad access is the CUDA error a
    # GPU gives (cudaErrorIllegalAddress, sticky: b_bad does not run after
    # a_bad's), reported as such and counted once
    proc, report = check(app, "--on-error", "continue", *options, mode="filters")
    assert proc.stdout == f"sync: {sync}\n"
    assert kernels_in(report) == kernels
    assert report[-1] == P + f"ERROR SUMMARY: {errors} error{'s' if errors > 1 else ''}"
