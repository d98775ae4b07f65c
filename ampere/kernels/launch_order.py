"""Launch order and L2 reuse: which tile of C each program of a tiled matmul computes, in row-major or in
Triton's grouped order (``GROUP_M``), and the HBM traffic each order costs when the L2 keeps the panels of the
programs running together.

Chapter: *Programming the A100's SM* (``book/kernels.ipynb``), "Launch order and L2 reuse". The grouped order
is the one of Triton's matrix-multiplication tutorial ("L2 Cache Optimizations", ``tritonmatmultutorial``);
CUTLASS calls the same idea threadblock rasterization (``cutlassefficientgemm``). Pure: no torch, no triton,
no matplotlib.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import check, specs
from .rules import _fields, _int, _num

#: Upper bound on the programs a model call walks through (the loops are O(programs)).
MAX_PROGRAMS = 1 << 22


def program_tile(pid: int, grid_m: int, grid_n: int, group_m: int = 1) -> tuple[int, int]:
    """(pid_m, pid_n): the tile of C that program ``pid`` computes, in the grouped order of Triton's tutorial:
    programs run down ``group_m`` rows of tiles before moving to the next column; ``group_m = 1`` is plain
    row-major order. The last group is shorter when ``group_m`` does not divide ``grid_m``. The same
    arithmetic as the chapter's Triton kernel (tested against it under ``TRITON_INTERPRET=1``).
    Chapter: *Programming the A100's SM*, "Launch order and L2 reuse".
    """
    gm = check.positive_int("grid_m", grid_m, maximum=MAX_PROGRAMS)
    gn = check.positive_int("grid_n", grid_n, maximum=MAX_PROGRAMS)
    g = check.positive_int("group_m", group_m, maximum=MAX_PROGRAMS)
    p = check.nonneg_int("pid", pid, maximum=gm * gn - 1)
    in_group = g * gn
    first_m = (p // in_group) * g
    size_m = min(gm - first_m, g)
    return first_m + (p % in_group) % size_m, (p % in_group) // size_m


def program_order(grid_m: int, grid_n: int, group_m: int = 1) -> list[tuple[int, int]]:
    """The tiles in launch order: ``[program_tile(pid, ...) for pid in range(grid_m * grid_n)]``.
    Chapter: *Programming the A100's SM*, "Launch order and L2 reuse"."""
    gm = check.positive_int("grid_m", grid_m, maximum=MAX_PROGRAMS)
    gn = check.positive_int("grid_n", grid_n, maximum=MAX_PROGRAMS)
    if gm * gn > MAX_PROGRAMS:
        raise ValueError(f"grid_m x grid_n = {gm * gn} programs, more than the {MAX_PROGRAMS} this model walks")
    return [program_tile(p, gm, gn, group_m) for p in range(gm * gn)]


def blocks_loaded(grid_m: int, grid_n: int, k_blocks: int, programs: int, group_m: int = 1) -> int:
    """Blocks of A and B the first ``programs`` programs need between them: each distinct row of tiles needs
    ``k_blocks`` blocks of A, each distinct column ``k_blocks`` blocks of B. The count of Triton's tutorial
    (a 9 x 9 grid: 90 blocks for the first 9 outputs in row-major order, 54 grouped by 3).
    Chapter: *Programming the A100's SM*, "Launch order and L2 reuse"."""
    kb = check.positive_int("k_blocks", k_blocks, maximum=MAX_PROGRAMS)
    order = program_order(grid_m, grid_n, group_m)
    n = check.positive_int("programs", programs, maximum=len(order))
    rows = {m for m, _ in order[:n]}
    cols = {c for _, c in order[:n]}
    return (len(rows) + len(cols)) * kb


