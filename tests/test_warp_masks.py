"""Warp collectives whose lanes pass different member masks (issue 17).

The kernels are tests/cuda/warp_masks.cu, compiled by nvcc 13.0 with
``nvcc -ptx -arch=sm_90 -O3 warp_masks.cu -o warp_masks.sm90.ptx``
(tests/cuda/build.sh). Each launch runs on random inputs; the full run's
buffers are compared with the numpy models below, written from the PTX ISA
(9.x: vote.sync, redux.sync, match.sync, elect.sync, activemask, fns) and the
CUDA programming guide (``__shfl_*_sync`` with a width), not from ptxc. The
model of every ``.sync`` collective: lane l's members are
``membermask[l] & executing`` (executing: exists, not exited, active, guard
true), and lane l's result reduces over its own members. Every launch also
checks that the hybrid run's counters equal the full run's.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import ptxc

PTX = os.path.join(os.path.dirname(__file__), "cuda", "warp_masks.sm90.ptx")
NOUT, NTILE, NOUTSIDE, NBRANCH = 24, 6, 6, 6   # outputs per thread of the kernels (warp_masks.cu)
M32 = 0xFFFFFFFF


@pytest.fixture(scope="module")
def module():
    return ptxc.load(PTX)


def launch_both(module, kernel, grid, block, make_args):
    """Full and hybrid runs on fresh copies of the arguments: the full run's
    arguments, after checking that the two runs' counters are equal."""
    profs, args = {}, {}
    for mode in ("full", "hybrid"):
        args[mode] = make_args()
        profs[mode] = ptxc.launch(module, kernel, grid, block, args[mode], mode=mode)
    assert profs["hybrid"].counters() == profs["full"].counters()
    return args["full"]


def warps(n_ctas, block):
    """Global thread ids of each warp (the last warp of a CTA may be partial)."""
    for c in range(n_ctas):
        for w0 in range(0, block, 32):
            yield [c * block + i for i in range(w0, min(w0 + 32, block))]


def bits(lanes) -> int:
    return sum(1 << lane for lane in lanes)


def lanes_of(mask: int):
    return [k for k in range(32) if mask >> k & 1]


# ------------------------------------------------------------- repro_max
def test_issue_reproducer(module):
    """__reduce_max_sync(__match_any_sync(~0u, key), val): the max over the
    lanes of the warp with the same key (it was the max of lane 0's group)."""
    rng = np.random.default_rng(17)
    n = 128
    key = rng.integers(0, 5, n).astype(np.int32)
    val = rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
    out = launch_both(module, "repro_max", 2, 64,
                      lambda: [key.copy(), val.copy(), np.zeros(n, np.int32)])[2]
    want = np.array([val[[j for j in w if key[j] == key[t]]].max()
                     for w in warps(2, 64) for t in w], np.int32)
    np.testing.assert_array_equal(out, want)


# ------------------------------------------------------------- group_ops
def group_model(key, val, n_ctas, block):
    """Expected group_ops outputs (NOUT per thread) and which are defined."""
    out = np.zeros((n_ctas * block, NOUT), np.int64)
    defined = np.ones_like(out, bool)
    for w in warps(n_ctas, block):
        lane = {t: i for i, t in enumerate(w)}
        ex = [t for t in w if key[t] >= 0 and key[t] % 8 != 7]
        for t in w:
            if key[t] >= 0 and key[t] % 8 == 7:
                out[t, 0] = 0xDEADBEEF              # the else branch
        for t in ex:
            mem = [j for j in ex if key[j] == key[t]]          # g & executing
            v = [int(val[j]) for j in mem]
            s = [int(np.uint32(x).view(np.int32)) for x in v]
            m = bits(lane[j] for j in mem)
            same = lambda f: len({f(x) for x in v}) <= 1        # noqa: E731
            o = out[t]
            o[0] = m
            o[1] = sum(v) & M32
            o[2], o[3] = min(v), max(v)
            o[4], o[5] = min(s) & M32, max(s) & M32
            o[6] = np.bitwise_and.reduce(v)
            o[7] = np.bitwise_or.reduce(v)
            o[8] = np.bitwise_xor.reduce(v)
            o[9] = bits(lane[j] for j in mem if val[j] & 1)
            o[10] = any(x & 6 == 6 for x in v)
            o[11] = all(x & 24 for x in v)
            o[12] = same(lambda x: x & 32 != 0)
            o[13] = bits(lane[j] for j in mem if val[j] % 3 == val[t] % 3)
            o[14], o[15] = (m, 1) if same(lambda x: x >> 6 & 1) else (0, 0)
            o[16] = o[13]                            # (v % 3) << 32 | 7: equal iff v % 3 equal
            o[17], o[18] = (m, 1) if same(lambda x: x >> 7 & 1) else (0, 0)
            o[19] = lane[mem[0]]                     # elect.sync: the lowest member
            o[20] = t == mem[0]
            o[21] = val[mem[0]]                      # shfl from __ffs(g) - 1
            o[22] = bits(lane[j] for j in ex)        # activemask
            partner = w[lane[t] ^ 1] if lane[t] ^ 1 < len(w) else None
            if partner in ex:
                o[23] = val[partner]
            else:                                    # source not executing: undefined
                defined[t, 23] = False
    return out.astype(np.uint32), defined


