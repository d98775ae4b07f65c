"""The chapter's model figures: each ``plot_*`` draws one model on a matplotlib axis the notebook makes
(tile intensity and shared memory, pipeline depth, occupancy against registers, Little's law, L2 persistence,
attention traffic).

Chapter: *Programming the A100's SM* (``book/kernels.ipynb``). The functions take the axis; they import
only :mod:`ampere.plots` (inside the functions), never matplotlib at module level.
"""

from __future__ import annotations

from typing import Any, Sequence

from .. import specs
from .attention import attention_hbm_bytes
from .l2_residency import l2_persistence
from .occupancy import occupancy, sm_limits
from .tiling import bytes_in_flight, pipeline_time, tile_cost

#: The GPUs the chapter draws side by side.
CHAPTER_GPUS = ("A100-SXM4-80GB", "H100-SXM5-80GB")


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
    from .. import plots

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
    from .. import plots

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
    from .. import plots

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
    from .. import plots

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
    from .. import plots

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
    from .. import plots

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
    from .. import plots

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
