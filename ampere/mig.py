"""Multi-Instance GPU (MIG): profiles, placements, layouts, isolation in a model, NVML, and cost.

Chapter: *Multi-Instance GPU — one A100, seven tenants* (book/mig.ipynb).

The geometry. In MIG mode an A100 is cut into **8 memory slices** (each 1/8 of the HBM capacity, of the
DRAM bandwidth and of the L2, with its memory controllers) and **7 compute slices** (one GPC each, 14 SMs
on the A100: 98 of the 108 SMs are usable in MIG mode). A *GPU-instance profile* such as ``3g.20gb`` takes
``3`` compute slices and a number of memory slices (4 for ``3g.20gb``) and may start only at the
memory-slice indices the driver lists (``nvidia-smi mig -lgipp``). A *layout* is a list of
``(profile_name, start_slot)`` pairs; :func:`validate` checks it and :func:`enumerate_layouts` lists every
*maximal* layout (one to which no further instance can be added).

Facts are data here, each table with its citation keys (book/references.bib). Three sources disagree in
small ways; the module keeps what the documents print (``doc_memory_fraction``, ``doc_l2_fraction``)
next to what the placement geometry implies (``memory_slices``) so the chapter can show the conflict.

The rest of the module: a discrete-event model of seven inference tenants sharing one GPU under MIG,
time-slicing and MPS (:func:`simulate`, :func:`isolation_study`); a read-only NVML report that never
raises (:func:`nvml_mig_report`); a small measurement of the instance this process runs on
(:func:`measure_instance`, ``python -m ampere bench mig``); and the cost of serving seven small models
(:func:`serving_costs`) with dated cloud prices from the seed articles.
"""

from __future__ import annotations

import itertools
import math
import os
import re
from collections import deque
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Any, Iterable, Mapping, Sequence

from . import specs

__all__ = [
    # geometry
    "Profile", "MigTable", "Placement", "MEMORY_SLICES", "COMPUTE_SLICES", "mig_gpus", "table", "profiles",
    "profile", "placement", "validate", "enumerate_layouts", "place", "addable", "LayoutUsage", "usage",
    "format_layout", "layout_maps", "layouts_table", "layout_rows", "profiles_table", "doc_conflicts", "plot_layout",
    "plot_layouts", "plot_layout_census", "instance_peaks", "profile_from_device_name",
    # isolation model
    "Workload", "SimConfig", "TenantStats", "SimResult", "MODES", "SCENARIOS", "default_tenants", "simulate",
    "isolation_study", "service_time", "plot_isolation",
    # NVML
    "MigInstance", "MigGpu", "MigReport", "nvml_mig_report", "compare_with_driver",
    # measurement
    "measure_instance", "bench_main",
    # cost
    "PriceQuote", "CLOUD_PRICES", "ServingOption", "serving_costs", "hours_for_budget",
]

#: Memory slices and compute slices of every MIG GPU in this module (A100, H100, H200).
MEMORY_SLICES = 8
COMPUTE_SLICES = 7


# ---------------------------------------------------------------------------------------------------------
# The profile tables (data, with sources)
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Profile:
    """One GPU-instance profile of one GPU, as data. See ``MigTable.sources`` for where each field is from."""

    name: str  # profile name as nvidia-smi prints it, e.g. "3g.20gb"
    profile_id: int  # GPU-instance profile ID (nvidia-smi mig -lgip "ID" column, NVML profileId)
    compute_slices: int  # the "g" of the name: compute slices (GPCs)
    memory_slices: int  # memory slices of 8 taken by the placement (the ":size" of nvidia-smi mig -lgipp)
    starts: tuple[int, ...]  # memory-slice indices where an instance may start (nvidia-smi mig -lgipp)
    max_count: int  # most instances of this profile on one GPU
    sm_count: int | None  # SMs of the instance (nvidia-smi mig -lgip); None where no citable source gives it
    copy_engines: int | None = None  # copy engines (None: not recorded)
    media: str | None = None  # "NVDEC/JPEG/OFA" counts as the MIG guide prints them (None: not recorded)
    doc_memory_fraction: str | None = None  # "Fraction of Memory" as the MIG guide prints it
    doc_l2_fraction: str | None = None  # "L2 Cache Size" as the MIG guide prints it

    @property
    def media_extensions(self) -> bool:
        """True for the ``+me`` profiles, which take the GPU's single JPEG decoder and optical-flow unit."""
        return self.name.endswith("+me")

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


