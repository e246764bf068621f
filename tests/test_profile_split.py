"""`ptxc profile FILE` with every kernel's work in forked processes
(ptxc/profile/split.py, ptxc/frontend/entry_scan.py) gives the one-process output.

Kernels: tests/cuda/launch_infer.cu (9 kernels; nvcc 13, ``nvcc -ptx
-arch=sm_90 -O3 launch_infer.cu -o launch_infer.sm90.ptx``, see
tests/cuda/README.md). In a full run with 4-float buffers for scale_lt its
rows are of every kind: scale_lt an error (thread 4 reads past the 16-byte
buffer), unroll4 / wide64 / signed_idx inferred launches, param_bound not
launched (its bound is a parameter), grid_stride / store_first / two_d /
no_reqntid one-CTA rows (test_module_profile.py derives their launches and
counters by hand). Here the split run's output must be the one-process run's
in every format, byte for byte but for the times, also when a child dies.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ptxc.frontend.entry_scan import blanked, scan_entries

HERE = Path(__file__).resolve().parent
INFER_PTX = HERE / "cuda" / "launch_infer.sm90.ptx"
KERNELS = ["scale_lt", "unroll4", "wide64", "signed_idx", "param_bound", "grid_stride",
           "store_first", "two_d", "no_reqntid"]          # the .entry order of the file
FULL = ["--mode", "full", "--arg", "scale_lt:0=zeros:f32:4", "--arg", "scale_lt:1=zeros:f32:4"]


# ------------------------------------------------------------ the scan
def test_scan_finds_every_entry_and_blanking_keeps_lines_and_columns():
    text = INFER_PTX.read_text()
    entries = scan_entries(text)
    assert [e.name for e in entries] == KERNELS
    for e in entries:                      # a span is the whole function, from its line start
        assert text[e.start:e.end].lstrip().startswith(".visible .entry " + e.name + "(")
        assert text[e.end - 1] == "}"
        assert e.cost == text.count(";", text.index("{", e.start), e.end)
    out = blanked(text, entries, {"wide64"}).split("\n")
    lines = text.split("\n")
    assert len(out) == len(lines)

    def line_range(e):
        return range(text.count("\n", 0, e.start), text.count("\n", 0, e.end) + 1)

    kept = set(line_range(entries[2]))
    blank = {i for e in entries[:2] + entries[3:] for i in line_range(e)}
    for i, (got, was) in enumerate(zip(out, lines)):
        if i in blank and i not in kept:
            assert got.strip() == "", i
        else:                               # header, the kept kernel, what is between
            assert got == was, i


@pytest.mark.parametrize("text", [
    ".version 8.0\n.target sm_90\n.address_size 64\n.func f()\n{\nret;\n}\n"
    ".entry k()\n{\nret;\n}\n",                             # a .func with a body: shared slices
    ".version 8.0\n.entry k();\n",                           # an entry without a body
    ".version 8.0\n.entry k()\n{\nret;\n",                  # unbalanced braces
    ".version 8.0\n.global .u32 x; .entry k()\n{\nret;\n}\n",   # not at the start of its line
])
def test_scan_refuses_what_the_split_cannot_share(text):
    assert scan_entries(text) is None


def test_scan_skips_braces_in_comments_and_keeps_func_declarations():
    text = (".version 8.0\n.target sm_90\n.address_size 64\n// {\n/* } { */\n"
            ".extern .func (.param .b32 r) g(.param .b32 a);\n"
            ".visible .entry k()\n{\n// }\nret;\n}\n.weak .entry j()\n{\n{\nret;\n}\n}\n")
    assert [e.name for e in scan_entries(text)] == ["k", "j"]


# ------------------------------------------------------ whole outputs
# Runs `ptxc profile` as the program (so that it may fork) with MIN_SHARE = 1,
# counting the split's forks; CHILD_DIES kills every child before it answers.
SPLIT = """
import os, signal, sys
import ptxc.cli.main, ptxc.profile.split as ps
ps.MIN_SHARE = 1
forks = []
fork = ps._fork
def spy(*a):
    forks.append(1)
    return fork(*a)
ps._fork = spy
if os.environ.get("CHILD_DIES"):
    parent, run = os.getpid(), ps.run_share
    def dying(*a):
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return run(*a)
    ps.run_share = dying