@pytest.mark.parametrize("n_ctas,block,nkeys,seed", [(2, 64, 6, 1), (3, 48, 12, 2), (1, 96, 3, 3),
                                                      (2, 64, 1, 4), (1, 32, 40, 5)])
def test_group_ops(module, n_ctas, block, nkeys, seed):
    """Every collective over labeled groups g = __match_any_sync(__activemask(),
    key): keys < 0 exit first, keys % 8 == 7 are inactive (else branch), and
    block 48 leaves the second warp with 16 lanes."""
    rng = np.random.default_rng(seed)
    n = n_ctas * block
    key = rng.integers(-2, nkeys, n).astype(np.int32)
    val = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    out = launch_both(module, "group_ops", n_ctas, block,
                      lambda: [key.copy(), val.copy(), np.zeros(n * NOUT, np.uint32)])[2]
    want, defined = group_model(key, val, n_ctas, block)
    got = out.reshape(n, NOUT)
    for i in range(NOUT):
        d = defined[:, i]
        np.testing.assert_array_equal(got[d, i], want[d, i], err_msg=f"output {i}")


# ------------------------------------------------------ branch_on_groups
def branch_model(key, val, n_ctas, block):
    """hit[t, i] of branch_on_groups: the branch each lane takes."""
    hit = np.zeros((n_ctas * block, NBRANCH), np.uint32)
    for w in warps(n_ctas, block):
        lane = {t: i for i, t in enumerate(w)}
        ex = [t for t in w if key[t] >= 0]
        for t in ex:
            mem = [j for j in ex if key[j] == key[t]]
            v = [int(val[j]) for j in mem]
            g = bits(lane[j] for j in mem)
            hit[t] = [max(v) == val[t],
                      sum(x & 7 for x in v) > 3 * len(mem),
                      all(x & 1 for x in v),
                      bits(lane[j] for j in mem if val[j] & 2) == g & 0x55555555,
                      t == mem[0],
                      len({x & 4 for x in v}) == 1]
    return hit


@pytest.mark.parametrize("n_ctas,block,seed", [(2, 64, 31), (2, 48, 32)])
def test_branches_on_group_collectives(module, n_ctas, block, seed):
    """Branches decided by redux / vote / elect / match over labeled groups:
    the hybrid run keeps the collectives and their member masks (they are in
    the slice) and counts like the full run, whose branch outcomes match the
    model."""
    rng = np.random.default_rng(seed)
    n = n_ctas * block
    key = rng.integers(-1, 5, n).astype(np.int32)
    val = rng.integers(0, 16, n).astype(np.uint32)        # small values: ties in max
    hit = launch_both(module, "branch_on_groups", n_ctas, block,
                      lambda: [key.copy(), val.copy(), np.zeros(n * NBRANCH, np.uint32)])[2]
    np.testing.assert_array_equal(hit.reshape(n, NBRANCH), branch_model(key, val, n_ctas, block))
    fn = module.function("branch_on_groups")
    warp_ops = [ins for b in fn.blocks for ins in b.instrs
                if ins.opcode in ("activemask", "match", "redux", "vote", "elect")]
    assert len(warp_ops) == 8 and all(ins.attrs.get("slice") for ins in warp_ops)


