"""The source names of kernel parameters, from the DWARF of a ``-G`` build.

``nvcc -G`` writes the debug information into the PTX as ``.section
.debug_abbrev`` and ``.section .debug_info`` blocks of ``.b8``/``.b32``/
``.b64`` data (DWARF 2, "Debugging Information Entries"). A kernel is a
``DW_TAG_subprogram``; each parameter a ``DW_TAG_formal_parameter`` child
with its ``DW_AT_name`` and a ``DW_AT_location`` that is ``DW_OP_addr`` of
the PTX parameter symbol itself (``.b64 vadd_param_0``). ``param_names``
reads those pairs: ``{PTX parameter name: source name}``; a parameter whose
location is not its symbol is matched by position within the subprogram
whose linkage name (or name) is the kernel's PTX name.

Only what the names need is read; anything unexpected (an unknown form,
a truncated section) ends the walk with the names found so far, so a
malformed section never fails a parse or a launch. ``-lineinfo`` builds and
optimised code have no ``.debug_info``: their parameters have no source
names (ptxc/ir/names.py then accepts the index and the PTX name).
"""
from __future__ import annotations

import re

DW_TAG_SUBPROGRAM, DW_TAG_FORMAL_PARAMETER = 0x2e, 0x05
DW_AT_NAME, DW_AT_LOCATION = 0x03, 0x02
DW_AT_LINKAGE_NAMES = (0x6e, 0x2007)          # DW_AT_linkage_name, DW_AT_MIPS_linkage_name
DW_OP_ADDR = 0x03

_ITEM = re.compile(r"^\s*([\w$.]+):|\.b(8|16|32|64)\s+([^\n;]*)", re.M)   # a label or a datum