import atexit
atexit.register(lambda: print("split forks:", len(forks), file=sys.stderr))
sys.argv = ["ptxc", "profile", *sys.argv[1:]]
ptxc.cli.main.main()
"""


def profile_output(fmt: str, *args, **env) -> tuple[str, int, int]:
    """(stdout without the times, exit status, the split's forks)."""
    full = dict(os.environ, PTXC_CACHE="0", **env)
    r = subprocess.run([sys.executable, "-c", SPLIT, f"--format={fmt}", *args, str(INFER_PTX)],
                       capture_output=True, text=True, env=full)
    assert r.returncode in (0, 1), r.stderr
    return untimed(fmt, r.stdout), r.returncode, int(r.stderr.rsplit("split forks:", 1)[1])


def untimed(fmt: str, out: str) -> str:
    if fmt == "json":
        d = json.loads(out)
        d.pop("timings")
        for k in d["kernels"]:
            k.pop("seconds", None)
        return json.dumps(d, indent=1)
    if fmt == "csv":
        import csv
        import io
        rows = list(csv.DictReader(io.StringIO(out)))
        for r in rows:
            r.pop("duration_ms")
        return json.dumps(rows, indent=1)
    lines = [ln for ln in out.splitlines() if not ln.startswith("time: ")]
    return "\n".join(ln.rsplit(None, 1)[0] if timed_cell(ln) else ln for ln in lines)


def timed_cell(line: str) -> bool:
    """A text table line that ends with the ms column (its header, a row that ran, the total)."""
    if line[:1] == " " or not line.strip():
        return False
    last = line.split()[-1]
    return line.startswith("kernel ") and last == "ms" or (last[:1].isdigit() and "." in last)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork is used on Linux only")
@pytest.mark.parametrize("fmt", ["json", "csv", "text"])
def test_split_run_gives_the_one_process_output(fmt):
    one, code1, forks1 = profile_output(fmt, "-j1", *FULL)
    assert forks1 == 0 and code1 == 1                      # scale_lt failed
    split, code3, forks3 = profile_output(fmt, "-j3", *FULL)
    assert forks3 == 2 and code3 == 1                      # two children, the parent's share
    assert split == one
    if fmt == "json":                                      # every kind of row is in it
        d = json.loads(one)
        kinds = {k["kernel"]: (k["status"], k["launch"]["source"]) for k in d["kernels"]}
        assert [k["kernel"] for k in d["kernels"]] == KERNELS
        assert kinds["scale_lt"][0] == "error" and kinds["param_bound"][0] == "not launched"
        assert kinds["unroll4"] == ("ran", "inferred")
        assert kinds["two_d"] == ("ran", "one CTA: grid unknown")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork is used on Linux only")
def test_a_dead_child_leaves_its_kernels_to_the_one_process_path():
    one, _, _ = profile_output("json", "-j1", *FULL)
    got, code, forks = profile_output("json", "-j3", *FULL, CHILD_DIES="1")
    assert forks == 2 and code == 1 and got == one         # every kernel still has its row


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork is used on Linux only")
def test_kernel_option_and_hybrid_rows_match():
    args = ("--kernel", "unroll4", "--kernel", "two_d", "--kernel", "grid_stride")
    one, _, _ = profile_output("csv", "-j1", *args)
    split, _, forks = profile_output("csv", "-j2", *args)
    assert forks == 1 and split == one
    rows = json.loads(split)
    # three rows and the total; the count pass's module total counts all 9 kernels
    assert [r["kernel"] for r in rows] == ["unroll4", "grid_stride", "two_d", "(module total)"]
    assert {r["kernels"] for r in rows} == {"9"}


def test_shares_balance_cost_and_keep_module_order():
    from ptxc.frontend.entry_scan import Entry
    from ptxc.profile.split import share_by_cost
    entries = [Entry(n, 0, 0, c) for n, c in zip("abcde", [10, 50, 20, 30, 40])]
    shares = share_by_cost(entries, 2, set("abcde"))
    # longest first to the least loaded (cost + 1 each; a tie goes to the first share):
    # b(51)->0, e(41)->1, d(31)->1 (41 < 51), c(21)->0 (51 < 72), a(11)->0 (72 = 72):
    # loads 83 and 72, each share in module order
    assert [[e.name for e in s] for s in shares] == [["a", "b", "c"], ["d", "e"]]
