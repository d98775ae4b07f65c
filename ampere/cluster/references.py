"""NVIDIA's DGX SuperPOD reference architectures as fat-tree parameters, and their published component tables.

Chapter: *DGX A100 and the SuperPOD -- from one box to Selene* (book/dgx-superpod.ipynb), sections "Four
generations of SuperPOD", "Which counts are published" and "How big can a fat tree get?". The designs
(``ampere/data/tables/superpod-designs.json``: DGX A100 [nvidia2020superpod], DGX H100
[nvidia2023superpodh100], DGX B200 [nvidia2025superpodb200], DGX B300 with Quantum-X800
[nvidiasuperpodb300xdr]) give SU size, rails, switch radix and port rate; :func:`reference_fabric`
builds each with :func:`.fabric.fat_tree`, and :func:`compare_counts` puts the model beside every row of
every published component table. Nothing published is typed here: the numbers are read from ``ampere/data``.
Pure Python: no torch, no matplotlib.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import check, fabrics, results
from .. import fields as _fields
from .checks import _check_int
from .fabric import (MAX_RAILS, MAX_SWITCH_PORTS, Fabric, fat_tree, fat_tree_max_ports, three_level_max_nodes,
                     two_level_max_nodes)

_DESIGNS = "superpod-designs"


@dataclass(frozen=True)
class ReferenceDesign:
    """One DGX SuperPOD reference architecture as fat-tree parameters (chapter section "Four generations")."""

    id: str
    name: str
    year: int | None
    system: str  # "DGX A100", "DGX H100", ...
    gpus_per_node: int
    rails: int  # compute (InfiniBand) ports per node, one per GPU
    su_nodes: int  # nodes per scalable unit
    switch: str
    switch_ports: int  # radix
    port_bytes_per_s: float  # per direction
    reference_nodes: int  # the size the document describes in detail
    counts_table: str  # name of the component table in ampere/data/tables ("" when none was retrieved)
    counts_where: str  # where in the source that table is
    source: str  # bib key of the reference architecture
    where: str
    switch_source: str
    note: str = ""

    def __post_init__(self) -> None:
        _fields.check_annotated(self, positive=("gpus_per_node", "rails", "su_nodes", "switch_ports", "port_bytes_per_s",
                                              "reference_nodes", "year"),
                              maxima={"gpus_per_node": fabrics.MAX_GPUS_PER_NODE, "rails": MAX_RAILS,
                                      "su_nodes": MAX_SWITCH_PORTS, "switch_ports": MAX_SWITCH_PORTS,
                                      "port_bytes_per_s": fabrics.MAX_BYTES_PER_S, "year": 2100,
                                      "reference_nodes": fabrics.MAX_GPUS},
                              allow_empty=("note", "counts_table", "counts_where", "where", "switch_source"))

    def fabric(self, nodes: int | None = None, **kwargs: Any) -> Fabric:
        """:func:`.fabric.fat_tree` with this design's rails, SU size, radix and port rate (default: the
        reference size). Extra keyword arguments (``optical_tiers``, ``uplinks_per_leaf``) pass through."""
        n = self.reference_nodes if nodes is None else _check_int(nodes, "nodes",
                                                                  maximum=fabrics.MAX_GPUS // self.gpus_per_node)
        return fat_tree(n, rails=self.rails, su_nodes=self.su_nodes, switch_ports=self.switch_ports,
                        port_bytes_per_s=self.port_bytes_per_s, **kwargs)


@dataclass(frozen=True)
class ReferenceCounts:
    """One row of a published SuperPOD component-count table (chapter section "Which counts are published").

    ``None`` marks a column the table does not have (the two-level tables have no core column)."""

    design: str  # ReferenceDesign.id
    scalable_units: int
    nodes: int
    gpus: int
    leaf_switches: int
    spine_switches: int
    core_switches: int | None
    node_leaf_cables: int
    leaf_spine_cables: int
    spine_core_cables: int | None
    source: str
    where: str

    def __post_init__(self) -> None:
        _fields.check_annotated(self, positive=("scalable_units", "nodes", "gpus"), allow_empty=("where",))


_CACHE: dict[str, Any] = {}


def reference_designs() -> tuple[ReferenceDesign, ...]:
    """Every reference architecture of ``superpod-designs.json``, oldest first."""
    if "designs" not in _CACHE:
        out = []
        for r in results.table(_DESIGNS)["rows"]:
            out.append(ReferenceDesign(
                id=r["id"], name=r["name"], year=r["year"], system=r["system"], gpus_per_node=r["gpus_per_node"],
                rails=r["rails"], su_nodes=r["su_nodes"], switch=r["switch"], switch_ports=r["switch_ports"],
                port_bytes_per_s=r["port_gbit_per_s"] * 1e9 / 8, reference_nodes=r["reference_nodes"],
                counts_table=r["counts_table"], counts_where=r["counts_where"], source=r["source"], where=r["where"],
                switch_source=r["switch_source"], note=r.get("note", "")))
        _CACHE["designs"] = tuple(out)
    return _CACHE["designs"]


def reference_design(design_id: str) -> ReferenceDesign:
    """The design with this id (``"dgx-a100"``, ``"dgx-h100"``, ``"dgx-b200"``, ``"dgx-b300-xdr"``)."""
    designs = reference_designs()
    check.one_of("design_id", design_id, [d.id for d in designs])
    return next(d for d in designs if d.id == design_id)


def reference_counts(design_id: str | None = None) -> tuple[ReferenceCounts, ...]:
    """Rows of the published component tables (all designs, or one), read from ``ampere/data/tables``."""
    designs = reference_designs() if design_id is None else (reference_design(design_id),)
    rows = []
    for d in designs:
        if not d.counts_table:
            continue
        table = results.table(d.counts_table)
        for r in table["rows"]:
            rows.append(ReferenceCounts(design=d.id, source=table["source"], where=d.counts_where, **r))
    return tuple(rows)


def b200_reference() -> tuple[ReferenceCounts, ...]:
    """The DGX B200 SuperPOD table "Larger DGX SuperPOD component counts" [nvidia2025superpodb200]."""
    return reference_counts("dgx-b200")


def reference_fabric(row: ReferenceCounts) -> Fabric:
    """The model's fabric for the size of one published row (its node count, its design's parameters)."""
    if not isinstance(row, ReferenceCounts):
        raise TypeError(f"row must be a ReferenceCounts (from reference_counts()), got {row!r}")
    return reference_design(row.design).fabric(row.nodes)


def compare_counts(row: ReferenceCounts) -> dict[str, Any]:
    """Model beside one published row: ``{"fields": {name: (model, published)}, "match": bool, "notes": [...]}``.

    Compared: scalable units, leaf, spine and core switches (where the table has them), node-leaf,
    leaf-spine and spine-core cables, and the GPU count (nodes x GPUs per node). Two published quirks are
    reported, not hidden: a node-leaf column that also counts UFM cables (DGX H100: the difference must
    fit in the ports of the DGX the SU leaves out), and a GPU count inconsistent with its own row.
    """
    f = reference_fabric(row)
    d = reference_design(row.design)
    fields: dict[str, tuple[int, int]] = {
        "scalable_units": (f.populated_scalable_units, row.scalable_units),
        "leaf_switches": (f.leaf_switches, row.leaf_switches),
        "spine_switches": (f.spine_switches, row.spine_switches),
        "leaf_spine_cables": (f.cables["leaf_spine"], row.leaf_spine_cables),
    }
    if row.core_switches is not None:
        fields["core_switches"] = (f.core_switches, row.core_switches)
    elif f.core_switches:
        fields["core_switches"] = (f.core_switches, 0)
    if row.spine_core_cables is not None:
        fields["spine_core_cables"] = (f.cables["spine_core"], row.spine_core_cables)
    notes = []
    extra = row.node_leaf_cables - f.cables["node_leaf"]
    free_ports = (f.populated_scalable_units * d.su_nodes - row.nodes) * d.rails
    if 0 < extra <= free_ports:
        notes.append(f"node-leaf cables include {extra} that are not DGX ports (the column counts UFM cables too; "
                     f"they fit in the {free_ports} ports of the node slots the table leaves empty)")
        fields["node_leaf_cables"] = (f.cables["node_leaf"] + extra, row.node_leaf_cables)
    else:
        fields["node_leaf_cables"] = (f.cables["node_leaf"], row.node_leaf_cables)
    gpus = row.nodes * d.gpus_per_node
    gpu_ok = gpus == row.gpus
    if not gpu_ok:
        notes.append(f"the table prints {row.gpus} GPUs for {row.nodes} nodes; {row.nodes} x {d.gpus_per_node} = "
                     f"{gpus}, and its own node-leaf cables say {row.node_leaf_cables}: a misprint in the table")
    match = all(m == p for m, p in fields.values())
    return {"fields": fields, "match": match, "gpus": (gpus, row.gpus), "gpus_consistent": gpu_ok, "notes": notes}


def design_limits(design: ReferenceDesign) -> dict[str, int]:
    """How far each design's switches go: two-level and three-level node limits of :func:`fat_tree`, the
    textbook ``k^3/4`` ports divided by the rails, and the largest size of the published table."""
    if not isinstance(design, ReferenceDesign):
        raise TypeError(f"design must be a ReferenceDesign (from reference_designs()), got {design!r}")
    rows = reference_counts(design.id)
    return {"two_level_nodes": two_level_max_nodes(design.rails, design.su_nodes, design.switch_ports),
            "three_level_nodes": three_level_max_nodes(design.rails, design.su_nodes, design.switch_ports),
            "textbook_nodes": fat_tree_max_ports(design.switch_ports, 3) // design.rails,
            "largest_published_nodes": max((r.nodes for r in rows), default=0),
            "reference_nodes": design.reference_nodes}


def check_all() -> tuple[list[str], bool]:
    """Every published row against the model: report lines and whether all switch and cable counts match."""
    lines, ok = [], True
    for row in reference_counts():
        c = compare_counts(row)
        ok &= c["match"]
        got = {k: v[0] for k, v in c["fields"].items()}
        want = {k: v[1] for k, v in c["fields"].items()}
        lines.append(f"{row.design} {row.scalable_units:2d} SU ({row.nodes} nodes): "
                     f"{'ok' if c['match'] else f'MISMATCH model {got} vs published {want}'}"
                     + "".join(f"; note: {n}" for n in c["notes"]))
    return lines, ok

