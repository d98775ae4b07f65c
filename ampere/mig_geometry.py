"""MIG geometry: profile tables (data), placements, layouts, what an instance owns. Pure Python, no torch.

Chapter: *Multi-Instance GPU — one A100, seven tenants* (book/mig.ipynb), sections "Slices", "Layouts" and
"Every way to cut an A100". A shared model layer: the isolation simulator (:mod:`ampere.mig_sim`), the
chapter module (:mod:`ampere.mig`) and the reference check (``report``) build on it.

In MIG mode an A100 is cut into **8 memory slices** (each 1/8 of the HBM capacity, of the DRAM bandwidth
and of the L2, with its memory controllers) and **7 compute slices** (one GPC each, 14 SMs on the A100: 98
of the 108 SMs are usable in MIG mode). A *GPU-instance profile* such as ``3g.20gb`` takes ``3`` compute
slices and a number of memory slices (4 for ``3g.20gb``) and may start only at the memory-slice indices
the driver lists (``nvidia-smi mig -lgipp``). A *layout* is a list of ``(profile_name, start_slot)``
pairs; :func:`validate` checks it and :func:`enumerate_layouts` lists every *maximal* layout (one to which
no further instance can be added).

The profile tables are published data: ``ampere/data/tables/mig-<gpu>.json``, one row per profile with
its bibliography key and the table it comes from (NVIDIA's MIG User Guide). The guide's tables disagree
with its own placement rules in a few rows; the rows keep what the guide prints (``doc_memory_fraction``,
``doc_l2_fraction``) next to what the placement implies (``memory_slices``) and :func:`doc_conflicts`
lists every disagreement.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Iterable, Mapping, Sequence

from . import check, results, specs

__all__ = [
    "MEMORY_SLICES", "COMPUTE_SLICES", "Profile", "MigTable", "Placement", "LayoutUsage", "LayoutRow",
    "DocConflict", "InstancePeaks", "mig_gpus", "table", "profiles", "profile", "placement", "validate",
    "addable", "enumerate_layouts", "place", "usage", "format_layout", "layouts_arg", "layout_maps", "layout_rows",
    "doc_conflicts", "instance_peaks", "profile_from_device_name", "smallest_profile",
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
                   sm_count_source=row.get("sm_count_source"), where=row.get("where", ""))


@dataclass(frozen=True)
class MigTable:
    """The MIG profile table of one GPU family (the GPUs of ``ampere.specs`` that share it are ``gpus``)."""

    key: str  # "A100-40GB", ...
    gpus: tuple[str, ...]  # catalogue names using this table
    profiles: tuple[Profile, ...]
    data_name: str  # the table in ampere/data/tables
    description: str = ""

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
    if not isinstance(name, str):
        raise TypeError(f"profile name must be a string, one of {', '.join(t.names)}; got {name!r}")
    return t.profile(name)


def smallest_profile(gpu: str | specs.GPUSpec) -> Profile:
    """The one-compute-slice, one-memory-slice profile without media extensions (1g.5gb on an A100 40GB,
    1g.10gb on an A100 80GB). Chapter: *Multi-Instance GPU*, "What it costs"."""
    return next(p for p in profiles(gpu) if p.compute_slices == 1 and p.memory_slices == 1
                and not p.media_extensions)


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
    allowed = ", ".join(map(str, p.starts))
    try:
        start = check.integer("start", start)
    except TypeError:
        raise ValueError(f"start={start!r} for {name} must be an integer memory-slice index; "
                         f"allowed starts: {allowed}") from None
    if start not in p.starts:
        raise ValueError(f"start={start} is not allowed for {name} on {table(gpu).key}; allowed starts: {allowed}")
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
            profile(gpu, n)  # raises for unknown names
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
    names = list(names)
    items = sorted((profile(gpu, n) for n in names), key=lambda p: (-p.memory_slices, -p.compute_slices, p.name))
    fail = ValueError(f"profiles {names} cannot coexist on {t.key}: no placement of them is valid")
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
            if search(i + 1):
                return True
            chosen.pop()
        return False

    if not search(0):
        raise fail
    return validate(gpu, [c.key for c in chosen])


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
    """``4g.20gb@0 + 3g.20gb@4`` (the pairs are not checked against a GPU: use :func:`validate` for that).

    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    if isinstance(layout, (str, bytes)) or not isinstance(layout, Iterable):
        raise TypeError(f"layout must be a list of (profile_name, start_slot) pairs; got {layout!r}")
    parts = []
    for i, entry in enumerate(layout):
        if isinstance(entry, Placement):
            entry = entry.key
        if isinstance(entry, (str, bytes)) or not isinstance(entry, Sequence) or len(entry) != 2:
            raise ValueError(f"layout[{i}]={entry!r} must be a (profile_name, start_slot) pair")
        parts.append(f"{entry[0]}@{entry[1]}")
    return " + ".join(parts) or "(empty)"


