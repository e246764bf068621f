"""Tier-up inside a launch: a long launch that started with level-0 code
(jit.choose_level) switches to O2 code between chunks of CTAs.

A kernel starts at level 0, and across launches it is recompiled at O2 once
hot (jit.note_run). A single long launch (one grid that runs for minutes)
would never profit from that, so while its workers run, the main thread's
wait loop (launch_wait.run_threads) calls ``TierUp.tick`` with the CTAs
done: once the launch has run for TIER_UP_MIN_S and the time it still needs
(estimated from its rate so far) is TIER_UP_RATIO times what compiling the
kernel cost, a daemon thread compiles the kernel at O2 (LLVM holds no GIL:
the workers go on running level-0 code meanwhile). When it is ready, the
launch's ``warp_fn`` is replaced, and chunks that start afterwards run the
O2 code. Both are generated from the same plan by the same code
generator (the O2 text differs only in keeping some registers in allocas,
values.py ``slot_ptr``, whose warp-state bytes stay reserved), so they
share the counter layout, warp state size and semantics: a CTA runs
entirely in one of them, counters are sums, and the result is the same as
with either alone
(tests/test_tiered_jit.py). The switch is refused if any layout field
differs. Only plain launches tier up (no check tool, value profile or error
injection), and not with PTXC_OPT set; a launch with memory counters tiers
up to O2 code with the same counters (the memory counters' blocks are part
of the layout compared; PTXC_FAST_COUNT=0 keeps such a launch at level 0,
as before, for before/after measurements).

The switch is measured: the launch's rate in thread instructions per
second (its CTAs' totals, ``Launch.per_cta``, summed as they finish) before
the compile started is compared with the rate over as long a time after the
switch; O2 code slower than jit.REVERT_BELOW of it (measured over the apps:
pointer chasing, walkLists, ran 0.72x at O2) is switched back to the
level-0 code for the rest of the launch, and the kernel is marked
``jit_o2_slower`` (jit.choose_level keeps it at level 0). Both codes give
the same results, so the switch back changes no number either.
"""
from __future__ import annotations

import threading
import time

from ptxc.backends.llvm.instruments import memcount_fast

LAYOUT = ("n_counters", "ws_size", "branch_ctr", "guard_ctr", "mem_ctr", "uses_global_atomics",
          "uses_heap", "launches_grids", "writes_global", "value_ctr", "stack")


def same_layout(a, b) -> bool:
    return all(getattr(a, f) == getattr(b, f) for f in LAYOUT)


class TierUp:
    """Compile ``launch``'s kernel at O2 in the background once the launch
    proves long, switch to it, and back if it runs slower (module doc);
    ``compile_o2()`` returns the Compiled, ``on_slower()`` is called when
    the O2 code is switched back."""

    def __init__(self, launch, compile_o2, cost: float, on_ready=None, on_slower=None):
        self.launch, self.compile_o2, self.cost = launch, compile_o2, cost
        self.on_ready, self.on_slower = on_ready, on_slower
        self.t0 = time.monotonic()
        self.thread = None
        self.switched = None            # the O2 Compiled, once the launch uses it
        self.rate0 = None               # (thread instructions, seconds) before the compile
        self.since = None               # (thread instructions, time) when the switch was seen
        self.judged = False             # the rates were compared
        self.reverted = False           # the O2 code was slower: level 0 again

    def tick(self, done: int, total: int) -> None:
        from ptxc.backends.llvm import jit
        if self.switched is not None:
            return self._judge()
        if self.thread is not None or done <= 0 or done >= total:
            return
        elapsed = time.monotonic() - self.t0
        left = elapsed * (total - done) / done
        if elapsed < jit.TIER_UP_MIN_S or left < jit.TIER_UP_RATIO * self.cost:
            return
        work = self.work()
        self.rate0 = None if work is None else (work, elapsed)
        self.thread = threading.Thread(target=self._compile, name="ptxc-tier-up", daemon=True)
        self.thread.start()

    def work(self):
        """Thread instructions of the CTAs finished so far (None without
        per-CTA counters: a grid over runtime.MAX_PER_CTA CTAs)."""
        per_cta = getattr(self.launch, "per_cta", None)
        return None if per_cta is None else int(per_cta[1::2].sum())

    def _judge(self) -> None:
        """After the switch: once the O2 code has run as long as the level-0
        rate was measured over, compare the rates, once (module doc)."""
        if self.rate0 is None or self.judged:
            return
        now, work = time.monotonic(), self.work()
        if self.since is None:
            self.since = (work, now)
            return
        work0, t0 = self.since
        span = now - t0
        if span < self.rate0[1] or work <= work0:
            return
        self.judged = True
        from ptxc.backends.llvm.jit import REVERT_BELOW
        if (work - work0) / span < REVERT_BELOW * self.rate0[0] / self.rate0[1]:
            self.launch.warp_fn = self.launch.c.warp_fn
            self.reverted = True
            if self.on_slower is not None:
                self.on_slower()

    def _compile(self) -> None:
        try:
            new = self.compile_o2()
        except Exception:       # noqa: BLE001 - the level-0 code goes on; its launch reports errors
            return
        if new is not None and new.level > 0 and same_layout(self.launch.c, new) \
                and fits(new, getattr(self.launch, "thread_stack", None)):
            self.launch.warp_fn = new.warp_fn
            self.switched = new
            if self.on_ready is not None:
                self.on_ready()


def fits(new, thread_stack) -> bool:
    """Does the O2 code's frame fit the stacks the launch's workers run on
    (stacks.py)? (O2 frames are smaller than level 0's in practice.)"""
    from ptxc.backends.llvm.stacks import stack_bytes
    return thread_stack is None or stack_bytes(new.frame_bytes) <= thread_stack


def for_launch(launch, compiled, kernel, plain: bool):
    """The TierUp of a launch, or None where it does not apply: a launch
    with a check tool (``plain`` false), a compiled variant, a kernel that
    launches grids, a level other than 0, PTXC_OPT set, a hybrid run (its code
    depends on the slice in place), or a kernel too big for O2 (jit.BIG_KERNEL)."""
    from ptxc.backends.llvm import jit
    c = compiled
    if (not plain or jit.ENV_LEVEL is not None or c.level != 0 or c.mode != "full"
            or c.inject or c.value_profile or c.uses_heap or c.launches_grids):
        return None
    if c.memory_counters and not memcount_fast.enabled():      # PTXC_FAST_COUNT=0: as before
        return None
    if sum(len(b.instrs) for b in kernel.blocks) > jit.BIG_KERNEL:
        return None
    module = c.plan.module
    cost = c.timings.get("codegen", 0.0) + c.timings.get("llvm", 0.0)

    def ready():
        kernel.attrs["jit_hot"] = True

    def slower():
        kernel.attrs["jit_hot"], kernel.attrs["jit_o2_slower"] = False, True

    memory = c.bank_bytes if c.memory_counters else 0     # the same counters, at O2
    return TierUp(launch, lambda: jit.compile_kernel(module, kernel, "full", 2, memory=memory),
                  cost, ready, slower)


def finish(tier) -> None:
    """Wait for a background compile the launch started (so that no compile
    runs beside the launcher's next steps)."""
    if tier is not None and tier.thread is not None:
        tier.thread.join()
