"""Tiles, reuse and latency: the on-chip cost and arithmetic intensity of a BM x BN x BK matmul tile, the
smallest square tile that reaches a GPU's ridge point, a load/compute pipeline of ``num_stages`` buffers
(``cp.async``) and Little's law.

Chapter: *Programming the A100's SM* (``book/kernels.ipynb``), "Tiling and reuse", "cp.async and software
pipelining" and "Occupancy and latency hiding". Pure: no torch, no triton, no matplotlib.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from .. import check, specs
from .occupancy import WARP_SIZE, sm_limits
from .rules import _fields, _int, _num, _text

#: Largest tile side the models take (elements): far above any kernel's tile, small enough to stay arithmetic.
MAX_BLOCK = 1 << 16

_POW2_BLOCKS = (16, 32, 64, 128, 256)


@dataclass(frozen=True)
class TileCost:
    """What a BM x BN x BK tile of C = A B costs on chip and how much it reuses each byte it loads.

    ``intensity_flop_per_byte`` = 2 BM BN BK / ((BM + BN) BK bytes) = 2 BM BN / ((BM + BN) * dtype_bytes):
    FLOPs per byte a block loads from global memory (if nothing is shared between blocks through L2);
    ``shared_bytes`` the A and B tiles of all ``stages`` in shared memory; ``accumulator_registers`` the
    FP32 accumulators per thread (BM BN / threads), before addresses and loop state.
    Chapter: *Programming the A100's SM*, "Tiling and reuse".
    """

    block_m: int
    block_n: int
    block_k: int
    stages: int
    num_warps: int
    dtype_bytes: int
    intensity_flop_per_byte: float
    shared_bytes: int
    accumulator_registers: int

    def __post_init__(self) -> None:
        block = _int(1, MAX_BLOCK)
        _fields(self, block_m=block, block_n=block, block_k=block, stages=_int(1, 16), num_warps=_int(1, 32),
                dtype_bytes=_int(1, 8), intensity_flop_per_byte=_num(strict=True), shared_bytes=_int(1, 1 << 50),
                accumulator_registers=_int(1, 1 << 40))

    def fits(self, gpu: str | specs.GPUSpec) -> bool:
        """Shared memory within the per-block maximum and accumulators within the per-thread registers of ``gpu``
        (a catalogue name). Chapter: *Programming the A100's SM*, "Tiling and reuse"."""
        lim = sm_limits(gpu)
        return (self.shared_bytes <= lim.max_shared_bytes_per_block
                and self.accumulator_registers < lim.max_registers_per_thread)

    def compute_bound(self, gpu: str | specs.GPUSpec, precision: str = "bf16") -> bool:
        """True when the tile's intensity reaches the GPU's ridge point (dense ``precision`` peak / HBM bandwidth).
        Chapter: *Programming the A100's SM*, "Tiling and reuse"."""
        return self.intensity_flop_per_byte >= specs.get(gpu).ridge_point(precision)