# ------------------------------------------------------------- tile_shfl
def tile_model(val, b, n):
    """CUDA programming guide: with width w, lanes form segments of w lanes;
    __shfl_sync reads lane (b % w) of the segment, _up / _down read lane -/+
    delta when it stays in the segment (else their own value), _xor reads
    lane ^ m unless that lies in a later segment."""
    out = np.zeros((n, NTILE), np.uint32)
    for t in range(n):
        base, lane, d = t - t % 32, t % 32, b[t] & 15
        s8, s16 = lane - lane % 8, lane - lane % 16
        src = [s8 + b[t] % 8,
               lane - 3 if lane % 8 >= 3 else lane,
               lane + 2 if lane % 8 + 2 < 8 else lane,
               lane ^ 5 if lane ^ 5 < s8 + 8 else lane,
               lane ^ 9 if lane ^ 9 < s16 + 16 else lane,
               lane + d if lane % 16 + d < 16 else lane]
        out[t] = val[[base + s for s in src]]
    return out


def test_tile_shfl(module):
    """Shuffles with width 8 and 16: each segment passes its own member mask."""
    rng = np.random.default_rng(7)
    n = 128
    val = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 64, n).astype(np.uint32)
    out = launch_both(module, "tile_shfl", 2, 64,
                      lambda: [val.copy(), b.copy(), np.zeros(n * NTILE, np.uint32)])[2]
    np.testing.assert_array_equal(out.reshape(n, NTILE), tile_model(val, b, n))


