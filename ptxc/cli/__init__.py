"""The ``ptxc`` command line: one module per command (docs/user-guide.md).

``main`` holds the command group and runs it (the ``ptxc`` console script is
``ptxc.cli.main:main``; ``python -m ptxc.cli`` runs it too).
"""
