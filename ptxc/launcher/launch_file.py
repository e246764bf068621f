"""Launch files for ``ptxc profile --launches FILE``: a grid, a block and
arguments per kernel, written by the user's harness or converted from an XLA
dump (format: docs/profile.md, "Launch files").

``load_launches(path, module)`` reads a JSON or CSV file (by extension:
``.json`` / ``.csv``; otherwise by its first character: ``[`` or ``{`` is
JSON), checks every entry against ``module`` and returns ``{kernel:
FileLaunch}``. Every problem is one :class:`PtxcError` line naming the place:
``FILE:LINE:1`` for CSV, ``FILE: $[2].grid`` (the JSON path) for JSON,
``FILE:LINE:COL`` for JSON that does not parse. Argument names and values
use the syntax of ``--arg`` (docs/launch.md); a relative ``@file.npy`` is
read relative to the launch file's folder.
"""
from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import dataclass, field

from ptxc.errors import PtxcError, SrcLoc

CSV_COLUMNS = ("kernel", "grid", "block", "args")
JSON_KEYS = ("kernel", "grid", "block", "args")


@dataclass
class FileLaunch:
    """One entry: ``block`` None means .reqntid, then .maxntid; ``args``
    maps parameter indices to values (as ``args.parse_arg_strings``)."""
    kernel: str
    grid: tuple
    block: tuple | None
    args: dict = field(default_factory=dict)
    where: str = ""                       # 'launches.csv:3' or 'launches.json $[0]'


class Place:
    """Where an entry is, for error messages and the report."""

    def __init__(self, path: str, line: int | None = None, json_path: str = ""):
        self.path, self.line, self.json_path = path, line, json_path

    def at(self, key: str) -> "Place":
        sub = f"[{key}]" if isinstance(key, int) else f".{key}"
        return Place(self.path, self.line, self.json_path + sub)

    def text(self) -> str:
        return f"{self.path}:{self.line}" if self.line else f"{self.path} ${self.json_path}"

    def error(self, msg: str) -> PtxcError:
        if self.line:
            return PtxcError(msg, SrcLoc(self.path, self.line))
        return PtxcError(f"{self.path}: ${self.json_path}: {msg}")


def load_launches(path: str, module, skip_unknown: bool = False) -> dict:
    """{kernel's PTX name: FileLaunch} from the launch file at ``path``; an
    entry names its kernel by the rule of ptxc/ir/names.py, and one that
    names no kernel of ``module`` is an error, or left out with
    ``skip_unknown`` (a batch of modules shares one launch file)."""
    from ptxc.ir.names import matches
    entries = read_entries(path)
    out: dict = {}
    for kernel, place, grid, block, args in entries:
        if skip_unknown and not any(matches(k.name, kernel) for k in module.kernels):
            continue
        fn = find(module, kernel, place)
        if fn.name in out:
            raise place.error(f"kernel '{kernel}' already has a launch ({out[fn.name].where})")
        out[fn.name] = FileLaunch(fn.name, grid, block, bind(fn, args, place), place.text())
    return out


def read_entries(path: str) -> list:
    """The parsed entries (kernel, place, grid, block, args) of a launch file."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as e:
        raise PtxcError(f"cannot read launch file '{path}': {getattr(e, 'strerror', None) or e}")
    return parse_json(path, text) if is_json(path, text) else parse_csv(path, text)


def kernel_names(path: str) -> list[str]:
    """The kernels a launch file names, in file order."""
    return [e[0] for e in read_entries(path)]


def is_json(path: str, text: str) -> bool:
    ext = os.path.splitext(path)[1].lower()
    if ext in (".json", ".csv"):
        return ext == ".json"
    return text.lstrip()[:1] in ("[", "{")


def find(module, kernel: str, place: Place):
    """The kernel an entry names (ptxc/ir/names.py), or an error at the entry."""
    from ptxc.ir.names import resolve
    try:
        name = resolve([k.name for k in module.kernels], kernel, scope=f" in {module.filename}")
    except PtxcError as e:
        raise place.error(e.message) from None
    return next(k for k in module.kernels if k.name == name)


def bind(fn, args: list, place: Place) -> dict:
    """[(name, value text, place)] -> {parameter index: value}."""
    from ptxc.launcher.args import param_index, parse_value
    out = {}
    for name, value, where in args:
        try:
            idx = param_index(fn, name)
            parsed = parse_value(fn, npy_path(value, place.path))
        except PtxcError as e:
            raise where.error(e.message.splitlines()[0]) from None
        if idx in out:
            raise where.error(f"parameter '{fn.params[idx].name}' given twice")
        out[idx] = parsed
    return out


def npy_path(value: str, launch_file: str) -> str:
    """'@a.npy' relative to the launch file's folder."""
    if value.startswith("@") and not os.path.isabs(value[1:]):
        return "@" + os.path.join(os.path.dirname(launch_file) or ".", value[1:])
    return value


