"""Memory dependences for the branch slice: which writes a kept read may see.

A kept instruction that reads memory needs every instruction that may write a
byte it reads (Weiser's reaching definitions, for memory): stores, atomics,
reductions, async copies, mbarrier operations, surface writes, and calls to
code ptxc cannot see. Which writes "may" do so is decided by one of three
modes (``slice{memory=...}``):

``conservative`` (default)
    same state space; generic addressing may reach global, shared and local
    memory, so a generic read sees every write to those three spaces and a
    global/shared/local read also sees every generic write.
``refined``
    as conservative, except two accesses whose regions (slice_regions) are
    both known and provably disjoint: different named variables (all unsized
    ``extern .shared`` arrays are one region, dynamic shared memory), the same
    variable at non-overlapping constant offsets, a shared/local variable
    versus a kernel pointer parameter (the host can only pass global
    addresses). Sound for programs whose pointer arithmetic stays inside the
    object it started from (C's rule; LLVM's ``inbounds``).
``noalias``
    refined, plus: distinct kernel pointer parameters never alias each other
    nor a named global variable (``__restrict__`` on every pointer parameter).
    An assumption the user opts into; real CUDA code may break it.
``launch`` (with ``alias``: the pointer classes of one launch's arguments)
    refined, plus what the launch's argument values say (slice_launch): two
    kernel pointer parameters alias only when they point into the same
    allocation, a parameter aliases the named .global variables only when it
    points into them; a parameter of unknown class is an unknown region.
    Without ``alias`` (a static report) it is exactly ``conservative``.

Each mode is sound under its stated assumption. Writes are indexed once per
slicing universe by (space, region); a read pulls a whole bucket at most once
(memoised), so the closure stays linear in the number of accesses except for
constant-offset reads, which compare against the writers of their variable.
"""
from __future__ import annotations

from ptxc import ir

from ptxc.passes.memory.access import ALIAS_SPACES, GENERIC, Access, writes
from ptxc.passes.slice.calls import decode_call
from ptxc.passes.slice.alias_rules import AliasRules

MODES = ("conservative", "refined", "noalias", "launch")

# the device runtime's calls of dynamic parallelism (CUDA 12+ names and the
# older ones; backends/llvm/ops/device_launch.py): one state (parameter
# buffers, pending launches, the threads' last errors), so a result depends
# on every earlier such call; only StreamCreateWithFlags writes memory
_CDP = ("GetParameterBufferV2", "LaunchDeviceV2", "StreamCreateWithFlags", "StreamDestroy",
        "GetLastError", "PeekAtLastError")
CDP_EXTERNS = tuple(p + n for p in ("__cudaCDP2", "cuda") for n in _CDP)
CDP_LAUNCH = ("__cudaCDP2LaunchDeviceV2", "cudaLaunchDeviceV2")   # reads the parameter buffer
# external functions known not to write memory that the kernel can read back
PURE_EXTERNS = frozenset(("vprintf", "__assertfail", "__assert_fail", "malloc", "free")
                         + tuple(n for n in CDP_EXTERNS if not n.endswith("StreamCreateWithFlags")))
# the device heap's allocator: a malloc's result depends on every malloc and free
HEAP_EXTERNS = ("malloc", "free")
_EXTERN_SPACES = ("global", "shared", "local", GENERIC)


def region_key(region):
    """Bucket key of a region: ('sym', id) / ('param', name) / ('dynshared',)."""
    if region is None:
        return None
    if region[0] == "param":
        return region
    var = region[1]
    if var.space == "shared" and var.size == 0:
        return ("dynshared",)
    return ("sym", id(var))


def _var_space(region) -> str | None:
    return region[1].space if region is not None and region[0] == "sym" else None


def may_alias(r1, r2, noalias: bool, rules: AliasRules | None = None) -> bool:
    """May two known regions overlap? (Same bucket: yes, unless offsets say no.)
    ``rules`` (memory=launch) decide for kernel pointer parameters."""
    k1, k2 = region_key(r1), region_key(r2)
    if k1 == k2:
        return True
    if k1[0] == "param" and k2[0] == "param":
        return rules.params_alias(r1, r2) if rules is not None else not noalias
    if k1[0] == "param" or k2[0] == "param":
        param, other = (r1, r2) if k1[0] == "param" else (r2, r1)
        if _var_space(other) != "global":
            return False
        return rules.param_aliases_globals(param) if rules is not None else not noalias
    return False


def ranges_overlap(o1, s1, o2, s2) -> bool:
    if o1 is None or o2 is None or s1 is None or s2 is None:
        return True
    return o1 < o2 + s2 and o2 < o1 + s1


class Writer:
    """One indexed write: the instruction, its access, region and offset."""
    __slots__ = ("instr", "access", "region", "offset")

    def __init__(self, instr, access, region, offset):
        self.instr, self.access, self.region, self.offset = instr, access, region, offset


