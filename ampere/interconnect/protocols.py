"""NCCL's protocols (LL, LL128, Simple) and channels, in NCCL's own cost model read as data.

Chapter: *NVLink, NVSwitch and collectives* (book/nvlink.ipynb), section "Protocols and channels".
NCCL chooses, for every collective and size, an algorithm (ring, tree ...) and a protocol by evaluating
``time = base latency + hops x hop latency + bytes / bandwidth`` for each pair and taking the fastest.
The constants of that model are in its source (``ampere/data/tables/nccl-tuning.json``, read in NCCL
2.30.7, Ampere rows). Here the model is evaluated for a ring all-reduce inside one node of A100s:

* :func:`protocols` -- the constants as :class:`Protocol` records, :func:`payload_rows` the line layouts;
* :func:`protocol_busbw` -- a protocol's bus bandwidth: LL half the link, capped at 87.7 GB/s; LL128
  0.92 of it, at most 20 GB/s per channel; Simple all of it;
* :func:`protocol_time`, :func:`best_protocol`, :func:`switch_points` -- time by protocol and size, the
  protocol NCCL's model picks, and the sizes where the pick changes;
* :func:`channels_needed` -- how many channels a bandwidth needs at a per-channel rate.

Pure Python: no torch, no matplotlib.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

from .. import check, fabrics, results
from .. import fields as _fields
from ..fabrics import A100_INTRA_BYTES_PER_S

#: NCCL's protocols, in the order NCCL numbers them.
PROTOCOLS: tuple[str, ...] = ("LL", "LL128", "Simple")
#: NCCL versions whose constants the table holds (all three protocols for the first).
VERSIONS: tuple[str, ...] = ("2.30.7", "2.8.4")


@dataclass(frozen=True)
class Protocol:
    """One (algorithm, protocol) row of NCCL's cost model; latencies in seconds, bandwidths in bytes/s."""

    name: str
    algorithm: str
    version: str
    base_latency_s: float
    nvlink_hop_s: float
    net_hop_s: float
    busbw_factor: float  # of the channels' bandwidth
    busbw_cap: float  # bytes/s, inf when none
    per_channel_cap: float  # bytes/s per channel, inf when none
    source: str

    def __post_init__(self) -> None:
        _fields.check_annotated(self, positive=("busbw_factor", "busbw_cap", "per_channel_cap"),
                              infinite=("busbw_cap", "per_channel_cap"), allow_empty=False,
                              maxima={"base_latency_s": fabrics.MAX_LATENCY_S, "nvlink_hop_s": fabrics.MAX_LATENCY_S,
                                      "net_hop_s": fabrics.MAX_LATENCY_S, "busbw_factor": 1.0})
        check.one_of("name", self.name, PROTOCOLS)
        check.one_of("algorithm", self.algorithm, ("ring", "tree"))
        check.one_of("version", self.version, VERSIONS)


def protocols(algorithm: str = "ring", version: str = "2.30.7") -> dict[str, Protocol]:
    """NCCL's constants for ``algorithm`` ("ring" or "tree") in ``version``, by protocol name.

    Chapter: *NVLink, NVSwitch and collectives*, "Protocols and channels". Read from the table
    ``nccl-tuning`` (NCCL's ``src/graph/tuning.cc``). NCCL 2.8.4 (the version of the ABCI logs) is kept for
    the ring LL row only.
    """
    check.one_of("algorithm", algorithm, ("ring", "tree"))
    check.one_of("version", version, VERSIONS)
    out = {}
    for r in results.table("nccl-tuning")["rows"]:
        if r["kind"] != "latency" or r["algorithm"] != algorithm or r["version"] != version:
            continue
        out[r["protocol"]] = Protocol(
            r["protocol"], algorithm, version, r["base_latency_us"] * 1e-6, r["nvlink_hop_us"] * 1e-6,
            r["net_hop_us"] * 1e-6, float(r["busbw_factor"]),
            math.inf if r["busbw_cap_gb_per_s"] is None else r["busbw_cap_gb_per_s"] * 1e9,
            math.inf if r["per_channel_cap_gb_per_s"] is None else r["per_channel_cap_gb_per_s"] * 1e9, r["source"])
    if not out:
        raise ValueError(f"no {algorithm} rows for NCCL {version} in the nccl-tuning table")
    return out


def nccl_constant(name: str) -> float:
    """A constant of the ``nccl-tuning`` table by name (its unit is in the name), e.g. ``nvlink_link_gb_per_s``."""
    rows = {r["name"]: r for r in results.table("nccl-tuning")["rows"] if r["kind"] == "constant"}
    check.one_of("name", name, sorted(rows))
    return float(rows[name]["value"])


def payload_rows() -> list[dict[str, Any]]:
    """Each protocol's line: bytes per line, data bytes in it, the fraction of the link it can use, how it
    synchronises (chapter section "Protocols and channels"), the source by its author-year label."""
    from .. import views

    rows = []
    for r in results.table("nccl-tuning")["rows"]:
        if r["kind"] != "protocol":
            continue
        frac = r["data_bytes"] / r["line_bytes"] if r["line_bytes"] else 1.0
        rows.append({"protocol": r["protocol"], "line (bytes)": r["line_bytes"] or "whole chunks",
                     "data per line (bytes)": r["data_bytes"] or "all", "data fraction": f"{frac:.3f}",
                     "how the receiver knows the data arrived": r["how"], "source": views.cite_label(r["source"])})
    return rows


