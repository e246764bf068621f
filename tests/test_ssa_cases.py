"""SSA construction and the CFG analyses on the cases the SSA issue lists.

* ``--verify-each`` with every analysis on every PTX file in tests/cuda/.
* Out of SSA: ``--emit=ptx`` of every tests/cuda/*.ptx file is a fixed point
  (emit, re-parse, emit again gives the same bytes and the same IR), and ptxas
  accepts it and makes the same machine code as from the original (every
  section of the two cubins is byte-identical except the ``.nv_debug*`` ones,
  which hold PTX line numbers and the PTX text itself).
* Unstructured control flow: the ocelot/unstructured files of the shared
  corpus (skipped when the corpus is absent) through verify, postdomtree and
  reconvergence with the verifier after each pass; the post-dominator tree
  is compared with networkx's dominators of the reversed CFG.
* Guarded multi-result definitions (``@!%p setp p|q``, a guarded vector
  ``ld``, ``mov.b64 {lo, hi}``, the carry flag), with expected values derived
  by hand from the PTX text.
* ``ptxc passes`` lists every analysis with a summary.
"""
from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

import ptxc
from ptxc import ir
from ptxc.cli.main import cli
from ptxc.passes.cfg import CFG, defined_functions
from ptxc.passes.postdomtree import PostDomTree
from ptxc.passes.pipeline import run_pipeline

REPO = Path(__file__).resolve().parent.parent
CUDA = REPO / "tests" / "cuda"
CUDA_FILES = sorted(CUDA.glob("*.ptx"))
# Hand-written lit inputs that are whole PTX modules ptxas must accept.
LIT_MODULES = [REPO / "lit-tests" / "ssa" / "scopes-shadow.ptx"]
UNSTRUCTURED = REPO.parent / "shared" / "corpus" / "ocelot" / "unstructured"
PTXAS = shutil.which("ptxas")

ANALYSES = ["verify", "cfg", "domtree", "postdomtree", "reconvergence", "control-dep", "loops"]


def _id(p: Path) -> str:
    return p.name


def _bodies(module) -> list[str]:
    return [f.name for f in defined_functions(module)]


# ------------------------------------------------------------ verify-each

def test_cuda_files_present():
    assert len(CUDA_FILES) >= 30, "tests/cuda/*.ptx went missing"


@pytest.mark.parametrize("path", CUDA_FILES, ids=_id)
def test_verify_each_every_analysis(path):
    """`ptxc opt --verify-each --pass=verify,cfg,...,loops,print-ir FILE`
    succeeds and every analysis reports every function with a body."""
    r = CliRunner().invoke(cli, ["opt", "--verify-each",
                                 "--pass=" + ",".join(ANALYSES + ["print-ir"]), str(path)])
    assert r.exit_code == 0, r.output
    names = _bodies(ptxc.load(str(path)))
    assert f"verify: ok ({len(names)} functions)" in r.output
    for name in names:
        for header in (f"cfg @{name}:", f"domtree @{name}\n", f"postdomtree @{name}\n",
                       f"reconvergence @{name}:", f"control-dep @{name}\n", f"loops @{name}:"):
            assert header in r.output, (header, path.name)


# ------------------------------------------------------------ out of SSA

@pytest.mark.parametrize("path", CUDA_FILES + LIT_MODULES, ids=_id)
def test_emit_ptx_is_a_fixed_point(path):
    """emit -> parse -> emit gives the same bytes, and the re-parsed module
    has the same SSA IR (so out-of-SSA loses nothing the IR holds)."""
    module = ptxc.load(str(path))
    first = module.to_ptx()
    again = ptxc.parse(first, str(path))
    assert again.to_ptx() == first
    assert again.print_ir() == module.print_ir()
    assert not any(line.lstrip().startswith("phi") for line in first.splitlines())


def _arch(module) -> str:
    return next(t for t in module.target if t.startswith("sm_"))


def _ptxas(src: Path, out: Path, arch: str, relocatable: bool = False) -> subprocess.CompletedProcess:
    """ptxas of ``src``; ``relocatable``: with --compile-only (-c), for
    relocatable device code whose extern functions another object defines."""
    return subprocess.run([PTXAS, f"-arch={arch}", *(["-c"] if relocatable else []), str(src),
                           "-o", str(out)], capture_output=True, text=True, timeout=300)


def elf_sections(path: Path) -> dict[str, bytes]:
    """Section name -> contents of a 64-bit little-endian ELF file (a cubin)."""
    data = path.read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 2, "not a 64-bit ELF file"
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
               for i in range(shnum)]
    strtab = headers[shstrndx][4]
    out = {}
    for name_off, kind, _, _, offset, size, *_ in headers:
        end = data.index(b"\0", strtab + name_off)
        name = data[strtab + name_off:end].decode()
        out[name] = b"" if kind == 8 else data[offset:offset + size]   # 8: SHT_NOBITS
    return out


