"""Kernel -> one LLVM function ``run_warp`` that runs one warp SIMT-style.

``i32 run_warp(ptr ws, ptr cta, ptr L, ptr segs, ptr cnt)`` executes one warp
until every lane has exited (returns ST_DONE), the warp reaches a CTA barrier
(ST_BARRIER, its state saved in ``ws``) or an error (ST_ERROR, details in
``ws``). Mixins: simt.py (control flow), frame.py (entry loads, register
slots), specials.py (special registers), values.py (reads, masked writes).
Design (docs/executor.md; DESIGN.md "The SIMT executor"):

* Registers are 32-lane vector slots (allocas promoted to SSA by LLVM);
  every write is masked by the executing lanes (values.py).
* Control flow: each plan node is an LLVM block. The active mask, the current
  reconvergence pc, the stack depth and the exited lanes live in allocas; the
  reconvergence stack (pc, rpc, mask) lives in ``ws``. A jump to node T whose
  pc equals the current reconvergence pc pops the stack and goes to the
  dispatcher (GPGPU-Sim's IPDOM stack: Fung et al., MICRO 2007); a divergent
  conditional branch turns the top entry into the reconvergence entry (or
  drops it when it already reconverges there) and pushes the two paths.
* Counting: each node adds 1 and popcount(mask) to its two counters; each
  conditional branch keeps SASSI's five numbers; each guarded instruction
  counts its pred-on lanes. Everything else is derived after the run.
* Hybrid mode: only instructions marked ``attrs['slice']`` are computed;
  terminators, guards, calls and barriers always are.
* Memory counters (``memory_counters`` = the shared-memory bank width, 0 =
  off): every measured load/store/atomic counts its lanes' addresses
  (mem_count.py); in hybrid mode also those outside the slice, without
  accessing memory (the slice then keeps their address computations).
* Fault checks: in hybrid mode with the slice option ``faults=checked``
  (the default), every checked access outside the slice runs its bounds
  and alignment checks without the access (fault_check.py).
* Each instruction's code starts in lowering_guard.py: a long straight run
  is cut into LLVM blocks (compile time linear in kernel size), a lowering
  that fails becomes a run-time "not supported yet" at its instruction.
"""
from __future__ import annotations

from ptxc import ir
from ptxc.errors import PtxcError
from ptxc.passes.memory.checked import checked
from ptxc.passes.memory.measured import access_kind

from ptxc.backends.llvm import layout as Lo
from ptxc.backends.llvm.frame import WarpFrame
from ptxc.backends.llvm.instruments.check_hooks import sync_hook
from ptxc.backends.llvm.instruments.fault_check import check_only
from ptxc.backends.llvm.instruments.mem_count import count_only
from ptxc.backends.llvm.instruments.provenance_ir import keep_root
from ptxc.backends.llvm.irtext import Fn, splat
from ptxc.backends.llvm.lowering_guard import LoweringGuard
from ptxc.backends.llvm.ops.mma import WHOLE_WARP_OPS
from ptxc.backends.llvm.plan import Plan
from ptxc.backends.llvm.simt import SimtMixin
from ptxc.backends.llvm.specials import SpecialRegs
from ptxc.backends.llvm.values import Values

SPIN_SEMANTICS = ("acquire", "relaxed", "volatile")


def is_spin_point(ins) -> bool:
    """Where a warp of a cooperative launch lets other CTAs run (coop.py):
    a global or generic load with .acquire/.relaxed/.volatile, nanosleep."""
    if ins.opcode == "nanosleep":
        return True
    if ins.opcode not in ("ld", "ldu") or not any(m in SPIN_SEMANTICS for m in ins.mods):
        return False
    return not any(m.split("::")[0] in ("shared", "local", "param", "const") for m in ins.mods)


WARP_FN = "run_warp"


def header(name: str) -> str:
    return (f"define i32 @{name}(ptr noalias %ws, ptr noalias %cta, ptr noalias %L, "
            "ptr noalias %segs, ptr noalias %cnt)")


