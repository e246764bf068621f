"""Linking several PTX modules into one, resolving their symbols as nvlink
does for relocatable device code (nvcc -rdc=true: rdc.py) and as
cuLinkComplete / nvJitLink do with PTX inputs (driver_modules.py).

A textual link (PTX ISA, "Linkage directives": ``.extern``, ``.visible``,
``.weak``, ``.common``; a symbol without one is local to its module). The
top-level items of every input are kept in order, and:

* a local symbol (printf's ``$str``, a ``static`` function, a kernel's
  ``__shared__`` array) that another input names too is renamed in its own
  input (``NAME_ptxc_N``, N: the input's number), as nvlink keeps the local
  symbols of its objects apart; a renamed one that nothing uses any more is
  dropped;
* an ``.extern`` declaration of a function or variable that an input
  defines is dropped when the definition comes first; a later function
  definition makes it a plain prototype, a later variable definition moves
  up to its place (a variable has no prototype), after the variables of its
  file that its initializer names;
* ``.extern .shared`` arrays (dynamic shared memory) are declared once per
  name, with the largest alignment;
* of two definitions of a ``.weak`` or ``.common`` symbol the first is kept;
  two other definitions are nvlink's "multiple definition of 'NAME' in B,
  first defined in A";
* with ``strict`` (an executable's link), an ``.extern`` that no input
  defines is taken from ``library`` (the device runtime's PTX,
  cudadevrt_ptx.py: only the items referenced, with what they reference in
  turn), or is a function that ptxc's executor provides (``vprintf``,
  ``malloc``, ...: ``BUILTIN_CALLS``) or the driver (``cudaGraphSetConditional``:
  driver_funcs_ptx.py); anything else is nvlink's "undefined
  reference to 'NAME' in A".

The header takes the highest ``.version`` and the first ``.target``;
``.file`` numbers are renumbered per input so that ``.loc`` lines keep
pointing at their files.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ptxc.errors import PtxcError

_HEADER = re.compile(r"^\s*\.(version|target|address_size)\b.*$", re.M)
_FILE = re.compile(r"^(\s*\.file\s+)(\d+)", re.M)
_LOC = re.compile(r"(\.loc\s+)(\d+)")
_FUNC_NAME = re.compile(r"\.(?:func|entry)\s*(?:\([^)]*\)\s*)?([\w$%.]+)")
_LEADING_COMMENTS = re.compile(r"^(?:\s*//[^\n]*(?:\n|$))+")
_VAR_NAME = re.compile(r"\.(?:global|shared|const)\b[^;=\[{]*?([\w$%]+)\s*(?:\[|=|;|$)")
_ALIGN = re.compile(r"\.align\s+(\d+)")
_WORD = re.compile(r"(?<![\w$%.])[A-Za-z_$%][\w$]*")
MAX_NAMED = 5          # symbols named in one error message


@dataclass
class Item:
    """One top-level item of one input."""
    text: str
    origin: str                  # the input's name
    index: int                   # the input's number (0-based)
    sym: str | None = None
    kind: str | None = None      # 'def' | 'extern' (a declaration) | None
    func: bool = False
    words: tuple = ()            # the directives and names before a body or initializer

    @property
    def weak(self) -> bool:
        return ".weak" in self.words or ".common" in self.words

    @property
    def local(self) -> bool:
        return self.kind == "def" and not {".visible", ".weak", ".common", ".extern"} & set(self.words)

    @property
    def dynamic_shared(self) -> bool:
        return self.kind == "extern" and not self.func and ".shared" in self.words


def link(inputs: list[tuple[str, str]], library: list[tuple[str, str]] = (),
         strict: bool = False) -> str:
    """One PTX text from the (name, text) pairs ``inputs`` (see the module doc)."""
    if len(inputs) == 1 and not strict:
        return inputs[0][1]
    texts = _renumber_files([t for _, t in inputs])
    items = [_item(s, name, i) for i, ((name, _), t) in enumerate(zip(inputs, texts))
             for s in _items(_body(t))]
    if strict:
        items += _supply(items, library, len(inputs))
    renamed = _rename_locals(items)
    out = _drop_unused(_resolve(items, _definitions(items)), renamed)
    return _header(texts) + "\n" + "\n\n".join(s.text for s in out) + "\n"


def undefined(items: list[Item]) -> dict:
    """{symbol: the first input that declares it} of the ``.extern``
    functions and variables (not dynamic shared memory) that no item
    defines (a local definition serves its own input only)."""
    defined = _definitions(items)
    out = {}
    for it in items:
        if it.kind == "extern" and not it.dynamic_shared and _own(it, defined) is None:
            out.setdefault(it.sym, it.origin)
    return out


# ---------------------------------------------------------------- steps
def _definitions(items: list[Item]) -> dict:
    """{symbol: its first definition, (input, symbol): a local definition};
    two strong definitions of one symbol are an error."""
    defined, twice = {}, []
    for it in items:
        if it.kind != "def":
            continue
        if it.local:
            defined.setdefault((it.index, it.sym), it)
            continue
        first = defined.get(it.sym)
        if first is None:
            defined[it.sym] = it
        elif not (first.weak and it.weak):
            twice.append((it, first))
    if twice:
        (it, first), more = twice[0], [t.sym for t, _ in twice[1:]]
        raise PtxcError(f"linking PTX: multiple definition of {_named(it.sym)} in "
                        f"{it.origin}, first defined in {first.origin}{_more(more)}")
    return defined


def _own(it: Item, defined: dict) -> Item | None:
    """The definition that serves ``it``'s symbol in ``it``'s input."""
    return defined.get((it.index, it.sym)) or defined.get(it.sym)


def _rename_locals(items: list[Item]) -> set:
    """Rename each local symbol that another input also names (module doc);
    returns the new names."""
    owners: dict[str, list[Item]] = {}
    for it in items:
        if it.sym:
            owners.setdefault(it.sym, []).append(it)
    taken = set(owners)
    renames: dict[int, dict[str, str]] = {}
    for sym, its in owners.items():
        for it in its:
            if not it.local:
                continue
            others = [o for o in its if o.index != it.index]
            if any(not o.local or o.index < it.index for o in others):
                new = f"{sym}_ptxc_{it.index + 1}"
                while new in taken:
                    new += "_"
                taken.add(new)
                renames.setdefault(it.index, {})[sym] = new
    for it in items:
        names = renames.get(it.index)
        if names and not it.text.lstrip().startswith(".file"):
            it.text = _substitute(it.text, names)
            if it.sym in names:
                it.sym = names[it.sym]
    return {n for names in renames.values() for n in names.values()}


def _substitute(text: str, names: dict[str, str]) -> str:
    return _WORD.sub(lambda m: names.get(m.group(0), m.group(0)), text)


def _supply(items: list[Item], library: list[tuple[str, str]], index: int) -> list[Item]:
    """The library items that the inputs' undefined externs need (and what
    those need in turn), in the library's order, as input number ``index``;
    an extern that neither the library nor the executor provides is an
    error."""
    missing = undefined(items)
    lib = [_item(s, name, index) for name, t in library for s in _items(_body(t))]
    offered = {it.sym: it for it in lib if it.kind == "def"}
    wanted, todo = set(), [s for s in missing if s in offered]
    while todo:
        sym = todo.pop()
        if sym not in wanted:
            wanted.add(sym)
            todo += [w for w in _WORD.findall(offered[sym].text) if w in offered]
    needs = {w for s in wanted for w in _WORD.findall(offered[s].text)}
    from ptxc.backends.llvm.plan import BUILTIN_CALLS
    from .driver_funcs_ptx import FUNCTIONS as DRIVER_FUNCTIONS     # the driver supplies these
    absent = [s for s in missing
              if s not in offered and s not in BUILTIN_CALLS and s not in DRIVER_FUNCTIONS]
    if absent:
        raise PtxcError(_undefined_message(absent, missing))
    return [it for it in lib if (it.sym in wanted if it.kind == "def" else
                                 it.kind == "extern" and it.sym in needs)]


def _undefined_message(absent: list[str], origins: dict) -> str:
    first = absent[0]
    hint = (" (a function of the CUDA device runtime, libcudadevrt, that ptxc does not "
            "provide)" if first.startswith(("cuda", "__cuda", "cnp")) else "")
    return (f"linking PTX: undefined reference to {_named(first)} in {origins[first]}{hint}"
            f"{_more(absent[1:])}")


def _more(syms: list[str]) -> str:
    """' (and 2 more: 'a', 'b')', at most MAX_NAMED of them named."""
    if not syms:
        return ""
    names = ", ".join(_named(s) for s in syms[:MAX_NAMED])
    return f" (and {len(syms)} more: {names}{', ...' if len(syms) > MAX_NAMED else ''})"


def _resolve(items: list[Item], defined: dict) -> list[Item]:
    """Items in order with each symbol defined once (module doc)."""
    out, kept, shared = [], set(), {}
    for it in items:
        if it.dynamic_shared:
            first = shared.get(it.sym)
            if first is None:
                shared[it.sym] = it
                out.append(it)
            else:
                first.text = _max_align(first.text, it.text)
            continue
        own = _own(it, defined) if it.sym else None
        key = (it.index, it.sym) if own is not None and own.local else it.sym
        if it.kind == "extern" and own is not None:
            if key in kept:
                continue              # served by a definition above
            if it.func:               # a prototype of a definition below, of its linkage
                linkage = next((w + " " for w in (".weak", ".visible") if w in own.words), "")
                it.text = re.sub(r"^\s*\.extern\s+", linkage, it.text)
            else:                     # a variable: its definition moves up here
                _hoist(own, defined, kept, out)
                continue
        if it.kind == "def":
            if own is not it or key in kept:
                continue
            kept.add(key)
        out.append(it)
    return out


def _hoist(var: Item, defined: dict, kept: set, out: list[Item]) -> None:
    """Emit variable definition ``var`` here, after the variables of its
    input that its initializer names (``generic($str)``, ``&target``)."""
    key = (var.index, var.sym) if var.local else var.sym
    if key in kept:
        return
    kept.add(key)
    init = var.text.split("=", 1)[1] if "=" in var.text else ""
    for word in dict.fromkeys(_WORD.findall(init)):
        dep = defined.get((var.index, word)) or defined.get(word)
        if dep is not None and not dep.func and dep.index == var.index:
            _hoist(dep, defined, kept, out)
    out.append(var)


def _drop_unused(out: list[Item], renamed: set) -> list[Item]:
    """``out`` without the renamed local definitions that no other kept
    item mentions (those of a dropped copy of a .weak function)."""
    if not renamed:
        return out
    mentions = {}
    for o in out:
        for w in set(_WORD.findall(o.text)) & renamed:
            mentions[w] = mentions.get(w, 0) + 1
    return [o for o in out if not (o.kind == "def" and o.sym in renamed and
                                   mentions.get(o.sym, 0) <= 1)]


def _max_align(a: str, b: str) -> str:
    x, y = _ALIGN.search(a), _ALIGN.search(b)
    if x and y and int(y.group(1)) > int(x.group(1)):
        return a[:x.start(1)] + y.group(1) + a[x.end(1):]
    return a


def _named(sym: str) -> str:
    """'NAME' and, for a C++ name, what it demangles to."""
    from ptxc.ir.names import demangle_all
    plain = demangle_all([sym]).get(sym, sym)
    return f"'{sym}'" + (f" ({plain})" if plain != sym else "")


# -------------------------------------------------------------- reading
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
            if depth == 0 and "=" not in text[start:i].split("{", 1)[0]:
                items.append(text[start:i + 1].strip())     # (an initializer ends at its ';')
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


def _item(text: str, origin: str, index: int) -> Item:
    """The item with its symbol: a function or variable, defined or declared."""
    head = text.split("{", 1)[0]
    words = head.split()
    it = Item(text, origin, index, words=tuple(head.split("=", 1)[0].split()))
    if not words or words[0] == ".file":
        return it
    m = _FUNC_NAME.search(head)
    if m and (".func" in words or ".entry" in words):
        it.sym, it.func = m.group(1), True
        it.kind = "extern" if "{" not in text else "def"
        return it
    m = _VAR_NAME.search(head.split("=", 1)[0])
    if m:
        it.sym = m.group(1)
        it.kind = "extern" if ".extern" in words else "def"
    return it
