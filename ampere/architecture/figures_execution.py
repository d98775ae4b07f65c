"""Figures of the execution-model and quantisation lessons: branch divergence, occupancy against registers,
latency hiding, the tile and wave staircase, and the three roofs of a square matmul.

Chapter: *Architecture of the GA100* (book/architecture.ipynb), "How an SM executes", "Tiles, waves and
alignment" and "The third roof". Each function draws on a matplotlib axis given by the caller and returns
what it drew; matplotlib itself is never imported here.
"""

from __future__ import annotations

from typing import Any, Sequence

from .. import check, specs
from .execution import divergence_expected, issue_utilization, resident_warps
from .quantization import staircase, three_roofs


def plot_divergence(ax: Any, cycles_taken: float = 20.0, cycles_other: float = 20.0) -> dict[str, list[float]]:
    """Expected slowdown of a two-way branch against the share of threads taking it, for threads that decide
    independently and for whole warps that agree (:func:`divergence_expected`). Chapter: *Architecture of the
    GA100*, "Branch divergence"."""
    from ..plots import axes, gpu_color

    axes("ax", ax)
    cycles_taken, cycles_other = check.nonneg("cycles_taken", cycles_taken), check.nonneg("cycles_other", cycles_other)
    if cycles_taken + cycles_other == 0:
        raise ValueError("cycles_taken and cycles_other are both 0: give at least one path a cost")
    ps = [i / 200 for i in range(201)]
    rnd = [divergence_expected(p, cycles_taken, cycles_other)["slowdown"] for p in ps]
    coh = [divergence_expected(p, cycles_taken, cycles_other, coherent=True)["slowdown"] for p in ps]
    ax.plot([100 * p for p in ps], rnd, color=gpu_color("A100-SXM4-80GB"), lw=2,
            label="threads decide independently")
    ax.plot([100 * p for p in ps], coh, color="#555555", lw=2, ls="--", label="whole warps decide together")
    ax.set_xlabel("threads taking the branch (%)")
    ax.set_ylabel("cycles per warp / cycles without divergence")
    ax.set_ylim(0.9, max(rnd) * 1.1)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="center right")
    return {"p": ps, "independent": rnd, "coherent": coh}


def plot_occupancy(ax: Any, gpu: str | specs.GPUSpec = "A100-SXM4-80GB", threads_per_block: int = 256,
                   shared_bytes_per_block: int = 0) -> list[tuple[int, int]]:
    """Resident warps per SM against registers per thread (:func:`resident_warps`): the staircase the register
    file draws. Returns (registers, warps) pairs. Chapter: *Architecture of the GA100*, "Occupancy"."""
    from ..plots import axes, gpu_color

    axes("ax", ax, "step")
    spec = specs.get(gpu)
    regs = list(range(16, 256, 8)) + [255]
    pts = [(r, resident_warps(spec, threads_per_block, r, shared_bytes_per_block)["warps"]) for r in regs]
    ax.step([r for r, _ in pts], [w for _, w in pts], where="post", color=gpu_color(spec.name), lw=2)
    ax.set_xlabel("registers per thread")
    ax.set_ylabel("resident warps per SM")
    ax.set_ylim(0, max(w for _, w in pts) * 1.1)
    ax.set_title(f"{spec.name}, {threads_per_block}-thread blocks", fontsize=9)
    ax.grid(alpha=0.3)
    return pts


def plot_latency_hiding(ax: Any, gpu: str | specs.GPUSpec = "A100-SXM4-80GB",
                        cases: Sequence[tuple[str, float, int]] = ()) -> dict[str, list[float]]:
    """Share of issue slots used against resident warps per SM (:func:`issue_utilization`) for each
    (label, latency in cycles, independent instructions per warp) of ``cases``. Chapter: *Architecture of the
    GA100*, "Latency hiding"."""
    from ..plots import axes

    axes("ax", ax)
    spec = specs.get(gpu)
    cases = check.sequence("cases", cases, _latency_case, min_len=0, max_len=8)
    max_warps = resident_warps(spec, 32, 16)["blocks_by"]["warps"]  # one warp per block: the warp limit
    warps = list(range(0, max_warps + 1))
    out = {}
    styles = ["-", "--", ":", "-."]
    for i, (label, latency, ilp) in enumerate(cases):
        ys = [100 * issue_utilization(w, latency, spec, ilp) for w in warps]
        ax.plot(warps, ys, lw=2, ls=styles[i % len(styles)], label=label)
        out[label] = ys
    ax.set_xlabel("resident warps per SM")
    ax.set_ylabel("issue slots used (%)")
    ax.set_ylim(0, 105)
    ax.set_xlim(0, max_warps)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="center right")
    return out