@dataclass(frozen=True)
class MigTable:
    """The MIG profile table of one GPU family (the GPUs of ``ampere.specs`` that share it are ``gpus``)."""

    key: str  # "A100-40GB", ...
    gpus: tuple[str, ...]  # catalogue names using this table
    profiles: tuple[Profile, ...]
    sms_per_compute_slice: int | None  # SMs in one compute slice (A100: 14)
    mig_sms: int | None  # SMs usable in MIG mode = SMs of the 7g profile (A100: 98 of 108)
    sources: Mapping[str, str]  # what -> bib key
    notes: tuple[str, ...] = ()

    def profile(self, name: str) -> Profile:
        for p in self.profiles:
            if p.name == name:
                return p
        raise ValueError(f"profile={name!r} is not a MIG profile of {self.key}; "
                         f"allowed: {', '.join(p.name for p in self.profiles)}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.profiles)


# The seven GPU-instance shapes shared by A100, H100 and H200: (compute slices, memory slices, allowed
# starts, max count, profile ID). Placements: `nvidia-smi mig -lgipp` as printed in the MIG User Guide
# (getting-started-with-mig.html) for the A100; max counts: MIG User Guide tables and NVIDIA mig-parted's
# default configuration (all-<profile> entries).
_SHAPES = (
    (1, 1, (0, 1, 2, 3, 4, 5, 6), 7, 19),  # 1g, one memory slice
    (1, 1, (0, 1, 2, 3, 4, 5, 6), 1, 20),  # 1g +me (media extensions)
    (1, 2, (0, 2, 4, 6), 4, 15),  # 1g, two memory slices
    (2, 2, (0, 2, 4), 3, 14),
    (3, 4, (0, 4), 2, 9),
    (4, 4, (0,), 1, 5),
    (7, 8, (0,), 1, 0),
)


def _build(names: Sequence[str], sms: Sequence[int | None], copy_engines: Sequence[int | None],
           media: Sequence[str | None], doc_mem: Sequence[str | None],
           doc_l2: Sequence[str | None]) -> tuple[Profile, ...]:
    out = []
    for i, (c, m, starts, count, pid) in enumerate(_SHAPES):
        out.append(Profile(name=names[i], profile_id=pid, compute_slices=c, memory_slices=m, starts=starts,
                           max_count=count, sm_count=sms[i], copy_engines=copy_engines[i], media=media[i],
                           doc_memory_fraction=doc_mem[i], doc_l2_fraction=doc_l2[i]))
    return tuple(out)


# MIG User Guide, "Supported MIG Profiles", A100-SXM4-40GB table (R580). Note the 1g.10gb row: the guide
# prints 1/8 of memory and 1/8 of L2 although the profile is named 10gb and is placed with size 2.
_A100_DOC_MEM = ("1/8", "1/8", "1/8", "2/8", "4/8", "4/8", "Full")
_A100_DOC_L2 = ("1/8", "1/8", "1/8", "2/8", "4/8", "4/8", "Full")
_A100_SMS = (14, 14, 14, 28, 42, 56, 98)  # nvidia-smi mig -lgip on A100 (MIG guide getting-started page)
_A100_CE = (1, 1, 1, 2, 3, 4, 7)
_A100_MEDIA = ("0/0/0", "1/1/1", "1/0/0", "1/0/0", "2/0/0", "2/0/0", "5/1/1")

_A100_SOURCES = {"profiles": "nvidiamig", "placements": "nvidiamig", "sm_count": "nvidiamig",
                 "max_count": "nvidiamigparted", "memory_slice": "nvidiamig"}

_TABLES: dict[str, MigTable] = {}


def _add_table(t: MigTable) -> None:
    _TABLES[t.key] = t


_add_table(MigTable(
    key="A100-40GB", gpus=("A100-SXM4-40GB", "A100-PCIE-40GB"),
    profiles=_build(("1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"),
                    _A100_SMS, _A100_CE, _A100_MEDIA, _A100_DOC_MEM, _A100_DOC_L2),
    sms_per_compute_slice=14, mig_sms=98, sources=_A100_SOURCES,
    notes=("The guide's table prints 1/8 of memory and 1/8 of L2 for 1g.10gb; its name, its placement size "
           "({0,2,4,6}:2) and its maximum count (4) all say 2/8. The book uses 2/8.",
           "Before driver R510, 4g.20gb + 3g.20gb on one GPU was not supported; it is now.")))
_add_table(MigTable(
    key="A100-80GB", gpus=("A100-SXM4-80GB", "A100-PCIE-80GB"),
    profiles=_build(("1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"),
                    _A100_SMS, _A100_CE, _A100_MEDIA, _A100_DOC_MEM, _A100_DOC_L2),
    sms_per_compute_slice=14, mig_sms=98, sources=_A100_SOURCES,
    notes=("The guide prints only the 40GB table and says the 80GB names scale with memory; the fractions "
           "(including the 1/8 printed for the two-slice 1g profile) are inherited from that table.",
           "'1g.10gb' names the one-slice profile here (ID 19) but the two-slice profile on the 40GB card "
           "(ID 15): a profile name means nothing without the GPU.")))
# H100 80GB: fractions and names from the MIG guide's H100 table (1g.20gb printed as 1/4 of memory), max
# counts from mig-parted, SM counts of 1g..3g from `nvidia-smi mig -lgip` as printed in Google Cloud's
# documentation. The 4g and 7g SM counts are left unknown: we found them only in uncitable transcripts.
_add_table(MigTable(
    key="H100-80GB", gpus=("H100-SXM5-80GB",),
    profiles=_build(("1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"),
                    (16, 16, 26, 32, 60, None, None), (1, 1, 1, 2, 3, None, None), (None,) * 7,
                    ("1/8", "1/8", "1/4", "2/8", "4/8", "4/8", "Full"), (None,) * 7),
    sms_per_compute_slice=None, mig_sms=None,
    sources={"profiles": "nvidiamig", "placements": "nvidiamig", "max_count": "nvidiamigparted",
             "sm_count": "googlecloudgpuvm"},
    notes=("SM counts do not follow one-slice-one-GPC here: 1g.20gb reports 26 SMs, 2g.20gb 32, 3g.40gb 60.",
           "Placements are taken to be the A100's (same profile IDs and counts); check them on a real GPU with "
           "nvml_mig_report().")))
# H200 141GB: the MIG guide's H200 table (names, fractions, L2, counts); SM counts not in a citable source.
_add_table(MigTable(
    key="H200-141GB", gpus=("H200-SXM-141GB",),
    profiles=_build(("1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"),
                    (None,) * 7, (1, 1, 1, 2, 3, 4, 8), ("1/1/0", "1/1/1", "1/1/0", "2/2/0", "3/3/0", "4/4/0",
                                                        "7/7/1"),
                    ("1/8", "1/8", "1/4", "2/8", "4/8", "4/8", "Full"),
                    ("1/8", "1/8", "1/8", "2/8", "4/8", "4/8", "Full")),
    sms_per_compute_slice=None, mig_sms=None,
    sources={"profiles": "nvidiamig", "placements": "nvidiamig", "max_count": "nvidiamigparted"},
    notes=("The guide prints 1/4 of memory but 1/8 of L2 for 1g.35gb, although L2 belongs to memory slices.",
           "Placements are taken to be the A100's (same profile IDs and counts); check them on a real GPU with "
           "nvml_mig_report().")))

_SPEC_TO_TABLE = {g: t.key for t in _TABLES.values() for g in t.gpus}


def mig_gpus() -> list[str]:
    """Catalogue names (``ampere.specs``) that have a MIG profile table here.

    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    return [g for g in specs.names() if g in _SPEC_TO_TABLE]


def table(gpu: str | specs.GPUSpec) -> MigTable:
    """The profile table of ``gpu`` (a catalogue name or spec). Non-MIG GPUs raise ``ValueError``.

    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    spec = specs.get(gpu)
    if spec.mig_max_instances == 0:
        raise ValueError(f"gpu={spec.name!r} has no MIG (spec.mig_max_instances == 0); "
                         f"MIG GPUs in the catalogue: {', '.join(mig_gpus())}")
    if spec.name not in _SPEC_TO_TABLE:  # pragma: no cover - every MIG GPU of the catalogue has a table
        raise ValueError(f"gpu={spec.name!r} supports MIG but this module has no profile table for it; "
                         f"tables exist for: {', '.join(mig_gpus())}")
    return _TABLES[_SPEC_TO_TABLE[spec.name]]


def profiles(gpu: str | specs.GPUSpec) -> tuple[Profile, ...]:
    """The GPU-instance profiles of ``gpu`` in the MIG guide's order. Chapter: *Multi-Instance GPU*."""
    return table(gpu).profiles


def profile(gpu: str | specs.GPUSpec, name: str) -> Profile:
    """One profile of ``gpu`` by name; unknown names raise ``ValueError`` listing the allowed ones.

    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    return table(gpu).profile(name)


# ---------------------------------------------------------------------------------------------------------
# Placements and layouts
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Placement:
    """One GPU instance: a profile placed at a start slot, with the slices it takes."""

    profile: Profile
    start: int
    memory: frozenset[int]
    compute: frozenset[int]

    @property
    def name(self) -> str:
        return self.profile.name

    @property
    def key(self) -> tuple[str, int]:
        return (self.profile.name, self.start)

    def __str__(self) -> str:
        return f"{self.profile.name}@{self.start}"


def placement(gpu: str | specs.GPUSpec, name: str, start: int) -> Placement:
    """Place profile ``name`` at memory slot ``start``; a start the driver does not allow raises ``ValueError``.

    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    p = profile(gpu, name)
    if isinstance(start, bool) or not isinstance(start, int):
        raise ValueError(f"start={start!r} for {name} must be an integer memory-slice index; "
                         f"allowed starts: {', '.join(map(str, p.starts))}")
    if start not in p.starts:
        raise ValueError(f"start={start} is not allowed for {name} on {table(gpu).key}; "
                         f"allowed starts: {', '.join(map(str, p.starts))}")
    return Placement(p, start, p.memory_set(start), p.compute_set(start))


def _parse_entry(gpu: str | specs.GPUSpec, i: int, entry: Any) -> Placement:
    if isinstance(entry, Placement):
        entry = entry.key
    if isinstance(entry, (str, bytes)) or not isinstance(entry, Sequence) or len(entry) != 2:
        raise ValueError(f"layout[{i}]={entry!r} must be a (profile_name, start_slot) pair")
    name, start = entry
    if not isinstance(name, str):
        raise ValueError(f"layout[{i}]: profile name {name!r} must be a string; "
                         f"allowed: {', '.join(table(gpu).names)}")
    try:
        return placement(gpu, name, start)
    except ValueError as exc:
        raise ValueError(f"layout[{i}]: {exc}") from None


def _sorted_keys(placements: Iterable[Placement]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted((p.key for p in placements), key=lambda k: (k[1], k[0])))


def validate(gpu: str | specs.GPUSpec, layout: Iterable[Any]) -> tuple[tuple[str, int], ...]:
    """Check a MIG layout and return it normalised (sorted by start slot).

    ``layout`` is a list of ``(profile_name, start_slot)`` pairs, start slots being memory-slice indices as
    ``nvidia-smi mig -lgipp`` prints them. Raises ``ValueError`` naming the first conflict: a malformed
    entry, an unknown profile, a start the profile does not allow, more instances of a profile than the
    GPU allows, or two instances sharing memory slices (and, where they do, compute slices).
    Chapter: *Multi-Instance GPU*, section "Layouts".
    """
    t = table(gpu)
    if isinstance(layout, (str, bytes)) or not isinstance(layout, Iterable):
        raise ValueError(f"layout={layout!r} must be a list of (profile_name, start_slot) pairs")
    placed = [_parse_entry(gpu, i, e) for i, e in enumerate(layout)]
    counts: dict[str, int] = {}
    for p in placed:
        counts[p.name] = counts.get(p.name, 0) + 1
    for name, n in counts.items():
        limit = t.profile(name).max_count
        if n > limit:
            raise ValueError(f"layout has {n} instances of {name}; at most {limit} allowed on {t.key}")
    for (i, a), (j, b) in itertools.combinations(enumerate(placed), 2):
        mem = sorted(a.memory & b.memory)
        if mem:
            comp = sorted(a.compute & b.compute)
            where = f"memory slices {mem}" + (f" and compute slices {comp}" if comp else "")
            raise ValueError(f"layout[{i}] {a} and layout[{j}] {b} overlap in {where}")
        comp = sorted(a.compute & b.compute)
        if comp:  # pragma: no cover - impossible with the slot model (compute set within memory set)
            raise ValueError(f"layout[{i}] {a} and layout[{j}] {b} overlap in compute slices {comp}")
    return _sorted_keys(placed)


def _candidates(gpu: str | specs.GPUSpec, names: Sequence[str] | None) -> list[Placement]:
    t = table(gpu)
    if names is None:
        names = t.names
    else:
        if isinstance(names, str) or not isinstance(names, Iterable):
            raise ValueError(f"profiles={names!r} must be a list of profile names of {t.key}; "
                             f"allowed: {', '.join(t.names)}")
        names = list(dict.fromkeys(names))
        if not names:
            raise ValueError(f"profiles=[] is empty; give at least one of: {', '.join(t.names)}")
        for n in names:
            t.profile(n)  # raises for unknown names
    return [placement(gpu, n, s) for n in names for s in t.profile(n).starts]


def addable(gpu: str | specs.GPUSpec, layout: Iterable[Any],
            profiles: Sequence[str] | None = None) -> list[tuple[str, int]]:
    """Every ``(profile, start)`` that could be added to a valid ``layout`` (limited to ``profiles``).

    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    current = [placement(gpu, n, s) for n, s in validate(gpu, layout)]
    used_mem = frozenset().union(*(p.memory for p in current)) if current else frozenset()
    used_comp = frozenset().union(*(p.compute for p in current)) if current else frozenset()
    counts: dict[str, int] = {}
    for p in current:
        counts[p.name] = counts.get(p.name, 0) + 1
    out = []
    for c in _candidates(gpu, profiles):
        if c.memory & used_mem or c.compute & used_comp:
            continue
        if counts.get(c.name, 0) >= c.profile.max_count:
            continue
        out.append(c.key)
    return out


def enumerate_layouts(gpu: str | specs.GPUSpec,
                      profiles: Sequence[str] | None = None) -> list[tuple[tuple[str, int], ...]]:
    """Every maximal layout of ``gpu`` built from ``profiles`` (default: all of the GPU's profiles).

    A layout is maximal when no further instance of the allowed profiles can be added (every such
    addition fails :func:`validate`). Each layout is a tuple of ``(profile_name, start)`` sorted by start;
    the list is sorted. Chapter: *Multi-Instance GPU*, section "Every way to cut an A100".
    """
    cands = _candidates(gpu, profiles)
    mem_mask = [sum(1 << s for s in c.memory) for c in cands]
    comp_mask = [sum(1 << s for s in c.compute) for c in cands]
    names = [c.name for c in cands]
    limit = {c.name: c.profile.max_count for c in cands}
    found: list[tuple[tuple[str, int], ...]] = []

    def fits(k: int, mem: int, comp: int, counts: dict[str, int]) -> bool:
        return not (mem_mask[k] & mem or comp_mask[k] & comp) and counts.get(names[k], 0) < limit[names[k]]

    def dfs(first: int, chosen: list[int], mem: int, comp: int, counts: dict[str, int]) -> None:
        for k in range(first, len(cands)):
            if fits(k, mem, comp, counts):
                counts[names[k]] = counts.get(names[k], 0) + 1
                chosen.append(k)
                dfs(k + 1, chosen, mem | mem_mask[k], comp | comp_mask[k], counts)
                chosen.pop()
                counts[names[k]] -= 1
        # maximal: nothing at all (not only after `first`) can be added
        if chosen and not any(fits(k, mem, comp, counts) for k in range(len(cands))):
            found.append(_sorted_keys(cands[k] for k in chosen))

    dfs(0, [], 0, 0, {})
    return sorted(set(found), key=lambda lay: ([(s, n) for n, s in lay], len(lay)))


def place(gpu: str | specs.GPUSpec, names: Sequence[str]) -> tuple[tuple[str, int], ...]:
    """Find start slots for a multiset of profiles (what ``nvidia-smi mig -cgi a,b,c`` must do).

    Returns a valid layout, or raises ``ValueError`` when the profiles cannot coexist on ``gpu``.
    Searches exhaustively (the space is tiny), biggest instances first.
    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    t = table(gpu)
    if isinstance(names, str) or not isinstance(names, Iterable):
        raise ValueError(f"names={names!r} must be a list of profile names of {t.key}")
    items = sorted((t.profile(n) for n in names), key=lambda p: (-p.memory_slices, -p.compute_slices, p.name))
    fail = ValueError(f"profiles {list(names)} cannot coexist on {t.key}: no placement of them is valid")
    if (sum(p.memory_slices for p in items) > MEMORY_SLICES or sum(p.compute_slices for p in items) > COMPUTE_SLICES
            or any(sum(q.name == p.name for q in items) > p.max_count for p in items)):
        raise fail
    chosen: list[Placement] = []

    def search(i: int) -> bool:
        if i == len(items):
            return True
        # identical profiles are placed at increasing starts: the other orders are the same layouts
        floor = chosen[-1].start + 1 if i and items[i - 1].name == items[i].name else 0
        for s in items[i].starts:
            if s < floor:
                continue
            cand = placement(gpu, items[i].name, s)
            if any(cand.memory & c.memory or cand.compute & c.compute for c in chosen):
                continue
            chosen.append(cand)
            try:
                validate(gpu, [c.key for c in chosen])
            except ValueError:
                chosen.pop()
                continue
            if search(i + 1):
                return True
            chosen.pop()
        return False

    if not search(0):
        raise fail
    return _sorted_keys(chosen)


@dataclass(frozen=True)
class LayoutUsage:
    """What a layout uses and what it leaves: slices, SMs, and the slices no instance can ever use."""

    layout: tuple[tuple[str, int], ...]
    memory_owner: tuple[int | None, ...]  # instance index per memory slice (None: unused)
    compute_owner: tuple[int | None, ...]  # instance index per compute slice
    free_memory: tuple[int, ...]
    free_compute: tuple[int, ...]
    stranded_memory: tuple[int, ...]  # free, and no addable instance could use them
    stranded_compute: tuple[int, ...]
    sms_used: int | None  # None when the table lacks SM counts
    mig_sms: int | None
    total_sms: int  # SMs of the product (A100: 108)

    @property
    def instances(self) -> int:
        return len(self.layout)

    @property
    def maximal(self) -> bool:
        return self.free_memory == self.stranded_memory and self.free_compute == self.stranded_compute


def usage(gpu: str | specs.GPUSpec, layout: Iterable[Any], profiles: Sequence[str] | None = None) -> LayoutUsage:
    """Slices and SMs a valid ``layout`` uses, leaves free, and strands (free but unusable).

    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    t = table(gpu)
    lay = validate(gpu, layout)
    placed = [placement(gpu, n, s) for n, s in lay]
    mem_owner: list[int | None] = [None] * MEMORY_SLICES
    comp_owner: list[int | None] = [None] * COMPUTE_SLICES
    for i, p in enumerate(placed):
        for s in p.memory:
            mem_owner[s] = i
        for s in p.compute:
            comp_owner[s] = i
    free_mem = tuple(i for i, o in enumerate(mem_owner) if o is None)
    free_comp = tuple(i for i, o in enumerate(comp_owner) if o is None)
    reach_mem: set[int] = set()
    reach_comp: set[int] = set()
    for n, s in addable(gpu, lay, profiles):
        c = placement(gpu, n, s)
        reach_mem |= c.memory
        reach_comp |= c.compute
    sms = [p.profile.sm_count for p in placed]
    return LayoutUsage(
        layout=lay, memory_owner=tuple(mem_owner), compute_owner=tuple(comp_owner), free_memory=free_mem,
        free_compute=free_comp, stranded_memory=tuple(i for i in free_mem if i not in reach_mem),
        stranded_compute=tuple(i for i in free_comp if i not in reach_comp),
        sms_used=None if any(x is None for x in sms) else sum(sms),  # type: ignore[arg-type]
        mig_sms=t.mig_sms, total_sms=specs.get(gpu).sm_count)


def format_layout(layout: Iterable[Any]) -> str:
    """``4g.20gb@0 + 3g.20gb@4`` (no validation).

    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    return " + ".join(f"{n}@{s}" for n, s in layout) or "(empty)"


_LETTERS = "ABCDEFGH"


def layout_maps(gpu: str | specs.GPUSpec, layout: Iterable[Any],
                profiles: Sequence[str] | None = None) -> tuple[str, str]:
    """Two strings, memory slices (8 chars) and compute slices (7): instance letters, ``.`` for stranded,
    ``_`` for free slices that an instance of ``profiles`` (default: all) could still use.
    ``4g+3g`` gives ``("AAAABBBB", "AAAABBB")``.
    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    u = usage(gpu, layout, profiles)

    def row(owner: Sequence[int | None], stranded: Sequence[int]) -> str:
        return "".join(_LETTERS[o] if o is not None else ("." if i in stranded else "_")
                       for i, o in enumerate(owner))

    return row(u.memory_owner, u.stranded_memory), row(u.compute_owner, u.stranded_compute)


def layout_rows(gpu: str | specs.GPUSpec, layouts: Sequence[Iterable[Any]],
                profiles: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """One dict per layout: instances, maps, SMs in use and stranded slices (for tables and tests).

    Stranded means no instance of ``profiles`` (default: all of the GPU's) could use the slice.
    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    rows = []
    for i, lay in enumerate(layouts, 1):
        u = usage(gpu, lay, profiles)
        mem, comp = layout_maps(gpu, u.layout, profiles)
        rows.append({"n": i, "layout": format_layout(u.layout), "instances": u.instances, "memory": mem,
                     "compute": comp, "sms": u.sms_used, "stranded_memory": len(u.stranded_memory),
                     "stranded_compute": len(u.stranded_compute)})
    return rows


def layouts_table(gpu: str | specs.GPUSpec, layouts: Sequence[Iterable[Any]],
                  profiles: Sequence[str] | None = None) -> str:
    """A compact text table of layouts (memory/compute maps use instance letters; ``.`` = stranded for
    ``profiles``, ``_`` = free and still usable).
    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    rows = layout_rows(gpu, layouts, profiles)
    width = max([len(r["layout"]) for r in rows] + [6])
    head = f"{'#':>3}  {'layout':<{width}}  inst  mem(8)    comp(7)  SMs  stranded mem/comp"
    lines = [head, "-" * len(head)]
    for r in rows:
        sms = "?" if r["sms"] is None else str(r["sms"])
        lines.append(f"{r['n']:>3}  {r['layout']:<{width}}  {r['instances']:>4}  {r['memory']}  {r['compute']}  "
                     f"{sms:>3}  {r['stranded_memory']}/{r['stranded_compute']}")
    return "\n".join(lines)


def profiles_table(gpu: str | specs.GPUSpec) -> str:
    """The profile table of ``gpu`` as text: slices, SMs, nominal memory/bandwidth/L2 share, count, starts.

    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    spec = specs.get(gpu)
    t = table(spec)
    head = (f"{'profile':<11} {'ID':>3} {'g':>2} {'mem':>4} {'SMs':>4} {'%SMs':>5} {'GB':>6} {'GB/s':>6} "
            f"{'L2 MiB':>6} {'max':>3}  starts")
    lines = [f"{spec.name} (table {t.key})", head, "-" * len(head)]
    for p in t.profiles:
        f = float(p.memory_fraction)
        sms = "?" if p.sm_count is None else str(p.sm_count)
        pct = "?" if p.sm_count is None else f"{100 * p.sm_count / spec.sm_count:.1f}"
        lines.append(f"{p.name:<11} {p.profile_id:>3} {p.compute_slices:>2} {p.memory_slices:>2}/8 {sms:>4} "
                     f"{pct:>5} {spec.memory_bytes * f / 1e9:>6.1f} {spec.hbm_bytes_per_s * f / 1e9:>6.0f} "
                     f"{spec.l2_bytes * f / 2**20:>6.1f} {p.max_count:>3}  "
                     "{" + ",".join(map(str, p.starts)) + "}" + f":{p.memory_slices}")
    return "\n".join(lines)


def doc_conflicts(gpu: str | specs.GPUSpec) -> list[dict[str, str]]:
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
                out.append({"gpu": table(gpu).key, "profile": p.name, "column": column, "printed": printed,
                            "implied_by_placement": implied, "starts": "{" + ",".join(map(str, p.starts)) + "}"
                            + f":{p.memory_slices}"})
    return out


def instance_peaks(gpu: str | specs.GPUSpec, name: str | None = None, precision: str = "bf16") -> dict[str, Any]:
    """Model peaks of one instance: SMs, dense ``precision`` FLOP/s, HBM bytes/s, memory and L2 bytes.

    ``name=None`` gives the whole GPU outside MIG mode. Compute scales with SMs; capacity, bandwidth and L2
    scale with memory slices (the MIG guide's definition of a memory slice). Memory is the nominal share of
    the datasheet capacity: the driver reports a little less (it keeps some for itself).
    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    spec = specs.get(gpu)
    per_sm = spec.peak_flops(precision) / spec.sm_count
    if name is None:
        return {"profile": None, "sms": spec.sm_count, "flops": spec.peak_flops(precision),
                "hbm_bytes_per_s": spec.hbm_bytes_per_s, "memory_bytes": spec.memory_bytes,
                "l2_bytes": spec.l2_bytes, "precision": precision}
    p = profile(spec, name)
    if p.sm_count is None:
        raise ValueError(f"profile={name!r} on {spec.name}: no sourced SM count, so no compute peak; "
                         f"profiles with SM counts: {', '.join(q.name for q in profiles(spec) if q.sm_count)}")
    share = float(p.memory_fraction)
    return {"profile": p.name, "sms": p.sm_count, "flops": per_sm * p.sm_count,
            "hbm_bytes_per_s": spec.hbm_bytes_per_s * share, "memory_bytes": spec.memory_bytes * share,
            "l2_bytes": spec.l2_bytes * share, "precision": precision}


# Suffixes: "+me" (media extensions); newer drivers also list "-me" (none), "+me.all" and "+gfx" profiles.
_MIG_NAME = re.compile(r"(?<![\w.])(\d+g\.\d+gb(?:[+-][a-z]+(?:\.[a-z]+)?)?)(?![\w])")


def profile_from_device_name(device_name: str | None) -> str | None:
    """``"NVIDIA A100-SXM4-40GB MIG 1g.5gb"`` -> ``"1g.5gb"``; None for a device that is not a MIG instance.

    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    if not device_name or "MIG" not in str(device_name):
        return None
    m = _MIG_NAME.search(str(device_name).split("MIG", 1)[1])
    return m.group(1) if m else None


# ---------------------------------------------------------------------------------------------------------
# Figures of layouts
# ---------------------------------------------------------------------------------------------------------

_PALETTE = ("#76b900", "#1f77b4", "#ff7f0e", "#9467bd", "#17becf", "#d62728", "#8c564b", "#e377c2")


def plot_layout(gpu: str | specs.GPUSpec, layout: Iterable[Any], ax: Any = None, title: str | None = None) -> Any:
    """Draw one layout: 8 memory slices above 7 compute slices, instances coloured, stranded slices hatched.

    Returns the matplotlib axes. Chapter: *Multi-Instance GPU*, figure "one layout".
    """
    from matplotlib.patches import Rectangle

    from . import plots

    spec = specs.get(gpu)
    t = table(spec)
    u = usage(spec, layout)
    placed = [placement(spec, n, s) for n, s in u.layout]
    if ax is None:
        _, ax = plots.figure("full")
    mem_gb = spec.memory_bytes / MEMORY_SLICES / 1e9
    rows = (("memory", 1.25, MEMORY_SLICES, u.memory_owner, u.stranded_memory),
            ("compute", 0.0, COMPUTE_SLICES, u.compute_owner, u.stranded_compute))
    for label, y, n, owner, stranded in rows:
        w = MEMORY_SLICES / n  # compute slices are drawn wider so both rows span the same width
        for i in range(n):
            o = owner[i]
            if o is not None:
                face, hatch, edge = _PALETTE[o % len(_PALETTE)], None, "white"
            elif i in stranded:
                face, hatch, edge = "#dddddd", "///", "#999999"
            else:
                face, hatch, edge = "white", None, "#999999"
            ax.add_patch(Rectangle((i * w, y), w, 1.0, facecolor=face, edgecolor=edge, hatch=hatch, lw=1.2))
            sub = f"{mem_gb:.0f} GB" if label == "memory" else (
                f"{t.sms_per_compute_slice} SMs" if t.sms_per_compute_slice else "GPC")
            ax.text(i * w + w / 2, y + 0.18, sub, ha="center", va="center", fontsize=7, color="#333333")
        ax.text(-0.15, y + 0.5, f"{label}\nslices", ha="right", va="center", fontsize=9)
    for k, p in enumerate(placed):
        for y, idx, n in ((1.25, p.memory, MEMORY_SLICES), (0.0, p.compute, COMPUTE_SLICES)):
            w = MEMORY_SLICES / n
            lo, hi = min(idx) * w, (max(idx) + 1) * w
            ax.text((lo + hi) / 2, y + 0.6, p.name, ha="center", va="center", fontsize=8, color="white",
                    fontweight="bold")
    ax.set_xlim(-1.6, MEMORY_SLICES + 0.05)
    ax.set_ylim(-0.1, 2.35)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
    for side in ("left", "bottom", "top", "right"):
        ax.spines[side].set_visible(False)
    sms = "" if u.sms_used is None else f"; {u.sms_used} of {u.total_sms} SMs in use"
    ax.set_title(title or f"{spec.name}: {format_layout(u.layout)}{sms}")
    plots.provenance_note(ax, f"model of {spec.name}; profiles and placements: MIG User Guide; hatched = stranded")
    return ax


def plot_layouts(gpu: str | specs.GPUSpec, layouts: Sequence[Iterable[Any]], ax: Any = None,
                 profiles: Sequence[str] | None = None) -> Any:
    """All ``layouts`` as rows of instance bars on the memory-slice axis (a compact overview figure).

    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    from matplotlib.patches import Rectangle

    from . import plots

    spec = specs.get(gpu)
    if ax is None:
        _, ax = plots.figure("tall")
    colour = {p.name: _PALETTE[i % len(_PALETTE)] for i, p in enumerate(table(spec).profiles)}
    n = len(layouts)
    for row, lay in enumerate(layouts):
        y = n - 1 - row
        u = usage(spec, lay, profiles)
        for name, s in u.layout:
            p = placement(spec, name, s)
            ax.add_patch(Rectangle((s + 0.04, y + 0.1), p.profile.memory_slices - 0.08, 0.8,
                                   facecolor=colour[name], edgecolor="white"))
        for i in u.stranded_memory:
            ax.add_patch(Rectangle((i + 0.04, y + 0.1), 0.92, 0.8, facecolor="#eeeeee", edgecolor="#bbbbbb",
                                   hatch="///"))
    used = [name for name in colour if any(name == n for lay in layouts for n, _ in lay)]
    handles = [Rectangle((0, 0), 1, 1, facecolor=colour[name]) for name in used]
    ax.legend(handles, used, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)
    ax.set_xlim(0, MEMORY_SLICES)
    ax.set_ylim(0, n)
    ax.set_xticks([i + 0.5 for i in range(MEMORY_SLICES)], [str(i) for i in range(MEMORY_SLICES)])
    ax.set_yticks([])
    ax.grid(False)
    ax.set_xlabel("memory slice (placement start index)")
    ax.set_title(f"{spec.name}: {n} maximal layouts")
    plots.provenance_note(ax, f"model of {spec.name}; hatched = stranded memory slice")
    return ax


def plot_layout_census(gpu: str | specs.GPUSpec, layouts: Sequence[Iterable[Any]], ax: Any = None,
                       profiles: Sequence[str] | None = None) -> Any:
    """Maximal layouts counted by number of instances, stacked by SMs in use (how much each one strands).

    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    from . import plots

    spec = specs.get(gpu)
    rows = layout_rows(spec, layouts, profiles)
    if any(r["sms"] is None for r in rows):
        raise ValueError(f"gpu={spec.name!r}: the table lacks SM counts; the census needs them")
    if ax is None:
        _, ax = plots.figure("full")
    levels = sorted({r["sms"] for r in rows}, reverse=True)
    xs = list(range(1, COMPUTE_SLICES + 1))
    bottom = [0] * len(xs)
    shades = ("#4f7c00", "#76b900", "#b8d97a", "#e0eec0", "#f4f9ea")
    for k, sms in enumerate(levels):
        counts = [sum(1 for r in rows if r["instances"] == x and r["sms"] == sms) for x in xs]
        ax.bar(xs, counts, bottom=bottom, color=shades[k % len(shades)], edgecolor="white",
               label=f"{sms} SMs in use")
        bottom = [b + c for b, c in zip(bottom, counts)]
    ax.set_xlabel("instances in the layout")
    ax.set_ylabel("maximal layouts")
    ax.set_title(f"{spec.name}: {len(rows)} maximal layouts by size and SMs in use")
    plots.legend_outside(ax)
    plots.provenance_note(ax, f"model of {spec.name}; enumerate_layouts()")
    return ax


# ---------------------------------------------------------------------------------------------------------
# Isolation in a model: seven inference tenants, one noisy neighbour
# ---------------------------------------------------------------------------------------------------------

#: Ways to share one GPU (plus "dedicated": one whole GPU per tenant, the baseline).
MODES = ("dedicated", "mig", "timeslice", "mps", "mps-limited")
#: The seventh tenant: a well-behaved copy of the others, a bully of HBM bandwidth, or a bully of PCIe.
SCENARIOS = ("quiet", "hbm-bully", "pcie-bully")


@dataclass(frozen=True)
class Workload:
    """One tenant's requests, all alike. A request first copies its input over PCIe, then runs its kernels.

    Kernel time on ``s`` SMs with ``b`` bytes/s of HBM bandwidth is the roofline ``max(F / (min(s, p) r),
    B / b)`` with ``r`` the per-SM rate: a request cannot use more SMs than its parallelism ``p``.
    """

    name: str
    flops: float  # FLOP per request (dense tensor-core math)
    hbm_bytes: float  # HBM traffic per request, bytes
    pcie_bytes: float  # host-to-device bytes per request, copied before the kernels run
    parallel_sms: int  # SMs one request can keep busy; more do not speed it up
    rate_per_s: float | None  # Poisson arrivals per second; None = closed loop (always a request waiting)
    noisy: bool = False  # the neighbour whose effect on the others we measure

    def __post_init__(self) -> None:
        for name in ("flops", "hbm_bytes", "pcie_bytes"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise ValueError(f"Workload.{name}={v!r} must be a finite number >= 0")
        if self.flops == 0 and self.hbm_bytes == 0:
            raise ValueError("Workload.flops and Workload.hbm_bytes are both 0: a request must do some work")
        if isinstance(self.parallel_sms, bool) or not isinstance(self.parallel_sms, int) or self.parallel_sms < 1:
            raise ValueError(f"Workload.parallel_sms={self.parallel_sms!r} must be an integer >= 1")
        if self.rate_per_s is not None and (not isinstance(self.rate_per_s, (int, float))
                                            or not math.isfinite(self.rate_per_s) or self.rate_per_s <= 0):
            raise ValueError(f"Workload.rate_per_s={self.rate_per_s!r} must be > 0, or None for a closed loop")


@dataclass(frozen=True)
class SimConfig:
    """Assumptions of the isolation model. Defaults are the chapter's; every one is stated there."""

    gpu: str = "A100-SXM4-40GB"
    precision: str = "fp16"  # tensor-core precision of the requests' math
    compute_efficiency: float = 0.5  # fraction of peak tensor throughput a request's kernels reach
    hbm_efficiency: float = 0.8  # fraction of datasheet HBM bandwidth reached
    pcie_efficiency: float = 0.8  # fraction of the PCIe x16 per-direction rate reached
    timeslice_s: float = 2e-3  # time-slice length (NVIDIA does not document it: an assumption)
    switch_s: float = 25e-6  # GPU idle time per context switch (an assumption)
    mps_sm_fraction: float = 1 / 7  # CUDA_MPS_ACTIVE_THREAD_PERCENTAGE / 100 in mode "mps-limited"
    mig_profile: str | None = None  # None: the GPU's smallest one-slice profile (1g.5gb on A100-40GB)
    clock_scale: float = 1.0  # SM clock relative to boost (below 1: a power-capped GPU)
    duration_s: float = 3.0  # simulated time
    warmup_s: float = 0.3  # requests arriving before this are not counted

    def __post_init__(self) -> None:
        specs.get(self.gpu)  # raises for unknown GPUs
        for name in ("compute_efficiency", "hbm_efficiency", "pcie_efficiency", "mps_sm_fraction", "clock_scale"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not 0 < v <= 1:
                raise ValueError(f"SimConfig.{name}={v!r} must be in (0, 1]")
        for name in ("timeslice_s", "duration_s"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not v > 0:
                raise ValueError(f"SimConfig.{name}={v!r} must be > 0 seconds")
        if not 0 <= self.switch_s < self.timeslice_s:
            raise ValueError(f"SimConfig.switch_s={self.switch_s!r} must be >= 0 and below timeslice_s")
        if not 0 <= self.warmup_s < self.duration_s:
            raise ValueError(f"SimConfig.warmup_s={self.warmup_s!r} must be >= 0 and below duration_s")

    @property
    def spec(self) -> specs.GPUSpec:
        return specs.get(self.gpu)

    @property
    def flops_per_sm(self) -> float:
        """Achieved FLOP/s of one SM: peak / SMs x efficiency x clock scale."""
        s = self.spec
        return s.peak_flops(self.precision) / s.sm_count * self.compute_efficiency * self.clock_scale

    @property
    def hbm_bytes_per_s(self) -> float:
        return self.spec.hbm_bytes_per_s * self.hbm_efficiency

    @property
    def pcie_bytes_per_s(self) -> float:
        return self.spec.pcie_bytes_per_s * self.pcie_efficiency


def default_tenants(scenario: str = "quiet", config: SimConfig | None = None,
                    victim: Workload | None = None, n: int = 7) -> tuple[Workload, ...]:
    """Seven tenants: ``n - 1`` identical inference services and a seventh that depends on ``scenario``.

    The default service is ResNet-50-sized image classification, batch 8 (assumed: 8.2 GFLOP per image,
    200 MB of HBM traffic per batch, fp16 images of 224 x 224 x 3 over PCIe), whose kernels keep about half
    an A100 (54 SMs) busy, at 100 batches/s. The bullies are closed loops that use every SM: ``hbm-bully``
    streams 2 GB through HBM per request, ``pcie-bully`` copies 512 MB from the host per request.
    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    if scenario not in SCENARIOS:
        raise ValueError(f"scenario={scenario!r} is unknown; allowed: {', '.join(SCENARIOS)}")
    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        raise ValueError(f"n={n!r} must be an integer >= 2 (tenants)")
    cfg = config or SimConfig()
    all_sms = cfg.spec.sm_count
    v = victim or Workload("service", flops=8 * 8.2e9, hbm_bytes=2e8, pcie_bytes=8 * 3 * 224 * 224 * 2,
                           parallel_sms=54, rate_per_s=100.0)
    out = [Workload(f"t{i + 1}", v.flops, v.hbm_bytes, v.pcie_bytes, v.parallel_sms, v.rate_per_s)
           for i in range(n - 1)]
    if scenario == "quiet":
        out.append(Workload(f"t{n}", v.flops, v.hbm_bytes, v.pcie_bytes, v.parallel_sms, v.rate_per_s))
    elif scenario == "hbm-bully":
        out.append(Workload(f"t{n} (HBM bully)", flops=1e9, hbm_bytes=2e9, pcie_bytes=0.0, parallel_sms=all_sms,
                            rate_per_s=None, noisy=True))
    else:
        out.append(Workload(f"t{n} (PCIe bully)", flops=1e8, hbm_bytes=5.12e8, pcie_bytes=5.12e8,
                            parallel_sms=all_sms, rate_per_s=None, noisy=True))
    return tuple(out)


def service_time(w: Workload, sms: float, hbm_bytes_per_s: float, pcie_bytes_per_s: float,
                 config: SimConfig | None = None, flops_per_sm: float | None = None) -> float:
    """Seconds for one request of ``w`` alone on ``sms`` SMs with the given bandwidths (copy, then kernels).

    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    cfg = config or SimConfig()
    r = cfg.flops_per_sm if flops_per_sm is None else flops_per_sm
    if sms <= 0 or hbm_bytes_per_s <= 0 or pcie_bytes_per_s <= 0:
        raise ValueError(f"sms={sms!r}, hbm_bytes_per_s={hbm_bytes_per_s!r}, pcie_bytes_per_s="
                         f"{pcie_bytes_per_s!r} must all be > 0")
    kernels = max(w.flops / (min(sms, w.parallel_sms) * r), w.hbm_bytes / hbm_bytes_per_s)
    return w.pcie_bytes / pcie_bytes_per_s + kernels


@dataclass(frozen=True)
class TenantStats:
    """One tenant's outcome. Latency = completion - arrival, for requests arriving after the warm-up."""

    name: str
    noisy: bool
    offered_per_s: float | None
    throughput_per_s: float
    p50_ms: float
    p99_ms: float
    mean_ms: float
    completed: int
    backlog: int  # requests still queued at the end
    saturated: bool  # an open-loop tenant served well below its arrival rate: its queue grows without bound


@dataclass
class SimResult:
    mode: str
    tenants: tuple[TenantStats, ...]
    latencies_s: tuple[Any, ...]  # numpy array per tenant (counted requests only)
    config: SimConfig
    mig_layout: tuple[tuple[str, int], ...] | None = None

    def victims(self, names: Sequence[str] | None = None) -> list[TenantStats]:
        """The well-behaved tenants (``names`` picks some of them by name)."""
        return [t for t in self.tenants if not t.noisy and (names is None or t.name in names)]

    def victim_latencies_s(self, names: Sequence[str] | None = None) -> Any:
        import numpy as np

        arrays = [lat for t, lat in zip(self.tenants, self.latencies_s)
                  if not t.noisy and (names is None or t.name in names)]
        return np.concatenate(arrays) if arrays else np.zeros(0)

    def victim_summary(self, names: Sequence[str] | None = None) -> dict[str, Any]:
        """Pooled latency percentiles and total throughput of the well-behaved tenants (or of ``names``)."""
        import numpy as np

        lat = self.victim_latencies_s(names)
        p50, p99 = (float(np.percentile(lat, q)) * 1e3 for q in (50, 99)) if lat.size else (math.nan, math.nan)
        noisy = [t for t in self.tenants if t.noisy]
        vict = self.victims(names)
        return {"mode": self.mode, "victim_p50_ms": p50, "victim_p99_ms": p99,
                "victim_throughput_per_s": sum(t.throughput_per_s for t in vict),
                "noisy_throughput_per_s": sum(t.throughput_per_s for t in noisy) if noisy else None,
                "saturated": any(t.saturated for t in vict)}


def _arrivals(rate: float, horizon: float, rng: Any) -> list[float]:
    import numpy as np

    out: list[float] = []
    t = 0.0
    chunk = max(16, int(rate * horizon * 1.2) + 16)
    while t < horizon:
        gaps = rng.exponential(1.0 / rate, size=chunk)
        times = t + np.cumsum(gaps)
        out.extend(float(x) for x in times if x < horizon)
        t = float(times[-1])
    return out


def simulate(tenants: Sequence[Workload], mode: str, config: SimConfig | None = None, seed: int = 0) -> SimResult:
    """Discrete-event model of ``tenants`` sharing one GPU under ``mode`` (see :data:`MODES`).

    * ``dedicated``: every tenant has a whole GPU and its own PCIe link (the seven-cards baseline).
    * ``mig``: every tenant has one instance of ``config.mig_profile`` (SMs and memory slices fixed, so
      HBM bandwidth = memory slices / 8); the PCIe link is shared by all instances.
    * ``timeslice``: one tenant at a time owns the whole GPU, round-robin, ``config.timeslice_s`` per turn,
      ``config.switch_s`` lost per switch; a tenant yields early when it runs out of work.
    * ``mps``: all tenants run at once; SMs, HBM and PCIe are shared in proportion to what each asks for
      (no arbitration between clients). ``mps-limited`` caps each client at ``config.mps_sm_fraction`` of the
      SMs (``CUDA_MPS_ACTIVE_THREAD_PERCENTAGE``) and leaves bandwidth unpartitioned.

    Arrivals are Poisson, drawn per tenant from ``numpy.random.RandomState([seed, index])`` (a stream NumPy
    keeps stable across versions), so a tenant sees the same arrivals in every mode and scenario. Each
    tenant serves one request at a time (FIFO).
    Chapter: *Multi-Instance GPU*, section "Isolation, in a model".
    """
    import numpy as np

    cfg = config or SimConfig()
    if mode not in MODES:
        raise ValueError(f"mode={mode!r} is unknown; allowed: {', '.join(MODES)}")
    tenants = tuple(tenants)
    if not tenants or not all(isinstance(w, Workload) for w in tenants):
        raise ValueError("tenants must be a non-empty sequence of Workload")
    n = len(tenants)
    spec = cfg.spec
    N = spec.sm_count
    r = cfg.flops_per_sm
    BW = cfg.hbm_bytes_per_s
    PCIE = cfg.pcie_bytes_per_s
    layout = None
    inst_sms = inst_bw = 0.0
    if mode == "mig":
        t = table(spec)
        pname = cfg.mig_profile or next(p.name for p in t.profiles if p.compute_slices == 1
                                        and p.memory_slices == 1 and not p.media_extensions)
        prof = t.profile(pname)
        if prof.sm_count is None:
            raise ValueError(f"mig_profile={pname!r} on {spec.name} has no sourced SM count; "
                             "the model needs one (use an A100)")
        layout = place(spec, [pname] * n)
        inst_sms, inst_bw = float(prof.sm_count), BW * float(prof.memory_fraction)
    sm_cap = float(N) if mode != "mps-limited" else max(1.0, math.floor(N * cfg.mps_sm_fraction))

    def gpu_rate(w: Workload, s: float, b: float) -> float:
        t_k = max(w.flops / (min(s, w.parallel_sms) * r) if w.flops else 0.0, w.hbm_bytes / b if w.hbm_bytes else 0.0)
        return 1.0 / t_k

    cache: dict[tuple[int, ...], list[float]] = {}

    def alloc(phase: Sequence[int]) -> list[float]:
        """Progress rate per tenant (bytes/s in the copy phase, fraction/s in the kernel phase)."""
        key = tuple(phase)
        if key in cache:
            return cache[key]
        rates = [0.0] * n
        copying = [i for i in range(n) if phase[i] == 0]
        computing = [i for i in range(n) if phase[i] == 1]
        if mode == "dedicated":
            for i in copying:
                rates[i] = PCIE
            for i in computing:
                rates[i] = gpu_rate(tenants[i], N, BW)
        else:  # one shared PCIe link: processor-shared among the copies in flight
            for i in copying:
                rates[i] = PCIE / len(copying)
            if mode == "mig":
                for i in computing:
                    rates[i] = gpu_rate(tenants[i], inst_sms, inst_bw)
            elif computing:  # mps, mps-limited: shares in proportion to demand
                want = [min(float(tenants[i].parallel_sms), sm_cap) for i in computing]
                total = sum(want)
                sms = [x * min(1.0, N / total) for x in want]
                demand = []
                for i, s in zip(computing, sms):
                    w = tenants[i]
                    t_c = w.flops / (min(s, w.parallel_sms) * r) if w.flops else 0.0
                    demand.append(min(BW, w.hbm_bytes / t_c) if t_c > 0 else BW)
                total_demand = sum(demand)
                scale = min(1.0, BW / total_demand) if total_demand > 0 else 1.0
                for i, s, d in zip(computing, sms, demand):
                    rates[i] = gpu_rate(tenants[i], s, d * scale)
        cache[key] = rates
        return rates

    # per-tenant state
    # legacy RandomState: its streams are frozen across NumPy versions, so stored outputs stay reproducible
    arrivals = [(_arrivals(w.rate_per_s, cfg.duration_s, np.random.RandomState([seed, i]))
                 if w.rate_per_s is not None else []) for i, w in enumerate(tenants)]
    nxt = [0] * n
    queue: list[deque[float]] = [deque() for _ in range(n)]
    phase = [-1] * n
    rem = [0.0] * n
    done_lat: list[list[float]] = [[] for _ in range(n)]
    done_count = [0] * n
    counted_arrivals = [sum(1 for a in arr if a >= cfg.warmup_s) for arr in arrivals]

    def start(i: int) -> None:
        w = tenants[i]
        if w.pcie_bytes > 0:
            phase[i], rem[i] = 0, w.pcie_bytes
        else:
            phase[i], rem[i] = 1, 1.0

    t = 0.0
    for i, w in enumerate(tenants):
        if w.rate_per_s is None:  # closed loop: a request is always waiting
            queue[i].append(0.0)
            start(i)

    # time-slicing state
    owner: int | None = None
    last_owner: int | None = None
    switch_end = 0.0
    slice_end = math.inf
    eps = 1e-12

    def pick_next(after: int | None) -> int | None:
        order = range(n) if after is None else [(after + 1 + k) % n for k in range(n)]
        for j in order:
            if phase[j] != -1:
                return j
        return None

    def settle(now: float) -> None:
        nonlocal owner, last_owner, switch_end, slice_end
        if owner is not None and phase[owner] != -1:
            return
        nxt_owner = pick_next(owner if owner is not None else last_owner)
        if nxt_owner is None:
            if owner is not None:
                last_owner = owner
            owner, slice_end = None, math.inf
            return
        prev = owner if owner is not None else last_owner
        owner = nxt_owner
        switch_end = now + (cfg.switch_s if prev is not None and prev != owner else 0.0)
        slice_end = switch_end + cfg.timeslice_s

    while True:
        if mode == "timeslice":
            settle(t)
            rates = [0.0] * n
            if owner is not None and t >= switch_end - eps:
                w = tenants[owner]
                rates[owner] = PCIE if phase[owner] == 0 else gpu_rate(w, N, BW)
            t_pol = switch_end if (owner is not None and t < switch_end - eps) else slice_end
        else:
            rates = alloc(phase)
            t_pol = math.inf
        t_done, who = math.inf, -1
        for i in range(n):
            if phase[i] != -1 and rates[i] > 0:
                tt = t + rem[i] / rates[i]
                if tt < t_done:
                    t_done, who = tt, i
        t_arr, src = math.inf, -1
        for i in range(n):
            if nxt[i] < len(arrivals[i]) and arrivals[i][nxt[i]] < t_arr:
                t_arr, src = arrivals[i][nxt[i]], i
        t_next = min(t_done, t_arr, t_pol)
        if t_next >= cfg.duration_s:
            break
        dt = t_next - t
        if dt > 0:
            for i in range(n):
                if phase[i] != -1 and rates[i] > 0:
                    rem[i] = max(0.0, rem[i] - rates[i] * dt)
        t = t_next
        if t_next == t_done:
            i = who
            if phase[i] == 0:
                phase[i], rem[i] = 1, 1.0
            else:
                arrived = queue[i].popleft()
                if arrived >= cfg.warmup_s:
                    done_lat[i].append(t - arrived)
                if t >= cfg.warmup_s:
                    done_count[i] += 1
                if tenants[i].rate_per_s is None:
                    queue[i].append(t)
                if queue[i]:
                    start(i)
                else:
                    phase[i], rem[i] = -1, 0.0
        elif t_next == t_arr:
            i = src
            nxt[i] += 1
            queue[i].append(t)
            if phase[i] == -1:
                start(i)
        else:  # time-slicing: a switch finished, or a slice expired
            if t >= slice_end - eps and owner is not None:
                others = any(phase[j] != -1 for j in range(n) if j != owner)
                if others:
                    last_owner = owner
                    nxt_owner = pick_next(owner)
                    owner = nxt_owner
                    switch_end = t + cfg.switch_s
                    slice_end = switch_end + cfg.timeslice_s
                else:
                    slice_end = t + cfg.timeslice_s

    span = cfg.duration_s - cfg.warmup_s
    stats = []
    lats = []
    for i, w in enumerate(tenants):
        lat = np.asarray(done_lat[i], dtype=np.float64)
        lats.append(lat)
        thr = done_count[i] / span
        p50, p99, mean = ((float(np.percentile(lat, 50)) * 1e3, float(np.percentile(lat, 99)) * 1e3,
                           float(lat.mean()) * 1e3) if lat.size else (math.nan, math.nan, math.nan))
        backlog = len(queue[i]) - (1 if w.rate_per_s is None else 0)
        # a stable queue ends with a handful of requests waiting; a saturated one with a growing pile
        saturated = w.rate_per_s is not None and backlog > max(10, 0.05 * counted_arrivals[i])
        stats.append(TenantStats(w.name, w.noisy, w.rate_per_s, thr, p50, p99, mean, int(lat.size), backlog,
                                 saturated))
    return SimResult(mode, tuple(stats), tuple(lats), cfg, layout)


def isolation_study(config: SimConfig | None = None, modes: Sequence[str] = MODES,
                    scenarios: Sequence[str] = SCENARIOS, seed: int = 0,
                    victim: Workload | None = None) -> list[dict[str, Any]]:
    """Every ``mode`` x ``scenario``: pooled victim p50/p99, throughputs, and the p99 ratio to ``quiet``.

    Chapter: *Multi-Instance GPU*, section "Isolation, in a model".
    """
    cfg = config or SimConfig()
    rows = []
    for mode in modes:
        base = None
        for sc in scenarios:
            tenants = default_tenants(sc, cfg, victim)
            same_six = [w.name for w in tenants[:-1]]  # compare the same tenants in every scenario
            res = simulate(tenants, mode, cfg, seed)
            row = {"scenario": sc, **res.victim_summary(same_six)}
            if sc == "quiet":
                base = row["victim_p99_ms"]
            row["p99_vs_quiet"] = row["victim_p99_ms"] / base if base else math.nan
            rows.append(row)
    return rows


def plot_isolation(rows: Sequence[Mapping[str, Any]], ax: Any = None) -> Any:
    """Grouped bars: victims' p99 latency per sharing mode, one bar per scenario (log scale).

    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    from . import plots

    if ax is None:
        _, ax = plots.figure("wide")
    modes = list(dict.fromkeys(r["mode"] for r in rows))
    scen = list(dict.fromkeys(r["scenario"] for r in rows))
    colours = {"quiet": "#76b900", "hbm-bully": "#d62728", "pcie-bully": "#1f77b4"}
    width = 0.8 / len(scen)
    for k, sc in enumerate(scen):
        xs, ys = [], []
        for m_i, m in enumerate(modes):
            for r in rows:
                if r["mode"] == m and r["scenario"] == sc:
                    xs.append(m_i + (k - (len(scen) - 1) / 2) * width)
                    ys.append(r["victim_p99_ms"])
        ax.bar(xs, ys, width=width * 0.95, label=sc, color=colours.get(sc, None))
    ax.set_xticks(range(len(modes)), modes)
    ax.set_yscale("log")
    from matplotlib.ticker import NullFormatter

    values = [r["victim_p99_ms"] for r in rows if r["victim_p99_ms"] == r["victim_p99_ms"]]
    ticks = [m * 10.0**e for e in range(-2, 5) for m in (1, 2, 5)
             if min(values) / 2 <= m * 10.0**e <= max(values) * 2]
    ax.set_yticks(ticks, [f"{t:g}" for t in ticks])
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_ylabel("victims' p99 latency (ms, log)")
    ax.set_title("Six well-behaved tenants and a seventh: p99 latency by sharing mode")
    plots.legend_outside(ax)
    plots.provenance_note(ax, "model (discrete-event simulation, seeded); assumptions in the text")
    return ax


# ---------------------------------------------------------------------------------------------------------
# On a real GPU: MIG mode, instances and the driver's own profile table, through NVML, read-only
# ---------------------------------------------------------------------------------------------------------


@dataclass
class MigInstance:
    """One MIG device (a compute instance inside a GPU instance) as NVML reports it."""

    index: int  # MIG device index under its parent GPU
    name: str | None
    profile: str | None  # profile parsed from the name, e.g. "1g.5gb"
    uuid: str | None
    gpu_instance_id: int | None
    compute_instance_id: int | None
    sm_count: int | None
    memory_bytes: int | None
    placement: tuple[int, int] | None  # (start, size) on the memory-slice axis, when readable


@dataclass
class MigGpu:
    """One physical GPU: MIG mode, its instances, and (MIG enabled) the driver's profile table."""

    index: int
    name: str | None
    spec_name: str | None
    mig_capable: bool
    current_mode: bool | None  # None: unknown
    pending_mode: bool | None
    instances: list[MigInstance] = field(default_factory=list)
    driver_profiles: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class MigReport:
    """What NVML says about MIG on this machine. Built by :func:`nvml_mig_report`, which never raises."""

    nvml: bool  # NVML could be initialised
    driver_version: str | None
    gpus: list[MigGpu]
    this_process: str | None  # profile of the MIG instance this process runs in, when it runs in one
    notes: list[str]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        """A human-readable report: the chapter prints it in a hardware-dependent cell."""
        lines = []
        if not self.nvml:
            lines.append("NVML not available: MIG state unknown on this machine (the chapter uses the model).")
        else:
            lines.append(f"NVML ok, driver {self.driver_version or '?'}; {len(self.gpus)} GPU(s)")
        yes = {True: "enabled", False: "disabled", None: "unknown"}
        for g in self.gpus:
            lines.append(f"GPU {g.index}: {g.name or '?'} (spec {g.spec_name or 'not in catalogue'}), "
                         f"MIG {'capable' if g.mig_capable else 'not supported'}, mode {yes[g.current_mode]}"
                         + (f" (pending: {yes[g.pending_mode]})" if g.pending_mode != g.current_mode else ""))
            for m in g.instances:
                place_txt = f", placement {m.placement[0]}:{m.placement[1]}" if m.placement else ""
                mem = f", {m.memory_bytes / 2**30:.2f} GiB" if m.memory_bytes else ""
                lines.append(f"  MIG device {m.index}: {m.profile or m.name} GI {m.gpu_instance_id} "
                             f"CI {m.compute_instance_id}, {m.sm_count} SMs{mem}{place_txt}")
            if g.driver_profiles:
                lines.append(f"  driver profile table: {len(g.driver_profiles)} profiles "
                             "(compare_with_driver() checks them against the book's table)")
            lines += [f"  note: {n}" for n in g.notes]
        if self.this_process:
            lines.append(f"this process runs inside a MIG instance: {self.this_process}")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


def _text(x: Any) -> str | None:
    if x is None:
        return None
    return x.decode(errors="replace") if isinstance(x, bytes) else str(x)


def _nvml_error_text(exc: Exception) -> str:
    value = getattr(exc, "value", None)
    hints = {4: "insufficient permissions (reading GPU-instance placements needs root or the MIG 'monitor' "
                "capability in /proc/driver/nvidia/capabilities/mig)",
             3: "not supported on this GPU or driver", 6: "not found"}
    return hints.get(value, f"{exc.__class__.__name__}: {exc}")


def nvml_mig_report(nvml: Any = None, device_name: str | None = None,
                    visible_devices: str | None = None) -> MigReport:
    """Read MIG mode, MIG devices and the driver's profile table through NVML, without root. Never raises.

    ``nvml`` is the NVML module to use (default: ``pynvml`` from nvidia-ml-py; tests pass a fake).
    ``device_name`` is the CUDA device name of this process (``probe().name``): "... MIG 1g.5gb" means
    this process runs inside that instance. ``visible_devices`` defaults to ``$CUDA_VISIBLE_DEVICES``
    (``MIG-<uuid>`` entries also reveal an instance). Every failure (no library, no driver, no permission,
    MIG disabled) becomes a note and the report says what it could not read.
    Chapter: *Multi-Instance GPU*, section "On a real GPU".
    """
    notes: list[str] = []
    gpus: list[MigGpu] = []
    driver = None
    this = profile_from_device_name(device_name)
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "") if visible_devices is None else visible_devices
    mig_uuids = [v.strip() for v in str(visible).split(",") if v.strip().startswith("MIG-")]
    if nvml is None:
        try:
            import pynvml as nvml  # type: ignore[no-redef]  # provided by the nvidia-ml-py distribution
        except Exception:
            return MigReport(False, None, [], this, ["nvidia-ml-py (pynvml) is not installed"])
    try:
        nvml.nvmlInit()
    except Exception as exc:
        return MigReport(False, None, [], this, [f"NVML could not start ({exc.__class__.__name__}): no NVIDIA "
                                                 "driver here, or the library is missing"])
    try:
        try:
            driver = _text(nvml.nvmlSystemGetDriverVersion())
        except Exception as exc:
            notes.append(f"driver version: {_nvml_error_text(exc)}")
        try:
            count = int(nvml.nvmlDeviceGetCount())
        except Exception as exc:
            count = 0
            notes.append(f"device count: {_nvml_error_text(exc)}")
        for gi in range(count):
            gpus.append(_nvml_gpu(nvml, gi, mig_uuids))
        if not this and mig_uuids:
            for g in gpus:
                for m in g.instances:
                    if m.uuid and m.uuid in mig_uuids:
                        this = m.profile
        if count and not any(g.current_mode for g in gpus):
            notes.append("no GPU has MIG enabled; enabling it needs root (nvidia-smi -i 0 -mig 1) and an idle "
                         "GPU, so this chapter only reads: the layouts and the isolation model run on the CPU")
    except Exception as exc:  # anything unexpected from a driver or a fake: a note, never a traceback
        notes.append(f"NVML query failed: {exc.__class__.__name__}: {exc}")
    finally:
        try:
            nvml.nvmlShutdown()
        except Exception:
            pass
    return MigReport(True, driver, gpus, this, notes)


def _nvml_gpu(nvml: Any, index: int, mig_uuids: Sequence[str]) -> MigGpu:
    g = MigGpu(index=index, name=None, spec_name=None, mig_capable=False, current_mode=None, pending_mode=None)
    try:
        h = nvml.nvmlDeviceGetHandleByIndex(index)
    except Exception as exc:
        g.notes.append(f"handle: {_nvml_error_text(exc)}")
        return g
    try:
        g.name = _text(nvml.nvmlDeviceGetName(h))
    except Exception as exc:
        g.notes.append(f"name: {_nvml_error_text(exc)}")
    spec = specs.match(g.name)
    g.spec_name = spec.name if spec else None
    try:
        cur, pend = nvml.nvmlDeviceGetMigMode(h)
        g.current_mode, g.pending_mode = bool(cur), bool(pend)
        g.mig_capable = True
    except Exception as exc:
        g.mig_capable = bool(spec and spec.mig_max_instances)
        if getattr(exc, "value", None) == 3:
            g.notes.append("MIG is not supported on this GPU")
        else:
            g.notes.append(f"MIG mode: {_nvml_error_text(exc)}")
        return g
    if g.pending_mode != g.current_mode:
        g.notes.append("a MIG mode change is pending: it takes effect after a GPU reset")
    if not g.current_mode:
        return g
    # MIG devices (readable without root)
    try:
        slots = int(nvml.nvmlDeviceGetMaxMigDeviceCount(h))
    except Exception as exc:
        slots = 0
        g.notes.append(f"MIG device count: {_nvml_error_text(exc)}")
    for k in range(slots):
        try:
            mh = nvml.nvmlDeviceGetMigDeviceHandleByIndex(h, k)
        except Exception as exc:
            if getattr(exc, "value", None) != 6:  # NOT_FOUND: empty slot
                g.notes.append(f"MIG device {k}: {_nvml_error_text(exc)}")
            continue
        g.instances.append(_nvml_instance(nvml, h, mh, k, g.notes))
    if not g.instances:
        g.notes.append("MIG is enabled but no GPU instance exists (create some with nvidia-smi mig -cgi ... -C)")
    # the driver's own profile table (ID, slices, count, SMs, memory) and placements
    n_profiles = int(getattr(nvml, "NVML_GPU_INSTANCE_PROFILE_COUNT", 0))
    denied = False
    for pidx in range(n_profiles):
        info = None
        for args in ((h, pidx), (h, pidx, 1)):  # v2 (with the name) first, v1 for older drivers
            try:
                info = nvml.nvmlDeviceGetGpuInstanceProfileInfo(*args)
                break
            except Exception as exc:
                if getattr(exc, "value", None) == 4:
                    denied = True
                if getattr(exc, "value", None) != 13:  # only FUNCTION_NOT_FOUND is worth the v1 retry
                    break
        if info is None:
            continue  # profiles this GPU does not have answer NOT_SUPPORTED / INVALID_ARGUMENT
        row = {"id": int(info.id), "name": profile_from_device_name("MIG " + (_text(getattr(info, "name", b""))
                                                                               or "")),
               "slices": int(info.sliceCount), "max_count": int(info.instanceCount),
               "sm_count": int(info.multiprocessorCount), "memory_mib": int(info.memorySizeMB), "placements": None}
        try:
            row["placements"] = _nvml_placements(nvml, h, int(info.id))
        except Exception as exc:
            g.notes.append(f"placements of profile {row['id']}: {_nvml_error_text(exc)}")
        g.driver_profiles.append(row)
    if denied:
        g.notes.append("profile table: insufficient permissions")
    return g


def _nvml_placements(nvml: Any, h: Any, profile_id: int) -> list[tuple[int, int]]:
    import ctypes

    arr = (nvml.c_nvmlGpuInstancePlacement_t * 16)()
    count = ctypes.c_uint(16)
    nvml.nvmlDeviceGetGpuInstancePossiblePlacements(h, profile_id, arr, ctypes.byref(count))
    return [(int(arr[i].start), int(arr[i].size)) for i in range(int(count.value))]


def _nvml_instance(nvml: Any, parent: Any, mh: Any, k: int, notes: list[str]) -> MigInstance:
    def ask(fn: str, *args: Any) -> Any:
        try:
            return getattr(nvml, fn)(*args)
        except Exception as exc:
            notes.append(f"MIG device {k} {fn}: {_nvml_error_text(exc)}")
            return None

    name = _text(ask("nvmlDeviceGetName", mh))
    attrs = ask("nvmlDeviceGetAttributes", mh)
    gi = ask("nvmlDeviceGetGpuInstanceId", mh)
    inst = MigInstance(index=k, name=name, profile=profile_from_device_name(name),
                       uuid=_text(ask("nvmlDeviceGetUUID", mh)), gpu_instance_id=gi,
                       compute_instance_id=ask("nvmlDeviceGetComputeInstanceId", mh),
                       sm_count=int(attrs.multiprocessorCount) if attrs is not None else None,
                       memory_bytes=int(attrs.memorySizeMB) * 2**20 if attrs is not None else None,
                       placement=None)
    if gi is not None:  # placement needs the GPU-instance handle, which may need privileges
        try:
            info = nvml.nvmlGpuInstanceGetInfo(nvml.nvmlDeviceGetGpuInstanceById(parent, gi))
            inst.placement = (int(info.placement.start), int(info.placement.size))
        except Exception as exc:
            notes.append(f"MIG device {k} placement: {_nvml_error_text(exc)}")
    return inst


def compare_with_driver(report: MigReport) -> list[dict[str, Any]]:
    """The book's table against the driver's, profile by profile, for every GPU with MIG enabled.

    Rows hold both values of SMs, maximum count and placements, and ``agree`` (True when every value the
    book has equals the driver's). Empty when no driver table could be read.
    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    rows = []
    for g in report.gpus:
        if not g.driver_profiles or not g.spec_name:
            continue
        try:
            t = table(g.spec_name)
        except ValueError:
            continue
        by_id = {p.profile_id: p for p in t.profiles}
        for d in g.driver_profiles:
            p = by_id.get(d["id"])
            book_pl = [(s, p.memory_slices) for s in p.starts] if p else None
            checks = []
            if p is not None:
                if p.sm_count is not None:
                    checks.append(p.sm_count == d["sm_count"])
                checks.append(p.max_count == d["max_count"])
                if d["placements"] is not None:
                    checks.append(sorted(book_pl) == sorted(d["placements"]))
            rows.append({"gpu": g.index, "id": d["id"], "driver_name": d["name"], "book_name": p.name if p else None,
                         "book_sms": p.sm_count if p else None, "driver_sms": d["sm_count"],
                         "book_max": p.max_count if p else None, "driver_max": d["max_count"],
                         "book_placements": book_pl, "driver_placements": d["placements"],
                         "agree": bool(p is not None and all(checks))})
    return rows


# ---------------------------------------------------------------------------------------------------------
# Measure the device this process runs on (a whole GPU, or the MIG instance it was given)
# ---------------------------------------------------------------------------------------------------------


def measure_instance(device: Any = None, quick: bool = False, info: Any = None) -> dict[str, Any]:
    """Matmul throughput and copy bandwidth of the current device, next to the model of its MIG profile.

    Inside a MIG instance (``probe().mig_instance``, e.g. "1g.5gb") the model is :func:`instance_peaks` of
    that profile: 14 SMs of compute and 1/8 of the HBM bandwidth for a 1g.5gb. On a whole GPU the model is
    the GPU's datasheet peak. On the CPU the two kernels run with tiny sizes (to exercise the code) and no
    model is compared. Chapter: *Multi-Instance GPU*, section "On a real GPU".
    """
    import torch

    from . import device as dev
    from . import timing

    info = info or dev.probe()
    device = torch.device(device) if device is not None else dev.torch_device(info)
    cuda = device.type == "cuda"
    n = (2048 if quick else 4096) if cuda else 128
    dtype = torch.bfloat16 if (cuda and info.bf16_tensor) else torch.float32
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(n, n, generator=gen).to(device=device, dtype=dtype)
    b = torch.randn(n, n, generator=gen).to(device=device, dtype=dtype)
    c = torch.empty(n, n, device=device, dtype=dtype)
    mm = timing.benchmark(lambda: torch.matmul(a, b, out=c), label=f"matmul {n}^3 {str(dtype)[6:]}",
                          device=device, warmup_s=(0.3 if quick else 1.0) if cuda else None,
                          params={"n": n, "dtype": str(dtype)})
    # 256 MiB even in quick mode: the copy's footprint (2 x 256 MiB) must dwarf the L2 (60 MiB on an H200)
    nbytes = 256 * 2**20 if cuda else 4 * 2**20
    src = torch.randn(nbytes // 4, generator=gen).to(device)
    dst = torch.empty_like(src)
    cp = timing.benchmark(lambda: dst.copy_(src), label=f"copy {nbytes / 2**20:.0f} MiB", device=device,
                          flush_l2=cuda, l2_bytes=info.l2_bytes, params={"bytes": nbytes})
    out: dict[str, Any] = {"device": info.label() if cuda else f"cpu ({info.name})", "profile": info.mig_instance,
                           "matmul": mm, "copy": cp, "flops_per_s": mm.rate(2.0 * n**3),
                           "copy_bytes_per_s": cp.rate(2.0 * nbytes),  # a copy reads N and writes N bytes
                           "model": None, "flops_ratio": None, "bandwidth_ratio": None, "notes": []}
    if not cuda:
        out["notes"].append("CPU: tiny sizes exercise the code path; no GPU model to compare with")
        return out
    spec = info.spec
    if spec is None:
        out["notes"].append(f"{info.name} is not in the catalogue: no model to compare with")
        return out
    try:
        model = instance_peaks(spec, info.mig_instance, "bf16" if dtype == torch.bfloat16 else "fp32")
    except ValueError as exc:
        out["notes"].append(str(exc))
        return out
    out["model"] = model
    out["flops_ratio"] = out["flops_per_s"] / model["flops"]
    out["bandwidth_ratio"] = out["copy_bytes_per_s"] / model["hbm_bytes_per_s"]
    if info.sm_count and model["sms"] != info.sm_count:
        out["notes"].append(f"the device reports {info.sm_count} SMs, the table says {model['sms']}")
    return out


def bench_main(argv: Sequence[str] | None = None) -> int:
    """``python -m ampere bench mig``: record the NVML MIG report and measure this device (or instance).

    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    from . import benchcli, results
    from . import device as dev

    p = benchcli.bench_parser("mig", "Read MIG state through NVML and measure the GPU or MIG instance this "
                                "process runs on (matmul and copy), next to the model of its profile.")
    args = p.parse_args(list(argv or []))
    info = dev.probe()
    report = nvml_mig_report(device_name=info.name if info.is_gpu else None)
    meas = measure_instance(quick=args.quick, info=info)
    records = []
    for key, amount_key in (("matmul", "flops_per_s"), ("copy", "copy_bytes_per_s")):
        m = meas[key]
        records.append({"params": {"kernel": key, **m.params}, "measurement": m.to_dict(),
                        "derived": {amount_key: meas[amount_key],
                                    "model": None if meas["model"] is None else
                                    (meas["model"]["flops"] if key == "matmul" else meas["model"]["hbm_bytes_per_s"]),
                                    "ratio": meas["flops_ratio"] if key == "matmul" else meas["bandwidth_ratio"]}})
    records.append({"params": {"what": "nvml_mig_report"}, "derived": report.to_dict()})
    agree = compare_with_driver(report)
    if agree:
        records.append({"params": {"what": "book_vs_driver_profiles"}, "derived": {"rows": agree}})
    result = results.make_result("mig", info, {"quick": bool(args.quick), "profile": info.mig_instance},
                                 records, notes=meas["notes"] + report.notes)
    lines = [report.summary(), str(meas["matmul"]), str(meas["copy"])]
    if meas["model"]:
        lines.append(f"matmul {meas['flops_per_s'] / 1e12:.1f} TFLOP/s = {meas['flops_ratio']:.0%} of the model; "
                     f"copy {meas['copy_bytes_per_s'] / 1e9:.0f} GB/s = {meas['bandwidth_ratio']:.0%} of the model")
    return benchcli.finish_bench(result, args, "\n".join(lines))


# ---------------------------------------------------------------------------------------------------------
# Economics: seven small models on one A100, or on seven cards
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PriceQuote:
    """A rental price as a seed article prints it, dated. Prices move: these are inputs, not facts."""

    label: str
    gpu: str  # catalogue name of the GPU rented
    gpus: int  # GPUs in the priced unit (8 for an 8-GPU cloud instance)
    low_usd_per_h: float
    high_usd_per_h: float
    as_of: str  # when the article quotes the price
    kind: str
    source: str  # bib key of the article
    note: str = ""

    @property
    def per_gpu(self) -> tuple[float, float]:
        return (self.low_usd_per_h / self.gpus, self.high_usd_per_h / self.gpus)


CLOUD_PRICES: tuple[PriceQuote, ...] = (
    PriceQuote("A100 80GB (one GPU)", "A100-SXM4-80GB", 1, 0.96, 2.29, "2026", "cloud range, marketplace to "
               "hyperscaler", "seed003"),
    PriceQuote("RTX A6000 (one GPU)", "RTX-A6000", 1, 0.33, 0.80, "2026", "cloud range", "seed003"),
    PriceQuote("RTX A2000 12GB (one GPU)", "RTX-A2000-12GB", 1, 0.10, 0.25, "2026", "cloud range", "seed003"),
    PriceQuote("AWS p4d.24xlarge (8 x A100 40GB)", "A100-SXM4-40GB", 8, 32.77, 32.77, "2023", "on demand, US",
               "seed000"),
    PriceQuote("AWS p4de.24xlarge (8 x A100 80GB)", "A100-SXM4-80GB", 8, 40.97, 40.97, "2023", "on demand, US",
               "seed000"),
    PriceQuote("Google Cloud a2-ultragpu-8g (8 x A100 80GB)", "A100-SXM4-80GB", 8, 40.22, 40.22, "2023",
               "on demand, US", "seed000"),
    PriceQuote("Azure NDm A100 v4 (8 x A100 80GB)", "A100-SXM4-80GB", 8, 32.77, 32.77, "2023", "on demand, US",
               "seed000", note="the article marks this price as an estimate"),
)


def hours_for_budget(budget_usd: float, low_usd_per_h: float, high_usd_per_h: float) -> tuple[float, float]:
    """Hours a budget buys at the high and at the low price (seed 003's "heures pour 100 $" column).

    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    if budget_usd <= 0 or low_usd_per_h <= 0 or high_usd_per_h < low_usd_per_h:
        raise ValueError(f"budget_usd={budget_usd!r} must be > 0 and 0 < low_usd_per_h={low_usd_per_h!r} "
                         f"<= high_usd_per_h={high_usd_per_h!r}")
    return budget_usd / high_usd_per_h, budget_usd / low_usd_per_h


@dataclass(frozen=True)
class ServingOption:
    """One way to serve ``models`` small models, with its hourly cost range and per-model capacity."""

    label: str
    cards: str  # what is rented
    usd_per_h: tuple[float, float]  # whole deployment, low..high
    per_model_usd_per_h: tuple[float, float]
    per_model_sms: int
    per_model_hbm_bytes_per_s: float
    per_model_memory_bytes: float
    service_ms: float  # one request alone on its share
    capacity_per_s: float  # requests/s per model at the utilisation cap
    feasible: bool  # capacity covers the demand
    usd_per_million: tuple[float, float]  # cost of a million requests at the given demand
    price_source: str
    price_as_of: str


def serving_costs(demand_per_s: float = 100.0, models: int = 7, max_utilization: float = 0.7,
                  workload: Workload | None = None, config: SimConfig | None = None,
                  prices: Sequence[PriceQuote] = CLOUD_PRICES) -> list[ServingOption]:
    """Serve ``models`` copies of ``workload`` at ``demand_per_s`` each: one A100 with MIG, or seven cards.

    Capacity per model is ``max_utilization / service_time`` with the isolation model's service time on
    each model's share (a whole card, or one 1g.10gb instance of an A100 80GB). Cost per million requests
    = hourly cost / (models x demand x 3600) x 1e6, whatever the utilisation. Chapter: *Multi-Instance GPU*,
    section "What it costs".
    """
    if models < 1 or demand_per_s <= 0 or not 0 < max_utilization <= 1:
        raise ValueError(f"models={models!r} must be >= 1, demand_per_s={demand_per_s!r} > 0 and "
                         f"max_utilization={max_utilization!r} in (0, 1]")
    base = config or SimConfig()
    w = workload or default_tenants("quiet", base)[0]
    quote = {q.gpu: q for q in prices if q.gpus == 1}
    eight = [q for q in prices if q.gpus == 8 and q.gpu == "A100-SXM4-80GB"]
    rows = []

    def option(label: str, cards: str, gpu: str, count: int, per_gpu: tuple[float, float], source: str,
               as_of: str, mig: str | None) -> ServingOption:
        cfg = SimConfig(**{**asdict(base), "gpu": gpu})
        spec = cfg.spec
        if mig:
            p = profile(spec, mig)
            sms, bw, mem = p.sm_count or 0, cfg.hbm_bytes_per_s * float(p.memory_fraction), \
                spec.memory_bytes * float(p.memory_fraction)
        else:
            sms, bw, mem = spec.sm_count, cfg.hbm_bytes_per_s, spec.memory_bytes
        t = service_time(w, sms, bw, cfg.pcie_bytes_per_s, cfg)
        cap = max_utilization / t
        cost = (per_gpu[0] * count, per_gpu[1] * count)
        per_million = tuple(c / (models * demand_per_s * 3600) * 1e6 for c in cost)
        return ServingOption(label, cards, cost, (cost[0] / models, cost[1] / models), int(sms), bw, mem, t * 1e3,
                             cap, cap >= demand_per_s, per_million, source, as_of)  # type: ignore[arg-type]

    a100 = quote.get("A100-SXM4-80GB")
    if a100:
        rows.append(option(f"{models} x A100 80GB, one model each", f"{models} GPUs", a100.gpu, models,
                           a100.per_gpu, a100.source, a100.as_of, None))
        rows.append(option(f"1 x A100 80GB, {models} x 1g.10gb (MIG)", "1 GPU", a100.gpu, 1, a100.per_gpu,
                           a100.source, a100.as_of, "1g.10gb"))
    if eight:
        lo = min(q.per_gpu[0] for q in eight)
        hi = max(q.per_gpu[1] for q in eight)
        rows.append(option(f"1/8 of an 8-GPU cloud instance, {models} x 1g.10gb (MIG)", "1 GPU of 8",
                           "A100-SXM4-80GB", 1, (lo, hi), eight[0].source, eight[0].as_of, "1g.10gb"))
    for gpu, short in (("RTX-A6000", "RTX A6000"), ("RTX-A2000-12GB", "RTX A2000 12GB")):
        q = quote.get(gpu)
        if q:
            rows.append(option(f"{models} x {short}, one model each", f"{models} GPUs", gpu, models, q.per_gpu,
                               q.source, q.as_of, None))
    return rows
