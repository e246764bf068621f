"""Injection sites: the injection space of a fault-free run and the
uniform draw of sites over it (``ptxc inject`` steps 1 and 2, docs/inject.md;
the method of SASSI section 8 and NVBitFI: a dynamic instruction instance
drawn uniformly over every executed eligible instance of every thread, then
a destination bit uniformly among that instruction's destination bits).

The space of target T is, for each considered kernel invocation, each
thread (linear CTA, linear thread in the CTA), the count of eligible dynamic
instructions the thread executed (ptxc.launcher.injection.LaunchRecord.counts). A site
is (invocation, CTA, thread, instance, rand): the ``instance``-th (0-based)
eligible instruction of that thread; the flipped bit is ``rand`` modulo the
instruction's destination bits (inject_ir.py), so every bit of the chosen
instruction is equally likely (2^64 is a multiple of every D that is a power
of two; for other D the bias is below 2^-58).

Draws use numpy's Generator(PCG64(seed)): per site one integer in
[0, total) then one u64, in site order, so a seed gives the same sites on
any machine and for any --jobs.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ptxc.errors import PtxcError

from ptxc.backends.llvm.instruments.inject_ctl import TARGETS


@dataclass(frozen=True)
class Site:
    target: str
    launch: int          # kernel invocation number (inject_session)
    cta: int             # linear CTA index (x fastest)
    thread: int          # linear thread index in the CTA (x fastest)
    instance: int        # 0-based eligible dynamic instance of that thread
    rand: int            # u64: the bit is rand mod the destination bits

    @property
    def target_index(self) -> int:
        return TARGETS.index(self.target)

    @property
    def lane(self) -> int:
        return self.thread % 32

    def warp_index(self, nwarps: int) -> int:
        return self.cta * nwarps + self.thread // 32

    def text(self) -> str:
        """The --replay form: TARGET/LAUNCH/CTA/THREAD/INSTANCE/RAND."""
        return f"{self.target}/{self.launch}/{self.cta}/{self.thread}/{self.instance}/{self.rand}"


def parse_site(text: str) -> Site:
    """A site from its --replay form (one clear error otherwise)."""
    parts = text.strip().split("/")
    if len(parts) != 6 or parts[0] not in TARGETS:
        raise PtxcError(f"bad site '{text}': expected TARGET/LAUNCH/CTA/THREAD/INSTANCE/RAND "
                        f"with TARGET one of {', '.join(TARGETS)}")
    try:
        nums = [int(p) for p in parts[1:]]
    except ValueError:
        raise PtxcError(f"bad site '{text}': LAUNCH, CTA, THREAD, INSTANCE and RAND are integers")
    if min(nums) < 0 or nums[4] >= 2 ** 64:
        raise PtxcError(f"bad site '{text}': negative number or RAND beyond 2^64")
    return Site(parts[0], *nums)


def space(launches: list, target: str) -> list[tuple[int, np.ndarray]]:
    """[(launch index, per-thread counts as (CTA, thread) array)] of ``target``."""
    out = []
    for rec in launches:
        nthreads = rec.block[0] * rec.block[1] * rec.block[2]
        per = rec.counts[target].reshape(-1, ((nthreads + 31) // 32) * 32)[:, :nthreads]
        out.append((rec.index, per))
    return out


def space_size(launches: list, target: str) -> int:
    return int(sum(int(p.sum()) for _, p in space(launches, target)))


def draw(launches: list, target: str, runs: int, seed: int) -> list[Site]:
    """``runs`` sites drawn uniformly (with replacement) over the space."""
    parts = space(launches, target)
    flat = [p.reshape(-1) for _, p in parts]
    sizes = np.array([int(f.sum()) for f in flat], dtype=np.int64)
    total = int(sizes.sum())
    if total == 0:
        raise PtxcError(f"nothing to inject: no executed instruction is eligible for the "
                        f"{target} target in the launches considered")
    rng = np.random.Generator(np.random.PCG64(seed))
    cum_launch = np.cumsum(sizes)
    sites = []
    for _ in range(runs):
        k = int(rng.integers(0, total))
        rand = int(rng.integers(0, 2 ** 64, dtype=np.uint64))
        li = int(np.searchsorted(cum_launch, k, side="right"))
        k -= int(cum_launch[li - 1]) if li else 0
        cum = np.cumsum(flat[li])
        slot = int(np.searchsorted(cum, k, side="right"))
        instance = k - (int(cum[slot - 1]) if slot else 0)
        nthreads = parts[li][1].shape[1]
        sites.append(Site(target, parts[li][0], slot // nthreads, slot % nthreads, instance, rand))
    return sites
