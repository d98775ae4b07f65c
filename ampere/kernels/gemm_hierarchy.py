"""The block -> warp -> mma tiling of one GEMM as CUTLASS organises it on sm80: how many threadblocks, warps,
``mma.sync`` and ``ldmatrix`` instructions a problem turns into, where each level's operands live, and the
bandwidth each level asks of the memory below it.

Chapter: *Programming the A100's SM* (``book/kernels.ipynb``), "From threadblock to mma: the tiling hierarchy".
The structure is CUTLASS's "Efficient GEMM in CUDA" (``cutlassefficientgemm``); the default tile shapes are
read from ``ampere/data/tables/cutlass-sm80-defaults.json``, the instruction shapes from
``ampere/data/tables/mma-shapes.json`` (the PTX ISA, ``nvidiaptxmma``). Pure: no torch, no triton, no
matplotlib.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

from .. import check, specs
from .occupancy import WARP_SIZE, sm_limits
from .rules import _fields, _gpu, _int, _triple
from .shared_memory import shared_memory_bandwidth

#: Elements of one ldmatrix matrix (8 x 8 16-bit values) and matrices per .x4 load (PTX ISA, ldmatrix).
_LDMATRIX_ROWS, _LDMATRIX_X4 = 8, 4
_DTYPE_BYTES = {"fp16": 2, "bf16": 2, "tf32": 4, "int8": 1, "int4": 0.5, "fp64": 8}


def mma_shapes(precision: str | None = None) -> list[dict[str, Any]]:
    """The ``mma.sync`` shapes sm80 runs per multiplicand type (the PTX ISA's Matrix Shape table), optionally
    of one ``precision``. Chapter: *Programming the A100's SM*, "From threadblock to mma"."""
    from .. import results

    rows = results.table("mma-shapes")["rows"]
    if precision is None:
        return [dict(r) for r in rows]
    check.one_of("precision", precision, tuple(r["precision"] for r in rows))
    return [dict(r) for r in rows if r["precision"] == precision]


def cutlass_default(precision: str = "bf16") -> dict[str, Any]:
    """CUTLASS's default Sm80 tensor-op tiles for ``precision`` (threadblock, warp, instruction, stages).
    Chapter: *Programming the A100's SM*, "From threadblock to mma"."""
    from .. import results

    rows = results.table("cutlass-sm80-defaults")["rows"]
    allowed = tuple(p for r in rows for p in r["precisions"])
    check.one_of("precision", precision, allowed)
    return dict(next(r for r in rows if precision in r["precisions"]))


def _shape(name: str, value: Sequence[int]) -> tuple[int, int, int]:
    """Three positive integers (M, N, K), each at most 65536."""
    return _triple()(name, value)


@dataclass(frozen=True)
class GemmTiling:
    """One GEMM C = A B (``m`` x ``k`` by ``k`` x ``n``) cut into threadblock, warp and instruction tiles.
    See :func:`gemm_tiling`. Chapter: *Programming the A100's SM*, "From threadblock to mma"."""

    gpu: str
    precision: str
    m: int
    n: int
    k: int
    threadblock: tuple[int, int, int]
    warp: tuple[int, int, int]
    instruction: tuple[int, int, int]
    stages: int
    dtype_bytes: float

    def __post_init__(self) -> None:
        side = _int(1, 1 << 24)
        _fields(self, gpu=_gpu, precision=lambda n, v: check.one_of(n, v, tuple(_DTYPE_BYTES)), m=side, n=side, k=side,
                threadblock=_triple(), warp=_triple(), instruction=_triple(), stages=_int(1, 16),
                dtype_bytes=lambda n, v: check.choice(n, v, tuple(sorted(set(_DTYPE_BYTES.values())))))

    @property
    def grid(self) -> tuple[int, int]:
        return math.ceil(self.m / self.threadblock[0]), math.ceil(self.n / self.threadblock[1])

    @property
    def ctas(self) -> int:
        return self.grid[0] * self.grid[1]

    @property
    def k_iterations(self) -> int:
        """Main-loop iterations of one threadblock (one slab of ``threadblock[2]`` along K each)."""
        return math.ceil(self.k / self.threadblock[2])

    @property
    def warps_per_cta(self) -> int:
        return (self.threadblock[0] // self.warp[0]) * (self.threadblock[1] // self.warp[1])

    @property
    def mma_per_warp_per_iteration(self) -> int:
        wm, wn, _ = self.warp
        im, in_, ik = self.instruction
        return (wm // im) * (wn // in_) * (self.threadblock[2] // ik)

    @property
    def mma_total(self) -> int:
        return self.ctas * self.k_iterations * self.warps_per_cta * self.mma_per_warp_per_iteration

    @property
    def flops_per_mma(self) -> int:
        return 2 * math.prod(self.instruction)

    @property
    def ldmatrix_x4_per_warp_per_iteration(self) -> int | None:
        """``ldmatrix.x4`` loads a warp issues per main-loop iteration for its A and B fragments (16-bit types
        only: each loads four 8 x 8 matrices), or None for other types."""
        if self.dtype_bytes != 2:
            return None
        wm, wn, _ = self.warp
        matrices = (wm * self.threadblock[2] + self.threadblock[2] * wn) // (_LDMATRIX_ROWS * _LDMATRIX_ROWS)
        return matrices // _LDMATRIX_X4

    @property
    def shared_bytes(self) -> int:
        """Shared memory of the A and B slabs of all stages."""
        bm, bn, bk = self.threadblock
        return int((bm + bn) * bk * self.dtype_bytes * self.stages)

    @property
    def accumulators_per_thread(self) -> int:
        """FP32 (or INT32) accumulators each thread holds: the warp tile of C over 32 threads."""
        return self.warp[0] * self.warp[1] // WARP_SIZE

    @property
    def ctas_per_sm(self) -> int:
        """Threadblocks one SM holds: the least of what shared memory (with the 1 KiB reservation), warp slots,
        block slots and the accumulator registers alone allow (other registers only lower it)."""
        lim = sm_limits(self.gpu)
        by_shared = lim.shared_bytes_per_sm // (self.shared_bytes + lim.reserved_shared_bytes_per_block)
        by_warps = lim.max_warps_per_sm // self.warps_per_cta
        by_regs = lim.registers_per_sm // (self.warps_per_cta * WARP_SIZE * self.accumulators_per_thread)
        return max(0, min(by_shared, by_warps, lim.max_blocks_per_sm, by_regs))

    @property
    def waves(self) -> float:
        """Threadblocks over the threadblocks all SMs hold at once (a last partial wave leaves SMs idle)."""
        per_wave = self.ctas_per_sm * specs.get(self.gpu).sm_count
        return self.ctas / per_wave if per_wave else math.inf

    @property
    def cta_intensity(self) -> float:
        """FLOPs per byte a threadblock loads from global memory (through L2): 2 BM BN / ((BM + BN) s)."""
        bm, bn, _ = self.threadblock
        return 2.0 * bm * bn / ((bm + bn) * self.dtype_bytes)

    @property
    def warp_intensity(self) -> float:
        """FLOPs per byte a warp reads from shared memory: 2 WM WN / ((WM + WN) s)."""
        wm, wn, _ = self.warp
        return 2.0 * wm * wn / ((wm + wn) * self.dtype_bytes)

    def shared_demand(self) -> float:
        """Shared-memory bytes/s all warps read at the dense peak, as a fraction of
        :func:`~ampere.kernels.shared_memory_bandwidth`."""
        s = specs.get(self.gpu)
        return s.peak_flops(self.precision) / self.warp_intensity / shared_memory_bandwidth(s)

    def l2_demand_bytes_per_s(self) -> float:
        """Global-memory bytes/s the threadblocks load at the dense peak (served by L2 and HBM)."""
        return specs.get(self.gpu).peak_flops(self.precision) / self.cta_intensity


def gemm_tiling(m: int, n: int, k: int, *, precision: str = "bf16", threadblock: Sequence[int] | None = None,
                warp: Sequence[int] | None = None, instruction: Sequence[int] | None = None,
                stages: int | None = None, gpu: str | specs.GPUSpec = "A100-SXM4-80GB") -> GemmTiling:
    """:class:`GemmTiling` of an ``m`` x ``n`` x ``k`` GEMM; tiles default to CUTLASS's Sm80 defaults for
    ``precision`` (:func:`cutlass_default`). The warp tile must divide the threadblock tile and the
    instruction tile the warp tile, and the instruction must be an ``mma.sync`` shape of ``precision``.
    Chapter: *Programming the A100's SM*, "From threadblock to mma: the tiling hierarchy".
    """
    mm = check.positive_int("m", m, maximum=1 << 24)
    nn = check.positive_int("n", n, maximum=1 << 24)
    kk = check.positive_int("k", k, maximum=1 << 24)
    s = specs.get(gpu)
    d = cutlass_default(precision)
    tb = _shape("threadblock", d["threadblock"] if threadblock is None else threadblock)
    wp = _shape("warp", d["warp"] if warp is None else warp)
    ins = _shape("instruction", d["instruction"] if instruction is None else instruction)
    st = check.positive_int("stages", d["stages"] if stages is None else stages, maximum=16)
    allowed = [tuple(x) for x in mma_shapes(precision)[0]["shapes"]]
    if ins not in allowed:
        raise ValueError(f"instruction={ins} is not an mma.sync shape for {precision}; allowed: {allowed}")
    for i, axis in enumerate("MNK"):
        if tb[i] % wp[i] or wp[i] % ins[i]:
            raise ValueError(f"along {axis}: the warp tile ({wp[i]}) must divide the threadblock tile ({tb[i]}) "
                             f"and the instruction ({ins[i]}) the warp tile")
    if wp[2] != tb[2]:
        raise ValueError(f"the warp tile's K ({wp[2]}) must equal the threadblock's ({tb[2]}): each warp walks the "
                         "whole slab")
    return GemmTiling(s.name, precision, mm, nn, kk, tb, wp, ins, st, _DTYPE_BYTES[precision])


def tiling_rows(t: GemmTiling) -> list[dict[str, Any]]:
    """The chapter's table of one tiling: level, tile (M x N x K), how many, where its operands live, and what it
    asks of the memory below at the dense peak (FLOPs per byte and the bandwidth that takes).
    Chapter: *Programming the A100's SM*, "From threadblock to mma"."""
    if not isinstance(t, GemmTiling):
        raise TypeError(f"t must be a GemmTiling (from gemm_tiling), got {type(t).__name__}")
    s = specs.get(t.gpu)
    gm, gn = t.grid
    lim = sm_limits(t.gpu)
    ld = t.ldmatrix_x4_per_warp_per_iteration
    x = "\u00d7"
    return [
        {"level": "GEMM", "tile": x.join(map(str, (t.m, t.n, t.k))),
         "how many": f"{2 * t.m * t.n * t.k / 1e12:.2f} TFLOP", "operands in": "HBM",
         "asks of the level below": f"{t.precision}, {t.dtype_bytes:g} B per element"},
        {"level": "threadblock", "tile": x.join(map(str, t.threadblock)),
         "how many": f"{gm} {x} {gn} = {t.ctas}, {t.k_iterations} K-steps each; {t.ctas_per_sm} per SM: "
                     f"{t.waves:.2f} waves",
         "operands in": f"shared memory, {t.stages} stages: {t.shared_bytes // 1024} of "
                        f"{lim.max_shared_bytes_per_block // 1024} KiB",
         "asks of the level below": f"{t.cta_intensity:.0f} FLOP/B: {t.l2_demand_bytes_per_s() / 1e12:.1f} TB/s of L2"},
        {"level": "warp", "tile": x.join(map(str, t.warp)), "how many": f"{t.warps_per_cta} per threadblock",
         "operands in": f"registers: {t.accumulators_per_thread} accumulators per thread"
                        + (f"; {ld} ldmatrix.x4 per K-step" if ld else ""),
         "asks of the level below": f"{t.warp_intensity:.0f} FLOP/B: {100 * t.shared_demand():.0f} % of shared "
                                    "memory"},
        {"level": "mma.sync", "tile": x.join(map(str, t.instruction)),
         "how many": f"{t.mma_per_warp_per_iteration} per warp per K-step; {t.mma_total:,} in all",
         "operands in": "registers (fragments of A, B, C)",
         "asks of the level below": f"{t.flops_per_mma:,} FLOP each"},
    ]
