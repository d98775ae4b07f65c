"""Shared memory: its bandwidth derived from the banks, bank conflicts of a warp's request, and the XOR
swizzle that removes the conflicts of a column read.

Chapter: *Programming the A100's SM* (``book/kernels.ipynb``), "The hierarchy from a kernel's point of view"
and "Shared-memory banks and swizzling". The bank rule is the CUDA Programming Guide's ("Shared Memory Access
Patterns"): 32 banks, successive 32-bit words in successive banks, 32 bits per bank per clock; a request
whose addresses fall in one bank at different words is split into as many conflict-free requests as the
most loaded bank has words, and a word read by several threads is broadcast. The bank count and width come
from the ``sm-limits`` table (:func:`ampere.kernels.sm_limits`). Pure: no torch, no triton, no matplotlib.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from .. import check, specs
from .occupancy import sm_limits
from .rules import _fields, _int

LAYOUTS = ("row-major", "padded", "xor")


def shared_memory_bandwidth(gpu: str | specs.GPUSpec = "A100-SXM4-80GB") -> float:
    """Shared-memory bandwidth of the whole GPU, bytes/s: banks x bytes per bank per clock x SMs x boost clock.

    On the A100: 32 x 4 B x 108 SMs x 1.41 GHz = 19.5 TB/s, the "19 TB/s" the FlashAttention paper quotes as
    an estimate. An upper bound: every bank of every SM serving a word every clock, no conflicts.
    Chapter: *Programming the A100's SM*, "The hierarchy from a kernel's point of view".
    """
    s = specs.get(gpu)
    lim = sm_limits(s)
    return float(lim.shared_banks * lim.shared_bank_bytes * s.sm_count * s.boost_clock_hz)


@dataclass(frozen=True)
class BankConflict:
    """How the banks serve one request. ``degree`` is the number of conflict-free requests the hardware splits
    it into (the largest number of distinct words in one bank; 1: conflict-free), ``banks`` the bank of each
    word requested, in thread order. Chapter: *Programming the A100's SM*, "Shared-memory banks"."""

    words: tuple[int, ...]      # 32-bit word index (byte address // 4) of every word requested
    banks: tuple[int, ...]      # bank of each of those words
    degree: int                 # requests after splitting: max distinct words in one bank
    n_banks: int

    def __post_init__(self) -> None:
        _fields(self, degree=_int(1, 1 << 16), n_banks=_int(1, 1024))
        for name in ("words", "banks"):
            hi = (1 << 40) if name == "words" else self.n_banks - 1
            v = check.sequence(f"BankConflict.{name}", getattr(self, name), lambda n, x: check.bounded_int(n, x, 0, hi),
                               max_len=1 << 14)
            object.__setattr__(self, name, tuple(v))
        if len(self.words) != len(self.banks):
            raise ValueError(f"BankConflict.words and BankConflict.banks must have the same length; got "
                             f"{len(self.words)} and {len(self.banks)}")

    @property
    def efficiency(self) -> float:
        """Share of the banks' bandwidth the request uses: distinct words / (degree x banks)."""
        return len(set(self.words)) / (self.degree * self.n_banks)


