"""Reading NCCL's own account of what it built: NCCL_DEBUG=INFO lines, and the troubleshooting table.

Chapter: *NVLink, NVSwitch and collectives* (book/nvlink.ipynb), section "When the bandwidth is low".

* :func:`parse_nccl_log` reads the lines an engineer looks at -- the NCCL version, the network plugin,
  ``Channel xx/yy : r0 r1 ...`` (one ring per channel), ``Trees [c] a/b/c->r->p``, ``Channel xx : a[..] ->
  b[..] via P2P/IPC`` or ``via NET/<plugin>/<nic>/GDRDMA`` (one connection), ``N coll channels`` -- into a
  :class:`NcclLog`;
* :func:`ring_rails` says, for each ring, where it crosses between nodes and through which adapter;
* :func:`log_excerpt` is a published excerpt (``ampere/data/tables/nccl-log-excerpt.json``) and
  :func:`troubleshooting_rows` the symptom -> log line -> cause -> fix table
  (``nccl-troubleshooting.json``), each row with its source.

Pure Python: no torch, no matplotlib.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from .. import check, fabrics, results
from .. import fields as _fields

_RING = re.compile(r"Channel (\d+)/(\d+) :((?:\s+\d+)+)\s*$")
_CONN = re.compile(r"Channel (\d+)(?:/\d+)? : (\d+)\[[0-9a-fx]+\] -> (\d+)\[[0-9a-fx]+\]"
                   r"(?: \[(send|receive)\])? via (\S+(?: \S+)*?)\s*$")
_TREES = re.compile(r"\[(\d+)\]\s+(-?\d+)/(-?\d+)/(-?\d+)->(-?\d+)->(-?\d+)")
_RANK_OF_LINE = re.compile(r"\[\d+,(\d+)\]<stdout>")


#: The most channels a log may describe (NCCL builds at most 64; 1,024 leaves room).
MAX_CHANNELS = 1024


@dataclass(frozen=True)
class Connection:
    """One connection of one channel, as NCCL logs it."""

    channel: int
    src: int
    dst: int
    transport: str  # "P2P/IPC/read", "NET/IB/0/GDRDMA", "SHM/direct" ...
    direction: str = ""  # "send", "receive" or "" (intra-node)

    def __post_init__(self) -> None:
        _fields.check_annotated(self, allow_empty=("direction",),
                              maxima={"channel": MAX_CHANNELS, "src": fabrics.MAX_GPUS, "dst": fabrics.MAX_GPUS})
        check.one_of("direction", self.direction, ("send", "receive", ""))

    @property
    def network(self) -> bool:
        return self.transport.startswith("NET/")

    @property
    def nic(self) -> int | None:
        """The adapter index of a network connection (``NET/<plugin>/<nic>/...``), else None."""
        if not self.network:
            return None
        m = re.search(r"/(\d+)(?:\(\d+\))?(?:/|$)", self.transport[4:])
        return int(m.group(1)) if m else None

    @property
    def gdr(self) -> bool:
        """True when the network connection reads and writes GPU memory directly (GPUDirect RDMA)."""
        return self.network and "/GDRDMA" in self.transport


@dataclass(frozen=True)
class NcclLog:
    """What :func:`parse_nccl_log` found; rings by channel, trees by (rank, channel)."""

    version: str = ""
    network: str = ""
    coll_channels: int | None = None
    rings: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    trees: Mapping[tuple[int, int], tuple[tuple[int, ...], int]] = field(default_factory=dict)
    connections: tuple[Connection, ...] = ()

    def __post_init__(self) -> None:
        _fields.check_annotated(self, maxima={"coll_channels": MAX_CHANNELS})
        if not all(isinstance(c, Connection) for c in self.connections):
            raise TypeError("connections must be a tuple of Connection")

    def transports(self) -> list[str]:
        """The distinct transports of the connections, sorted."""
        return sorted({c.transport for c in self.connections})

    def network_connections(self) -> list[Connection]:
        return [c for c in self.connections if c.network]


def parse_nccl_log(lines: str | Iterable[str]) -> NcclLog:
    """Parse NCCL_DEBUG=INFO output (a string or its lines; mpirun prefixes are fine).

    Chapter: *NVLink, NVSwitch and collectives*, "When the bandwidth is low". Tree entries
    ``[c] c1/c2/c3->r->p`` give rank r's children (``-1``: none) and parent in tree c; the rank is read from
    the line's mpirun tag ``[1,r]`` when there is one. Lines it does not know are ignored.
    """
    if isinstance(lines, str):
        lines = lines.splitlines()
    lines = check.sequence("lines", lines, lambda name, v: check.string(name, v, allow_empty=True), min_len=0,
                           max_len=1_000_000)
    version, network, coll = "", "", None
    rings: dict[int, tuple[int, ...]] = {}
    trees: dict[tuple[int, int], tuple[tuple[int, ...], int]] = {}
    conns: list[Connection] = []
    for raw in lines:
        if not isinstance(raw, str):
            raise TypeError(f"lines must be strings, got {raw!r} ({type(raw).__name__})")
        line = raw.rstrip()
        m = re.search(r"NCCL version (\S+)", line)
        if m:
            version = m.group(1)
            continue
        m = re.search(r"Using network (.+)$", line)
        if m:
            network = m.group(1).strip()
            continue
        m = re.search(r"(\d+) coll channels", line)
        if m:
            coll = int(m.group(1))
            continue
        m = _RING.search(line)
        if m:
            rings[int(m.group(1))] = tuple(int(x) for x in m.group(3).split())
            continue
        m = _CONN.search(line)
        if m:
            conns.append(Connection(int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(5), m.group(4) or ""))
            continue
        if "Trees" in line:
            tag = _RANK_OF_LINE.search(line)
            for t in _TREES.finditer(line):
                ch, c1, c2, c3, rank, parent = (int(x) for x in t.groups())
                rank = int(tag.group(1)) if tag else rank
                trees[(rank, ch)] = (tuple(c for c in (c1, c2, c3) if c >= 0), parent)
    return NcclLog(version, network, coll, rings, trees, tuple(conns))


def ring_rails(log: NcclLog, gpus_per_node: int) -> list[dict[str, Any]]:
    """For each ring of ``log``: the hops that cross between nodes and the adapter each uses.

    Chapter: *NVLink, NVSwitch and collectives*, "When the bandwidth is low". Ranks are numbered node by
    node (``gpus_per_node`` per node). A ring is rail-aligned (``True``) when all its crossings use one
    adapter index, not (``False``) when they use several, and ``None`` when the log has none of its
    network connections.
    """
    g = check.positive_int("gpus_per_node", gpus_per_node)
    if not isinstance(log, NcclLog):
        raise TypeError(f"log must be an NcclLog (from parse_nccl_log), got {log!r}")
    nic_of = {(c.channel, c.src, c.dst): c.nic for c in log.network_connections()}
    out = []
    for ch, ring in sorted(log.rings.items()):
        hops = list(zip(ring, ring[1:] + ring[:1]))
        cross = [(a, b) for a, b in hops if a // g != b // g]
        nics = [nic_of.get((ch, a, b)) for a, b in cross]
        known = sorted({x for x in nics if x is not None})
        aligned = None if not known else (len(known) == 1 and None not in nics)
        out.append({"channel": ch, "crossings": cross, "nics": known, "rail_aligned": aligned})
    return out


def log_excerpt() -> list[str]:
    """The published NCCL_DEBUG=INFO excerpt of the chapter (two p4d nodes, NCCL 2.8.3), verbatim lines."""
    return [r["line"] for r in results.table("nccl-log-excerpt")["rows"]]


def troubleshooting_rows(columns: str = "page") -> list[dict[str, str]]:
    """The rows of ``ampere/data/tables/nccl-troubleshooting.json`` (chapter "When the bandwidth is low").

    ``columns="page"``: symptom, the log line that shows it, and cause, fix and source (by its author-year
    label) in one cell, three columns that fit the page; ``columns="all"`` keeps the cause, the fix, the
    variable and the source apart.
    """
    from .. import views

    check.one_of("columns", columns, ("page", "all"))
    rows = []
    for r in results.table("nccl-troubleshooting")["rows"]:
        if columns == "all":
            rows.append({"symptom": r["symptom"], "what the log shows": r["log_line"], "cause": r["cause"],
                         "fix": r["fix"], "variable": r["variable"], "source": views.cite_label(r["source"])})
        else:
            rows.append({"symptom": r["symptom"], "what the log shows": r["log_line"],
                         "cause, fix (source)": f"{r['cause']}. Fix: {r['fix']} ({views.cite_label(r['source'])})"})
    return rows
