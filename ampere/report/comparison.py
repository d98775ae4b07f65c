"""The comparison: each measured figure against its model, the recorded reference of the same GPU
(flagged more than :data:`FLAG_THRESHOLD` below it) and other GPUs; the configuration fields that differ
from the reference; the printable rows of the comparison, of the model and of recorded results.

Pure: no torch, no matplotlib. Chapter: *The reference check* (book/reference-check.ipynb).
"""

from __future__ import annotations

import statistics
from typing import Any, Sequence

from .. import check, specs
from .arguments import figure_list, mapping_list, result_list
from .extract import _MATMUL_LABEL, _gpu_id, _model_precision, size_label

#: A figure more than this fraction below the recorded reference of the same GPU is flagged.
FLAG_THRESHOLD = 0.10


def compare(figures: Sequence[dict[str, Any]], gpu: str, recorded: Sequence[dict[str, Any]],
            threshold: float = FLAG_THRESHOLD) -> list[dict[str, Any]]:
    """Compare measured ``figures`` of ``gpu`` with their model and with ``recorded`` figures.

    For each figure: ``pct_of_model`` (value / model); ``reference`` = median of the recorded values of
    the same key on the same GPU (``None`` when nothing is recorded), ``pct_of_reference``, and ``flag``
    = the value falls more than ``threshold`` below the reference (above it, for figures where lower is
    better); ``others``: the same key recorded on other GPUs, with this value's ratio to theirs.
    ``status`` is ``"ok"``, ``"below reference"`` or ``"no reference"``. A figure with a size (an
    all-reduce: ``size_bytes``, also in its key) is compared only with references of the same size; each row
    states the size on both sides (``size_bytes``, ``reference_sizes``). ``gpu`` is the name the figures'
    GPU goes by (a catalogue name, a driver's name or a MIG slice: :func:`ampere.report.recorded_figures`).
    Chapter: *The reference check*, "How a figure is judged".
    """
    threshold = check.real("threshold", threshold)
    if not 0 < threshold < 1:
        raise ValueError(f"threshold={threshold!r} must be a fraction between 0 and 1 (0.10 = 10 %)")
    figures = figure_list("figures", figures)
    gpu = check.string("gpu", gpu, max_len=500)
    recorded = figure_list("recorded", recorded, recorded=True)
    by_key: dict[str, list[dict[str, Any]]] = {}
    for r in recorded:
        by_key.setdefault(r["key"], []).append(r)
    rows = []
    for fig in figures:
        value = float(fig["value"])
        model = fig.get("model")
        size = size_of(fig)
        sized = [r for r in by_key.get(fig["key"], []) if size_of(r) == size]
        same = [r for r in sized if r["gpu"] == gpu]
        others = [r for r in sized if r["gpu"] != gpu]
        ref = statistics.median(float(r["value"]) for r in same) if same else None
        higher = fig.get("higher_is_better", True)
        flag = False
        if ref and fig.get("flaggable", True):
            flag = value < (1 - threshold) * ref if higher else value > (1 + threshold) * ref
        other_rows: dict[str, list[float]] = {}
        for r in others:
            other_rows.setdefault(r["gpu"], []).append(float(r["value"]))
        rows.append({
            "key": fig["key"], "probe": fig.get("probe"), "label": fig.get("label", fig["key"]),
            "unit": fig.get("unit", ""), "value": value, "model": model, "model_label": fig.get("model_label"),
            "pct_of_model": 100 * value / model if model else None,
            "reference": ref, "reference_n": len(same),
            "reference_from": sorted({str(r.get("provenance", "")) for r in same}),
            "pct_of_reference": 100 * value / ref if ref else None,
            "size_bytes": size, "reference_sizes": sorted({size_of(r) for r in same}, key=lambda x: x or 0),
            "flag": bool(flag), "status": "no reference" if ref is None else ("below reference" if flag else "ok"),
            "others": [{"gpu": g, "value": statistics.median(v), "n": len(v),
                        "ratio": value / statistics.median(v) if statistics.median(v) else None}
                       for g, v in sorted(other_rows.items())],
            "warnings": list((fig.get("measurement") or {}).get("warnings") or []),
        })
    return rows


def size_of(fig: Any) -> int | None:
    """The message size of a figure (all-reduce: ``size_bytes``, or the last part of its key), else None."""
    if fig.get("size_bytes") is not None:
        return int(fig["size_bytes"])
    parts = str(fig.get("key", "")).split("/")
    return int(parts[2]) if parts[0] == "allreduce" and len(parts) == 3 and parts[2].isdigit() else None


#: Device and software fields that explain why identical GPUs differ (the *Reference check* chapter).
CONFIG_FIELDS: tuple[tuple[str, str], ...] = (
    ("power_limit_w", "power limit (W)"), ("sm_clock_max_hz", "max SM clock (Hz)"),
    ("ecc_enabled", "ECC enabled"), ("pcie_link", "PCIe link"),
    ("mig_enabled", "MIG enabled"), ("mig_instance", "MIG instance"), ("driver_version", "driver"),
    ("cuda_version", "CUDA (torch build)"), ("torch_version", "torch"), ("cudnn_version", "cuDNN"),
    ("nccl_version", "NCCL"), ("gpu_count", "GPUs in the machine"), ("cpu_name", "CPU"),
)


