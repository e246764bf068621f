"""The lowering of PTX instructions to LLVM IR, one module per family
(``table`` maps every base opcode to its handler), and the runtime parts
instructions need: device calls (printf, assert), the device heap,
cooperative launches, MMA fragment layouts.
"""
