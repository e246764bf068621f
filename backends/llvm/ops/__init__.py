"""The lowering of PTX instructions to LLVM IR, one module per family
(``table`` maps every base opcode to its handler), and the runtime parts
instructions need: device calls (printf, assert), the device heap,
cooperative launches, MMA fragment layouts, the texture handle table.

    int_arith, bit_ops          integer arithmetic; logic, shifts, bit fields
    float_arith                 floating point (f32, f64, f16, bf16, pairs)
    move, convert               mov/selp/slct/setp/set; cvt
    memory, atomics             ld/st/cvta/isspacep/cp.async; atom/red
    access, resolve             what an access touches (below the lowering
                                and the instruments); checked lane pointers
                                and masked gathers/scatters
    fast_access, outlined       the vector fast path of ld/st; its lane-shape
                                test as an out-of-line helper (compile time)
    slow_access                 the per-lane arm of a fast-path access as an
                                out-of-line helper (compile time)
    call_params                 .func call arguments and return values
    call_frames                 calls of recursive functions: the per-thread
                                call stack, frames, stack overflow
    indirect_calls              calls through a function pointer: per-lane
                                dispatch to the inlined candidates
    warp (+ warp_ir)            warp collectives, bar.red
    mbarrier                    arrive-wait barriers
    mma (+ mma_frags), ldmatrix tensor-core instructions; ldmatrix/stmatrix
    texture (+ texture_objects) tex/tld4/suld/sust; the handle table
    builtin (+ device_calls, printf_format), heap_calls (+ device_heap), coop
                                device calls, the device heap, grid sync
    cdp_calls (+ device_launch) device-side kernel launches (dynamic parallelism)
    common                      helpers of the lowerings
"""
