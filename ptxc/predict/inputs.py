"""Build the model's Inputs for one launch: a Profile with memory counters,
the module it ran, a GPU model and its parameters (docs/predict.md, "3.2").

* Occupancy from ptxc.gpus.occupancy (blocks per SM) and the launch shape.
* Per executed block (``Profile.per_block``): its tasks (section 3.2), each
  costed from Table 1 (:mod:`.costs`); per memory access instruction D_mem
  (bytes per thread) and N_trans (eq. 1): the instruction's transactions
  per request from ``Profile.per_memory_instr`` (32-byte sectors, or
  128-byte lines with the reading n_trans=lines; atomics: distinct
  addresses per request). An instruction the counters do not measure
  (``.local``, textures, ``cp.async``) gets the count of a coalesced warp,
  ceil(32 x D_mem / 32) sectors (or / 128 lines).
* Per executed block, the threads along each CFG edge (exact): all of a
  block's threads for a fall-through or an unguarded ``bra``; ``taken`` /
  ``not_taken`` of ``Profile.per_branch`` for a guarded ``bra``; for
  ``brx.idx``, the block's threads split in proportion to its targets'
  threads; a guarded ``ret``/``exit`` passes to its fall-through block what
  that block's threads need beyond its other edges, and the rest leave.

A launch without memory counters is refused (N_trans needs them): `ptxc
predict` always collects them; `ptxc opt --topdown` needs
`--memory-counters`.
"""
from __future__ import annotations

from ..errors import PtxcError
from ptxc import ir
from ptxc.gpus.occupancy import occupancy
from .luo_suda import Inputs, parse_readings
from .mix import instruction_mix
from .periods import BlockTasks, Task
from .static_costs import ModuleCosts


def launch_inputs(module, prof: dict, g, regs, dynamic_shared: int, p, readings=None,
                  static: ModuleCosts | None = None) -> tuple:
    """(Inputs, Occupancy) of a launch; ``prof`` is ``Profile.to_dict()``,
    ``regs`` a kernel_resources.Registers, ``p`` the ModelParams,
    ``static`` the module's ModuleCosts under ``p`` (kept by a caller that
    predicts many launches of one module)."""
    r = parse_readings(readings)
    static = static or ModuleCosts(module, p)
    if not prof.get("memory_counters"):
        raise PtxcError(f"kernel '{prof['kernel']}': the model needs the memory counters "
                        "(run the launch with --memory-counters)")
    fn = next((k for k in module.kernels if k.name == prof["kernel"]), None)
    if fn is None:
        raise PtxcError(f"no kernel '{prof['kernel']}' in the module")
    threads = _product(prof["block"])
    occ = occupancy(g, regs.count, threads, static.static_shared(fn), dynamic_shared)
    if occ.blocks_per_sm == 0:
        raise PtxcError(f"kernel '{fn.name}': a block of {threads} threads does not fit on "
                        f"an SM of {g.key} ({', '.join(occ.limiters)})")
    per_block = prof["per_block"]
    mix = instruction_mix(module, per_block, static)    # refuses a block the module lacks
    executed = {k.split(":", 1)[0] for k, row in per_block.items() if row["warp_execs"]}
    functions, comp, mem = [], 0.0, 0.0
    for f in module.functions:
        if f.name not in executed:
            continue
        c, m = static.static_costs(f)
        comp, mem = comp + c, mem + m
        functions.append(function_blocks(f, prof, r, static))
    inp = Inputs(kernel=fn.name, blocks=_product(prof["grid"]),
                 warps_per_block=occ.warps_per_block, occupancy_blocks=occ.blocks_per_sm,
                 functions=functions, static_costs=(comp, mem),
                 mix=mix,
                 inst_executed=prof["inst_executed"],
                 thread_inst_executed=prof["thread_inst_executed"])
    return inp, occ


def function_blocks(f, prof: dict, r, static: ModuleCosts) -> list:
    """[BlockTasks] of function ``f``'s executed blocks (module doc)."""
    per_block, per_mem = prof["per_block"], prof.get("per_memory_instr") or {}
    key = {id(b): f"{f.name}:{b.name}" for b in f.blocks}
    threads = {id(b): (per_block.get(key[id(b)]) or {}).get("thread_execs", 0) for b in f.blocks}
    out = {}
    for b in f.blocks:
        row = per_block.get(key[id(b)])
        if row and row["warp_execs"]:
            out[id(b)] = BlockTasks(key[id(b)], row["warp_execs"],
                                    tasks(static.rows(key[id(b)]), per_mem, r))
    _flows(f, out, key, threads, prof.get("per_branch") or {})
    return list(out.values())


def tasks(rows, per_mem: dict, r) -> list:
    """The computation and memory access tasks (section 3.2) of a block's
    instructions (``rows``: ModuleCosts.rows)."""
    out: list = []
    for row in rows:
        if not out or out[-1].memory != row.memory:
            out.append(Task(row.memory, 0.0))
        t = out[-1]
        t.cost += row.cost
        if row.memory:
            t.bytes += row.bytes
            t.transactions += n_trans(per_mem.get(row.mem_key), row.bytes, r)
    return out


def n_trans(entry, d_mem: int, r) -> float:
    """N_trans of eq. (1) for one memory access instruction (module doc)."""
    num = req = 0
    for part in ("global", "shared"):
        c = (entry or {}).get(part)
        if not c or not c.get("requests"):
            continue
        req += c["requests"]
        if "addresses" in c:
            num += c["addresses"]
        elif part == "global" and r.n_trans == "lines":
            num += c["lines"]
        else:
            num += c["transactions"]
    if req:
        return num / req
    unit = 128 if r.n_trans == "lines" else 32
    return float(-(-N_LANES * d_mem // unit))


N_LANES = 32


def _flows(f, blocks: dict, key: dict, threads: dict, per_branch: dict) -> None:
    """Fill ``succ``, ``exit`` and ``entry`` of the BlockTasks (module doc)."""
    def add(src, dst, n):
        if dst is None:
            blocks[id(src)].exit += n
        elif n:
            d = blocks[id(src)].succ
            d[key[id(dst)]] = d.get(key[id(dst)], 0) + n
    deferred = []
    for b in f.blocks:
        if id(b) not in blocks:
            continue
        n, term, ft = threads[id(b)], b.terminator, b.fallthrough
        if term is None:
            add(b, ft, n)
        elif term.opcode == "bra":
            target = next((op.block for op in term.srcs if isinstance(op, ir.LabelRef)), None)
            pb = per_branch.get(key[id(b)]) if term.guard is not None else None
            if pb is None:
                add(b, target, n)
            else:
                add(b, target, pb["taken"])
                add(b, ft, pb["not_taken"])
        elif term.opcode == "brx":
            total = sum(threads[id(s)] for s in b.succs)
            for s in b.succs:
                add(b, s, n * threads[id(s)] / total if total else n / len(b.succs))
        elif term.guard is None or ft is None:
            add(b, None, n)
        else:
            deferred.append(b)
    for b in deferred:
        ft = b.fallthrough
        known = sum(x.succ.get(key[id(ft)], 0) for x in blocks.values())
        go = min(max(threads[id(ft)] - known, 0), threads[id(b)])
        add(b, ft, go)
        add(b, None, threads[id(b)] - go)
    entry = f.entry
    if entry is not None and id(entry) in blocks:
        known = sum(x.succ.get(key[id(entry)], 0) for x in blocks.values())
        blocks[id(entry)].entry = max(threads[id(entry)] - known, 0)


def _product(dims) -> int:
    n = 1
    for d in dims:
        n *= d
    return n
