"""Luo & Suda's parameters, ``ptxc calibrate`` and its micro-benchmarks, without a GPU.

* The GPU data: the GTX 260 has every value of the paper (Table 1, a-d,
  m, t_mem, Table 2), every model every name with a source; the fallback
  rule for opcodes Table 1 lacks.
* The micro-benchmarks (ptxc/predict/microbench): the two kernels of each
  Table 1 pair differ by exactly the one measured instruction, every kernel
  parses and runs under ptxc and computes what its docstring says (checked
  against a Python model of its loop), ptxas assembles them and keeps the
  measured instruction (the test kernel has more SASS instructions).
* The CPD fit recovers the parameters that generated noise-free data.
* calibrate end to end on a simulated GPU: its JSON file round-trips through
  ``--params``.
"""
from __future__ import annotations

import difflib
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

import ptxc
from ptxc.cli.main import cli
from ptxc.errors import PtxcError
from ptxc.gpus.architecture import gpu
from ptxc.gpus import luo_suda_params as lsp
from ptxc.predict import cpd_fit
from ptxc.predict.calibrate import blocks_for, calibrate, chase_chain, write
from ptxc.predict.microbench import cpd, kernel as kmod, table1
from ptxc.predict.params import FALLBACK_ROW, ModelParams, default_params, load_params

HERE = os.path.dirname(os.path.abspath(__file__))
TOPDOWN_PTX = os.path.join(HERE, "cuda", "topdown.sm90.ptx")


# --- the parameters -----------------------------------------------------------

def test_gtx260_is_the_paper():
    p = default_params("gtx260")
    # Table 1, every row and kind; ld/st 200.
    assert [[p.cost(r, k) for k in lsp.KINDS] for r in lsp.ROWS] == [
        [22, 65, 22, 65], [22, 65, 22, 65], [44, 136, 22, 65], [728, 753, 748, 783],
        [22, 22, 17, 17], [62, 62, 62, 62], [62, 62, 62, 62], [64, 64, 64, 64],
        [62, 62, 62, 62], [62, 62, 62, 62], [22, 22, 22, 22]]
    assert p.values["cost.ld_st"] == p.t_mem == 200
    # Section 3.4, section 4.2, Table 2.
    assert (p.a, p.b, p.c, p.d, p.m) == (3, 11, 0.5, 80, 32)
    assert (p.n_sm, p.clock_mhz) == (24, 1242)
    # 111.9 GB/s in bytes per 1242 MHz clock: 111.9e9 / 1242e6 = 90.0966
    assert p.gpu_bwt == pytest.approx(111.9e9 / 1242e6, rel=1e-6)
    assert "Table 1" in p.sources["cost.div.float_reg"]
    assert "section 3.4" in p.sources["d"] and "section 4.2" in p.sources["m"]
    assert "Table 1" in p.sources["t_mem"]


def test_gtx260_device_is_table2():
    g, t2 = gpu("gtx260"), lsp.GTX260_TABLE2
    assert (g.sm_count, g.clock_mhz, g.mem_bandwidth_gbs) == \
        (t2["sms"], t2["processor_clock_mhz"], t2["bandwidth_gbs"])
    assert g.sm_count * g.fp32_per_sm == t2["sps"] == 192
    # 192 SPs x 1242 MHz x 3 flops per clock (dual-issued MAD + MUL) = 715.4 Gflop/s
    assert round(t2["sps"] * g.clock_mhz * 3 / 1000) == t2["peak_gflops"]
    assert all("Table 2" in g.source(f) for f in ("sm_count", "clock_mhz", "mem_bandwidth_gbs"))


@pytest.mark.parametrize("key", lsp.MODELS)
def test_every_model_has_every_name(key):
    table = lsp.luo_suda(key)
    names = set(lsp.SCALARS) | {f"cost.{r}.{k}" for r in lsp.ROWS for k in lsp.KINDS}
    assert set(table) == names
    for name, p in table.items():
        assert isinstance(p.value, (int, float)) and p.value > 0, name
        assert p.source, name
    if key != "gtx260":
        for name in ("a", "b", "c", "d"):
            assert "not measured for this GPU" in table[name].source
        assert (table["a"].value, table["b"].value, table["c"].value, table["d"].value) == \
            (3, 11, 0.5, 80)
    dev = lsp._device(key)         # eq. (2): GB/s in bytes per clock of clock_mhz
    assert table["gpu_bwt"].value == pytest.approx(
        dev["mem_bandwidth_gbs"].value * 1e3 / dev["clock_mhz"].value, rel=1e-4)
    assert table["cost.ld_st"].value == table["t_mem"].value


