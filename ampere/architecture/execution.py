"""The execution model of an SM: warps and SIMT, the four schedulers, divergent branches, latency hiding by
occupancy (Little's law), and the resident warps a kernel's registers and shared memory allow.

Chapter: *Architecture of the GA100* (book/architecture.ipynb), "How an SM executes: warps, schedulers and
latency". Pure Python: no torch, no matplotlib. Per-product limits come from :mod:`ampere.specs`, per-compute-
capability limits (warps and blocks per SM, sub-partitions) from ``ampere/data/tables/sm-limits.json``, and
NVIDIA's latency rule of thumb from ``ampere/data/tables/gpu-performance-rules.json``.

The occupancy here is the textbook rule (each resource divided by what one block needs); it leaves out the
allocation granularities and the per-block shared-memory reservation that the CUDA occupancy calculator
adds. The chapter *Programming the A100's SM* implements the full calculator (``ampere.kernels.occupancy``);
the unit tests check that both agree where the granularities do not bite.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from .. import check, results, specs

#: Threads per warp on every NVIDIA GPU so far (CUDA C++ Programming Guide, "SIMT Architecture").
WARP_SIZE = 32


def _cc_limits(spec: specs.GPUSpec) -> dict[str, Any]:
    cc = f"{spec.compute_capability[0]}.{spec.compute_capability[1]}"
    rows = {r["compute_capability"]: r for r in results.table("sm-limits")["rows"]}
    if cc not in rows:
        raise ValueError(f"gpu={spec.name!r}: no SM limits for compute capability {cc}; the sm-limits table has "
                         f"{', '.join(sorted(rows))}")
    return rows[cc]


def _rule(name: str) -> dict[str, Any]:
    return next(r for r in results.table("gpu-performance-rules")["rows"] if r["rule"] == name)


def arithmetic_latency_cycles() -> int:
    """The Programming Guide's typical latency of an arithmetic instruction (4 clock cycles, stated for compute
    capability 7.x; ``gpu-performance-rules.json``). Chapter: *Architecture of the GA100*, "Latency hiding"."""
    return int(_rule("arithmetic_latency")["cycles"])


def issue_model(gpu: str | specs.GPUSpec) -> dict[str, Any]:
    """How one SM of ``gpu`` issues work: schedulers (sub-partitions), warp instructions per clock, FP32 lanes
    per scheduler and the clocks one warp-wide FP32 instruction occupies them, resident warps.

    Each sub-partition has one warp scheduler that issues one instruction of one of its warps per clock; a
    warp instruction covers 32 threads, so on a partition with 16 FP32 lanes (GA100) it keeps those lanes
    busy for two clocks. Per SM and clock: ``schedulers`` warp instructions, ``fp32_lanes`` FMA.

    Chapter: *Architecture of the GA100*, "How an SM executes".
    """
    spec = specs.get(gpu)
    lim = _cc_limits(spec)
    schedulers = int(lim["sub_partitions"])
    lanes = spec.fma_per_clk_per_sm["fp32"]
    per_scheduler = lanes // schedulers
    return {"gpu": spec.name, "schedulers per SM": schedulers, "warp instructions per clock per SM": schedulers,
            "FP32 lanes per scheduler": per_scheduler,
            "clocks per warp FP32 instruction": WARP_SIZE / per_scheduler,
            "max resident warps per SM": int(lim["max_warps_per_sm"]),
            "max resident warps per scheduler": int(lim["max_warps_per_sm"]) // schedulers,
            "warp instructions per second (GPU)": schedulers * spec.sm_count * spec.boost_clock_hz}


def branch_cycles(lanes_per_path: Sequence[int], cycles_per_path: Sequence[float]) -> dict[str, float]:
    """Cost of one warp through a branch whose paths ``lanes_per_path`` threads take, each path costing
    ``cycles_per_path`` when executed.

    A warp executes one common instruction at a time; when its threads diverge, it runs every path that at
    least one thread takes, one after the other, with the other threads masked off. So the warp pays the sum
    of the taken paths' costs; the SIMT efficiency is the useful lane-cycles over 32 x that sum.

    Chapter: *Architecture of the GA100*, "Branch divergence".
    """
    lanes = check.sequence("lanes_per_path", lanes_per_path,
                           lambda name, n: check.nonneg_int(name, n, maximum=WARP_SIZE), max_len=WARP_SIZE)
    cost = check.sequence("cycles_per_path", cycles_per_path, check.nonneg, max_len=WARP_SIZE)
    if len(lanes) != len(cost):
        raise ValueError(f"lanes_per_path and cycles_per_path must have the same length; got {len(lanes)} and "
                         f"{len(cost)}")
    if sum(lanes) != WARP_SIZE:
        raise ValueError(f"lanes_per_path must add up to the warp size {WARP_SIZE}; got {sum(lanes)}")
    cycles = sum(c for n, c in zip(lanes, cost) if n > 0)
    useful = sum(n * c for n, c in zip(lanes, cost))
    return {"cycles": cycles, "simt_efficiency": useful / (WARP_SIZE * cycles) if cycles else 1.0}


def divergence_expected(p_taken: float, cycles_taken: float, cycles_other: float,
                        coherent: bool = False) -> dict[str, float]:
    """Expected cycles per warp of ``if (cond) A else B`` when each thread takes A with probability ``p_taken``.

    Threads decide independently (``coherent=False``): the warp runs A unless all 32 threads skip it
    (probability ``(1-p)^32``) and B unless all take A (``p^32``). Whole warps decide together
    (``coherent=True``, data sorted so that neighbouring threads agree): the warp runs only its path, on
    average ``p A + (1-p) B``. ``slowdown`` compares with that coherent average, the cost without divergence.

    Chapter: *Architecture of the GA100*, "Branch divergence".
    """
    p = check.fraction("p_taken", p_taken)
    a = check.nonneg("cycles_taken", cycles_taken)
    b = check.nonneg("cycles_other", cycles_other)
    check.boolean("coherent", coherent)
    ideal = p * a + (1 - p) * b
    if coherent:
        cycles = ideal
    else:
        # 1 - (1-p)^32 and 1 - p^32 without cancellation when p is tiny or close to 1
        some_take_a = -math.expm1(WARP_SIZE * math.log1p(-p)) if p < 1 else 1.0
        some_take_b = -math.expm1(WARP_SIZE * math.log(p)) if p > 0 else 1.0
        cycles = a * some_take_a + b * some_take_b
    return {"cycles": cycles, "slowdown": cycles / ideal if ideal else 1.0}


def warps_to_hide(latency_cycles: float, gpu: str | specs.GPUSpec = "A100-SXM4-80GB", ilp: int = 1) -> int:
    """Resident warps per SM needed to hide ``latency_cycles`` (Little's law: in flight = latency x rate).

    Every scheduler issues one instruction per clock; a warp whose next instruction waits on a result cannot
    issue, so to keep a scheduler busy through a latency of L clocks it needs L independent instructions in
    flight: ``ceil(L / ilp)`` warps, each with ``ilp`` independent instructions in a row. Times the schedulers
    per SM. With the Programming Guide's 4 cycles and 4 schedulers: 16 warps.

    Chapter: *Architecture of the GA100*, "Latency hiding".
    """
    latency = check.positive("latency_cycles", latency_cycles, maximum=1e6)
    ilp = check.positive_int("ilp", ilp, maximum=64)
    schedulers = int(_cc_limits(specs.get(gpu))["sub_partitions"])
    return math.ceil(latency / ilp) * schedulers


def issue_utilization(warps_per_sm: int, latency_cycles: float, gpu: str | specs.GPUSpec = "A100-SXM4-80GB",
                      ilp: int = 1) -> float:
    """Fraction of issue slots used when ``warps_per_sm`` warps, each stalled ``latency_cycles`` after every
    group of ``ilp`` independent instructions, share the SM's schedulers: ``min(1, warps x ilp / (latency x
    schedulers))``. Chapter: *Architecture of the GA100*, "Latency hiding"."""
    spec = specs.get(gpu)
    lim = _cc_limits(spec)
    warps = check.nonneg_int("warps_per_sm", warps_per_sm, maximum=int(lim["max_warps_per_sm"]))
    latency = check.positive("latency_cycles", latency_cycles, maximum=1e6)
    ilp = check.positive_int("ilp", ilp, maximum=64)
    return min(1.0, warps * ilp / (latency * int(lim["sub_partitions"])))


def resident_warps(gpu: str | specs.GPUSpec, threads_per_block: int, registers_per_thread: int,
                   shared_bytes_per_block: int = 0) -> dict[str, Any]:
    """Blocks and warps one SM can hold for a kernel, by the textbook rule: each resource divided by what one
    block needs, the smallest quotient wins.

    Limits: resident warps and blocks per SM (the sm-limits table), the register file (``ampere.specs``:
    256 KiB = 65,536 32-bit registers on the A100) and the largest shared-memory carve-out. Returns the blocks
    each limit allows (``blocks_by``), ``blocks``, ``warps``, ``occupancy`` (warps over the maximum) and the
    ``limiter``. Allocation granularities are left out (see the module docstring).

    Chapter: *Architecture of the GA100*, "Occupancy".
    """
    spec = specs.get(gpu)
    lim = _cc_limits(spec)
    threads = check.positive_int("threads_per_block", threads_per_block, maximum=int(lim["max_threads_per_block"]))
    regs = check.positive_int("registers_per_thread", registers_per_thread,
                              maximum=int(lim["max_registers_per_thread"]))
    smem = check.nonneg_int("shared_bytes_per_block", shared_bytes_per_block, maximum=spec.max_shared_bytes_per_sm)
    warps_per_block = math.ceil(threads / WARP_SIZE)
    max_warps = int(lim["max_warps_per_sm"])
    registers = spec.register_file_bytes_per_sm // 4
    if regs * threads > int(lim["max_registers_per_block"]):
        raise ValueError(f"registers_per_thread={regs} x threads_per_block={threads} = {regs * threads} registers; "
                         f"a block may use at most {lim['max_registers_per_block']}")
    by = {"warps": max_warps // warps_per_block, "blocks": int(lim["max_blocks_per_sm"]),
          "registers": registers // (regs * warps_per_block * WARP_SIZE),
          "shared memory": spec.max_shared_bytes_per_sm // smem if smem else int(lim["max_blocks_per_sm"])}
    blocks = min(by.values())
    used = ("warps", "registers", "shared memory", "blocks") if smem else ("warps", "registers", "blocks")
    limiter = " and ".join(k for k in used if by[k] == blocks)
    return {"gpu": spec.name, "blocks_by": by, "blocks": blocks, "warps": blocks * warps_per_block,
            "occupancy": blocks * warps_per_block / max_warps, "limiter": limiter}