def bank_conflicts(addresses: Iterable[int], *, access_bytes: int = 4,
                   gpu: str | specs.GPUSpec = "A100-SXM4-80GB") -> BankConflict:
    """The banks and conflict degree of one shared-memory request: ``addresses`` are the byte addresses each
    thread reads (``access_bytes`` = 4, 8 or 16 from each), all served together. Distinct words in one bank
    are serialised; the same word read twice is broadcast. Chapter: *Programming the A100's SM*,
    "Shared-memory banks and swizzling".
    """
    lim = sm_limits(gpu)
    width = check.choice("access_bytes", access_bytes, (4, 8, 16))
    addrs = check.sequence("addresses", addresses, lambda n, v: check.nonneg_int(n, v, maximum=1 << 40),
                           max_len=1024)
    for i, a in enumerate(addrs):
        if a % width:
            raise ValueError(f"addresses[{i}]={a} is not aligned to access_bytes={width}")
    words = tuple(a // lim.shared_bank_bytes + i for a in addrs for i in range(width // lim.shared_bank_bytes))
    banks = tuple(w % lim.shared_banks for w in words)
    per_bank: dict[int, set[int]] = {}
    for w, b in zip(words, banks):
        per_bank.setdefault(b, set()).add(w)
    return BankConflict(words, banks, max(len(v) for v in per_bank.values()), lim.shared_banks)


def _line_units(access_bytes: int, gpu: str | specs.GPUSpec) -> int:
    """Accesses of ``access_bytes`` that one pass over all banks serves (32 for 4 B, 8 for 16 B)."""
    lim = sm_limits(gpu)
    return lim.shared_banks * lim.shared_bank_bytes // access_bytes


def tile_offset(row: int, column_byte: int, row_bytes: int, *, access_bytes: int = 4, layout: str = "row-major",
                gpu: str | specs.GPUSpec = "A100-SXM4-80GB") -> int:
    """Byte offset in shared memory of the ``access_bytes`` unit at (``row``, ``column_byte``) of a tile whose
    rows hold ``row_bytes``, stored in ``layout``: ``"row-major"`` (pitch = row_bytes), ``"padded"`` (one
    unit of padding per row) or ``"xor"`` (the unit index XOR the row number modulo the units of one line of
    banks, 32 for 4 B and 8 for 16 B: the swizzle of CUTLASS's and Triton's shared-memory layouts; needs rows
    of whole 128-byte lines). Chapter: *Programming the A100's SM*, "Shared-memory banks and swizzling".
    """
    width = check.choice("access_bytes", access_bytes, (4, 8, 16))
    check.gpu("gpu", gpu)  # checked in every layout, not only where the swizzle reads it
    r = check.nonneg_int("row", row, maximum=1 << 20)
    rb = check.positive_int("row_bytes", row_bytes, maximum=1 << 20)
    cb = check.nonneg_int("column_byte", column_byte, maximum=rb - 1)
    check.one_of("layout", layout, LAYOUTS)
    if rb % width or cb % width:
        raise ValueError(f"row_bytes={rb} and column_byte={cb} must be multiples of access_bytes={width}")
    if layout == "row-major":
        return r * rb + cb
    if layout == "padded":
        return r * (rb + width) + cb
    units = _line_units(width, gpu)
    if rb % (units * width):
        raise ValueError(f"layout='xor' needs rows of whole {units * width}-byte lines; row_bytes={rb}")
    return r * rb + ((cb // width) ^ (r % units)) * width


def tile_column_read(row_bytes: int, *, access_bytes: int = 4, column_byte: int = 0, layout: str = "row-major",
                     threads: int | None = None, gpu: str | specs.GPUSpec = "A100-SXM4-80GB") -> BankConflict:
    """A column read of a tile: thread ``t`` reads the ``access_bytes`` at (row ``t``, ``column_byte``). By
    default as many threads as one pass over the banks serves (32 threads of 4 B, a warp reading a float
    column; 8 threads of 16 B, the eight row addresses of one ``ldmatrix`` 8 x 8 matrix).
    Chapter: *Programming the A100's SM*, "Shared-memory banks and swizzling"."""
    width = check.choice("access_bytes", access_bytes, (4, 8, 16))
    n = _line_units(width, gpu) if threads is None else check.positive_int("threads", threads, maximum=32)
    return bank_conflicts([tile_offset(t, column_byte, row_bytes, access_bytes=width, layout=layout, gpu=gpu)
                           for t in range(n)], access_bytes=width, gpu=gpu)


def bank_map(rows: int, row_bytes: int, *, access_bytes: int = 4, layout: str = "row-major",
             gpu: str | specs.GPUSpec = "A100-SXM4-80GB") -> list[list[int]]:
    """The bank of the first word of every ``access_bytes`` unit of a ``rows`` x ``row_bytes`` tile in
    ``layout`` (rows of units, for a picture). Chapter: *Programming the A100's SM*, "Shared-memory banks"."""
    n = check.positive_int("rows", rows, maximum=256)
    width = check.choice("access_bytes", access_bytes, (4, 8, 16))
    row_bytes = check.positive_int("row_bytes", row_bytes, maximum=1 << 16)
    lim = sm_limits(gpu)
    return [[tile_offset(r, c, row_bytes, access_bytes=width, layout=layout, gpu=gpu) // lim.shared_bank_bytes
             % lim.shared_banks for c in range(0, row_bytes, width)] for r in range(n)]


def column_conflicts(row_words: Sequence[int], layout: str = "row-major",
                     gpu: str | specs.GPUSpec = "A100-SXM4-80GB") -> list[int]:
    """Conflict degree of a warp reading one float column, for each row length in 4-byte words (the curve of
    the chapter's figure). Chapter: *Programming the A100's SM*, "Shared-memory banks and swizzling"."""
    lengths = check.sequence("row_words", row_words, lambda n, v: check.positive_int(n, v, maximum=4096),
                             max_len=4096)
    check.one_of("layout", layout, LAYOUTS)
    return [tile_column_read(4 * w, layout=layout, gpu=gpu).degree for w in lengths]