def protocol_busbw(protocol: str, link_bytes_per_s: float = A100_INTRA_BYTES_PER_S, channels: int = 12,
                   version: str = "2.30.7") -> float:
    """Bus bandwidth (bytes/s) NCCL's model gives a ring ``protocol`` on ``channels`` channels whose links
    carry ``link_bytes_per_s`` in all (default: the A100's effective NVLink, 240 GB/s).

    Chapter: *NVLink, NVSwitch and collectives*, "Protocols and channels": LL uses half (4 bytes of data in
    every 8-byte store), capped at 87.7 GB/s on Ampere; LL128 0.92, at most 20 GB/s per channel; Simple all.
    """
    p = protocols("ring", version).get(check.one_of("protocol", protocol, PROTOCOLS))
    if p is None:
        raise ValueError(f"protocol={protocol!r} has no ring row for NCCL {version}")
    bw = check.positive("link_bytes_per_s", link_bytes_per_s)
    ch = check.positive_int("channels", channels, maximum=64)
    return min(bw * p.busbw_factor, p.busbw_cap, ch * p.per_channel_cap)


def protocol_time(size_bytes: float, n: int, protocol: str, link_bytes_per_s: float = A100_INTRA_BYTES_PER_S,
                  channels: int = 12, version: str = "2.30.7") -> float:
    """Time (s) of a ring all-reduce of ``size_bytes`` per GPU on ``n`` GPUs of one NVLink node, in NCCL's
    model: ``base + 2(n-1) hop + 2(n-1)/n S / busbw(protocol)``.

    Chapter: *NVLink, NVSwitch and collectives*, "Protocols and channels".
    """
    size = check.nonneg("size_bytes", size_bytes)
    n = check.positive_int("n", n, maximum=72)
    if n == 1:
        return 0.0
    p = protocols("ring", version)[check.one_of("protocol", protocol, PROTOCOLS)]
    bus = protocol_busbw(protocol, link_bytes_per_s, channels, version)
    return p.base_latency_s + 2 * (n - 1) * p.nvlink_hop_s + 2 * (n - 1) / n * size / bus


def best_protocol(size_bytes: float, n: int = 8, link_bytes_per_s: float = A100_INTRA_BYTES_PER_S,
                  channels: int = 12) -> tuple[str, float]:
    """(protocol, time in s) that NCCL's model picks for a ring all-reduce of ``size_bytes`` on ``n`` GPUs."""
    times = {p: protocol_time(size_bytes, n, p, link_bytes_per_s, channels) for p in PROTOCOLS}
    name = min(times, key=times.get)
    return name, times[name]


def switch_points(n: int = 8, link_bytes_per_s: float = A100_INTRA_BYTES_PER_S,
                  channels: int = 12) -> list[tuple[str, str, float]]:
    """Sizes (bytes per GPU) where NCCL's model switches protocol, smallest first: ``(from, to, size)``.

    Chapter: *NVLink, NVSwitch and collectives*, "Protocols and channels". Each is the size where two
    consecutive protocols take the same time: ``S = (lat_b - lat_a) / (2(n-1)/n (1/bus_a - 1/bus_b))``.
    """
    n = check.positive_int("n", n, maximum=72)
    if n == 1:
        return []
    out = []
    for a, b in zip(PROTOCOLS, PROTOCOLS[1:]):
        lat_a, lat_b = protocol_time(0, n, a, link_bytes_per_s, channels), protocol_time(0, n, b, link_bytes_per_s,
                                                                                         channels)
        bus_a = protocol_busbw(a, link_bytes_per_s, channels)
        bus_b = protocol_busbw(b, link_bytes_per_s, channels)
        gain = 2 * (n - 1) / n * (1 / bus_a - 1 / bus_b)
        if gain > 0 and lat_b > lat_a:
            out.append((a, b, (lat_b - lat_a) / gain))
    return out


def channels_needed(busbw_bytes_per_s: float, per_channel_bytes_per_s: float | None = None) -> int:
    """Channels a ring needs to carry ``busbw_bytes_per_s`` if each carries ``per_channel_bytes_per_s``
    (default: one A100 NVLink as NCCL's topology search counts it, ``nvlink_link_gb_per_s``, 20 GB/s)."""
    bus = check.positive("busbw_bytes_per_s", busbw_bytes_per_s)
    per = (nccl_constant("nvlink_link_gb_per_s") * 1e9 if per_channel_bytes_per_s is None
           else check.positive("per_channel_bytes_per_s", per_channel_bytes_per_s))
    return math.ceil(bus / per - 1e-9)


def protocol_rows(sizes_bytes: Sequence[float] = (8, 4096, 65536, 2**20, 16 * 2**20, 256 * 2**20),
                  n: int = 8) -> list[dict[str, str]]:
    """Model time (µs) of each protocol at each size, and the pick (chapter "Protocols and channels")."""
    sizes = check.sequence("sizes_bytes", sizes_bytes, lambda name, v: check.nonneg(name, v), max_len=256)
    rows = []
    for s in sizes:
        row = {"size per GPU": _size_label(s)}
        for p in PROTOCOLS:
            row[f"{p} (µs)"] = f"{protocol_time(s, n, p) * 1e6:.1f}"
        row["NCCL's model picks"] = best_protocol(s, n)[0]
        rows.append(row)
    return rows


def _size_label(size: float) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale:
            return f"{size / scale:g} {unit}"
    return f"{size:g} B"
