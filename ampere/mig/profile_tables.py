"""MIG profile tables (data) and what one profile gives: its slices, SMs, placement rule and peaks. Pure Python.

Chapter: *Multi-Instance GPU — one A100, seven tenants* (book/mig.ipynb), sections "Slices" and "Where the
documentation contradicts itself". No torch, no matplotlib. :mod:`ampere.mig.geometry` builds placements and
layouts on these tables (and re-exports them: the old path ``ampere.mig_geometry`` is that module).

In MIG mode an A100 is cut into **8 memory slices** (each 1/8 of the HBM capacity, of the DRAM bandwidth
and of the L2, with its memory controllers) and **7 compute slices** (one GPC each, 14 SMs on the A100: 98
of the 108 SMs are usable in MIG mode). A *GPU-instance profile* such as ``3g.20gb`` takes ``3`` compute
slices and a number of memory slices (4 for ``3g.20gb``) and may start only at the memory-slice indices
the driver lists (``nvidia-smi mig -lgipp``).

The profile tables are published data: ``ampere/data/tables/mig-<gpu>.json``, one row per profile with
its bibliography key and the table it comes from (NVIDIA's MIG User Guide). The guide's tables disagree
with its own placement rules in a few rows; the rows keep what the guide prints (``doc_memory_fraction``,
``doc_l2_fraction``) next to what the placement implies (``memory_slices``) and :func:`doc_conflicts`
lists every disagreement. :func:`instance_peaks` gives the model peaks of one instance.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Mapping

from .. import check, results, specs
from ..fields import check_fields

__all__ = [
    "MEMORY_SLICES", "COMPUTE_SLICES", "Profile", "MigTable", "DocConflict", "InstancePeaks", "mig_gpus", "table",
    "profiles", "profile", "smallest_profile", "doc_conflicts", "instance_peaks", "profile_from_device_name",
]


#: Memory slices and compute slices of every MIG GPU in this module (A100, H100, H200).
MEMORY_SLICES = 8
COMPUTE_SLICES = 7

#: Which catalogue GPUs (``ampere.specs`` names) share which profile table of ``ampere/data/tables``.
_FAMILIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "A100-40GB": ("mig-a100-40gb", ("A100-SXM4-40GB", "A100-PCIE-40GB")),
    "A100-80GB": ("mig-a100-80gb", ("A100-SXM4-80GB", "A100-PCIE-80GB")),
    "H100-80GB": ("mig-h100-80gb", ("H100-SXM5-80GB",)),
    "H200-141GB": ("mig-h200-141gb", ("H200-SXM-141GB",)),
}


@dataclass(frozen=True)
class Profile:
    """One GPU-instance profile of one GPU, as the MIG User Guide and ``nvidia-smi`` print it."""
    FIELD_RULES = {"allow_empty": ("where",), "bounds": {"profile_id": (0, 255), "compute_slices": (1, 8), "memory_slices": (1, 8), "max_count": (1, 8), "sm_count": (1, 1024), "copy_engines": (0, 64), "nvdec": (0, 64), "jpeg": (0, 64), "ofa": (0, 64), "lgip_memory_gib": (0.0, 1e4)}}  # the checks of fields.check_fields


    name: str  # profile name as nvidia-smi prints it, e.g. "3g.20gb"
    profile_id: int  # GPU-instance profile ID (nvidia-smi mig -lgip "ID" column, NVML profileId)
    compute_slices: int  # the "g" of the name: compute slices (GPCs)
    memory_slices: int  # memory slices of 8 taken by the placement (the ":size" of nvidia-smi mig -lgipp)
    starts: tuple[int, ...]  # memory-slice indices where an instance may start (nvidia-smi mig -lgipp)
    max_count: int  # most instances of this profile on one GPU
    sm_count: int | None  # SMs of the instance (nvidia-smi mig -lgip); None where no citable source gives it
    copy_engines: int | None = None
    nvdec: int | None = None  # video decoders (the guide's "Hardware Units" column)
    jpeg: int | None = None  # JPEG decoders
    ofa: int | None = None  # optical-flow accelerators
    doc_memory_fraction: str | None = None  # "Fraction of Memory" as the MIG guide prints it
    doc_l2_fraction: str | None = None  # "L2 Cache Size" as the MIG guide prints it
    source: str = ""  # bib key of the row
    sm_count_source: str | None = None  # bib key of the SM count, when it has its own source
    where: str = ""  # table/page of the source
    lgip_memory_gib: float | None = None  # "Memory GiB" of the guide's nvidia-smi mig -lgip example, where printed

    def __post_init__(self) -> None:
        check_fields(self)

    @property
    def media_extensions(self) -> bool:
        """True for the ``+me`` profiles: a one-slice instance that also gets the optical-flow unit (and, on
        the A100, a video and the JPEG decoder). The GPU's single OFA goes to a ``+me`` instance or to the
        ``7g`` one (the MIG guide's "Hardware Units" column)."""
        return self.name.endswith("+me")

    @property
    def media(self) -> str | None:
        """"NVDEC/JPEG/OFA" counts as the MIG guide prints them ("5/1/1"), None when not recorded."""
        if None in (self.nvdec, self.jpeg, self.ofa):
            return None
        return f"{self.nvdec}/{self.jpeg}/{self.ofa}"

    @property
    def memory_fraction(self) -> Fraction:
        """Share of capacity, bandwidth and L2 implied by the placement size (the book's reading)."""
        return Fraction(self.memory_slices, MEMORY_SLICES)

    @property
    def compute_fraction(self) -> Fraction:
        """Share of the MIG-usable SMs (compute slices of 7), which is not the share of all SMs."""
        return Fraction(self.compute_slices, COMPUTE_SLICES)

    def memory_set(self, start: int) -> frozenset[int]:
        return frozenset(range(start, start + self.memory_slices))

    def compute_set(self, start: int) -> frozenset[int]:
        """Compute slices used when placed at ``start``: ``start .. start + g - 1``.

        The driver reports placements on the memory-slice axis only; this mapping is the book's model,
        consistent with NVIDIA's placement figure and with every documented combination (4g+3g, 3g+3g,
        7 x 1g). It implies that two placements whose memory slices are disjoint never share a compute slice.
        """
        return frozenset(range(start, start + self.compute_slices))

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> "Profile":
        """One row of a ``mig-*`` table (the JSON boundary)."""
        return cls(name=row["profile"], profile_id=row["profile_id"], compute_slices=row["compute_slices"],
                   memory_slices=row["memory_slices"], starts=tuple(row["starts"]), max_count=row["max_count"],
                   sm_count=row.get("sm_count"), copy_engines=row.get("copy_engines"), nvdec=row.get("nvdec"),
                   jpeg=row.get("jpeg"), ofa=row.get("ofa"), doc_memory_fraction=row.get("doc_memory_fraction"),
                   doc_l2_fraction=row.get("doc_l2_fraction"), source=row.get("source", ""),
                   sm_count_source=row.get("sm_count_source"), where=row.get("where", ""),
                   lgip_memory_gib=row.get("lgip_memory_gib"))


@dataclass(frozen=True)
class MigTable:
    """The MIG profile table of one GPU family (the GPUs of ``ampere.specs`` that share it are ``gpus``)."""
    FIELD_RULES = {"allow_empty": ("description",)}  # the checks of fields.check_fields


    key: str  # "A100-40GB", ...
    gpus: tuple[str, ...]  # catalogue names using this table
    profiles: tuple[Profile, ...]
    data_name: str  # the table in ampere/data/tables
    description: str = ""

    def __post_init__(self) -> None:
        check_fields(self)

    def profile(self, name: str) -> Profile:
        for p in self.profiles:
            if p.name == name:
                return p
        raise ValueError(f"profile={name!r} is not a MIG profile of {self.key}; "
                         f"allowed: {', '.join(p.name for p in self.profiles)}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.profiles)

    @property
    def mig_sms(self) -> int | None:
        """SMs usable in MIG mode = SMs of the full (7g) profile (A100: 98 of 108); None when unknown."""
        full = [p for p in self.profiles if p.compute_slices == COMPUTE_SLICES]
        return full[0].sm_count if full else None

    @property
    def sms_per_compute_slice(self) -> int | None:
        """SMs of one compute slice when every profile has ``g`` times as many (A100: 14); else None."""
        one = [p.sm_count for p in self.profiles if p.compute_slices == 1]
        if not one or one[0] is None:
            return None
        if all(p.sm_count == one[0] * p.compute_slices for p in self.profiles):
            return one[0]
        return None

    @property
    def sources(self) -> dict[str, str]:
        """What -> bibliography key, over the table's rows."""
        out = {"profiles": self.profiles[0].source}
        sm = {p.sm_count_source for p in self.profiles if p.sm_count_source}
        if sm:
            out["sm_count"] = ", ".join(sorted(sm))
        return out


_TABLES: dict[str, MigTable] = {}


def _load() -> dict[str, MigTable]:
    if not _TABLES:
        for key, (data_name, gpus) in _FAMILIES.items():
            t = results.table(data_name)
            _TABLES[key] = MigTable(key=key, gpus=gpus, profiles=tuple(Profile.from_row(r) for r in t["rows"]),
                                    data_name=data_name, description=t["description"])
    return _TABLES


def _spec_to_table() -> dict[str, str]:
    return {g: key for key, (_, gpus) in _FAMILIES.items() for g in gpus}


def mig_gpus() -> list[str]:
    """Catalogue names (``ampere.specs``) that have a MIG profile table.

    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    known = _spec_to_table()
    return [g for g in specs.names() if g in known]


def table(gpu: str | specs.GPUSpec) -> MigTable:
    """The profile table of ``gpu`` (a catalogue name or spec). Non-MIG GPUs raise ``ValueError``.

    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    spec = specs.get(gpu)
    if spec.mig_max_instances == 0:
        raise ValueError(f"gpu={spec.name!r} has no MIG (spec.mig_max_instances == 0); "
                         f"MIG GPUs in the catalogue: {', '.join(mig_gpus())}")
    known = _spec_to_table()
    if spec.name not in known:  # pragma: no cover - every MIG GPU of the catalogue has a table
        raise ValueError(f"gpu={spec.name!r} supports MIG but this module has no profile table for it; "
                         f"tables exist for: {', '.join(mig_gpus())}")
    return _load()[known[spec.name]]


def profiles(gpu: str | specs.GPUSpec) -> tuple[Profile, ...]:
    """The GPU-instance profiles of ``gpu`` in the MIG guide's order. Chapter: *Multi-Instance GPU*."""
    return table(gpu).profiles


def profile(gpu: str | specs.GPUSpec, name: str) -> Profile:
    """One profile of ``gpu`` by name; unknown names raise ``ValueError`` listing the allowed ones.

    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    t = table(gpu)
    if not isinstance(name, str) or name not in t.names:
        raise (ValueError if isinstance(name, str) else TypeError)(
            f"profile name {name!r} is not a MIG profile of {t.key}; allowed: {', '.join(t.names)}")
    return t.profile(name)


def smallest_profile(gpu: str | specs.GPUSpec) -> Profile:
    """The one-compute-slice, one-memory-slice profile without media extensions (1g.5gb on an A100 40GB,
    1g.10gb on an A100 80GB). Chapter: *Multi-Instance GPU*, "What it costs"."""
    return next(p for p in profiles(gpu) if p.compute_slices == 1 and p.memory_slices == 1
                and not p.media_extensions)


@dataclass(frozen=True)
class DocConflict:
    """A row where the MIG guide's printed fraction disagrees with the placement size."""
    FIELD_RULES = {}  # the checks of fields.check_fields


    gpu: str  # table key, e.g. "A100-40GB"
    profile: str
    column: str  # "memory" or "L2"
    printed: str  # what the guide prints
    implied_by_placement: str  # what the placement size says
    starts: str  # the placement rule, "{0,2,4,6}:2"

    def __post_init__(self) -> None:
        check_fields(self)


def doc_conflicts(gpu: str | specs.GPUSpec) -> list[DocConflict]:
    """Rows where the MIG guide's printed fraction disagrees with the placement size.

    The book resolves each conflict in favour of the placement size, which the driver enforces (an
    instance placed with size 2 occupies two memory slices, whatever a table column says).
    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    out = []
    for p in profiles(gpu):
        implied = "Full" if p.memory_slices == MEMORY_SLICES else f"{p.memory_slices}/{MEMORY_SLICES}"
        for column, printed in (("memory", p.doc_memory_fraction), ("L2", p.doc_l2_fraction)):
            if printed is None:
                continue
            value = Fraction(1) if printed == "Full" else Fraction(printed)
            if value != p.memory_fraction:
                out.append(DocConflict(gpu=table(gpu).key, profile=p.name, column=column, printed=printed,
                                       implied_by_placement=implied,
                                       starts="{" + ",".join(map(str, p.starts)) + "}" + f":{p.memory_slices}"))
    return out


@dataclass(frozen=True)
class InstancePeaks:
    """Model peaks of one instance (or of the whole GPU outside MIG mode, ``profile=None``)."""
    FIELD_RULES = {"positive": ("flops", "hbm_bytes_per_s", "memory_bytes", "l2_bytes"), "bounds": {"sms": (1, 1024)}}  # the checks of fields.check_fields


    gpu: str
    profile: str | None
    precision: str
    sms: int
    flops: float  # dense ``precision`` FLOP/s
    hbm_bytes_per_s: float
    memory_bytes: float
    l2_bytes: float

    def __post_init__(self) -> None:
        check_fields(self)

    @property
    def compute_share(self) -> float:
        """SMs of the instance / SMs of the product."""
        return self.sms / specs.get(self.gpu).sm_count

    @property
    def memory_share(self) -> float:
        return self.hbm_bytes_per_s / specs.get(self.gpu).hbm_bytes_per_s

    def __getitem__(self, key: str) -> Any:
        """Mapping-style access (``peaks["sms"]``) for callers written against the former dict."""
        if key not in self.__dataclass_fields__:
            raise KeyError(key)
        return getattr(self, key)


def instance_peaks(gpu: str | specs.GPUSpec, name: str | None = None, precision: str = "bf16") -> InstancePeaks:
    """Model peaks of one instance: SMs, dense ``precision`` FLOP/s, HBM bytes/s, memory and L2 bytes.

    ``name=None`` gives the whole GPU outside MIG mode. Compute scales with SMs; capacity, bandwidth and L2
    scale with memory slices (the MIG guide's definition of a memory slice). Memory is the nominal share of
    the datasheet capacity: the driver reports a little less (it keeps some for itself).
    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    spec = specs.get(gpu)
    precision = check.one_of("precision", precision, spec.precisions())
    if name is None:
        return InstancePeaks(spec.name, None, precision, spec.sm_count, spec.peak_flops(precision),
                             spec.hbm_bytes_per_s, spec.memory_bytes, spec.l2_bytes)
    p = profile(spec, check.one_of("name", name, [q.name for q in profiles(spec)]))
    if p.sm_count is None:
        raise ValueError(f"name={name!r} on {spec.name}: no sourced SM count, so no compute peak; "
                         f"profiles with SM counts: {', '.join(q.name for q in profiles(spec) if q.sm_count) or 'none'}")
    share = float(p.memory_fraction)
    per_sm = spec.peak_flops(precision) / spec.sm_count
    return InstancePeaks(spec.name, p.name, precision, p.sm_count, per_sm * p.sm_count,
                         spec.hbm_bytes_per_s * share, spec.memory_bytes * share, spec.l2_bytes * share)


# Suffixes: "+me" (media extensions); newer drivers also list "-me" (none), "+me.all" and "+gfx" profiles.
_MIG_NAME = re.compile(r"(?<![\w.])(\d+g\.\d+gb(?:[+-][a-z]+(?:\.[a-z]+)?)?)(?![\w])")


def profile_from_device_name(device_name: str | None) -> str | None:
    """``"NVIDIA A100-SXM4-40GB MIG 1g.5gb"`` -> ``"1g.5gb"``; None for a device that is not a MIG instance.

    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    if device_name is None:
        return None
    if not isinstance(device_name, str):
        raise TypeError(f"device_name must be a string or None; got {device_name!r}")
    if "MIG" not in device_name:
        return None
    m = _MIG_NAME.search(device_name.split("MIG", 1)[1])
    return m.group(1) if m else None
