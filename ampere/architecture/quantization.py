"""Why real matmuls fall below the roof: the tile and wave staircase, tensor-core alignment, and the third roof
set by the fixed cost of launching a kernel.

Chapter: *Architecture of the GA100* (book/architecture.ipynb), "Tiles, waves and alignment" and "The third
roof: launch overhead". Pure Python: no torch, no matplotlib. The timing model is
:func:`ampere.gemm.quantized_matmul_time` (shared with the Megatron chapter's GEMM model); the launch figures
are read from ``ampere/data/published/kernel-launch.json``.
"""

from __future__ import annotations

from typing import Any, Sequence

from .. import check, gemm, results, specs


def _launch_records() -> dict[str, results.Record]:
    return {r.gpu: r for r in results.records(benchmark="kernel-launch", kind="published")}


def launch_overhead_s(graph: bool = False) -> float:
    """The per-kernel floor of back-to-back launches on an A100-SXM4-80GB: the time of one call of a kernel that
    reads and writes only 64 KiB, so that the call is almost all launch cost, in Ernst's gpu-small-kernels
    benchmark (``ampere/data/published/kernel-launch.json``): bytes per call over the best printed bandwidth. About
    2.6 us when the launches are queued in a stream, 1.3 us when they are replayed from a CUDA graph
    (``graph=True``). The book's model: no kernel of a back-to-back sequence takes less. Chapter:
    *Architecture of the GA100*, "The third roof"."""
    rec = _launch_records()["A100-SXM4-80GB"]
    rates = rec.figure("graph_gb_per_s" if check.boolean("graph", graph) else "stream_gb_per_s")
    return rec.params["bytes_per_call"] / (max(rates) * 1e9)


def launch_overheads() -> list[dict[str, str]]:
    """The published launch measurements as table rows: GPU, how the kernels were launched, the time per kernel
    (launch included), what the kernel itself does, and the source (author-year). Chapter: *Architecture of the
    GA100*, "The third roof"."""
    from .. import views

    recs = _launch_records()
    a100, v100 = recs["A100-SXM4-80GB"], recs["V100-SXM2-16GB"]
    rows = []
    for graph in (False, True):
        rows.append({"GPU": a100.gpu, "launched": "from a CUDA graph" if graph else "back to back in a stream",
                     "time per kernel (us)": f"{launch_overhead_s(graph) * 1e6:.1f}",
                     "the kernel": "64 KiB read and written (almost no work)", "source": views.cite_label(a100.source)})
    for key, how in (("synchronized", "synchronised after each"), ("stream", "back to back in a stream"),
                     ("graph", "from a CUDA graph")):
        rows.append({"GPU": f"{v100.gpu}, CUDA {v100.setup['cuda']}", "launched": how,
                     "time per kernel (us)": f"{v100.figure(key + '_per_kernel_us'):.1f}",
                     "the kernel": f"{v100.figure('kernel_us'):.1f} us of work", "source": views.cite_label(v100.source)})
    return rows


