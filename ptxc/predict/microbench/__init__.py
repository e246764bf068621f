"""The micro-benchmarks of ``ptxc calibrate``, generated as PTX text
(Luo & Suda 2011, sections 3.1 and 3.4; docs/predict.md, "ptxc calibrate").

    kernel     the Kernel record and the PTX module around a list of kernels
    table1     Table 1: for every row and operand kind, two kernels that differ
               by exactly one PTX instruction, repeated n (10000) times; and
               the pair of the ld/st row (one dependent global load)
    cpd        the CPD micro-benchmark (eqs. 3-5): k computation instructions
               per global load, run with 1..m warps per SM on the same data;
               a copy kernel for the bandwidth of eq. (2)

Every kernel is plain PTX (``.target sm_70``: the driver compiles it for any
GPU of compute capability 7.0 or later); tests/test_calibrate.py parses them
all, runs them under ptxc and, where ptxas is installed, assembles them.
"""
