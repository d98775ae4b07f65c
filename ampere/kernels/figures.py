"""The chapter's model figures: each ``plot_*`` draws one model on a matplotlib axis the notebook makes
(tile intensity and shared memory, pipeline depth, occupancy against registers, Little's law, L2 persistence,
attention traffic).

Chapter: *Programming the A100's SM* (``book/kernels.ipynb``). The functions take the axis; they import
only :mod:`ampere.plots` (inside the functions), never matplotlib at module level.
"""

from __future__ import annotations

from typing import Any, Sequence

from .. import check, specs
from .attention import attention_hbm_bytes
from .l2_residency import l2_persistence
from .launch_order import blocks_loaded, launch_traffic, program_order
from .occupancy import occupancy, sm_limits
from .shared_memory import bank_map, column_conflicts
from .tiling import bytes_in_flight, pipeline_time, tile_cost

#: The GPUs the chapter draws side by side.
CHAPTER_GPUS = ("A100-SXM4-80GB", "H100-SXM5-80GB")


def _axes(ax: Any) -> Any:
    from .. import plots

    return plots.axes("ax", ax)


def _three_axes(axes: Any) -> list[Any]:
    from .. import plots

    return check.sequence("axes", axes, plots.axes, min_len=3, max_len=3)


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

    ax = _axes(ax)
    gpus = check.gpus("gpus", gpus, max_len=8)
    check.one_of("precision", precision, specs.ALL_PRECISIONS)
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

    ax = _axes(ax)
    gpus = check.gpus("gpus", gpus, max_len=8)
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

    ax = _axes(ax)
    ratios = check.sequence("ratios", ratios, lambda n, v: check.positive(n, v, maximum=1e6), max_len=16)
    tiles = check.bounded_int("tiles", tiles, 1, 1 << 20)
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

    ax = _axes(ax)
    gpus = check.gpus("gpus", gpus, max_len=8)
    threads = check.bounded_int("threads", threads, 1, 1024)
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

    ax = _axes(ax)
    gpus = check.gpus("gpus", gpus, max_len=8)
    latencies_ns = check.sequence("latencies_ns", latencies_ns, lambda n, v: check.positive(n, v, maximum=1e9),
                                  max_len=1000)
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

    ax = _axes(ax)
    spec = specs.get(gpu)
    working_sets_mib = check.sequence("working_sets_mib", working_sets_mib,
                                      lambda n, v: check.positive(n, v, maximum=1e9), max_len=16)
    streaming_mib = check.nonneg("streaming_mib", streaming_mib, maximum=1e9)
    passes = check.bounded_int("passes", passes, 1, 1 << 20)
    l2_mib = spec.l2_bytes / 2**20
    carve = [l2_mib * f / 20 for f in range(0, 21)]
    for w in working_sets_mib:
        ax.plot(carve, [l2_persistence(gpu, w * 2**20, streaming_mib * 2**20, c * 2**20, passes).traffic_ratio
                        for c in carve], label=f"reused working set {w:g} MiB")
    ax.set_xlabel(f"persisting carve-out (MiB of the {l2_mib:.0f} MiB L2)")
    ax.set_ylabel("HBM bytes without / with the window")
    ax.legend(fontsize=8)
    plots.provenance_note(ax, f"model of {gpu}: {streaming_mib:g} MiB streamed per pass, {passes} passes, LRU")