def tile_cost(block_m: int, block_n: int, block_k: int, *, stages: int = 2, num_warps: int = 4,
              dtype_bytes: int = 2) -> TileCost:
    """The :class:`TileCost` of one tile configuration. Chapter: *Programming the A100's SM*, "Tiling"."""
    bm = check.positive_int("block_m", block_m, maximum=MAX_BLOCK)
    bn = check.positive_int("block_n", block_n, maximum=MAX_BLOCK)
    bk = check.positive_int("block_k", block_k, maximum=MAX_BLOCK)
    st = check.positive_int("stages", stages, maximum=16)
    nw = check.positive_int("num_warps", num_warps, maximum=32)
    db = check.positive_int("dtype_bytes", dtype_bytes, maximum=8)
    intensity = 2.0 * bm * bn / ((bm + bn) * db)
    return TileCost(block_m=bm, block_n=bn, block_k=bk, stages=st, num_warps=nw, dtype_bytes=db,
                    intensity_flop_per_byte=intensity, shared_bytes=(bm + bn) * bk * db * st,
                    accumulator_registers=-(-bm * bn // (nw * WARP_SIZE)))


def tile_sweep(blocks: Sequence[int] = _POW2_BLOCKS, *, block_k: int = 32, stages: int = 3,
               dtype_bytes: int = 2) -> list[TileCost]:
    """Square and rectangular tiles over ``blocks`` (num_warps 4 up to 128x128 outputs, 8 above); ``blocks`` is a
    list of at most 64 tile sides. Chapter: *Programming the A100's SM*, "Tiling and reuse"."""
    sides = check.sequence("blocks", blocks, lambda n, v: check.positive_int(n, v, maximum=MAX_BLOCK), max_len=64)
    out = []
    for bm in sides:
        for bn in sides:
            warps = 4 if bm * bn <= 128 * 128 else 8
            out.append(tile_cost(bm, bn, block_k, stages=stages, num_warps=warps, dtype_bytes=dtype_bytes))
    return out


def min_square_tile(gpu: str | specs.GPUSpec, level: str = "hbm", precision: str = "bf16",
                    dtype_bytes: int = 2) -> int:
    """Smallest square tile side b whose intensity b / dtype_bytes reaches the ridge point of ``gpu``
    against its HBM (``level="hbm"``) or L2 (``"l2"``) bandwidth. Chapter: *Programming the A100's SM*,
    "Tiling and reuse"."""
    spec = specs.get(gpu)
    level = check.one_of("level", level, ("hbm", "l2"))
    db = check.positive_int("dtype_bytes", dtype_bytes, maximum=8)
    bw = spec.hbm_bytes_per_s if level == "hbm" else spec.l2_bytes_per_s
    if bw is None:
        raise ValueError(f"{spec.name} has no published L2 bandwidth; use level='hbm'")
    return math.ceil(spec.ridge_point(precision, bw) * db - 1e-9)


@dataclass(frozen=True)
class PipelineTime:
    """Time of a K loop of ``tiles`` iterations with ``stages`` buffers (model).

    With one stage a tile is loaded, then computed: tiles x (load + compute). With s >= 2 stages,
    ``cp.async`` keeps s - 1 loads in flight while the SM computes, so after the first tile each iteration
    costs max(compute, load / (s - 1)). ``bound`` says which term binds. Chapter: *Programming the A100's
    SM*, "cp.async and software pipelining".
    """

    tiles: int
    stages: int
    load_s: float
    compute_s: float
    total_s: float
    bound: str

    def __post_init__(self) -> None:
        _fields(self, tiles=_int(1, MAX_TILES), stages=_int(1, 16), load_s=_num(0.0, MAX_STEP_S, strict=True),
                compute_s=_num(0.0, MAX_STEP_S, strict=True), total_s=_num(strict=True),
                bound=lambda n, v: check.one_of(n, v, ("no overlap", "compute", "load latency")))

    @property
    def speedup_vs_one_stage(self) -> float:
        return self.tiles * (self.load_s + self.compute_s) / self.total_s


#: Bounds of :func:`pipeline_time`: K steps of one loop, and the time of one step (s).
MAX_TILES = 1 << 30
MAX_STEP_S = 1e6


def pipeline_time(tiles: int, load_s: float, compute_s: float, stages: int) -> PipelineTime:
    """:class:`PipelineTime` of a load/compute loop. Chapter: *Programming the A100's SM*, "cp.async"."""
    n = check.positive_int("tiles", tiles, maximum=MAX_TILES)
    load = check.positive("load_s", load_s, maximum=MAX_STEP_S)
    comp = check.positive("compute_s", compute_s, maximum=MAX_STEP_S)
    s = check.positive_int("stages", stages, maximum=16)
    if s == 1:
        return PipelineTime(n, s, load, comp, n * (load + comp), "no overlap")
    per = max(comp, load / (s - 1))
    bound = "compute" if comp >= load / (s - 1) else "load latency"
    return PipelineTime(n, s, load, comp, load + comp + (n - 1) * per, bound)


def bytes_in_flight(bandwidth_bytes_per_s: float, latency_s: float) -> float:
    """Little's law: the bytes that must be in flight to sustain ``bandwidth`` at ``latency``.
    Chapter: *Programming the A100's SM*, "Occupancy and latency hiding"."""
    return (check.positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s, maximum=1e18)
            * check.positive("latency_s", latency_s, maximum=1.0))
