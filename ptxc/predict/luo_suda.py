"""Luo & Suda's execution-time model (section 3 of the paper), on ptxc's exact counts.

Source: Changhai Luo and Reiji Suda, "An execution time prediction
analytical model for GPU with instruction-level and thread-level
parallelism awareness", IPSJ SIG Technical Report 2011-HPC-130 (full text:
../shared/papers/003_f2d0f14d9d0649e4.txt). Per SM, with N_act active warps:

  (1)  Warp_bwt = (N_thread * D_mem) / (N_trans * t_mem)     per memory access task
  (2)  MPD = min{N_act, floor(GPU_bwt / (N_act * N_sm * Warp_bwt))}
  (3)  CPD1 = (c - P) * (N_act - b) + a
  (4)  CPD2 = (n / (m - 1)) * sqrt((m - 1)^2 - (N_act - m)^2) + a
  (5)  n = d * (P - c)^2;            CPD = min{CPD1, CPD2}
  period i (computation task c_i, memory access task m_i; section 3.5):
  type 1  c_{i-1} >= m_{i-1}, c_i >= m_i:  (6)  T_i = [(N_act * c_i) / CPD]
  type 2  c_{i-1} >= m_{i-1}, c_i <  m_i:  (7)  T_i = ceil((N_act * c_i) / CPD) + T_c
                                           (8)  T_c = max{m_i - (n - 1) * c_i, 0}
  type 3  c_{i-1} <  m_{i-1}, c_i >= m_i:  (9)  T_i = [(N_act * c_i) / CPD] + T_p
                                           (10) T_p = max{m_{i-1} * floor(N_act / MPD - 1)
                                                          - (N_act - 1) * c_i, 0}
  type 4  c_{i-1} <  m_{i-1}, c_i <  m_i:  (11) T_i = [(N_act * c_i) / CPD] + T_p + T_c
                                           (12) T_p as (10)
                                           (13) T_c = max{m_i - ((N_act - 1) * c_i + T_p)}
  total = sum of T_i over the periods;  (14) P_acc = min{T_test, T_model} / max{...}

Where the printed text is ambiguous or contradicts itself, :class:`Readings`
chooses one reading and keeps the other available (docs/predict.md gives
the reasons, equation by equation). Periods come from :mod:`.periods`
(section 3.2), instruction costs from :mod:`.costs` (Table 1), parameters
from :mod:`.params`.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from ..errors import PtxcError
from .costs import param
from .periods import function_periods

N_THREAD = 32     # section 3.3: "the number of threads in one warp, in this paper is 32"
_EPS = 1e-9


@dataclass(frozen=True)
class Readings:
    """One reading per ambiguity of the printed equations (docs/predict.md).
    The first value of each is the default."""
    eq2: str = "per_sm"         # "printed": N_act in eq. (2)'s denominator
    cpd: str = "regime"         # "min": CPD = min{CPD1, CPD2} for every P
    cpd_floor: str = "one"      # "none": CPD as computed; CPD <= 0 is an error
    brackets: str = "ceil"      # "plain": eq. (6), (9), (11) without rounding
    eq10: str = "floor"         # "ceil": ceil(N_act / MPD - 1) in eq. (10), (12)
    eq8_n: str = "n_act"        # "eq5": the n of eq. (8) is eq. (5)'s
    eq13: str = "zero"          # "literal": eq. (13) without the 0 (T_c may be negative)
    proportion: str = "executed"    # "static": P over the PTX text, each instruction once
    n_trans: str = "sectors"    # "lines": N_trans in 128-byte lines per request

    CHOICES = {"eq2": ("per_sm", "printed"), "cpd": ("regime", "min"),
               "cpd_floor": ("one", "none"), "brackets": ("ceil", "plain"),
               "eq10": ("floor", "ceil"), "eq8_n": ("n_act", "eq5"),
               "eq13": ("zero", "literal"), "proportion": ("executed", "static"),
               "n_trans": ("sectors", "lines")}


def parse_readings(items) -> Readings:
    """``["eq2=printed", ...]`` (or a dict) -> Readings; one PtxcError for a bad item."""
    if isinstance(items, Readings) or items is None:
        return items or Readings()
    pairs = items.items() if isinstance(items, dict) else (
        s.partition("=")[::2] for s in items)
    kw = {}
    for name, value in pairs:
        name, value = name.strip(), str(value).strip()
        if name not in Readings.CHOICES:
            raise PtxcError(f"unknown reading '{name}' (known: "
                            f"{', '.join(Readings.CHOICES)}; docs/predict.md)")
        if value not in Readings.CHOICES[name]:
            raise PtxcError(f"reading '{name}' is one of "
                            f"{', '.join(Readings.CHOICES[name])}, not '{value}'")
        kw[name] = value
    return Readings(**kw)


@dataclass
class Inputs:
    """What the model needs of one launch (built by :mod:`.inputs`)."""
    kernel: str
    blocks: int                 # CTAs in the grid
    warps_per_block: int
    occupancy_blocks: int       # blocks per SM the occupancy calculator allows
    functions: list             # per executed function: [periods.BlockTasks]
    static_costs: tuple = (0.0, 0.0)    # (computation, memory) over the PTX text
    mix: dict = field(default_factory=dict)     # class -> warp instructions (TopDown)
    inst_executed: int = 0
    thread_inst_executed: int = 0
    notes: list = field(default_factory=list)


@dataclass
class Period:
    """One calculate period with its section 3.5 terms (fields of the
    shared interface, then ptxc's additions)."""
    block: str          # "function:block" whose instructions its tasks come from
    index: int          # its number within the block
    c: float            # c_i, GPU clocks
    m: float            # m_i
    kind: int           # 1, 2, 3 or 4
    t: float            # T_i (eq. 6, 7, 9 or 11)
    t_c: float          # T_c (eq. 8 or 13); 0 for types 1 and 3
    t_p: float          # T_p (eq. 10 or 12); 0 for types 1 and 2
    weight: float       # passes of the busiest SM's N_act active warps
    prev: str = "start"         # "block#index" of period i-1, or "start"
    c_prev: float = 0.0
    m_prev: float = 0.0
    warp_bwt: float = 0.0       # eq. (1) of its memory access task (0 without one)
    mpd: float = 0.0            # eq. (2) of its memory access task (0 without one)

    @property
    def cycles(self) -> float:
        return self.weight * self.t


@dataclass
class Prediction:
    kernel: str
    gpu: str
    sm_count: int
    clock_mhz: float
    schedulers: int
    share: float            # the busiest SM's share of the launch's CTAs
    active_warps: int       # N_act
    proportion: float       # P (section 3.4)
    cpd1: float
    cpd2: float
    cpd: float
    warp_bwt: float         # eq. (1) over all the launch's memory access tasks
    mpd: float              # eq. (2) with that Warp_bwt
    periods: list
    t_compute: float        # sum of weight x the eq. (6) term
    t_current: float        # sum of weight x T_c
    t_previous: float       # sum of weight x T_p
    cycles: float
    readings: dict = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        return self.cycles / (self.clock_mhz * 1e6)

    @property
    def bound(self) -> str:
        """'memory' when the memory waits (T_c + T_p) exceed the computation."""
        return "memory" if self.t_current + self.t_previous > self.t_compute else "computation"


# ------------------------------------------------------------ the equations

def warp_bandwidth(data_bytes: float, transactions: float, t_mem: float) -> float:
    """Eq. (1) for a memory access task: its instructions' D_mem and N_trans
    summed (one instruction: eq. (1) as printed). Bytes per GPU clock."""
    if transactions <= 0:
        return 0.0
    return N_THREAD * data_bytes / (transactions * t_mem)


def mpd(n_act: int, warp_bwt: float, gpu_bwt: float, n_sm: int, r: Readings) -> int:
    """Eq. (2): the warps whose memory accesses run in parallel. At least 1
    (section 3.3: serial execution is MPD = 1); without traffic, N_act."""
    if warp_bwt <= 0:
        return n_act
    per = n_act if r.eq2 == "printed" else 1
    return max(1, min(n_act, math.floor(gpu_bwt / (per * n_sm * warp_bwt) + _EPS)))


def cpd1(prop: float, n_act: float, a: float, b: float, c: float) -> float:
    """Eq. (3)."""
    return (c - prop) * (n_act - b) + a


def cpd2_n(prop: float, c: float, d: float) -> float:
    """Eq. (5): n = d (P - c)^2."""
    return d * (prop - c) ** 2


def cpd2(prop: float, n_act: float, m: float, a: float, c: float, d: float) -> float:
    """Eq. (4); the root's argument is 0 outside 1 <= N_act <= 2m - 1."""
    if m <= 1:
        return a
    n = cpd2_n(prop, c, d)
    return (n / (m - 1)) * math.sqrt(max(0.0, (m - 1) ** 2 - (n_act - m) ** 2)) + a


def cpd(prop: float, n_act: int, p, r: Readings) -> tuple:
    """(CPD1, CPD2, CPD) of section 3.4 under the readings ``r``."""
    a, b, c, d, m = (param(p, k) for k in "abcdm")
    v1, v2 = cpd1(prop, n_act, a, b, c), cpd2(prop, n_act, m, a, c, d)
    v = v2 if r.cpd == "regime" and prop >= c else min(v1, v2)
    if r.cpd_floor == "one":
        v = max(1.0, v)
    elif v <= 0:
        raise PtxcError(f"CPD = {v:.4g} <= 0 (P = {prop:.4g}, N_act = {n_act}): equations "
                        "(3)-(5) as printed give no time here; the default reading "
                        "cpd_floor=one keeps CPD >= 1 (docs/predict.md)")
    return v1, v2, v


def _ceil(x: float) -> float:
    return float(math.ceil(x - _EPS))


def period_time(c, m, c_prev, m_prev, mpd_prev, n_act, cpd_v, n5, r: Readings) -> tuple:
    """(type, T_i, T_c, T_p) of one calculate period (section 3.5,
    eq. 6-13); ``mpd_prev``: MPD of period i-1's memory access task,
    ``n5``: eq. (5)'s n (for the reading eq8_n=eq5)."""
    comp = n_act * c / cpd_v
    prev_long, cur_long = c_prev < m_prev, c < m
    kind = 1 + int(cur_long) + 2 * int(prev_long)
    comp = _ceil(comp) if (kind == 2 or r.brackets == "ceil") else comp
    t_p = 0.0
    if prev_long:
        x = n_act / mpd_prev - 1
        rounds = _ceil(x) if r.eq10 == "ceil" else float(math.floor(x + _EPS))
        t_p = max(m_prev * rounds - (n_act - 1) * c, 0.0)
    t_c = 0.0
    if kind == 2:
        n = n_act if r.eq8_n == "n_act" else n5
        t_c = max(m - (n - 1) * c, 0.0)
    elif kind == 4:
        t_c = m - ((n_act - 1) * c + t_p)
        t_c = max(t_c, 0.0) if r.eq13 == "zero" else t_c
    return kind, comp + t_c + t_p, t_c, t_p


def accuracy(t_test: float, t_model: float) -> float:
    """Eq. (14): P_acc = min{T_test, T_model} / max{T_test, T_model}."""
    if t_test <= 0 or t_model <= 0:
        raise PtxcError(f"accuracy needs two positive times, got {t_test} and {t_model}")
    return min(t_test, t_model) / max(t_test, t_model)


# ------------------------------------------------------------ the launch

def active_warps(inp: Inputs, sm_count: int) -> tuple:
    """(share, N_act): CTAs go round-robin over the SMs, so the busiest SM
    gets ceil(B / S) of the B CTAs; at most the occupancy's blocks are
    resident at a time, each with its warps."""
    per_sm = -(-inp.blocks // sm_count)
    resident = min(inp.occupancy_blocks, per_sm)
    return per_sm / inp.blocks, max(1, resident * inp.warps_per_block)


def proportion(inp: Inputs, r: Readings) -> float:
    """P of section 3.4: computation instructions' time cost / all
    instructions' time cost, over the executed instructions (each block's
    tasks times its warp executions) or, reading proportion=static, over
    the PTX text (each instruction once)."""
    if r.proportion == "static":
        comp, mem = inp.static_costs
    else:
        comp = mem = 0.0
        for blocks in inp.functions:
            for b in blocks:
                comp += b.execs * sum(t.cost for t in b.tasks if not t.memory)
                mem += b.execs * sum(t.cost for t in b.tasks if t.memory)
    return comp / (comp + mem) if comp + mem > 0 else 0.0


def predict(inp: Inputs, g, p, readings=None) -> Prediction:
    """The model for one launch on GPU ``g`` with parameters ``p`` (module doc)."""
    r = parse_readings(readings)
    n_sm = int(param(p, "n_sm"))
    t_mem, gpu_bwt = param(p, "t_mem"), param(p, "gpu_bwt")
    share, n_act = active_warps(inp, n_sm)
    prop = proportion(inp, r)
    v1, v2, cpd_v = cpd(prop, n_act, p, r)
    n5 = cpd2_n(prop, param(p, "c"), param(p, "d"))
    raw = [q for blocks in inp.functions for q in function_periods(blocks)]
    own = {}
    for q in raw:
        bw = warp_bandwidth(q.bytes, q.transactions, t_mem) if q.m > 0 else 0.0
        own[(q.block, q.index)] = (q.c, q.m, bw, mpd(n_act, bw, gpu_bwt, n_sm, r) if q.m > 0
                                   else 0)
    periods = []
    for q in raw:
        c_prev, m_prev, _, mpd_prev = own[q.prev] if q.prev else (0.0, 0.0, 0.0, 0)
        kind, t, t_c, t_p = period_time(q.c, q.m, c_prev, m_prev, mpd_prev, n_act, cpd_v, n5, r)
        _, _, bw, mp = own[(q.block, q.index)]
        periods.append(Period(q.block, q.index, q.c, q.m, kind, t, t_c, t_p,
                              q.passes * share / n_act,
                              f"{q.prev[0]}#{q.prev[1]}" if q.prev else "start",
                              c_prev, m_prev, bw, mp))
    t_c_sum = math.fsum(x.weight * x.t_c for x in periods)
    t_p_sum = math.fsum(x.weight * x.t_p for x in periods)
    t_comp = math.fsum(x.weight * (x.t - x.t_c - x.t_p) for x in periods)
    mem = [q for q in raw if q.m > 0]
    bw_all = warp_bandwidth(sum(q.passes * q.bytes for q in mem),
                            sum(q.passes * q.transactions for q in mem), t_mem)
    return Prediction(inp.kernel, g.key, n_sm, param(p, "clock_mhz"), g.schedulers_per_sm,
                      share, n_act, prop, v1, v2, cpd_v, bw_all,
                      mpd(n_act, bw_all, gpu_bwt, n_sm, r) if mem else 0, periods,
                      t_comp, t_c_sum, t_p_sum, t_comp + t_c_sum + t_p_sum, asdict(r))