# ------------------------------------------------- cooperative groups
@pytest.mark.parametrize("n,block,seed", [(200, 64, 11), (150, 48, 12)])
def test_bucket_agg_labeled_partition(module, n, block, seed):
    """warpAggregatedAtomicsCG's mapToBuckets with cg::reduce(cg::greater):
    per thread the max over its labeled group (the executing lanes of its warp
    with its bucket); per bucket, the indices handed out are 0..count-1 and a
    group's indices are consecutive in lane order."""
    rng = np.random.default_rng(seed)
    nb, grid = 5, -(-n // block) + 1       # one CTA past n: all its lanes return
    total = grid * block
    bucket = rng.integers(0, nb + 2, total).astype(np.int32)     # >= nb: not counted
    val = rng.integers(-1000, 1000, total).astype(np.int32)
    mx, idx, counters = launch_both(
        module, "bucket_agg", grid, block,
        lambda: [bucket.copy(), val.copy(), np.full(total, -7, np.int32),
                 np.full(total, -7, np.int32), np.zeros(nb, np.int32), n, nb])[2:5]
    in_play = (np.arange(total) < n) & (bucket < nb)
    for w in warps(grid, block):
        for t in w:
            if not in_play[t]:
                assert mx[t] == -7 and idx[t] == -7
                continue
            group = [j for j in w if in_play[j] and bucket[j] == bucket[t]]
            assert mx[t] == val[group].max()
            np.testing.assert_array_equal(idx[group], idx[group[0]] + np.arange(len(group)))
    for b in range(nb):
        mine = in_play & (bucket == b)
        assert counters[b] == mine.sum()
        np.testing.assert_array_equal(np.sort(idx[mine]), np.arange(mine.sum()))


def test_filter_coalesced_group(module):
    """warpAggregatedAtomicsCG's filter_arr: the positive inputs, compacted."""
    rng = np.random.default_rng(13)
    n, block = 300, 64
    grid = -(-n // block)
    src = rng.integers(-50, 50, grid * block).astype(np.int32)
    dst, nres = launch_both(module, "filter_pos", grid, block,
                            lambda: [np.zeros(n, np.int32), np.zeros(1, np.int32),
                                     src.copy(), n])[0:2]
    pos = src[:n][src[:n] > 0]
    assert nres[0] == len(pos)
    np.testing.assert_array_equal(np.sort(dst[:len(pos)]), np.sort(pos))


# ------------------------------------------------------------------ fns
def fns_model(mask: int, base: int, offset: int) -> int:
    """The PTX ISA pseudocode of fns (base > 31 is undefined there; its loop
    does not run, and ptxc gives 0xffffffff for offset 0 too)."""
    if base > 31:
        return M32
    if offset == 0:
        return base if mask >> base & 1 else M32
    pos, count, inc = base, abs(offset) - 1, 1 if offset > 0 else -1
    while 0 <= pos < 32:
        if mask >> pos & 1:
            if count == 0:
                return pos
            count -= 1
        pos += inc
    return M32


def test_fns(module):
    """fns on random masks / bases / offsets plus the ISA's examples and the
    edge cases: offset 0, +-|offset| beyond the set bits, INT_MIN/INT_MAX
    offsets, base 0 and 31, bases > 31, empty and full masks."""
    rng = np.random.default_rng(19)
    n = 512
    mask = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    base = rng.integers(0, 32, n).astype(np.uint32)
    off = rng.integers(-34, 35, n).astype(np.int32)
    cases = [(0xAAAAAAAA, 3, 1), (0xAAAAAAAA, 3, -1), (0xAAAAAAAA, 2, 1), (0xAAAAAAAA, 2, -1),
             (0, 5, 1), (0, 5, 0), (M32, 31, 1), (M32, 31, -32), (M32, 0, 32), (M32, 0, 33),
             (M32, 0, -1), (M32, 31, -33), (1, 0, 0), (1 << 31, 31, 0), (5, 32, 0), (5, 40, 1),
             (M32, 2**31, -1), (M32, M32, 1), (0x80000001, 7, -2**31), (0x80000001, 7, 2**31 - 1),
             (0x80000001, 7, 1), (0x80000001, 7, -1)]
    for i, (m, b, o) in enumerate(cases):
        mask[i], base[i], off[i] = m, b, o
    out = launch_both(module, "find_nth", n // 128, 128,
                      lambda: [mask.copy(), base.copy(), off.copy(), np.zeros(n, np.uint32)])[3]
    want = [fns_model(int(m), int(b), int(o)) for m, b, o in zip(mask, base, off)]
    np.testing.assert_array_equal(out, np.array(want, np.uint32))
    assert list(out[:4]) == [3, 3, 3, 1]           # the ISA's own examples


# ------------------------------------------------ masks without the lane
def rotl(x: int, k: int) -> int:
    k %= 32
    return ((x << k) | (x >> (32 - k))) & M32 if k else x


def test_mask_without_own_lane(module):
    """A member mask that leaves the lane out (undefined in the ISA): ptxc's
    documented choice is members = mask & executing all the same; an empty
    set gives the identity (add 0, max INT_MIN, ballot 0, all true, any
    false, match.any 0)."""
    rng = np.random.default_rng(23)
    n = 96
    val = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    out = launch_both(module, "outside_mask", 1, n,
                      lambda: [val.copy(), np.zeros(n * NOUTSIDE, np.uint32)])[1]
    want = np.zeros((n, NOUTSIDE), np.int64)
    for t in range(n):
        base, lane, v = t - t % 32, t % 32, int(val[t])
        mem = [base + k for k in lanes_of(0 if v % 5 == 0 else rotl(0xF, lane + 1))]
        vs = [int(val[j]) for j in mem]
        want[t] = [sum(vs) & M32,
                   max([int(np.uint32(x).view(np.int32)) for x in vs], default=-2**31) & M32,
                   bits(j - base for j in mem if val[j] & 1),
                   all(x & 1 for x in vs), any(x & 1 for x in vs),
                   bits(j - base for j in mem if val[j] & 3 == v & 3)]
    np.testing.assert_array_equal(out.reshape(n, NOUTSIDE), want.astype(np.uint32))


def test_redux_f32_is_refused():
    """redux.sync.min.f32 (sm_100a) is not run: one clear run-time error."""
    m = ptxc.load(os.path.join(os.path.dirname(__file__), "cuda", "warp_masks_f32.sm100a.ptx"))
    val = np.arange(32, dtype=np.float32)
    with pytest.raises(ptxc.PtxcError, match=r"not supported yet: redux\.sync\.min\.f32.*f32 forms"):
        ptxc.launch(m, "redux_f32", 1, 32, [val, np.zeros(32, np.float32)], mode="full")
