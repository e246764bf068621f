"""The SQLite report of an injection campaign (``ptxc inject --report``;
docs/inject.md lists the tables and columns)."""
from __future__ import annotations

from ptxc.inject import sites as inject_sites, stats as inject_stats
from ptxc.report.sqlite_tables import new_database

SITE_COLUMNS = ("run", "site", "kernel", "launch", "outcome", "error", "flipped", "line", "opcode",
                "bit", "app_check")


def write(path: str, result: dict, meta: dict) -> None:
    """Replace ``path`` with the campaign's tables: inject_meta,
    inject_space, inject_runs, inject_summary."""
    con = new_database(path, meta, "inject_meta")
    try:
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
