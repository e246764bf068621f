"""The execution plan of one kernel: code segments (nodes), inlined calls,
register slots, reconvergence points, counters and the memory layout.
Over 400 lines: it is one job, one structure built together (nodes belong
to inlined instances, and slots and placed symbols are keyed by instance);
the module-level layout at its end is the part that module memory shares
with every kernel (runtime.ModuleMemory).

Calls to ``.func`` bodies are inlined: every call site gets its own
*instance* of the callee. A call of a function that is already on the
instance chain (recursion) is not inlined again: it *re-enters* that
ancestor instance, whose state goes on the thread's call stack
(ops/call_frames.py); instances of recursive functions are *framed*: every
call into them pushes a frame, their ``.local`` variables live in it, and
their ``ret`` returns to the continuation of the call that entered them
(``ret_pc``, a pseudo pc the SIMT stack reconverges at). A basic block is cut after
each ``call`` into *nodes*; a node is a straight run of instructions executed
with one active mask, so it is the unit of counting (METRICS.md: per block
``warp_execs`` and ``thread_execs``). The first node of a block carries the
block's numbers; a continuation node after a call is counted on its own (its
mask can be smaller when lanes exited inside the callee).

Register slots: the SSA form built by ptxc.frontend.ssa is *conventional* (values
joined by a phi never interfere, the IR docstring), so every SSA value lives
in the slot of the PTX register it came from and phis need no code
(Sreedhar et al. 1999). A slot is keyed by (instance, declaration): ``{ }``
scopes that redeclare a name get their own slot.

Reconvergence: the immediate post-dominator of a branch block
(ptxc.passes.postdomtree); the virtual exit means the call's continuation in
a callee and "never" (EXIT_PC) in the kernel.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ptxc import ir
from ptxc.errors import PtxcError
from ptxc.ir.types import TYPE_SIZES

from ptxc.passes.slice.memory_deps import CDP_EXTERNS as CDP_NAMES
from ptxc.backends.llvm.layout import (EXIT_PC, SEG_CONST, SEG_GLOBALS, SEG_LOCAL, SEG_PARAM,
                                       SEG_SHARED, seg_shift)

CC_REG = "%cc"
# external functions with a built-in meaning: vprintf records a printf,
# __assertfail / __assert_fail a failed device assertion (ops/builtin.py,
# ops/device_calls.py), malloc / free use the device heap (ops/device_heap.py,
# ops/heap_calls.py), the device runtime's launch calls record device-side
# launches (ops/cdp_calls.py, ops/device_launch.py)
BUILTIN_CALLS = ("vprintf", "__assertfail", "__assert_fail", "malloc", "free") + CDP_NAMES
DYNAMIC = -1        # offset of extern unsized .shared arrays: plan.dyn_shared_base
PROMOTE_BUDGET = 40_000   # registers x nodes up to which O2 keeps every register in registers


@dataclass
class Instance:
    """One inlined copy of a function body."""
    id: int
    fn: ir.Function
    parent: "Instance | None"
    call: ir.Instr | None          # the call site in the parent
    ret_node: "Node | None" = None  # where ``ret`` continues (None in the kernel)
    pdt: object = None
    framed: bool = False           # an instance of a recursive function (ops/call_frames.py)
    frame_size: int = 0            # bytes of its .local variables in each frame (framed only)


@dataclass
class Node:
    """A straight run of one block's instructions with one active mask."""
    id: int
    inst: Instance
    block: ir.Block
    seg: int                       # 0: block entry; k: after the k-th call
    instrs: list                   # the PTX instructions (no phis)
    call: ir.Instr | None = None   # the node ends by entering this call
    callee: Instance | None = None
    next: "Node | None" = None     # continuation after the call
    prev: "Node | None" = None     # for a continuation: the node that made the call
    reentry: bool = False          # the call re-enters ``callee``, an ancestor instance
    chain: tuple = ()              # re-entry: the instances callee .. caller, saved on the stack
    indirect: list | None = None   # an indirect call: [(function address, Instance)] it may enter

    @property
    def name(self) -> str:
        suffix = f"+{self.seg}" if self.seg else ""
        return f"{self.inst.fn.name}:{self.block.name}{suffix}"