# ------------------------------------------------------------------- JSON
def parse_json(path: str, text: str) -> list:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise PtxcError(f"not valid JSON: {e.msg}", SrcLoc(path, e.lineno, e.colno)) from None
    root = Place(path)
    if isinstance(data, list):
        items = [(None, root.at(i), v) for i, v in enumerate(data)]
    elif isinstance(data, dict):
        items = [(k, root.at(k), v) for k, v in data.items()]
    else:
        raise root.error("expected a list of launches or an object keyed by kernel name")
    return [json_entry(key, place, v) for key, place, v in items]


def json_entry(key, place: Place, v) -> tuple:
    if not isinstance(v, dict):
        raise place.error("expected an object with 'grid' (and 'block', 'args')")
    allowed = JSON_KEYS if key is None else JSON_KEYS[1:]
    for k in v:
        if k not in allowed:
            raise place.at(k).error(f"unknown key (allowed: {', '.join(allowed)})")
    if key is None:
        key = v.get("kernel")
        if not isinstance(key, str) or not key:
            raise place.at("kernel").error("expected the kernel's name (a string)")
    if "grid" not in v:
        raise place.error("missing 'grid'")
    grid = json_dims(v["grid"], place.at("grid"))
    block = json_dims(v["block"], place.at("block")) if v.get("block") is not None else None
    return key, place, grid, block, json_args(v.get("args"), place.at("args"))


def json_dims(v, place: Place) -> tuple:
    items = [v] if isinstance(v, int) and not isinstance(v, bool) else v
    if (not isinstance(items, list) or not 1 <= len(items) <= 3
            or any(isinstance(x, bool) or not isinstance(x, int) or x < 1 for x in items)):
        raise place.error(f"expected a positive integer or a list of 1 to 3, got {json.dumps(v)}")
    return tuple(items) + (1,) * (3 - len(items))


def json_args(v, place: Place) -> list:
    if v is None:
        return []
    if not isinstance(v, dict):
        raise place.error('expected an object {"NAME": VALUE}')
    out = []
    for name, value in v.items():
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise place.at(name).error("expected a number or a string in the --arg syntax "
                                       f"(docs/launch.md), got {json.dumps(value)}")
        out.append((name, str(value), place.at(name)))
    return out


# -------------------------------------------------------------------- CSV
def parse_csv(path: str, text: str) -> list:
    reader = csv.reader(io.StringIO(text, newline=""))
    header, out = None, []
    for cells in reader:
        place = Place(path, reader.line_num)
        cells = [c.strip() for c in cells]
        if not any(cells) or cells[0].startswith("#"):
            continue
        if header is None:
            header = csv_header(cells, place)
            continue
        if len(cells) != len(header):
            raise place.error(f"{len(cells)} fields, the header has {len(header)}")
        out.append(csv_entry(dict(zip(header, cells)), place))
    if header is None:
        raise PtxcError(f"{path}: empty launch file (expected a header "
                        f"'{','.join(CSV_COLUMNS)}' and one line per kernel)")
    return out


def csv_header(cells: list, place: Place) -> list:
    for c in cells:
        if c not in CSV_COLUMNS:
            raise place.error(f"unknown column '{c}' in the header (columns: "
                              f"{', '.join(CSV_COLUMNS)}; 'kernel' and 'grid' are required)")
    for c in ("kernel", "grid"):
        if c not in cells:
            raise place.error(f"the header has no '{c}' column")
    if len(set(cells)) != len(cells):
        raise place.error("a column appears twice in the header")
    return cells


def csv_entry(row: dict, place: Place) -> tuple:
    if not row["kernel"]:
        raise place.error("empty kernel name")
    grid = csv_dims(row["grid"], "grid", place)
    block = csv_dims(row["block"], "block", place) if row.get("block") else None
    return row["kernel"], place, grid, block, csv_args(row.get("args", ""), place)


def csv_dims(text: str, what: str, place: Place) -> tuple:
    parts = text.lower().split("x")
    try:
        dims = [int(p) for p in parts]
    except ValueError:
        dims = []
    if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
        raise place.error(f"{what} '{text}': expected X, XxY or XxYxZ with positive integers")
    return tuple(dims) + (1,) * (3 - len(dims))


def csv_args(text: str, place: Place) -> list:
    out = []
    for item in text.split():
        name, eq, value = item.partition("=")
        if not eq or not name or not value:
            raise place.error(f"argument '{item}' is not NAME=VALUE")
        out.append((name, value, place))
    return out
