"""Published measurements the chapter reads from ``ampere/data`` (never typed here): the ZeRO paper's
Figure 1 (``rajbhandari2020zero``), STREAM-type bandwidth and L2 working-set sweeps from gpu-benches
(``ernstgpubenches``).

Chapter: *HBM and the memory hierarchy* (book/hbm.ipynb), "Training a model", "Measured bandwidth" and "The
L2 working-set sweep". Pure: no torch, no matplotlib.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping

from .. import check
from .common import KiB, _fields, _int, _num, _text
from .l2_model import MAX_L2_BYTES, MAX_SWEEP_POINTS, Knee, find_knee, l2_plateau


@dataclass(frozen=True)
class ZeroFigureRow:
    """One bar of the ZeRO paper's Figure 1: per-GPU model-state memory for one ZeRO stage."""

    stage: int
    label: str
    params: float
    data_parallel: int
    per_gpu_gb: float
    source: str
    where: str

    def __post_init__(self) -> None:
        _fields(self, stage=_int(0, 3), label=_text(), params=_num(strict=True), data_parallel=_int(1, 1 << 30),
                per_gpu_gb=_num(strict=True), source=_text(), where=_text(allow_empty=True))


def zero_figure1() -> list[ZeroFigureRow]:
    """The ZeRO paper's Figure 1 (7.5B parameters, 64 GPUs, K = 12), from ``ampere/data/tables/zero-figure1.json``.

    A validation target of :func:`ampere.memory.zero_bytes_per_param`, never an input.
    Chapter: *HBM and the memory hierarchy*, "Training a model".
    """
    from .. import results

    t = results.table("zero-figure1")
    return [ZeroFigureRow(int(r["stage"]), r["label"], float(r["params"]), int(r["data_parallel"]),
                          float(r["per_gpu_gb"]), t["source"], r["where"]) for r in t["rows"]]


#: The STREAM kernels of gpu-benches and the names of ours that do the same traffic.
_STREAM_FIGURES: Mapping[str, str] = MappingProxyType({
    "write": "write_gb_per_s", "read": "read_gb_per_s", "scale": "scale_gb_per_s", "triad": "triad_gb_per_s"})


def published_stream(gpu: str | None = None) -> list[Any]:
    """Published STREAM-type bandwidth records (``benchmark="stream"``), optionally of one ``gpu``.

    Each is an :class:`ampere.results.Record` with figures ``write_gb_per_s``, ``read_gb_per_s``,
    ``scale_gb_per_s`` and ``triad_gb_per_s`` (bytes of every load and store stream per second).
    Chapter: *HBM and the memory hierarchy*, "Measured bandwidth".
    """
    from .. import results

    return results.records(benchmark="stream", gpu=gpu, kind="published")


@dataclass(frozen=True)
class L2Sweep:
    """A working-set sweep as arrays: footprints (bytes), read bandwidth (bytes/s), the L2 size it is judged
    against, and where it comes from (the :class:`ampere.results.Record`, or None for a fresh measurement)."""

    gpu: str
    footprints: tuple[float, ...]
    bytes_per_s: tuple[float, ...]
    l2_bytes: float
    label: str
    record: Any = None

    def __post_init__(self) -> None:
        from .. import results

        def points(name: str, v: Any) -> tuple[float, ...]:
            return tuple(check.sequence(name, v, lambda n, x: check.positive(n, x, maximum=1e18), min_len=3,
                                        max_len=MAX_SWEEP_POINTS))

        _fields(self, gpu=_text(), footprints=points, bytes_per_s=points, l2_bytes=_num(strict=True, hi=MAX_L2_BYTES),
                label=_text(allow_empty=True))
        if len(self.footprints) != len(self.bytes_per_s):
            raise ValueError(f"L2Sweep.footprints and L2Sweep.bytes_per_s must have the same length; got "
                             f"{len(self.footprints)} and {len(self.bytes_per_s)}")
        if self.record is not None and not isinstance(self.record, results.Record):
            raise TypeError(f"L2Sweep.record must be an ampere.results.Record or None, got {type(self.record).__name__}")

    def knee(self, tolerance: float = 0.25) -> Knee:
        """Where this sweep falls from its L2 plateau to its DRAM plateau (:func:`~ampere.hbm.find_knee`)."""
        return find_knee(self.footprints, self.bytes_per_s, self.l2_bytes, tolerance)

    def plateau(self) -> float:
        """The L2 read bandwidth the sweep shows, bytes/s (:func:`~ampere.hbm.l2_plateau`)."""
        return l2_plateau(self.footprints, self.bytes_per_s, self.l2_bytes)


def _sweep_from_record(rec: Any) -> L2Sweep:
    from .. import views

    f = [k * KiB for k in rec.params["footprint_kib"]]
    y = [g * 1e9 for g in rec.figure("read_gb_per_s")]
    return L2Sweep(rec.gpu, tuple(f), tuple(y), float(rec.params["l2_bytes"]), views.source_text(rec), rec)


def published_l2_sweeps(gpu: str | None = None) -> list[L2Sweep]:
    """Every published L2 working-set sweep (``benchmark="l2-sweep"``), optionally of one ``gpu``.

    Chapter: *HBM and the memory hierarchy*, "The L2 working-set sweep".
    """
    from .. import results

    return [_sweep_from_record(r) for r in results.records(benchmark="l2-sweep", gpu=gpu, kind="published")]


def published_l2_sweep(gpu: str) -> L2Sweep:
    """The published sweep of ``gpu`` (a catalogue or device name); ``ValueError`` lists those available.

    Chapter: *HBM and the memory hierarchy*, "The L2 working-set sweep".
    """
    check.string("gpu", gpu, max_len=200)
    found = published_l2_sweeps(gpu)
    if not found:
        have = sorted({s.gpu for s in published_l2_sweeps()})
        raise ValueError(f"gpu={gpu!r} has no published L2 sweep; available: {', '.join(have)}")
    return found[0]


def published_l2_plateau(gpu: str) -> tuple[float, L2Sweep] | None:
    """(bytes/s, sweep): the L2 read bandwidth of the published sweep of ``gpu`` by the book's one rule
    (:func:`~ampere.hbm.l2_plateau`), or None when no sweep of ``gpu`` is published. The kernels chapter's
    hierarchy table shows this figure too. Chapter: *HBM and the memory hierarchy*, "The L2 working-set sweep".
    """
    check.string("gpu", gpu, max_len=200)
    found = published_l2_sweeps(gpu)
    return (found[0].plateau(), found[0]) if found else None
