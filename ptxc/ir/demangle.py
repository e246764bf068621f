"""A small Itanium C++ ABI demangler for the names of kernels and functions.

nvcc (and clang, numba) name a C++ ``__global__`` function by the Itanium
C++ ABI ("Mangling", https://itanium-cxx-abi.github.io/cxx-abi/abi.html):
``_Z4vaddPKfS0_Pfi`` is ``vadd(float const*, float const*, float*, int)``.
ptxc matches the names users type against these (ptxc/ir/names.py), so the
common cases must not need ``c++filt``. ``parse(name)`` reads the subset
that function signatures use and prints it exactly as GNU c++filt does:

- names: plain, nested (``N...E``, namespaces, the anonymous namespace),
  ``St``, internal linkage (``L``), ABI tags (``B``), template arguments
  (types, integer and bool literals, packs ``J...E``), template
  parameters (``T_``) and substitutions (``S_``, ``S0_`` ..., ``Sa``, ``Ss`` ...);
- constructors and destructors (``C1``-``C3``, ``D0``-``D2``: ``Shape::~Shape()``)
  and const member functions (``NK...E``: ``Circle::area(float) const``),
  which C++ classes with virtual functions give (issue 29's indirect calls);
- types: the builtin ones (``v`` ... ``z``, ``Dh`` half, ``Dn``, ``DF16_``
  ...), vendor types (``u6__bf16``), ``const``/``volatile``/``restrict``,
  pointers, references, function types, arrays and class types.

What it does not read (lambdas ``Ul``, local names ``Z``, expressions
``X``, operators, inheriting constructors, volatile and ref-qualified
member functions, pointers to members, vendor suffixes
``.clone``) makes ``parse`` return None: ``demangle`` then asks c++filt when
it is installed and otherwise keeps the mangled name (docs/user-guide.md,
"Kernel and parameter names"). tests/test_names.py compares the output with
c++filt's on every mangled name of the test corpus.
"""
from __future__ import annotations

from dataclasses import dataclass

BUILTIN = {
    "v": "void", "w": "wchar_t", "b": "bool", "c": "char", "a": "signed char",
    "h": "unsigned char", "s": "short", "t": "unsigned short", "i": "int", "j": "unsigned int",
    "l": "long", "m": "unsigned long", "x": "long long", "y": "unsigned long long",
    "n": "__int128", "o": "unsigned __int128", "f": "float", "d": "double", "e": "long double",
    "g": "__float128", "z": "...",
}
BUILTIN_D = {"h": "half", "n": "decltype(nullptr)", "i": "char32_t", "s": "char16_t",
             "u": "char8_t", "a": "auto", "c": "decltype(auto)"}
STD_SUBS = {"a": "std::allocator", "b": "std::basic_string"}  # Ss, Si ...: c++filt spells them out
# template argument literals: (prefix, suffix) around the number, as c++filt prints them
LITERALS = {"i": ("", ""), "j": ("", "u"), "l": ("", "l"), "m": ("", "ul"), "x": ("", "ll"),
            "y": ("", "ull"), "c": ("(char)", ""), "a": ("(signed char)", ""),
            "h": ("(unsigned char)", ""), "s": ("(short)", ""), "t": ("(unsigned short)", "")}


class Unsupported(Exception):
    """A construct this demangler does not read."""


# ------------------------------------------------------------------ types
class Type:
    """A type, printed C-declarator style around ``inner`` (what stands
    where the declared name would: ``*``, `` const``, ``(*)``)."""

    def render(self, inner: str = "") -> str:
        raise NotImplementedError

    def __str__(self) -> str:
        return self.render()


class Named(Type):
    def __init__(self, text: str):
        self.text = text

    def render(self, inner: str = "") -> str:
        return self.text + inner


class Qualified(Type):
    ORDER = ("const", "volatile", "restrict")

    def __init__(self, base: Type, quals: set):
        self.base, self.quals = base, quals

    def render(self, inner: str = "") -> str:
        q = "".join(" " + w for w in self.ORDER if w in self.quals)
        return self.base.render(q + inner)