@dataclass
class Slot:
    index: int
    type: str          # PTX register type
    bits: int          # 1 for predicates
    local: bool = False   # never read outside the node that writes it (local_regs.py)
    register: bool = False   # a PTX register's slot (not a var_slot or a checker's slot)


@dataclass
class Placed:
    """Where a symbol lives: its space, segment, offset and Variable."""
    space: str
    seg: int
    offset: int
    var: object
    per_lane: bool = False
    frame: "Instance | None" = field(default=None, compare=False, repr=False)
    # ^ a framed instance's .local variable: ``offset`` is in its frame


def decode_call(ins: ir.Instr):
    """(rets, target, args) of ``call (rets), target, (args), ...``."""
    rets, target, args = [], None, []
    for d in ins.dsts:
        if isinstance(d, ir.ParenList):
            rets = list(d.items)
    for op in ins.srcs:
        if target is None:
            if isinstance(op, ir.ParenList):
                rets = list(op.items)
            else:
                target = op
        elif isinstance(op, ir.ParenList):
            args = list(op.items)
            break
    return rets, target, args


def align_up(x: int, a: int) -> int:
    return (x + a - 1) // a * a


def var_align(var) -> int:
    a = var.align or TYPE_SIZES.get(var.type, 1) * max(var.vec, 1)
    return max(1, a)


