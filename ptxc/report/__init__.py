"""The rendering library every tool prints with: SQLite tables, results per
CUDA source line, and the self-contained HTML report (docs/report.md). It
knows no tool: a tool's own tables live in the tool's folder.

    sqlite_tables   SQLite report files: one table per list of rows
    kernel_names    a launch's (kernel, module) key and readable (demangled) names
    source_profile  per-instruction records -> CUDA source lines
    source_render   the text and CSV of a ``--by source`` view
    source_views    ``--by source`` of ``ptxc opt``, ``profile`` and ``run``
    html_model      the HTML report's data, a JSON-ready dict
    html_cfg        a function's CFG as SVG, coloured by divergence
    html_plots      SASSI-style plots as SVG
    html_report     the HTML page: assets/ (CSS, JS) inlined
    status_line     a one-line progress report on a terminal
"""