class Section:
    """A section's data as bytes, with the symbols its fields name by offset."""

    def __init__(self, text: str):
        self.data = bytearray()
        self.symbols: dict[int, str] = {}
        self.labels: dict[str, int] = {}
        for m in _ITEM.finditer(text):
            if m.group(1):
                self.labels[m.group(1)] = len(self.data)
                continue
            size = int(m.group(2)) // 8
            for item in m.group(3).split(","):
                item = item.strip()
                if not item:
                    continue
                try:
                    value = int(item, 0)
                except ValueError:
                    self.symbols[len(self.data)] = item
                    value = 0
                self.data += (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")


def sections(module) -> dict:
    """{'.debug_info': Section, ...} of the module's DWARF sections."""
    out = {}
    for item in module.items:
        if isinstance(item, tuple) and item and item[0] == "section":
            m = re.match(r"\s*\.section\s+([\w.$]+)", item[1])
            if m:
                out[m.group(1)] = Section(item[1])
    return out


class _Reader:
    def __init__(self, sec: Section, pos: int = 0):
        self.sec, self.pos = sec, pos

    def u(self, n: int) -> int:
        if self.pos + n > len(self.sec.data):
            raise IndexError("past the end of the section")
        v = int.from_bytes(self.sec.data[self.pos:self.pos + n], "little")
        self.pos += n
        return v

    def uleb(self) -> int:
        result = shift = 0
        while True:
            b = self.u(1)
            result |= (b & 0x7f) << shift
            shift += 7
            if not b & 0x80:
                return result

    def sleb(self) -> int:
        result = shift = 0
        while True:
            b = self.u(1)
            result |= (b & 0x7f) << shift
            shift += 7
            if not b & 0x80:
                return result - (1 << shift) if b & 0x40 else result

    def cstring(self) -> str:
        end = self.sec.data.index(0, self.pos)
        text = self.sec.data[self.pos:end].decode("utf-8", "replace")
        self.pos = end + 1
        return text


def abbreviations(sec: Section) -> dict:
    """{code: (tag, has children, [(attribute, form)])} of .debug_abbrev."""
    r, out = _Reader(sec), {}
    while r.pos < len(sec.data):
        code = r.uleb()
        if code == 0:
            break
        tag, children, attrs = r.uleb(), r.u(1), []
        while True:
            at, form = r.uleb(), r.uleb()
            if at == 0 and form == 0:
                break
            attrs.append((at, form))
        out[code] = (tag, bool(children), attrs)
    return out


def _value(r: _Reader, form: int, addr_size: int, strings):
    """(value, symbol or None) of one attribute; raises ValueError on an unknown form."""
    start = r.pos
    fixed = {0x0b: 1, 0x05: 2, 0x06: 4, 0x07: 8, 0x0c: 1, 0x11: 1, 0x12: 2, 0x13: 4, 0x14: 8,
             0x17: 4, 0x10: 4, 0x20: 8, 0x01: addr_size}
    if form in fixed:
        return r.u(fixed[form]), r.sec.symbols.get(start)
    if form == 0x08:                                    # DW_FORM_string
        return r.cstring(), None
    if form == 0x0e:                                    # DW_FORM_strp
        off, sym = r.u(4), r.sec.symbols.get(start)
        return strings(sym, off), None
    if form in (0x0a, 0x03, 0x04, 0x09, 0x18):          # blocks, exprloc
        n = {0x0a: 1, 0x03: 2, 0x04: 4}.get(form)
        length = r.u(n) if n else r.uleb()
        block = (r.pos, length)
        r.pos += length
        return block, None
    if form in (0x0f, 0x15):
        return r.uleb(), None
    if form == 0x0d:
        return r.sleb(), None
    if form == 0x19:                                    # DW_FORM_flag_present
        return 1, None
    raise ValueError(f"DWARF form 0x{form:x}")


def param_names(module) -> dict:
    """{PTX parameter name: source name} from the module's DWARF (empty
    without ``-G``); computed once per module."""
    cached = module.attrs.get("dwarf_param_names")
    if cached is None:
        cached = module.attrs["dwarf_param_names"] = _read(module)
    return cached


def _read(module) -> dict:
    secs = sections(module)
    info, abbrev = secs.get(".debug_info"), secs.get(".debug_abbrev")
    if info is None or abbrev is None:
        return {}
    out: dict = {}
    try:
        _walk(info, abbreviations(abbrev), secs.get(".debug_str"), module, out)
    except (IndexError, ValueError, KeyError):
        pass                       # what was read so far stands
    return out


def _walk(info: Section, abbrevs: dict, strsec, module, out: dict) -> None:
    def strings(sym, off):
        if strsec is None:
            return ""
        pos = strsec.labels.get(sym, 0) + off if sym else off
        return _Reader(strsec, pos).cstring()

    kernels = {f.name: f for f in module.functions}
    r = _Reader(info)
    while r.pos < len(info.data):
        unit_length = r.u(4)
        end = r.pos + unit_length
        r.u(2)                                              # version
        r.u(4)                                              # abbrev offset
        addr_size = r.u(1)
        depth, current = 0, None                            # the subprogram being read
        while r.pos < end:
            code = r.uleb()
            if code == 0:
                depth -= 1
                if current is not None and depth < current[0]:
                    _by_position(current, kernels, out)
                    current = None
                continue
            tag, children, attrs = abbrevs[code]
            values = {}
            for at, form in attrs:
                values[at] = _value(r, form, addr_size, strings)
            if tag == DW_TAG_SUBPROGRAM and children:
                names = [values[a][0] for a in DW_AT_LINKAGE_NAMES if a in values]
                names += [values[DW_AT_NAME][0]] if DW_AT_NAME in values else []
                current = (depth + 1, names, [])
            elif tag == DW_TAG_FORMAL_PARAMETER and current is not None and \
                    depth == current[0] and DW_AT_NAME in values:
                name = values[DW_AT_NAME][0]
                symbol = _location_symbol(info, values.get(DW_AT_LOCATION))
                current[2].append((name, symbol))
                if symbol:
                    out.setdefault(symbol, name)
            if children:
                depth += 1
        r.pos = end


def _location_symbol(info: Section, loc) -> str | None:
    """The symbol of a ``DW_OP_addr SYMBOL`` location block, else None."""
    if not loc or not isinstance(loc[0], tuple):
        return None
    pos, length = loc[0]
    if length >= 2 and info.data[pos] == DW_OP_ADDR:
        return info.symbols.get(pos + 1)
    return None


def _by_position(current, kernels: dict, out: dict) -> None:
    """Parameters without a symbol location: by position in the kernel whose
    PTX name the subprogram's linkage name (or name) is."""
    _, names, params = current
    fn = next((kernels[n] for n in names if isinstance(n, str) and n in kernels), None)
    if fn is None or len(params) != len(fn.params):
        return
    for p, (name, symbol) in zip(fn.params, params):
        if not symbol:
            out.setdefault(p.name, name)
