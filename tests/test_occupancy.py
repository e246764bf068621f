"""Occupancy (ptxc/gpus/occupancy.py) against hand-computed figures.

Every expected number is worked out in the comment beside it from the
published rules (cuda_occupancy.h; the CUDA 2.x occupancy spreadsheet for
cc 1.3) and the parameters of docs/gpus.md:

  h100:   64 warps, 32 blocks, 65536 regs in 4 sub-partitions (16384 each),
          256-register unit per warp; 233472 B (228 KiB) shared per SM,
          128 B unit, 1024 B reserved per block, 48 KiB default per block.
  a100:   as h100 but 167936 B (164 KiB) shared per SM.
  v100:   64 warps, 32 blocks, shared unit 256 B, no reservation, 96 KiB/SM.
  t4, rtx2060: 32 warps, 16 blocks, shared unit 256 B, 64 KiB/SM.
  gtx260: 32 warps, 8 blocks, 16384 regs allocated per block in 512-register
          units with warps rounded up to 2, 16 KiB shared in 512 B units.

Inputs of the CLI tests: tests/occupancy/ (kernels.cu and the nvcc command).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from click.testing import CliRunner

from ptxc.cli.main import cli
from ptxc.gpus.architecture import GPUS, gpu
from ptxc.gpus.kernel_resources import module_registers, parse_ptxas_verbose
from ptxc.gpus.occupancy import occupancy

HERE = os.path.dirname(__file__)
PTX = os.path.join(HERE, "occupancy", "kernels.ptx")
KiB = 1024

# (gpu, regs, block, static, dynamic) -> (blocks/SM, warps/SM, limiters)
CASES = [
    # h100, 32 regs, 256 threads: 8 warps/block. warps 64//8 = 8; regs
    # 32*32 = 1024/warp, 16384//1024 = 16 warps per partition, x4 = 64, //8 = 8;
    # smem roundup(0+1024, 128) = 1024, 233472//1024 = 228.  -> 8, 64 warps
    (("h100", 32, 256, 0, 0), (8, 64, ["warps", "registers"])),
    # h100, 64 regs: 2048/warp, 16384//2048 = 8 per partition, 32 warps, //8 = 4
    (("h100", 64, 256, 0, 0), (4, 32, ["registers"])),
    # h100, 37 regs, 128 threads (4 warps): 37*32 = 1184 -> 1280 (unit 256),
    # 16384//1280 = 12 per partition, 48 warps, //4 = 12 blocks (without the
    # granularity 65536//(37*128) = 13); warps 64//4 = 16.
    (("h100", 37, 128, 0, 0), (12, 48, ["registers"])),
    # h100, 200 regs, 64 threads (2 warps): 6400/warp, 16384//6400 = 2 per
    # partition, 8 warps, //2 = 4 blocks (65536//12800 = 5 without partitions)
    (("h100", 200, 64, 0, 0), (4, 8, ["registers"])),
    # h100, 64 regs, 96 threads (3 warps): 32 warps by registers // 3 = 10;
    # warps 64//3 = 21.  -> 10 blocks, 30 warps
    (("h100", 64, 96, 0, 0), (10, 30, ["registers"])),
    # h100, 48 KiB dynamic: 49152 + 1024 = 50176 (a multiple of 128) <= the
    # default limit 49152 + 1024; 233472//50176 = 4 (4.65). 128 threads.
    (("h100", 32, 128, 0, 48 * KiB), (4, 16, ["shared memory"])),
    # h100, 227 KiB dynamic (opt-in): 232448 + 1024 = 233472 <= 232448 + 1024
    # -> 233472//233472 = 1 block
    (("h100", 32, 128, 0, 227 * KiB), (1, 4, ["shared memory"])),
    # ... one more KiB static: 234496 > 233472 -> 0 blocks
    (("h100", 32, 128, 1 * KiB, 227 * KiB), (0, 0, ["shared memory"])),
    # h100, 32 threads (1 warp), 16 regs: warps 64, regs 16384//512*4 = 128,
    # smem 228, blocks 32 -> 32 blocks of 1 warp
    (("h100", 16, 32, 0, 0), (32, 32, ["blocks"])),
    # h100, 255 regs, 1024 threads: 8160 -> 8192/warp x 32 warps = 262144 >
    # 65536 registers per block -> 0
    (("h100", 255, 1024, 0, 0), (0, 0, ["registers"])),
    # a100, 16 KiB dynamic, 128 threads: 16384 + 1024 = 17408, 167936//17408 = 9
    (("a100", 32, 128, 0, 16 * KiB), (9, 36, ["shared memory"])),
    # v100, 100 B static: roundup(100, 256) = 256 (no reservation), 98304//256
    # = 384; 64 threads: warps 64//2 = 32 = blocks 32; regs 128//2 = 64
    (("v100", 16, 64, 100, 0), (32, 64, ["warps", "blocks"])),
    # v100, 10000 B dynamic: 10240, 98304//10240 = 9 (9.6); 64 threads
    (("v100", 16, 64, 0, 10000), (9, 18, ["shared memory"])),
    # t4, 64 regs, 256 threads: warps 32//8 = 4; regs 32 warps // 8 = 4
    (("t4", 64, 256, 0, 0), (4, 32, ["warps", "registers"])),
    # t4, 128 regs: 4096/warp, 16384//4096 = 4 per partition, 16 warps, //8 = 2
    (("t4", 128, 256, 0, 0), (2, 16, ["registers"])),
    # t4, 32 threads: warps 32, blocks 16 -> 16 blocks of 1 warp (50 %)
    (("t4", 16, 32, 0, 0), (16, 16, ["blocks"])),
    # rtx2060, 20000 B dynamic: roundup 20224, 65536//20224 = 3; 128 threads
    (("rtx2060", 32, 128, 0, 20000), (3, 12, ["shared memory"])),
    # gtx260, 10 regs, 96 threads: roundup(3, 2) = 4 warps x 32 x 10 = 1280 ->
    # 1536, 16384//1536 = 10; warps 32//3 = 10; blocks 8 -> 8 blocks, 24 warps
    (("gtx260", 10, 96, 0, 0), (8, 24, ["blocks"])),
    # gtx260, 20 regs, 256 threads: 8 x 32 x 20 = 5120, 16384//5120 = 3;
    # warps 32//8 = 4 -> 3 blocks, 24 warps
    (("gtx260", 20, 256, 0, 0), (3, 24, ["registers"])),
    # gtx260, 5000 B static, 64 threads, 8 regs: roundup(5000, 512) = 5120,
    # 16384//5120 = 3; regs 2 x 32 x 8 = 512 -> 32 -> 3 blocks, 6 warps
    (("gtx260", 8, 64, 5000, 0), (3, 6, ["shared memory"])),
]


@pytest.mark.parametrize("args,expected", CASES, ids=[
    "-".join(str(a) for a in c[0]) for c in CASES])
def test_hand_computed(args, expected):
    key, regs, block, static, dyn = args
    occ = occupancy(gpu(key), regs, block, static, dyn)
    blocks, warps, limiters = expected
    assert (occ.blocks_per_sm, occ.warps_per_sm, occ.limiters) == (blocks, warps, limiters)
    assert occ.occupancy == warps / gpu(key).max_warps_per_sm


def test_oversized_block_is_limited_by_warps():
    # cuda_occupancy.h: blockSize > maxThreadsPerBlock -> 0 blocks by warps
    assert occupancy(gpu("gtx260"), 8, 1024).limits["warps"] == 0


def test_every_parameter_has_a_source():
    fields = set(GPUS["h100"].params)
    for g in GPUS.values():
        assert set(g.params) == fields, g.key
        for name, p in g.params.items():
            assert p.source.strip(), (g.key, name)


def test_shim_models_are_the_single_source():
    from ptxc.gpus.devices import MODELS
    for key, m in MODELS.items():
        g = gpu(key)
        assert (g.sm_count, g.l2_size, g.shared_per_sm, g.max_blocks_per_sm) == \
            (m.sm_count, m.l2_size, m.shared_per_sm, m.max_blocks_per_sm)


def test_bandwidth_derivation():
    # H100 SXM5: 2 x 2619 MHz x 5120 bit / 8 = 3352.3 GB/s (datasheet: 3.35 TB/s)
    assert gpu("h100").mem_bandwidth_gbs == pytest.approx(3352.3, abs=0.1)


def test_parse_ptxas_verbose():
    text = ("ptxas info    : Compiling entry function '_Z1kv' for 'sm_90'\n"
            "ptxas info    : Function properties for _Z1kv\n"
            "ptxas info    : Used 14 registers, used 1 barriers, 4096 bytes smem\n"
            "ptxas info    : Compiling entry function 'g' for 'sm_90'\n"
            "ptxas info    : Used 7 registers\n")
    assert parse_ptxas_verbose(text) == {"_Z1kv": 14, "g": 7}


def test_estimated_registers_without_ptxas(monkeypatch):
    import ptxc
    import ptxc.gpus.kernel_resources as kr
    monkeypatch.setattr(kr.shutil, "which", lambda name: None)
    text = (".version 7.0\n.target sm_70\n.address_size 64\n"
            ".entry a() .maxnreg 40\n{\nret;\n}\n.entry b()\n{\nret;\n}\n")
    regs = module_registers(ptxc.parse(text, "m.ptx"), text, 90)
    assert (regs["a"].count, regs["b"].count) == (40, 32)
    assert all(r.source.startswith("estimated") for r in regs.values())


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas not installed")
def test_registers_from_ptxas():
    import ptxc
    text = open(PTX).read()
    regs = module_registers(ptxc.parse(text, PTX), text, 90)
    out = subprocess.run(["ptxas", "-v", "-arch=sm_90", PTX, "-o", os.devnull],
                         capture_output=True, text=True).stderr
    # independent reading of ptxas's report: entry names, then "Used N registers"
    names = re.findall(r"entry function '([^']+)'", out)
    used = [int(n) for n in re.findall(r"Used (\d+) registers", out)]
    assert {k: r.count for k, r in regs.items()} == dict(zip(names, used))
    assert all(r.source == "ptxas sm_90" for r in regs.values())


def run_cli(capsys, *argv):
    r = CliRunner().invoke(cli, ["occupancy", PTX, *argv], catch_exceptions=False)
    return r.exit_code, r.stdout, r.stderr


def test_cli_static_plus_dynamic_shared(capsys):
    # tile: 4096 B static + 45056 dynamic = 49152 (the default limit);
    # + 1024 reserved = 50176 allocated; 233472//50176 = 4 blocks of 4 warps
    code, out, _ = run_cli(capsys, "--kernel", "_Z4tilePKfPf", "--block", "128",
                           "--shared", "45056", "--regs", "32")
    assert code == 0
    assert "4096 B static + 45056 B dynamic; 50176 B allocated" in out
    assert "limited by     shared memory" in out
    assert "active per SM  4 blocks, 16 warps (of 64)" in out
    assert "occupancy      25.0 %" in out


def test_cli_every_kernel_and_gpu(capsys):
    # t4, 64 regs, 256 threads: 4 blocks, 32 warps (see CASES)
    code, out, _ = run_cli(capsys, "--gpu", "t4", "--regs", "64", "--block", "256")
    assert code == 0
    assert out.count("active per SM  4 blocks, 32 warps (of 32)") == 2


@pytest.mark.parametrize("argv,message", [
    (("--kernel", "nope"), "no kernel named 'nope'"),
    (("--gpu", "k80"), "unknown GPU model 'k80'"),
    (("--gpu", "gtx260", "--block", "1024"), "exceeds the 512 threads per block"),
])
def test_cli_errors(capsys, argv, message):
    code, out, err = run_cli(capsys, *argv)
    assert code == 1 and message in err and len(err.strip().splitlines()) == 1


@pytest.fixture(scope="module")
def query_app(tmp_path_factory):
    from runtime_apps import AppBuilder
    # sm_75: the lowest architecture CUDA 13 builds, so the t4 model can run it
    return AppBuilder(tmp_path_factory.mktemp("occ_apps")).build(
        "occupancy_query", flags=("-cudart", "shared", "-arch=sm_75"))


@pytest.mark.parametrize("gpu_key,block,dyn,expected", [
    # The shim reports 32 registers (1024 per warp: 16 warps per
    # sub-partition, 64 per SM), so shared memory decides here.
    # t4: 13100 B -> 13312 (256 B unit, no reservation), 65536 // 13312 = 4
    # (65536 // 13100 = 5 without the unit); 64 threads: warps 16, blocks 16.
    ("t4", 64, 13100, 4),
    # h100: 45600 + 1024 reserved = 46624 -> 46720 (128 B unit),
    # 233472 // 46720 = 4 (233472 // 46624 = 5 without the unit).
    ("h100", 128, 45600, 4),
    # t4: 1024 threads = 32 warps = the SM's 32 -> 1 block by warps
    ("t4", 1024, 0, 1),
    # h100: 60000 B > 48 KiB uses the opt-in limit 227 KiB + 1 KiB:
    # 61024 -> 61056, 233472 // 61056 = 3
    ("h100", 256, 60000, 3),
])
def test_shim_uses_the_calculator_rules(query_app, gpu_key, block, dyn, expected):
    from runtime_apps import run_ptxc
    r = run_ptxc(query_app, str(block), str(dyn), options=("--gpu", gpu_key))
    assert r.returncode == 0, r.proc.stderr
    assert r.proc.stdout.split() == ["0", str(expected)]
    assert occupancy(gpu(gpu_key), 32, block, 0, dyn).blocks_per_sm == expected


def test_docs_list_every_parameter():
    from ptxc.gpus.architecture import markdown
    with open(os.path.join(HERE, "..", "docs", "gpus.md")) as fh:
        doc = fh.read()
    assert doc.split("## Parameters\n\n", 1)[1].rstrip() == markdown().rstrip()


def test_cli_reads_stdin():
    with open(PTX) as fh:
        r = CliRunner().invoke(cli, ["occupancy", "-", "--regs", "64", "--gpu", "t4"],
                               input=fh.read(), catch_exceptions=False)
    assert r.exit_code == 0 and r.stdout.count("4 blocks, 32 warps") == 2


def test_cli_syntax_error_is_one_line(tmp_path):
    bad = tmp_path / "bad.ptx"
    bad.write_text(".version 7.0\n.target sm_90\n.address_size 64\n.entry k()\n{\n  frob;\n}\n")
    r = CliRunner().invoke(cli, ["occupancy", str(bad)], catch_exceptions=False)
    assert r.exit_code == 1 and f"{bad}:6:" in r.stderr
    assert "Traceback" not in r.stderr
