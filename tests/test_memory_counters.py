"""Memory counters (docs/metrics.md, "Memory access counters") on the nvcc
kernels of tests/cuda/memory.cu.

For every launch the expected requests, sectors, lines, bank transactions
and atomic addresses are derived with numpy from each kernel's index
formula (the lane addresses, written in the comments of memory.cu) through
the reference model of tests/memory_model.py, never from a run of ptxc;
every launch also runs in hybrid mode, which must give the same counters
as the full run. A few numbers are also spelled out by hand.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxc
from ptxc.errors import PtxcError
from memory_model import (add, atomic_request, global_request, hist_of, shared_request,
                          warp_lanes)

PTX = Path(__file__).resolve().parent / "cuda" / "memory.sm90.ptx"


@pytest.fixture(scope="module")
def module():
    return ptxc.load(str(PTX))


def run(module, kernel, grid, block, make_args, bank_bytes=4):
    """The full run's profile and arguments; checks hybrid == full."""
    args = make_args()
    full = ptxc.launch(module, kernel, grid, block, args, mode="full",
                       memory_counters=True, bank_bytes=bank_bytes)
    hybrid = ptxc.launch(module, kernel, grid, block, make_args(), mode="hybrid",
                         memory_counters=True, bank_bytes=bank_bytes)
    assert full.memory_counters and hybrid.memory_counters
    assert hybrid.counters() == full.counters()
    assert hybrid.memory == full.memory
    return full, args


def check_global(prof, prefix: str, requests: list[dict]) -> None:
    want = {}
    for r in requests:
        add(want, r)
    m = prof.memory
    assert m[f"{prefix}_requests"] == want.get("requests", 0)
    assert m[f"{prefix}_transactions"] == want.get("transactions", 0)
    assert m[f"{prefix}_lines"] == want.get("lines", 0)
    assert m[f"{prefix}_requested_bytes"] == want.get("requested_bytes", 0)
    assert m[f"{prefix}_sectors_hist"] == hist_of(requests)
    if requests:
        assert m[f"{prefix}_efficiency"] == pytest.approx(
            100 * want["requested_bytes"] / (32 * want["transactions"]))


def check_shared(prof, word: str, requests: list[dict]) -> None:
    want = {}
    for r in requests:
        add(want, r)
    short = {"load": "ld", "store": "st"}[word]
    m = prof.memory
    assert m[f"shared_{word}_requests"] == want.get("requests", 0)
    assert m[f"shared_{word}_transactions"] == want.get("transactions", 0)
    assert m[f"shared_{short}_bank_conflict"] == (want.get("transactions", 0)
                                                  - want.get("ideal_transactions", 0))
    assert m[f"shared_{word}_requested_bytes"] == want.get("requested_bytes", 0)


def linear_requests(grid: int, block: int, active, addr, nbytes: int) -> list[dict]:
    """Global requests of a 1-D launch: lanes with active(i) at addr(i)."""
    out = []
    for c in range(grid):
        for lanes in warp_lanes((block, 1, 1)):
            i = c * block + lanes
            on = i[active(i)]
            if on.size:
                out.append(global_request(addr(on), nbytes))
    return out


# ------------------------------------------------------------ global memory
STRIDED = [  # stride, offset, n, grid, block: what it covers
    (1, 0, 128, 2, 64),      # coalesced: 4 sectors, 1 line per request
    (2, 0, 128, 2, 64),      # stride 2: 8 sectors, 50 %
    (4, 0, 128, 2, 64),      # stride 4: 16 sectors, 25 %
    (32, 0, 128, 2, 64),     # stride 32: one sector (and line) per lane, 12.5 %
    (1, 1, 128, 2, 64),      # misaligned by one element: 5 sectors, 2 lines
    (3, 2, 100, 3, 48),      # partial warps (block 48) and lanes off (i >= n)
]


