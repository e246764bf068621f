"""Linking several PTX modules into one (what cuLinkComplete does with PTX
inputs, for numba's kernels linked with PTX of their own or of the user).

A textual link, as ``nvlink`` resolves PTX-level symbols (PTX ISA,
"Linkage directives"): the top-level items of every input are kept in
order; an ``.extern`` declaration of a function or variable that an input
defines is dropped when the definition comes first, and is a plain
prototype when it comes later; of two definitions of
one ``.weak`` (or ``.common``) symbol the first is kept; two ``.visible``
definitions of one name are an error. The header takes the highest ``.version`` and the first
``.target``; ``.file`` numbers are renumbered per input so that ``.loc``
lines keep pointing at their files.
"""
from __future__ import annotations

import re

from ptxc.errors import PtxcError

_HEADER = re.compile(r"^\s*\.(version|target|address_size)\b.*$", re.M)
_FILE = re.compile(r"^(\s*\.file\s+)(\d+)", re.M)
_LOC = re.compile(r"(\.loc\s+)(\d+)")
_FUNC_NAME = re.compile(r"\.(?:func|entry)\s*(?:\([^)]*\)\s*)?([\w$%.]+)")
_LEADING_COMMENTS = re.compile(r"^(?:\s*//[^\n]*(?:\n|$))+")
_VAR_NAME = re.compile(r"\.(?:global|shared|const)\b[^;=\[{]*?([\w$%]+)\s*(?:\[|=|;|$)")


def link(inputs: list[tuple[str, str]]) -> str:
    """One PTX text from the (name, text) pairs ``inputs``."""
    if len(inputs) == 1:
        return inputs[0][1]
    texts = _renumber_files([t for _, t in inputs])
    items = [(name, item) for (name, _), t in zip(inputs, texts) for item in _items(_body(t))]
    defined = {}
    for name, item in items:
        sym, kind = _symbol(item)
        if sym and kind == "def":
            if sym in defined and not _weak(item):
                if not _weak(defined[sym][1]):
                    raise PtxcError(f"linking PTX: '{sym}' is defined in both {defined[sym][0]} "
                                    f"and {name}")
            defined.setdefault(sym, (name, item))
    out, kept = [], set()
    for _, item in items:
        sym, kind = _symbol(item)
        if sym and kind == "extern" and sym in defined:
            if sym in kept:
                continue          # served by a definition above
            item = re.sub(r"^\s*\.extern\s+", "", item)   # a prototype of a definition below
        if sym and kind == "def":
            if sym in kept or defined[sym][1] is not item:
                continue
            kept.add(sym)
        out.append(item)
    return _header(texts) + "\n" + "\n\n".join(out) + "\n"


def _header(texts: list[str]) -> str:
    versions = [m.group(0).split()[1] for t in texts for m in _HEADER.finditer(t)
                if m.group(1) == "version"]
    target = next((m.group(0).strip() for t in texts for m in _HEADER.finditer(t)
                   if m.group(1) == "target"), ".target sm_52")
    version = max(versions, key=lambda v: tuple(int(x) for x in v.split(".")), default="7.0")
    return f".version {version}\n{target}\n.address_size 64\n"


def _body(text: str) -> str:
    return _HEADER.sub("", text)


def _renumber_files(texts: list[str]) -> list[str]:
    out, base = [], 0
    for t in texts:
        nums = [int(m.group(2)) for m in _FILE.finditer(t)]
        shift = base

        def bump(m, shift=shift):
            return f"{m.group(1)}{int(m.group(2)) + shift}"

        out.append(_LOC.sub(bump, _FILE.sub(bump, t)) if shift else t)
        base += max(nums, default=0)
    return out


def _items(text: str) -> list[str]:
    """Top-level items: a declaration up to its ';' or a definition up to
    its closing brace (comments and strings skipped)."""
    items, start, depth, i, n = [], 0, 0, 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        if c == '"':
            j = text.find('"', i + 1)
            i = n if j < 0 else j + 1
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                items.append(text[start:i + 1].strip())
                start = i + 1
        elif c == ";" and depth == 0:
            items.append(text[start:i + 1].strip())
            start = i + 1
        elif c == "\n" and depth == 0 and \
                _LEADING_COMMENTS.sub("", text[start:i].lstrip()).lstrip().startswith(".file"):
            items.append(text[start:i].strip())
            start = i + 1
        i += 1
    return [_LEADING_COMMENTS.sub("", s).strip() for s in items if s]


def _weak(item: str) -> bool:
    words = item.split("{", 1)[0].split()
    return ".weak" in words or ".common" in words


def _symbol(item: str) -> tuple[str | None, str | None]:
    """(name, 'def' | 'extern') of a function or variable item, else (None, None)."""
    head = item.split("{", 1)[0]
    words = head.split()
    if not words or words[0] == ".file":
        return None, None
    m = _FUNC_NAME.search(head)
    if m and (".func" in words or ".entry" in words):
        return m.group(1), "extern" if "{" not in item else "def"
    m = _VAR_NAME.search(head)
    if m:
        return m.group(1), "extern" if ".extern" in words else "def"
    return None, None
