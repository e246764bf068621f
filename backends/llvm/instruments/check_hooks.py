"""Code generation and callbacks of the racecheck and synccheck variants.

A launch under ``check="racecheck"`` or ``"synccheck"`` runs a compiled
variant of its own (jit.compile_kernel(..., racecheck=True)), as memcheck does
(memcheck.py): the default code is unchanged. The variant

* at every shared-memory ``ld``/``st``/``atom``/``red``/``cp.async``
  (and ``ldmatrix``/``stmatrix``: ops/ldmatrix.row_pointers)
  (racecheck; a generic access only when one of its lanes falls in the
  shared window) calls the native ``ptxc_race(L, cta, ws, i32 id, ptr
  addrs, i32 lanes, i32 kind, i32 nbytes, i64 lowmask)`` of
  racecheck_ir.py with the 32 lane addresses and the lanes that access; it
  calls back into Python (ctypes) only when it finds hazards:
  ``ptxc_race_report(L, cta, ws, i32 id, i32 kind, i32 nbytes, ptr shadow)``;
* at a named barrier (an arrive, an id other than 0 or a thread count:
  ``bar.arrive 1, 64``, ``bar.sync 1, 64``; :func:`is_named`) calls
  ``ptxc_race_bar(L, cta, ws, i32 event, i32 id, i32 count, ptr state)``
  in Python (racecheck; racecheck_mbar.NamedBarriers): the arrive, the
  sync, and the warp's resume after the sync;
* at every CTA barrier a warp reaches (``bar.sync 0``, ``barrier.sync``,
  ``bar.red``) and every ``bar.warp.sync`` calls
  the native ``ptxc_race_sync(cta, ws, i32 event)`` (racecheck) and
  ``ptxc_sync(L, cta, ws, i32 id, i32 event, i32 lanes, ptr masks, i32 sp)``
  in Python (synccheck; ``sp``: the reconvergence stack depth, whose entries
  below the top say where the lanes that do not execute will resume);
* at a ``.sync`` warp collective (``shfl``, ``vote``, ``match``, ``redux``,
  ``elect``) whose member mask names a live lane that does not execute it,
  or leaves out an executing lane, calls ``ptxc_sync`` (synccheck; tested in
  the generated code, so a correct collective costs no call).
* after an ``mbarrier.init``, ``arrive``/``arrive_drop`` and a
  ``test_wait``/``try_wait`` true for some executing lane (ops/mbarrier.py)
  calls ``ptxc_race_mbar(L, cta, ws, i32 event, i32 lanes, ptr ptrs, ptr
  vals, ptr counts, ptr shadow)`` in Python (racecheck; racecheck_mbar.py:
  the lanes' mbarrier addresses, their tokens or the parities waited on,
  the arrival counts).

The callbacks find the launch's checker (racecheck.RaceChecker,
synccheck.SyncChecker) by its launch-state address; see :class:`active`.
"""
from __future__ import annotations

import ctypes
import functools
import threading

from ptxc import ir
from ptxc.backends.llvm import callbacks
from ptxc.backends.llvm import layout as Lo
from ptxc.backends.llvm.irtext import LANE_IDS, splat
from ptxc.backends.llvm.instruments.memcheck import KIND_STORE
from ptxc.backends.llvm.ops.access import spill_addr

EV_BARRIER, EV_WARPSYNC, EV_COLLECTIVE = 0, 1, 2
BAR_ARRIVE, BAR_SYNC, BAR_RESUME = 0, 1, 2       # ptxc_race_bar events (named barriers)
COLLECTIVE_MASK = {"shfl": 3, "vote": 1, "match": 1, "redux": 1, "elect": 0}   # membermask operand
TOOLS = ("racecheck", "synccheck")

RACE_ARGS = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32,
             ctypes.c_int32, ctypes.c_void_p)                  # ptxc_race_report's, void
BAR_ARGS = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32, ctypes.c_uint32,
            ctypes.c_uint32, ctypes.c_void_p)                   # ptxc_race_bar's, void
MBAR_ARGS = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32, ctypes.c_uint32,
             ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)  # ptxc_race_mbar's
SYNC_ARGS = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32,
             ctypes.c_uint32, ctypes.c_void_p, ctypes.c_int32)                 # ptxc_sync's, void


