"""Fat binary decoding (ptxc/runtime/fatbin.py, lz4.py) on fat binaries
nvcc 13 made (tests/runtime_data/README.md lists the commands).

The uncompressed entry of plain.fatbin is the reference: the LZ4 and zstd
entries of the same source must decode to exactly its bytes.
"""
import os

import pytest

import ptxc
from ptxc.errors import PtxcError
from ptxc.runtime import fatbin
from ptxc.runtime.lz4 import LZ4Error, decompress_block

DATA = os.path.join(os.path.dirname(__file__), "runtime_data")


def entries(name):
    with open(os.path.join(DATA, name), "rb") as f:
        return fatbin.parse(f.read(), name)


def reference_ptx() -> bytes:
    (ptx,) = fatbin.ptx_entries(entries("plain.fatbin"))
    assert ptx.compression == "none"
    return ptx.data().rstrip(b"\0")


def test_plain_entries():
    es = entries("plain.fatbin")
    assert [(e.kind, e.arch) for e in es] == [(fatbin.KIND_ELF, 90), (fatbin.KIND_PTX, 90)]
    assert es[0].data().startswith(b"\x7fELF")
    text = fatbin.choose_ptx(es, 90).text()
    assert ".target sm_90" in text
    module = ptxc.parse(text, "plain.ptx")
    assert sorted(k.name for k in module.kernels) == ["_Z5saxpyfPKfPfi", "_Z7stencilPKfPfi"]


@pytest.mark.parametrize("name,compression", [("lz4.fatbin", "lz4"), ("zstd.fatbin", "zstd")])
def test_compressed_ptx_equals_plain(name, compression):
    (ptx,) = fatbin.ptx_entries(entries(name))
    assert ptx.compression == compression
    assert len(ptx.payload) < ptx.size            # really compressed
    data = ptx.data()
    assert len(data) == ptx.size
    assert data.rstrip(b"\0") == reference_ptx()


def test_choose_highest_usable_arch():
    es = entries("two_ptx.fatbin")
    assert fatbin.choose_ptx(es, 90).arch == 90
    assert fatbin.choose_ptx(es, 86).arch == 75
    assert ".target sm_75" in fatbin.choose_ptx(es, 80).text()
    with pytest.raises(PtxcError, match="compute_75, compute_90 only; the chosen GPU is sm_70"):
        fatbin.choose_ptx(es, 70)


def test_sass_only_is_a_clear_error():
    with pytest.raises(PtxcError, match=r"no PTX \(only SASS for sm_90\).*-arch=sm_XX.*--ptx"):
        fatbin.choose_ptx(entries("sass_only.fatbin"), 90)


def test_not_a_fat_binary():
    with pytest.raises(PtxcError, match="not a fat binary"):
        fatbin.parse(b"\x7fELF" + bytes(60))
    blob = open(os.path.join(DATA, "plain.fatbin"), "rb").read()
    with pytest.raises(PtxcError, match="truncated"):
        fatbin.parse(blob[:100])


# LZ4 blocks written by hand from the format description (lz4.py's docstring)
def test_lz4_literals_only():
    assert decompress_block(b"\x50hello") == b"hello"


def test_lz4_match_and_overlap():
    # "ab", then a match of 4+2=6 bytes at offset 2 (overlapping: repeats "ab"),
    # then the last literals "!"
    block = bytes([0x22]) + b"ab" + bytes([2, 0]) + bytes([0x10]) + b"!"
    assert decompress_block(block) == b"abababab!"
    # offset 1: run-length of one byte; match length 15 + 4 + extension byte 3
    block = bytes([0x1F]) + b"z" + bytes([1, 0, 3]) + bytes([0x00])
    assert decompress_block(block) == b"z" * (1 + 22)


def test_lz4_long_literal_length():
    data = bytes(range(256)) * 2
    block = bytes([0xF0, 255, 512 - 15 - 255]) + data        # 15 + 255 + 242 literals
    assert decompress_block(block, len(data)) == data


def test_lz4_errors():
    with pytest.raises(LZ4Error):
        decompress_block(bytes([0x10]) + b"a" + bytes([5, 0]))     # offset beyond output
    with pytest.raises(LZ4Error):
        decompress_block(bytes([0x50]) + b"abc")                  # truncated literals
    with pytest.raises(LZ4Error):
        decompress_block(b"\x50hello", 4)                         # size mismatch
