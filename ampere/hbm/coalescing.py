"""Coalescing: how many 32-byte sectors a warp's load touches, for strided and misaligned access patterns, and
what fraction of the bytes moved the threads use.

Chapter: *HBM and the memory hierarchy* (book/hbm.ipynb), "Coalescing: 32-byte sectors". The rule is the CUDA
C++ Best Practices Guide's ("Coalesced Access to Global Memory", compute capability 6.0 and later): the
concurrent accesses of a warp's threads coalesce into as many 32-byte transactions as are needed to service
them, a segment is fetched whole even when only part of it is used; the CUDA C++ Programming Guide ("Coalesced
Global Memory Access") states the same with 32-byte memory transactions. The guides' own counts are in
``ampere/data/tables/coalescing-examples.json`` and validate this model. Pure: no torch, no matplotlib.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from .. import check
from .common import _fields, _int, _num, _Row

#: Bytes of one memory transaction (a sector) on compute capability 6.0 and later (nvidiabestpractices,
#: "Coalesced Access to Global Memory"; nvidiacudaguide, "Coalesced Global Memory Access").
SECTOR_BYTES = 32
#: Threads whose accesses one load instruction coalesces.
WARP_THREADS = 32


def _addresses(stride: int, offset_bytes: int, elem_bytes: int, threads: int, first: int = 0) -> list[int]:
    return [offset_bytes + (first + t) * stride * elem_bytes for t in range(threads)]


def _sectors(addresses: Sequence[int], elem_bytes: int) -> set[int]:
    return {b // SECTOR_BYTES for a in addresses for b in (a, a + elem_bytes - 1)}


@dataclass(frozen=True)
class WarpRequest(_Row):
    """One warp's load: thread t reads ``elem_bytes`` at ``offset_bytes + t * stride * elem_bytes``.
    See :func:`warp_request`."""

    stride: int
    offset_bytes: int
    elem_bytes: int
    threads: int
    sectors: int            # 32-byte sectors the request touches (transactions)
    bytes_moved: int        # sectors x 32
    bytes_used: int         # bytes the threads asked for
    stream_efficiency: float  # bytes used / bytes moved over a long run of consecutive warps

    def __post_init__(self) -> None:
        _fields(self, stride=_int(1, 1 << 16), offset_bytes=_int(0, 1 << 20),
                elem_bytes=lambda n, v: check.choice(n, v, (1, 2, 4, 8, 16)), threads=_int(1, WARP_THREADS),
                sectors=_int(1, 2 * WARP_THREADS), bytes_moved=_int(SECTOR_BYTES, 2 * WARP_THREADS * SECTOR_BYTES),
                bytes_used=_int(1, WARP_THREADS * 16), stream_efficiency=_num(0.0, 1.0, strict=True))
        if self.bytes_moved != self.sectors * SECTOR_BYTES or self.bytes_used != self.threads * self.elem_bytes:
            raise ValueError(f"WarpRequest.bytes_moved must be sectors x {SECTOR_BYTES} and WarpRequest.bytes_used "
                             f"threads x elem_bytes; got {self.bytes_moved} and {self.bytes_used}")

    @property
    def efficiency(self) -> float:
        """Bytes used / bytes moved by this one request (the guides' "load/store efficiency")."""
        return self.bytes_used / self.bytes_moved


def warp_request(stride: int = 1, offset_bytes: int = 0, elem_bytes: int = 4, threads: int = WARP_THREADS, *,
                 warps: int = 256) -> WarpRequest:
    """The sectors of one warp's request, and the efficiency over ``warps`` consecutive warps.

    Thread t of warp w reads ``elem_bytes`` at ``offset_bytes + (w * threads + t) * stride * elem_bytes``.
    ``efficiency`` counts one request alone: a misaligned contiguous read touches 5 sectors for 4 sectors of
    data (80 %). ``stream_efficiency`` counts each sector once over ``warps`` consecutive warps, as a cache
    shared by neighbouring warps would fetch it from DRAM: the misaligned stream is back near 100 % (the
    extra sector is the neighbour's), while a stride wastes the same share in every sector (stride 2: 50 %).
    Chapter: *HBM and the memory hierarchy*, "Coalescing: 32-byte sectors".
    """
    s = check.positive_int("stride", stride, maximum=1 << 16)
    off = check.nonneg_int("offset_bytes", offset_bytes, maximum=1 << 20)
    e = check.choice("elem_bytes", elem_bytes, (1, 2, 4, 8, 16))
    n = check.positive_int("threads", threads, maximum=WARP_THREADS)
    w = check.positive_int("warps", warps, maximum=1 << 14)
    if off % e:
        raise ValueError(f"offset_bytes={off} must be a multiple of elem_bytes={e} (elements are naturally aligned)")
    one = _sectors(_addresses(s, off, e, n), e)
    every = _sectors(_addresses(s, off, e, n * w), e)
    return WarpRequest(stride=s, offset_bytes=off, elem_bytes=e, threads=n, sectors=len(one),
                       bytes_moved=len(one) * SECTOR_BYTES, bytes_used=n * e,
                       stream_efficiency=n * w * e / (len(every) * SECTOR_BYTES))


def coalescing_table(strides: Sequence[int] = (1, 2, 4, 8, 16, 32), offsets_bytes: Sequence[int] = (0, 4, 16, 32),
                     elem_bytes: int = 4) -> list[WarpRequest]:
    """:func:`warp_request` for each stride (offset 0), then each offset (stride 1): the chapter's table.
    Chapter: *HBM and the memory hierarchy*, "Coalescing: 32-byte sectors"."""
    st = check.sequence("strides", strides, lambda n, v: check.positive_int(n, v, maximum=1 << 16), max_len=256)
    offs = check.sequence("offsets_bytes", offsets_bytes, lambda n, v: check.nonneg_int(n, v, maximum=1 << 20),
                          max_len=256)
    return ([warp_request(s, 0, elem_bytes) for s in st] + [warp_request(1, o, elem_bytes) for o in offs])


def coalescing_examples() -> list[dict[str, Any]]:
    """The CUDA guides' own examples (pattern, sectors per warp, efficiency) from
    ``ampere/data/tables/coalescing-examples.json``, each beside :func:`warp_request`'s count for the same
    pattern: the validation of the model, never an input. Chapter: *HBM*, "Coalescing: 32-byte sectors"."""
    from .. import results

    t = results.table("coalescing-examples")
    out = []
    for r in t["rows"]:
        req = warp_request(int(r["stride"]), int(r["offset_bytes"]), int(r["elem_bytes"]))
        out.append({**r, "model_sectors": req.sectors, "model_efficiency": req.efficiency})
    return out
