"""The comparison table of the five GPUs, rebuilt from ``ampere.specs``, and seed 003's own specification
table (``ampere/data/tables/today-seed-specs.json``) checked line by line.

Chapter: *The A100 today* (book/a100-today.ipynb), "Five GPUs side by side" and "The seed's table,
corrected". Pure Python: no torch, no matplotlib.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from .. import check, results, specs
from .catalogue import GPUS


def spec_rows(gpus: Iterable[str] = GPUS) -> list[dict[str, Any]]:
    """One row per GPU: what matters when choosing it, all derived from ``ampere.specs``.

    Tensor figures are dense unless the column says sparse; FP64 is given on the CUDA cores and, where
    they exist, on the tensor cores (A100, H100, H200); NVLink is the bidirectional total; memory is the
    physical capacity in GiB (NVIDIA's "80GB" is 80 GiB). Chapter: *The A100 today*, "Five GPUs side by side".
    """
    rows = []
    for name in check.gpus("gpus", list(gpus) if isinstance(gpus, tuple) else gpus):
        s = specs.get(name)

        def tf(p: str, sparse: bool = False) -> float | None:
            return s.peak_flops(p, sparse) / 1e12 if s.supports(p, sparse) else None

        rows.append({
            "GPU": s.name, "chip": s.chip, "cc": f"{s.compute_capability[0]}.{s.compute_capability[1]}",
            "SMs": s.sm_count, "FP32 lanes": s.fp32_cores, "tensor cores": s.tensor_cores,
            "memory": f"{s.memory_bytes / 2**30:.0f} GiB {s.memory_type}", "GB/s": s.hbm_bytes_per_s / 1e9,
            "FP64": tf("fp64"), "FP64 TC": tf("fp64_tc"), "FP32": tf("fp32"), "TF32": tf("tf32"),
            "BF16": tf("bf16"), "FP16 sparse": tf("fp16", True), "FP8": tf("fp8"), "INT8": tf("int8"),
            "TDP W": s.tdp_w, "NVLink GB/s": s.nvlink_bytes_per_s / 1e9 if s.nvlink_bytes_per_s else None,
            "MIG": s.mig_max_instances,
        })
    return rows


def _close(seed: float, package: float, rel: float = 0.05, abs_tol: float = 0.0) -> bool:
    return abs(seed - package) <= max(rel * abs(package), abs_tol)


#: What the package compares each line of the seed's table with.
_SPEC_VALUE = {
    "CUDA cores": lambda s: s.fp32_cores, "tensor cores": lambda s: s.tensor_cores,
    "memory GB": lambda s: s.memory_bytes / 2**30, "bandwidth GB/s": lambda s: s.hbm_bytes_per_s / 1e9,
    "FP32 TFLOPS": lambda s: s.peak_flops("fp32") / 1e12, "FP64 TFLOPS": lambda s: s.peak_flops("fp64") / 1e12,
    "NVLink GB/s": lambda s: s.nvlink_bytes_per_s / 1e9 or None, "MIG instances": lambda s: s.mig_max_instances,
}
#: Half a unit of the last printed digit, for figures printed with one decimal ("0.1").
_HALF_UNIT = {"FP64 TFLOPS": 0.05, "FP32 TFLOPS": 0.05}


def _spec_verdict(quantity: str, s: specs.GPUSpec, row: Mapping[str, Any]) -> tuple[str, str]:
    """(what the package derives, verdict) for one line of the seed's table."""
    v = row["value"]
    if quantity == "FP16 tensor TFLOPS":
        dense, sparse = s.peak_flops("fp16") / 1e12, s.peak_flops("fp16", True) / 1e12
        verdict = ("holds (dense)" if _close(v, dense) else
                   f"wrong: the sparse figure; dense is {dense:.1f}" if _close(v, sparse) else "wrong")
        return f"{dense:.1f} dense / {sparse:.1f} sparse", verdict
    if quantity == "compute capability":
        cc = f"{s.compute_capability[0]}.{s.compute_capability[1]}"
        return f"{cc} ({s.chip})", "holds" if cc == row["printed"] else "wrong: GA10x cards are 8.6"
    if quantity == "TDP W":
        pcie = specs.get("A100-PCIE-80GB").tdp_w
        ok = row["low"] <= s.tdp_w <= row["high"] and row["low"] == row["high"]
        return f"{s.tdp_w:.0f}", ("holds" if ok else f"imprecise: {pcie:.0f} W is the 80GB PCIe card; the SXM4 "
                                  f"module the table names is {s.tdp_w:.0f} W")
    p = _SPEC_VALUE[quantity](s)
    if quantity == "MIG instances":
        v = v or None
        p = p or None
    if v is None or p is None:
        return ("none" if p is None else f"{p:g}"), ("holds" if v is None and p is None else "wrong")
    ok = _close(v, p, abs_tol=_HALF_UNIT.get(quantity, 0.0))
    if quantity == "memory GB":  # NVIDIA's "80GB" is 80 GiB: the article's GB are the marketing (binary) ones
        shown = f"{p:g} GiB = {s.memory_bytes / 1e9:.1f} GB"
    elif quantity == "FP64 TFLOPS" and s.supports("fp64_tc"):
        shown = f"{p:.2f} (CUDA cores), {s.peak_flops('fp64_tc') / 1e12:.1f} (tensor cores)"
    elif quantity == "FP64 TFLOPS":
        shown = f"{p:.3f} (1/{s.fma_per_clk_per_sm['fp32'] // s.fma_per_clk_per_sm['fp64']} of FP32)"
    else:
        shown = f"{p:g}" if float(p).is_integer() else f"{p:.2f}"
    return shown, "holds" if ok else "wrong"


def seed_spec_check() -> list[dict[str, str]]:
    """Seed 003's specification table, line by line, against ``ampere.specs``.

    The seed's lines are data (``ampere/data/tables/today-seed-specs.json``). Each row: the quantity, the
    GPU, what the seed prints, what the package derives and a verdict. A printed value "holds" within 5 %
    (or half a unit of its last printed digit for figures such as "0.1"). Memory is compared like with like:
    the article's "80 Go" is NVIDIA's marketing gigabyte, a GiB (2**30 bytes), so it is compared with the
    catalogue's capacity in GiB. Chapter: *The A100 today*, "The
    seed's table, corrected".
    """
    rows = []
    for row in results.table("today-seed-specs")["rows"]:
        s = specs.get(row["gpu"])
        shown, verdict = _spec_verdict(row["quantity"], s, row)
        rows.append({"quantity": row["quantity"], "GPU": s.name, "article": row["printed"], "package": shown,
                     "verdict": verdict})
    return rows
