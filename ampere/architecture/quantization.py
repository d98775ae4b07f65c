"""Why real matmuls fall below the roof: the tile and wave staircase, tensor-core alignment, and the third roof
set by the fixed cost of launching a kernel.

Chapter: *Architecture of the GA100* (book/architecture.ipynb), "Tiles, waves and alignment" and "The third
roof: launch overhead". Pure Python: no torch, no matplotlib. The timing model is
:func:`ampere.gemm.quantized_matmul_time` (shared with the Megatron chapter's GEMM model); the launch figure
is read from ``ampere/data/tables/gpu-performance-rules.json``.
"""

from __future__ import annotations

from typing import Any, Sequence

from .. import check, gemm, results, specs


def launch_overhead_s() -> float:
    """Seconds per kernel when short kernels are launched back to back in one stream: the published example
    (a 2.9 us kernel takes 3.8 us per launch, ``gpu-performance-rules.json``, row ``kernel_launch``). The
    floor under the time of any kernel, whatever it computes. Chapter: *Architecture of the GA100*, "The third
    roof"."""
    row = next(r for r in results.table("gpu-performance-rules")["rows"] if r["rule"] == "kernel_launch")
    return float(row["per_kernel_back_to_back_us"]) * 1e-6


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
    if isinstance(ns, (str, bytes)) or not 1 <= len(ns) <= 10_000:
        raise ValueError(f"ns must be a sequence of 1 to 10,000 sizes, got {ns!r:.60}")
    m, k = check.positive_int("m", m), check.positive_int("k", k)
    peak = spec.peak_flops(key)
    rows = []
    for n in ns:
        n = check.positive_int("ns", n)
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
    At most 100,000 kernels. Chapter: *Architecture of the GA100*, "The third roof"."""
    launch = launch_overhead_s() if launch_s is None else check.positive("launch_s", launch_s, maximum=1.0)
    if isinstance(kernel_seconds, (str, bytes)) or not 1 <= len(kernel_seconds) <= 100_000:
        raise ValueError("kernel_seconds must be a sequence of 1 to 100,000 durations in seconds")
    ts = [check.nonneg("kernel_seconds", t, maximum=3600.0) for t in kernel_seconds]
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