@pytest.mark.parametrize("stride,offset,n,grid,block", STRIDED)
def test_strided(module, stride, offset, n, grid, block):
    size = (n - 1) * stride + offset + 1
    make = lambda: [np.arange(size, dtype=np.float32), np.zeros(grid * block, np.float32),  # noqa: E731
                    stride, offset, n]
    prof, args = run(module, "mem_strided", grid, block, make)
    active = lambda i: i < n                                     # noqa: E731
    check_global(prof, "gld", linear_requests(grid, block, active,
                                              lambda i: 4 * (i * stride + offset), 4))
    check_global(prof, "gst", linear_requests(grid, block, active, lambda i: 4 * i, 4))
    i = np.arange(n)
    assert np.array_equal(args[1][:n], (i * stride + offset).astype(np.float32))


def test_strided_by_hand(module):
    """Stride 2 of floats: a warp's 32 lanes span 256 bytes = 8 sectors, 2
    lines, 128 requested bytes of 256 moved; misaligned by 4 bytes the 128
    contiguous bytes straddle 5 sectors and 2 lines."""
    def launch(stride, offset):
        return ptxc.launch(module, "mem_strided", 1, 32,
                           [np.zeros(80, np.float32), np.zeros(32, np.float32), stride, offset, 32],
                           mode="full", memory_counters=True).memory
    m = launch(2, 0)
    assert (m["gld_requests"], m["gld_transactions"], m["gld_lines"]) == (1, 8, 2)
    assert m["gld_efficiency"] == 50.0 and m["gld_sectors_hist"][7] == 1
    m = launch(1, 1)
    assert (m["gld_transactions"], m["gld_lines"], m["gld_efficiency"]) == (5, 2, 80.0)
    assert (m["gst_transactions"], m["gst_lines"], m["gst_efficiency"]) == (4, 1, 100.0)


def test_broadcast(module):
    grid, block = 2, 96
    make = lambda: [np.full(4, 7, np.float32), np.zeros(grid * block, np.float32)]   # noqa: E731
    prof, args = run(module, "mem_broadcast", grid, block, make)
    every = lambda i: np.ones(i.shape, bool)                                         # noqa: E731
    loads = linear_requests(grid, block, every, lambda i: 0 * i, 4)
    assert all(r["transactions"] == 1 for r in loads) and len(loads) == 6
    check_global(prof, "gld", loads)
    assert prof.memory["gld_efficiency"] == 400.0      # 128 bytes asked of one 32-byte sector
    check_global(prof, "gst", linear_requests(grid, block, every, lambda i: 4 * i, 4))
    assert np.all(args[1] == 7)


