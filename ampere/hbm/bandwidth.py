"""Where the bandwidth comes from: DRAM bandwidth derived from the interface, the hierarchy in numbers, and
two GPUs compared (the 40 GB versus 80 GB question).

Chapter: *HBM and the memory hierarchy* (book/hbm.ipynb), "Where the bandwidth comes from" and "40 GB versus
80 GB". Pure: no torch, no matplotlib; every GPU fact comes from :mod:`ampere.specs`.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Iterable, Mapping

from .. import check, specs
from .common import KiB

#: GPUs of the chapter's derivation table, in print order.
BANDWIDTH_GPUS: tuple[str, ...] = ("A100-SXM4-40GB", "A100-SXM4-80GB", "A100-PCIE-80GB", "V100-SXM2-32GB",
                                   "H100-SXM5-80GB", "H200-SXM-141GB", "RTX-A6000", "RTX-A2000-12GB", "T4", "L4")

# Where the derivation is not independent of the datasheet figure, or takes an input from a deviceQuery capture
# because NVIDIA prints none, say so (the catalogue's notes give the details).
_DERIVATION_NOTES: Mapping[str, str] = MappingProxyType({
    "A100-SXM4-80GB": "per-pin rate: twice the 1593 MHz memory clock deviceQuery prints",
    "H100-SXM5-80GB": "per-pin rate: twice the 2619 MHz memory clock deviceQuery prints",
    "H200-SXM-141GB": "6144 bits from deviceQuery; per-pin rate back-computed from 4.8 TB/s: agreement by "
                      "construction",
})


def bandwidth_table(gpus: Iterable[str] = BANDWIDTH_GPUS) -> list[dict[str, Any]]:
    """DRAM bandwidth re-derived from the interface: width (bits) x data rate per pin (bit/s) / 8.

    One row per GPU with the memory type, stacks, bits per stack, per-pin rate, the derived and the
    datasheet bandwidth (bytes/s) and their ratio, plus a note where the derivation is circular.
    Chapter: *HBM and the memory hierarchy*, "Where the bandwidth comes from".
    """
    rows = []
    for name in check.gpus("gpus", gpus):
        s = specs.get(name)
        derived = s.memory_bandwidth_derived_bytes_per_s
        rows.append({
            "gpu": s.name, "memory_type": s.memory_type, "stacks": s.memory_stacks,
            "bus_bits": s.memory_bus_bits,
            "bits_per_stack": s.memory_bus_bits // s.memory_stacks if s.memory_stacks else None,
            "data_rate_bps": s.memory_data_rate_bps, "derived_bytes_per_s": derived,
            "datasheet_bytes_per_s": s.hbm_bytes_per_s, "ratio": derived / s.hbm_bytes_per_s,
            "capacity_bytes": s.memory_bytes, "source": s.source("hbm_bytes_per_s"),
            "note": _DERIVATION_NOTES.get(s.name, ""),
        })
    return rows


def hierarchy_table(gpu: str | specs.GPUSpec = "A100-SXM4-80GB") -> list[dict[str, Any]]:
    """Capacity and (where published) bandwidth of each level: registers, L1/shared, L2, DRAM.

    Per-SM quantities are multiplied by the SM count. Bandwidths are theoretical (L2: bytes/clock x boost
    clock, from ``GPUSpec.l2_bytes_per_s``; DRAM: the datasheet). Chapter: *HBM and the memory hierarchy*.
    """
    s = specs.get(gpu)
    return [
        {"level": "registers", "capacity_bytes": s.register_file_bytes_per_sm * s.sm_count, "bytes_per_s": None,
         "scope": f"{s.register_file_bytes_per_sm // KiB} KiB per SM"},
        {"level": "L1 / shared memory", "capacity_bytes": s.l1_shared_bytes_per_sm * s.sm_count,
         "bytes_per_s": None, "scope": f"{s.l1_shared_bytes_per_sm // KiB} KiB per SM"},
        {"level": "L2", "capacity_bytes": s.l2_bytes, "bytes_per_s": s.l2_bytes_per_s, "scope": "shared by all SMs"},
        {"level": f"DRAM ({s.memory_type})", "capacity_bytes": s.memory_bytes, "bytes_per_s": s.hbm_bytes_per_s,
         "scope": "the whole GPU"},
    ]


def compare_gpus(a: str | specs.GPUSpec = "A100-SXM4-80GB", b: str | specs.GPUSpec = "A100-SXM4-40GB",
                 precision: str = "bf16") -> dict[str, float]:
    """Ratios a/b of dense peak compute, DRAM bandwidth, capacity and L2 (the 40 GB vs 80 GB question).

    Chapter: *HBM and the memory hierarchy*, "40 GB versus 80 GB".
    """
    sa, sb = specs.get(check.gpu("a", a)), specs.get(check.gpu("b", b))
    for s in (sa, sb):
        if not s.supports(check.one_of("precision", precision, specs.ALL_PRECISIONS)):
            raise ValueError(f"precision={precision!r} is not supported on {s.name}; both GPUs have: "
                             f"{', '.join(p for p in sa.all_precisions() if sb.supports(p))}")
    return {"compute": sa.peak_flops(precision) / sb.peak_flops(precision),
            "bandwidth": sa.hbm_bytes_per_s / sb.hbm_bytes_per_s,
            "capacity": sa.memory_bytes / sb.memory_bytes, "l2": sa.l2_bytes / sb.l2_bytes}


def devicequery_check() -> list[dict[str, Any]]:
    """The catalogue against what CUDA's deviceQuery printed on real cards (``devicequery-memory`` table):
    bus width, per-pin rate (twice the printed memory clock), the bandwidth they give, and the L2 size, each
    beside the catalogue's. Where NVIDIA prints no figure (the A100 80GB's and H100's pin rates, the H200's
    width and L2, the L4's and A6000's L2) the catalogue takes it from these captures; the check that stays
    independent is the bandwidth: clock and width against NVIDIA's datasheet figure.
    Chapter: *HBM and the memory hierarchy*, "Where the bandwidth comes from".
    """
    from .. import results

    rows = []
    for r in results.table("devicequery-memory")["rows"]:
        s = specs.get(r["gpu"])
        rate = 2 * r["memory_clock_mhz"] * 1e6
        derived = r["bus_bits"] * rate / 8
        rows.append({"gpu": s.name, "bus_bits": r["bus_bits"], "catalogue_bus_bits": s.memory_bus_bits,
                     "data_rate_bps": rate, "catalogue_data_rate_bps": s.memory_data_rate_bps,
                     "derived_bytes_per_s": derived, "datasheet_bytes_per_s": s.hbm_bytes_per_s,
                     "ratio": derived / s.hbm_bytes_per_s, "l2_bytes": r["l2_bytes"],
                     "catalogue_l2_bytes": s.l2_bytes, "source": r["source"], "where": r["where"]})
    return rows
