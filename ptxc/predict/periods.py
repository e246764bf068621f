"""Computation tasks, memory access tasks and calculate periods (Luo & Suda
2011, section 3.2) from a launch's exact counts.

Section 3.2: "for each warp, the PTX codes can be considered as an
instruction queue of computation instructions and memory access
instructions", a run of consecutive computation instructions is a
*computation task*, a run of memory access instructions a *memory access
task*, and the *calculate period* i runs "from the beginning of one
computation task to the beginning of the next": its computation task (cost
c_i) and the memory access task after it (cost m_i). Section 3.5 classifies
period i by (c_{i-1}, m_{i-1}) of the period before it.

ptxc has no per-warp instruction trace but, exactly, each basic block's
warp executions (``Profile.per_block``), each conditional branch's taken
and not-taken threads (``Profile.per_branch``) and the instructions of
every block. The periods are formed from these (docs/predict.md, "3.2"):

1. Each block's instructions split into tasks (costs.is_memory_access).
   A block is  L M_1 C_1 M_2 ... M_k C_k  (L, C_j computation, possibly
   empty; M_j memory), or only L when it has no memory access task.
2. **Computation runs across block boundaries.** The computation a warp
   executes after its last memory task in a block (C_k, or all of a block
   without memory) continues into the next block: it is carried along the
   CFG edges to the first memory task ahead, so that a block starting with a
   load gets the computation of the previous iteration's tail, as the warp's
   queue has it. The carried amount is split over a block's successors in
   the proportion of the threads that take each edge (thread counts along
   CFG edges are exact: ``taken``/``not_taken`` of a conditional branch,
   all threads of an unconditional one); a block with memory receives
   carried computation C_in (summed over its executions) and its first
   period has c = C_in / executions + c(L).
3. Periods of a block with memory: (C_in/e + L, M_1), (C_1, M_2), ...,
   (C_{k-1}, M_k), each passed e = warp executions times. A function's
   exits (``ret``/``exit``) end a last period (carried computation, m = 0).
4. **Predecessors.** Inside a block, period j's predecessor is period j-1.
   A block's first period is preceded by the last period of whichever
   block with memory the warp came from: the CFG predecessors' last
   periods, through blocks without memory, weighted by the exact thread
   fractions along the edges into the block (plus "start", c = m = 0, for
   the threads entering the function). The first period is emitted once
   per predecessor period, each with its share of the executions, so each
   has one type (section 3.5).

Totals are exact: the periods' sum of passes x c equals every executed
computation instruction's cost, and passes x m every memory access
instruction's cost. For straight-line code and single-path loops the
periods are exactly the warp's queue (the first iteration's c differs from
the others'; c is their mean over the block's executions). Calls are a
boundary: each function's blocks form periods on their own.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

START = "start"


@dataclass
class Task:
    """One computation or memory access task of a block (section 3.2)."""
    memory: bool
    cost: float                 # c (computation) or m (memory), GPU clocks
    bytes: float = 0.0          # memory: sum of D_mem over its instructions (eq. 1)
    transactions: float = 0.0   # memory: sum of N_trans over its instructions (eq. 1)


@dataclass
class BlockTasks:
    """A basic block as the period construction sees it (module doc)."""
    key: str                    # "function:block"
    execs: float                # warp executions (Profile.per_block)
    tasks: list                 # Task, in instruction order
    succ: dict = field(default_factory=dict)   # successor key -> threads along the edge
    exit: float = 0.0           # threads that leave the function at this block
    entry: float = 0.0          # threads that enter the function at this block

    def split(self):
        """(L, [(M_j, C_j)]): the leading computation cost and the memory
        tasks, each with the cost of the computation after it in the block
        (0.0 if none); adjacent memory tasks are one task."""
        lead, mems, after = 0.0, [], []
        for t in self.tasks:
            if t.memory:
                if mems and after[-1] is None:
                    mems[-1] = _merge(mems[-1], t)
                else:
                    mems.append(t)
                    after.append(None)
            elif mems:
                after[-1] = (after[-1] or 0.0) + t.cost
            else:
                lead += t.cost
        return lead, [(m, a or 0.0) for m, a in zip(mems, after)]


def _merge(a: Task, b: Task) -> Task:
    return Task(True, a.cost + b.cost, a.bytes + b.bytes, a.transactions + b.transactions)


@dataclass
class RawPeriod:
    """A calculate period before the equations of section 3.5 are applied."""
    block: str
    index: int
    c: float
    m: float
    bytes: float                # of its memory access task (eq. 1)
    transactions: float
    passes: float               # warp passes over the launch
    prev: tuple | None          # (block, index) of the preceding period; None: start


def function_periods(blocks: list) -> list:
    """The RawPeriods of one function's executed blocks (module doc)."""
    blocks = [b for b in blocks if b.execs > 0]
    if not blocks:
        return []
    pos = {b.key: i for i, b in enumerate(blocks)}
    n = len(blocks)
    split = [b.split() for b in blocks]
    has_mem = [bool(pairs) for _, pairs in split]
    out_total = [sum(v for k, v in b.succ.items() if k in pos) + b.exit for b in blocks]
    in_total = [b.entry for b in blocks]
    for b in blocks:
        for k, v in b.succ.items():
            if k in pos:
                in_total[pos[k]] += v
    # carried computation (module doc, 2): x = b + A x
    a_out = np.zeros((n, n))
    a_in = np.zeros((n, n))
    for i, b in enumerate(blocks):
        for k, v in b.succ.items():
            if k in pos and v > 0:
                j = pos[k]
                if out_total[i] > 0:
                    a_out[j, i] += v / out_total[i]
                if in_total[j] > 0:
                    a_in[j, i] += v / in_total[j]
    own = np.array([b.execs * (pairs[-1][1] if pairs else lead)
                    for b, (lead, pairs) in zip(blocks, split)])
    through = [i for i in range(n) if not has_mem[i]]
    carry_in = _through(a_out, a_out @ own, through)
    carry_out = own.copy()
    carry_out[through] += carry_in[through]
    # the last period with memory a warp reaches each block from (module doc, 4)
    sources = [START] + [(b.key, len(split[i][1]) - 1) for i, b in enumerate(blocks)
                         if has_mem[i]]
    src_of = {s: i for i, s in enumerate(sources)}
    rhs = np.zeros((n, len(sources)))
    for j, b in enumerate(blocks):
        if in_total[j] > 0:
            rhs[j, 0] = b.entry / in_total[j]
    for i, b in enumerate(blocks):
        if has_mem[i]:
            rhs[:, src_of[(b.key, len(split[i][1]) - 1)]] += a_in[:, i]
    last_in = _through(a_in, rhs, through)
    periods: list = []
    for i, b in enumerate(blocks):
        lead, pairs = split[i]
        if pairs:
            c0 = carry_in[i] / b.execs + lead
            m0 = pairs[0][0]
            for s, frac in _sources(last_in[i], sources):
                periods.append(RawPeriod(b.key, 0, c0, m0.cost, m0.bytes, m0.transactions,
                                         b.execs * frac, s))
            for j in range(1, len(pairs)):
                m = pairs[j][0]
                periods.append(RawPeriod(b.key, j, pairs[j - 1][1], m.cost, m.bytes,
                                         m.transactions, b.execs, (b.key, j - 1)))
        exit_frac = b.exit / out_total[i] if out_total[i] > 0 else 1.0
        if exit_frac > 0:
            last = ([((b.key, len(pairs) - 1), 1.0)] if pairs
                    else _sources(last_in[i], sources))
            for s, frac in last:
                periods.append(RawPeriod(b.key, len(pairs), carry_out[i] / b.execs, 0.0, 0.0,
                                         0.0, b.execs * exit_frac * frac, s))
    return periods


def _sources(row, sources):
    """[(source, fraction)] of one row of the predecessor distribution."""
    total = float(sum(v for v in row if v > 0))
    if total <= 0:
        return [(None, 1.0)]
    out = []
    for s, v in zip(sources, row):
        if v > 1e-12 * total:
            out.append((None if s == START else s, float(v) / total))
    return out


def _through(a, b, through: list):
    """x = b + a[:, T] x[T], T = the blocks without memory (they pass on what
    reaches them): solved exactly on T, then spread to every block."""
    if not through:
        return b
    a_tt = a[np.ix_(through, through)]
    eye = np.eye(len(through))
    try:
        x_t = np.linalg.solve(eye - a_tt, b[through])
    except np.linalg.LinAlgError:
        x_t = np.linalg.lstsq(eye - a_tt, b[through], rcond=None)[0]
    return b + a[:, through] @ x_t