class Pointer(Type):
    def __init__(self, base: Type, sigil: str):
        self.base, self.sigil = base, sigil

    def render(self, inner: str = "") -> str:
        if isinstance(self.base, (Function, Array)):
            return self.base.render("(" + self.sigil + inner + ")")
        return self.base.render(self.sigil + inner)


class Function(Type):
    def __init__(self, ret: Type, params: list):
        self.ret, self.params = ret, params

    def render(self, inner: str = "") -> str:
        if isinstance(self.ret, Pointer) and isinstance(self.ret.base, (Function, Array)):
            raise Unsupported("a function type returning a pointer to a function or an array")
        return f"{self.ret.render()} {inner}({params_text(self.params)})" if inner else \
            f"{self.ret.render()} ({params_text(self.params)})"


class Array(Type):
    def __init__(self, base: Type, dim: str):
        self.base, self.dim = base, dim

    def render(self, inner: str = "") -> str:
        return self.base.render(f" {inner} [{self.dim}]" if inner else f" [{self.dim}]")


class Pack(Type):
    """A template argument pack ``J...E``: its elements, comma separated."""

    def __init__(self, items: list):
        self.items = items

    def render(self, inner: str = "") -> str:
        return ", ".join(str(t) for t in self.items)


def params_text(params: list) -> str:
    if len(params) == 1 and isinstance(params[0], Named) and params[0].text == "void":
        return ""
    flat = []
    for p in params:
        flat.extend(p.items if isinstance(p, Pack) else [p])
    return ", ".join(str(p) for p in flat)


def args_text(args: list) -> str:
    text = ", ".join(a for a in (str(x) for x in args) if a != "" or len(args) == 1)
    return "<" + text + (" >" if text.endswith(">") else ">")


# --------------------------------------------------------------- results
@dataclass(frozen=True)
class Demangled:
    """One demangled function (or variable) name.

    ``text``: c++filt's rendering (``void ns::k<float>(float*, int)``);
    ``name``: the qualified name with template arguments, no return type or
    parameters (``ns::k<float>``); ``plain``: the same without the last
    component's template arguments (``ns::k``); ``last``: the last component
    with its template arguments (``k<float>``); ``base``: the last component
    alone (``k``); ``params``: the parameter types as printed (None for a
    variable)."""
    text: str
    name: str
    plain: str
    last: str
    base: str
    params: tuple | None