# ------------------------------------------------------------ codegen
def race_hook(cg, addr: str | None, a_tmp: str | None, emi: str, kind: int, nbytes: int,
              generic: bool) -> None:
    """After the checks of a shared (or generic) access: check its lanes
    ``emi`` (i32) and addresses (``addr`` <32 x i64>, or already in ``a_tmp``)
    against the shadow memory (racecheck_ir.py). A ``st`` sets
    ``cg.race_store`` (its values) first: a write-after-write of the same
    value is found by comparing them."""
    data = getattr(cg, "race_store", None)
    cg.race_store = None
    if "racecheck" not in getattr(cg, "checks", ()):
        return
    from ptxc.backends.llvm.instruments import racecheck_ir
    if nbytes > racecheck_ir.MAX_NBYTES:
        raise ValueError(f"internal error: racecheck of a {nbytes}-byte access")
    f = cg.f
    a_tmp = a_tmp or spill_addr(cg, addr)
    lanes = emi
    if generic:                 # only lanes in the shared window
        a = f.load("<32 x i64>", a_tmp, 64)
        seg = f.val(f"lshr <32 x i64> {a}, {splat('i64', cg.plan.shift)}")
        sh = f.val(f"icmp eq <32 x i64> {seg}, {splat('i64', Lo.SEG_SHARED)}")
        lanes = f.val(f"and i32 {f.cast('bitcast', '<32 x i1>', sh, 'i32')}, {emi}")
    _race_helpers(cg)
    lowmask = (1 << cg.plan.shift) - 1 if generic else -1
    if kind == KIND_STORE:
        _store_values(cg, data, a_tmp, lowmask)
    call_if(cg, lanes, "ptxc_race", None,
            [("ptr", "%L"), ("ptr", "%cta"), ("ptr", "%ws"), ("i32", str(cg.iid())),
             ("ptr", a_tmp), ("i32", lanes), ("i32", str(kind)), ("i32", str(nbytes)),
             ("i64", str(lowmask))])


def _store_values(cg, data, a_tmp: str, lowmask: int) -> None:
    """The values a store writes (``data``: [(LLVM type, <32 x T>)], one per
    vector element; None: unknown), its lane addresses and offset mask, in
    the racecheck state's H_DATA / H_ADDRS / H_LOWMASK (racecheck_ir.py)."""
    from ptxc.backends.llvm.instruments import racecheck_ir as R
    from ptxc.backends.llvm.irtext import vt
    f = cg.f
    buf, size = "null", 0
    if data:
        size = int(data[0][0][1:]) // 8 if data[0][0].startswith("i") else \
            {"float": 4, "double": 8}[data[0][0]]
        buf = f.alloca(f"[{32 * size * len(data)} x i8]", "rstore", 64)
        for i, (lt, v) in enumerate(data):
            f.store(vt(lt), v, f.gep(buf, 32 * size * i), 8)
    h = f.call("ptr", "ptxc_race_state", [("ptr", "%cta")])
    go, done = f.fresh_label("rdata"), f.fresh_label("rdataok")
    f.cbr(f.icmp("ne", "ptr", h, "null"), go, done)
    f.label(go, dominated=True)
    f.set_field("ptr", buf, h, R.H_DATA, 8)
    f.set_field("ptr", a_tmp, h, R.H_ADDRS, 8)
    f.set_field("i64", str(lowmask), h, R.H_LOWMASK, 8)
    f.set_field("i64", str(size), h, R.H_ESIZE, 8)
    f.br(done)
    f.label(done, dominated=True)


def _race_helpers(cg) -> None:
    from ptxc.backends.llvm.instruments import racecheck_ir
    cg.helpers.setdefault("ptxc_race", racecheck_ir.TEXT)
    cg.decls.update(racecheck_ir.DECLS)


def sync_hook(cg, ins) -> None:
    """Before a barrier, ``bar.warp.sync`` or ``.sync`` collective (see module doc)."""
    checks = getattr(cg, "checks", ())
    if not checks:
        return
    op, mods = ins.opcode, ins.mods
    if op in ("bar", "barrier"):
        named = "warp" not in mods and is_named(ins)
        if "arrive" in mods:
            if named and "racecheck" in checks:
                _race_named(cg, ins, BAR_ARRIVE)
            return
        event = EV_WARPSYNC if "warp" in mods else EV_BARRIER
        if "racecheck" in checks and named:     # ordering by the barrier's phase; the warp's lanes too
            _race_named(cg, ins, BAR_SYNC)
            _race_sync(cg, EV_WARPSYNC)
        elif "racecheck" in checks:
            _race_sync(cg, event)
        if "synccheck" in checks:
            _event(cg, event, _mask_operand(cg, ins, 0) if event == EV_WARPSYNC else None,
                   always=True)
        return
    if op in COLLECTIVE_MASK and "sync" in mods and "synccheck" in checks:
        _event(cg, EV_COLLECTIVE, _mask_operand(cg, ins, COLLECTIVE_MASK[op]), always=False)