def _latency_case(name: str, case: Any) -> tuple[str, float, int]:
    """One (label, latency in cycles, ILP) case of :func:`plot_latency_hiding`."""
    label, latency, ilp = check.sequence(name, case, min_len=3, max_len=3)
    return (check.string(f"{name}.label", label), check.positive(f"{name}.latency", latency, maximum=1e6),
            check.positive_int(f"{name}.ilp", ilp, maximum=64))


def plot_staircase(ax: Any, gpu: str | specs.GPUSpec, ns: Sequence[int], m: int, k: int, precision: str = "fp16",
                   tile_m: int = 256, tile_n: int = 128, measured: Sequence[dict[str, Any]] = (),
                   measured_label: str = "measured here") -> list[dict[str, Any]]:
    """Modelled TFLOP/s of an m x n x k matmul against n (:func:`staircase`), wave boundaries marked, and
    ``measured`` rows (``n``, ``tflops``) as points. Chapter: *Architecture of the GA100*, "Tiles, waves and
    alignment"."""
    from ..plots import PROVENANCE, axes, gpu_color

    axes("ax", ax)
    spec = specs.get(gpu)
    rows = staircase(spec, ns, m, k, precision, tile_m, tile_n)
    measured = check.sequence("measured", measured, _measured_point, min_len=0, max_len=10_000)
    measured_label = check.string("measured_label", measured_label)
    color = gpu_color(spec.name)
    ax.plot([r["n"] for r in rows], [r["tflops"] for r in rows], color=color, lw=1.5,
            label=f"model: {tile_m}x{tile_n} tiles, one per SM per wave")
    wave_edges = [b["n"] for a, b in zip(rows, rows[1:]) if b["waves"] > a["waves"]]
    for x in wave_edges:
        ax.axvline(x, color="#999999", lw=0.8, ls=":")
    if measured:
        style = PROVENANCE.get("measured", {})
        ax.plot([r["n"] for r in measured], [r["tflops"] for r in measured], ls="none", color="black",
                marker=style.get("marker", "o"), ms=4, label=measured_label)
    ax.set_xlabel(f"n  (C[{m} x n] = A[{m} x {k}] B[{k} x n], {precision.upper()})")
    ax.set_ylabel("TFLOP/s")
    ax.set_ylim(0, spec.peak_flops(precision) / 1e12 * 1.08)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    return rows


def _measured_point(name: str, row: Any) -> dict[str, float]:
    """A measured staircase point: a mapping with a positive ``n`` and a finite ``tflops`` >= 0."""
    row = check.mapping(name, row)
    if "n" not in row or "tflops" not in row:
        raise ValueError(f"{name} must have the keys 'n' and 'tflops', got {sorted(row)}")
    return {"n": check.positive_int(f"{name}['n']", row["n"]), "tflops": check.nonneg(f"{name}['tflops']", row["tflops"])}


def plot_three_roofs(ax: Any, gpu: str | specs.GPUSpec = "A100-SXM4-80GB", precision: str = "bf16",
                     ns: Sequence[int] = ()) -> list[dict[str, Any]]:
    """The compute, memory and launch-overhead ceilings of square matmuls against n (log-log), and the lowest of
    them (:func:`three_roofs`). Chapter: *Architecture of the GA100*, "The third roof"."""
    from ..plots import axes, gpu_color

    axes("ax", ax)
    spec = specs.get(gpu)
    ns = check.sequence("ns", ns, lambda name, n: check.positive_int(name, n, maximum=1_000_000), min_len=0,
                        max_len=1000) or [round(2 ** (i / 4)) for i in range(24, 57)]
    rows = [three_roofs(spec, n, precision) for n in ns]
    for key, style in (("compute", "-"), ("memory", "--"), ("overhead", ":")):
        ax.plot(ns, [r[key] for r in rows], color="#777777", ls=style, lw=1.2, label=f"{key} roof")
    ax.plot(ns, [r["attainable"] for r in rows], color=gpu_color(spec.name), lw=2.5, label="attainable (lowest)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(f"n  (n x n x n {precision.upper()} matmul)")
    ax.set_ylabel("TFLOP/s")
    ax.set_ylim(0.1, spec.peak_flops(precision) / 1e12 * 3)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="lower right")
    return rows
