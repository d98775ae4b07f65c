"""Programming the SM: tiles, asynchronous copies, occupancy and FlashAttention, in Triton.

Chapter: *Programming the A100's SM* (``book/kernels.ipynb``). Two halves:

* **models** in plain Python, importable anywhere: the arithmetic intensity and on-chip cost of a
  BM x BN x BK matmul tile (:func:`tile_cost`), a load/compute pipeline (:func:`pipeline_time`), Little's
  law (:func:`bytes_in_flight`), an occupancy calculator from each GPU's SM limits (:func:`occupancy`),
  L2 residency control (:func:`l2_persistence`) and the HBM traffic of attention
  (:func:`attention_hbm_bytes`);
* **kernels** written in Triton (:func:`matmul`, :func:`flash_attention`): the same source runs on the CPU
  under Triton's interpreter (``TRITON_INTERPRET=1``, set here when no CUDA GPU is usable) and compiles for
  the GPU. ``triton`` and ``torch`` are imported inside the functions that need them, so ``import
  ampere.kernels`` works without either (:func:`triton_available` says whether the kernels can run).

``python -m ampere bench kernels`` (:func:`bench_main`) times both kernels against cuBLAS, naive attention
and PyTorch's attention on a GPU, and runs the same code path in the interpreter with ``--device cpu``.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import sys
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping, Sequence

from . import check, specs

__all__ = ["SMLimits", "sm_limits", "Occupancy", "occupancy", "TileCost", "tile_cost", "tile_sweep",
           "PipelineTime", "pipeline_time", "bytes_in_flight", "L2Persistence", "l2_persistence",
           "attention_hbm_bytes", "attention_flops", "triton_available", "interpreting", "matmul",
           "flash_attention", "naive_attention", "bench_main", "BENCHMARK", "prepare", "min_square_tile", "published_l2_read", "published_attention",
           "published_flash_ratios",
           "hierarchy_rows", "occupancy_rows", "attention_model_ms", "show_matmul", "show_attention", "show_profile",
           "plot_tile_intensity", "plot_tile_shared", "plot_pipeline", "plot_occupancy_registers", "plot_littles_law",
           "plot_l2_persistence", "plot_attention_traffic"]

BENCHMARK = "kernels"
WARP_SIZE = 32


# ---------------------------------------------------------------------------------------------------
# SM limits: ampere.specs (per product) + ampere/data/tables/sm-limits.json (per compute capability)
# ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SMLimits:
    """What one SM of ``gpu`` can hold at once. Chapter: *Programming the A100's SM*, "Occupancy"."""

    gpu: str
    compute_capability: tuple[int, int]
    max_threads_per_sm: int          # from ampere.specs
    registers_per_sm: int            # 32-bit registers: register file bytes / 4 (ampere.specs)
    shared_bytes_per_sm: int         # largest shared-memory carve-out (ampere.specs)
    max_warps_per_sm: int            # the rest: sm-limits table (CUDA Programming Guide, cuda_occupancy.h)
    max_blocks_per_sm: int
    max_threads_per_block: int
    max_registers_per_thread: int
    max_registers_per_block: int
    max_shared_bytes_per_block: int
    reserved_shared_bytes_per_block: int
    register_alloc_unit_per_warp: int
    shared_alloc_unit_bytes: int
    sub_partitions: int
    source: str = ""


_LIMITS_ROWS: dict[str, dict[str, Any]] | None = None


def _limit_rows() -> dict[str, dict[str, Any]]:
    global _LIMITS_ROWS
    if _LIMITS_ROWS is None:
        from . import results

        _LIMITS_ROWS = {r["compute_capability"]: r for r in results.table("sm-limits")["rows"]}
    return _LIMITS_ROWS


def sm_limits(gpu: str | specs.GPUSpec) -> SMLimits:
    """The SM limits of a catalogue GPU (per product from :mod:`ampere.specs`, per compute capability from
    ``ampere/data/tables/sm-limits.json``). Chapter: *Programming the A100's SM*, "Occupancy"."""
    spec = specs.get(gpu)
    cc = f"{spec.compute_capability[0]}.{spec.compute_capability[1]}"
    rows = _limit_rows()
    if cc not in rows:
        raise ValueError(f"no SM limits for compute capability {cc} ({spec.name}); the sm-limits table has "
                         f"{', '.join(sorted(rows))}")
    r = rows[cc]
    lim = SMLimits(gpu=spec.name, compute_capability=tuple(spec.compute_capability),
                   max_threads_per_sm=spec.max_threads_per_sm, registers_per_sm=spec.register_file_bytes_per_sm // 4,
                   shared_bytes_per_sm=spec.max_shared_bytes_per_sm,
                   max_warps_per_sm=int(r["max_warps_per_sm"]), max_blocks_per_sm=int(r["max_blocks_per_sm"]),
                   max_threads_per_block=int(r["max_threads_per_block"]),
                   max_registers_per_thread=int(r["max_registers_per_thread"]),
                   max_registers_per_block=int(r["max_registers_per_block"]),
                   max_shared_bytes_per_block=int(r["max_shared_bytes_per_block"]),
                   reserved_shared_bytes_per_block=int(r["reserved_shared_bytes_per_block"]),
                   register_alloc_unit_per_warp=int(r["register_alloc_unit_per_warp"]),
                   shared_alloc_unit_bytes=int(r["shared_alloc_unit_bytes"]),
                   sub_partitions=int(r["sub_partitions"]), source=str(r.get("where", "")))
    if lim.max_warps_per_sm * WARP_SIZE != lim.max_threads_per_sm:  # two sources, one fact: they must agree
        raise ValueError(f"{spec.name}: specs says {lim.max_threads_per_sm} threads per SM but the sm-limits "
                         f"table says {lim.max_warps_per_sm} warps for compute capability {cc}")
    return lim


# ---------------------------------------------------------------------------------------------------
# Occupancy (the CUDA occupancy calculator's rules)
# ---------------------------------------------------------------------------------------------------

def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


@dataclass(frozen=True)
class Occupancy:
    """Resident blocks and warps of one kernel configuration on one SM.

    ``fraction`` = active warps / the SM's maximum; ``limiter`` names the resource that binds ("warps",
    "blocks", "registers", "shared memory"; ties joined with " and "); ``blocks_by`` the blocks each
    resource alone would allow. Chapter: *Programming the A100's SM*, "Occupancy and latency hiding".
    """

    gpu: str
    threads_per_block: int
    registers_per_thread: int
    shared_bytes_per_block: int
    warps_per_block: int
    blocks_per_sm: int
    active_warps: int
    max_warps: int
    limiter: str
    blocks_by: Mapping[str, int] = field(default_factory=dict)
    registers_per_block: int = 0     # allocated (after rounding to the allocation unit)
    shared_allocated_bytes: int = 0  # per block, reservation and rounding included

    def __post_init__(self) -> None:
        object.__setattr__(self, "blocks_by", MappingProxyType(dict(self.blocks_by)))

    @property
    def fraction(self) -> float:
        return self.active_warps / self.max_warps

    def to_dict(self) -> dict[str, Any]:
        return {"gpu": self.gpu, "threads_per_block": self.threads_per_block,
                "registers_per_thread": self.registers_per_thread,
                "shared_bytes_per_block": self.shared_bytes_per_block, "warps_per_block": self.warps_per_block,
                "blocks_per_sm": self.blocks_per_sm, "active_warps": self.active_warps, "max_warps": self.max_warps,
                "fraction": self.fraction, "limiter": self.limiter, "blocks_by": dict(self.blocks_by)}