def staircase(gpu: str | specs.GPUSpec, ns: Sequence[int], m: int, k: int, precision: str = "fp16",
              tile_m: int = 256, tile_n: int = 128, overhead_s: float = 0.0) -> list[dict[str, Any]]:
    """Modelled throughput of C[m,n] = A[m,k] B[k,n] for every ``n`` in ``ns``: one tile per SM per wave at the
    dense peak of ``precision`` (:func:`ampere.gemm.quantized_matmul_time`), plus ``overhead_s``.

    Each row: ``n``, ``tiles``, ``waves``, ``tflops`` (model), ``pct_of_peak``. At most 10,000 sizes.
    Chapter: *Architecture of the GA100*, "Tiles, waves and alignment".
    """
    spec = specs.get(gpu)
    key = gemm.peak_precision_for(spec, check.one_of("precision", precision, specs.PRECISIONS))
    if key is None:
        raise ValueError(f"precision={precision!r} is not supported on {spec.name}; allowed: "
                         f"{', '.join(spec.precisions())}")
    ns = check.sequence("ns", ns, lambda name, n: check.positive_int(name, n, maximum=2**31 - 1), max_len=10_000)
    m = check.positive_int("m", m, maximum=2**31 - 1)
    k = check.positive_int("k", k, maximum=2**31 - 1)
    tile_m, tile_n = check.positive_int("tile_m", tile_m, maximum=4096), check.positive_int("tile_n", tile_n, maximum=4096)
    overhead_s = check.nonneg("overhead_s", overhead_s, maximum=3600.0)
    peak = spec.peak_flops(key)
    rows = []
    for n in ns:
        t = gemm.quantized_matmul_time(m, n, k, peak, tile_m, tile_n, spec.sm_count, overhead_s=overhead_s)
        tiles = -(-m // tile_m) * -(-n // tile_n)
        tf = gemm.matmul_flops(m, n, k) / t / 1e12
        rows.append({"n": n, "tiles": tiles, "waves": -(-tiles // spec.sm_count), "tflops": tf,
                     "pct_of_peak": 100 * tf * 1e12 / peak})
    return rows


def three_roofs(gpu: str | specs.GPUSpec, n: int, precision: str = "bf16",
                launch_s: float | None = None) -> dict[str, Any]:
    """The three ceilings of an n x n x n matmul (each matrix crossing DRAM once): compute (the dense peak),
    memory (intensity x DRAM bandwidth) and overhead (FLOPs / the per-kernel floor ``launch_s``, default
    :func:`launch_overhead_s`). ``attainable`` is the lowest, ``bound`` names it. In TFLOP/s.

    Chapter: *Architecture of the GA100*, "The third roof".
    """
    spec = specs.get(gpu)
    n = check.positive_int("n", n, maximum=1_000_000)
    launch = launch_overhead_s() if launch_s is None else check.positive("launch_s", launch_s, maximum=1.0)
    key = gemm.peak_precision_for(spec, check.one_of("precision", precision, specs.PRECISIONS))
    if key is None:
        raise ValueError(f"precision={precision!r} is not supported on {spec.name}")
    flops = gemm.matmul_flops(n, n, n)
    from .roofline import matmul_intensity

    roofs = {"compute": spec.peak_flops(key) / 1e12,
             "memory": matmul_intensity(n, n, n, precision) * spec.hbm_bytes_per_s / 1e12,
             "overhead": flops / launch / 1e12}
    bound = min(roofs, key=roofs.get)
    return {"n": n, **roofs, "attainable": roofs[bound], "bound": bound}


def overhead_step_time(kernel_seconds: Sequence[float], launch_s: float | None = None) -> dict[str, float]:
    """Time of a step made of kernels of the given durations when each costs at least the launch floor:
    ``sum(max(t, launch_s))``, beside the sum of the kernel times alone and the share lost to launches.
    ``launch_s`` defaults to :func:`launch_overhead_s` (the A100's floor in a stream). A lower bound: it does not
    see the gap a dependent kernel waits after the previous one ends. At most 100,000 kernels. Chapter:
    *Architecture of the GA100*, "The third roof"."""
    launch = launch_overhead_s() if launch_s is None else check.positive("launch_s", launch_s, maximum=1.0)
    ts = check.sequence("kernel_seconds", kernel_seconds, lambda name, t: check.nonneg(name, t, maximum=3600.0),
                        max_len=100_000)
    step = sum(max(t, launch) for t in ts)
    work = sum(ts)
    return {"step_s": step, "kernel_s": work, "overhead_share": 1 - work / step if step else 0.0}


def staircase_sizes(lo: int = 128, hi: int = 5120, step: int = 64) -> list[int]:
    """The n of the staircase sweep: ``lo`` to ``hi`` by ``step`` (at most 2,000 sizes). Chapter: *Architecture
    of the GA100*, "Tiles, waves and alignment"."""
    lo, hi, step = (check.positive_int(k, v, maximum=65536) for k, v in (("lo", lo), ("hi", hi), ("step", step)))
    if hi < lo or (hi - lo) // step + 1 > 2000:
        raise ValueError(f"lo={lo}, hi={hi}, step={step}: need lo <= hi and at most 2,000 sizes")
    return list(range(lo, hi + 1, step))
