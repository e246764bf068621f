"""The front end: PTX text -> the SSA IR (docs/ir.md, docs/ssa.md).

    ptx.lark          the grammar (LALR, one generic instruction rule)
    lexer             the fast lexer that lark's LALR parser runs with
    parser            parse_module / load_module: text -> ir.Module, located errors
    syntax            the lark transformer: grammar rules -> small tuples
    ptx_numbers       numeric literals -> ir.Imm
    builder           a module: directives, declarations, functions
    function_builder  one function body: scopes, instructions, basic blocks
    scopes            registers before SSA (Var), lexical scopes, special registers
    opcode_words      an opcode word: known opcode, modifiers, operand counts, ISA rules
    decl_rules        what the ISA allows a declaration: ranges, initializers, sizes
    debug_directives  .loc, .file and .section checked as ptxas checks them
    ssa               SSA construction with phis (Braun et al. 2013)
    entry_scan        the .entry functions of PTX text, without parsing it
    input_hint        a one-line hint for input that is not PTX (CUDA source, ELF, cubin)

``ptxc.parse`` and ``ptxc.load`` are the public entry points.
"""