def _is_debug(section: str) -> bool:
    return section.lstrip(".").removeprefix("rela.").removeprefix("rel.").startswith("nv_debug")


@pytest.mark.skipif(PTXAS is None, reason="ptxas not on PATH")
@pytest.mark.parametrize("path", CUDA_FILES + LIT_MODULES, ids=_id)
def test_emitted_ptx_compiles_to_the_same_code(path, tmp_path):
    """ptxas accepts the emitted PTX and gives the same cubin as for the
    original, up to debug sections (line tables, embedded PTX text)."""
    module = ptxc.load(str(path))
    arch = _arch(module)
    emitted = tmp_path / "emitted.ptx"
    emitted.write_text(module.to_ptx())
    rdc = path.name.endswith(".rdc.ptx")       # nvcc -rdc=true (tests/cuda/build.sh)
    orig = _ptxas(path, tmp_path / "orig.cubin", arch, rdc)
    assert orig.returncode == 0, f"ptxas rejects the original: {orig.stderr}"
    new = _ptxas(emitted, tmp_path / "emitted.cubin", arch, rdc)
    assert new.returncode == 0, new.stderr
    a = elf_sections(tmp_path / "orig.cubin")
    b = elf_sections(tmp_path / "emitted.cubin")
    assert sorted(a) == sorted(b)
    differ = [s for s in a if a[s] != b[s] and not _is_debug(s)]
    assert not differ, f"sections with different contents: {differ}"


def test_elf_debug_section_filter():
    assert _is_debug(".nv_debug_line_sass") and _is_debug(".rela.nv_debug_line_sass")
    assert _is_debug(".rel.nv_debug_line_sass") and _is_debug(".nv_debug_ptx_txt")
    assert not _is_debug(".text.k") and not _is_debug(".nv.info.k")


# ------------------------------------------------ unstructured control flow

UNSTRUCTURED_FILES = sorted(UNSTRUCTURED.glob("*.ptx")) if UNSTRUCTURED.is_dir() else []
NX_LIMIT = 5000     # blocks: networkx cross-check up to this size (all of them today)


def _nx_ipdoms(cfg, linked) -> dict[int, int]:
    """Immediate post-dominators by networkx: dominators of the reversed CFG
    rooted at a virtual exit n that every exit block and every linked
    infinite-loop block flows into."""
    import networkx as nx
    n = len(cfg.blocks)
    g = nx.DiGraph()
    g.add_nodes_from(range(n + 1))
    g.add_edges_from((s, b) for b in range(n) for s in cfg.succ_idx[b])
    g.add_edges_from((n, b.index) for b in cfg.exits)
    g.add_edges_from((n, b.index) for b in linked)
    idom = dict(nx.immediate_dominators(g, n))
    idom.pop(n, None)
    return idom


@pytest.mark.skipif(not UNSTRUCTURED_FILES, reason=f"corpus not found at {UNSTRUCTURED}")
@pytest.mark.parametrize("path", UNSTRUCTURED_FILES, ids=_id)
def test_unstructured_corpus(path):
    module = ptxc.load(str(path))
    result = run_pipeline(module, "verify,postdomtree,reconvergence", verify_each=True)
    names = _bodies(module)
    assert result["verify"].data == {"ok": True, "functions": len(names)}
    pdt_data = result["postdomtree"].data
    assert sorted(pdt_data) == sorted(names)
    am = result.am
    for fn in defined_functions(module):
        cfg, pdt = am.get(CFG, fn), am.get(PostDomTree, fn)
        assert set(pdt_data[fn.name]) == {b.name for b in fn.blocks}
        if len(cfg.blocks) > NX_LIMIT:
            continue
        want = _nx_ipdoms(cfg, pdt.infinite_loop_exits)
        n = len(cfg.blocks)
        got = {b.index: (n if pdt.ipdom(b) is None else pdt.ipdom(b).index) for b in cfg.blocks}
        assert got == want, fn.name


# ------------------------------------------------ guarded multi-result defs

GUARDED = """.version 8.0
.target sm_90
.address_size 64

.visible .entry gm(.param .u64 out)
{
	.reg .pred 	%p<4>;
	.reg .b32 	%r<6>;
	.reg .b64 	%rd<3>;

	ld.param.u64 	%rd1, [out];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r1, %tid.x;
	mov.u32 	%r2, 5;
	setp.lt.u32 	%p1, %r1, 16;
	setp.eq.u32 	%p2, %r1, 3;
	@!%p1 setp.lt.u32 	%p2|%p3, %r1, 20;
	@%p2 ld.global.v2.u32 	{%r2, %r3}, [%rd2];
	@!%p2 mov.b64 	{%r4, %r5}, %rd2;
	@%p1 add.cc.u32 	%r1, %r1, %r2;
	addc.u32 	%r2, %r2, 0;
	st.global.u32 	[%rd2], %r1;
	st.global.u32 	[%rd2+4], %r2;
	st.global.u32 	[%rd2+8], %r3;
	st.global.u32 	[%rd2+12], %r4;
	ret;
}
"""