@dataclass(frozen=True)
class LaunchTraffic:
    """Traffic of the A and B operands of one matmul under a launch order (model), bytes.

    ``l2_bytes``: what the programs request from the memory system (each loads its own panels of A and B:
    the same in every order); ``hbm_bytes``: what reaches HBM when a panel stays in the L2 while the program
    that used it last is at most ``window`` programs back (the programs running together), and is read
    again otherwise; ``compulsory_bytes``: every element of A and B once.
    Chapter: *Programming the A100's SM*, "Launch order and L2 reuse".
    """

    m: int
    n: int
    k: int
    block_m: int
    block_n: int
    group_m: int
    window: int
    dtype_bytes: int
    l2_bytes: float
    hbm_bytes: float
    compulsory_bytes: float

    def __post_init__(self) -> None:
        side = _int(1, 1 << 24)
        _fields(self, m=side, n=side, k=side, block_m=_int(1, 4096), block_n=_int(1, 4096), group_m=_int(1, 1 << 16),
                window=_int(1, 1 << 16), dtype_bytes=_int(1, 8), l2_bytes=_num(strict=True),
                hbm_bytes=_num(strict=True), compulsory_bytes=_num(strict=True))

    @property
    def flops(self) -> float:
        return 2.0 * self.m * self.n * self.k

    @property
    def hbm_intensity(self) -> float:
        """FLOPs per HBM byte of A and B (C is written once in every order and left out)."""
        return self.flops / self.hbm_bytes

    def time_s(self, gpu: str | specs.GPUSpec, precision: str = "bf16", l2_bytes_per_s: float | None = None) -> float:
        """Roofline time: the largest of FLOPs / dense peak, HBM bytes / HBM bandwidth and requested bytes /
        L2 bandwidth (``l2_bytes_per_s``, default the GPU's theoretical L2 bandwidth when it has one).
        Chapter: *Programming the A100's SM*, "Launch order and L2 reuse"."""
        s = specs.get(gpu)
        l2bw = (s.l2_bytes_per_s if l2_bytes_per_s is None
                else check.positive("l2_bytes_per_s", l2_bytes_per_s, maximum=1e18))
        times = [self.flops / s.peak_flops(precision), self.hbm_bytes / s.hbm_bytes_per_s]
        if l2bw:
            times.append(self.l2_bytes / l2bw)
        return max(times)


def launch_traffic(m: int, n: int, k: int, block_m: int = 128, block_n: int = 128, *, group_m: int = 1,
                   window: int = 108, dtype_bytes: int = 2) -> LaunchTraffic:
    """:class:`LaunchTraffic` of C = A B (``m`` x ``k`` by ``k`` x ``n``) tiled ``block_m`` x ``block_n``, launched
    in the order of :func:`program_tile` with ``group_m``; ``window`` programs run together (one per SM of an
    A100 by default). A program's row panel of A (block_m x k) comes from HBM unless one of the ``window``
    programs before it used the same row, likewise its column panel of B. Assumes the L2 holds the panels of
    the window (it holds their current k-slabs, far less than 40 MiB) and nothing older.
    Chapter: *Programming the A100's SM*, "Launch order and L2 reuse".
    """
    mm = check.positive_int("m", m, maximum=1 << 24)
    nn = check.positive_int("n", n, maximum=1 << 24)
    kk = check.positive_int("k", k, maximum=1 << 24)
    bm = check.positive_int("block_m", block_m, maximum=4096)
    bn = check.positive_int("block_n", block_n, maximum=4096)
    g = check.positive_int("group_m", group_m, maximum=1 << 16)
    w = check.positive_int("window", window, maximum=1 << 16)
    db = check.positive_int("dtype_bytes", dtype_bytes, maximum=8)
    gm, gn = math.ceil(mm / bm), math.ceil(nn / bn)
    rows_of = [min(bm, mm - r * bm) * kk * db for r in range(gm)]  # bytes of each row panel of A (ragged edge)
    cols_of = [min(bn, nn - c * bn) * kk * db for c in range(gn)]
    last_row: dict[int, int] = {}
    last_col: dict[int, int] = {}
    hbm = requested = 0
    for p, (r, c) in enumerate(program_order(gm, gn, g)):
        requested += rows_of[r] + cols_of[c]
        if p - last_row.get(r, -w - 1) > w:
            hbm += rows_of[r]
        if p - last_col.get(c, -w - 1) > w:
            hbm += cols_of[c]
        last_row[r], last_col[c] = p, p
    return LaunchTraffic(m=mm, n=nn, k=kk, block_m=bm, block_n=bn, group_m=g, window=w, dtype_bytes=db,
                         l2_bytes=float(requested), hbm_bytes=float(hbm), compulsory_bytes=float((mm * kk + kk * nn) * db))