def occupancy(gpu: str | specs.GPUSpec, threads_per_block: int, registers_per_thread: int,
              shared_bytes_per_block: int) -> Occupancy:
    """Occupancy of a kernel on ``gpu`` (largest shared-memory carve-out), by the CUDA occupancy rules.

    Registers are allocated per warp in units of ``register_alloc_unit_per_warp`` and the register file is
    split between the SM's sub-partitions; shared memory per block gets the system reservation (1 KB from
    compute capability 8.0 on) and is rounded to the allocation unit. Raises ``ValueError`` for a
    configuration that cannot launch (too many threads, registers or bytes per block).
    Chapter: *Programming the A100's SM*, "Occupancy and latency hiding".
    """
    lim = sm_limits(gpu)
    threads = check.positive_int("threads_per_block", threads_per_block, maximum=lim.max_threads_per_block)
    regs = check.nonneg_int("registers_per_thread", registers_per_thread, maximum=lim.max_registers_per_thread)
    smem = check.nonneg_int("shared_bytes_per_block", shared_bytes_per_block,
                            maximum=lim.max_shared_bytes_per_block)
    warps = -(-threads // WARP_SIZE)
    by: dict[str, int] = {"warps": lim.max_warps_per_sm // warps, "blocks": lim.max_blocks_per_sm}
    regs_per_block = 0
    if regs > 0:
        per_warp = _round_up(regs * WARP_SIZE, lim.register_alloc_unit_per_warp)
        regs_per_block = per_warp * warps
        if regs_per_block > lim.max_registers_per_block:
            raise ValueError(f"registers_per_thread={regs} with threads_per_block={threads} needs {regs_per_block} "
                             f"registers per block; {lim.gpu} allows {lim.max_registers_per_block}")
        warps_per_partition = (lim.registers_per_sm // lim.sub_partitions) // per_warp
        by["registers"] = (warps_per_partition * lim.sub_partitions) // warps
    else:
        by["registers"] = lim.max_blocks_per_sm
    alloc = _round_up(smem + lim.reserved_shared_bytes_per_block, lim.shared_alloc_unit_bytes)
    by["shared memory"] = lim.shared_bytes_per_sm // alloc if alloc else lim.max_blocks_per_sm
    blocks = min(by.values())
    # name the binding resource; when nothing is exhausted below the cap, "blocks" (or "warps") binds
    binding = [k for k in ("warps", "registers", "shared memory", "blocks") if by[k] == blocks]
    return Occupancy(gpu=lim.gpu, threads_per_block=threads, registers_per_thread=regs, shared_bytes_per_block=smem,
                     warps_per_block=warps, blocks_per_sm=blocks, active_warps=blocks * warps,
                     max_warps=lim.max_warps_per_sm, limiter=" and ".join(binding), blocks_by=by,
                     registers_per_block=regs_per_block, shared_allocated_bytes=alloc)


# ---------------------------------------------------------------------------------------------------
# Tiling and reuse
# ---------------------------------------------------------------------------------------------------

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

    def fits(self, gpu: str | specs.GPUSpec) -> bool:
        """Shared memory within the per-block maximum and accumulators within the per-thread registers."""
        lim = sm_limits(gpu)
        return (self.shared_bytes <= lim.max_shared_bytes_per_block
                and self.accumulator_registers < lim.max_registers_per_thread)

    def compute_bound(self, gpu: str | specs.GPUSpec, precision: str = "bf16") -> bool:
        """True when the tile's intensity reaches the GPU's ridge point (dense peak / HBM bandwidth)."""
        return self.intensity_flop_per_byte >= specs.get(gpu).ridge_point(precision)


def tile_cost(block_m: int, block_n: int, block_k: int, *, stages: int = 2, num_warps: int = 4,
              dtype_bytes: int = 2) -> TileCost:
    """The :class:`TileCost` of one tile configuration. Chapter: *Programming the A100's SM*, "Tiling"."""
    bm = check.positive_int("block_m", block_m)
    bn = check.positive_int("block_n", block_n)
    bk = check.positive_int("block_k", block_k)
    st = check.positive_int("stages", stages, maximum=16)
    nw = check.positive_int("num_warps", num_warps, maximum=32)
    db = check.positive_int("dtype_bytes", dtype_bytes, maximum=8)
    intensity = 2.0 * bm * bn / ((bm + bn) * db)
    return TileCost(block_m=bm, block_n=bn, block_k=bk, stages=st, num_warps=nw, dtype_bytes=db,
                    intensity_flop_per_byte=intensity, shared_bytes=(bm + bn) * bk * db * st,
                    accumulator_registers=-(-bm * bn // (nw * WARP_SIZE)))


def tile_sweep(blocks: Sequence[int] = _POW2_BLOCKS, *, block_k: int = 32, stages: int = 3,
               dtype_bytes: int = 2) -> list[TileCost]:
    """Square and rectangular tiles over ``blocks`` (num_warps 4 up to 128x128 outputs, 8 above).
    Chapter: *Programming the A100's SM*, "Tiling and reuse"."""
    out = []
    for bm in blocks:
        for bn in blocks:
            warps = 4 if bm * bn <= 128 * 128 else 8
            out.append(tile_cost(bm, bn, block_k, stages=stages, num_warps=warps, dtype_bytes=dtype_bytes))
    return out


# ---------------------------------------------------------------------------------------------------
# cp.async and software pipelining; Little's law
# ---------------------------------------------------------------------------------------------------

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

    @property
    def speedup_vs_one_stage(self) -> float:
        return self.tiles * (self.load_s + self.compute_s) / self.total_s


def pipeline_time(tiles: int, load_s: float, compute_s: float, stages: int) -> PipelineTime:
    """:class:`PipelineTime` of a load/compute loop. Chapter: *Programming the A100's SM*, "cp.async"."""
    n = check.positive_int("tiles", tiles)
    load = check.positive("load_s", load_s)
    comp = check.positive("compute_s", compute_s)
    s = check.positive_int("stages", stages, maximum=16)
    if s == 1:
        return PipelineTime(n, s, load, comp, n * (load + comp), "no overlap")
    per = max(comp, load / (s - 1))
    bound = "compute" if comp >= load / (s - 1) else "load latency"
    return PipelineTime(n, s, load, comp, load + comp + (n - 1) * per, bound)


def bytes_in_flight(bandwidth_bytes_per_s: float, latency_s: float) -> float:
    """Little's law: the bytes that must be in flight to sustain ``bandwidth`` at ``latency``.
    Chapter: *Programming the A100's SM*, "Occupancy and latency hiding"."""
    return check.positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s) * check.positive("latency_s", latency_s)


# ---------------------------------------------------------------------------------------------------
# L2 residency control
# ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class L2Persistence:
    """HBM traffic of ``passes`` over a reused working set interleaved with streaming traffic (model).

    Without a persisting window, LRU keeps the working set only if working set + streaming bytes of a
    pass fit in L2; otherwise the stream evicts it and every pass re-reads it. With a persisting window
    of ``carveout_bytes`` (hit ratio set to carveout / working set so the window does not thrash), that
    share of the working set stays resident and the stream uses the rest of L2.
    Chapter: *Programming the A100's SM*, "L2 residency control".
    """

    gpu: str
    working_set_bytes: float
    streaming_bytes: float
    carveout_bytes: float
    passes: int
    hbm_bytes_default: float
    hbm_bytes_persisting: float

    @property
    def traffic_ratio(self) -> float:
        """HBM bytes without the window / with it (> 1: the window helps)."""
        return self.hbm_bytes_default / self.hbm_bytes_persisting


def l2_persistence(gpu: str | specs.GPUSpec, working_set_bytes: float, streaming_bytes: float,
                   carveout_bytes: float, passes: int = 10) -> L2Persistence:
    """:class:`L2Persistence` of a reuse pattern on ``gpu``. Chapter: *Programming the A100's SM*, "L2"."""
    spec = specs.get(gpu)
    w = check.positive("working_set_bytes", working_set_bytes)
    s = check.nonneg("streaming_bytes", streaming_bytes)
    c = check.nonneg("carveout_bytes", carveout_bytes, maximum=spec.l2_bytes)
    n = check.positive_int("passes", passes)
    l2 = float(spec.l2_bytes)
    first = w + s
    default_rest = s if w + s <= l2 else w + s
    kept = min(w, c)
    rest = w - kept  # the part of the working set outside the window competes with the stream for L2 - c
    persisting_rest = s if rest + s <= l2 - c else s + rest
    return L2Persistence(gpu=spec.name, working_set_bytes=w, streaming_bytes=s, carveout_bytes=c, passes=n,
                         hbm_bytes_default=first + (n - 1) * default_rest,
                         hbm_bytes_persisting=first + (n - 1) * persisting_rest)


# ---------------------------------------------------------------------------------------------------
# FlashAttention's IO model
# ---------------------------------------------------------------------------------------------------

ALGORITHMS = ("standard", "flash")


def attention_hbm_bytes(seq: int, head_dim: int, sram_bytes: float, algorithm: str = "standard",
                        dtype_bytes: int = 2) -> float:
    """HBM bytes of one attention head's forward pass, counted as in the FlashAttention paper.

    ``standard`` (its Algorithm 0): read Q, K; write S; read S; write P; read P, V; write O:
    4 N d + 4 N^2 elements. ``flash`` (its Algorithm 1, M = ``sram_bytes`` / ``dtype_bytes`` elements):
    blocks of Bc = ceil(M / 4d) keys and Br = min(Bc, d) queries; K and V are read once (2 N d), and for
    each of the Tc = ceil(N / Bc) key blocks every Q and O block is read and O written (3 N d) with its
    running max and sum (4 N): 2 N d + Tc (3 N d + 4 N) = Theta(N^2 d^2 / M).
    Chapter: *Programming the A100's SM*, "FlashAttention as an IO-aware algorithm".
    """
    n = check.positive_int("seq", seq)
    d = check.positive_int("head_dim", head_dim)
    db = check.positive_int("dtype_bytes", dtype_bytes, maximum=8)
    algo = check.one_of("algorithm", algorithm, ALGORITHMS)
    m = check.positive("sram_bytes", sram_bytes) / db
    if algo == "standard":
        return float((4 * n * d + 4 * n * n) * db)
    bc = math.ceil(m / (4 * d))
    if bc < 1 or m < 4 * d:
        raise ValueError(f"sram_bytes={sram_bytes:g} holds {m:g} elements, fewer than 4 * head_dim = {4 * d}: "
                         "FlashAttention needs at least one key block on chip")
    tc = math.ceil(n / bc)
    return float((2 * n * d + tc * (3 * n * d + 4 * n)) * db)


def attention_flops(seq: int, head_dim: int, causal: bool = False) -> float:
    """Matmul FLOPs of one head's attention forward: 4 N^2 d (halved when causal).
    Chapter: *Programming the A100's SM*, "FlashAttention"."""
    n = check.positive_int("seq", seq)
    d = check.positive_int("head_dim", head_dim)
    return 4.0 * n * n * d * (0.5 if check.boolean("causal", causal) else 1.0)


# ---------------------------------------------------------------------------------------------------
# Triton kernels (defined on first use, after TRITON_INTERPRET is decided)
# ---------------------------------------------------------------------------------------------------

_KERNELS: dict[str, Any] = {}


def _cuda_usable() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available()) and os.environ.get("AMPERE_DEVICE") != "cpu"


def triton_available() -> bool:
    """True when ``triton`` can be imported (the chapter falls back to the models when it cannot)."""
    import importlib.util

    return importlib.util.find_spec("triton") is not None


def interpreting() -> bool:
    """True when the kernels run in Triton's CPU interpreter (``TRITON_INTERPRET=1``)."""
    _kernels()
    return bool(_KERNELS["interpret"])


def _kernels() -> dict[str, Any]:
    if _KERNELS:
        return _KERNELS
    if not _cuda_usable():
        if os.environ.get("TRITON_INTERPRET") != "1" and "triton" in sys.modules:
            raise RuntimeError("triton was imported before TRITON_INTERPRET=1 was set and no CUDA GPU is usable: "
                               "set TRITON_INTERPRET=1 before the first import of triton")
        os.environ["TRITON_INTERPRET"] = "1"
    try:
        import triton
        import triton.language as tl
    except ImportError:
        raise RuntimeError("triton is not installed: pip install 'triton>=3.0' (Linux x86-64); the chapter "
                           "shows the models without it") from None

    @triton.jit
    def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, s_am, s_ak, s_bk, s_bn, s_cm, s_cn,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
        # one program computes one BLOCK_M x BLOCK_N tile of C
        pid_m = tl.program_id(0)
        pid_n = tl.program_id(1)
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        rk = tl.arange(0, BLOCK_K)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):  # pipelined: num_stages (cp.async, sm80+)
            kk = k0 + rk
            a = tl.load(a_ptr + rm[:, None] * s_am + kk[None, :] * s_ak,
                        mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
            b = tl.load(b_ptr + kk[:, None] * s_bk + rn[None, :] * s_bn,
                        mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
            acc = tl.dot(a, b, acc)  # tensor cores on the GPU
        c = acc.to(c_ptr.dtype.element_ty)
        tl.store(c_ptr + rm[:, None] * s_cm + rn[None, :] * s_cn, c, mask=(rm[:, None] < M) & (rn[None, :] < N))

    @triton.jit
    def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, qk_scale, H, N, D,
                         s_qb, s_qh, s_qn, s_qd, s_kb, s_kh, s_kn, s_kd,
                         s_vb, s_vh, s_vn, s_vd, s_ob, s_oh, s_on, s_od,
                         CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                         BLOCK_D: tl.constexpr):
        # one program: BLOCK_M queries of one (batch, head); loop over key blocks with an online softmax
        pid_m = tl.program_id(0)
        bh = tl.program_id(1)
        b = bh // H
        h = bh % H
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = tl.arange(0, BLOCK_N)
        rd = tl.arange(0, BLOCK_D)
        q = tl.load(q_ptr + b * s_qb + h * s_qh + rm[:, None] * s_qn + rd[None, :] * s_qd,
                    mask=(rm[:, None] < N) & (rd[None, :] < D), other=0.0)
        m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)   # running row maximum (base-2 logits)
        l_i = tl.zeros((BLOCK_M,), tl.float32)                 # running row sum of exponentials
        acc = tl.zeros((BLOCK_M, BLOCK_D), tl.float32)         # running unnormalised output
        hi = N
        if CAUSAL:
            hi = tl.minimum(N, (pid_m + 1) * BLOCK_M)
        for start in range(0, hi, BLOCK_N):
            kn = start + rn
            kt = tl.load(k_ptr + b * s_kb + h * s_kh + kn[None, :] * s_kn + rd[:, None] * s_kd,
                         mask=(kn[None, :] < N) & (rd[:, None] < D), other=0.0)
            s = tl.dot(q, kt) * qk_scale                         # scores, already times log2(e)
            valid = kn[None, :] < N
            if CAUSAL:
                valid = valid & (rm[:, None] >= kn[None, :])
            s = tl.where(valid, s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.math.exp2(s - m_new[:, None])
            alpha = tl.math.exp2(m_i - m_new)                    # rescales what was summed so far
            l_i = l_i * alpha + tl.sum(p, 1)
            v = tl.load(v_ptr + b * s_vb + h * s_vh + kn[:, None] * s_vn + rd[None, :] * s_vd,
                        mask=(kn[:, None] < N) & (rd[None, :] < D), other=0.0)
            acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
            m_i = m_new
        out = acc / l_i[:, None]
        tl.store(o_ptr + b * s_ob + h * s_oh + rm[:, None] * s_on + rd[None, :] * s_od,
                 out.to(o_ptr.dtype.element_ty), mask=(rm[:, None] < N) & (rd[None, :] < D))

    _KERNELS.update(triton=triton, matmul=matmul_kernel, attention=attention_kernel,
                    interpret=os.environ.get("TRITON_INTERPRET") == "1")
    return _KERNELS


def _tensor(name: str, x: Any, ndim: int) -> Any:
    import torch

    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got shape {tuple(x.shape)}")
    if x.dtype not in (torch.float32, torch.float16, torch.bfloat16):
        raise ValueError(f"{name} must be float32, float16 or bfloat16, got {x.dtype}")
    if min(x.shape) < 1:
        raise ValueError(f"{name} has an empty dimension: shape {tuple(x.shape)}")
    return x


def _block(name: str, value: Any) -> int:
    v = check.positive_int(name, value)
    if v < 16 or v & (v - 1):
        raise ValueError(f"{name} must be a power of two >= 16 (tl.dot needs 16), got {v}")
    return v


def _placed(ks: dict[str, Any], *tensors: Any) -> None:
    devices = {t.device for t in tensors}
    if len(devices) != 1:
        raise ValueError(f"tensors must be on one device, got {sorted(str(d) for d in devices)}")
    dev = devices.pop()
    if ks["interpret"] and dev.type != "cpu":
        raise ValueError(f"Triton runs in its CPU interpreter here (TRITON_INTERPRET=1): pass CPU tensors, not {dev}")
    if not ks["interpret"] and dev.type != "cuda":
        raise ValueError("tensors are on the CPU but Triton compiles for the GPU here: move them with .cuda() "
                         "(or set TRITON_INTERPRET=1 before the first kernel call)")


def matmul(a: Any, b: Any, *, block_m: int = 64, block_n: int = 64, block_k: int = 32, num_warps: int = 4,
           num_stages: int = 2) -> Any:
    """C = A B with the chapter's Triton tiled kernel: 2-D tensors of any sizes (ragged edges masked),
    FP32 accumulation, result in A's dtype. ``num_stages`` is the software pipeline depth (ignored by the
    interpreter). Chapter: *Programming the A100's SM*, "A Triton tiled matmul"."""
    import torch

    ks = _kernels()
    a = _tensor("a", a, 2)
    b = _tensor("b", b, 2)
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"inner dimensions differ: a is {tuple(a.shape)}, b is {tuple(b.shape)}")
    if a.dtype != b.dtype:
        raise ValueError(f"a and b must have one dtype, got {a.dtype} and {b.dtype}")
    bm, bn, bk = _block("block_m", block_m), _block("block_n", block_n), _block("block_k", block_k)
    nw = check.positive_int("num_warps", num_warps, maximum=32)
    if nw & (nw - 1):
        raise ValueError(f"num_warps must be a power of two, got {nw}")
    st = check.positive_int("num_stages", num_stages, maximum=8)
    _placed(ks, a, b)
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty((m, n), device=a.device, dtype=a.dtype)
    grid = (-(-m // bm), -(-n // bn))
    ks["matmul"][grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                       c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=nw, num_stages=st)
    return c


def flash_attention(q: Any, k: Any, v: Any, *, causal: bool = False, block_m: int = 64, block_n: int = 32,
                    num_warps: int = 4, num_stages: int = 2) -> Any:
    """softmax(Q K^T / sqrt(d)) V with the chapter's Triton FlashAttention forward: ``(batch, heads, seq,
    head_dim)`` tensors, any ``seq`` and ``head_dim`` (padded to a power of two on chip), ``causal`` with the
    top-left alignment of ``scaled_dot_product_attention(is_causal=True)``. The N x N score matrix never
    exists in memory. Chapter: *Programming the A100's SM*, "FlashAttention in Triton"."""
    import torch

    ks = _kernels()
    q, k, v = _tensor("q", q, 4), _tensor("k", k, 4), _tensor("v", v, 4)
    if not (q.shape == k.shape == v.shape):
        raise ValueError(f"q, k and v must have one shape, got {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    if not (q.dtype == k.dtype == v.dtype):
        raise ValueError(f"q, k and v must have one dtype, got {q.dtype}, {k.dtype}, {v.dtype}")
    causal = check.boolean("causal", causal)
    bm, bn = _block("block_m", block_m), _block("block_n", block_n)
    nw = check.positive_int("num_warps", num_warps, maximum=32)
    st = check.positive_int("num_stages", num_stages, maximum=8)
    _placed(ks, q, k, v)
    batch, heads, seq, d = q.shape
    block_d = max(16, 1 << (d - 1).bit_length())
    o = torch.empty_like(q)
    scale = (1.0 / math.sqrt(d)) * 1.4426950408889634  # 1/sqrt(d) x log2(e): the kernel uses exp2
    grid = (-(-seq // bm), batch * heads)
    ks["attention"][grid](q, k, v, o, scale, heads, seq, d, *q.stride(), *k.stride(), *v.stride(), *o.stride(),
                          CAUSAL=causal, BLOCK_M=bm, BLOCK_N=bn, BLOCK_D=block_d, num_warps=nw, num_stages=st)
    return o


def naive_attention(q: Any, k: Any, v: Any, *, causal: bool = False) -> Any:
    """Standard attention that materialises S and P in memory (the paper's Algorithm 0), in PyTorch.
    Chapter: *Programming the A100's SM*, "FlashAttention"."""
    import torch

    q, k, v = _tensor("q", q, 4), _tensor("k", k, 4), _tensor("v", v, 4)
    s = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
    if check.boolean("causal", causal):
        n = q.shape[-2]
        mask = torch.ones(n, n, dtype=torch.bool, device=q.device).tril()
        s = s.masked_fill(~mask, float("-inf"))
    return torch.softmax(s.float(), dim=-1).to(q.dtype) @ v


# ---------------------------------------------------------------------------------------------------
# The benchmark
# ---------------------------------------------------------------------------------------------------

_CP_ASYNC = re.compile(r"\bcp\.async\.c[ag]\.shared\.global\b")


def _compiled_resources(kernel: Any) -> dict[str, int]:
    """Registers per thread and shared bytes of a compiled Triton kernel, and the asynchronous copies
    (``cp.async.ca/cg.shared.global``) in its PTX: the evidence that ``num_stages`` became a cp.async
    pipeline (empty in the interpreter). Chapter: *Programming the A100's SM*, "cp.async"."""
    out: dict[str, int] = {}
    regs = getattr(kernel, "n_regs", None)
    meta = getattr(kernel, "metadata", None)
    shared = getattr(meta, "shared", None) if meta is not None else None
    asm = getattr(kernel, "asm", None)
    ptx = asm.get("ptx") if isinstance(asm, Mapping) else None
    if isinstance(regs, int):
        out["registers_per_thread"] = regs
    if isinstance(shared, int):
        out["shared_bytes"] = shared
    if isinstance(ptx, str):
        out["cp_async_in_ptx"] = len(_CP_ASYNC.findall(ptx))
    return out


def bench_main(argv: Sequence[str] | None = None) -> int:
    """``python -m ampere bench kernels``: the Triton matmul against cuBLAS over block sizes, warps and
    stages, and the Triton FlashAttention forward against naive attention and PyTorch's SDPA.

    On a GPU: bf16, matmul 4096^3 (``--quick``: 2048^3), attention batch 4 x 16 heads x seq 4096 x d 64.
    With ``--device cpu``: the same code path in Triton's interpreter with tiny shapes (a test of the code,
    not a measurement). Chapter: *Programming the A100's SM*, "A Triton tiled matmul" and "FlashAttention in Triton".
    """
    from . import benchcli, results, timing

    p = benchcli.bench_parser(BENCHMARK, "Triton tiled matmul vs cuBLAS (block sizes, warps, stages) and "
                                         "Triton FlashAttention forward vs naive attention and SDPA.")
    args = p.parse_args(list(argv or []))
    info = benchcli.probe(args)
    gpu = info.backend == "cuda"
    if not gpu:
        os.environ["TRITON_INTERPRET"] = "1"
    if not triton_available():
        print("error: triton is not installed; pip install 'triton>=3.0'", flush=True)
        return 2
    import torch
    import torch.nn.functional as F

    ks = _kernels()
    if gpu and ks["interpret"]:
        print("error: TRITON_INTERPRET=1 is set but a GPU is measured; unset it", flush=True)
        return 2
    if not gpu and not ks["interpret"]:
        print("error: --device cpu runs Triton's interpreter, but triton was already compiling for the GPU in "
              "this process; run the benchmark in a fresh process", flush=True)
        return 2
    dev = torch.device("cuda" if gpu else "cpu")
    # bf16 where the tensor cores have it (sm80+), fp16 on older GPUs, fp32 in the interpreter
    dtype = (torch.bfloat16 if info.bf16_tensor else torch.float16) if gpu else torch.float32
    gen = torch.Generator().manual_seed(0)
    if gpu:
        n = 2048 if args.quick else 4096
        mm_shape = (n, n, n)
        configs = [(128, 128, 64, 8, s) for s in (1, 2, 3, 4)] + [(64, 64, 32, 4, 2), (128, 256, 64, 8, 3)]
        att_shape = (4, 16, 2048 if args.quick else 4096, 64)
        t_args: dict[str, Any] = {"warmup_s": 0.3 if args.quick else 1.0, "max_time_s": 1.0 if args.quick else 3.0}
    else:
        mm_shape = (40, 48, 36)
        configs = [(16, 16, 16, 4, 1), (32, 32, 16, 4, 2)]
        att_shape = (1, 2, 40, 16)
        t_args = {"warmup_s": 0.0, "min_samples": 2, "min_time_s": 0.0, "max_time_s": 0.2, "calls_per_sample": 1}
    m, k_, n_ = mm_shape
    a = torch.randn(m, k_, generator=gen).to(dev, dtype)
    b = torch.randn(k_, n_, generator=gen).to(dev, dtype)
    ref = a.float() @ b.float()
    flops = 2.0 * m * n_ * k_
    peak = info.spec.peak_flops("bf16") if (gpu and info.spec is not None and info.bf16_tensor) else None
    records: list[dict[str, Any]] = []

    def record(kind: str, params: dict[str, Any], meas: Any, work_flops: float, **extra: Any) -> dict[str, Any]:
        tflops = work_flops / meas.median_s / 1e12
        rec = {"kind": kind, "params": params, "measurement": meas.to_dict(), "tflops": tflops,
               "derived": {"tflop_per_s": tflops, "time_ms": meas.median_s * 1e3}, **extra}
        if peak:
            rec["derived"]["pct_of_peak"] = 100.0 * tflops * 1e12 / peak
        records.append(rec)
        print(f"  {kind:22s} {str(params):60.60s} {tflops:9.3f} TFLOP/s", flush=True)
        return rec

    cublas = timing.benchmark(lambda: a @ b, device=dev, label="torch.matmul", **t_args)
    base = record("matmul-torch", {"m": m, "n": n_, "k": k_, "dtype": str(dtype)}, cublas, flops)
    best = None
    skipped: list[str] = []
    for bm, bn, bk, nw, st in configs:
        tile = tile_cost(bm, bn, bk, stages=st, num_warps=nw, dtype_bytes=a.element_size())
        if gpu and info.spec is not None and not tile.fits(info.spec):
            skipped.append(f"{bm}x{bn}x{bk}, {st} stages: {tile.shared_bytes // 1024} KiB of shared memory does "
                           f"not fit one block of {info.spec.name}")
            continue
        try:
            out = matmul(a, b, block_m=bm, block_n=bn, block_k=bk, num_warps=nw, num_stages=st)
        except Exception as exc:  # e.g. triton's OutOfResources on a GPU with less shared memory
            skipped.append(f"{bm}x{bn}x{bk}, {st} stages: {type(exc).__name__}: {exc}"[:200])
            continue
        err = float((out.float() - ref).abs().max() / ref.abs().max())
        meas = timing.benchmark(lambda: matmul(a, b, block_m=bm, block_n=bn, block_k=bk, num_warps=nw,
                                               num_stages=st), device=dev, label="triton matmul", **t_args)
        res: dict[str, Any] = {}
        if gpu:
            try:  # the compiled kernel's registers and shared memory, beside the occupancy calculator
                compiled = ks["matmul"].warmup(a, b, torch.empty(m, n_, device=dev, dtype=dtype), m, n_, k_,
                                               a.stride(0), a.stride(1), b.stride(0), b.stride(1), n_, 1,
                                               BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=nw, num_stages=st,
                                               grid=(1,))
                res = _compiled_resources(compiled)
            except Exception as exc:  # an API difference between Triton versions must not lose the timing
                res = {"compile_note": f"{type(exc).__name__}: {exc}"[:200]}
            if info.spec is not None and "registers_per_thread" in res and "shared_bytes" in res:
                try:
                    occ = occupancy(info.spec.name, nw * WARP_SIZE, res["registers_per_thread"], res["shared_bytes"])
                    res["predicted_blocks_per_sm"] = occ.blocks_per_sm
                    res["predicted_occupancy"] = occ.fraction
                except ValueError as exc:
                    res["occupancy_note"] = str(exc)
        rec = record("matmul-triton", {"m": m, "n": n_, "k": k_, "block_m": bm, "block_n": bn, "block_k": bk,
                                       "num_warps": nw, "num_stages": st, "dtype": str(dtype)}, meas, flops,
                     max_rel_error=err, vs_torch_ratio=cublas.median_s / meas.median_s, **res)
        if best is None or rec["tflops"] > best["tflops"]:
            best = rec

    batch, heads, seq, d = att_shape
    q, kk, v = (torch.randn(batch, heads, seq, d, generator=gen).to(dev, dtype) for _ in range(3))
    att_flops = batch * heads * attention_flops(seq, d)
    sdpa_ref = F.scaled_dot_product_attention(q.float(), kk.float(), v.float())
    out = flash_attention(q, kk, v)
    att_err = float((out.float() - sdpa_ref).abs().max())
    att_params = {"batch": batch, "heads": heads, "seq": seq, "head_dim": d, "dtype": str(dtype)}
    bm_att, bn_att = (128, 64) if gpu else (16, 16)
    m_flash = timing.benchmark(lambda: flash_attention(q, kk, v, block_m=bm_att, block_n=bn_att,
                                                       num_warps=8 if gpu else 4), device=dev,
                               label="triton flash", **t_args)
    m_naive = timing.benchmark(lambda: naive_attention(q, kk, v), device=dev, label="naive", **t_args)
    m_sdpa = timing.benchmark(lambda: F.scaled_dot_product_attention(q, kk, v), device=dev, label="sdpa", **t_args)
    record("attention-triton-flash", {**att_params, "block_m": bm_att, "block_n": bn_att}, m_flash, att_flops,
           max_abs_error=att_err, vs_naive_ratio=m_naive.median_s / m_flash.median_s)
    record("attention-naive", att_params, m_naive, att_flops)
    record("attention-sdpa", att_params, m_sdpa, att_flops)
    notes = [f"skipped {x}" for x in skipped]
    if not gpu:
        notes.append("CPU code path: Triton interpreter, tiny shapes; not a measurement of a GPU")
    result = results.make_result(BENCHMARK, info, {"matmul": list(mm_shape), "attention": list(att_shape),
                                                   "dtype": str(dtype), "quick": args.quick}, records, notes)
    summary = [f"kernels on {info.label()}: {len(records)} configurations"]
    if best is not None:
        summary.append(f"best Triton matmul {best['tflops']:.3f} TFLOP/s = {best['vs_torch_ratio']:.2f} x torch.matmul"
                       f" ({best['params']['block_m']}x{best['params']['block_n']}x{best['params']['block_k']}, "
                       f"{best['params']['num_warps']} warps, {best['params']['num_stages']} stages)")
    summary.append(f"Triton FlashAttention {m_naive.median_s / m_flash.median_s:.2f} x naive attention, "
                   f"{m_sdpa.median_s / m_flash.median_s:.2f} x SDPA's speed (max abs error {att_err:.1e})")
    if gpu:  # the chapter's acceptance targets (issue 15), judged only on a GPU
        if best is not None:
            ok = best["vs_torch_ratio"] >= MATMUL_TARGET_RATIO
            summary.append(f"target: Triton matmul >= {MATMUL_TARGET_RATIO:.0%} of cuBLAS: {'met' if ok else 'NOT met'}")
        ok = m_naive.median_s / m_flash.median_s >= FLASH_TARGET_SPEEDUP
        summary.append(f"target: FlashAttention >= {FLASH_TARGET_SPEEDUP:g} x naive attention: {'met' if ok else 'NOT met'}")
    return benchcli.finish_bench(result, args, "\n".join(summary))


#: Acceptance targets of the chapter on a GPU: the Triton matmul reaches this fraction of cuBLAS at 4096^3
#: and the FlashAttention forward beats naive attention by this factor at seq 4096.
MATMUL_TARGET_RATIO = 0.70
FLASH_TARGET_SPEEDUP = 2.0


# ---------------------------------------------------------------------------------------------------
# The chapter's tables, figures and views (the notebook calls these; the logic stays testable here)
# ---------------------------------------------------------------------------------------------------

#: The GPUs the chapter draws side by side.
CHAPTER_GPUS = ("A100-SXM4-80GB", "H100-SXM5-80GB")


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


def published_l2_read(gpu: str | specs.GPUSpec) -> tuple[float, Any] | None:
    """(bytes/s, record): the best read bandwidth of a published L2 sweep of ``gpu`` over footprints up to
    half its L2, or None when none is published. Chapter: *Programming the A100's SM*, "The hierarchy"."""
    from . import results

    spec = specs.get(gpu)
    for rec in results.records(benchmark="l2-sweep", gpu=spec.name, kind="published"):
        sizes, rates = rec.params.get("footprint_kib"), rec.figures.get("read_gb_per_s")
        if not isinstance(sizes, (list, tuple)) or not isinstance(rates, (list, tuple)):
            continue
        inside = [bw for kib, bw in zip(sizes, rates) if kib * 1024 <= spec.l2_bytes / 2]
        if inside:
            return max(inside) * 1e9, rec
    return None


def _sram_estimate(spec: specs.GPUSpec) -> str:
    """The published estimate of the on-chip SRAM bandwidth of ``spec``'s chip, or "not published"."""
    from . import results, views

    for rec in results.records(benchmark="memory-hierarchy", kind="published"):
        if "sram_bandwidth_tb_per_s" in rec.figures and spec.name.startswith(rec.gpu + "-"):
            return (f"about {rec.figures['sram_bandwidth_tb_per_s']:g} TB/s over all SMs (an estimate quoted "
                    f"by {views.cite_label(rec.source)})")
    return "not published"


def hierarchy_rows(gpus: Sequence[str] = (*CHAPTER_GPUS, "H200-SXM-141GB")) -> list[dict[str, Any]]:
    """Capacity and bandwidth of each level a kernel sees, from :mod:`ampere.specs` (rows for
    ``ab.show_table``). Chapter: *Programming the A100's SM*, "The hierarchy from a kernel's view"."""
    from . import views

    rows = []
    for g in gpus:
        s = specs.get(g)
        lim = sm_limits(g)
        l2bw = s.l2_bytes_per_s
        pub = published_l2_read(s)
        l2_measured = f"{pub[0] / 1e12:.1f} TB/s measured ({views.source_text(pub[1])})" if pub else ""
        rows += [
            {"GPU": s.name, "level": "registers", "capacity": f"{s.register_file_bytes_per_sm // 1024} KiB per SM "
             f"({lim.max_registers_per_thread} per thread at most)", "bandwidth": "operands of every instruction"},
            {"GPU": s.name, "level": "shared memory / L1",
             "capacity": f"{s.l1_shared_bytes_per_sm // 1024} KiB per SM, up to {s.max_shared_bytes_per_sm // 1024}"
                         f" KiB shared ({lim.max_shared_bytes_per_block // 1024} KiB per block)",
             "bandwidth": _sram_estimate(s)},
            {"GPU": s.name, "level": "L2", "capacity": f"{s.l2_bytes / 2**20:.0f} MiB per GPU",
             "bandwidth": (f"{l2bw / 1e12:.1f} TB/s (theoretical)" if l2bw else "not published by NVIDIA")
             + (f"; {l2_measured}" if l2_measured else "")},
            {"GPU": s.name, "level": "HBM", "capacity": f"{s.memory_bytes / 1e9:.0f} GB",
             "bandwidth": f"{s.hbm_bytes_per_s / 1e12:.2f} TB/s (datasheet)"},
        ]
    return rows


def _tile_axes(ax: Any, sides: Sequence[int], xlabel: str, ylabel: str, legend_loc: str = "lower right") -> None:
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xticks(list(sides))
    ax.set_xticklabels([str(b) for b in sides])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8, loc=legend_loc)


def plot_tile_intensity(ax: Any, gpus: Sequence[str] = CHAPTER_GPUS, precision: str = "bf16") -> None:
    """Intensity of square and 2:1 tiles against the ridge points of ``gpus`` (HBM and L2).
    Chapter: *Programming the A100's SM*, "Tiling and reuse"."""
    from . import plots

    sides = [16, 32, 64, 128, 256]
    ax.plot(sides, [tile_cost(b, b, 32).intensity_flop_per_byte for b in sides], "o-", color="#333333",
            label="square tile b x b")
    ax.plot(sides, [tile_cost(2 * b, b, 32).intensity_flop_per_byte for b in sides], "s--", color="#777777",
            label="tile 2b x b")
    for g in gpus:
        s = specs.get(g)
        c = plots.gpu_color(g)
        ax.axhline(s.ridge_point(precision), color=c, lw=1.2, label=f"{g}: ridge vs HBM")
        if s.l2_bytes_per_s:
            ax.axhline(s.ridge_point(precision, s.l2_bytes_per_s), color=c, lw=1.2, ls=":",
                       label=f"{g}: ridge vs L2")
    _tile_axes(ax, sides, "tile side b (elements)", "FLOP per byte loaded")
    plots.provenance_note(ax, f"model: 2 BM BN / ((BM + BN) x 2 bytes); ridge = dense {precision} peak / bandwidth")


def plot_tile_shared(ax: Any, gpus: Sequence[str] = CHAPTER_GPUS) -> None:
    """Shared memory of a b x b x 64 bf16 tile for 1 to 4 stages against each GPU's per-block limit.
    Chapter: *Programming the A100's SM*, "Tiling and reuse"."""
    from . import plots

    sides = [32, 64, 128, 256]
    for st, style in zip((1, 2, 3, 4), ("o-", "s-", "^-", "D-")):
        ax.plot(sides, [tile_cost(b, b, 64, stages=st).shared_bytes / 1024 for b in sides], style, color="#444444",
                alpha=0.4 + 0.15 * st, label=f"{st} stage{'s' if st > 1 else ''}")
    for g in gpus:
        ax.axhline(sm_limits(g).max_shared_bytes_per_block / 1024, color=plots.gpu_color(g), lw=1.5,
                   label=f"{g}: max per block")
    _tile_axes(ax, sides, "tile side b (BM = BN = b, BK = 64)", "shared memory (KiB)")
    ax.set_ylim(bottom=2.0)  # room under the 1-stage line for the legend
    plots.provenance_note(ax, "model: (BM + BN) BK x 2 bytes x stages; limits from the sm-limits table")


def plot_pipeline(ax: Any, ratios: Sequence[float] = (0.5, 1.0, 2.0, 4.0), tiles: int = 64) -> None:
    """Speed-up over one stage against ``num_stages``, one curve per load/compute time ratio.
    Chapter: *Programming the A100's SM*, "cp.async and software pipelining"."""
    from . import plots

    stages = list(range(1, 7))
    for r in ratios:
        ax.plot(stages, [pipeline_time(tiles, r, 1.0, s).speedup_vs_one_stage for s in stages], "o-",
                label=f"load = {r:g} x compute")
    ax.set_xlabel("num_stages (tiles in shared memory at once)")
    ax.set_ylabel("speed-up over 1 stage")
    ax.legend(fontsize=8)
    plots.provenance_note(ax, f"model: {tiles} K-steps; per step max(compute, load / (stages - 1))")


def plot_occupancy_registers(ax: Any, gpus: Sequence[str] = ("A100-SXM4-80GB", "H100-SXM5-80GB", "L4", "T4"),
                             threads: int = 256) -> None:
    """Occupancy against registers per thread (no shared memory), one staircase per GPU.
    Chapter: *Programming the A100's SM*, "Occupancy and latency hiding"."""
    from . import plots

    regs = list(range(16, 256, 1))
    for i, g in enumerate(gpus):
        fr = []
        for r in regs:
            try:
                fr.append(occupancy(g, threads, r, 0).fraction * 100)
            except ValueError:
                fr.append(float("nan"))
        ax.step(regs, fr, where="post", color=plots.gpu_color(g), lw=1.6, ls=("-", "--", "-.", ":")[i % 4], label=g)
    ax.set_xlabel("registers per thread")
    ax.set_ylabel("occupancy (% of max warps)")
    ax.set_ylim(0, 105)
    ax.legend(fontsize=8)
    plots.provenance_note(ax, f"model: {threads} threads per block, no shared memory; CUDA occupancy rules")


def plot_littles_law(ax: Any, gpus: Sequence[str] = ("A100-SXM4-80GB", "H100-SXM5-80GB", "H200-SXM-141GB"),
                     latencies_ns: Sequence[float] = (200, 400, 600, 800, 1000)) -> None:
    """Bytes in flight per SM to sustain the HBM bandwidth, against an assumed memory latency.
    Chapter: *Programming the A100's SM*, "Occupancy and latency hiding"."""
    from . import plots

    for g in gpus:
        s = specs.get(g)
        ax.plot(latencies_ns, [bytes_in_flight(s.hbm_bytes_per_s, t * 1e-9) / s.sm_count / 1024 for t in latencies_ns],
                "o-", color=plots.gpu_color(g), label=g)
    ax.set_xlabel("assumed load latency (ns)")
    ax.set_ylabel("KiB in flight per SM")
    ax.legend(fontsize=8)
    plots.provenance_note(ax, "model: Little's law, bytes in flight = bandwidth x latency, / SMs")


def plot_l2_persistence(ax: Any, gpu: str = "A100-SXM4-80GB", working_sets_mib: Sequence[float] = (10, 20, 30),
                        streaming_mib: float = 100.0, passes: int = 10) -> None:
    """HBM traffic saved by a persisting window against its size, one curve per working set.
    Chapter: *Programming the A100's SM*, "L2 residency control"."""
    from . import plots

    spec = specs.get(gpu)
    l2_mib = spec.l2_bytes / 2**20
    carve = [l2_mib * f / 20 for f in range(0, 21)]
    for w in working_sets_mib:
        ax.plot(carve, [l2_persistence(gpu, w * 2**20, streaming_mib * 2**20, c * 2**20, passes).traffic_ratio
                        for c in carve], label=f"reused working set {w:g} MiB")
    ax.set_xlabel(f"persisting carve-out (MiB of the {l2_mib:.0f} MiB L2)")
    ax.set_ylabel("HBM bytes without / with the window")
    ax.legend(fontsize=8)
    plots.provenance_note(ax, f"model of {gpu}: {streaming_mib:g} MiB streamed per pass, {passes} passes, LRU")


def plot_attention_traffic(ax: Any, head_dims: Sequence[int] = (64, 128),
                           gpus: Sequence[str] = CHAPTER_GPUS) -> None:
    """HBM bytes of one head's attention forward against N: standard, and FlashAttention with each GPU's
    shared memory per SM as M. Chapter: *Programming the A100's SM*, "FlashAttention as an IO-aware algorithm"."""
    from . import plots

    ns = [512, 1024, 2048, 4096, 8192, 16384]
    for d, ls in zip(head_dims, ("-", "--")):
        ax.plot(ns, [attention_hbm_bytes(n, d, 1.0, "standard") / 2**20 for n in ns], ls, color="#333333",
                marker="o", label=f"standard, d={d}")
        for g in gpus:
            m = specs.get(g).max_shared_bytes_per_sm
            ax.plot(ns, [attention_hbm_bytes(n, d, m, "flash") / 2**20 for n in ns], ls, color=plots.gpu_color(g),
                    marker="s", label=f"flash, d={d}, M={m // 1024} KiB ({g.split('-')[0]})")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("sequence length N")
    ax.set_ylabel("HBM traffic per head (MiB, bf16)")
    ax.legend(fontsize=8, loc="upper left")
    plots.provenance_note(ax, "model: the FlashAttention paper's counts of Algorithms 0 and 1")


def occupancy_rows(threads_per_block: int, registers_per_thread: int, shared_bytes_per_block: int,
                   gpus: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """:func:`occupancy` of one kernel on every catalogue GPU, as table rows.
    Chapter: *Programming the A100's SM*, "Occupancy and latency hiding"."""
    rows = []
    for g in gpus or specs.names():
        try:
            o = occupancy(g, threads_per_block, registers_per_thread, shared_bytes_per_block)
        except ValueError as exc:
            rows.append({"GPU": g, "blocks per SM": "-", "warps": "-", "occupancy": "-",
                         "limited by": f"cannot launch: {str(exc).split(';')[-1].strip()}"})
            continue
        rows.append({"GPU": g, "blocks per SM": o.blocks_per_sm, "warps": f"{o.active_warps} / {o.max_warps}",
                     "occupancy": f"{100 * o.fraction:.0f} %", "limited by": o.limiter})
    return rows


def _recorded(kind: str) -> list[Any]:
    from . import results

    return [r for r in results.records(benchmark=BENCHMARK, kind="measured") if r.params.get("kind") == kind]


def show_matmul(info: Any) -> None:
    """The Triton matmul against cuBLAS: measured here on a GPU with Triton, else the results recorded on real
    GPUs, else the best published bf16 matmuls (cuBLAS through PyTorch), each beside the dense peak. Chapter: *Programming the A100's SM*, "A Triton
    tiled matmul"."""
    from . import results, tables, views

    points: list[Any] = []
    if getattr(info, "backend", "cpu") == "cuda" and triton_available() and info.spec is not None:
        import torch

        from . import timing

        prec, dt = ("bf16", torch.bfloat16) if info.bf16_tensor else ("fp16", torch.float16)
        peak = info.spec.peak_flops(prec) / 1e12 if info.spec.supports(prec) else None
        n = 4096
        g = torch.Generator().manual_seed(0)
        a = torch.randn(n, n, generator=g).to("cuda", dt)
        b = torch.randn(n, n, generator=g).to("cuda", dt)
        runs = [("cuBLAS (torch.matmul)", lambda: a @ b)]
        for st in (1, 2, 3, 4):
            runs.append((f"Triton 128x128x64, 8 warps, {st} stage{'s' if st > 1 else ''}",
                         lambda st=st: matmul(a, b, block_m=128, block_n=128, block_k=64, num_warps=8, num_stages=st)))
        for what, fn in runs:
            try:
                fn()
            except Exception as exc:  # a configuration this GPU cannot hold (shared memory) is skipped, said so
                tables.show_md(f"{what}: skipped on {info.spec.name} ({type(exc).__name__}).")
                continue
            meas = timing.benchmark(fn, device="cuda", warmup_s=0.5, max_time_s=1.5)
            points.append(views.Point(f"{what}, {prec} {n}^3", info.spec.name, model=peak,
                                      real=2.0 * n ** 3 / meas.median_s / 1e12, unit="TFLOP/s", kind="measured",
                                      source="measured here"))
    else:
        for rec in _recorded("matmul-torch") + _recorded("matmul-triton"):
            p = rec.params
            what = ("cuBLAS" if p.get("kind") == "matmul-torch" else
                    f"Triton {p.get('block_m')}x{p.get('block_n')}x{p.get('block_k')}, {p.get('num_stages')} st.")
            peak = specs.get(rec.gpu).peak_flops("bf16") / 1e12 if rec.gpu in specs.names() else None
            points.append(views.point(rec, "tflop_per_s", f"{what}, {p.get('m')}^3", peak, "TFLOP/s"))
    if not points:  # the bar a Triton kernel is held to: the best published cuBLAS matmuls
        for g in CHAPTER_GPUS:
            peak = specs.get(g).peak_flops("bf16") / 1e12
            recs = [r for r in results.records(benchmark="matmul", gpu=g, kind="published")
                    if "bf16_tflop_per_s" in r.figures]
            if recs:
                best = max(recs, key=lambda r: r.figures["bf16_tflop_per_s"])
                points.append(views.point(best, "bf16_tflop_per_s", "best bf16 matmul (cuBLAS)", peak, "TFLOP/s"))
            else:
                points.append(views.Point("dense bf16 peak", g, model=peak, real=None, unit="TFLOP/s"))
    views.show(points, title="Triton tiled matmul and cuBLAS against the dense bf16 peak", model_label="dense peak")


def attention_model_ms(gpu: str | specs.GPUSpec, batch: int, heads: int, seq: int, head_dim: int,
                       algorithm: str) -> float:
    """Roofline time of an attention forward: max(HBM bytes / bandwidth, FLOPs / dense bf16 peak), in ms.
    Chapter: *Programming the A100's SM*, "FlashAttention in Triton"."""
    s = specs.get(gpu)
    bh = check.positive_int("batch", batch) * check.positive_int("heads", heads)
    traffic = bh * attention_hbm_bytes(seq, head_dim, s.max_shared_bytes_per_sm, algorithm)
    return 1e3 * max(traffic / s.hbm_bytes_per_s, bh * attention_flops(seq, head_dim) / s.peak_flops("bf16"))


def show_attention(info: Any, batch: int = 4, heads: int = 16, seq: int = 4096, head_dim: int = 64) -> None:
    """Triton FlashAttention against naive attention and PyTorch's SDPA: measured here on a GPU, else the
    recorded results, else the roofline model of both algorithms beside the published times of the
    FlashAttention paper. Chapter: *Programming the A100's SM*,
    "FlashAttention in Triton"."""
    from . import views

    points: list[Any] = []
    if getattr(info, "backend", "cpu") == "cuda" and triton_available() and info.spec is not None:
        import torch
        import torch.nn.functional as F

        from . import timing

        g = torch.Generator().manual_seed(0)
        dt = torch.bfloat16 if info.bf16_tensor else torch.float16
        q, k, v = (torch.randn(batch, heads, seq, head_dim, generator=g).to("cuda", dt) for _ in range(3))
        for what, algo, fn in (("naive (S and P in HBM)", "standard", lambda: naive_attention(q, k, v)),
                               ("Triton FlashAttention", "flash",
                                lambda: flash_attention(q, k, v, block_m=128, block_n=64, num_warps=8)),
                               ("PyTorch SDPA", "flash", lambda: F.scaled_dot_product_attention(q, k, v))):
            meas = timing.benchmark(fn, device="cuda", warmup_s=0.3, max_time_s=1.5)
            points.append(views.Point(f"{what}, N={seq}", info.spec.name,
                                      model=attention_model_ms(info.spec, batch, heads, seq, head_dim, algo),
                                      real=meas.median_s * 1e3, unit="ms", kind="measured", source="measured here"))
    else:
        names = {"attention-naive": ("naive", "standard"), "attention-triton-flash": ("Triton flash", "flash"),
                 "attention-sdpa": ("SDPA", "flash")}
        for kind, (what, algo) in names.items():
            for rec in _recorded(kind):
                p = rec.params
                model = (attention_model_ms(rec.gpu, p["batch"], p["heads"], p["seq"], p["head_dim"], algo)
                         if rec.gpu in specs.names() else None)
                points.append(views.point(rec, "time_ms", f"{what}, N={p.get('seq')}", model, "ms"))
    if not points:  # the roofline model of both algorithms beside the FlashAttention paper's own times
        points = [views.Point(f"{label} fwd, N={seq}", g, model=attention_model_ms(g, batch, heads, seq, head_dim, algo),
                              real=None, unit="ms")
                  for g in CHAPTER_GPUS for label, algo in (("standard", "standard"), ("flash", "flash"))]
        for rec in published_attention():
            p = rec.params
            points.append(views.point(rec, "fwd_bwd_time_ms", f"{p['algorithm']} fwd+bwd, {p['model']}, N={p['seq']}",
                                      None, "ms"))
    views.show(points, title=f"Attention, d={head_dim}: model and real times", model_label="roofline model",
               digits=3, log=True)


def published_attention() -> list[Any]:
    """The published attention records (standard first, then flash). Chapter: *Programming the A100's SM*,
    "FlashAttention in Triton"."""
    from . import results

    recs = results.records(benchmark="attention", kind="published")
    return sorted(recs, key=lambda r: (r.params.get("algorithm") != "standard", r.id))


def published_flash_ratios() -> tuple[float, float] | None:
    """(time ratio, HBM traffic ratio) of standard over FlashAttention in the published record pair, or None.
    Chapter: *Programming the A100's SM*, "Claims checked"."""
    by = {r.params.get("algorithm"): r for r in published_attention()}
    if "standard" not in by or "flash" not in by:
        return None
    std, fl = by["standard"].figures, by["flash"].figures
    return std["fwd_bwd_time_ms"] / fl["fwd_bwd_time_ms"], std["hbm_traffic_gb"] / fl["hbm_traffic_gb"]


@contextlib.contextmanager
def _native_stderr_quiet() -> Any:
    """Silence file descriptor 2 while the profiler starts and stops: its native library prints its
    start/stop lines there (not warnings), and a notebook would show them under the table."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):
        yield
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


def show_profile(info: Any) -> None:
    """The top kernels of one FlashAttention forward and one naive attention under ``torch.profiler``: the
    CUDA kernels on a GPU; without one, the CPU operators of the naive attention on the machine running the
    page (labelled so). Chapter: *Programming the A100's SM*, "Profiling"."""
    from . import tables

    import torch
    from torch.profiler import ProfilerActivity, profile

    g = torch.Generator().manual_seed(0)
    if getattr(info, "backend", "cpu") == "cuda" and triton_available():
        dt = torch.bfloat16 if info.bf16_tensor else torch.float16
        q, k, v = (torch.randn(4, 16, 4096, 64, generator=g).to("cuda", dt) for _ in range(3))
        flash_attention(q, k, v, block_m=128, block_n=64, num_warps=8)
        naive_attention(q, k, v)
        torch.cuda.synchronize()
        with _native_stderr_quiet(), profile(activities=[ProfilerActivity.CUDA]) as prof:
            flash_attention(q, k, v, block_m=128, block_n=64, num_warps=8)
            naive_attention(q, k, v)
            torch.cuda.synchronize()
        what, unit, attr = ("CUDA kernels of one Triton FlashAttention forward and one naive attention "
                            "(batch 4, 16 heads, N = 4096, d = 64), measured here"), "GPU", "device_time_total"
    else:  # the same tool on the CPU: the operators of the naive attention, where S and P are materialised
        q, k, v = (torch.randn(1, 4, 512, 64, generator=g) for _ in range(3))
        naive_attention(q, k, v)
        with _native_stderr_quiet(), profile(activities=[ProfilerActivity.CPU]) as prof:
            naive_attention(q, k, v)
        what, unit, attr = ("operators of one naive attention (batch 1, 4 heads, N = 512, d = 64, float32), "
                            "profiled on the CPU that ran this page"), "CPU", "self_cpu_time_total"
    rows = []
    for ev in sorted(prof.key_averages(), key=lambda e: -getattr(e, attr, 0.0))[:6]:
        rows.append({"kernel or operator": ev.key[:60], "calls": ev.count,
                     f"{unit} time (ms)": getattr(ev, attr, 0.0) / 1e3})
    tables.show_md(f"Top {len(rows)} {what}:\n\n"
                   + tables.markdown_table(rows, formats={f"{unit} time (ms)": ".3f"}))


def prepare() -> bool:
    """Set ``TRITON_INTERPRET=1`` when no CUDA GPU is usable (before triton's first import) and say whether the
    Triton kernels can run here. Call it in a chapter's setup cell. Chapter: *Programming the A100's SM*."""
    if not _cuda_usable() and "triton" not in sys.modules:
        os.environ["TRITON_INTERPRET"] = "1"
    return triton_available()