def plot_attention_traffic(ax: Any, head_dim: int = 64, gpus: Sequence[str] = CHAPTER_GPUS,
                           block_m: int = 128) -> None:
    """Bytes one head's attention forward moves against N: standard attention; FlashAttention-1 (Algorithm
    1, key/value blocks outer) with each GPU's shared memory per SM as M; the chapter's Triton kernel
    (FlashAttention-2 order, ``block_m`` queries per program) counting every load, and counting K and V once
    when the L2 serves their re-reads. Chapter: *Programming the A100's SM*, "FlashAttention as an IO-aware
    algorithm"."""
    from .. import plots

    ax = _axes(ax)
    gpus = check.gpus("gpus", gpus, max_len=8)
    head_dim = check.bounded_int("head_dim", head_dim, 1, 4096)
    block_m = check.bounded_int("block_m", block_m, 1, 1 << 16)
    ns = [512, 1024, 2048, 4096, 8192, 16384]
    d = head_dim
    ax.plot(ns, [attention_hbm_bytes(n, d, None, "standard") / 2**20 for n in ns], "-", color="#333333",
            marker="o", label="standard (S and P in HBM)")
    for g in gpus:
        m = specs.get(g).max_shared_bytes_per_sm
        ax.plot(ns, [attention_hbm_bytes(n, d, m, "flash1") / 2**20 for n in ns], "--", color=plots.gpu_color(g),
                marker="s", label=f"FlashAttention-1, M = {m // 1024} KiB ({g.split('-')[0]})")
    ax.plot(ns, [attention_hbm_bytes(n, d, None, "flash2", block_m=block_m) / 2**20 for n in ns], "-.",
            color="#8c564b", marker="^", label=f"Triton kernel (FA-2 order, {block_m} queries): every load")
    ax.plot(ns, [attention_hbm_bytes(n, d, None, "flash2", block_m=block_m, l2_reuse=True) / 2**20 for n in ns],
            ":", color="#8c564b", marker="v", label="Triton kernel, K and V re-reads from L2: HBM")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("sequence length N")
    ax.set_ylabel(f"bytes per head (MiB, bf16, d = {d})")
    ax.legend(fontsize=8, loc="upper left")
    plots.provenance_note(ax, "model: the FlashAttention papers' algorithms, loads and stores counted")


def plot_bank_conflicts(axes: Sequence[Any], rows: int = 32, row_words: int = 32) -> None:
    """Three panels: the bank of every word of a ``rows`` x ``row_words`` float tile stored row-major and with
    the XOR swizzle (column 0, which one warp reads, outlined), and the conflict degree of that column read
    against the row length. Chapter: *Programming the A100's SM*, "Shared-memory banks and swizzling"."""
    from .. import plots

    axes = _three_axes(axes)
    rows = check.bounded_int("rows", rows, 1, 256)
    row_words = check.bounded_int("row_words", row_words, 32, 4096)
    if row_words % 32:
        raise ValueError(f"row_words={row_words} must be a multiple of 32 (the XOR panel swizzles whole lines)")
    for ax, layout in zip(axes[:2], ("row-major", "xor")):
        banks = bank_map(rows, 4 * row_words, layout=layout)
        ax.imshow(banks, cmap="twilight", vmin=0, vmax=31, interpolation="nearest", aspect="equal")
        for r in range(rows):  # the words thread r reads when the warp reads logical column 0
            col = [c for c in range(row_words) if (c if layout == "row-major" else c ^ (r % 32)) == 0][0]
            ax.plot([col - 0.5, col + 0.5, col + 0.5, col - 0.5, col - 0.5],
                     [r - 0.5, r - 0.5, r + 0.5, r + 0.5, r - 0.5], color="k", lw=1.0)
        ax.set_title(f"{layout}: logical column 0 outlined", fontsize=9)
        ax.set_xlabel("word in the row (4 B)", fontsize=8)
        ax.set_ylabel("row = thread of the warp", fontsize=8)
        ax.tick_params(labelsize=8)
    lengths = list(range(4, 68, 4))
    ax = axes[2]
    ax.plot(lengths, column_conflicts(lengths), "o-", color="#333333", ms=4, label="row-major")
    ax.plot(lengths, column_conflicts(lengths, "padded"), "s--", color="#1f77b4", ms=4,
            label="one word of padding per row")
    xor_lengths = [w for w in lengths if w % 32 == 0]
    ax.plot(xor_lengths, column_conflicts(xor_lengths, "xor"), "D", color="#d62728", ms=7, mfc="none",
            label="XOR swizzle (rows of 32 k words)")
    ax.set_yscale("log", base=2)
    ax.set_ylim(0.7, 300)  # room above the points for the legend
    ax.set_xticks([8, 16, 24, 32, 40, 48, 56, 64])
    ax.set_xlabel("row length (4-byte words)", fontsize=8)
    ax.set_ylabel("requests per column read", fontsize=8)
    ax.legend(fontsize=8, loc="upper left")
    ax.tick_params(labelsize=8)
    plots.provenance_note(ax, "model: 32 banks of 4 B (CUDA Programming Guide)")


