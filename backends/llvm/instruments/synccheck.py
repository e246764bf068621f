"""synccheck: barriers reached by part of a CTA or a warp, and warp
collectives whose member mask names lanes that do not execute them.

The checks (docs/check.md, "synccheck"; PTX ISA 9.7.15.1 bar/barrier,
9.7.15.2 bar.warp.sync, 9.7.9.6 shfl.sync, 9.7.15.10-13 vote/match/redux;
CUDA Compute Sanitizer documentation, "Synccheck Tool"):

* ``divergent-warp``: a warp reaches a CTA barrier (``bar.sync``,
  ``barrier.sync``, ``bar.red``) with some but not all of its live lanes
  (live: existing and not exited). The executor lets such a warp wait with
  the lanes that arrived, and the others reach the barrier (or another one)
  later, in another barrier round; on a GPU the result is undefined.
* ``divergent-block``: the warps released by one barrier waited at
  different barrier instructions (``if (..) __syncthreads(); else
  __syncthreads();`` split between warps). Warps that exited do not count:
  an exited thread no longer takes part in barriers, as on the hardware.
* ``invalid-mask``: a ``bar.warp.sync`` or a ``.sync`` collective
  (``shfl``, ``vote``, ``match``, ``redux``, ``elect``) where a lane's member
  mask names a live lane of the warp that does not execute the instruction
  (the ISA requires every non-exited lane of the mask to execute it), or
  leaves the executing lane itself out. Lanes that exited or do not exist
  (a partial last warp) may be named.

*Live* lanes exclude the exited ones and those waiting, on the warp's
reconvergence stack, at a node that only returns from the kernel: nvcc
compiles ``if (t >= n) return;`` into a branch to the kernel's one ``ret``,
where the IPDOM model parks the lanes until the others get there, while on
a GPU they exit at once.

Counting: the threads that reached the barrier (divergent-warp and
divergent-block, per warp and arrival), the executing lanes with a bad mask
(invalid-mask); aggregated per (error, instruction) with the first
occurrence, the smallest (linear CTA, thread).
"""
from __future__ import annotations

import ctypes
import struct
from dataclasses import dataclass, field

from ptxc.backends.llvm import layout as Lo
from ptxc.backends.llvm.instruments.check_hooks import EV_BARRIER
from ptxc.backends.llvm.instruments.racecheck import HazardLog, PerCta, cta_info, warp_of


@dataclass
class SyncError:
    kind: str            # divergent-warp / divergent-block / invalid-mask
    iid: int
    count: int
    cta: tuple
    thread: int          # linear thread id of the first occurrence
    order: tuple
    detail: dict = field(default_factory=dict)


def lowest(mask: int) -> int:
    return (mask & -mask).bit_length() - 1


class CtaBarriers:
    """The barrier arrivals of the current generation of one CTA."""

    def __init__(self, checker, ctaid, linear):
        self.checker, self.ctaid, self.linear = checker, ctaid, linear
        self.arrived: dict[int, tuple[int, int]] = {}     # warp -> (iid, lanes)

    def arrive(self, warp: int, iid: int, lanes: int) -> None:
        if warp in self.arrived:            # released since: a new generation
            self.close()
        self.arrived[warp] = (iid, lanes)

    def close(self) -> None:
        """Every warp released by one barrier should have waited at one instruction."""
        if not self.arrived:
            return
        first = min(self.arrived)
        base = self.arrived[first][0]
        for warp in sorted(self.arrived):
            iid, lanes = self.arrived[warp]
            if iid != base:
                self.checker.record("divergent-block", iid, self.ctaid, self.linear,
                                    warp * 32 + lowest(lanes), bin(lanes).count("1"),
                                    {"other_iid": base, "other_thread": first * 32 +
                                     lowest(self.arrived[first][1])})
        self.arrived = {}


def exit_nodes(plan) -> set:
    """Ids of the nodes that only leave the kernel (ret/exit)."""
    out = set()
    for n in plan.nodes:
        ops = [i.opcode for i in n.instrs]
        if ops and n.call is None and all(o == "exit" or (o == "ret" and n.inst.parent is None)
                                          for o in ops):
            out.add(n.id)
    return out


def live_lanes(ws, sp: int, lanes: int, exits: set) -> int:
    """Existing, not exited lanes, less those parked at an exit node."""
    valid, = struct.unpack("<I", ctypes.string_at(ws + Lo.WS_VALID, 4))
    exited, = struct.unpack("<I", ctypes.string_at(ws + Lo.WS_EXITED, 4))
    live = valid & ~exited & 0xFFFFFFFF
    rest = live & ~lanes
    if rest and sp > 1:
        n = sp - 1                                # the entries below the top
        stack = struct.unpack(f"<{4 * n}I", ctypes.string_at(ws + Lo.WS_STACK, 16 * n))
        seen = 0
        for k in range(n - 1, -1, -1):            # the nearest entry holding a lane: where it resumes
            pc, mask = stack[4 * k], stack[4 * k + 2]
            new = mask & rest & ~seen
            if new and pc in exits:
                live &= ~new
            seen |= mask
    return live


class SyncChecker:
    """The synccheck of one launch (``log``: SyncError entries)."""

    def __init__(self, plan):
        self.log = HazardLog()
        self.ctas = PerCta(self._new)
        self.exits = exit_nodes(plan)

    def _new(self, L, linear):
        return CtaBarriers(self, None, linear)

    def record(self, kind, iid, ctaid, linear, thread, n, detail) -> None:
        self.log.record((kind, iid), (linear, thread), n,
                        lambda: SyncError(kind, iid, 0, ctaid, thread, (linear, thread), detail))

    def sync(self, L, cta, ws, iid, event, lanes, masks, sp) -> None:
        ctaid, linear = cta_info(cta)
        warp = warp_of(ws)
        live = live_lanes(ws, sp, lanes, self.exits)
        if event == EV_BARRIER:
            st = self.ctas.get(L, linear)
            st.ctaid = ctaid
            if lanes != live:
                self.record("divergent-warp", iid, ctaid, linear, warp * 32 + lowest(lanes),
                            bin(lanes).count("1"), {"missing": live & ~lanes})
            st.arrive(warp, iid, lanes)
            return
        m = struct.unpack("<32I", ctypes.string_at(masks, 128))
        bad = []
        for lane in range(32):
            if lanes >> lane & 1:
                missing = m[lane] & live & ~lanes
                if missing or not (m[lane] >> lane & 1):
                    bad.append((lane, missing))
        if bad:
            lane, missing = bad[0]
            self.record("invalid-mask", iid, ctaid, linear, warp * 32 + lane, len(bad),
                        {"mask": m[lane], "missing": missing,
                         "self_out": not (m[lane] >> lane & 1)})

    def finish(self) -> None:
        self.ctas.finish_all()

    def errors(self) -> list[SyncError]:
        return self.log.entries()
