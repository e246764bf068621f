"""What each application of tests/apps must do, derived from its source alone.

For every app: the command-line arguments the tests give it, the launches it
must make (kernel, grid, block, in order), worked out here from the app's own
host loop at its default size, and, for the Rodinia/Parboil-style apps that
write an output file, a numpy recomputation of that file. Nothing here comes
from running ptxc. Used by tests/test_apps.py and bench/apps.py.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

APPS_DIR = Path(__file__).parent / "apps"


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class Launch:
    kernel: str                      # the C++ name; the report has it mangled (_Z9vectorAdd...)
    grid: tuple
    block: tuple

    def matches(self, row: dict) -> bool:
        return (f"{len(self.kernel)}{self.kernel}" in row["kernel"]
                and (row["grid_x"], row["grid_y"], row["grid_z"]) == self.grid
                and (row["block_x"], row["block_y"], row["block_z"]) == self.block)


def L(kernel: str, grid, block) -> Launch:
    dim = lambda v: tuple(v) + (1,) * (3 - len(v)) if isinstance(v, tuple) else (v, 1, 1)
    return Launch(kernel, dim(grid), dim(block))


@dataclass(frozen=True)
class App:
    name: str
    plan: Callable[[dict | None], list]    # expected launches (given the output data, if any)
    output: Callable[[Path], dict] | None = None   # numpy check of the output file
    bench_size: str = ""                   # argument that makes the bench run bigger

    @property
    def source(self) -> Path:
        return APPS_DIR / self.name / f"{self.name}.cu"

    def args(self, out_file: Path | None) -> list[str]:
        return ["0", str(out_file)] if self.output else []


# ---------------------------------------------------------------- launch plans
def plan_reduction(_):
    out, n = [], 20000
    for kernel, per in (("reduceInterleaved", 256), ("reduceSequential", 512),
                        ("reduceShuffle", 512)):
        m = n
        while True:                                   # reduceOnDevice's loop
            blocks = ceil_div(m, per)
            out.append(L(kernel, blocks, 256))
            m = blocks
            if m == 1:
                break
    return out


def plan_scan(_):
    def scan(m):                                      # scanDevice's recursion
        blocks = ceil_div(m, 512)
        if blocks == 1:
            return [L("scanBlocks", 1, 256)]
        return [L("scanBlocks", blocks, 256)] + scan(blocks) + [L("addOffsets", blocks, 256)]
    return scan(10000)


def plan_pathfinder(_):
    out, rows, cols, pyramid = [], 100, 2000, 20
    for row in range(1, rows, pyramid):
        steps = min(pyramid, rows - row)
        out.append(L("pathStep", ceil_div(cols, 256 - 2 * steps), 256))
    return out


def plan_nw(_):
    tiles = 128 // 16
    return ([L("nwUpperLeft", d + 1, 16) for d in range(tiles)]
            + [L("nwLowerRight", 2 * tiles - 1 - d, 16) for d in range(tiles, 2 * tiles - 1)])


def plan_gaussian(_):
    n, out = 32, []
    for t in range(n - 1):
        rows = n - 1 - t
        out.append(L("multipliers", ceil_div(rows, 64), 64))
        out.append(L("eliminate", (ceil_div(n - t, 8), ceil_div(rows, 8)), (8, 8)))
    return out


def plan_templates(_):
    return ([L("scaleReverse", 12, 128)] * 3
            + [L("windowSum", ceil_div(12 * 128 - 5, 128), 128)] * 2)


def plan_bfs(data):
    return [L(k, 16, 256) for _ in range(data["iterations"]) for k in ("expandFrontier", "promoteNext")]


# ------------------------------------------------------- output file checks
def read_i32(raw: bytes, count: int, at: int):
    return np.frombuffer(raw, "<i4", count, at), at + 4 * count


def read_f32(raw: bytes, count: int, at: int):
    return np.frombuffer(raw, "<f4", count, at), at + 4 * count


def check_bfs(path: Path) -> dict:
    raw = path.read_bytes()
    (n, m, iterations), at = read_i32(raw, 3, 0)
    first, at = read_i32(raw, n, at)
    degree, at = read_i32(raw, n, at)
    edges, at = read_i32(raw, m, at)
    cost, at = read_i32(raw, n, at)
    assert at == len(raw)
    want = np.full(n, -1, np.int64)
    want[0], frontier, depth = 0, np.array([0]), 0
    while frontier.size:                              # level-synchronous BFS
        nxt = np.concatenate([edges[first[v]:first[v] + degree[v]] for v in frontier])
        nxt = np.unique(nxt)
        nxt = nxt[want[nxt] < 0]
        depth += 1
        want[nxt] = depth
        frontier = nxt
    assert (cost == want).all(), f"{int((cost != want).sum())} depths differ"
    assert iterations == want.max() + 1
    return {"iterations": int(iterations)}


def check_pathfinder(path: Path) -> dict:
    raw = path.read_bytes()
    (rows, cols, _), at = read_i32(raw, 3, 0)
    wall, at = read_i32(raw, rows * cols, at)
    result, at = read_i32(raw, cols, at)
    assert at == len(raw)
    wall = wall.reshape(rows, cols).astype(np.int64)
    cost, big = wall[0].copy(), np.iinfo(np.int64).max
    for r in range(1, rows):
        left = np.concatenate([[big], cost[:-1]])
        right = np.concatenate([cost[1:], [big]])
        cost = np.minimum(np.minimum(left, cost), right) + wall[r]
    assert (result == cost).all(), f"{int((result != cost).sum())} columns differ"
    return {}


def check_hotspot(path: Path) -> dict:
    raw = path.read_bytes()
    (side, steps), at = read_i32(raw, 2, 0)
    (cp, cx, cy, cz, amb), at = read_f32(raw, 5, at)
    temp, at = read_f32(raw, side * side, at)
    power, at = read_f32(raw, side * side, at)
    got, at = read_f32(raw, side * side, at)
    assert at == len(raw)
    t = temp.reshape(side, side).astype(np.float64)
    p = power.reshape(side, side).astype(np.float64)
    for _ in range(steps):
        e = np.pad(t, 1, mode="edge")               # border cells: the missing neighbour is the cell
        t = (t + cp * p + cy * (e[:-2, 1:-1] + e[2:, 1:-1] - 2 * t)
             + cx * (e[1:-1, 2:] + e[1:-1, :-2] - 2 * t) + cz * (amb - t))
    err = np.abs(got.reshape(side, side) - t).max()
    assert err < 1e-3, f"max error {err}"
    return {}


def check_nw(path: Path) -> dict:
    raw = path.read_bytes()
    (n, penalty), at = read_i32(raw, 2, 0)
    sub, at = read_i32(raw, 16, at)
    a, at = read_i32(raw, n, at)
    b, at = read_i32(raw, n, at)
    got, at = read_i32(raw, (n + 1) ** 2, at)
    assert at == len(raw)
    sim = sub.reshape(4, 4)[a[:, None], b[None, :]].tolist()
    score = [[-penalty * max(i, j) if i == 0 or j == 0 else 0 for j in range(n + 1)]
             for i in range(n + 1)]
    for i in range(1, n + 1):
        row, up = score[i], score[i - 1]
        for j in range(1, n + 1):
            row[j] = max(up[j - 1] + sim[i - 1][j - 1], up[j] - penalty, row[j - 1] - penalty)
    want = np.array(score)
    assert (got.reshape(n + 1, n + 1) == want).all(), "score matrices differ"
    return {}


def check_stencil(path: Path) -> dict:
    raw = path.read_bytes()
    (nx, ny, nz, iterations), at = read_i32(raw, 4, 0)
    (c0, c1), at = read_f32(raw, 2, at)
    a0, at = read_f32(raw, nx * ny * nz, at)
    got, at = read_f32(raw, nx * ny * nz, at)
    assert at == len(raw)
    a = a0.reshape(nz, ny, nx).astype(np.float64)
    for _ in range(iterations):
        b, i = a.copy(), (slice(1, -1),) * 3
        b[i] = c1 * (a[1:-1, 1:-1, :-2] + a[1:-1, 1:-1, 2:] + a[1:-1, :-2, 1:-1]
                     + a[1:-1, 2:, 1:-1] + a[:-2, 1:-1, 1:-1] + a[2:, 1:-1, 1:-1]) - c0 * a[i]
        a = b
    rel = (np.abs(got.reshape(nz, ny, nx) - a) / np.maximum(np.abs(a), 1e-3)).max()
    assert rel < 1e-5, f"max relative error {rel}"
    return {}


# ------------------------------------------------------------------- the apps
def fixed(*launches):
    return lambda _: list(launches)


def repeat(n, *launches):
    return lambda _: list(launches) * n


APPS = [
    App("vectorAdd", fixed(L("vectorAdd", 20, 256)), bench_size="4000000"),
    App("matrixMul", repeat(4, L("matrixMulTiled", (8, 4), (16, 16))), bench_size="64"),
    App("reduction", plan_reduction, bench_size="8000000"),
    App("scan", plan_scan, bench_size="8000000"),
    App("simpleStreams", repeat(8, L("addFactor", 32, 128)), bench_size="8388608"),
    App("unifiedMemory", fixed(L("saxpy", 16, 256), L("doubleAll", 8, 128), L("walkLists", 2, 64)),
        bench_size="8000000"),
    App("zeroCopy", fixed(L("vectorAddMapped", 24, 128), L("fillTriple", 4, 96)), bench_size="8000000"),
    App("symbols", repeat(2, L("evalPoly", 16, 64)), bench_size="2000000"),
    App("deviceQuery", fixed(L("probe", 1, (32, 8, 4)))),
    App("templates", plan_templates, bench_size="20000"),
    App("bfs", plan_bfs, check_bfs, bench_size="500000"),
    App("pathfinder", plan_pathfinder, check_pathfinder, bench_size="200000"),
    App("hotspot", repeat(6, L("hotspotStep", (4, 4), (16, 16))), check_hotspot, bench_size="2048"),
    App("nw", plan_nw, check_nw, bench_size="2048"),
    App("gaussian", plan_gaussian, bench_size="256"),
    App("srad", repeat(4, L("sradCoefficients", (4, 4), (16, 16)), L("sradUpdate", (4, 4), (16, 16))),
        bench_size="1024"),
    App("sgemm", fixed(L("sgemmTiled", (2, 8), 128)), bench_size="64"),
    App("spmv", fixed(L("csrScalar", 16, 128), L("csrVector", 512, 128), L("jds", 16, 128)),
        bench_size="500000"),
    App("histo", repeat(2, L("histogramShared", 16, 256), L("saturate", 4, 256)), bench_size="2048"),
    App("stencil", repeat(3, L("stencil7", (1, 8), (32, 4))), check_stencil, bench_size="512"),
    App("transpose", fixed(L("transposeNaive", (7, 5), (32, 8)), L("countMismatches", (13, 9), (16, 16)),
                           L("transposeTiled", (7, 5), (32, 8)), L("countMismatches", (13, 9), (16, 16))),
        bench_size="3000"),
]

BY_NAME = {a.name: a for a in APPS}
