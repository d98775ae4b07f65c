"""L2 residency control: the HBM traffic of a reused working set beside streaming traffic, with and without
a persisting L2 window (model).

Chapter: *Programming the A100's SM* (``book/kernels.ipynb``), "L2 residency control".
Pure: no torch, no triton, no matplotlib.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import check, specs
from .rules import _fields, _gpu, _int, _num


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

    def __post_init__(self) -> None:
        _fields(self, gpu=_gpu, working_set_bytes=_num(strict=True), streaming_bytes=_num(), carveout_bytes=_num(),
                passes=_int(1, MAX_PASSES), hbm_bytes_default=_num(strict=True), hbm_bytes_persisting=_num(strict=True))

    @property
    def traffic_ratio(self) -> float:
        """HBM bytes without the window / with it (> 1: the window helps)."""
        return self.hbm_bytes_default / self.hbm_bytes_persisting


#: Bounds of :func:`l2_persistence`: passes over the working set, and any byte count (1 PB).
MAX_PASSES = 1 << 30
MAX_BYTES = 1e15


def l2_persistence(gpu: str | specs.GPUSpec, working_set_bytes: float, streaming_bytes: float,
                   carveout_bytes: float, passes: int = 10) -> L2Persistence:
    """:class:`L2Persistence` of a reuse pattern on ``gpu``: ``passes`` over ``working_set_bytes`` reused, each
    with ``streaming_bytes`` read once (0: no stream), and a persisting window of ``carveout_bytes`` (0: no
    window; at most the L2). Chapter: *Programming the A100's SM*, "L2 residency control"."""
    spec = specs.get(gpu)
    w = check.positive("working_set_bytes", working_set_bytes, maximum=MAX_BYTES)
    s = check.nonneg("streaming_bytes", streaming_bytes, maximum=MAX_BYTES)
    c = check.nonneg("carveout_bytes", carveout_bytes, maximum=spec.l2_bytes)
    n = check.positive_int("passes", passes, maximum=MAX_PASSES)
    l2 = float(spec.l2_bytes)
    first = w + s
    default_rest = s if w + s <= l2 else w + s
    kept = min(w, c)
    rest = w - kept  # the part of the working set outside the window competes with the stream for L2 - c
    persisting_rest = s if rest + s <= l2 - c else s + rest
    return L2Persistence(gpu=spec.name, working_set_bytes=w, streaming_bytes=s, carveout_bytes=c, passes=n,
                         hbm_bytes_default=first + (n - 1) * default_rest,
                         hbm_bytes_persisting=first + (n - 1) * persisting_rest)