def test_guarded_multi_result_definitions_read_old_values():
    """Each result of a guarded instruction has the register's old value as
    its prior; registers never written before have a distinct Undef prior.
    (ptxas -arch=sm_90 accepts GUARDED.)"""
    m = ptxc.parse(GUARDED, "gm.ptx")
    (fn,) = m.functions
    ins = fn.blocks[0].instrs
    mov_tid, mov5, setp1, setp2, gsetp, gld, gmov, gadd, addc = ins[2:11]
    # @!%p1 setp.lt.u32 %p2|%p3: old %p2 is the first setp's, %p3 never written
    assert gsetp.guard is setp1.results[0] and gsetp.guard_neg
    assert gsetp.prior[0] is setp2.results[0]
    assert isinstance(gsetp.prior[1], ir.Undef) and gsetp.prior[1].reg == "%p3"
    # @%p2 ld.v2 {%r2, %r3}: guard is the new %p2; old %r2 is the 5
    assert gld.guard is gsetp.results[0] and not gld.guard_neg
    assert gld.prior[0] is mov5.results[0]
    assert isinstance(gld.prior[1], ir.Undef) and gld.prior[1].reg == "%r3"
    # @!%p2 mov.b64 {%r4, %r5}: two results, both old values undefined
    assert [r.reg for r in gmov.results] == ["%r4", "%r5"]
    assert all(isinstance(p, ir.Undef) for p in gmov.prior) and gmov.guard_neg
    # @%p1 add.cc: results %r1 and the carry flag, priors %r1 (tid) and old %cc
    assert [r.reg for r in gadd.results] == ["%r1", "%cc"]
    assert gadd.prior[0] is mov_tid.results[0]
    assert isinstance(gadd.prior[1], ir.Undef) and gadd.prior[1].reg == "%cc"
    assert gadd.srcs[1] is gld.results[0]
    # addc reads the carry written by the guarded add.cc and the loaded %r2
    assert addc.implicit == [gadd.results[1]]
    assert addc.srcs[0] is gld.results[0]
    stores = [i for i in ins if i.opcode == "st"]
    assert [s.srcs[-1] for s in stores] == [gadd.results[0], addc.results[0],
                                           gld.results[1], gmov.results[0]]
    # read-before-write warnings are for reads, not for guarded old values:
    # the only register read (not as a prior) before any write is none here
    assert m.warnings == []
    from ptxc.passes.verifier import verify_function
    verify_function(fn)


# ------------------------------------------------ { } scopes and labels

DUP_LABELS = """.version 8.0
.target sm_90
.address_size 64

.visible .entry dup(.param .u64 out)
{
	.reg .b32 	%r<3>;
	.reg .b64 	%rd<3>;

	ld.param.u64 	%rd1, [out];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r1, %tid.x;
	{
	.reg .pred p;
L1:
	add.u32 %r1, %r1, 1;
	setp.lt.u32 p, %r1, 10;
	@p bra L1;
	}
	{
	.reg .pred p;
L1:
	add.u32 %r1, %r1, 2;
	setp.lt.u32 p, %r1, 20;
	@p bra L1;
	}
	st.global.u32 	[%rd2], %r1;
	ret;
}
"""


def test_same_label_in_sibling_scopes():
    """Two sibling scopes each declare label L1 (legal PTX, the way inline asm
    is inlined twice; ptxas accepts DUP_LABELS): each `@p bra L1` must go
    to the L1 of its own scope, so there are two self-loops, also after
    --emit=ptx and re-parsing."""
    def self_loops(module):
        fn = module.functions[0]
        return [b.index for b in fn.blocks if b in b.succs]

    module = ptxc.parse(DUP_LABELS, "dup.ptx")
    assert len(self_loops(module)) == 2, \
        [(b.name, [s.index for s in b.succs]) for b in module.functions[0].blocks]
    assert len(self_loops(ptxc.parse(module.to_ptx(), "dup.ptx"))) == 2


# ------------------------------------------------------------ ptxc passes

def test_passes_lists_every_analysis_with_a_summary():
    r = CliRunner().invoke(cli, ["passes"])
    assert r.exit_code == 0, r.output
    rows = {line.split()[0]: line.split(None, 1)[1] if len(line.split()) > 1 else ""
            for line in r.output.splitlines() if line.strip()}
    for name in ANALYSES + ["print-ir"]:
        assert name in rows, name
        summary = rows[name]
        assert summary and "not available" not in summary and len(summary.split()) >= 3, \
            (name, summary)
