"""MIG geometry: placements and layouts, what a layout uses and strands. Pure Python.

Chapter: *Multi-Instance GPU — one A100, seven tenants* (book/mig.ipynb), sections "Layouts" and "Every way
to cut an A100". No torch, no matplotlib. The old path ``ampere.mig_geometry`` is this module: it
re-exports the profile tables of :mod:`ampere.mig.profile_tables` (profiles, :func:`instance_peaks`,
:func:`doc_conflicts`), so its ``__all__`` is the whole geometry model that the isolation simulator
(:mod:`ampere.mig.sim`), the chapter's views and the reference check (``report``) build on.

A *layout* is a list of ``(profile_name, start_slot)`` pairs, start slots being memory-slice indices as
``nvidia-smi mig -lgipp`` prints them; :func:`validate` checks it and :func:`enumerate_layouts` lists every
*maximal* layout (one to which no further instance can be added).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from .. import check, specs
from ..fields import check_fields
from .profile_tables import (COMPUTE_SLICES, MEMORY_SLICES, DocConflict, InstancePeaks, MigTable, Profile,
                             doc_conflicts, instance_peaks, mig_gpus, profile, profile_from_device_name, profiles,
                             smallest_profile, table)

__all__ = [
    "MEMORY_SLICES", "COMPUTE_SLICES", "Profile", "MigTable", "Placement", "LayoutUsage", "LayoutRow",
    "DocConflict", "InstancePeaks", "mig_gpus", "table", "profiles", "profile", "placement", "validate",
    "addable", "enumerate_layouts", "place", "usage", "format_layout", "layouts_arg", "layout_maps", "layout_rows",
    "doc_conflicts", "instance_peaks", "profile_from_device_name", "smallest_profile",
]


# ---------------------------------------------------------------------------------------------------------
# Placements and layouts
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Placement:
    """One GPU instance: a profile placed at a start slot, with the slices it takes."""

    FIELD_RULES = {"bounds": {"start": (0, 7)}}  # the checks of fields.check_fields

    profile: Profile
    start: int
    memory: frozenset[int]
    compute: frozenset[int]

    def __post_init__(self) -> None:
        if not isinstance(self.profile, Profile):
            raise TypeError(f"Placement.profile must be a Profile (from mig.profile), got {self.profile!r:.60}")
        check_fields(self)
        for name in ("memory", "compute"):
            v = getattr(self, name)
            if not isinstance(v, (set, frozenset)) or not v:
                raise TypeError(f"Placement.{name} must be a non-empty set of slice indices, got {v!r:.60}")
            object.__setattr__(self, name, frozenset(check.bounded_int(f"Placement.{name}[i]", i, 0, 7,
                                                                        why="slice indices of one GPU") for i in v))

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
        for i, n in enumerate(names):
            try:
                profile(gpu, n)  # raises for unknown names
            except (ValueError, TypeError) as exc:
                raise type(exc)(f"profiles[{i}]: {exc}") from None
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

    def name_item(field: str, value: Any) -> str:
        try:
            return profile(gpu, value).name
        except (ValueError, TypeError) as exc:
            raise type(exc)(f"{field}: {exc}") from None

    names = check.sequence("names", names, name_item, max_len=64)
    items = sorted((profile(gpu, n) for n in names), key=lambda p: (-p.memory_slices, -p.compute_slices, p.name))
    fail = ValueError(f"names: profiles {names} cannot coexist on {t.key}: no placement of them is valid")
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
    FIELD_RULES = {"bounds": {"sms_used": (0, 1024), "mig_sms": (0, 1024), "total_sms": (1, 1024)}}  # the checks of fields.check_fields


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

    def __post_init__(self) -> None:
        check_fields(self)

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
        check.string(f"layout[{i}] profile name", entry[0])
        check.integer(f"layout[{i}] start slot", entry[1], minimum=0, maximum=7)
        parts.append(f"{entry[0]}@{entry[1]}")
    return " + ".join(parts) or "(empty)"


def layouts_arg(layouts: Any) -> list[Any]:
    """``layouts`` as a list of layouts, or ``TypeError`` (a list of layouts, each a list of pairs).

    Chapter: *Multi-Instance GPU*, "Every way to cut an A100" (the tables and figures of many layouts).
    """
    if isinstance(layouts, (str, bytes)) or not isinstance(layouts, Iterable):
        raise TypeError(f"layouts must be a list of layouts (each a list of (profile, start) pairs); got {layouts!r}")
    return list(layouts)


def _usages(gpu: str | specs.GPUSpec, layouts: Any, profiles: Sequence[str] | None) -> list[LayoutUsage]:
    """:func:`usage` of every layout of ``layouts``; an invalid one is refused naming ``layouts[k]``."""
    out = []
    for k, lay in enumerate(layouts_arg(layouts)):
        try:
            out.append(usage(gpu, lay, profiles))
        except (ValueError, TypeError) as exc:
            if str(exc).startswith(("gpu", "profiles")):
                raise
            raise type(exc)(f"layouts[{k}]: {exc}") from None
    return out


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
    FIELD_RULES = {"bounds": {"n": (1, 10**6), "instances": (0, 8), "sms": (0, 1024), "stranded_memory": (0, 8), "stranded_compute": (0, 8)}}  # the checks of fields.check_fields


    n: int
    layout: str
    instances: int
    memory: str  # 8 characters, one per memory slice
    compute: str  # 7 characters, one per compute slice
    sms: int | None
    stranded_memory: int
    stranded_compute: int

    def __post_init__(self) -> None:
        check_fields(self)


def layout_rows(gpu: str | specs.GPUSpec, layouts: Sequence[Iterable[Any]],
                profiles: Sequence[str] | None = None) -> list[LayoutRow]:
    """One :class:`LayoutRow` per layout (for tables and tests).

    Stranded means no instance of ``profiles`` (default: all of the GPU's) could use the slice.
    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    rows = []
    for i, u in enumerate(_usages(gpu, layouts, profiles), 1):
        mem, comp = _maps(u)
        rows.append(LayoutRow(n=i, layout=format_layout(u.layout), instances=u.instances, memory=mem,
                              compute=comp, sms=u.sms_used, stranded_memory=len(u.stranded_memory),
                              stranded_compute=len(u.stranded_compute)))
    return rows