@pytest.mark.parametrize("key", lsp.MODELS)
def test_model_params_agree_with_the_gpu_data(key):
    g, p = gpu(lsp.norm(key)), default_params(lsp.norm(key))
    assert (p.n_sm, p.clock_mhz, p.m) == (g.sm_count, g.clock_mhz, g.max_warps_per_sm)
    assert p.gpu_bwt == pytest.approx(g.mem_bandwidth_gbs * 1e9 / (g.clock_mhz * 1e6), rel=1e-4)
    if key != "gtx260" and "mem_latency_cycles" in g.params:
        assert p.t_mem == g.mem_latency_cycles


def test_thesis_gpus():
    # The TopDown thesis's GPUs (Table 5.1): GP104 has 1920 cores / 128 per
    # SM = 15 SMs; cc 7.5 holds 1024 threads = 32 warps per SM; the Quadro
    # RTX 4000's 416 GB/s at its 1545 MHz boost clock.
    assert lsp.luo_suda("gtx1070")["n_sm"].value == 15
    assert lsp.luo_suda("quadro-rtx4000")["m"].value == 32
    assert lsp.luo_suda("quadro-rtx4000")["gpu_bwt"].value == pytest.approx(416e9 / 1545e6,
                                                                            rel=1e-4)
    assert lsp.luo_suda("Quadro_RTX4000") == lsp.luo_suda("quadro-rtx4000")


def test_newer_models_costs():
    # Accel-Sim's latencies: Volta integer MAX 13, FP32 DIV 39, integer DIV 145.
    p = lsp.luo_suda("v100")
    assert (p["cost.max.int_reg"].value, p["cost.div.float_const"].value,
            p["cost.div.int_reg"].value) == (13, 39, 145)
    assert p["cost.and.float_reg"].value == p["cost.add.int_reg"].value == 4
    assert "SM7_QV100" in p["cost.add.int_reg"].source


def test_fallback_rule():
    p = default_params("gtx260")
    assert p.values["cost.mad.float_reg"] == p.values["cost.mul.float_reg"] == 65
    assert p.values["cost.setp.int_reg"] == 62 and p.values["cost.rem.int_const"] == 728
    assert p.values["cost.bra.int_const"] == 22            # no row: add
    assert "costed as its 'mul' row" in p.sources["cost.fma.float_reg"]
    assert p.values.get("cost.add.double_reg") is None and p.values.get("zz") is None
    with pytest.raises(KeyError):
        p.values["cost.add.vector"]
    with pytest.raises(PtxcError, match="unknown operand kind"):
        p.cost("add", "double_reg")
    assert all(row in lsp.ROWS for row in FALLBACK_ROW.values())


def test_params_file_errors(tmp_path):
    f = tmp_path / "p.json"
    for params, msg in (({"t_mem": -1}, "'t_mem' must be a positive number"),
                        ({"a": float("nan")}, "'a' must be a finite number"),
                        ({"cost.add.int_reg": "x"}, "positive number"),
                        ({"cost.add.vector": 3}, "unknown parameter 'cost.add.vector'"),
                        ({"zz": 1}, "unknown parameter 'zz'")):
        f.write_text(json.dumps({"params": params}))
        with pytest.raises(PtxcError, match=re.escape(msg)):
            load_params("h100", str(f))
    # a measured cost of an opcode Table 1 lacks, and a negative fitted b
    f.write_text(json.dumps({"device": "X", "params": {"cost.fma.float_reg": 4.5, "b": -2},
                             "methods": {"b": "fitted"}}))
    p = load_params("h100", str(f))
    assert p.values["cost.fma.float_reg"] == 4.5 and p.values["cost.mad.float_reg"] == 4
    assert p.b == -2 and p.sources["b"] == f"measured: {f} (X): fitted"


def test_docs_gpus_section():
    with open(os.path.join(HERE, "..", "docs", "gpus.md"), encoding="utf-8") as fh:
        doc = fh.read()
    start = doc.index("## Luo & Suda's parameters\n")
    section = doc[start:doc.index("\n## ", start + 1)]
    assert section.split("\n### ", 1)[1].rstrip() == lsp.markdown().split("### ", 1)[1].rstrip()


# --- the Table 1 micro-benchmarks -------------------------------------------------

