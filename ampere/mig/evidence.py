"""Measured isolation: published measurements of MIG instances loaded at the same time, beside the model.

Chapter: *Multi-Instance GPU — one A100, seven tenants* (book/mig.ipynb), "Isolation, measured". Pure Python.
The isolation model (:mod:`ampere.mig.sim`) assumes three things about a busy GPU in MIG mode: a memory slice
keeps its bandwidth, the PCIe link is shared by the instances that copy at the same time, and the SM clock
(the power budget) is the board's. :func:`published_isolation` reads the published measurements of loaded
instances (``ampere/data/tables/mig-isolation-measured.json``) and :func:`isolation_evidence_rows` puts each
beside what the model predicts for it, so that the assumptions are checked rather than only stated.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import check, results

__all__ = ["CHANNELS", "IsolationMeasurement", "published_isolation", "isolation_evidence_rows"]

#: the shared or isolated channels of a GPU in MIG mode that a measurement can load
CHANNELS = ("pcie", "hbm", "compute")


@dataclass(frozen=True)
class IsolationMeasurement:
    """One channel of one instance, measured alone and with ``instances_busy`` instances working at once."""

    channel: str
    what: str
    gpu: str
    profile: str
    instances: int
    instances_busy: int
    alone: float
    loaded: float
    unit: str
    source: str
    where: str
    note: str = ""

    def __post_init__(self) -> None:
        check.one_of("IsolationMeasurement.channel", self.channel, CHANNELS)
        for name in ("what", "gpu", "profile", "unit", "source", "where"):
            check.string(f"IsolationMeasurement.{name}", getattr(self, name))
        check.string("IsolationMeasurement.note", self.note, allow_empty=True)
        n = check.bounded_int("IsolationMeasurement.instances", self.instances, 1, 8, why="MIG instances of one GPU")
        check.bounded_int("IsolationMeasurement.instances_busy", self.instances_busy, 1, n,
                          why="at most the instances of the GPU")
        object.__setattr__(self, "alone", check.positive("IsolationMeasurement.alone", self.alone))
        object.__setattr__(self, "loaded", check.positive("IsolationMeasurement.loaded", self.loaded))

    @property
    def ratio(self) -> float:
        """Loaded over alone: 1 is perfect isolation."""
        return self.loaded / self.alone

    def model(self, clock_scale: float = 1.0) -> float:
        """What the chapter's isolation model predicts for the loaded instance: the PCIe link split evenly
        between the instances that copy at once, the memory slice's bandwidth unchanged, the compute rate
        scaled by the SM clock (``clock_scale`` 1: the model's default, no power limit)."""
        clock_scale = check.fraction("clock_scale", clock_scale, allow_zero=False)
        if self.channel == "pcie":
            return self.alone / self.instances_busy
        if self.channel == "hbm":
            return self.alone
        return self.alone * clock_scale


def published_isolation() -> list[IsolationMeasurement]:
    """The published measurements of loaded MIG instances (``mig-isolation-measured``), one per channel.
    Chapter: *Multi-Instance GPU*, "Isolation, measured"."""
    return [IsolationMeasurement(**row) for row in results.table("mig-isolation-measured")["rows"]]


def isolation_evidence_rows(clock_scale: float = 1.0) -> list[dict[str, str]]:
    """Each published measurement of a loaded instance beside the model's prediction (with the SM clock at
    ``clock_scale`` of boost): alone, loaded, the model's loaded value and measured/model, as table rows.
    Chapter: *Multi-Instance GPU*, "Isolation, measured"."""
    from .. import views

    clock_scale = check.fraction("clock_scale", clock_scale, allow_zero=False)
    rows = []
    for m in published_isolation():
        model = m.model(clock_scale)
        rows.append({"channel": m.channel, "what": m.what, "setting": f"{m.gpu} {m.profile}, "
                     f"{m.instances_busy} of {m.instances} busy", "alone": f"{m.alone:g} {m.unit}",
                     "loaded": f"{m.loaded:g} {m.unit}", "loaded / alone": f"{m.ratio:.2f}",
                     "model, loaded": f"{model:.3g} {m.unit}", "measured / model": f"{m.loaded / model:.2f}",
                     "source": views.cite_label(m.source)})
    return rows
