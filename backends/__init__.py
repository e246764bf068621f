"""Code generators (installed as ``ptxc.backends``): llvm/, the JIT SIMT
executor; ptx/, the PTX emitter."""