PAIRS = table1.all_pairs()


def test_pairs_cover_table1():
    assert len(PAIRS) == len(lsp.ROWS) * len(lsp.KINDS) + 1
    names = [k.name for p in PAIRS for k in p]
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("base, test", PAIRS, ids=[p[1].name[3:-5] for p in PAIRS])
def test_pair_differs_by_one_instruction(base, test):
    a = base.text.replace(base.name, "K").splitlines()
    b = test.text.replace(test.name, "K").splitlines()
    diff = [d for d in difflib.ndiff(a, b) if d[:2] in ("+ ", "- ")]
    assert diff == ["+     " + test.meta["instruction"]]
    loop = b[b.index("$L_rep:"):b.index("    @%p1 bra $L_rep;")]
    assert "    " + test.meta["instruction"] in loop


U32 = 0xFFFFFFFF


def _s32(v):
    v &= U32
    return v - (1 << 32) if v & 0x80000000 else v


def _int_op(row, x, y):
    if row == "div":
        q = abs(x) // abs(y)
        return q if (x < 0) == (y < 0) else -q
    return {"add": lambda: x + y, "sub": lambda: x - y, "mul": lambda: x * y,
            "neg": lambda: -x, "min": lambda: min(x, y), "max": lambda: max(x, y),
            "and": lambda: x & y, "or": lambda: x | y, "xor": lambda: x ^ y,
            "not": lambda: ~x}[row]()


def _f32(bits):
    return np.array([bits & U32], np.uint32).view(np.float32)[0]


def _bits(f):
    return int(np.array([f], np.float32).view(np.uint32)[0])


def _float_op(row, x, y):
    if row in ("and", "or", "xor", "not"):
        bx, by = _bits(x), (y if isinstance(y, int) else _bits(y))
        return _f32({"and": bx & by, "or": bx | by, "xor": bx ^ by, "not": ~bx}[row])
    f = np.float32
    return {"add": lambda: f(x + y), "sub": lambda: f(x - y), "mul": lambda: f(x * y),
            "div": lambda: f(x / y), "neg": lambda: f(-x), "min": lambda: min(x, y),
            "max": lambda: max(x, y)}[row]()


def model_table1(row, kind, variant, n):
    """What a Table 1 kernel leaves in x: the loop of table1's docstring in Python."""
    test = variant == "test"
    if kind.startswith("int"):
        y = _s32(int(table1.INT_CONST.get(row, "0"), 0)) if kind == "int_const" else 3
        x = 12345
        for i in range(n):
            s = i & 31
            x = _s32(((x & U32) << s | (x & U32) >> (32 - s)) & U32 if s else x)
            if test:
                x = _s32(_int_op(row, x, y))
        return x & U32
    c = table1.FLOAT_CONST.get(row, "0x0")
    y = (_f32(int(c[2:], 16)) if c.startswith("0f") else int(c, 16)) \
        if kind == "float_const" else np.float32(0.75)
    x = np.float32(1.5)
    for _ in range(n):
        x = np.float32(x + np.float32(0.25))
        if test:
            x = _float_op(row, x, y)
    return _bits(x)


@pytest.fixture(scope="module")
def t1_module():
    return ptxc.parse(kmod.module([k for p in PAIRS for k in p]), "table1.ptx")


@pytest.mark.parametrize("kind", lsp.KINDS)
def test_table1_kernels_run_under_ptxc(t1_module, kind):
    # Every row of one kind, base and test, 5 repetitions: the final x of
    # every thread is the Python model's, and the clock difference is counted.
    for row in lsp.ROWS:
        for variant in ("base", "test"):
            out = np.zeros(64, np.uint64)
            args = [out, 5, np.float32(1.5), np.float32(0.75), np.float32(0.25)] \
                if kind.startswith("float") else [out, 5, 12345, 3]
            ptxc.launch(t1_module, f"t1_{row}_{kind}_{variant}", (1, 1, 1), (32, 1, 1), args,
                        mode="full")
            want = model_table1(row, kind, variant, 5)
            assert (out[1::2] == want).all(), (row, variant, hex(int(out[1])), hex(want))
            assert (out[0::2] > 0).all()


