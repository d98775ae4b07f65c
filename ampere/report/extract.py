"""Figures from results: one extractor per benchmark, turning fresh or recorded results into the report's
comparable *figures* (``key``, ``value``, ``unit``, ``model`` ...), the model each figure is a fraction of,
and the recorded results a report is compared with.

Pure: no torch, no matplotlib (the chapter modules it reads are imported lazily).
Chapter: *The reference check* (book/reference-check.ipynb).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any, Iterable, Sequence

from .. import specs

_MATMUL_LABEL = {"fp64": "FP64", "fp32": "FP32", "tf32": "TF32", "bf16": "BF16", "fp16": "FP16"}


def _model_precision(spec: specs.GPUSpec | None, precision: str) -> str | None:
    """Which peak a matmul of ``precision`` is measured against (``gemm.peak_precision_for``: FP64
    GEMMs run on the FP64 tensor cores where they exist); None without a catalogued GPU."""
    if spec is None:
        return None
    from ..gemm import peak_precision_for

    return peak_precision_for(spec, precision)


def _peak_label(precision: str) -> str:
    """``"dense BF16 tensor peak"``, ``"dense FP64 tensor-core peak"``, ``"dense FP32 CUDA-core peak"``."""
    if precision == "fp64_tc":
        return "dense FP64 tensor-core peak"
    kind = "tensor" if precision in specs.TENSOR_PRECISIONS else "CUDA-core"
    return f"dense {precision.upper()} {kind} peak"


def _matmul_figures(records: Iterable[dict[str, Any]], spec: specs.GPUSpec | None) -> list[dict[str, Any]]:
    """Figures of matmul records (``architecture.matmul_sweep`` records, fresh or recorded).

    TFLOP/s are recomputed from the raw samples (median) so that fresh and recorded figures are derived
    the same way.
    """
    from ..timing import Measurement

    out = []
    for rec in records:
        p, n = rec["precision"], int(rec["n"])
        m = Measurement.from_dict(rec["measurement"])
        flops = float(rec.get("flops", 2.0 * n**3))
        mp = _model_precision(spec, p)
        out.append({
            "probe": "matmul", "key": f"matmul/{p}/n{n}", "label": f"{_MATMUL_LABEL.get(p, p)} matmul {n}^3",
            "value": m.rate(flops) / 1e12, "unit": "TFLOP/s", "higher_is_better": True,
            "model": spec.peak_flops(mp) / 1e12 if mp else None,
            "model_label": _peak_label(mp) if mp else None,
            "measurement": rec["measurement"],
        })
    return out


def _sparsity_figures(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Speedup of 2:4 sparse over dense ``F.linear`` per shape (``ampere.sparsity.sweep_table``)."""
    from .. import sparsity

    out = []
    for row in sparsity.sweep_table(result):
        if row["backend"] == "torch.sparse CSR":
            continue
        shape = row["shape"].split(" (")[0]
        out.append({
            "probe": "sparse-2to4", "key": f"sparse-2to4/{row['dtype']}/{row['backend']}/{shape}",
            "label": f"2:4 speedup {row['dtype']} {shape} ({row['backend']})", "value": row["speedup"],
            "unit": "x", "higher_is_better": True, "model": row["model_bound"],
            "model_label": "roofline bound of the 2:4 speedup" if row["model_bound"] else None,
        })
    return out