@pytest.mark.parametrize("width,height", [(20, 13), (20, 200)])
def test_transpose(module, width, height):
    """Height 200: a warp's column stores span 12 kB in lane order 0, 200,
    400, ..., then 1, 201, ...: neither near nor sorted (the general path)."""
    grid, block = (2, (height + 7) // 8, 1), (16, 8, 1)
    make = lambda: [np.arange(width * height, dtype=np.float32),     # noqa: E731
                    np.zeros(width * height, np.float32), width, height]
    prof, args = run(module, "mem_transpose", grid, block, make)
    loads, stores = [], []
    for by in range(grid[1]):
        for bx in range(grid[0]):
            for lanes in warp_lanes(block):
                x = bx * block[0] + lanes % block[0]
                y = by * block[1] + lanes // block[0]
                on = (x < width) & (y < height)
                if on.any():
                    loads.append(global_request(4 * (y[on] * width + x[on]), 4))
                    stores.append(global_request(4 * (x[on] * height + y[on]), 4))
    check_global(prof, "gld", loads)
    check_global(prof, "gst", stores)
    # a warp's store writes 16 columns (4 * height bytes apart) of 2 rows, its load
    # 2 contiguous runs of 16 floats: the column access touches more sectors
    assert max(r["transactions"] for r in stores) > max(r["transactions"] for r in loads)
    ref = np.arange(width * height, dtype=np.float32).reshape(height, width).T.reshape(-1)
    assert np.array_equal(args[1], ref)


@pytest.mark.parametrize("stride", [1, 2, 8])
def test_vec4(module, stride):
    n, grid, block = 80, 2, 48
    make = lambda: [np.arange(4 * ((n - 1) * stride + 1), dtype=np.float32),   # noqa: E731
                    np.zeros(4 * grid * block, np.float32), stride, n]
    prof, args = run(module, "mem_vec4", grid, block, make)
    active = lambda i: i < n                                                   # noqa: E731
    loads = linear_requests(grid, block, active, lambda i: 16 * i * stride, 16)
    check_global(prof, "gld", loads)
    check_global(prof, "gst", linear_requests(grid, block, active, lambda i: 16 * i, 16))
    if stride == 1:                     # 32 lanes x 16 bytes = 512 bytes: 16 sectors, 4 lines
        assert loads[0]["transactions"] == 16 and loads[0]["lines"] == 4
    src = np.arange(4 * ((n - 1) * stride + 1), dtype=np.float32).reshape(-1, 4)
    assert np.array_equal(args[1].reshape(-1, 4)[:n], src[np.arange(n) * stride])


@pytest.mark.parametrize("modulus", [1, 3, 4, 64])
def test_predicated_lanes(module, modulus):
    grid, block = 2, 80
    make = lambda: [np.arange(grid * block, dtype=np.float32),     # noqa: E731
                    np.full(grid * block, -1, np.float32), modulus]
    prof, args = run(module, "mem_predicated", grid, block, make)
    on = lambda i: i % modulus == 0                                # noqa: E731
    check_global(prof, "gld", linear_requests(grid, block, on, lambda i: 4 * i, 4))
    check_global(prof, "gst", linear_requests(grid, block, on, lambda i: 4 * i, 4))
    i = np.arange(grid * block)
    assert np.array_equal(args[1], np.where(i % modulus == 0, i, -1).astype(np.float32))


# ------------------------------------------------------------ shared memory
def shared_requests(block: int, offset, nbytes: int, bank_bytes: int, grid: int = 1) -> list:
    out = []
    for _ in range(grid):
        for lanes in warp_lanes((block, 1, 1)):
            out.append(shared_request(lanes % 32, offset(lanes), nbytes, bank_bytes))
    return out


@pytest.mark.parametrize("bank_bytes", [4, 8])
@pytest.mark.parametrize("stride", [1, 2, 32, 33, 0, 96])
def test_shared_banks(module, stride, bank_bytes):
    """Stride 96: 32 distinct words of bank 0 out of lane order."""
    grid, block = 2, 48
    make = lambda: [np.zeros(grid * block, np.float32), stride]   # noqa: E731
    prof, args = run(module, "mem_shared", grid, block, make, bank_bytes)
    fill = lambda t: 4 * t                                        # noqa: E731
    strided = lambda t: 4 * ((t * stride) & 1023)                 # noqa: E731
    loads = (shared_requests(block, strided, 4, bank_bytes, grid)
             + shared_requests(block, fill, 4, bank_bytes, grid))
    stores = (shared_requests(block, fill, 4, bank_bytes, grid)
              + shared_requests(block, strided, 4, bank_bytes, grid))
    check_shared(prof, "load", loads)
    check_shared(prof, "store", stores)
    moved = sum(r["transactions"] for r in loads + stores) * 32 * bank_bytes
    asked = sum(r["requested_bytes"] for r in loads + stores)
    assert prof.memory["shared_efficiency"] == pytest.approx(100 * asked / moved)
    check_global(prof, "gst", linear_requests(grid, block, lambda i: i >= 0, lambda i: 4 * i, 4))


def test_shared_banks_by_hand(module):
    """4-byte banks, one full warp: stride 1 -> 1 transaction; stride 2 ->
    2-way conflict (2); stride 32 -> every lane in bank 0 (32); stride 33 ->
    conflict-free (1); stride 0 -> one word broadcast (1)."""
    for stride, tx in ((1, 1), (2, 2), (32, 32), (33, 1), (0, 1)):
        m = ptxc.launch(module, "mem_shared", 1, 32, [np.zeros(32, np.float32), stride],
                        mode="full", memory_counters=True).memory
        # loads: the strided one + the conflict-free s[t]
        assert m["shared_load_transactions"] == tx + 1, stride
        assert m["shared_ld_bank_conflict"] == tx - 1, stride


@pytest.mark.parametrize("bank_bytes", [4, 8])
@pytest.mark.parametrize("stride", [1, 2, 16, 0])
def test_shared_8_byte(module, stride, bank_bytes):
    grid, block = 1, 64
    make = lambda: [np.zeros(grid * block, np.float64), stride]   # noqa: E731
    prof, args = run(module, "mem_shared_f64", grid, block, make, bank_bytes)
    check_shared(prof, "store", shared_requests(block, lambda t: 8 * t, 8, bank_bytes))
    check_shared(prof, "load", shared_requests(block, lambda t: 8 * ((t * stride) & 511), 8,
                                               bank_bytes))
    if stride == 1 and bank_bytes == 4:      # two phases of 16 lanes, no conflict
        assert prof.memory["shared_load_transactions"] == 2 * 2
        assert prof.memory["shared_ld_bank_conflict"] == 0
    t = np.arange(block)
    assert np.array_equal(args[0], ((t * stride) & 511).astype(np.float64) * (((t * stride) & 511) < block))


@pytest.mark.parametrize("bank_bytes", [4, 8])
@pytest.mark.parametrize("stride", [1, 2, 8])
def test_shared_16_byte(module, stride, bank_bytes):
    grid, block = 1, 64
    make = lambda: [np.zeros(4 * grid * block, np.float32), stride]   # noqa: E731
    prof, _ = run(module, "mem_shared_vec4", grid, block, make, bank_bytes)
    check_shared(prof, "store", shared_requests(block, lambda t: 16 * t, 16, bank_bytes))
    check_shared(prof, "load", shared_requests(block, lambda t: 16 * ((t * stride) & 255), 16,
                                               bank_bytes))


# ------------------------------------------------------------------ atomics
@pytest.mark.parametrize("nbins", [1, 5, 20, 64])
def test_atomics(module, nbins):
    """nbins 20: t % 20 wraps inside a warp over 80 bytes (general path)."""
    grid, block = 2, 80
    make = lambda: [np.zeros(16, np.int32), np.zeros(nbins, np.int32), nbins]   # noqa: E731
    prof, args = run(module, "mem_atomics", grid, block, make)
    atom, red, shared = {}, {}, {}
    for _ in range(grid):
        for w, lanes in enumerate(warp_lanes((block, 1, 1))):
            add(atom, atomic_request([0] * len(lanes)))                 # counter[0]
            add(atom, atomic_request(4 * (lanes % nbins)))              # hist[t % nbins]
            add(shared, atomic_request(4 * (lanes % 4)))                # sh[t % 4]
            add(red, atomic_request(4 * (1 + (lanes & 7))))             # counter[1 + (t & 7)]
            if w == 0:
                add(atom, atomic_request(4 * (9 + lanes[:4])))          # counter[9 + t], t < 4
    m = prof.memory
    assert m["global_atomic_requests"] == atom["requests"]
    assert m["global_reduction_requests"] == red["requests"]
    assert m["global_atomic_addresses"] == atom["addresses"] + red["addresses"]
    assert m["shared_atomic_requests"] == shared["requests"]
    assert m["shared_atomic_addresses"] == shared["addresses"]
    # by hand: per CTA 3 warps; one address for counter[0], 4 for sh[t % 4], 8 for the red
    assert m["shared_atomic_addresses"] == grid * 3 * 4
    counter, hist = args[0], args[1]
    assert counter[0] == grid * block and hist.sum() == grid * block
    assert list(counter[9:13]) == [grid * block // 4] * 4


# ---------------------------------------------------------- generic accesses
@pytest.mark.parametrize("stride", [1, 2, 32])
def test_generic_hits_shared(module, stride):
    grid, block = 2, 64
    make = lambda: [np.arange(grid * block, dtype=np.float32) + 1,      # noqa: E731
                    np.zeros(grid * block, np.float32), stride]
    prof, args = run(module, "mem_generic", grid, block, make)
    loads_g, loads_s, stores_g, stores_s = [], [], [], []
    for c in range(grid):
        for lanes in warp_lanes((block, 1, 1)):
            i = c * block + lanes
            loads_g.append(global_request(4 * i, 4))                          # load_generic(in, i)
            stores_s.append(shared_request(lanes % 32, 4 * lanes, 4))         # store_generic(s, t)
            loads_s.append(shared_request(lanes % 32, 4 * ((lanes * stride) & 1023), 4))
            odd = lanes % 2 == 1                                              # p = t & 1 ? s : in
            loads_s.append(shared_request(lanes[odd] % 32, 4 * lanes[odd], 4))
            loads_g.append(global_request(4 * lanes[~odd], 4))
            stores_g.append(global_request(4 * i, 4))                         # store_generic(out, i)
    check_global(prof, "gld", loads_g)
    check_global(prof, "gst", stores_g)
    check_shared(prof, "load", loads_s)
    check_shared(prof, "store", stores_s)
    # one generic ld (in load_generic) whose lanes reached both spaces
    ld = [e for e in prof.per_memory_instr.values() if e["opcode"] == "ld.f32"]
    assert len(ld) == 1 and ld[0]["space"] == "generic"
    assert ld[0]["global"]["requests"] == len(loads_g) and ld[0]["shared"]["requests"] == len(loads_s)
    if stride == 1:
        i = np.arange(grid * block)
        t = i % block
        ref = (i + 1) + np.where(t % 2 == 1, t + (i - t) + 1, t + 1)
        assert np.array_equal(args[1], ref.astype(np.float32))


# -------------------------------------------------- settings, reports, slice
def test_off_by_default(module):
    prof = ptxc.launch(module, "mem_broadcast", 1, 32,
                       [np.zeros(1, np.float32), np.zeros(32, np.float32)], mode="full")
    assert not prof.memory_counters and "memory" not in prof.counters()
    assert prof.to_dict()["memory_counters"] is False


def test_compiled_kernel_says_memory_counters(module):
    from ptxc.backends.llvm import jit
    fn = next(k for k in module.kernels if k.name == "mem_broadcast")
    assert jit.compile_kernel(module, fn, "full", 0, memory=8).memory_counters
    assert jit.compile_kernel(module, fn, "full", 0, memory=8).bank_bytes == 8
    assert not jit.compile_kernel(module, fn, "full", 0).memory_counters


def test_bad_bank_width(module):
    with pytest.raises(PtxcError, match="bank width must be 4 or 8"):
        ptxc.launch(module, "mem_broadcast", 1, 32, [np.zeros(1, np.float32),
                    np.zeros(32, np.float32)], mode="full", memory_counters=True, bank_bytes=16)


def test_ranking(module):
    prof, _ = run(module, "mem_strided", 1, 64,
                  lambda: [np.zeros(64 * 32, np.float32), np.zeros(64, np.float32), 32, 0, 64])
    rows = prof.to_dict()["memory_ranking"]
    assert [r["opcode"] for r in rows] == ["ld.global.f32", "st.global.f32"]
    assert rows[0]["rank"] == 1 and rows[0]["wasted_bytes"] == 2 * (32 * 32 - 128)
    assert rows[1]["wasted_bytes"] == 0


def test_slice_keeps_addresses_only_on_request():
    from ptxc.passes.slice.slice_pass import select_slice
    m = ptxc.load(str(PTX))
    plain = select_slice(m)
    fn = next(k for k in m.kernels if k.name == "mem_strided")
    ld = next(i for i in fn.instructions() if i.full_opcode == "ld.global.f32")
    addr_def = ld.srcs[0].base.instr
    assert not addr_def.attrs["slice"] and not ld.attrs["slice"]
    wide = select_slice(m, addresses=True)
    assert addr_def.attrs["slice"] and not ld.attrs["slice"]
    assert wide["mem_strided"]["slice_inst"] > plain["mem_strided"]["slice_inst"]
    assert wide["mem_strided"]["addresses"] is True
    assert select_slice(m, addresses=True) is wide           # remembered variant
    assert select_slice(m) is plain and not addr_def.attrs["slice"]


def test_hybrid_needs_the_address_slice():
    from ptxc.backends.llvm import jit
    from ptxc.passes.slice.slice_pass import select_slice
    m = ptxc.load(str(PTX))
    select_slice(m)
    fn = next(k for k in m.kernels if k.name == "mem_strided")
    with pytest.raises(PtxcError, match="addresses=true"):
        jit.compile_kernel(m, fn, "hybrid", 0, memory=4)


# --------------------------------------- hybrid == full on other kernels
@pytest.mark.parametrize("memory", ["conservative", "noalias"])
def test_hybrid_equals_full_on_slice_kernels(memory):
    """The nvcc slice examples (tests/test_slice_dynamic.py) with memory
    counters: the address slice must make hybrid equal full in every mode."""
    from ptxc.passes.slice.slice_pass import mark_slice
    from test_slice_dynamic import CASES, CUDA
    for path, kernel, grid, block, make_args in CASES:
        m = ptxc.load(str(CUDA / path))
        full = ptxc.launch(m, kernel, grid, block, make_args(), mode="full", memory_counters=True)
        mark_slice(m, memory=memory)
        hybrid = ptxc.launch(m, kernel, grid, block, make_args(), mode="hybrid",
                             memory_counters=True)
        assert m.attrs["slice"] == {"memory": memory, "criteria": "counters", "addresses": True,
                                    "faults": "checked"}    # a launch checks faults by default
        assert hybrid.counters() == full.counters(), kernel
        assert full.memory["gld_requests"] + full.memory["shared_load_requests"] > 0, kernel


OCELOT = "/work/shared/corpus/ocelot"
SDK_MATMUL = [f"{OCELOT}/sdk2.2/matrixMul.ptx",
              f"{OCELOT}/tests/cuda4.1sdk/tests/matrixMulDynlinkJIT/extras/matrixMul_kernel_32.ptx"]


@pytest.mark.parametrize("path", SDK_MATMUL, ids=["sdk2.2", "32-bit-pointers"])
def test_sdk_matrix_mul(path):
    """CUDA SDK matrixMul (16 x 16 tiles, n = 64), by hand: each of the 8
    warps of a CTA covers 2 tile rows of 16 floats (64 bytes each, 64-byte
    aligned): a tile load is 4 sectors in 2 lines, 4 tile steps x (A, B) x
    8 warps x 16 CTAs = 1024 requests; the C store 128 requests of 4
    sectors. The inner loop reads AS(ty, k) (2 words in 2 banks) and
    BS(k, tx) (16 words in 16 banks) for k < 16: 2 x 16 x 4 x 8 x 16 =
    16384 shared loads of 1 transaction; the tile stores hit 32 banks: no
    bank conflict at all. The second file is a module with 32-bit pointers
    (16 MiB segments)."""
    if not Path(path).exists():
        pytest.skip("corpus not available")
    m = ptxc.load(path)
    n = 64
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    make = lambda: [np.zeros((n, n), np.float32), a, b, n, n]    # noqa: E731
    prof, args = run(m, m.kernels[0], (n // 16, n // 16), (16, 16), make)
    mm = prof.memory
    assert (mm["gld_requests"], mm["gld_transactions"], mm["gld_lines"]) == (1024, 4096, 2048)
    assert (mm["gst_requests"], mm["gst_transactions"]) == (128, 512)
    assert mm["gld_efficiency"] == 100.0 and mm["gld_sectors_hist"][3] == 1024
    assert mm["shared_store_requests"] == 1024 and mm["shared_store_transactions"] == 1024
    assert mm["shared_load_transactions"] == mm["shared_load_requests"] == 16384
    assert mm["shared_ld_bank_conflict"] == mm["shared_st_bank_conflict"] == 0
    np.testing.assert_allclose(args[0], a @ b, rtol=1e-5)
