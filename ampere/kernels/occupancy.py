"""What one SM can hold and how many warps a kernel keeps resident: the SM limits of every catalogue GPU
and the CUDA occupancy calculator's rules.

Chapter: *Programming the A100's SM* (``book/kernels.ipynb``), "Occupancy and latency hiding". Limits come
from :mod:`ampere.specs` (per product) and ``ampere/data/tables/sm-limits.json`` (per compute capability).
Pure: no torch, no triton, no matplotlib.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

from .. import check, specs
from .rules import _fields, _gpu, _int, _text

WARP_SIZE = 32


@dataclass(frozen=True)
class SMLimits:
    """What one SM of ``gpu`` can hold at once. Chapter: *Programming the A100's SM*, "Occupancy"."""

    gpu: str
    compute_capability: tuple[int, int]
    max_threads_per_sm: int          # from ampere.specs
    registers_per_sm: int            # 32-bit registers: register file bytes / 4 (ampere.specs)
    shared_bytes_per_sm: int         # largest shared-memory carve-out (ampere.specs)
    max_warps_per_sm: int            # the rest: sm-limits table (CUDA Programming Guide, cuda_occupancy.h)
    max_blocks_per_sm: int
    max_threads_per_block: int
    max_registers_per_thread: int
    max_registers_per_block: int
    max_shared_bytes_per_block: int
    reserved_shared_bytes_per_block: int
    register_alloc_unit_per_warp: int
    shared_alloc_unit_bytes: int
    sub_partitions: int
    shared_banks: int                # sm-limits table (CUDA Programming Guide, "Shared Memory Access Patterns")
    shared_bank_bytes: int
    source: str = ""

    def __post_init__(self) -> None:
        cc = check.sequence("SMLimits.compute_capability", self.compute_capability,
                            lambda n, v: check.bounded_int(n, v, 0, 99), min_len=2, max_len=2)
        object.__setattr__(self, "compute_capability", tuple(cc))
        counts = _int(1, 1 << 30)
        _fields(self, gpu=_gpu, max_threads_per_sm=counts, registers_per_sm=counts, shared_bytes_per_sm=counts,
                max_warps_per_sm=counts, max_blocks_per_sm=counts, max_threads_per_block=counts,
                max_registers_per_thread=counts, max_registers_per_block=counts,
                max_shared_bytes_per_block=counts, reserved_shared_bytes_per_block=_int(0, 1 << 30),
                register_alloc_unit_per_warp=counts, shared_alloc_unit_bytes=counts, sub_partitions=counts,
                shared_banks=counts, shared_bank_bytes=counts, source=_text(allow_empty=True))


_LIMITS_ROWS: dict[str, dict[str, Any]] | None = None


def _limit_rows() -> dict[str, dict[str, Any]]:
    global _LIMITS_ROWS
    if _LIMITS_ROWS is None:
        from .. import results

        _LIMITS_ROWS = {r["compute_capability"]: r for r in results.table("sm-limits")["rows"]}
    return _LIMITS_ROWS


def sm_limits(gpu: str | specs.GPUSpec) -> SMLimits:
    """The SM limits of a catalogue GPU (per product from :mod:`ampere.specs`, per compute capability from
    ``ampere/data/tables/sm-limits.json``). Chapter: *Programming the A100's SM*, "Occupancy"."""
    spec = specs.get(gpu)
    cc = f"{spec.compute_capability[0]}.{spec.compute_capability[1]}"
    rows = _limit_rows()
    if cc not in rows:
        raise ValueError(f"no SM limits for compute capability {cc} ({spec.name}); the sm-limits table has "
                         f"{', '.join(sorted(rows))}")
    r = rows[cc]
    lim = SMLimits(gpu=spec.name, compute_capability=tuple(spec.compute_capability),
                   max_threads_per_sm=spec.max_threads_per_sm, registers_per_sm=spec.register_file_bytes_per_sm // 4,
                   shared_bytes_per_sm=spec.max_shared_bytes_per_sm,
                   max_warps_per_sm=int(r["max_warps_per_sm"]), max_blocks_per_sm=int(r["max_blocks_per_sm"]),
                   max_threads_per_block=int(r["max_threads_per_block"]),
                   max_registers_per_thread=int(r["max_registers_per_thread"]),
                   max_registers_per_block=int(r["max_registers_per_block"]),
                   max_shared_bytes_per_block=int(r["max_shared_bytes_per_block"]),
                   reserved_shared_bytes_per_block=int(r["reserved_shared_bytes_per_block"]),
                   register_alloc_unit_per_warp=int(r["register_alloc_unit_per_warp"]),
                   shared_alloc_unit_bytes=int(r["shared_alloc_unit_bytes"]),
                   sub_partitions=int(r["sub_partitions"]), shared_banks=int(r["shared_banks"]),
                   shared_bank_bytes=int(r["shared_bank_bytes"]), source=str(r.get("where", "")))
    if lim.max_warps_per_sm * WARP_SIZE != lim.max_threads_per_sm:  # two sources, one fact: they must agree
        raise ValueError(f"{spec.name}: specs says {lim.max_threads_per_sm} threads per SM but the sm-limits "
                         f"table says {lim.max_warps_per_sm} warps for compute capability {cc}")
    return lim


# ---------------------------------------------------------------------------------------------------
# Occupancy (the CUDA occupancy calculator's rules)
# ---------------------------------------------------------------------------------------------------

def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


