"""Source attribution: the CUDA file, line and inlining chain of every PTX
instruction, from the ``.file`` and ``.loc`` debug directives (PTX ISA,
"Debugging Directives": ``.file``, ``.loc file line col[, function_name
label[+off], inlined_at file line col]``; nvcc writes them with ``-lineinfo``
and ``-G``, clang and numba too).

Rules (docs/report.md, "Source attribution"):

- An instruction is attributed to the last ``.loc`` line of the run in effect
  before it (``Instr.dbg``): its file and line. Line 0 is code the compiler
  made up (nvcc writes ``.loc 1 0 5``): the instruction has no source line.
- ``inlined_at F L C`` names the call site of an inlined function; the call
  site's own ``.loc`` (the latest one for ``F L C`` before the instruction, in
  the function's text order, else the first anywhere in the function) may be
  inlined in turn. The chain, innermost call site first, is ``inlined_at``;
  ``function`` is the inlined function's name (``function_name`` label read
  from the ``.debug_str`` section, as written: mangled).
- Without any ``.loc`` (no ``-lineinfo``), nothing is attributed and the
  per-source-line views refuse with a message instead of printing nothing.

``SourceMap(module).instr(fn)`` gives, per function, the location dict of
each instruction in text order (phis skipped: the numbering of
``per_memory_instr``'s ``index``, 1-based), or None. ``source_line(ins)``
(``Instr.source_line()``, docs/ir.md) gives one instruction's location as a
:class:`SourceLine`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_FILE = re.compile(r'\.file\s+(\d+)\s+"((?:[^"\\]|\\.)*)"')
_LOC = re.compile(r"\.loc\s+(\d+)\s+(\d+)\s+(\d+)")
_FUNCTION = re.compile(r"function_name\s+([\w$.]+)")
_INLINED_AT = re.compile(r"inlined_at\s+(\d+)\s+(\d+)\s+(\d+)")
_LABEL = re.compile(r"([\w$.]+):\s*((?:\.b8\s+-?(?:0[xX][0-9a-fA-F]+|[0-9]+)"
                    r"(?:\s*,\s*-?(?:0[xX][0-9a-fA-F]+|[0-9]+))*\s*)+)")
_BYTE = re.compile(r"-?(?:0[xX][0-9a-fA-F]+|[0-9]+)")
MAX_CHAIN = 64                      # a cycle in inlined_at (malformed input) stops here


def file_table(module) -> dict:
    """{file index: path as written} of the module's ``.file`` directives."""
    out = {}
    for text in module.files:
        m = _FILE.search(text)
        if m:
            out[int(m.group(1))] = m.group(2).replace('\\"', '"').replace("\\\\", "\\")
    return out


def debug_strings(module) -> dict:
    """{label: string} of the ``.debug_str`` section (``.b8`` bytes, NUL-ended)."""
    out = {}
    for item in module.items:
        if not (isinstance(item, tuple) and item[0] == "section" and ".debug_str" in item[1]):
            continue
        for label, data in _LABEL.findall(item[1]):
            # a byte as ptxas takes it: -128..255, hexadecimal too (the parser
            # refuses others: ptxc.frontend.debug_directives); kept to 8 bits
            raw = bytes(_byte(x) for x in _BYTE.findall(data.replace(".b8", "")))
            out[label] = raw.split(b"\0", 1)[0].decode("utf-8", "replace")
    return out


def _byte(text: str) -> int:
    neg = text.startswith("-")
    body = text.lstrip("-")
    value = int(body, 16) if body[:2] in ("0x", "0X") else int(body)
    return (-value if neg else value) & 0xFF