def config_differences(device: dict[str, Any], references: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Fields of ``device`` that differ from the recorded results of the same GPU (``references``).

    One row per field and differing value: the prime suspects when a figure is below its reference.
    ``device`` is a result's device block (``DeviceInfo.to_dict()``), ``references`` results of the package.
    """
    device = check.mapping("device", device)
    references = result_list("references", references)
    gpu = _gpu_id(device)
    rows = []
    for res in references:
        if res["device"].get("backend") != "cuda" or _gpu_id(res["device"]) != gpu:
            continue
        for name, label in CONFIG_FIELDS:
            mine, theirs = device.get(name), res["device"].get(name)
            if mine != theirs:
                rows.append({"field": label, "this machine": mine, "reference": theirs,
                             "reference result": res.get("_file") or res["created_utc"]})
    return rows


def summary_rows(comparisons: Sequence[dict[str, Any]]) -> list[dict[str, str]]:
    """Printable rows (strings) of :func:`compare`'s output, as the HTML and the chapter show them."""
    comparisons = mapping_list("comparisons", comparisons, ("label", "value", "unit", "model", "pct_of_model",
                                                            "reference", "pct_of_reference", "flag", "status",
                                                            "others"))
    for i, c in enumerate(comparisons):
        check.finite(f"comparisons[{i}]['value']", c["value"])
        for k in ("model", "pct_of_model", "reference", "pct_of_reference"):
            check.optional(check.finite, f"comparisons[{i}][{k!r}]", c[k])
        mapping_list(f"comparisons[{i}]['others']", c["others"], ("gpu", "value", "ratio"))
    rows = []
    for c in comparisons:
        def fmt(v: float | None, spec: str = ".1f") -> str:
            return "-" if v is None else format(v, spec)

        others = "; ".join(f"{o['gpu']}: {o['value']:.1f} ({o['ratio']:.2f}x)" if o["ratio"] else o["gpu"]
                           for o in c["others"]) or "-"
        rows.append({
            "figure": c["label"], "measured": f"{c['value']:.2f} {c['unit']}",
            "model": "-" if c["model"] is None else f"{c['model']:.1f} {c['unit']}",
            "% of model": fmt(c["pct_of_model"]),
            "reference": "-" if c["reference"] is None else f"{c['reference']:.2f} (n={c['reference_n']}"
                         + (f", at {size_label(c['size_bytes'])})" if c.get("size_bytes") else ")"),
            "% of reference": fmt(c["pct_of_reference"]),
            "status": ("FLAG: " if c["flag"] else "") + c["status"], "other GPUs (recorded)": others,
        })
    return rows


def model_rows(gpu: str | specs.GPUSpec) -> list[dict[str, str]]:
    """What the model of ``gpu`` (a catalogue name) predicts for every figure kind of the report (the
    model-only report)."""
    from ..views import cite_label

    spec = specs.get(check.gpu("gpu", gpu))
    rows = []
    for p in ("fp64", "fp32", "tf32", "bf16", "fp16"):
        mp = _model_precision(spec, p)
        if mp is None:
            rows.append({"figure": f"{_MATMUL_LABEL[p]} matmul", "model": "not supported",
                         "source": cite_label(spec.source("fma_per_clk_per_sm"))})
            continue
        sparse = (f", {spec.peak_flops(mp, True) / 1e12:.1f} with 2:4 sparsity"
                  if spec.supports(mp, sparse=True) else "")
        rows.append({"figure": f"{_MATMUL_LABEL[p]} matmul ({mp})",
                     "model": f"{spec.peak_flops(mp) / 1e12:.1f} TFLOP/s dense{sparse}",
                     "source": cite_label(spec.source("fma_per_clk_per_sm"))})
    rows.append({"figure": "DRAM bandwidth", "model": f"{spec.hbm_bytes_per_s / 1e9:.0f} GB/s ({spec.memory_type})",
                 "source": cite_label(spec.source("hbm_bytes_per_s"))})
    l2 = spec.l2_bytes_per_s
    rows.append({"figure": "L2 capacity / read bandwidth",
                 "model": f"{spec.l2_bytes / 2**20:.0f} MiB" + (f", {l2 / 1e12:.2f} TB/s" if l2 else ""),
                 "source": cite_label(spec.source("l2_bytes"))})
    rows.append({"figure": "NVLink (per direction)",
                 "model": f"{spec.nvlink_bytes_per_s / 2e9:.0f} GB/s" if spec.nvlink_bytes_per_s else "none",
                 "source": cite_label(spec.source("nvlink_bytes_per_s"))})
    rows.append({"figure": "PCIe (per direction)", "model": f"{spec.pcie_bytes_per_s / 1e9:.1f} GB/s "
                 f"(Gen{spec.pcie_generation} x16)", "source": cite_label(spec.source("pcie_generation"))})
    return rows


def recorded_rows(recorded: Sequence[dict[str, Any]]) -> list[dict[str, str]]:
    """Printable rows of :func:`recorded_figures`: GPU, figure, value, % of its model, provenance."""
    recorded = figure_list("recorded", recorded, recorded=True)
    recorded = mapping_list("recorded", recorded, ("label", "unit", "provenance"))
    return [{"GPU": r["gpu"], "figure": r["label"], "value": f"{r['value']:.2f} {r['unit']}",
             "% of model": f"{100 * r['value'] / r['model']:.1f}" if r.get("model") else "-",
             "provenance": r["provenance"]} for r in sorted(recorded, key=lambda r: (r["key"], r["gpu"]))]
