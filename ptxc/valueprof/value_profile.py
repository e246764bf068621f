"""Value profiles: masks, the per-kernel summary and the reports
(docs/value-profile.md; SASSI's case study III, Stephenson et al.,
"Flexible Software Profiling of GPU Architectures", ISCA 2015, Table 2).

A launch's value profile (``Profile.value_profile``) is
``{"instructions": {key: entry}, "summary": {...}}`` where an entry holds,
for one destination register of one instruction (results_value.py):
``ones`` / ``zeros`` (the bits seen 1 / seen 0 over every executing lane),
``writes`` (warp-level), ``scalar_writes`` and ``lanes`` (thread-level).
Profiles of several launches of a kernel merge entry by entry (``merge``):
the masks are OR-ed and the counts summed, so a kernel's summary covers
all its launches, as SASSI's profile covers a whole program run.
"""
from __future__ import annotations

SUMMARY_KEYS = ("static_const_bits_pct", "dynamic_const_bits_pct",
                "static_scalar_pct", "dynamic_scalar_pct",
                "registers", "register_bits", "writes", "scalar_writes")


def bit_string(e: dict) -> str:
    """The bits from the most significant down as SASSI's valueprof prints
    them: ``1`` / ``0`` constant one / zero, ``T`` both seen (not constant),
    ``X`` never written (an instruction that never executed)."""
    out = []
    for b in range(e["bits"] - 1, -1, -1):
        one, zero = e["ones"] >> b & 1, e["zeros"] >> b & 1
        out.append("T" if one and zero else "1" if one else "0" if zero else "X")
    return "".join(out)


def constant_bits(e: dict) -> int:
    """Bits of the register that held one value in every executing lane."""
    if not e["writes"]:
        return 0
    return e["bits"] - bin(e["ones"] & e["zeros"]).count("1")


def summarize(entries) -> dict:
    """SASSI's Table 2 over the executed entries (docs/value-profile.md):
    static = every (instruction, destination) counts once; dynamic =
    weighted by thread-level writes (constant bits) or counted per
    warp-level write (scalar)."""
    run = [e for e in entries if e["writes"]]
    bits = sum(e["bits"] for e in run)
    lane_bits = sum(e["bits"] * e["lanes"] for e in run)
    writes = sum(e["writes"] for e in run)
    scalar = sum(e["scalar_writes"] for e in run)
    return {
        "static_const_bits_pct": pct(sum(constant_bits(e) for e in run), bits),
        "dynamic_const_bits_pct": pct(sum(constant_bits(e) * e["lanes"] for e in run), lane_bits),
        "static_scalar_pct": pct(sum(1 for e in run if e["scalar_writes"] == e["writes"]), len(run)),
        "dynamic_scalar_pct": pct(scalar, writes),
        "registers": len(run), "register_bits": bits, "writes": writes, "scalar_writes": scalar}


def pct(a: int, b: int):
    return round(100.0 * a / b, 4) if b else None


def make(entries: dict) -> dict:
    """A Profile's ``value_profile`` from results_value.value_entries."""
    return {"instructions": entries, "summary": summarize(entries.values())}


def merge(profiles) -> dict:
    """One value profile of several launches of one kernel (masks OR-ed,
    counts summed)."""
    out: dict = {}
    for vp in profiles:
        for key, e in vp["instructions"].items():
            m = out.setdefault(key, {**e, "ones": 0, "zeros": 0, "writes": 0,
                                     "scalar_writes": 0, "lanes": 0})
            m["ones"] |= e["ones"]
            m["zeros"] |= e["zeros"]
            for k in ("writes", "scalar_writes", "lanes"):
                m[k] += e[k]
    return make(out)


def rows(vp: dict) -> list[dict]:
    """One flat row per entry (order of the text), masks as bit strings."""
    out = []
    for e in sorted(vp["instructions"].values(), key=lambda e: (e["function"], e["index"], e["dst"])):
        out.append({"function": e["function"], "index": e["index"], "line": e["line"],
                    "opcode": e["opcode"], "register": e["register"], "bits": e["bits"],
                    "mask": bit_string(e), "constant_bits": constant_bits(e),
                    "scalar_writes": e["scalar_writes"], "writes": e["writes"], "lanes": e["lanes"],
                    "source": e.get("source") or ""})
    return out


def summary_lines(s: dict, indent: str = "  ") -> list[str]:
    def f(v):
        return "-" if v is None else f"{v:.2f}%"
    return [f"{indent}{'constant register bits':28s} static {f(s['static_const_bits_pct']):>8}  "
            f"dynamic {f(s['dynamic_const_bits_pct']):>8}",
            f"{indent}{'scalar writes':28s} static {f(s['static_scalar_pct']):>8}  "
            f"dynamic {f(s['dynamic_scalar_pct']):>8}",
            f"{indent}{'registers written':28s} {s['registers']} ({s['register_bits']} bits), "
            f"{s['writes']} warp-level writes, {s['scalar_writes']} scalar"]


def text(vp: dict, kernel: str = "") -> str:
    """The per-instruction table and the summary."""
    return rows_text(rows(vp), vp["summary"], kernel)


def rows_text(table: list, summary: dict, kernel: str = "") -> str:
    """``text`` of rows already flattened (``Profile.to_dict()``'s form)."""
    lines = [f"value profile{' of ' + kernel if kernel else ''} "
             "(mask: most significant bit first; 1/0 constant, T varies, X never written)"]
    lines.append(f"  {'function':20s} {'line':>5}  {'opcode':18s} {'register':9s} "
                 f"{'scalar/writes':>15}  mask")
    for r in table:
        lines.append(f"  {r['function'][:20]:20s} {str(r['line'] or '-'):>5}  {r['opcode'][:18]:18s} "
                     f"{r['register'][:9]:9s} {str(r['scalar_writes']) + '/' + str(r['writes']):>15}  "
                     f"{r['mask']}" + (f"  {r['source']}" if r.get("source") else ""))
    lines += summary_lines(summary)
    return "\n".join(lines) + "\n"


CSV_COLUMNS = ("function", "index", "line", "opcode", "register", "bits", "mask",
               "constant_bits", "scalar_writes", "writes", "lanes", "source")


def csv_text(table: list) -> str:
    """The rows as CSV (``CSV_COLUMNS``; header first)."""
    import csv
    import io
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for r in table:
        w.writerow([r[c] for c in CSV_COLUMNS])
    return out.getvalue()