class Plan:
    """Everything the code generator and the runtime need to know statically."""

    def __init__(self, module: ir.Module, kernel: ir.Function, max_inline: int = 2048):
        self.module, self.kernel = module, kernel
        from ptxc.backends.llvm.layout import seg_shift
        self.shift = seg_shift(module)          # generic address = segment << shift | offset
        self.instances: list[Instance] = []
        self.nodes: list[Node] = []
        self.first_node: dict[tuple[int, int], Node] = {}
        self.slots: dict[tuple, Slot] = {}
        self.local_regs = False                 # mark local registers (local_regs.py)
        self._local: dict[int, set] = {}        # instance id -> its local slot keys
        self._regs_in_ws = None
        self.slot_list: list[Slot] = []
        self.instr_ids: dict[tuple[int, int], int] = {}   # (inst id, id(instr)) -> id
        self.instr_table: list[tuple[Instance, ir.Instr]] = []
        self.instr_node: list[Node] = []
        self.max_inline = max_inline
        self.no_callee: dict[int, str] = {}     # call -> why it is not inlined
        self._globals = {v.name: v for v in module.globals}
        self._funcs: dict[str, ir.Function] = {}
        for f in module.functions:
            if f.name not in self._funcs or not f.is_decl:
                self._funcs[f.name] = f
        self._placed: dict[tuple, Placed] = {}
        self._scope_vars: dict[int, dict] = {}
        self.param_layout = self._layout_params(kernel)
        self.param_size = align_up(max([o + v.size for v, o in self.param_layout.values()] + [0]), 8)
        segment = 1 << seg_shift(module)
        self.const_layout, self.const_size = module_space_layout(module, "const", segment)
        self.global_layout, self.global_size = module_space_layout(module, "global", segment)
        self.shared_layout: dict[tuple, int] = {}
        self.shared_static = 0
        self.local_size = 0
        self.has_dynamic_shared = False
        self.func_globals: list = []            # function-scope .global variables: (var, offset)
        self.recursive_fns = recursive_functions(self._funcs)
        self.framed_calls: list = []            # call nodes into framed instances
        self._taken = None                      # the address-taken functions (indirect calls)
        root = self._instantiate(kernel, None, None)
        self.root = root
        self._place_all()
        self.dyn_shared_base = align_up(self.shared_static, 16)
        self.local_size = align_up(self.local_size, 16)

    # --------------------------------------------------------- instances
    def _instantiate(self, fn: ir.Function, parent, call) -> Instance:
        from ptxc.passes.postdomtree import PostDomTree
        from ptxc.ir.passmanager import AnalysisManager
        inst = Instance(len(self.instances), fn, parent, call)
        inst.pdt = AnalysisManager(self.module).get(PostDomTree, fn)
        inst.framed = fn in self.recursive_fns
        self.instances.append(inst)
        for blk in fn.blocks:
            self._make_nodes(inst, blk)
        return inst

    @staticmethod
    def _ancestor(inst: Instance, fn) -> "Instance | None":
        """The nearest instance of ``fn`` on ``inst``'s call chain (itself included)."""
        while inst is not None and inst.fn is not fn:
            inst = inst.parent
        return inst

    def _make_nodes(self, inst: Instance, blk: ir.Block) -> None:
        body = [i for i in blk.instrs if not i.is_phi]
        seg, start, prev = 0, 0, None
        for k, ins in enumerate(body):
            if ins.opcode != "call":
                continue
            node = self._new_node(inst, blk, seg, body[start:k + 1], prev)
            node.call = ins
            callee = self._callee(ins)
            if callee == "indirect call":
                node.indirect = self._indirect_callees(inst, ins)
            elif isinstance(callee, str):
                self.no_callee[id(ins)] = callee
            elif (home := self._ancestor(inst, callee)) is not None:   # recursion: re-enter
                node.callee, node.reentry = home, True
                chain, x = [], inst
                while x is not home:
                    chain.append(x)
                    x = x.parent
                node.chain = tuple([home] + chain[::-1])
            elif len(self.instances) < self.max_inline:
                node.callee = self._instantiate(callee, inst, ins)
            else:       # too many: executing this call is a run-time error
                self.no_callee[id(ins)] = f"more than {self.max_inline} inlined calls"
            if node.callee is not None and node.callee.framed:
                self.framed_calls.append(node)
            prev, seg, start = node, seg + 1, k + 1
        self._new_node(inst, blk, seg, body[start:], prev)   # the continuation (or whole block)

    def _new_node(self, inst, blk, seg, instrs, prev) -> Node:
        node = Node(len(self.nodes), inst, blk, seg, instrs)
        self.nodes.append(node)
        if seg == 0:
            self.first_node[(inst.id, blk.index)] = node
        if prev is not None:
            prev.next, node.prev = node, prev
            if prev.callee is not None and not prev.reentry:
                prev.callee.ret_node = node
            for _, callee in prev.indirect or ():
                callee.ret_node = node
        for ins in instrs:
            self.instr_ids[(inst.id, id(ins))] = len(self.instr_table)
            self.instr_table.append((inst, ins))
            self.instr_node.append(node)
        return node

    def _callee(self, ins: ir.Instr):
        """The called Function, or a string saying why the call cannot be
        inlined (executing it is then a run-time error, or a builtin)."""
        _, target, _ = decode_call(ins)
        if not isinstance(target, ir.Sym):
            return "indirect call"
        fn = self._funcs.get(target.name)
        if fn is None or fn.is_decl or not fn.blocks:
            if target.name in BUILTIN_CALLS:
                return f"builtin {target.name}"
            return f"call of external function '{target.name}'"
        return fn

    def _indirect_callees(self, inst: Instance, ins: ir.Instr) -> list:
        """[(address, Instance)]: an inlined instance of every function the
        indirect call may enter (ptxc/ir/call_targets.py); a candidate
        already on the call chain or recursive is left out (a lane calling
        it is a run-time error: ops/indirect_calls.py)."""
        from ptxc.ir.call_targets import address_taken, function_address, matches, prototype
        if self._taken is None:
            self._taken = address_taken(self.module)
        proto, out = prototype(ins), []
        for fn in (f for f in self._taken if matches(f, proto)):
            if (self._ancestor(inst, fn) is not None or fn in self.recursive_fns
                    or len(self.instances) >= self.max_inline):
                continue
            out.append((function_address(self.module, fn.name, self.shift),
                        self._instantiate(fn, inst, ins)))
        return out

    # ------------------------------------------------------------ queries
    def node_of(self, inst: Instance, blk: ir.Block) -> Node:
        return self.first_node[(inst.id, blk.index)]

    def reconvergence_pc(self, inst: Instance, blk: ir.Block) -> int:
        r = inst.pdt.ipdom(blk)
        if r is None:
            return self.ret_pc(inst)
        return self.node_of(inst, r).id

    def ret_pc(self, inst: Instance) -> int:
        """Where ``ret`` of ``inst`` continues: the call's continuation node,
        EXIT_PC in the kernel, or for a framed instance (entered from several
        call sites and depths) its return pseudo pc: the call pushed a SIMT
        entry that reconverges there (ops/call_frames.py)."""
        if inst.framed:
            return ret_pseudo_pc(inst)
        return inst.ret_node.id if inst.ret_node is not None else EXIT_PC

    @property
    def recursive(self) -> bool:
        """Does the kernel call a recursive function (so it needs a call stack)?"""
        return bool(self.framed_calls)

    def instr_id(self, inst: Instance, ins: ir.Instr) -> int:
        return self.instr_ids[(inst.id, id(ins))]

    # -------------------------------------------------------------- slots
    def slot(self, inst: Instance, v: ir.Value) -> Slot | None:
        """The slot of a register value (None for Undef / unresolvable)."""
        key = self._slot_key(inst, v)
        if key is None:
            return None
        s = self.slots.get(key)
        if s is None:
            t = v.type if v.reg != CC_REG else "pred"
            bits = 1 if t in ("pred", "cc") else TYPE_SIZES.get(t, 4) * 8
            s = self.slots[key] = Slot(len(self.slots), t, bits, self._is_local(inst, key), True)
            self.slot_list.append(s)
        return s

    @property
    def registers_in_warp_state(self) -> bool:
        """Must every register stay in the warp state? Yes when ``run_warp``
        may return before the warp ends and resume later (a CTA barrier or an
        mbarrier wait: simt.py), losing what it held elsewhere, when
        tensor-core code addresses the registers in the warp state directly
        (ops/mma_outline.py), and when registers x nodes exceeds
        PROMOTE_BUDGET: LLVM then builds a phi per register at the dispatcher
        for every node that returns to it, and O2's compile time grows with
        the product (docs/performance.md, "Registers")."""
        if self._regs_in_ws is None:
            regs = {(inst.id, r.reg) for inst, ins in self.instr_table for r in ins.results}
            self._regs_in_ws = (len(regs) * len(self.nodes) > PROMOTE_BUDGET
                                or any(ins.opcode in ("bar", "barrier", "mbarrier")
                                       or ins.info is not None and ins.info.family == "tensor"
                                       for _, ins in self.instr_table))
        return self._regs_in_ws

    def _is_local(self, inst: Instance, key) -> bool:
        if not self.local_regs:
            return False
        keys = self._local.get(inst.id)
        if keys is None:
            from ptxc.backends.llvm.local_regs import local_keys
            keys = self._local[inst.id] = local_keys(inst, self)
        return key in keys

    def formal_var(self, fn, name: str):
        """The register Var of a ``.reg`` parameter of ``fn`` (old-style PTX),
        or of one component (``p.x``) of a vector parameter ``.reg .v2 .u32 p``."""
        def is_formal(p):
            return p.space == "reg" and (p.name == name or
                                         (p.vec and name.startswith(p.name + ".")))
        if not any(is_formal(p) for p in list(fn.params) + list(fn.rets)):
            return None
        scope = fn.scope
        return scope.find(name) if scope is not None and hasattr(scope, "find") else None

    def var_slot(self, inst: Instance, var) -> Slot:
        key = (inst.id, id(var))
        s = self.slots.get(key)
        if s is None:
            bits = 1 if var.type == "pred" else TYPE_SIZES.get(var.type, 4) * 8
            s = self.slots[key] = Slot(len(self.slots), var.type, bits)
            self.slot_list.append(s)
        return s

    def _slot_key(self, inst: Instance, v: ir.Value):
        if v.reg == CC_REG:
            return (inst.id, CC_REG)
        var = getattr(v, "var", None)          # phi results remember their register
        if var is None and isinstance(v, ir.Result):
            scope = v.instr.scope
            var = scope.find(v.reg) if scope is not None and hasattr(scope, "find") else None
        if var is None and isinstance(v, (ir.Argument, ir.Undef)):   # a .reg parameter of a .func
            var = self.formal_var(inst.fn, v.reg)
        if var is None:
            if isinstance(v, ir.Result):
                return (inst.id, "reg", v.reg)
            return None
        return (inst.id, id(var))

    # -------------------------------------------------------------- symbols
    def resolve(self, inst: Instance, ins: ir.Instr, name: str) -> Placed:
        var = self._lookup(inst.fn, ins, name)
        if var is None:
            raise PtxcError(f"unknown symbol '{name}' at line {ins.loc.line}", ins.loc)
        return self._place(inst, var)

    def _lookup(self, fn, ins, name):
        scope = ins.scope
        while scope is not None:
            d = self._scope_vars.get(id(scope))
            if d is None:
                d = self._scope_vars[id(scope)] = {v.name: v for v in scope.vars}
            if name in d:
                return d[name]
            scope = scope.parent
        for v in list(fn.params) + list(fn.rets):
            if v.name == name:
                return v
        v = self._globals.get(name)
        if v is not None:
            return v
        return self._funcs.get(name)

    def _place(self, inst: Instance, var) -> Placed:
        if isinstance(var, ir.Function):
            return Placed("func", 0, 0, var)
        space = var.space
        if space == "param" and inst.fn is self.kernel and var in self.kernel.params:
            return Placed("param", SEG_PARAM, self.param_layout[var.name][1], var)
        if space == "const":
            return Placed("const", SEG_CONST, self.const_layout[var.name], var)
        if space == "global" and var.name in self.global_layout and var in self.module.globals:
            return Placed("global", SEG_GLOBALS, self.global_layout[var.name], var)
        if space == "shared":
            return Placed("shared", SEG_SHARED, self._shared_offset(inst, var), var)
        if space in ("local", "param", "reg"):
            key = (inst.id, id(var))
            p = self._placed.get(key)
            if p is None and space == "local" and inst.framed:   # in the frame of each activation
                off = align_up(inst.frame_size, var_align(var))
                inst.frame_size = off + max(var.size, 1)
                p = self._placed[key] = Placed("local", SEG_LOCAL, off, var, True, frame=inst)
            if p is None:
                off = align_up(self.local_size, var_align(var))
                self.local_size = off + max(var.size, 1)
                p = self._placed[key] = Placed("local", SEG_LOCAL, off, var, True)
            return p
        if space == "global":      # function-scope .global: one per module
            key = ("g", id(var))
            if key not in self._placed:
                off = align_up(self.global_size, var_align(var))
                self.global_size = off + max(var.size, 1)
                self.global_layout[var.name + f"@{id(var)}"] = off
                self.func_globals.append((var, off))
                self._placed[key] = Placed("global", SEG_GLOBALS, off, var)
            return self._placed[key]
        raise PtxcError(f"not supported yet: variables in the .{space} space ('{var.name}')", var.loc)

    def _shared_offset(self, inst, var) -> int:
        if not var.dims or var.dims[-1] is not None or var.size:
            key = ("s", id(var))
            if key not in self.shared_layout:
                off = align_up(self.shared_static, var_align(var))
                self.shared_static = off + var.size
                self.shared_layout[key] = off
            return self.shared_layout[key]
        self.has_dynamic_shared = True
        return DYNAMIC   # extern unsized: the dynamic area, after every static variable

    def _place_all(self) -> None:
        """Place every symbol the instantiated code mentions (layout does not
        depend on the run mode)."""
        for inst in self.instances:
            for v in list(inst.fn.params) + list(inst.fn.rets):
                if inst.parent is not None:
                    self._place(inst, v)
        for inst, ins in self.instr_table:
            for op in list(ins.srcs) + list(ins.dsts):
                for name in _symbols(op):
                    var = self._lookup(inst.fn, ins, name)
                    if var is not None:
                        self._place(inst, var)

    # ------------------------------------------------------- module layout
    def _layout_params(self, kernel) -> dict:
        out, off = {}, 0
        for v in kernel.params:
            a = var_align(v)
            off = align_up(off, a)
            out[v.name] = (v, off)
            off += max(v.size, 1)
        return out



