"""The L2 working-set curve: the footprints of a sweep, the two-level model of read bandwidth versus
footprint, and the knee where a measured curve falls from its L2 plateau to its DRAM plateau.

Chapter: *HBM and the memory hierarchy* (book/hbm.ipynb), "The L2 working-set sweep".
Pure: no torch, no matplotlib (NumPy inside :func:`find_knee`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from .. import check, specs
from .common import KiB, MiB, _fields, _flag, _num, _opt, _Row

#: At most this many points in a sweep (footprints of a model or a measured curve).
MAX_SWEEP_POINTS = 100_000
#: Largest L2 size a model or a sweep is judged against (16 GiB: hundreds of times any L2 so far).
MAX_L2_BYTES = 1 << 34


def sweep_footprints(l2_bytes: int, points: int = 24, start_bytes: int = 256 * KiB, stop_factor: float = 4.0,
                     align: int = 4 * KiB) -> list[int]:
    """Log-spaced footprints from ``start_bytes`` to ``stop_factor`` x L2, multiples of ``align``, unique.

    Chapter: *HBM and the memory hierarchy*, "The L2 working-set sweep".
    """
    l2 = check.positive_int("l2_bytes", l2_bytes, maximum=MAX_L2_BYTES)
    n = check.positive_int("points", points, maximum=10_000)
    start = check.positive_int("start_bytes", start_bytes, maximum=1 << 40)
    al = check.positive_int("align", align, maximum=1 << 30)
    stop = check.positive("stop_factor", stop_factor, maximum=1e6) * l2
    if stop <= start:
        raise ValueError(f"stop_factor={stop_factor!r} x l2_bytes={l2_bytes} must exceed start_bytes={start_bytes}")
    if n == 1:
        return [max(al, round(start / al) * al)]
    ratio = (stop / start) ** (1 / (n - 1))
    return sorted({max(al, round(start * ratio**i / al) * al) for i in range(n)})


def _l2_bandwidth(s: specs.GPUSpec) -> tuple[float, str]:
    """Theoretical L2 read bandwidth, or an assumption when NVIDIA publishes no bytes/clock."""
    if s.l2_bytes_per_s is not None:
        return s.l2_bytes_per_s, f"L2 {s.l2_bytes_per_s / 1e12:.2f} TB/s: {s.l2_read_bytes_per_clk} B/clk x boost clock"
    ref = specs.get("A100-SXM4-80GB")
    per_sm_clk = ref.l2_read_bytes_per_clk / ref.sm_count
    bw = per_sm_clk * s.sm_count * s.boost_clock_hz
    return bw, (f"L2 {bw / 1e12:.2f} TB/s ASSUMED: no published bytes/clock, GA100's {per_sm_clk:.1f} B/clk per SM "
                f"scaled to {s.sm_count} SMs at {s.boost_clock_hz / 1e9:.2f} GHz")


def l2_sweep_model(footprints: Sequence[float], gpu: str | specs.GPUSpec = "A100-SXM4-80GB", *,
                   policy: str = "lru", l2_bytes: float | None = None, l2_bytes_per_s: float | None = None,
                   dram_bytes_per_s: float | None = None) -> tuple[list[float], list[str]]:
    """Model of read bandwidth versus footprint when the same footprint is read over and over.

    A fraction ``hit`` of the reads is served by L2 at ``l2_bytes_per_s``, the rest by DRAM:
    time per byte = hit / B_L2 + (1 - hit) / B_DRAM. ``policy="lru"``: an ideal least-recently-used
    cache, hit = 1 up to the capacity and 0 beyond (a cyclic sweep evicts every line before its reuse);
    ``"random"``: random replacement, hit ≈ capacity / footprint beyond it. Returns (bytes/s per footprint,
    assumptions). Chapter: *HBM and the memory hierarchy*, "The L2 working-set sweep".
    """
    s = specs.get(check.gpu("gpu", gpu))
    check.one_of("policy", policy, ("lru", "random"))
    sizes = check.sequence("footprints", footprints, lambda n, v: check.positive(n, v, maximum=1e18),
                           max_len=MAX_SWEEP_POINTS)
    cap = s.l2_bytes if l2_bytes is None else check.positive("l2_bytes", l2_bytes, maximum=MAX_L2_BYTES)
    notes = [f"L2 capacity {cap / MiB:.0f} MiB" + (" (catalogue)" if l2_bytes is None else " (given)")]
    if l2_bytes_per_s is None:
        b_l2, note = _l2_bandwidth(s)
        notes.append(note)
    else:
        b_l2 = check.positive("l2_bytes_per_s", l2_bytes_per_s, maximum=1e18)
        notes.append(f"L2 {b_l2 / 1e12:.2f} TB/s (given)")
    b_dram = (s.hbm_bytes_per_s if dram_bytes_per_s is None
              else check.positive("dram_bytes_per_s", dram_bytes_per_s, maximum=1e18))
    notes.append(f"DRAM {b_dram / 1e12:.2f} TB/s" + (" (datasheet)" if dram_bytes_per_s is None else " (given)"))
    notes.append(f"replacement policy: {policy}")
    out = []
    for f in sizes:
        hit = 1.0 if f <= cap else (0.0 if policy == "lru" else cap / f)
        out.append(1.0 / (hit / b_l2 + (1.0 - hit) / b_dram))
    return out, notes


#: The footprints whose median is the L2 plateau, as fractions of the L2 size: past the smallest
#: footprints, where blocks on one SM find data the previous block left in L1 (gpu-benches' README on the
#: H100), and within half the L2, one partition of the A100's and H100's split L2, where data read from both
#: sides can be held in both halves (the same README; nvidia2020ampere for the partitions).
L2_PLATEAU_WINDOW: tuple[float, float] = (1 / 8, 1 / 2)
#: Footprints at or beyond this multiple of the L2 size form the DRAM plateau.
DRAM_PLATEAU_FROM = 2.0


def _sweep_arrays(footprints: Sequence[float], bytes_per_s: Sequence[float]) -> tuple[Any, Any]:
    """Footprints and bandwidths as sorted float arrays, checked (1-D, same length >= 3, finite, > 0)."""
    import numpy as np

    def positive(n: str, v: Any) -> float:
        return check.positive(n, v, maximum=1e18)

    f = np.asarray(check.sequence("footprints", footprints, positive, min_len=3, max_len=MAX_SWEEP_POINTS))
    y = np.asarray(check.sequence("bytes_per_s", bytes_per_s, positive, min_len=3, max_len=MAX_SWEEP_POINTS))
    if f.shape != y.shape:
        raise ValueError(f"footprints and bytes_per_s must have the same length; got {f.size} and {y.size}")
    order = np.argsort(f)
    return f[order], y[order]


def l2_plateau(footprints: Sequence[float], bytes_per_s: Sequence[float], l2_bytes: float) -> float:
    """The L2 read bandwidth a working-set sweep shows (bytes/s): the median over the footprints inside
    :data:`L2_PLATEAU_WINDOW`, from L2/8 to L2/2.

    The book's one definition of a measured L2 bandwidth: the HBM chapter's sweep table and the kernels
    chapter's hierarchy table both use it. The smallest footprints are left out because a thread block can
    find the chunk the previous block of its SM read still in its L1 (gpu-benches' README, on the H100: the
    published H200 sweep starts at 13.5 TB/s and settles near 10 TB/s); footprints above half the L2 are
    left out because the A100's and H100's L2 is two partitions, and data held in both stops fitting one.
    With no footprint in the window, those up to L2/2 are used, else the three smallest.
    Chapter: *HBM and the memory hierarchy*, "The L2 working-set sweep".
    """
    import numpy as np

    f, y = _sweep_arrays(footprints, bytes_per_s)
    l2 = check.positive("l2_bytes", l2_bytes, maximum=MAX_L2_BYTES)
    lo, hi = L2_PLATEAU_WINDOW
    inside = (f >= lo * l2) & (f <= hi * l2)
    if not np.any(inside):
        inside = f <= hi * l2
    return float(np.median(y[inside] if np.any(inside) else y[:3]))


@dataclass(frozen=True)
class Knee(_Row):
    """Where a working-set curve falls from its L2 plateau to its DRAM plateau. See :func:`find_knee`."""

    l2_plateau_bytes_per_s: float
    dram_plateau_bytes_per_s: float
    knee_bytes: float | None  # None when no knee is visible
    ratio_to_l2: float | None
    visible: bool
    within: bool  # knee within ``tolerance`` of ``l2_bytes``
    l2_bytes: float
    tolerance: float

    def __post_init__(self) -> None:
        _fields(self, l2_plateau_bytes_per_s=_num(strict=True), dram_plateau_bytes_per_s=_num(strict=True),
                knee_bytes=_opt(_num(strict=True)), ratio_to_l2=_opt(_num(strict=True)), visible=_flag, within=_flag,
                l2_bytes=_num(strict=True), tolerance=_num(0.0, 10.0, strict=True))
        if self.visible != (self.knee_bytes is not None) or (self.knee_bytes is None) != (self.ratio_to_l2 is None):
            raise ValueError("Knee.visible must be True exactly when Knee.knee_bytes and Knee.ratio_to_l2 are given")


def find_knee(footprints: Sequence[float], bytes_per_s: Sequence[float], l2_bytes: float,
              tolerance: float = 0.25) -> Knee:
    """Where a working-set curve falls from its L2 plateau to its DRAM plateau.

    The L2 plateau is :func:`l2_plateau` (the median over L2/8 .. L2/2), the DRAM plateau the median of the
    footprints >= 2 x L2; the knee is the footprint where the curve first crosses their mean (interpolated
    in log footprint). ``visible`` needs the L2 plateau to be at least 1.3x the DRAM plateau; ``within`` says
    whether the knee lies within ``tolerance`` of ``l2_bytes``. Chapter: *HBM and the memory hierarchy*.
    """
    import numpy as np

    f, y = _sweep_arrays(footprints, bytes_per_s)
    l2 = check.positive("l2_bytes", l2_bytes, maximum=MAX_L2_BYTES)
    tol = check.positive("tolerance", tolerance, maximum=10.0)
    high = y[f >= DRAM_PLATEAU_FROM * l2] if np.any(f >= DRAM_PLATEAU_FROM * l2) else y[-2:]
    top, dram = l2_plateau(f, y, l2), float(np.median(high))
    if top < 1.3 * dram:
        return Knee(top, dram, None, None, False, False, l2, tol)
    mid = 0.5 * (top + dram)
    for i in range(1, f.size):
        if y[i] < mid <= y[i - 1]:
            t = (y[i - 1] - mid) / (y[i - 1] - y[i])
            knee = float(np.exp(np.log(f[i - 1]) + t * (np.log(f[i]) - np.log(f[i - 1]))))
            return Knee(top, dram, knee, knee / l2, True, abs(knee / l2 - 1) <= tol, l2, tol)
    return Knee(top, dram, None, None, False, False, l2, tol)
