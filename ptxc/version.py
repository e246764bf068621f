"""The version of ptxc, in one place below every other module.

``ptxc.__version__`` (the package facade) re-exports it; a module below the
facade that needs the version (the parser's grammar cache name, the SQLite
report) imports it from here, not from the facade.
"""
__version__ = "0.1.0"
