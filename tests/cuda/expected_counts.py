"""Hand-derived expected dynamic counters for kernels in tests/cuda/.

Every number here was derived by hand from the committed .ptx text, step by step, in
tests/cuda/EXPECTED.md (section given by each launch's "id", e.g. "L04"); none comes from
running ptxc.  Counter definitions: /work/shared/METRICS.md.

EXPECTED maps (ptx file name in tests/cuda, kernel name) to a list of launches.  A launch:

  id        section of EXPECTED.md with the derivation
  grid      (x, y, z) CTAs
  block     (x, y, z) threads per CTA
  args      kernel arguments in parameter order, one spec string each:
              "name=<int>"                          a .u32/.s32 scalar
              "name=formula:<expr>:<dtype>:<len>"   an array; <expr> is a numpy expression
                                                   in i = np.arange(len)
              "name=zeros:<dtype>:<len>"            an array of zeros (an output)
            dtypes: i32, u32, f32, f64.
  counters  launch totals (METRICS.md names); static_inst = instructions in the kernel's
            own text (called .func bodies not included).  flop_count_sp is given only where it is
            unambiguous (absent for kernels with f32 atomics, see EXPECTED.md).
  blocks    per basic block: (function, first, instrs, warp_execs, thread_execs), where
            `first` is the 1-based index of the block's first instruction among the
            instruction statements of `function` in text order (labels and directives not
            counted), and `instrs` its static size.
  outputs   name -> numpy expression for the whole array after the launch; it may use
            i = np.arange(len(that array)), np, and the input arrays by name.  Elements the
            kernel does not write keep their initial value (zeros here).
"""