def is_named(ins) -> bool:
    """Is a ``bar``/``barrier`` instruction (not ``.warp``) other than a plain
    CTA barrier ``bar.sync 0``: an arrive, a barrier id other than the
    immediate 0, or a thread count? racecheck orders those by the barrier's
    phases (racecheck_mbar.NamedBarriers), not by the CTA's barrier count:
    not every warp passes them."""
    if "arrive" in ins.mods:
        return True
    n_ops = len(ins.srcs) - (1 if "red" in ins.mods else 0)     # bar.red's last operand: the predicate
    if n_ops >= 2:
        return True
    a = ins.srcs[0] if ins.srcs else None
    return not (isinstance(a, ir.Imm) and int(a.value) == 0)


def _first_lane_value(cg, op) -> str:
    """An operand's value (i32) in the first executing lane (barrier ids and
    counts are warp-uniform)."""
    f = cg.f
    v = cg.read(op, "u32")
    lane = f.val(f"and i32 {f.call('i32', 'llvm.cttz.i32', [('i32', cg.emi), ('i1', 'false')])}, 31")
    return f.val(f"extractelement <32 x i32> {v}, i32 {lane}")


def _race_named(cg, ins, event: int) -> None:
    """racecheck: a named barrier's arrive (the warp releases what it did so
    far) or sync (and, when it resumes, acquires the phase: race_resume_hook)."""
    n_ops = len(ins.srcs) - (1 if "red" in ins.mods else 0)
    bid = _first_lane_value(cg, ins.srcs[0]) if ins.srcs else "0"
    count = _first_lane_value(cg, ins.srcs[1]) if n_ops >= 2 else "0"
    _race_bar_call(cg, event, bid, count)


def _race_bar_call(cg, event: int, bid: str, count: str) -> None:
    _race_helpers(cg)
    h = cg.f.call("ptr", "ptxc_race_state", [("ptr", "%cta")])
    call_if(cg, cg.emi, "ptxc_race_bar", "declare void @ptxc_race_bar(ptr, ptr, ptr, i32, i32, i32, ptr)",
            [("ptr", "%L"), ("ptr", "%cta"), ("ptr", "%ws"), ("i32", str(event)), ("i32", bid),
             ("i32", count), ("ptr", h)])


def race_resume_hook(cg, ins) -> None:
    """racecheck: a warp resumes after a named ``bar.sync``: it acquires what
    the warps that arrived in the phase it waited on released."""
    if "racecheck" not in getattr(cg, "checks", ()) or "warp" in ins.mods or not is_named(ins):
        return
    _race_bar_call(cg, BAR_RESUME, "0", "0")


def _race_sync(cg, event: int) -> None:
    """racecheck: the warp passes a barrier (ep, wep) or __syncwarp (wep)."""
    _race_helpers(cg)
    call_if(cg, cg.emi, "ptxc_race_sync", None,
            [("ptr", "%cta"), ("ptr", "%ws"), ("i32", str(event))])


def race_mbar_hook(cg, event: int, lanes: str, p_ptrs: str, p_vals: str,
                   p_counts: str | None) -> None:
    """racecheck: an mbarrier arrive (event 0: ``lanes`` arrived; state
    pointers, tokens and counts spilled at ``p_*``), successful wait (1:
    ``lanes`` waited true; ``p_vals`` the parities waited on) or init (2),
    recorded by racecheck_mbar.py."""
    if "racecheck" not in getattr(cg, "checks", ()):
        return
    _race_helpers(cg)
    h = cg.f.call("ptr", "ptxc_race_state", [("ptr", "%cta")])
    call_if(cg, lanes, "ptxc_race_mbar",
            "declare void @ptxc_race_mbar(ptr, ptr, ptr, i32, i32, ptr, ptr, ptr, ptr)",
            [("ptr", "%L"), ("ptr", "%cta"), ("ptr", "%ws"), ("i32", str(event)),
             ("i32", lanes), ("ptr", p_ptrs), ("ptr", p_vals), ("ptr", p_counts or "null"),
             ("ptr", h)])


def _mask_operand(cg, ins, k: int) -> str:
    if k >= len(ins.srcs):
        return splat("i32", -1)
    return cg.read(ins.srcs[k], "b32")


def _event(cg, event: int, masks: str | None, always: bool) -> None:
    f = cg.f
    lanes = cg.emi
    mtmp = "null"
    if masks is not None:
        mtmp = f.alloca("<32 x i32>", "smask", 64)
        f.store("<32 x i32>", masks, mtmp, 64)
        if not always:
            lanes = f.select("i1", f.icmp("ne", "i32", bad_lanes(cg, masks), "0"), "i32", cg.emi, "0")
    sp = f.load("i32", cg.sp_a, 4)
    call_if(cg, lanes, "ptxc_sync", "declare void @ptxc_sync(ptr, ptr, ptr, i32, i32, i32, ptr, i32)",
            [("ptr", "%L"), ("ptr", "%cta"), ("ptr", "%ws"), ("i32", str(cg.iid())),
             ("i32", str(event)), ("i32", cg.emi), ("ptr", mtmp), ("i32", sp)])