@dataclass(frozen=True)
class Occupancy:
    """Resident blocks and warps of one kernel configuration on one SM.

    ``fraction`` = active warps / the SM's maximum; ``limiter`` names the resource that binds ("warps",
    "blocks", "registers", "shared memory"; ties joined with " and "); ``blocks_by`` the blocks each
    resource alone would allow. Chapter: *Programming the A100's SM*, "Occupancy and latency hiding".
    """

    gpu: str
    threads_per_block: int
    registers_per_thread: int
    shared_bytes_per_block: int
    warps_per_block: int
    blocks_per_sm: int
    active_warps: int
    max_warps: int
    limiter: str
    blocks_by: Mapping[str, int] = field(default_factory=dict)
    registers_per_block: int = 0     # allocated (after rounding to the allocation unit)
    shared_allocated_bytes: int = 0  # per block, reservation and rounding included

    def __post_init__(self) -> None:
        _fields(self, gpu=_gpu, threads_per_block=_int(1, 1 << 16), registers_per_thread=_int(0, 1 << 16),
                shared_bytes_per_block=_int(0, 1 << 30), warps_per_block=_int(1, 1 << 11),
                blocks_per_sm=_int(0, 1 << 16), active_warps=_int(0, 1 << 20), max_warps=_int(1, 1 << 20),
                limiter=_text(), registers_per_block=_int(0, 1 << 30), shared_allocated_bytes=_int(0, 1 << 30))
        by = check.mapping("Occupancy.blocks_by", self.blocks_by)
        for k, v in by.items():
            check.string("Occupancy.blocks_by", k)
            check.bounded_int(f"Occupancy.blocks_by[{k!r}]", v, 0, 1 << 20)
        object.__setattr__(self, "blocks_by", MappingProxyType(by))
        if self.active_warps != self.blocks_per_sm * self.warps_per_block or self.active_warps > self.max_warps:
            raise ValueError(f"Occupancy.active_warps={self.active_warps} must be blocks_per_sm x warps_per_block "
                             f"({self.blocks_per_sm} x {self.warps_per_block}) and at most max_warps={self.max_warps}")

    @property
    def fraction(self) -> float:
        return self.active_warps / self.max_warps

    def to_dict(self) -> dict[str, Any]:
        return {"gpu": self.gpu, "threads_per_block": self.threads_per_block,
                "registers_per_thread": self.registers_per_thread,
                "shared_bytes_per_block": self.shared_bytes_per_block, "warps_per_block": self.warps_per_block,
                "blocks_per_sm": self.blocks_per_sm, "active_warps": self.active_warps, "max_warps": self.max_warps,
                "fraction": self.fraction, "limiter": self.limiter, "blocks_by": dict(self.blocks_by)}


def occupancy(gpu: str | specs.GPUSpec, threads_per_block: int, registers_per_thread: int,
              shared_bytes_per_block: int) -> Occupancy:
    """Occupancy of a kernel on ``gpu`` (largest shared-memory carve-out), by the CUDA occupancy rules.

    Registers are allocated per warp in units of ``register_alloc_unit_per_warp`` and the register file is
    split between the SM's sub-partitions; shared memory per block gets the system reservation (1 KB from
    compute capability 8.0 on) and is rounded to the allocation unit. Raises ``ValueError`` for a
    configuration that cannot launch (too many threads, registers or bytes per block).
    Chapter: *Programming the A100's SM*, "Occupancy and latency hiding".
    """
    lim = sm_limits(gpu)
    threads = check.positive_int("threads_per_block", threads_per_block, maximum=lim.max_threads_per_block)
    regs = check.nonneg_int("registers_per_thread", registers_per_thread, maximum=lim.max_registers_per_thread)
    smem = check.nonneg_int("shared_bytes_per_block", shared_bytes_per_block,
                            maximum=lim.max_shared_bytes_per_block)
    warps = -(-threads // WARP_SIZE)
    by: dict[str, int] = {"warps": lim.max_warps_per_sm // warps, "blocks": lim.max_blocks_per_sm}
    regs_per_block = 0
    if regs > 0:
        per_warp = _round_up(regs * WARP_SIZE, lim.register_alloc_unit_per_warp)
        regs_per_block = per_warp * warps
        if regs_per_block > lim.max_registers_per_block:
            raise ValueError(f"registers_per_thread={regs} with threads_per_block={threads} needs {regs_per_block} "
                             f"registers per block; {lim.gpu} allows {lim.max_registers_per_block}")
        warps_per_partition = (lim.registers_per_sm // lim.sub_partitions) // per_warp
        by["registers"] = (warps_per_partition * lim.sub_partitions) // warps
    else:
        by["registers"] = lim.max_blocks_per_sm
    alloc = _round_up(smem + lim.reserved_shared_bytes_per_block, lim.shared_alloc_unit_bytes)
    by["shared memory"] = lim.shared_bytes_per_sm // alloc if alloc else lim.max_blocks_per_sm
    blocks = min(by.values())
    # name the binding resource; when nothing is exhausted below the cap, "blocks" (or "warps") binds
    binding = [k for k in ("warps", "registers", "shared memory", "blocks") if by[k] == blocks]
    return Occupancy(gpu=lim.gpu, threads_per_block=threads, registers_per_thread=regs, shared_bytes_per_block=smem,
                     warps_per_block=warps, blocks_per_sm=blocks, active_warps=blocks * warps,
                     max_warps=lim.max_warps_per_sm, limiter=" and ".join(binding), blocks_by=by,
                     registers_per_block=regs_per_block, shared_allocated_bytes=alloc)
