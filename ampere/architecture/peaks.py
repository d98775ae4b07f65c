"""Every headline number derived: per-SM resources, the peak tables (derived beside the datasheet) and
the datasheet validation behind ``python -m ampere validate specs``.

Chapter: *Architecture of the GA100* (book/architecture.ipynb), "Inside an SM" and "Every headline number,
derived". Pure Python: no torch, no matplotlib; the derivations live in ``ampere.gemm`` and ``ampere.specs``.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from .. import check, gemm, specs


def sm_resources(gpu: str | specs.GPUSpec) -> dict[str, Any]:
    """Per-SM resources of ``gpu`` (lanes per clock, tensor cores, memories) as a flat dict.

    Chapter: *Architecture of the GA100*, "Inside an SM".
    """
    spec = specs.get(gpu)
    rates = spec.fma_per_clk_per_sm
    return {
        "gpu": spec.name, "compute capability": f"{spec.compute_capability[0]}.{spec.compute_capability[1]}",
        "SMs": spec.sm_count, "FP32 lanes/SM": rates["fp32"], "FP64 lanes/SM": rates["fp64"],
        "tensor cores/SM": spec.tensor_cores_per_sm, "tensor core gen": spec.tensor_core_generation,
        "FP16 FMA/clk/SM (tensor)": rates.get("fp16", 0),
        "FMA/clk per tensor core": rates.get("fp16", 0) // max(spec.tensor_cores_per_sm, 1),
        "L1+shared KiB/SM": spec.l1_shared_bytes_per_sm // 1024,
        "max shared KiB/SM": spec.max_shared_bytes_per_sm // 1024,
        "registers KiB/SM": spec.register_file_bytes_per_sm // 1024,
        "max threads/SM": spec.max_threads_per_sm, "L2 MiB": spec.l2_bytes / 2**20,
    }


def peak_rows(gpus: Iterable[str], precisions: Sequence[str] = specs.PRECISIONS) -> list[dict[str, Any]]:
    """The chapter's peak table: :func:`ampere.gemm.peak_rows` as dict rows for a Markdown table
    (``derived_tflops`` = SMs x FMA/clk/SM x 2 x clock, x 2 for 2:4 sparse; ``datasheet`` the printed figure;
    ``agrees`` whether they match to the printed precision).

    Chapter: *Architecture of the GA100*, "Every headline number, derived".
    """
    gpus = check.gpus("gpus", gpus)
    precisions = check.names("precisions", precisions, specs.PRECISIONS)
    return [r.to_dict() for r in gemm.peak_rows(gpus, precisions)]


def _simt_rows(gpus: Iterable[str | specs.GPUSpec]) -> list[gemm.PeakRow]:
    """The non-tensor 16-bit peaks (``fp16_simt``, ``bf16_simt``: packed half2 / bfloat162 FMA on the CUDA cores)
    as :class:`ampere.gemm.PeakRow` rows, dense only, for the GPUs whose source gives them."""
    rows = []
    for name in gpus:
        spec = specs.get(name)
        for p in specs.SIMT_PRECISIONS:
            if not spec.supports(p):
                continue
            derived = spec.peak_flops(p)
            quoted = spec.datasheet.get((p, False))
            rows.append(gemm.PeakRow(
                gpu=spec.name, precision=p, sparse=False, sms=spec.sm_count, fma_per_clk_per_sm=spec.fma_per_clk_per_sm[p],
                clock_hz=spec.clock_for(p), derived_flop_per_s=derived, datasheet=quoted.text if quoted else None,
                agrees=quoted.agrees_with(derived) if quoted else None, note=quoted.note if quoted else None))
    return rows


def validate_datasheets() -> tuple[str, bool]:
    """Every printed datasheet peak of the catalogue against its derivation (``python -m ampere validate specs``).

    Passes when every figure without a documented note agrees to its printed precision, and every figure
    with a note (a known NVIDIA rounding quirk) really disagrees — so the notes stay honest. The non-tensor
    16-bit figures (``fp16_simt``, ``bf16_simt``) are checked too.

    Chapter: *Architecture of the GA100*, "Every headline number, derived".
    """
    rows = [r for r in gemm.peak_rows(specs.names()) + _simt_rows(specs.names()) if r.datasheet is not None]
    lines, ok = [], True
    for r in rows:
        expected = r.note is None
        good = r.agrees == expected
        ok &= good
        mode = "sparse" if r.sparse else "dense"
        flag = "ok" if good else "MISMATCH"
        lines.append(f"{r.gpu:16s} {r.precision:8s} {mode:6s} derived {r.derived_tflops:9.2f} "
                     f"datasheet {r.datasheet:>7s}  {flag}" + (f"  ({r.note})" if r.note else ""))
    lines.append(f"{len(rows)} datasheet figures checked")
    return "\n".join(lines), ok


#: The three generations the chapter draws side by side.
GENERATIONS = ("V100-SXM2-32GB", "A100-SXM4-80GB", "H100-SXM5-80GB")


def sm_table(gpus: Sequence[str] = (*GENERATIONS, "RTX-A6000")) -> list[dict[str, Any]]:
    """:func:`sm_resources` of ``gpus`` transposed: one row per resource, one column per GPU.

    Chapter: *Architecture of the GA100*, "Inside an SM".
    """
    rows = [sm_resources(g) for g in check.gpus("gpus", gpus, max_len=16)]
    return [{"": k, **{r["gpu"]: r[k] for r in rows}} for k in rows[0] if k != "gpu"]


def peak_table(gpu: str | specs.GPUSpec = "A100-SXM4-80GB") -> list[dict[str, Any]]:
    """Every peak of ``gpu`` with its derivation and the datasheet figure, as Markdown-ready rows: the table
    precisions and, after FP32, the non-tensor 16-bit rates of the CUDA cores where a source gives them; 2:4
    sparse rows say "sparse" after the precision.

    Chapter: *Architecture of the GA100*, "Every headline number, derived".
    """
    rows = gemm.peak_rows([gpu])
    cut = max((i + 1 for i, r in enumerate(rows) if r.precision == "fp32"), default=len(rows))
    rows = rows[:cut] + _simt_rows([gpu]) + rows[cut:]  # the CUDA-core 16-bit rates right after FP32
    return [{"precision": r.precision + (" sparse" if r.sparse else ""),
             "cores": "tensor" if r.precision in specs.TENSOR_PRECISIONS else "CUDA",
             "FMA/clk/SM": r.fma_per_clk_per_sm, "clock MHz": f"{r.clock_mhz:.0f}",
             "derived TFLOP/s": f"{r.derived_tflops:.1f}", "datasheet": r.datasheet or "",
             "agrees": "" if r.agrees is None else ("yes" if r.agrees else "no (see note)")}
            for r in rows]


#: The GPUs of the chapter's catalogue-wide peak table, oldest first.
CATALOGUE_ORDER = ("V100-SXM2-32GB", "A100-SXM4-40GB", "A100-SXM4-80GB", "A100-PCIE-80GB", "H100-SXM5-80GB",
                   "H200-SXM-141GB", "RTX-A6000", "RTX-A2000-12GB", "T4", "L4")


def catalogue_peaks(gpus: Sequence[str] = CATALOGUE_ORDER,
                    precisions: Sequence[str] = ("fp64", "fp64_tc", "fp32", "tf32", "bf16", "fp16", "fp8", "int8")
                    ) -> list[dict[str, Any]]:
    """Dense peaks (TFLOP/s, TOP/s for int8) of every GPU and precision, blank where the GPU has no such unit.

    Chapter: *Architecture of the GA100*, "Every headline number, derived".
    """
    gpus = check.gpus("gpus", gpus)
    precisions = check.names("precisions", precisions, specs.PRECISIONS)
    out = []
    for name in gpus:
        spec = specs.get(name)
        row: dict[str, Any] = {"GPU": spec.name, "cc": f"{spec.compute_capability[0]}.{spec.compute_capability[1]}",
                               "SMs": spec.sm_count}
        for p in precisions:
            row[p] = f"{spec.peak_flops(p) / 1e12:.1f}" if spec.supports(p) else ""
        out.append(row)
    return out


def datasheet_notes() -> list[dict[str, str]]:
    """The datasheet figures that do not match their derivation, with the documented reason (one row each).

    Chapter: *Architecture of the GA100*, "Every headline number, derived".
    """
    seen: dict[str, dict[str, str]] = {}
    for r in gemm.peak_rows(specs.names()) + _simt_rows(specs.names()):
        if r.note and r.note not in seen:
            seen[r.note] = {"first GPU": r.gpu, "figure": f"{r.precision} {'sparse' if r.sparse else 'dense'}: "
                            f"printed {r.datasheet}, derived {r.derived_tflops:.2f}", "why": r.note}
    return list(seen.values())