def check_address_slice(plan: Plan, mode: str, memory_counters: int) -> None:
    """Hybrid memory counters read the address registers of instructions
    outside the slice: the slice must have been made with addresses=true."""
    kernel = plan.kernel
    if not memory_counters or mode != "hybrid" or not kernel.attrs.get("sliced"):
        return
    report = kernel.attrs.get("slice_report") or {}
    if not report.get("addresses") and report.get("faults") != "checked":
        raise PtxcError(f"kernel {kernel.name}: a hybrid run with memory counters needs the slice "
                        f"with addresses=true (ptxc.launcher.compile.ensure_slice does this)")


def checks_faults(plan: Plan, mode: str) -> bool:
    """Does a hybrid run check the accesses its slice skips (the slice was
    made with faults=checked, which keeps their addresses)?"""
    kernel = plan.kernel
    if mode != "hybrid" or not kernel.attrs.get("sliced"):
        return False
    return (kernel.attrs.get("slice_report") or {}).get("faults") == "checked"


class KernelCodegen(SimtMixin, WarpFrame, SpecialRegs, Values, LoweringGuard):
    """Generates the LLVM IR text of one kernel's ``run_warp``."""

    def __init__(self, plan: Plan, mode: str, name: str = WARP_FN, memory_counters: int = 0):
        from ptxc.backends.llvm.ops.table import OPS
        self.name = name
        self.memory_counters = memory_counters   # shared bank bytes (4 or 8), 0 = off
        self.level = 0              # LLVM optimisation level the code is for (jit.py)
        self.zeroed = None          # indices of the slots zeroed when a warp starts (frame.py)
        self.memcheck = False       # record invalid accesses and go on (memcheck.py)
        self.value_profile = False  # profile register values (value_prof.py)
        self.value_ctr: dict[int, list] = {}   # instr id -> [(dst, register, bits, base)]
        self.value_or: list[int] = []          # counters OR-reduced over workers
        self.initcheck = False      # track initialised global memory (initcheck.py)
        self.checks: tuple = ()     # racecheck / synccheck hooks (check_hooks.py)
        self.mem_ctr: dict[int, dict[str, int]] = {}   # instr id -> {space: counter base}
        check_address_slice(plan, mode, memory_counters)
        self.ops = OPS
        self.plan, self.mode = plan, mode
        self.checks_faults = checks_faults(plan, mode)
        self.f = Fn(header(name))
        self.vcache: dict[int, str] = {}
        self.f.on_label = self.vcache.clear
        self.slot_offsets: dict[int, int] = {}
        self.slot_names: dict[int, str] = {}
        self.frame_end = 0
        self.decls: set[str] = set()
        self.helpers: dict[str, str] = {}
        self.n_nodes = len(plan.nodes)
        self.branch_ctr: dict[int, int] = {}      # instr id -> counter base (5 counters)
        self.guard_ctr: dict[int, int] = {}       # instr id -> pred-on counter
        self.next_ctr = 2 * self.n_nodes
        self.resume_labels: list[str] = []
        self.uses_global_atomics = False
        self.uses_heap = False
        self.launches_grids = False         # device-side launches (ops/cdp_calls.py)
        self.writes_global = False          # kept st/atom/red that may reach a buffer
        self.has_barrier = False
        self.stack_depth = 2 * len(plan.nodes) + 64
        self.stack_markers: list = []       # saves and restores of a call stack (ops/call_frames.py)
        if plan.recursive:
            from ptxc.backends.llvm.ops.call_frames import RECURSION_ENTRIES
            self.stack_depth += RECURSION_ENTRIES
        self.frame_base = (Lo.WS_STACK + Lo.STACK_ENTRY * self.stack_depth + 255) // 256 * 256
        self.inst = plan.root
        self.cur = None
        self.em = self.emi = None
        self.instr_at: list[int] = []   # index in f.lines where each lowered instruction starts
        self.instr_of: list = []        # ... and that instruction (instr_of_line)

    # ------------------------------------------------------------ driver
    def generate(self) -> str:
        """The LLVM module text of this kernel alone."""
        self.generate_function()
        return self.module_text()

    def generate_function(self) -> None:
        """Generate without assembling a module (for batches: codegen.module_text)."""
        f = self.f
        self.mask_a = f.alloca("i32", "mask.a", 4)
        self.rpc_a = f.alloca("i32", "rpc.a", 4)
        self.sp_a = f.alloca("i32", "sp.a", 4)
        self.ex_a = f.alloca("i32", "ex.a", 4)
        self.steps_a = f.alloca("i64", "steps.a", 8)
        self.cur_a = f.alloca("i32", "cur.a", 4)
        self.prologue_scalars()
        self.zero_slots = self.undefined_slots()
        self.zeroed = {s.index for s in self.zero_slots}
        self.dispatcher()
        for node in self.plan.nodes:
            self.gen_node(node)
        self.common_exits()

    def keep(self, ins: ir.Instr) -> bool:
        if self.mode == "full":
            return True
        fn = ins.block.function if ins.block is not None else None
        if fn is None or not fn.attrs.get("sliced"):
            return True
        return bool(ins.attrs.get("slice", False))

    # ------------------------------------------------------------- nodes
    def gen_node(self, node) -> None:
        f = self.f
        self.inst, self.node = node.inst, node
        f.label(f"N{node.id}")
        m = f.load("i32", self.mask_a, 4)
        over = f.call("i1", "ptxc_enter", [("ptr", "%cnt"), ("ptr", "%cta"), ("ptr", self.steps_a),
                                           ("i64", str(2 * node.id)), ("i64", str(len(node.instrs))),
                                           ("i32", m), ("i64", self.max_steps)])
        f.store("i32", str(node.id), self.cur_a, 4)
        body = f.fresh_label(f"N{node.id}.body")
        f.cbr(over, "steperr", body)
        f.label(body, dominated=True)
        self.set_mask(m)
        if node.prev is not None and node.prev.callee is not None:
            self.copy_returns(node.prev)
        elif node.prev is not None and node.prev.indirect:
            from ptxc.backends.llvm.ops.indirect_calls import indirect_returns
            indirect_returns(self, node.prev)
        term = node.block.terminator if node.next is None else None
        for ins in node.instrs:
            if ins is term or ins is node.call:
                continue
            self.instr(ins)
        if node.call is not None:
            self.enter_call(node)
        else:
            self.end_block(node, term)

    def set_mask(self, m: str) -> None:
        self.m = m
        self.mv = self.f.cast("bitcast", "i32", m, "<32 x i1>")
        self.em, self.emi = self.mv, m

    def popc(self, m: str) -> str:
        v = self.f.call("i32", "llvm.ctpop.i32", [("i32", m)])
        self.decls.add("declare i32 @llvm.ctpop.i32(i32)")
        return self.f.cast("zext", "i32", v, "i64")

    def bump(self, idx: int, amount: str) -> None:
        self.f.call("void", "ptxc_add", [("ptr", "%cnt"), ("i64", str(idx)), ("i64", amount)])

    def bump_popc(self, idx: int, m_i32: str) -> None:
        self.f.call("void", "ptxc_popc_add", [("ptr", "%cnt"), ("i64", str(idx)), ("i32", m_i32)])

    def new_counters(self, n: int) -> int:
        base = self.next_ctr
        self.next_ctr += n
        return base

    # ------------------------------------------------------ instructions
    def guard_mask(self, ins) -> str:
        """Executing lanes of a guarded instruction (<32 x i1>), counted."""
        g = self.read(ins.guard, "pred")
        if ins.guard_neg:
            g = self.f.val(f"xor <32 x i1> {g}, {splat('i1', 'true')}")
        eff = self.f.val(f"and <32 x i1> {g}, {self.mv}")
        iid = self.plan.instr_id(self.inst, ins)
        if iid not in self.guard_ctr:
            self.guard_ctr[iid] = self.new_counters(1)
        effi = self.f.cast("bitcast", "<32 x i1>", eff, "i32")
        self.bump_popc(self.guard_ctr[iid], effi)
        return eff

    def instr(self, ins) -> None:
        self.cur = ins
        self.start_instr(ins)           # lowering_guard.py
        if ins.guard is not None:
            self.em = self.guard_mask(ins)
            self.emi = self.f.cast("bitcast", "<32 x i1>", self.em, "i32")
        else:
            self.em, self.emi = self.mv, self.m
        op = ins.opcode
        if op in WHOLE_WARP_OPS:          # checked even where the slice drops it
            self.whole_warp_check()
        if self.checks:
            sync_hook(self, ins)        # racecheck / synccheck variants (check_hooks.py)
        if op in ("bar", "barrier"):
            self.barrier(ins)
            if self.value_profile:
                from ptxc.backends.llvm.instruments.value_prof import profile_barrier
                profile_barrier(self, ins)
        elif self.keep(ins):
            handler = self.ops.get(op)
            if handler is None:
                self.unsupported(ins)
            else:
                if self.value_profile:
                    from ptxc.backends.llvm.instruments.value_prof import WriteProfile
                    vp = WriteProfile(self, ins)
                self.lower(ins, handler, ins)
                if op in ("ld", "ldu"):
                    keep_root(self, ins)    # provenance_ir.py: loaded pointers a check reads
                if self.value_profile:
                    vp.after()
        elif self.checks_faults and checked(ins):
            self.lower(ins, check_only, ins)
        elif self.memory_counters and access_kind(ins) is not None:
            self.lower(ins, count_only, ins)
        if is_spin_point(ins):
            self.spin_point()
        self.em, self.emi = self.mv, self.m

    def whole_warp_check(self) -> None:
        """Stop unless all 32 lanes execute this instruction; the error's
        address field carries the mask of the lanes that do."""
        missing = self.f.val(f"xor i32 {self.emi}, -1")
        self.fail_if(missing, Lo.ERR_PARTIAL_WARP, None, scalar=self.emi)

    def spin_point(self) -> None:
        """In a cooperative launch (L_COOP), hand the baton to the next CTA
        (coop.py) if any lane executed this instruction; stop when the
        launch is stopping. Emitted whether or not the slice keeps the
        instruction, so hybrid and full runs interleave CTAs alike."""
        f = self.f
        self.decls.add("declare i32 @ptxc_yield(i64, i32)")
        coop = f.icmp("ne", "i32", f.field("i32", "%L", Lo.L_COOP), "0")
        ran = f.icmp("ne", "i32", self.emi, "0")
        go, skip = f.fresh_label("spin"), f.fresh_label("spinskip")
        f.cbr(f.val(f"and i1 {coop}, {ran}"), go, skip)
        f.label(go, dominated=True)
        cta = f.cast("zext", "i32", f.field("i32", "%cta", Lo.CTA_LINEAR), "i64")
        stop = f.call("i32", "ptxc_yield", [("i64", cta), ("i32", str(self.iid()))])
        self.fail_if(f.val(f"select i1 {f.icmp('ne', 'i32', stop, '0')}, i32 {self.emi}, i32 0"),
                     Lo.ERR_COOP_ABORT, "zeroinitializer")
        f.br(skip)
        f.label(skip)

    def iid(self, ins=None) -> int:
        return self.plan.instr_id(self.inst, ins or self.cur)

    def unsupported(self, ins, what: str | None = None) -> None:
        """Executing this instruction ends the run with 'not supported yet'."""
        self.unsupported_ids = getattr(self, "unsupported_ids", {})
        self.unsupported_ids[self.iid(ins)] = what or ins.full_opcode
        self.fail_if(self.emi, Lo.ERR_UNSUPPORTED, "zeroinitializer")

    def fail_if(self, bad_i32: str, code: int, addrs: str | None, scalar: str | None = None) -> None:
        """If any lane of ``bad_i32`` is set: record the error and return.
        The error's address is the failing lane's of ``addrs`` (<32 x i64>),
        or the i32 ``scalar`` zero-extended (computed in the error block: no
        vector stays alive past the test, docs/performance.md)."""
        f = self.f
        err, ok = f.fresh_label("err"), f.fresh_label("ok")
        f.cbr(f.icmp("ne", "i32", bad_i32, "0"), err, ok)
        f.label(err)
        lane = f.call("i32", "llvm.cttz.i32", [("i32", bad_i32), ("i1", "true")])
        self.decls.add("declare i32 @llvm.cttz.i32(i32, i1)")
        if scalar is not None:
            addr = f.cast("zext", "i32", scalar, "i64")
        else:
            addr = f.val(f"extractelement <32 x i64> {addrs}, i32 {lane}")
        f.call("void", "report", [("ptr", "%ws"), ("i32", str(code)), ("i32", str(self.iid())),
                                  ("i32", lane), ("i64", addr)])
        f.emit("ret i32 2")
        f.label(ok, dominated=True)

    # ------------------------------------------------------ common exits
    def common_exits(self) -> None:
        f = self.f
        self.cur = None
        f.label("done")
        self.save_scalars()
        f.emit(f"ret i32 {Lo.ST_DONE}")
        f.label("save")
        self.save_scalars()
        f.emit(f"ret i32 {Lo.ST_BARRIER}")
        f.label("yieldsave")
        self.save_scalars()
        f.emit(f"ret i32 {Lo.ST_YIELD}")
        f.label("exitlanes")
        ex = f.load("i32", self.ex_a, 4)
        f.store("i32", f.val(f"or i32 {ex}, {f.load('i32', self.mask_a, 4)}"), self.ex_a, 4)
        f.br("dispatch")
        self.error_exit("steperr", Lo.ERR_STEPS)
        self.error_exit("stackerr", Lo.ERR_STACK)
        self.error_exit("badpc", Lo.ERR_STACK)

    def error_exit(self, label: str, code: int) -> None:
        f = self.f
        f.label(label)
        node = f.load("i32", self.cur_a, 4)
        self.save_scalars()
        f.call("void", "report", [("ptr", "%ws"), ("i32", str(code)), ("i32", node),
                                  ("i32", "0"), ("i64", "0")])
        f.emit(f"ret i32 {Lo.ST_ERROR}")

    def save_scalars(self) -> None:
        f = self.f
        f.set_field("i32", f.load("i32", self.sp_a, 4), "%ws", Lo.WS_SP)
        f.set_field("i32", f.load("i32", self.ex_a, 4), "%ws", Lo.WS_EXITED)
        f.set_field("i64", f.load("i64", self.steps_a, 8), "%ws", Lo.WS_STEPS, 8)

    # ---------------------------------------------------------- assembly
    def function_text(self) -> str:
        """The text of ``run_warp`` alone (helpers and declarations apart);
        assembled once (it completes the dispatcher)."""
        if getattr(self, "_text", None) is None:
            self._text = self._assemble()
        return self._text

    def _assemble(self) -> str:
        f = self.f
        if self.plan.recursive:
            from ptxc.backends.llvm.ops.call_frames import fill_markers
            fill_markers(self)
        f.lines.insert(self.dispatch_at, self.switch_text())
        init = self.slot_init_lines()
        self.ws_size = (self.frame_base + self.frame_end + 255) // 256 * 256
        if self.plan.recursive:        # the save area of the call stack follows the warp state
            f.entry.append(f"  %savearea = getelementptr inbounds i8, ptr %ws, i64 {self.ws_size}")
        body = "\n".join(f.lines)
        return "\n".join([header(self.name) + " {", "entry:", *f.entry, *self.pro, *init, body, "}"])

    def module_text(self) -> str:
        return module_text([self])

    # ------------------------------------------------------------ vectors
    def bcast(self, scalar: str, t: str) -> str:
        f = self.f
        v = f.val(f"insertelement <32 x {t}> poison, {t} {scalar}, i32 0")
        return f.val(f"shufflevector <32 x {t}> {v}, <32 x {t}> poison, <32 x i32> zeroinitializer")


def module_text(gens: list) -> str:
    """One LLVM module holding the ``run_warp`` of each generator."""
    return module_text_of([g.function_text() for g in gens], gens)


def module_text_of(funcs: list, gens: list) -> str:
    """One LLVM module of the function texts ``funcs`` and the helpers and
    declarations their generators ``gens`` need; the helpers of
    helper_lib.py are compiled apart (at O2): the module declares those it
    calls."""
    from ptxc.backends.llvm import helper_lib
    from ptxc.backends.llvm.prelude_ir import MEM_ERROR, PRELUDE, PRELUDE_DECLS, REPORT, RESOLVE
    helpers, decls = {}, set(PRELUDE_DECLS)
    for g in gens:
        helpers.update(g.helpers)
        decls.update(g.decls)
    kept, lib = helper_lib.split(helpers)
    texts, lib_decls = helper_lib.renamed([*funcs, *kept.values()], lib)
    decls.update(lib_decls)
    resolve = [] if "ptxc_resolve" in lib else [RESOLVE]
    return "\n\n".join([*texts, PRELUDE, *resolve, MEM_ERROR, REPORT, *sorted(decls)]) + "\n"
