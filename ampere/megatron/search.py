"""Choosing a layout: :func:`search_layouts` ranks every (t, p, d, b, v) of a model on a number of GPUs
by the throughput :func:`estimate` predicts, skipping the layouts that do not fit in memory.

Chapter: *Megatron-LM: 3D parallelism predicted, validated, and run* (book/megatron.ipynb),
section "Choosing a layout". Pure: no torch, no matplotlib.
"""

from __future__ import annotations

from typing import Any, Sequence

from .. import check, specs
from ..transformer import TransformerShape
from .sizing import MAX_BATCH, MAX_GPUS, _cfg, _recompute
from .stacks import software
from .throughput import Estimate, estimate

# ===========================================================================================================
# Choosing a layout
# ===========================================================================================================


def _divisors(n: int) -> list[int]:
    return [k for k in range(1, n + 1) if n % k == 0]


#: Bounds of :func:`search_layouts`: virtual stages per GPU, microbatch sizes tried, and layouts evaluated.
MAX_INTERLEAVE, MAX_MICROBATCH, MAX_LAYOUTS, MAX_TOP = 64, 4096, 5_000, 1_000


def _microbatches(values: Any) -> tuple[int, ...]:
    got = check.sequence("microbatches", values, lambda n, v: check.positive_int(n, v, maximum=MAX_MICROBATCH),
                         max_len=64)
    return tuple(sorted(set(got)))


def search_layouts(cfg: TransformerShape, gpus: int, batch: int, gpu: str | specs.GPUSpec = "A100-SXM4-80GB",
                   microbatches: Sequence[int] = (1, 2, 4, 8), max_interleave: int = 4, recompute: Any = True,
                   memory_limit_bytes: float | None = None, top: int | None = 10,
                   include_infeasible: bool = False, calibrated: bool = False, **options: Any) -> list[Estimate]:
    """Every layout (t, p, d, b, v) of ``cfg`` on ``gpus`` GPUs, ranked by predicted throughput.

    Chapter: "Choosing a layout". Tensor sizes are the divisors of the head count, pipeline sizes the
    divisors of the layer count, microbatch sizes ``microbatches``, and interleaving v = 1 ... ``max_interleave``
    model chunks per GPU where the schedule allows it (p > 1, m a multiple of p, layers divisible by p v) and
    the software stack can run it; each layout is one :func:`estimate` (time and memory with the same options:
    ``recompute`` and the keyword ``options`` such as ``sequence_parallel``, ``flash_attention``,
    ``zero_stage``, ``software``, ``network``), so interleaving pays its extra pipeline sends in time and its
    1 + (p-1)/(p v) more microbatches in flight in memory. Layouts that do not fit are dropped unless
    ``include_infeasible``: "fit" is :attr:`Estimate.fits_in_memory`, the package's one capacity rule
    (:func:`ampere.memory.usable_bytes`), or ``memory_limit_bytes`` when given. Returns the ``top`` best
    (all when ``top`` is None). ``calibrated`` is passed to :func:`estimate` (the 2021 fit). At most
    :data:`MAX_LAYOUTS` layouts are evaluated (``ValueError`` beyond).
    """
    cfg = _cfg(cfg)
    calibrated = check.boolean("calibrated", calibrated)
    include_infeasible = check.boolean("include_infeasible", include_infeasible)
    check.positive_int("gpus", gpus, maximum=MAX_GPUS)
    check.positive_int("batch", batch, maximum=MAX_BATCH)
    mbs = _microbatches(microbatches)
    vmax = check.positive_int("max_interleave", max_interleave, maximum=MAX_INTERLEAVE)
    if top is not None:
        check.positive_int("top", top, maximum=MAX_TOP)
    _recompute(recompute)
    spec = specs.get(gpu)
    limit = None if memory_limit_bytes is None else check.positive("memory_limit_bytes", memory_limit_bytes)
    sw = software(options.get("software"))
    candidates = []
    for t in _divisors(cfg.heads):
        if gpus % t or cfg.vocab % t or cfg.n_kv_heads % t:
            continue
        for p in _divisors(cfg.layers):
            if gpus % (t * p):
                continue
            d = gpus // (t * p)
            for b in mbs:
                if batch % (b * d):
                    continue
                m = batch // (b * d)
                for v in range(1, vmax + 1):
                    if v > 1 and (not sw.interleave or p == 1 or m % p or cfg.layers % (p * v)):
                        continue
                    candidates.append((t, p, b, v))
    if len(candidates) > MAX_LAYOUTS:
        raise ValueError(f"{len(candidates)} layouts to evaluate; allowed: at most {MAX_LAYOUTS} (fewer microbatch "
                         f"sizes or a smaller max_interleave)")
    found: list[Estimate] = []
    for t, p, b, v in candidates:
        est = estimate(cfg, gpus, batch, t, p, b, v, recompute, spec, calibrated, **options)
        fits = est.fits_in_memory if limit is None else est.memory_bytes_per_gpu <= limit
        if fits or include_infeasible:
            found.append(est)
    found.sort(key=lambda e: -e.tflops_per_gpu)
    return found if top is None else found[:top]