class SourceMap:
    """Locations of the instructions of one module."""

    def __init__(self, module):
        self.files = file_table(module)
        self.names = debug_strings(module)
        self._cache: dict = {}
        self.by_name = {f.name: f for f in module.functions if not f.is_decl}
        self.has_lines = any(ins.dbg for fn in module.functions if not fn.is_decl
                             for blk in fn.blocks for ins in blk.instrs)

    def instr(self, fn) -> list:
        """Location dict (or None) of every non-phi instruction of ``fn``, in order."""
        if id(fn) not in self._cache:
            self._cache[id(fn)] = self._locate(fn)
        return self._cache[id(fn)]

    def _locate(self, fn) -> list:
        first: dict = {}
        for blk in fn.blocks:
            for ins in blk.instrs:
                for text in ins.dbg or ():
                    first.setdefault(_key(text), text)
        latest: dict = {}
        out, run = [], None
        for blk in fn.blocks:
            for ins in blk.instrs:
                if ins.is_phi:
                    continue
                if ins.dbg is not run:
                    run = ins.dbg
                    for text in run or ():
                        latest[_key(text)] = text
                out.append(self._resolve(run[-1], latest, first) if run else None)
        return out

    def _resolve(self, text: str, latest: dict, first: dict) -> dict | None:
        key = _key(text)
        if key is None or key[1] == 0:
            return None
        loc = self._position(text)
        chain, seen = [], {key}
        at = _INLINED_AT.search(text)
        while at is not None and len(chain) < MAX_CHAIN:
            site = tuple(int(x) for x in at.groups())
            site_text = latest.get(site) or first.get(site)
            chain.append(self._position(site_text) if site_text else self._site(site))
            if site_text is None or site in seen:
                break
            seen.add(site)
            at = _INLINED_AT.search(site_text)
        loc["inlined_at"] = chain
        return loc

    def _position(self, text: str) -> dict:
        f, line, col = (int(x) for x in _LOC.match(text).groups())
        fm = _FUNCTION.search(text)
        return {"file": self.files.get(f, f"(file {f})"), "line": line, "col": col,
                "function": self.names.get(fm.group(1), fm.group(1)) if fm else None}

    def _site(self, site: tuple) -> dict:
        return {"file": self.files.get(site[0], f"(file {site[0]})"), "line": site[1],
                "col": site[2], "function": None}


def _key(text: str):
    m = _LOC.match(text)
    return tuple(int(x) for x in m.groups()) if m else None


@dataclass(frozen=True)
class SourceLine:
    """Where an instruction came from in the CUDA source: ``file`` (as the
    ``.file`` directive wrote it), ``line``, ``col`` (0: not known),
    ``function`` (the inlined function's name, mangled, when the ``.loc``
    names it) and ``inlined_at`` (the call sites it was inlined into,
    innermost first, each a SourceLine). ``str()`` gives ``file:line``
    with `` (inlined at file:line < ...)``."""
    file: str
    line: int
    col: int = 0
    function: str | None = None
    inlined_at: tuple = ()

    @classmethod
    def of(cls, loc: dict) -> "SourceLine":
        return cls(loc["file"], loc["line"], loc.get("col") or 0, loc.get("function"),
                   tuple(cls.of(s) for s in loc.get("inlined_at") or ()))

    def __str__(self) -> str:
        text = f"{self.file}:{self.line}"
        if self.inlined_at:
            text += " (inlined at " + " < ".join(f"{s.file}:{s.line}" for s in self.inlined_at) + ")"
        return text


def source_line(ins) -> SourceLine | None:
    """The CUDA location of instruction ``ins`` (SourceLine), or None: a
    phi, an instruction outside a function, no ``.loc`` before it (built
    without ``-lineinfo``/``-G``), or line 0 (code the compiler made up).
    The locations of a function are computed once and kept in
    ``fn.attrs['source_lines']`` until its instructions change."""
    block = getattr(ins, "block", None)
    fn = block.function if block is not None else None
    if fn is None or fn.module is None or ins.is_phi:
        return None
    cache = fn.attrs.get("source_lines")
    hit = cache.get(id(ins)) if cache else None
    if hit is None or hit[0] is not ins:
        body = [i for blk in fn.blocks for i in blk.instrs if not i.is_phi]
        locs = SourceMap(fn.module).instr(fn)
        cache = fn.attrs["source_lines"] = {
            id(i): (i, SourceLine.of(loc) if loc else None) for i, loc in zip(body, locs)}
        hit = cache.get(id(ins))
    return hit[1] if hit is not None else None


def location_text(loc: dict | None) -> str:
    """``file:line`` (with `` (inlined at file:line < ...)``), or ``(no line)``."""
    if loc is None:
        return "(no line)"
    text = f"{loc['file']}:{loc['line']}"
    if loc.get("inlined_at"):
        text += " (inlined at " + " < ".join(f"{s['file']}:{s['line']}"
                                             for s in loc["inlined_at"]) + ")"
    return text