# ----------------------------------------------------------------- parser
class Parser:
    def __init__(self, s: str):
        self.s, self.pos = s, 0
        self.subs: list = []
        self.targs: list | None = None      # the function's template arguments (T_)
        self.quals = ""                     # " const" of a const member function

    # -- reading
    def peek(self, k: int = 0) -> str:
        i = self.pos + k
        return self.s[i] if i < len(self.s) else ""

    def take(self, text: str) -> bool:
        if self.s.startswith(text, self.pos):
            self.pos += len(text)
            return True
        return False

    def expect(self, text: str) -> None:
        if not self.take(text):
            raise Unsupported(f"expected {text!r} at {self.pos}")

    def number(self) -> int:
        start = self.pos
        while self.peek().isdigit():
            self.pos += 1
        if start == self.pos:
            raise Unsupported("expected a number")
        return int(self.s[start:self.pos])

    # -- names
    def encoding(self) -> Demangled:
        comps, is_template = self.name(top=True)
        name = "::".join(c + a for c, a in comps)
        plain = "::".join([c + a for c, a in comps[:-1]] + [comps[-1][0]])
        base, last = comps[-1][0], comps[-1][0] + comps[-1][1]
        if self.pos == len(self.s):
            return Demangled(name, name, plain, last, base, None)
        ret = self.type() if is_template else None
        params = []
        while self.pos < len(self.s):
            params.append(self.type())
        text = f"{name}({params_text(params)}){self.quals}"
        if ret is not None:
            text = f"{ret} {text}"
        return Demangled(text, name, plain, last, base, tuple(str(p) for p in params))

    def name(self, top: bool = False) -> tuple[list, bool]:
        """([(component, template arguments text)], ends in template arguments)."""
        if self.peek() == "N":
            return self.nested(top)
        if self.peek() == "Z":
            raise Unsupported("local name")
        if self.take("St"):
            comps = [("std", ""), (self.unqualified(), "")]
        elif self.peek() == "S":
            sub = self.substitution()
            if self.peek() != "I":
                raise Unsupported("substitution as a name")
            comps = [(str(sub), "")]
        else:
            self.take("L")
            comps = [(self.unqualified(), "")]
        if self.peek() == "I":
            self.subs.append(Named("::".join(c for c, _ in comps)))
            args = self.template_args(top)
            comps[-1] = (comps[-1][0], args_text(args))
            return comps, True
        return comps, False

    def nested(self, top: bool) -> tuple[list, bool]:
        self.expect("N")
        if self.take("K"):
            self.quals = " const"
        if self.peek() in ("r", "V", "K"):
            raise Unsupported("volatile or restrict member function")
        if self.peek() in ("R", "O"):
            raise Unsupported("ref-qualified member function")
        comps: list = []
        is_template = False
        while not self.take("E"):
            self.take("L")
            if self.take("St"):
                comps.append(("std", ""))
                continue
            if self.peek() == "S":
                if comps:
                    raise Unsupported("substitution inside a nested name")
                comps.append((str(self.substitution()), ""))
                is_template = False
                continue
            if self.peek() == "I":
                if not comps:
                    raise Unsupported("template arguments without a name")
                args = self.template_args(top)
                comps[-1] = (comps[-1][0], args_text(args))
                is_template = True
            elif self.peek() in ("C", "D") and self.peek(1) in ("0", "1", "2", "3"):
                if not comps:
                    raise Unsupported("constructor without a class")
                tilde = "~" if self.peek() == "D" else ""
                self.pos += 2
                comps.append((tilde + comps[-1][0], ""))
                is_template = False
            elif self.peek() == "T":
                if comps:
                    raise Unsupported("template parameter inside a nested name")
                comps.append((str(self.template_param()), ""))
                is_template = False
            else:
                comps.append((self.unqualified(), ""))
                is_template = False
            self.subs.append(Named("::".join(c + a for c, a in comps)))
        if not comps:
            raise Unsupported("empty nested name")
        self.subs.pop()
        return comps, is_template

    def unqualified(self) -> str:
        if not self.peek().isdigit():
            raise Unsupported("operator, constructor or unnamed type")
        text = self.source_name()
        while self.take("B"):
            text += f"[abi:{self.source_name()}]"
        return text

    def source_name(self) -> str:
        n = self.number()
        text = self.s[self.pos:self.pos + n]
        if len(text) != n:
            raise Unsupported("truncated identifier")
        self.pos += n
        if text.startswith("_GLOBAL__N"):
            return "(anonymous namespace)"
        return text

    def substitution(self) -> Type:
        self.expect("S")
        c = self.peek()
        if c in STD_SUBS:
            self.pos += 1
            return Named(STD_SUBS[c])
        if self.take("_"):
            index = 0
        else:
            start = self.pos
            while self.peek().isdigit() or self.peek().isupper():
                self.pos += 1
            digits = self.s[start:self.pos]
            self.expect("_")
            if not digits:
                raise Unsupported("bad substitution")
            index = int(digits, 36) + 1
        if index >= len(self.subs):
            raise Unsupported("substitution out of range")
        return self.subs[index]

    def template_args(self, top: bool = False) -> list:
        self.expect("I")
        args = []
        while not self.take("E"):
            args.append(self.template_arg())
        if top:
            self.targs = args
        return args

    def template_arg(self):
        if self.peek() == "L":
            return Named(self.literal())
        if self.take("J"):
            items = []
            while not self.take("E"):
                items.append(self.template_arg())
            return Pack(items)
        if self.peek() == "X":
            raise Unsupported("expression")
        return self.type()

    def literal(self) -> str:
        self.expect("L")
        if self.peek() == "_":
            raise Unsupported("external name as a template argument")
        code = self.peek()
        if code == "b" and self.peek(1) in ("0", "1") and self.peek(2) == "E":
            self.pos += 3
            return "true" if self.s[self.pos - 2] == "1" else "false"
        if code in LITERALS:
            self.pos += 1
            before, after = LITERALS[code]
        else:
            before, after = f"({self.type()})", ""
        neg = self.take("n")
        value = self.number()
        self.expect("E")
        return f"{before}{'-' if neg else ''}{value}{after}"

    # -- types
    def type(self) -> Type:
        c = self.peek()
        if c in BUILTIN:
            self.pos += 1
            return Named(BUILTIN[c])
        if c == "D":
            return self.d_type()
        if c == "u":
            self.pos += 1
            t = Named(self.source_name())
        elif c in ("r", "V", "K"):
            quals = set()
            while self.peek() in ("r", "V", "K"):
                quals.add({"r": "restrict", "V": "volatile", "K": "const"}[self.peek()])
                self.pos += 1
            t = Qualified(self.type(), quals)
        elif c in ("P", "R", "O"):
            self.pos += 1
            t = Pointer(self.type(), {"P": "*", "R": "&", "O": "&&"}[c])
        elif c == "F":
            self.pos += 1
            self.take("Y")
            ret = self.type()
            params = []
            while not self.take("E"):
                if self.peek() in ("R", "O") and self.peek(1) == "E":
                    raise Unsupported("ref-qualified function type")
                params.append(self.type())
            t = Function(ret, params)
        elif c == "A":
            self.pos += 1
            dim = str(self.number()) if self.peek().isdigit() else ""
            self.expect("_")
            t = Array(self.type(), dim)
        elif c == "T":
            t = self.template_param()
            self.subs.append(t)
            if self.peek() != "I":
                return t
            t = Named(str(t) + args_text(self.template_args()))
        elif c == "S" and self.peek(1) != "t":
            t = self.substitution()
            if self.peek() != "I":
                return t
            t = Named(str(t) + args_text(self.template_args()))
        elif c == "N" or c.isdigit() or c == "S":
            comps, _ = self.name()
            t = Named("::".join(c + a for c, a in comps))
        else:
            raise Unsupported(f"type {c!r}")
        self.subs.append(t)
        return t

    def d_type(self) -> Type:
        self.expect("D")
        c = self.peek()
        if c in BUILTIN_D:
            self.pos += 1
            return Named(BUILTIN_D[c])
        if c == "F":
            self.pos += 1
            bits = self.number()
            suffix = "x" if self.take("x") else ""
            self.expect("_")
            return Named(f"_Float{bits}{suffix}")
        if c == "p":
            self.pos += 1
            t = self.type()
            if not isinstance(t, Pack):
                raise Unsupported("pack expansion of a non-pack")
            self.subs.append(t)
            return t
        raise Unsupported(f"type D{c}")

    def template_param(self) -> Type:
        self.expect("T")
        index = 0 if self.take("_") else self.number() + 1
        if index and not self.take("_"):
            raise Unsupported("bad template parameter")
        if self.targs is None or index >= len(self.targs):
            raise Unsupported("template parameter without its argument")
        return self.targs[index]


def parse(mangled: str) -> Demangled | None:
    """The demangled parts of ``mangled``, or None when it is not an
    Itanium name this demangler reads (a C name, a lambda ...)."""
    if not mangled.startswith("_Z") or len(mangled) < 3:
        return None
    p = Parser(mangled[2:])
    try:
        d = p.encoding()
    except (Unsupported, RecursionError, ValueError):
        return None
    return d if p.pos == len(p.s) else None
