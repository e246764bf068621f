"""The SQLite report of an injection campaign (``ptxc inject --report``;
docs/inject.md lists the tables and columns)."""
from __future__ import annotations

import os
import sqlite3

from . import inject_sites, inject_stats

SITE_COLUMNS = ("run", "site", "kernel", "launch", "outcome", "error", "flipped", "line", "opcode",
                "bit", "app_check")


def write(path: str, result: dict, meta: dict) -> None:
    """Replace ``path`` with the campaign's tables: inject_meta,
    inject_space, inject_runs, inject_summary."""
    if os.path.exists(path):
        os.remove(path)
    con = sqlite3.connect(path)
    try:
        con.execute("CREATE TABLE inject_meta (key TEXT PRIMARY KEY, value TEXT)")
        con.executemany("INSERT INTO inject_meta VALUES (?, ?)",
                        [(k, None if v is None else str(v)) for k, v in meta.items()])
        con.execute("CREATE TABLE inject_space (launch INTEGER, kernel TEXT, target TEXT, "
                    "threads INTEGER, instances INTEGER)")
        for rec in result["launches"].records:
            for t in inject_sites.TARGETS:
                c = rec.counts[t]
                con.execute("INSERT INTO inject_space VALUES (?, ?, ?, ?, ?)",
                            (rec.index, rec.kernel, t, int((c > 0).sum()), int(c.sum())))
        con.execute("CREATE TABLE inject_runs (run INTEGER PRIMARY KEY, site TEXT, kernel TEXT, "
                    "launch INTEGER, outcome TEXT, error TEXT, flipped INTEGER, line INTEGER, "
                    "opcode TEXT, bit INTEGER, app_check TEXT)")
        con.executemany(f"INSERT INTO inject_runs VALUES ({', '.join('?' * len(SITE_COLUMNS))})",
                        [(i, *(o.get(c) for c in SITE_COLUMNS[1:]))
                         for i, o in enumerate(result["outcomes"])])
        rows = inject_stats.summarise(result["outcomes"])
        cols = list(rows[0]) if rows else ["kernel", "runs"]
        con.execute(f"CREATE TABLE inject_summary ({', '.join(c + (' TEXT' if c == 'kernel' else ' REAL') for c in cols)})")
        con.executemany(f"INSERT INTO inject_summary VALUES ({', '.join('?' * len(cols))})",
                        [tuple(r[c] for c in cols) for r in rows])
        con.commit()
    finally:
        con.close()