class FunctionWrites:
    """The writes of one function, indexed once and shared by every universe."""
    __slots__ = ("writers", "param_writers", "ret_sites", "extern_sites")

    def __init__(self, fn, program, rules: AliasRules, regions_of):
        self.writers: list[Writer] = []
        self.param_writers: list[tuple[int, object]] = []      # (id(var), st.param)
        self.ret_sites: list[tuple[int, object, int]] = []     # (id(var), site, j)
        self.extern_sites: list[tuple[str, object]] = []
        for ins in fn.instructions():
            if ins.opcode == "call":
                self._index_call(ins, program)
            elif ins.info is not None and ins.info.writes_mem:
                for acc in writes(ins):
                    self._index_write(fn, ins, acc, program, rules, regions_of)

    def _index_write(self, fn, ins, acc: Access, program, rules, regions_of) -> None:
        if acc.space == "param":
            if acc.addr is not None and isinstance(acc.addr.base, ir.Sym):
                var = program.resolve(ins, acc.addr.base.name)
                if var is not None:
                    self.param_writers.append((id(var), ins))
            return
        region = offset = None
        if rules.uses_regions:
            regions = regions_of(fn)
            region = rules.region(fn, regions.region(ins, acc.addr, acc.space))
            offset = regions.exact_offset(ins, acc.addr) if region is not None else None
        self.writers.append(Writer(ins, acc, region, offset))

    def _index_call(self, ins, program) -> None:
        site = decode_call(ins)
        for j, op in enumerate(site.rets):
            if isinstance(op, ir.Sym):
                var = program.resolve(ins, op.name)
                if var is not None:
                    self.ret_sites.append((id(var), site, j))
        if program.is_external(site):
            name = site.callee_name or "<indirect>"
            self.extern_sites.append((name, site))
            if name not in PURE_EXTERNS:
                for space in _EXTERN_SPACES:
                    self.writers.append(Writer(ins, Access("w", space), None, None))


DEVICE_SPACES = ("global", GENERIC)    # memory that other CTAs of the launch can write


class MemoryIndex:
    """Every write of one universe, bucketed by space and region."""

    def __init__(self, funcs, rules: AliasRules, regions_of, writes_of):
        self.rules = rules
        self.regions_of = regions_of
        self.unknown: dict[str, list[Writer]] = {}            # space -> writers, region unknown
        self.known: dict[str, dict[tuple, list[Writer]]] = {}   # space -> key -> writers
        self.param_writers: dict[int, list] = {}              # id(Variable) -> st.param
        self.ret_sites: dict[int, list] = {}                  # id(Variable) -> [(site, j)]
        self.extern_sites: dict[str, list] = {}               # extern name -> sites
        self._pulled: set = set()
        for fn in funcs:
            self._merge(writes_of(fn))

    def _merge(self, fw: FunctionWrites) -> None:
        for w in fw.writers:
            self._add(w)
        for key, ins in fw.param_writers:
            self.param_writers.setdefault(key, []).append(ins)
        for key, site, j in fw.ret_sites:
            self.ret_sites.setdefault(key, []).append((site, j))
        for name, site in fw.extern_sites:
            self.extern_sites.setdefault(name, []).append(site)

    def _add(self, w: Writer) -> None:
        space = w.access.space
        if w.region is None:
            self.unknown.setdefault(space, []).append(w)
        else:
            bucket = self.known.setdefault(space, {})
            bucket.setdefault(region_key(w.region), []).append(w)

    # -------------------------------------------------------------- queries
    def writers(self, ins, acc: Access, fn) -> list:
        """Instructions that may write what ``acc`` (a read of ``ins``) reads.

        Buckets already returned once are not returned again: their
        instructions are in the slice already.
        """
        region = offset = None
        if self.rules.uses_regions and acc.addr is not None:
            regions = self.regions_of(fn)
            region = self.rules.region(fn, regions.region(ins, acc.addr, acc.space))
            offset = regions.exact_offset(ins, acc.addr) if region is not None else None
        out: list = []
        for space in ALIAS_SPACES.get(acc.space, (acc.space,)):
            if region is None:
                self._pull_all(space, out)
            else:
                self._pull_region(space, region, offset, acc.size, out)
        return out

    def may_see_device_write(self, ins, acc: Access, fn) -> bool:
        """May read ``acc`` of ``ins`` see a write of this universe to global
        memory (a global or generic write, or an external call)? Then what a
        CTA reads may depend on what other CTAs wrote, and CTAs must run in
        the order METRICS.md defines. Unlike ``writers``, not memoised."""
        if acc.space not in DEVICE_SPACES:
            return False
        region = None
        if self.rules.uses_regions and acc.addr is not None:
            region = self.rules.region(fn, self.regions_of(fn).region(ins, acc.addr, acc.space))
        launch = self.rules if self.rules.launch else None
        for space in DEVICE_SPACES:
            if self.unknown.get(space):
                return True
            for ws in self.known.get(space, {}).values():
                if region is None or may_alias(region, ws[0].region, self.rules.noalias, launch):
                    return True
        return False

    def _once(self, key) -> bool:
        if key in self._pulled:
            return False
        self._pulled.add(key)
        return True

    def _pull_all(self, space: str, out: list) -> None:
        if not self._once(("all", space)):
            return
        self._pull_unknown(space, out)
        for key, ws in self.known.get(space, {}).items():
            if self._once(("key", space, key)):
                out.extend(w.instr for w in ws)

    def _pull_unknown(self, space: str, out: list) -> None:
        if self._once(("unknown", space)):
            out.extend(w.instr for w in self.unknown.get(space, ()))

    def _pull_region(self, space, region, offset, size, out) -> None:
        self._pull_unknown(space, out)
        rules = self.rules
        launch = rules if rules.launch else None
        for key, ws in self.known.get(space, {}).items():
            if ("key", space, key) in self._pulled or \
                    not may_alias(region, ws[0].region, rules.noalias, launch):
                continue
            if offset is None or key != region_key(region) or key[0] != "sym":
                self._pulled.add(("key", space, key))
                out.extend(w.instr for w in ws)
                continue
            out.extend(w.instr for w in ws
                       if ranges_overlap(offset, size, w.offset, w.access.size))
