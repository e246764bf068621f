"""The on-disk cache of compiled kernels, keyed per kernel.

Compile time dominates the hybrid analysis of a module of many small kernels,
so native code is kept between processes. Kernels are compiled in batches
(one LLVM module, one fixed cost), but looked up one by one: a kernel's key is
a SHA-256 of its ``run_warp`` text, the helper code it is linked with, the
optimisation level, the host CPU and features, and the LLVM version (``key``).
A batch writes one object file ``<batch>.o`` holding the code of its kernels
(each kernel's function is named after its key), and one small index file
``<key>.k`` per kernel naming that object. A later run finds each kernel's
object through its index file; after one kernel of a module is edited, only
that kernel misses and is compiled.

``PTXC_CACHE=0`` turns the cache off; ``PTXC_CACHE_DIR`` moves it (default
``~/.cache/ptxc/objects``). Beyond ``CACHE_FILES`` files the oldest half is
dropped; an index whose object was dropped is a miss.
"""
from __future__ import annotations

import hashlib
import os

CACHE_FILES = 12000         # objects + index files; the oldest half is dropped beyond this
VERSION = "ptxc-jit-2"


def enabled() -> bool:
    return os.environ.get("PTXC_CACHE", "1") != "0"


def folder() -> str:
    return os.environ.get("PTXC_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "ptxc", "objects")


def key(parts) -> str:
    """The first 24 hex digits (96 bits) of the SHA-256 of the text parts
    (separated so that parts cannot run together)."""
    h = hashlib.sha256()
    for part in (*parts, VERSION):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:24]


def lookup(keys) -> dict:
    """{object bytes: [kernel keys]} for the keys whose object is on disk."""
    if not enabled():
        return {}
    base, found, by_name = folder(), {}, {}
    for k in keys:
        name = _read(os.path.join(base, k + ".k"))
        if name is None:
            continue
        name = name.decode(errors="replace").strip()
        if name not in by_name:
            by_name[name] = _read(os.path.join(base, os.path.basename(name)))
        if by_name[name] is not None:
            found.setdefault(by_name[name], []).append(k)
    return found


def store(obj: bytes, keys) -> None:
    """Write a batch's object and the index file of each of its kernels."""
    if not enabled():
        return
    base = folder()
    name = hashlib.sha256(obj).hexdigest()[:40] + ".o"
    if _write(os.path.join(base, name), obj):
        for k in keys:
            _write(os.path.join(base, k + ".k"), name.encode())
        _trim(base)


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def _write(path: str, data: bytes) -> bool:
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
        return True
    except OSError:
        return False


def _trim(base: str) -> None:
    try:
        names = os.listdir(base)
        if len(names) <= CACHE_FILES:
            return
        files = sorted((os.path.getmtime(os.path.join(base, n)), n) for n in names)
        for _, n in files[:len(files) // 2]:
            os.remove(os.path.join(base, n))
    except OSError:
        pass
