"""The PTX of Triton's cubins (ptxc/runtime/cubin_ptx.py, ptxas_keep.py),
without Triton: ptxc's ptxas wrapper around a stand-in "ptxas" (a shell
script that writes a fixed cubin) keeps the PTX under the cubin's SHA-256;
the lookup finds it there, or next to the cubin in a Triton cache, and
nothing for an unknown cubin; a user's own TRITON_PTXAS_PATH is kept."""
from __future__ import annotations

import hashlib
import os
import subprocess

import pytest

from ptxc.runtime import cubin_ptx, driver_images
from ptxc.runtime.ptxas_keep import files

PTX = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n"
CUBIN = b"\x7fELF\x02\x01\x01" + bytes(57) + b"sass"


def fake_ptxas(tmp_path, status=0):
    """A "ptxas" that writes CUBIN to its -o file (and answers --version)."""
    (tmp_path / "cubin.bin").write_bytes(CUBIN)
    path = tmp_path / "real-ptxas"
    path.write_text("#!/bin/sh\n"
                    "if [ \"$1\" = --version ]; then echo 'Cuda compilation tools, release 13.0'; exit 0; fi\n"
                    "while [ $# -gt 0 ]; do if [ \"$1\" = -o ]; then cp "
                    f"{tmp_path / 'cubin.bin'} \"$2\"; fi; shift; done\nexit {status}\n")
    path.chmod(0o755)
    return str(path)


def wrapper(tmp_path, monkeypatch, real):
    lib = tmp_path / "work" / "lib"
    lib.mkdir(parents=True)
    monkeypatch.setattr(cubin_ptx, "real_ptxas", lambda tool, env: real)
    env = {}
    cubin_ptx.apply(env, str(lib))
    return env


def test_files_names_the_ptx_input_and_the_output():
    args = ["-lineinfo", "-v", "--gpu-name=sm_90a", "/t/k.ptx", "-o", "/t/k.ptx.o"]
    assert files(args) == ("/t/k.ptx", "/t/k.ptx.o")
    assert files(["--output-file=/o", "a.ptx"]) == ("a.ptx", "/o")
    assert files(["a.ptx", "b.ptx", "-o", "x"]) == (None, "x")       # not one input
    assert files(["--version"]) == (None, None)


def test_wrapper_keeps_the_ptx_under_the_cubins_hash(tmp_path, monkeypatch):
    env = wrapper(tmp_path, monkeypatch, fake_ptxas(tmp_path))
    src = tmp_path / "k.ptx"
    src.write_text(PTX)
    tool = env["TRITON_PTXAS_BLACKWELL_PATH"]
    version = subprocess.run([tool, "--version"], capture_output=True, text=True)
    assert "release 13.0" in version.stdout             # Triton reads the version through it
    proc = subprocess.run([tool, "-v", "--gpu-name=sm_90a", str(src), "-o", str(tmp_path / "k.o")])
    assert proc.returncode == 0
    assert (tmp_path / "k.o").read_bytes() == CUBIN
    store = env[cubin_ptx.STORE_ENV]
    assert os.listdir(store) == [hashlib.sha256(CUBIN).hexdigest() + ".ptx"]
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "no-cache"))
    assert cubin_ptx.lookup(CUBIN, store) == PTX
    assert driver_images.ptx_of(CUBIN, 90, "m", store) == [("m", PTX)]
    assert cubin_ptx.lookup(CUBIN + b"x", store) is None


def test_wrapper_keeps_nothing_when_ptxas_fails(tmp_path, monkeypatch):
    env = wrapper(tmp_path, monkeypatch, fake_ptxas(tmp_path, status=3))
    (tmp_path / "k.ptx").write_text(PTX)
    proc = subprocess.run([env["TRITON_PTXAS_PATH"], str(tmp_path / "k.ptx"), "-o",
                           str(tmp_path / "k.o")])
    assert proc.returncode == 3                          # ptxas's status, as Triton reads it
    assert not os.path.exists(env[cubin_ptx.STORE_ENV])


def test_lookup_finds_the_ptx_next_to_the_cubin_in_tritons_cache(tmp_path, monkeypatch):
    entry = tmp_path / "cache" / "HASH"
    entry.mkdir(parents=True)
    (entry / "add_kernel.cubin").write_bytes(CUBIN)
    (entry / "add_kernel.ptx").write_text(PTX)
    (entry / "other.cubin").write_bytes(CUBIN[:-1] + b"X")    # same size, other bytes
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    assert cubin_ptx.lookup(CUBIN, None) == PTX
    assert cubin_ptx.lookup(CUBIN[:-1] + b"X", None) is None       # no PTX next to it
    monkeypatch.delenv("TRITON_CACHE_DIR")
    monkeypatch.setenv("TRITON_HOME", str(tmp_path / "home"))
    assert cubin_ptx.triton_cache() == str(tmp_path / "home" / ".triton" / "cache")


def test_unknown_cubin_is_the_one_line_error(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    with pytest.raises(driver_images.ImageError) as e:
        driver_images.ptx_of(CUBIN, 90, "module1", str(tmp_path / "store"))
    assert e.value.code == driver_images.CUDA_ERROR_NO_BINARY_FOR_GPU
    assert "cubin without PTX (SASS only)" in e.value.message and "\n" not in e.value.message


def test_users_ptxas_is_kept(tmp_path, monkeypatch):
    lib = tmp_path / "lib"
    lib.mkdir()
    monkeypatch.setattr(cubin_ptx, "real_ptxas", lambda tool, env: "/bin/true")
    env = {"TRITON_PTXAS_PATH": "/mine/ptxas"}
    cubin_ptx.apply(env, str(lib))
    assert env["TRITON_PTXAS_PATH"] == "/mine/ptxas"
    assert env["TRITON_PTXAS_BLACKWELL_PATH"] == str(lib / "ptxas-blackwell")
