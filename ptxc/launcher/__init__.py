"""Launching a kernel on the CPU: configuration, arguments, buffers, the
slice and CTA classes a launch runs, its result and its faults
(docs/launch.md).

``ptxc.launch`` (the function) is the public entry point; the folder is
``launcher`` so that the name ``ptxc.launch`` stays the function.
"""