def bad_lanes(cg, masks: str) -> str:
    """i32: executing lanes whose member mask names a live lane that does not
    execute, or leaves the lane itself out."""
    f = cg.f
    valid = f.field("i32", "%ws", Lo.WS_VALID)
    exited = f.field("i32", "%ws", Lo.WS_EXITED)
    live = f.val(f"and i32 {valid}, {f.val(f'xor i32 {exited}, -1')}")
    absent = f.val(f"and i32 {live}, {f.val(f'xor i32 {cg.emi}, -1')}")
    missing = f.val(f"and <32 x i32> {masks}, {cg.bcast(absent, 'i32')}")
    self_bit = f.val(f"shl <32 x i32> {splat('i32', 1)}, {LANE_IDS}")
    ones = splat("i32", -1)
    inverted = f.val(f"xor <32 x i32> {masks}, {ones}")
    self_out = f.val(f"and <32 x i32> {inverted}, {self_bit}")
    bad = f.val(f"or <32 x i32> {missing}, {self_out}")
    bad = f.val(f"select <32 x i1> {cg.em}, <32 x i32> {bad}, <32 x i32> zeroinitializer")
    cg.decls.add("declare i32 @llvm.vector.reduce.or.v32i32(<32 x i32>)")
    return f.val(f"call i32 @llvm.vector.reduce.or.v32i32(<32 x i32> {bad})")


def call_if(cg, lanes: str, name: str, decl: str | None, args) -> None:
    """``call name(args)`` when ``lanes`` (i32) is not 0 (``decl``: its
    declaration, None for a function the module defines)."""
    f = cg.f
    go, done = f.fresh_label("chk"), f.fresh_label("chkok")
    f.cbr(f.icmp("ne", "i32", lanes, "0"), go, done)
    f.label(go, dominated=True)
    if decl:
        cg.decls.add(decl)
    f.call("void", name, args)
    f.br(done)
    f.label(done, dominated=True)


# ---------------------------------------------------------- callbacks
_checkers: dict[int, list] = {}
_failed: dict[int, BaseException] = {}       # L -> the first exception of a callback
_lock = threading.Lock()


class active:
    """``with active(L address, [checkers]):`` the launch's hooks go to the
    checkers (each has ``access(...)`` and/or ``sync(...)``, see below)."""

    def __init__(self, L: int, checkers: list):
        self.L, self.checkers = L, checkers

    def __enter__(self):
        with _lock:
            _checkers[self.L] = self.checkers
        return self.checkers

    def __exit__(self, *exc):
        with _lock:
            _checkers.pop(self.L, None)
            failed = _failed.pop(self.L, None)
        if failed is not None and exc[0] is None:     # a checker bug: never a silent wrong report
            raise RuntimeError("a check callback failed") from failed


def _race(L, cta, ws, iid, kind, nbytes, shadow) -> None:
    for c in _checkers.get(L, ()):
        if hasattr(c, "access"):
            c.access(L, cta, ws, iid, kind, nbytes, shadow)


def _mbar(L, cta, ws, event, lanes, ptrs, vals, counts, h) -> None:
    for c in _checkers.get(L, ()):
        if hasattr(c, "mbarrier") and h:
            c.mbarrier(event, lanes, ptrs, vals, counts, ws, h)


def _bar(L, cta, ws, event, bid, count, h) -> None:
    for c in _checkers.get(L, ()):
        if hasattr(c, "barrier") and h:
            c.barrier(event, bid, count, L, ws, h)


def _sync(L, cta, ws, iid, event, lanes, masks, sp) -> None:
    for c in _checkers.get(L, ()):
        if hasattr(c, "sync"):
            c.sync(L, cta, ws, iid, event, lanes, masks, sp)


def _safe(fn):
    @functools.wraps(fn)
    def wrapped(*a):
        try:
            fn(*a)
        except Exception as e:          # never let an exception cross the native frames
            with _lock:
                _failed.setdefault(a[0], e)
    return wrapped


_race_cb = callbacks.c_function(_safe(_race), None, *RACE_ARGS)
_sync_cb = callbacks.c_function(_safe(_sync), None, *SYNC_ARGS)
_mbar_cb = callbacks.c_function(_safe(_mbar), None, *MBAR_ARGS)
_bar_cb = callbacks.c_function(_safe(_bar), None, *BAR_ARGS)


def register_symbols(binding) -> None:
    """Make ``ptxc_race_report``, ``ptxc_sync``, ``ptxc_race_mbar`` and
    ``ptxc_race_bar`` resolvable by the JIT."""
    callbacks.add_symbols(binding, {"ptxc_race_report": _race_cb, "ptxc_sync": _sync_cb,
                                     "ptxc_race_mbar": _mbar_cb, "ptxc_race_bar": _bar_cb})