EXPECTED = {
    ("data_branch.sm90.ptx", "vec_add"): [
        {
            "id": "L01",
            "grid": (2, 1, 1),
            "block": (64, 1, 1),
            "args": ["a=formula:i*0.5:f32:128", "b=formula:i%5:f32:128",
                     "c=zeros:f32:128", "n=128"],
            "counters": {
                "static_inst": 22,
                "inst_executed": 88,
                "thread_inst_executed": 2816,
                "thread_inst_executed_pred_on": 2688,
                "branch": 4,
                "cond_branch": 4,
                "divergent_branch": 0,
                "flop_count_sp": 128,
            },
            "blocks": [
                ("vec_add", 1, 10, 4, 128),
                ("vec_add", 11, 11, 4, 128),
                ("vec_add", 22, 1, 4, 128),
            ],
            "outputs": {"c": "a + b"},
        },
        {
            "id": "L05",
            "grid": (1, 1, 1),
            "block": (48, 1, 1),
            "args": ["a=formula:i*0.5:f32:48", "b=formula:i%5:f32:48",
                     "c=zeros:f32:48", "n=40"],
            "counters": {
                "static_inst": 22,
                "inst_executed": 44,
                "thread_inst_executed": 968,
                "thread_inst_executed_pred_on": 928,
                "branch": 2,
                "cond_branch": 2,
                "divergent_branch": 1,
                "flop_count_sp": 40,
            },
            "blocks": [
                ("vec_add", 1, 10, 2, 48),
                ("vec_add", 11, 11, 2, 40),
                ("vec_add", 22, 1, 2, 48),
            ],
            "outputs": {"c": "np.where(i < 40, a + b, 0)"},
        },
    ],
    ("divergence.sm90.G.ptx", "div_ifelse"): [
        {
            "id": "L02",
            "grid": (1, 1, 1),
            "block": (64, 1, 1),
            "args": ["out=zeros:i32:64"],
            "counters": {
                "static_inst": 21,
                "inst_executed": 34,
                "thread_inst_executed": 872,
                "thread_inst_executed_pred_on": 852,
                "branch": 6,
                "cond_branch": 2,
                "divergent_branch": 1,
                "flop_count_sp": 0,
            },
            "blocks": [
                ("div_ifelse", 1, 6, 2, 64),
                ("div_ifelse", 7, 1, 1, 20),
                ("div_ifelse", 8, 7, 1, 20),
                ("div_ifelse", 15, 6, 2, 44),
                ("div_ifelse", 21, 1, 2, 64),
            ],
            "outputs": {"out": "np.where(i < 20, 3*i + 1, i - 100)"},
        },
    ],
    ("divergence.sm90.ptx", "div_ifelse"): [
        {
            "id": "L03",
            "grid": (1, 1, 1),
            "block": (64, 1, 1),
            "args": ["out=zeros:i32:64"],
            "counters": {
                "static_inst": 12,
                "inst_executed": 24,
                "thread_inst_executed": 768,
                "thread_inst_executed_pred_on": 768,
                "branch": 0,
                "cond_branch": 0,
                "divergent_branch": 0,
                "flop_count_sp": 0,
            },
            "blocks": [
                ("div_ifelse", 1, 12, 2, 64),
            ],
            "outputs": {"out": "np.where(i < 20, 3*i + 1, i - 100)"},
        },
    ],
    ("divergence.sm90.G.ptx", "div_nested"): [
        {
            "id": "L04",
            "grid": (1, 1, 1),
            "block": (64, 1, 1),
            "args": ["out=zeros:i32:64"],
            "counters": {
                "static_inst": 30,
                "inst_executed": 57,
                "thread_inst_executed": 1300,
                "thread_inst_executed_pred_on": 1240,
                "branch": 15,
                "cond_branch": 4,
                "divergent_branch": 3,
                "flop_count_sp": 0,
            },
            "blocks": [
                ("div_nested", 1, 6, 2, 64),
                ("div_nested", 7, 1, 2, 40),
                ("div_nested", 8, 4, 2, 40),
                ("div_nested", 12, 1, 2, 20),
                ("div_nested", 13, 3, 2, 20),
                ("div_nested", 16, 3, 2, 20),
                ("div_nested", 19, 3, 2, 40),
                ("div_nested", 22, 3, 1, 24),
                ("div_nested", 25, 6, 2, 64),
            ],
            "outputs": {"out": "np.where(i < 40, np.where((i & 2) != 0, 5*i, i + 7), -i)"},
        },
    ],
    ("loops.sm90.ptx", "loop_tid"): [
        {
            "id": "L06",
            "grid": (1, 1, 1),
            "block": (64, 1, 1),
            "args": ["out=zeros:i32:64"],
            "counters": {
                "static_inst": 25,
                "inst_executed": 80,
                "thread_inst_executed": 1858,
                "thread_inst_executed_pred_on": 1756,
                "branch": 10,
                "cond_branch": 10,
                "divergent_branch": 8,
                "flop_count_sp": 0,
            },
            "blocks": [
                ("loop_tid", 1, 11, 2, 64),
                ("loop_tid", 12, 2, 2, 51),
                ("loop_tid", 14, 5, 8, 126),
                ("loop_tid", 19, 2, 2, 51),
                ("loop_tid", 21, 5, 2, 64),
            ],
            "outputs": {"out": "np.array([1, 3, 10, 32, 99])[i % 5]"},
        },
    ],
    ("loops.sm90.ptx", "loop_nested"): [
        {
            "id": "L07",
            "grid": (1, 1, 1),
            "block": (32, 1, 1),
            "args": ["out=zeros:i32:32", "n=3", "m=2"],
            "counters": {
                "static_inst": 27,
                "inst_executed": 65,
                "thread_inst_executed": 2080,
                "thread_inst_executed_pred_on": 1920,
                "branch": 10,
                "cond_branch": 10,
                "divergent_branch": 0,
                "flop_count_sp": 0,
            },
            "blocks": [
                ("loop_nested", 1, 9, 1, 32),
                ("loop_nested", 10, 3, 1, 32),
                ("loop_nested", 13, 1, 3, 96),
                ("loop_nested", 14, 6, 6, 192),
                ("loop_nested", 20, 3, 3, 96),
                ("loop_nested", 23, 5, 1, 32),
            ],
            "outputs": {"out": "6*i + 7"},
        },
    ],
    ("data_branch.sm90.ptx", "pos_double"): [
        {
            "id": "L08",
            "grid": (1, 1, 1),
            "block": (64, 1, 1),
            "args": ["a=formula:i%7-3:i32:64", "b=zeros:i32:64", "n=60"],
            "counters": {
                "static_inst": 22,
                "inst_executed": 44,
                "thread_inst_executed": 1180,
                "thread_inst_executed_pred_on": 1096,
                "branch": 4,
                "cond_branch": 4,
                "divergent_branch": 3,
                "flop_count_sp": 0,
            },
            "blocks": [
                ("pos_double", 1, 9, 2, 64),
                ("pos_double", 10, 7, 2, 60),
                ("pos_double", 17, 5, 2, 24),
                ("pos_double", 22, 1, 2, 64),
            ],
            "outputs": {"b": "np.where((i < 60) & (a > 0), 2*a, 0)"},
        },
    ],
    ("early_ret.sm90.ptx", "early_ret"): [
        {
            "id": "L09",
            "grid": (1, 1, 1),
            "block": (64, 1, 1),
            "args": ["out=zeros:i32:64", "n=40"],
            "counters": {
                "static_inst": 19,
                "inst_executed": 38,
                "thread_inst_executed": 844,
                "thread_inst_executed_pred_on": 784,
                "branch": 4,
                "cond_branch": 4,
                "divergent_branch": 3,
                "flop_count_sp": 0,
            },
            "blocks": [
                ("early_ret", 1, 5, 2, 64),
                ("early_ret", 6, 10, 2, 40),
                ("early_ret", 16, 3, 2, 20),
                ("early_ret", 19, 1, 2, 64),
            ],
            "outputs": {"out": "np.where(i < 40, np.where(i % 2 == 1, 1, 3), 0)"},
        },
    ],
    ("early_ret.sm90.ptx", "asm_exit"): [
        {
            "id": "L10",
            "grid": (1, 1, 1),
            "block": (64, 1, 1),
            "args": ["out=zeros:i32:64"],
            "counters": {
                "static_inst": 15,
                "inst_executed": 30,
                "thread_inst_executed": 832,
                "thread_inst_executed_pred_on": 816,
                "branch": 2,
                "cond_branch": 2,
                "divergent_branch": 2,
                "flop_count_sp": 0,
            },
            "blocks": [
                ("asm_exit", 1, 9, 2, 64),
                ("asm_exit", 10, 1, 2, 16),
                ("asm_exit", 11, 5, 2, 48),
            ],
            "outputs": {"out": "np.where(i % 4 != 3, i, 0)"},
        },
    ],
    ("reduce_shared.sm90.ptx", "reduce_sum"): [
        {
            "id": "L11",
            "grid": (2, 1, 1),
            "block": (64, 1, 1),
            "args": ["src=formula:np.where(i<64,i,1):i32:128", "out=zeros:i32:128",
                     "flag=zeros:i32:2"],
            "counters": {
                "static_inst": 47,
                "inst_executed": 327,
                "thread_inst_executed": 8761,
                "thread_inst_executed_pred_on": 8442,
                "branch": 58,
                "cond_branch": 54,
                "divergent_branch": 11,
                "flop_count_sp": 0,
            },
            "blocks": [
                # summed over both CTAs (per-CTA tables in EXPECTED.md)
                ("reduce_sum", 1, 19, 4, 128),
                ("reduce_sum", 20, 2, 24, 768),
                ("reduce_sum", 22, 6, 12, 126),
                ("reduce_sum", 28, 4, 24, 768),
                ("reduce_sum", 32, 3, 4, 128),
                ("reduce_sum", 35, 1, 2, 64),
                ("reduce_sum", 36, 4, 2, 64),
                ("reduce_sum", 40, 2, 2, 64),
                ("reduce_sum", 42, 5, 1, 1),
                ("reduce_sum", 47, 1, 4, 128),
            ],
            "per_cta": {
                0: {"inst_executed": 162, "thread_inst_executed": 4410,
                    "branch": 28, "cond_branch": 26, "divergent_branch": 5},
                1: {"inst_executed": 165, "thread_inst_executed": 4351,
                    "branch": 30, "cond_branch": 28, "divergent_branch": 6},
            },
            "outputs": {"out": "np.where(i < 64, 2016, 0)", "flag": "np.array([0, 1])"},
        },
    ],
    ("warp.sm90.ptx", "warp_reduce"): [
        {
            "id": "L12",
            "grid": (1, 1, 1),
            "block": (64, 1, 1),
            "args": ["src=formula:i%7-3:i32:64", "sum=zeros:i32:2", "mx=zeros:i32:64"],
            "counters": {
                "static_inst": 56,
                "inst_executed": 112,
                "thread_inst_executed": 3026,
                "thread_inst_executed_pred_on": 3024,
                "branch": 2,
                "cond_branch": 2,
                "divergent_branch": 2,
                "flop_count_sp": 0,
            },
            "blocks": [
                ("warp_reduce", 1, 43, 2, 64),
                ("warp_reduce", 44, 9, 2, 2),
                ("warp_reduce", 53, 4, 2, 64),
            ],
            "outputs": {
                "sum": "src.reshape(2, 32).sum(axis=1)",
                "mx": "np.repeat(src.reshape(2, 32).max(axis=1), 32)",
            },
        },
    ],
    ("atomics.sm90.ptx", "atom_hist"): [
        {
            "id": "L13",
            "grid": (2, 1, 1),
            "block": (64, 1, 1),
            "args": ["src=formula:i%7-3:i32:128", "hist=zeros:i32:8", "fsum=zeros:f32:1",
                     "gmax=zeros:i32:1"],
            "counters": {
                "static_inst": 37,
                "inst_executed": 134,
                "thread_inst_executed": 3952,
                "thread_inst_executed_pred_on": 3920,
                "branch": 8,
                "cond_branch": 8,
                "divergent_branch": 4,
            },
            "blocks": [
                ("atom_hist", 1, 10, 4, 128),
                ("atom_hist", 11, 2, 2, 16),
                ("atom_hist", 13, 19, 4, 128),
                ("atom_hist", 32, 5, 2, 16),
                ("atom_hist", 37, 1, 4, 128),
            ],
            "outputs": {
                "hist": "np.bincount(src & 7, minlength=8)",
                "fsum": "np.array([src.sum()], dtype=np.float32)",
                "gmax": "np.array([max(0, src.max())])",
            },
        },
    ],
    ("func_call.sm90.ptx", "call_branch"): [
        {
            "id": "L14",
            "grid": (1, 1, 1),
            "block": (64, 1, 1),
            "args": ["a=formula:i%11:i32:64", "out=zeros:i32:64"],
            "counters": {
                "static_inst": 18,  # kernel text only; the callee _Z8classifyi has 6 more
                "inst_executed": 48,
                "thread_inst_executed": 1392,
                "thread_inst_executed_pred_on": 1364,
                "branch": 2,
                "cond_branch": 2,
                "divergent_branch": 2,
                "flop_count_sp": 0,
            },
            "blocks": [
                ("call_branch", 1, 13, 2, 64),
                ("_Z8classifyi", 1, 6, 2, 64),
                ("call_branch", 14, 4, 2, 28),
                ("call_branch", 18, 1, 2, 64),
            ],
            "outputs": {"out": "np.where(a > 5, a - 5, 0)"},
        },
    ],
    ("divergence.sm90.ptx", "div_2d"): [
        {
            "id": "L15",
            "grid": (2, 2, 1),
            "block": (16, 4, 1),
            "args": ["out=zeros:i32:256"],
            "counters": {
                "static_inst": 20,
                "inst_executed": 160,
                "thread_inst_executed": 4160,
                "thread_inst_executed_pred_on": 3968,
                "branch": 8,
                "cond_branch": 8,
                "divergent_branch": 4,
                "flop_count_sp": 0,
            },
            "blocks": [
                ("div_2d", 1, 4, 8, 256),
                ("div_2d", 5, 15, 8, 192),
                ("div_2d", 20, 1, 8, 256),
            ],
            # out is 8 rows x 32 columns, row-major: y = i // 32, x = i % 32
            "outputs": {"out": "np.where((i // 32) % 4 != 0, i % 32 + 10 * (i // 32), 0)"},
        },
    ],
    ("divergence.sm90.ptx", "div_3d"): [
        {
            "id": "L16",
            "grid": (1, 1, 1),
            "block": (4, 4, 4),
            "args": ["out=zeros:i32:64", "out2=zeros:i32:64"],
            "counters": {
                "static_inst": 25,
                "inst_executed": 44,
                "thread_inst_executed": 1220,
                "thread_inst_executed_pred_on": 1160,
                "branch": 5,
                "cond_branch": 2,
                "divergent_branch": 1,
                "flop_count_sp": 0,
            },
            "blocks": [
                ("div_3d", 1, 13, 2, 64),
                ("div_3d", 14, 1, 2, 60),
                ("div_3d", 15, 6, 1, 4),
                ("div_3d", 21, 4, 2, 60),
                ("div_3d", 25, 1, 2, 64),
            ],
            # l = x + 4y + 16z
            "outputs": {
                "out": "np.where((i // 16 == 1) & (i % 4 == 0), 100 + (i // 4) % 4, 0)",
                "out2": "np.where((i // 16 == 1) & (i % 4 == 0), 0, i // 16)",
            },
        },
    ],
    ("guarded.sm90.ptx", "g_asm_partial"): [
        {
            "id": "L17",
            "grid": (1, 1, 1),
            "block": (32, 1, 1),
            "args": ["a=formula:i%7-3:i32:32", "out=zeros:i32:32"],
            "counters": {
                "static_inst": 17,
                "inst_executed": 17,
                "thread_inst_executed": 480,
                "thread_inst_executed_pred_on": 447,
                "branch": 1,
                "cond_branch": 1,
                "divergent_branch": 1,
                "flop_count_sp": 0,
            },
            "blocks": [
                ("g_asm_partial", 1, 12, 1, 32),
                ("g_asm_partial", 13, 4, 1, 16),
                ("g_asm_partial", 17, 1, 1, 32),
            ],
            "outputs": {"out": "np.where((a >= 0) & (i >= 4), i, 0)"},
        },
    ],
    ("switch.sm90.ptx", "switch_brx_asm"): [
        {
            "id": "L18",
            "grid": (1, 1, 1),
            "block": (32, 1, 1),
            "args": ["out=zeros:i32:32"],
            "counters": {
                "static_inst": 18,
                "inst_executed": 18,
                "thread_inst_executed": 470,
                "thread_inst_executed_pred_on": 470,
                "branch": 3,
                "cond_branch": 1,
                "divergent_branch": 1,
                "flop_count_sp": 0,
            },
            "blocks": [
                ("switch_brx_asm", 1, 9, 1, 32),
                ("switch_brx_asm", 10, 2, 1, 11),
                ("switch_brx_asm", 12, 2, 1, 11),
                ("switch_brx_asm", 14, 1, 1, 10),
                ("switch_brx_asm", 15, 4, 1, 32),
            ],
            "outputs": {"out": "10 + 10 * (i % 3)"},
        },
    ],
}


def launches():
    """All launches as flat (ptx_file, kernel, launch) triples."""
    for (ptx, kernel), runs in EXPECTED.items():
        for run in runs:
            yield ptx, kernel, run