@dataclass
class ModuleLayout:
    """Where the module-level .const and .global variables live (the fields
    Plan has too, so module memory can be initialised from either)."""
    module: ir.Module
    shift: int
    const_layout: dict
    const_size: int
    global_layout: dict
    global_size: int
    func_globals: tuple = ()


def module_layout(module) -> ModuleLayout:
    shift = seg_shift(module)
    consts, const_size = module_space_layout(module, "const", 1 << shift)
    globals_, global_size = module_space_layout(module, "global", 1 << shift)
    return ModuleLayout(module, shift, consts, const_size, globals_, global_size)


def module_space_layout(module, space: str, most: int | None = None):
    """({name: offset}, size) of the module-level variables of ``space``
    ('const' or 'global'): the same for every kernel of the module, so module
    memory can outlive one launch (ptxc.backends.llvm.runtime.ModuleMemory).
    Variables past ``most`` bytes (one segment: 16 MiB in a 32-bit module;
    the parser refuses more than 4 GiB) are refused at the variable."""
    out, off = {}, 0
    for v in module.globals:
        if v.space != space:
            continue
        off = align_up(off, max(var_align(v), 8 if v.size >= 8 else 1))
        out[v.name] = off
        off += max(v.size, 1)
        if most is not None and off + 16 > most:
            raise PtxcError(f"not supported yet: variable '{v.name}' brings the module's "
                            f".{space} variables past {most >> 20} MiB, one segment of ptxc's "
                            f"memory in a module of .address_size {32 if most < 1 << 32 else 64}",
                            v.loc)
    return out, align_up(off, 16)