def _generic_figures(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Records that already are figures (``report`` results, and any benchmark that writes key/value)."""
    out = []
    for rec in result["records"]:
        if isinstance(rec, dict) and isinstance(rec.get("key"), str) and isinstance(rec.get("value"), (int, float)):
            fig = {k: rec.get(k) for k in ("probe", "key", "label", "value", "unit", "model", "model_label",
                                             "higher_is_better", "flaggable", "measurement", "size_bytes")}
            if fig["size_bytes"] is None:
                del fig["size_bytes"]
            if fig["flaggable"] is None:
                del fig["flaggable"]
            fig["probe"] = fig["probe"] or rec["key"].split("/")[0]
            fig["label"] = fig["label"] or rec["key"]
            fig["unit"] = fig["unit"] or ""
            fig["higher_is_better"] = True if fig["higher_is_better"] is None else bool(fig["higher_is_better"])
            out.append(fig)
    return out


def _spec_of(result: dict[str, Any]) -> specs.GPUSpec | None:
    dev = result["device"]
    if dev.get("backend") not in (None, "cuda"):
        return None
    if dev.get("spec_name"):
        with contextlib.suppress(ValueError):
            return specs.get(dev["spec_name"])
    return specs.match(dev.get("name"))


def figures_from_result(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The comparable figures a result holds, whatever benchmark wrote it.

    ``report`` results (and any result whose records carry ``key``/``value``) are read as they are;
    ``matmul`` (*Architecture* chapter), ``hbm`` (*HBM* chapter) and ``sparsity`` (*2:4 sparsity* chapter)
    records are converted.
    A benchmark whose module is missing, or whose records cannot be read, gives no figures. ``result`` is a
    result of the package (schema ``ampere-result/1``).
    """
    from .arguments import result as _result

    result = _result("result", result)
    bench = result.get("benchmark")
    try:
        if bench == "matmul":
            return _matmul_figures(result["records"], _spec_of(result))
        if bench == "sparsity":
            return _sparsity_figures(result)
        if bench == "hbm":
            return _hbm_result_figures(result)
    except (ImportError, KeyError, TypeError, ValueError):
        return []
    return _generic_figures(result)


def _gpu_id(device: dict[str, Any]) -> str:
    """Which GPU a result comes from: the catalogue name, else the driver's name; a MIG slice is its own GPU."""
    who = device.get("spec_name") or device.get("name") or device.get("backend", "?")
    if device.get("mig_instance"):
        who = f"{who} MIG {device['mig_instance']}"
    return str(who)


def recorded_figures(results_list: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Figures of recorded results (GPU results only), each with ``gpu``, ``provenance``, ``created_utc``.
    ``results_list`` is a list of results of the package (:func:`load_references`)."""
    from ..results import provenance
    from .arguments import result_list

    out = []
    for res in result_list("results_list", results_list):
        if res["device"].get("backend") != "cuda":
            continue
        for fig in figures_from_result(res):
            fig = dict(fig)
            fig.pop("measurement", None)
            fig.update({"gpu": _gpu_id(res["device"]), "provenance": provenance(res),
                        "created_utc": res["created_utc"], "file": res.get("_file")})
            out.append(fig)
    return out


# --- HBM and L2 (module ampere.hbm) ----------------------------------------------------------------------


def _hbm_figures(records: Sequence[dict[str, Any]], spec: specs.GPUSpec | None,
                 l2_bytes: float | None = None) -> list[dict[str, Any]]:
    """Figures of ``ampere.hbm`` records (fresh or recorded): bandwidth per kernel, the L2 sweep's plateaus
    and the knee position relative to the L2 the device reports."""
    from .. import hbm

    out = []
    for row in hbm.bandwidth_rows(records):
        rec = next(r for r in records if r.get("params", {}).get("kernel") == row["kernel"]
                   and r.get("params", {}).get("experiment") == "bandwidth")
        out.append({"probe": "hbm-copy", "key": f"hbm/{row['kernel']}",
                    "label": f"DRAM {row['kernel']} ({row['engine']}), reads + writes",
                    "value": row["bytes_per_s"] / 1e9, "unit": "GB/s", "higher_is_better": True,
                    "model": spec.hbm_bytes_per_s / 1e9 if spec else None,
                    "model_label": f"datasheet {spec.memory_type} bandwidth" if spec else None,
                    "measurement": rec.get("measurement")})
    f, y, l2 = hbm.sweep_rows(records)
    l2 = l2 or l2_bytes
    if len(f) >= 3 and l2:
        knee = hbm.find_knee(f, y, l2)
        out.append({"probe": "l2-sweep", "key": "l2/plateau", "label": "L2 sweep: plateau inside L2 (torch.sum)",
                    "value": knee["l2_plateau_bytes_per_s"] / 1e9, "unit": "GB/s", "higher_is_better": True,
                    "model": None, "model_label": None})
        out.append({"probe": "l2-sweep", "key": "l2/dram-plateau", "label": "L2 sweep: plateau beyond 2 x L2",
                    "value": knee["dram_plateau_bytes_per_s"] / 1e9, "unit": "GB/s", "higher_is_better": True,
                    "model": spec.hbm_bytes_per_s / 1e9 if spec else None,
                    "model_label": "datasheet DRAM bandwidth" if spec else None})
        if knee["visible"]:
            out.append({"probe": "l2-sweep", "key": "l2/knee", "label": "L2 sweep: knee / reported L2 size",
                        "value": knee["ratio_to_l2"], "unit": "x L2", "higher_is_better": True, "flaggable": False,
                        "model": 1.0, "model_label": "the knee sits at the L2 size"})
    return out


def _hbm_result_figures(result: dict[str, Any]) -> list[dict[str, Any]]:
    return _hbm_figures(result["records"], _spec_of(result), result["device"].get("l2_bytes"))


# --- all-reduce across the GPUs of the machine -----------------------------------------------------------


#: all-reduce sizes on the busbw plateau, largest first: nccl-tests' bus bandwidth still rises at 512 MiB
#: on 8 A100s (NCCL maintainer, nccl-tests#149) and 256 MiB is too small for the peak (nccl-tests#212)
ALLREDUCE_SIZES: tuple[int, ...] = (8 * 2**30, 4 * 2**30)


def allreduce_sizes(memory_bytes: float | None) -> list[int]:
    """The plateau sizes a GPU of ``memory_bytes`` can all-reduce with room to spare (a quarter of its
    memory per buffer), smallest first; 1 GiB when none fits (a GPU of less than 16 GiB) or the memory is
    unknown (None or 0). At most 2**50 bytes (a PiB)."""
    from .. import check

    memory_bytes = check.optional(check.nonneg, "memory_bytes", memory_bytes, maximum=2.0**50)
    fits = [s for s in ALLREDUCE_SIZES if memory_bytes and 4 * s <= memory_bytes]
    return sorted(fits) or [2**30]


def size_label(nbytes: int) -> str:
    """``4294967296`` -> "4 GiB", ``268435456`` -> "256 MiB" (binary units, as nccl-tests' -e 4G means)."""
    from .. import check

    nbytes = check.nonneg_int("nbytes", nbytes)
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale and nbytes % scale == 0:
            return f"{nbytes // scale} {unit}"
    return f"{nbytes} B"


def allreduce_key(gpus: int, size_bytes: int) -> str:
    """The figure key of an all-reduce of ``size_bytes`` per rank on ``gpus`` GPUs of one node: a comparison
    pairs only figures of the same key, hence of the same size and GPU count."""
    from .. import check

    gpus = check.positive_int("gpus", gpus, maximum=1_000_000)
    size_bytes = check.positive_int("size_bytes", size_bytes, maximum=2**39)  # 550 GB: above any GPU's memory
    return f"allreduce/n{int(gpus)}/{int(size_bytes)}"


def _link_model(spec: specs.GPUSpec | None) -> tuple[float | None, str | None]:
    """Model of the all-reduce busbw (bytes/s): effective NVLink per direction, or PCIe per direction."""
    if spec is None:
        return None, None
    from .. import fabrics

    if spec.nvlink_bytes_per_s and spec.form_factor.startswith("SXM"):
        return fabrics.nvlink_effective_bytes_per_s(spec), "effective NVLink per direction (128-B payloads)"
    return spec.pcie_bytes_per_s, f"PCIe Gen{spec.pcie_generation} x16 per direction"


# --- recorded results to compare with --------------------------------------------------------------------


def load_references(folder: str | os.PathLike[str] | None = None, bundled: bool = True) -> list[dict[str, Any]]:
    """Recorded results to compare with: the package's ``ampere/data`` (``bundled``) and ``folder``'s JSON.

    Files that are not valid results raise ``ValueError`` naming the file.
    """
    from .. import check, results
    from .arguments import path

    bundled = check.boolean("bundled", bundled)
    out = list(results.recorded()) if bundled else []
    if folder is not None:
        folder = Path(path("folder", folder))
        if not folder.is_dir():
            raise ValueError(f"reference folder {str(folder)!r} does not exist or is not a folder")
        for path in sorted(folder.glob("*.json")):
            res = results.load(path)
            res["_file"] = path.name
            out.append(res)
    return out