def layouts_arg(layouts: Any) -> list[Any]:
    """``layouts`` as a list of layouts, or ``TypeError`` (a list of layouts, each a list of pairs).

    Chapter: *Multi-Instance GPU*, "Every way to cut an A100" (the tables and figures of many layouts).
    """
    if isinstance(layouts, (str, bytes)) or not isinstance(layouts, Iterable):
        raise TypeError(f"layouts must be a list of layouts (each a list of (profile, start) pairs); got {layouts!r}")
    return list(layouts)


_LETTERS = "ABCDEFGH"


def layout_maps(gpu: str | specs.GPUSpec, layout: Iterable[Any],
                profiles: Sequence[str] | None = None) -> tuple[str, str]:
    """Two strings, memory slices (8 chars) and compute slices (7): instance letters, ``.`` for stranded,
    ``_`` for free slices that an instance of ``profiles`` (default: all) could still use.
    ``4g+3g`` gives ``("AAAABBBB", "AAAABBB")``.
    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    u = usage(gpu, layout, profiles)
    return _maps(u)


def _maps(u: LayoutUsage) -> tuple[str, str]:
    def row(owner: Sequence[int | None], stranded: Sequence[int]) -> str:
        return "".join(_LETTERS[o] if o is not None else ("." if i in stranded else "_")
                       for i, o in enumerate(owner))

    return row(u.memory_owner, u.stranded_memory), row(u.compute_owner, u.stranded_compute)


@dataclass(frozen=True)
class LayoutRow:
    """One layout as a table row: instances, slice maps, SMs in use, stranded slices."""

    n: int
    layout: str
    instances: int
    memory: str  # 8 characters, one per memory slice
    compute: str  # 7 characters, one per compute slice
    sms: int | None
    stranded_memory: int
    stranded_compute: int


def layout_rows(gpu: str | specs.GPUSpec, layouts: Sequence[Iterable[Any]],
                profiles: Sequence[str] | None = None) -> list[LayoutRow]:
    """One :class:`LayoutRow` per layout (for tables and tests).

    Stranded means no instance of ``profiles`` (default: all of the GPU's) could use the slice.
    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    rows = []
    for i, lay in enumerate(layouts_arg(layouts), 1):
        u = usage(gpu, lay, profiles)
        mem, comp = _maps(u)
        rows.append(LayoutRow(n=i, layout=format_layout(u.layout), instances=u.instances, memory=mem,
                              compute=comp, sms=u.sms_used, stranded_memory=len(u.stranded_memory),
                              stranded_compute=len(u.stranded_compute)))
    return rows


@dataclass(frozen=True)
class DocConflict:
    """A row where the MIG guide's printed fraction disagrees with the placement size."""

    gpu: str  # table key, e.g. "A100-40GB"
    profile: str
    column: str  # "memory" or "L2"
    printed: str  # what the guide prints
    implied_by_placement: str  # what the placement size says
    starts: str  # the placement rule, "{0,2,4,6}:2"


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

    gpu: str
    profile: str | None
    precision: str
    sms: int
    flops: float  # dense ``precision`` FLOP/s
    hbm_bytes_per_s: float
    memory_bytes: float
    l2_bytes: float

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
    if not isinstance(precision, str):
        raise TypeError(f"precision must be a string, one of {', '.join(spec.precisions())}; got {precision!r}")
    spec.peak_flops(precision)  # raises ValueError naming the precisions of this GPU
    if name is None:
        return InstancePeaks(spec.name, None, precision, spec.sm_count, spec.peak_flops(precision),
                             spec.hbm_bytes_per_s, spec.memory_bytes, spec.l2_bytes)
    p = profile(spec, name)
    if p.sm_count is None:
        raise ValueError(f"profile={name!r} on {spec.name}: no sourced SM count, so no compute peak; "
                         f"profiles with SM counts: {', '.join(q.name for q in profiles(spec) if q.sm_count)}")
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
