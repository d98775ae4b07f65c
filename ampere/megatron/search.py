"""Choosing a layout: :func:`search_layouts` ranks every (t, p, d, b, v) of a model on a number of GPUs
by the throughput :func:`estimate` predicts, skipping the layouts that do not fit in memory.

Chapter: *Megatron-LM: 3D parallelism predicted, validated, and run* (book/megatron.ipynb),
section "Choosing a layout". Pure: no torch, no matplotlib.
"""

from __future__ import annotations

from typing import Any, Sequence

from .. import check, specs
from ..transformer import TransformerShape
from .sizing import _cfg, _check_positive_int
from .throughput import Estimate, estimate

# ===========================================================================================================
# Choosing a layout
# ===========================================================================================================


def _divisors(n: int) -> list[int]:
    return [k for k in range(1, n + 1) if n % k == 0]


def search_layouts(cfg: TransformerShape, gpus: int, batch: int, gpu: str | specs.GPUSpec = "A100-SXM4-80GB",
                   microbatches: Sequence[int] = (1, 2, 4, 8), max_interleave: int = 4, recompute: bool = True,
                   memory_limit_bytes: float | None = None, top: int | None = 10,
                   include_infeasible: bool = False, calibrated: bool = False, **options: Any) -> list[Estimate]:
    """Every layout (t, p, d, b, v) of ``cfg`` on ``gpus`` GPUs, ranked by predicted throughput.

    Chapter: "Choosing a layout". Tensor sizes are the divisors of the head count, pipeline sizes the
    divisors of the layer count; layouts that do not divide are skipped, and so are those whose memory
    (:func:`memory_per_gpu`) exceeds ``memory_limit_bytes`` (default: the GPU's memory) unless
    ``include_infeasible``. Returns the ``top`` best :class:`Estimate` objects (all when ``top`` is None).
    ``calibrated`` is passed to :func:`estimate` (the ranking is the same; the TFLOP/s are the 2021 fit's),
    and so are the keyword ``options`` (``sequence_parallel``, ``flash_attention``, ``zero_stage``, ``network``...).
    """
    cfg = _cfg(cfg)
    calibrated = check.boolean("calibrated", calibrated)
    include_infeasible = check.boolean("include_infeasible", include_infeasible)
    _check_positive_int("gpus", gpus)
    _check_positive_int("batch", batch)
    spec = specs.get(gpu)
    limit = spec.memory_bytes if memory_limit_bytes is None else float(memory_limit_bytes)
    found: list[Estimate] = []
    for t in _divisors(cfg.heads):
        if gpus % t or cfg.vocab % t or cfg.n_kv_heads % t:
            continue
        for p in _divisors(cfg.layers):
            if gpus % (t * p):
                continue
            d = gpus // (t * p)
            for b in microbatches:
                if batch % (b * d):
                    continue
                m = batch // (b * d)
                for v in range(1, max_interleave + 1):
                    if v > 1 and (p == 1 or m % p or cfg.layers % (p * v)):
                        continue
                    est = estimate(cfg, gpus, batch, t, p, b, v, recompute, spec, calibrated, **options)
                    if (est.fits_in_memory and est.memory_bytes_per_gpu <= limit) or include_infeasible:
                        found.append(est)
    found.sort(key=lambda e: -e.tflops_per_gpu)
    return found if top is None else found[:top]