def plot_launch_order(axes: Sequence[Any], grid: int = 9, group_m: int = 3, first: int = 9,
                      window: int = 108) -> None:
    """Three panels: the first ``first`` programs of a ``grid`` x ``grid`` tiled matmul in row-major and in
    grouped order, with the blocks of A (red, left of the grid) and B (blue, above) they need; and the
    modelled HBM traffic of A and B (a multiple of reading each once) against the width of the matrix, for
    row-major and GROUP_M = 8, when ``window`` programs run together (one per SM of an A100 by default).
    Chapter: *Programming the A100's SM*, "Launch order and L2 reuse"."""
    import numpy as np

    from .. import plots

    axes = _three_axes(axes)
    grid = check.bounded_int("grid", grid, 1, 64)
    group_m = check.bounded_int("group_m", group_m, 1, grid)
    first = check.bounded_int("first", first, 1, grid * grid)
    window = check.bounded_int("window", window, 1, 1 << 16)
    for ax, g, label in ((axes[0], 1, "row-major"), (axes[1], group_m, f"GROUP_M = {group_m}")):
        order = program_order(grid, grid, g)
        img = np.full((grid, grid), np.nan)
        for p, (r, c) in enumerate(order[:first]):
            img[r, c] = p
        ax.imshow(img, cmap="viridis", vmin=0, vmax=first - 1)
        for i in range(grid + 1):  # the tiles of C
            ax.plot([-0.5, grid - 0.5], [i - 0.5, i - 0.5], color="#cccccc", lw=0.6)
            ax.plot([i - 0.5, i - 0.5], [-0.5, grid - 0.5], color="#cccccc", lw=0.6)
        for r in {r for r, _ in order[:first]}:
            ax.plot([-0.7, -0.7], [r - 0.45, r + 0.45], color="#d62728", lw=4, solid_capstyle="butt")
        for c in {c for _, c in order[:first]}:
            ax.plot([c - 0.45, c + 0.45], [-0.7, -0.7], color="#1f77b4", lw=4, solid_capstyle="butt")
        ax.set_xlim(-1.0, grid - 0.5)
        ax.set_ylim(grid - 0.5, -1.0)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(f"{label}: {blocks_loaded(grid, grid, grid, first, g)} blocks", fontsize=9)
    ax = axes[2]
    widths = [2048, 4096, 8192, 12288, 16384, 24576, 32768]
    for g, style in ((1, "o-"), (8, "s--")):
        ratios = [(t := launch_traffic(4096, n, 4096, group_m=g, window=window)).hbm_bytes / t.compulsory_bytes
                  for n in widths]
        ax.plot(widths, ratios, style, ms=4, label="row-major" if g == 1 else "GROUP_M = 8")
    ax.axvline(window * 128, color="k", lw=0.8, ls=":")
    ax.set_xscale("log", base=2)
    ax.set_xticks([2048, 8192, 32768], ["2048", "8192", "32768"])
    ax.minorticks_off()
    ax.set_xlabel("N (M = K = 4096, tiles of 128)", fontsize=8)
    ax.set_ylabel("HBM bytes / minimum", fontsize=8)
    ax.tick_params(labelsize=8)
    ax.legend(fontsize=8)
    plots.provenance_note(ax, f"model: {window} programs in flight")