def ret_pseudo_pc(inst: Instance) -> int:
    """The return pseudo pc of a framed instance (never a node, never dispatched)."""
    return EXIT_PC - 1 - inst.id


def recursive_functions(funcs: dict) -> set:
    """The defined functions that can reach themselves through calls (a
    call graph cycle); ``funcs``: name -> Function."""
    callees = {}
    for f in funcs.values():
        out = set()
        for blk in f.blocks:
            for ins in blk.instrs:
                if ins.opcode == "call":
                    _, target, _ = decode_call(ins)
                    g = funcs.get(target.name) if isinstance(target, ir.Sym) else None
                    if g is not None and g.blocks and not g.is_decl:
                        out.add(g)
        callees[f] = out
    rec = set()
    for f in callees:
        seen, todo = set(), list(callees[f])
        while todo:
            g = todo.pop()
            if g is f:
                rec.add(f)
                break
            if g not in seen:
                seen.add(g)
                todo.extend(callees.get(g, ()))
    return rec


def _symbols(op):
    if isinstance(op, ir.Sym):
        yield op.name
    elif isinstance(op, ir.Addr) and isinstance(op.base, ir.Sym):
        yield op.base.name
    elif isinstance(op, (ir.Vec, ir.ParenList)):
        for item in op.items:
            yield from _symbols(item)