def test_ld_pair_follows_the_chain(t1_module):
    chain, start = chase_chain(8192, 256, seed=5)
    x = start
    for _ in range(7):
        x = int(chain[x // 8])
    for variant, want in (("base", start), ("test", x)):
        out = np.zeros(64, np.uint64)
        ptxc.launch(t1_module, f"t1_ld_st_{variant}", (1, 1, 1), (32, 1, 1),
                    [out, 7, chain.copy(), start], mode="full")
        assert (out[1::2] == want).all()


def test_chase_chain_is_one_cycle():
    chain, start = chase_chain(1 << 16, 256, seed=2)
    seen, x = set(), start
    for _ in range((1 << 16) // 256):
        assert x % 256 == 0 and x not in seen
        seen.add(x)
        x = int(chain[x // 8])
    assert x == start


def sass_counts(cubin: str) -> dict:
    """Instructions (16-byte words that are not NOP) of each kernel's .text section."""
    b = open(cubin, "rb").read()
    shoff, = struct.unpack_from("<Q", b, 0x28)
    entsize, num, strndx = struct.unpack_from("<HHH", b, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * entsize) for i in range(num)]
    strtab = secs[strndx][4]

    def name(off):
        return b[strtab + off:b.index(b"\0", strtab + off)].decode()
    out = {}
    for s in secs:
        n = name(s[0])
        if n.startswith(".text."):
            code = b[s[4]:s[4] + s[5]]
            out[n[6:]] = sum(1 for i in range(0, len(code), 16) if code[i:i + 2] != b"\x18\x79")
    return out


@pytest.mark.skipif(not shutil.which("ptxas"), reason="ptxas not installed")
def test_ptxas_keeps_the_measured_instruction(tmp_path):
    kernels = [k for p in PAIRS for k in p] + \
        [cpd.kernel(lo, k) for lo, k in cpd.choose(default_params("h100"))] + [cpd.copy_kernel()]
    src, cubin = tmp_path / "mb.ptx", tmp_path / "mb.cubin"
    src.write_text(kmod.module(kernels))
    subprocess.run(["ptxas", "-arch=sm_90", str(src), "-o", str(cubin)], check=True,
                   capture_output=True)
    counts = sass_counts(str(cubin))
    for base, test in PAIRS:
        assert counts[test.name] > counts[base.name], test.name


# --- the CPD micro-benchmark and its fit ------------------------------------------

def model_cpd(loads, k, src, items, mask, s, thread, threads):
    x = np.float32(0)
    for j in range(thread, items, threads):
        v = [src[(j & mask) + cpd.LOAD_STRIDE * q] for q in range(loads)]
        for q in range(loads):
            x = np.float32(x + v[q])
        for r in range(k - loads):
            x = np.float32(x * s) if r % 2 == 0 else np.float32(x + v[0])
    return x


def test_cpd_kernel_under_ptxc():
    kern = cpd.kernel(2, 5)
    module = ptxc.parse(kmod.module([kern, cpd.copy_kernel()]), "cpd.ptx")
    src = (np.arange(cpd.WINDOW + 64) % 7).astype(np.float32)
    out, times = np.zeros(128, np.float32), np.zeros(6, np.uint64)
    ptxc.launch(module, kern.name, (2, 1, 1), (64, 1, 1),
                [out, times, src, 1000, cpd.WINDOW - 1, np.float32(0.5)], mode="full")
    want = [model_cpd(2, 5, src, 1000, cpd.WINDOW - 1, np.float32(0.5), t, 128)
            for t in range(128)]
    assert np.array_equal(out, np.array(want, np.float32))
    t = times.reshape(2, 3)
    assert (t[:, 2] >= t[:, 1]).all()
    dst, s = np.zeros(64, np.uint32), np.arange(64, dtype=np.uint32)
    ptxc.launch(module, "copy_v4", (2, 1, 1), (4, 1, 1), [dst, s, 16], mode="full")
    assert np.array_equal(dst, s)


def test_cpd_choice_spreads_p():
    p = default_params("h100")
    picks = cpd.choose(p)
    props = [cpd.proportion(cpd.body(lo, k), p) for lo, k in picks]
    assert props == sorted(props) and len(picks) == len(cpd.TARGETS)
    assert all(abs(a - b) < 0.01 for a, b in zip(props, cpd.TARGETS))
    # by hand: cpd_l1_k7 on h100: and 4 + mul 4 + add 4 + 1 float add 4
    # + 6 alternating mul/add 24 + add 4 + setp (min) 4 + bra (add) 4 = 52;
    # P = 52 / (52 + 480) = 0.0977
    assert cpd.costs(cpd.body(1, 7), p) == (52, 480)
    assert cpd.proportion(cpd.body(1, 7), p) == pytest.approx(52 / 532)


def test_blocks_for():
    assert [blocks_for(n, 32) for n in (1, 32, 33, 48, 64, 37)] == [1, 1, 3, 2, 2, None]
    assert blocks_for(64, 1) is None


def grid(a, b, c, d, m, props):
    n = np.array([x for x in range(1, m + 1) for _ in props], float)
    p = np.array([q for _ in range(1, m + 1) for q in props], float)
    return n, p, cpd_fit.cpd(n, p, a, b, c, d, m)


@pytest.mark.parametrize("truth", [(3, 11, 0.5, 80, 32), (2, 8, 0.4, 60, 64),
                                   (4, 5, 0.3, 120, 32)])
def test_fit_recovers_known_parameters(truth):
    *abcd, m = truth
    n, p, y = grid(*truth, (0.1, 0.2626, 0.282, 0.4584, 0.5297, 0.7662, 0.8697))
    f = cpd_fit.fit(n, p, y, m)
    assert (f.a, f.b, f.c, f.d) == pytest.approx(abcd, abs=1e-6)
    assert f.rms < 1e-9
    noisy = y * (1 + 0.01 * np.random.default_rng(1).standard_normal(len(y)))
    g = cpd_fit.fit(n, p, noisy, m)
    assert (g.a, g.b, g.c, g.d) == pytest.approx(abcd, rel=0.05)


def test_cpd_equations_by_hand():
    # Eq. (3): (0.5 - 0.26)(16 - 11) + 3 = 4.2; eq. (4)-(5) with m = 32, N = 16:
    # n = 80 (0.26 - 0.5)^2 = 4.608; sqrt(31^2 - 16^2) = sqrt(705); CPD2 = 4.608 / 31
    # x 26.552 + 3 = 6.947
    assert cpd_fit.cpd1(16, 0.26, 3, 11, 0.5) == pytest.approx(4.2)
    assert cpd_fit.cpd2(16, 0.26, 3, 0.5, 80, 32) == pytest.approx(4.608 / 31 * math.sqrt(705) + 3)
    assert cpd_fit.cpd(16, 0.26, 3, 11, 0.5, 80, 32) == pytest.approx(4.2)
    assert cpd_fit.cpd2(1, 0.9, 3, 0.5, 80, 32) == 3                  # N = 1: a
    assert cpd_fit.cpd2(32, 0.9, 3, 0.5, 80, 32) == pytest.approx(80 * 0.16 + 3)   # N = m: n + a


def test_fit_needs_data():
    with pytest.raises(PtxcError, match="at least 4 points"):
        cpd_fit.fit([1, 2], [0.1, 0.2], [1, 2], 32)
    with pytest.raises(PtxcError, match="equally long"):
        cpd_fit.fit([1, 2, 3], [0.1, 0.2], [1, 2, 3], 32)


# --- calibrate end to end on a simulated GPU -------------------------------------

TRUTH = dict(a=3.0, b=4.0, c=0.5, d=20.0)     # both branches of min{CPD1, CPD2} at m = 8


class SimulatedGPU:
    """Answers calibrate's launches from known parameters: the Table 1
    kernels take 100 + n (10 + cost if test) cycles, the CPD kernels
    N c / CPD(N, P) (eq. 6 with eqs. 3-5), the copy 2 bytes / bandwidth."""
    name, sm_count, clock_mhz, max_warps_per_sm, max_blocks_per_sm = "sim", 4, 1000.0, 8, 32
    bandwidth = 200e9

    def __init__(self, truth: ModelParams):
        self.truth = truth

    def load(self, ptx):
        return set(re.findall(r"\.entry (\w+)\(", ptx))

    def array(self, a):
        return a.copy()

    def get(self, a):
        return a

    def launch(self, module, name, grid, block, args):
        assert name in module
        t = self.truth
        m = re.fullmatch(r"t1_(\w+?)_(?:(int_const|int_reg|float_const|float_reg)_)?(base|test)",
                         name)
        if m:
            row, kind, variant = m.groups()
            cost = t.values["cost.ld_st"] if row == "ld_st" else t.values[f"cost.{row}.{kind}"]
            args[0][0] = 100 + int(args[1]) * (10 + (cost if variant == "test" else 0))
            return
        loads, k = map(int, re.fullmatch(r"cpd_l(\d+)_k(\d+)", name).groups())
        instrs = cpd.body(loads, k)
        comp, _ = cpd.costs(instrs, t)
        prop = cpd.proportion(instrs, t)
        n = grid // self.sm_count * block // 32
        c_warp = math.ceil(int(args[3]) / (grid * block)) * comp
        cycles = n * c_warp / cpd_fit.cpd(n, prop, t.a, t.b, t.c, t.d, self.max_warps_per_sm)
        times = args[1].reshape(-1, 3)
        times[:, 0] = np.arange(grid) % self.sm_count
        times[:, 1], times[:, 2] = 1000, 1000 + int(round(cycles))

    def seconds(self, module, name, grid, block, args, repeat=10):
        return 2 * int(args[2]) * 16 / self.bandwidth


def simulated_truth():
    p = default_params("h100")
    vals = dict(p.values, **TRUTH)
    for i, name in enumerate(sorted(n for n in vals if n.startswith("cost.") and
                                    n != "cost.ld_st")):
        vals[name] = 4 + i % 7               # costs distinct from the defaults
    vals["cost.ld_st"] = vals["t_mem"] = 600
    return ModelParams("h100", vals, p.sources)


def test_calibrate_on_a_simulated_gpu(tmp_path, monkeypatch):
    import ptxc.predict.calibrate as cal
    monkeypatch.setattr(cal, "CHASE_BYTES", 1 << 16)
    monkeypatch.setattr(cal, "COPY_BYTES", 1 << 16)
    truth = simulated_truth()
    data = calibrate("h100", dev=SimulatedGPU(truth), repeat=100, samples=1)
    got = data["params"]
    for r in lsp.ROWS:
        for k in lsp.KINDS:
            assert got[f"cost.{r}.{k}"] == truth.values[f"cost.{r}.{k}"]
    assert got["t_mem"] == got["cost.ld_st"] == 600
    assert {k: got[k] for k in TRUTH} == pytest.approx(TRUTH, abs=1e-3)
    assert got["gpu_bwt"] == pytest.approx(200e9 / 1000e6, rel=1e-3)
    assert (got["n_sm"], got["m"]) == (4, 8) and not data["warnings"]
    assert data["measurements"]["fit"]["rms"] < 1e-3
    # The file round-trips through --params.
    path = tmp_path / "params.json"
    write(str(path), data)
    p = load_params("h100", str(path))
    assert p.values["cost.div.float_reg"] == got["cost.div.float_reg"]
    assert p.sources["a"].startswith(f"measured: {path} (sim): eqs. (3)-(5) fitted")
    assert p.sources["cost.add.int_reg"].endswith("(test - base) / 100")
    r = CliRunner().invoke(cli, ["predict", TOPDOWN_PTX, "--kernel", "strided", "--grid", "2",
                                 "--block", "32", "--arg", "0=arange:f32:2048",
                                 "--arg", "1=zeros:f32:64", "--arg", "2=32", "--regs", "32",
                                 "--params", str(path), "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["params"]["t_mem"]["value"] == 600


def test_calibrate_keeps_defaults_for_nonpositive_costs(monkeypatch):
    import ptxc.predict.calibrate as cal
    monkeypatch.setattr(cal, "CHASE_BYTES", 1 << 16)
    monkeypatch.setattr(cal, "COPY_BYTES", 1 << 16)
    truth = simulated_truth()
    vals = dict(truth.values)
    vals["cost.not.int_reg"] = 0                 # as if the assembler had removed it
    data = calibrate("h100", dev=SimulatedGPU(ModelParams("h100", vals, truth.sources)),
                     repeat=10, samples=1)
    assert "cost.not.int_reg" not in data["params"]
    assert data["warnings"][0].startswith("cost.not.int_reg: ")


def test_bad_counts_one_line():
    r = CliRunner().invoke(cli, ["calibrate", "--repeat", "0"])
    assert r.exit_code == 1
    assert r.output.strip().splitlines() == [
        "ptxc: error: calibrate: --repeat and --samples must be at least 1"]


def test_no_gpu_one_line(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "cupy", None)      # import cupy -> ImportError
    out = tmp_path / "p.json"
    r = CliRunner().invoke(cli, ["calibrate", "-o", str(out)])
    assert r.exit_code == 1
    assert r.output.strip().splitlines() == [
        "ptxc: error: calibrate needs a CUDA GPU and CuPy (pip install 'ptxc[gpu]'): "
        "CuPy is not installed"]
    assert not out.exists()
