"""The tile and wave staircase in one call (:func:`show_staircase`): the model of ``ampere.gemm``, and on a CUDA
GPU the same sweep measured with torch matmuls, drawn together with a table of the wave edges.

Chapter: *Architecture of the GA100* (book/architecture.ipynb), "Tiles, waves and alignment". Measures through
:mod:`ampere.architecture.measure`, draws through :mod:`ampere.architecture.figures_execution` (matplotlib
imported inside the function).
"""

from __future__ import annotations

from typing import Any, Sequence

from .. import check, specs
from .figures_execution import plot_staircase
from .measure import staircase_sweep


def staircase_sizes(lo: int = 128, hi: int = 5120, step: int = 64) -> list[int]:
    """The n of the staircase sweep: ``lo`` to ``hi`` by ``step`` (at most 2,000 sizes). Chapter: *Architecture
    of the GA100*, "Tiles, waves and alignment"."""
    lo, hi, step = (check.positive_int(k, v, maximum=65536) for k, v in (("lo", lo), ("hi", hi), ("step", step)))
    if hi < lo or (hi - lo) // step + 1 > 2000:
        raise ValueError(f"lo={lo}, hi={hi}, step={step}: need lo <= hi and at most 2,000 sizes")
    return list(range(lo, hi + 1, step))


def show_staircase(info: Any, *, measure: bool | None = None, m: int = 1536, k: int = 4096,
                   ns: Sequence[int] | None = None, precision: str = "fp16") -> dict[str, Any]:
    """The staircase figure: modelled TFLOP/s of C[m,n] = A[m,k] B[k,n] against n for the GPU at hand (its
    catalogue spec, or the A100-SXM4-80GB without one), and on a CUDA GPU (or when ``measure`` says so) the
    same shapes timed with :func:`staircase_sweep`. Returns ``{"gpu", "model", "measured"}``.

    Chapter: *Architecture of the GA100*, "Tiles, waves and alignment".
    """
    import matplotlib.pyplot as plt

    from .. import plots

    run = getattr(info, "backend", "cpu") == "cuda" if measure is None else check.boolean("measure", measure)
    spec = getattr(info, "spec", None) if getattr(info, "backend", "cpu") == "cuda" else None
    gpu = spec.name if isinstance(spec, specs.GPUSpec) else "A100-SXM4-80GB"
    ns = list(ns) if ns is not None else staircase_sizes()
    measured = staircase_sweep(ns, m, k, precision, info=info) if run else []
    fig, ax = plots.figure("full")
    model = plot_staircase(ax, gpu, ns, m, k, precision, measured=measured,
                           measured_label=f"measured here ({getattr(info, 'name', 'this GPU')})")
    ax.set_title(f"{gpu}: the tile and wave staircase", fontsize=10)
    fig.tight_layout()
    plt.show()
    return {"gpu": gpu, "model": model, "measured": measured}
