"""The GA100 and its neighbours: die hierarchy, per-SM resources, peaks derived live, and the roofline.

Chapter: *Architecture of the GA100* (book/architecture.ipynb). Everything here reads its facts from
``ampere.specs``; the matmul sweep measures a real GPU with ``ampere.timing`` and records with
``ampere.results``.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from . import check, gemm, specs
from .gemm import peak_precision_for, wave_efficiency  # noqa: F401  (transitional aliases)
from .tables import markdown_table

__all__ = [
    "DieLayout", "die_layout", "draw_die", "sm_resources", "peak_rows", "validate_datasheets", "ridge_point",
    "matmul_intensity", "attainable_flops", "ridge_points", "roofline_curve", "harvest_yield", "harvest_shortfall",
    "capability_rows", "capability_markdown", "wave_efficiency", "PUBLISHED_MATMUL", "MATMUL_PRECISIONS", "matmul_sweep",
    "matmul_records", "bench_main", "peak_precision_for", "bf16_peak_check",
    "BF16_TARGET_PCT",
]

# ---------------------------------------------------------------------------------------------------
# Die hierarchy
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DieLayout:
    """Which TPCs of a die are enabled on a product. ``tpcs[g][t]`` is True when TPC ``t`` of GPC ``g`` works.

    NVIDIA does not publish which units are fused off, and it differs from die to die (that is the point
    of harvesting): the pattern is illustrative, the counts are exact.

    Chapter: *Architecture of the GA100*, "From a die to a product".
    """

    spec_name: str
    tpcs: tuple[tuple[bool, ...], ...]

    @property
    def gpcs(self) -> int:
        return len(self.tpcs)

    @property
    def enabled_tpcs(self) -> int:
        return sum(sum(g) for g in self.tpcs)

    @property
    def enabled_sms(self) -> int:
        return 2 * self.enabled_tpcs

    @property
    def enabled_gpcs(self) -> int:
        return sum(1 for g in self.tpcs if any(g))


def die_layout(gpu: str | specs.GPUSpec) -> DieLayout:
    """An enabled/disabled map of the TPCs of ``gpu``'s die with exactly ``sm_count`` SMs enabled.

    For the GA100 the whitepaper's product configuration is used: 7 of 8 GPCs, each with 7 or 8 of its
    8 TPCs (7 x 8 x 2 - 4 = 108 SMs). Other dies lose whole TPCs spread over the GPCs from the last one.

    Chapter: *Architecture of the GA100*, "From a die to a product".
    """
    spec = specs.get(gpu)
    g, t = spec.die_gpcs, spec.die_tpcs_per_gpc
    missing_tpcs = spec.die_sms // 2 - spec.sm_count // 2
    if spec.sm_count % 2 or missing_tpcs < 0:
        raise ValueError(f"gpu={spec.name!r}: {spec.sm_count} SMs cannot be laid out on {g}x{t} TPC pairs")
    enabled = [[True] * t for _ in range(g)]
    order: list[tuple[int, int]] = []
    if spec.chip == "GA100":
        order += [(g - 1, j) for j in range(t)]  # one whole GPC fused off
        order += [(g - 1 - k, t - 1) for k in range(1, g)]  # then one TPC per remaining GPC, from the end
    else:
        order += [(g - 1 - (k % g), t - 1 - (k // g)) for k in range(g * t)]
    for gi, ti in order[:missing_tpcs]:
        enabled[gi][ti] = False
    return DieLayout(spec.name, tuple(tuple(row) for row in enabled))


def draw_die(ax: Any, gpu: str | specs.GPUSpec, title: bool = True) -> DieLayout:
    """Draw ``gpu``'s die: GPCs of TPCs (2 SMs each; enabled SMs filled in the GPU's colour, fused-off ones
    hollow with a dashed outline, so the two read apart whatever the colour), the L2 band and memory sites.

    Chapter: *Architecture of the GA100*, "From a die to a product".
    """
    from matplotlib.patches import Rectangle

    from .plots import gpu_color

    spec = specs.get(gpu)
    layout = die_layout(spec)
    color = gpu_color(spec.name)
    cols = math.ceil(layout.gpcs / 2)
    gw, gh, band = 1.0, 1.0, 0.35  # GPC cell width/height, L2 band height
    for gi, tpcs in enumerate(layout.tpcs):
        row, col = divmod(gi, cols)
        x0, y0 = col * (gw + 0.1), 0.0 if row == 0 else gh + band + 0.2
        ax.add_patch(Rectangle((x0, y0), gw, gh, fill=False, lw=1.0, ec="#444444"))
        per_row = math.ceil(len(tpcs) / 2)
        w = (gw - 0.1) / per_row
        for ti, on in enumerate(tpcs):
            r, c = divmod(ti, per_row)
            for s in range(2):  # the two SMs of a TPC, stacked
                xy = (x0 + 0.05 + c * w + 0.02, y0 + 0.07 + r * 0.45 + s * 0.21)
                if on:
                    ax.add_patch(Rectangle(xy, w - 0.04, 0.18, color=color, lw=0))
                else:
                    ax.add_patch(Rectangle(xy, w - 0.04, 0.18, fill=False, ec="#555555", lw=0.6, ls=(0, (2, 1))))
    width = cols * (gw + 0.1) - 0.1
    top = 2 * gh + band + 0.2
    ax.add_patch(Rectangle((0, gh + 0.1), width, band, color="#9ecae1", lw=0))
    ax.text(width / 2, gh + 0.1 + band / 2, f"L2 {spec.l2_bytes / 2**20:.0f} MiB", ha="center", va="center",
            fontsize=8)
    stacks = spec.memory_stacks or 0
    sites = stacks + (1 if spec.chip in ("GA100", "GH100") else 0)  # GA100/GH100 have a 6th, unused site
    per_side = max(1, math.ceil(sites / 2))
    h = top / per_side
    for k in range(sites):  # HBM stacks left and right of the die (GDDR parts have none drawn)
        side, idx = divmod(k, per_side)
        x = -0.45 if side == 0 else width + 0.1
        ax.add_patch(Rectangle((x, idx * h + 0.05), 0.35, h - 0.1, color="#fdae6b" if k < stacks else "#eeeeee",
                               ec="#999999", lw=0.5))
    ax.set_xlim(-0.6, width + 0.6)
    ax.set_ylim(-0.1, top + 0.1)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(f"{spec.chip} as {spec.name}\n{layout.enabled_sms} of {spec.die_sms} SMs, "
                     f"{spec.memory_type} x{stacks or '-'}", fontsize=9)
    return layout


# ---------------------------------------------------------------------------------------------------
# The SM and the headline numbers
# ---------------------------------------------------------------------------------------------------


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
    return [r.to_dict() for r in gemm.peak_rows(gpus, precisions)]


def validate_datasheets() -> tuple[str, bool]:
    """Every printed datasheet peak of the catalogue against its derivation (``python -m ampere validate specs``).

    Passes when every figure without a documented note agrees to its printed precision, and every figure
    with a note (a known NVIDIA rounding quirk) really disagrees — so the notes stay honest.

    Chapter: *Architecture of the GA100*, "Every headline number, derived".
    """
    rows = [r for r in gemm.peak_rows(specs.names()) if r.datasheet is not None]
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


# ---------------------------------------------------------------------------------------------------
# Roofline
# ---------------------------------------------------------------------------------------------------

_BYTES = {"fp64": 8, "fp64_tc": 8, "fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "int4": 0.5}


def matmul_intensity(m: int, n: int, k: int, precision: str = "bf16") -> float:
    """Arithmetic intensity (FLOP/byte) of C[m,n] = A[m,k] @ B[k,n] if each matrix crosses DRAM once.

    FLOPs = 2mnk; bytes = element size x (mk + kn + mn). For a square n x n matmul in 2-byte elements
    this is n/3 FLOP/byte: a 4096^3 bf16 matmul does ~1365 FLOP per byte moved.

    Chapter: *Architecture of the GA100*, "The roofline".
    """
    m, n, k = (check.positive_int(label, v) for label, v in (("m", m), ("n", n), ("k", k)))
    check.one_of("precision", precision, _BYTES)
    return gemm.matmul_flops(m, n, k) / (_BYTES[precision] * (m * k + k * n + m * n))


def _bandwidth(spec: specs.GPUSpec, bytes_per_s: float | None) -> float:
    """The roofline's bandwidth: ``bytes_per_s`` (finite, > 0) or the datasheet DRAM figure."""
    if bytes_per_s is None:
        return spec.hbm_bytes_per_s
    return check.positive("bytes_per_s", bytes_per_s)


def ridge_point(gpu: str | specs.GPUSpec, precision: str, bytes_per_s: float | None = None) -> float:
    """Arithmetic intensity (FLOP/byte) where the roofline of ``precision`` turns: dense peak / bandwidth.

    ``bytes_per_s`` defaults to the datasheet DRAM bandwidth (pass ``spec.l2_bytes_per_s`` for the L2 roof);
    zero, negative, NaN or infinite bandwidths are refused. Chapter: *Architecture of the GA100*, "The
    roofline".
    """
    spec = specs.get(gpu)
    check.one_of("precision", precision, specs.PRECISIONS)
    if not spec.supports(precision):
        raise ValueError(f"precision={precision!r} is not supported on {spec.name}; allowed: "
                         f"{', '.join(spec.precisions())}")
    return spec.peak_flops(precision) / _bandwidth(spec, bytes_per_s)


def attainable_flops(gpu: str | specs.GPUSpec, precision: str, intensity: float | Sequence[float],
                     bytes_per_s: float | None = None):
    """Roofline: min(peak, intensity x bandwidth). Bandwidth defaults to the datasheet DRAM figure.

    Chapter: *Architecture of the GA100*, "The roofline".
    """
    import numpy as np

    spec = specs.get(gpu)
    bw = _bandwidth(spec, bytes_per_s)
    if isinstance(intensity, (str, bytes, bool)):
        raise TypeError(f"intensity must be a number or an array of numbers (FLOP/byte), got {intensity!r}")
    x = np.asarray(intensity, dtype=float)
    if not np.all(np.isfinite(x)) or np.any(x <= 0):
        raise ValueError(f"intensity must be finite and > 0 FLOP/byte, got {intensity!r}")
    y = np.minimum(spec.peak_flops(check.one_of("precision", precision, specs.PRECISIONS)), x * bw)
    return float(y) if y.ndim == 0 else y


def ridge_points(gpu: str | specs.GPUSpec, precisions: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Ridge point (FLOP/byte) of every precision against DRAM and, where published, against L2.

    Chapter: *Architecture of the GA100*, "The roofline".
    """
    spec = specs.get(gpu)
    out = []
    for p in precisions or spec.precisions():
        row = {"gpu": spec.name, "precision": p, "ridge_dram": ridge_point(spec, p),
               "peak_tflops": spec.peak_flops(p) / 1e12}
        if spec.l2_bytes_per_s:
            row["ridge_l2"] = ridge_point(spec, p, spec.l2_bytes_per_s)
        out.append(row)
    return out


def roofline_curve(gpu: str | specs.GPUSpec, precision: str, lo: float = 0.1, hi: float = 1e4, points: int = 200,
                   bytes_per_s: float | None = None):
    """(intensity, attainable FLOP/s) arrays on a log grid, for plotting.

    Chapter: *Architecture of the GA100*, "The roofline".
    """
    import numpy as np

    lo, hi = check.positive("lo", lo), check.positive("hi", hi)
    if hi <= lo:
        raise ValueError(f"hi={hi:g} must be larger than lo={lo:g}")
    x = np.logspace(math.log10(lo), math.log10(hi), check.integer("points", points, minimum=2))
    return x, attainable_flops(gpu, precision, x, bytes_per_s)


# ---------------------------------------------------------------------------------------------------
# Why 108 of 128: harvesting
# ---------------------------------------------------------------------------------------------------


def harvest_yield(units: int, needed: int, unit_defect_probability: float) -> float:
    """Probability that at least ``needed`` of ``units`` independent units work (binomial tail).

    With ``units=128, needed=108`` this is the fraction of dies sellable as an A100 if each SM (with its
    share of the die) fails independently with ``unit_defect_probability``; ``needed=units`` is a die
    with no spare. Chapter: *Architecture of the GA100*, "Why 108 of 128".
    """
    units = check.nonneg_int("units", units)
    needed = check.nonneg_int("needed", needed, maximum=units)
    q = check.fraction("unit_defect_probability", unit_defect_probability)
    return float(sum(math.comb(units, k) * (1 - q) ** k * q ** (units - k) for k in range(needed, units + 1)))


def harvest_shortfall(units: int, needed: int, unit_defect_probability: float) -> float:
    """Probability that fewer than ``needed`` of ``units`` work: ``1 - harvest_yield``, summed directly.

    Summing the small tail avoids the cancellation of ``1 - 0.9999...`` in floating point.

    Chapter: *Architecture of the GA100*, "Why sell a 128-SM die as a 108-SM part?".
    """
    harvest_yield(units, needed, unit_defect_probability)  # validates the arguments
    units, needed, q = int(units), int(needed), float(unit_defect_probability)
    return float(sum(math.comb(units, k) * (1 - q) ** k * q ** (units - k) for k in range(0, needed)))


# ---------------------------------------------------------------------------------------------------
# What each environment can measure (the intro's capability table)
# ---------------------------------------------------------------------------------------------------

_ENVIRONMENTS = (
    ("CPU only (CI, laptop)", None),
    ("Colab free tier (T4)", "T4"),
    ("L4 (cloud)", "L4"),
    ("RTX A2000 12GB", "RTX-A2000-12GB"),
    ("RTX A6000", "RTX-A6000"),
    ("A100 80GB SXM (cloud)", "A100-SXM4-80GB"),
    ("H100 / H200 SXM", "H100-SXM5-80GB"),
)


def capability_rows() -> list[dict[str, str]]:
    """What each reader environment can measure, derived from the specs (compute capability and fields).

    Shown by the introduction (book/intro.md); module of the chapter *Architecture of the GA100*.
    """
    rows = []
    for label, name in _ENVIRONMENTS:
        if name is None:
            rows.append({"machine": label, "compute capability": "-", "TF32": "model", "BF16 tensor": "model",
                         "FP8": "model", "2:4 sparse": "model", "MIG": "model", "NVLink": "gloo lab + model",
                         "HBM": "model"})
            continue
        spec = specs.get(name)
        cc = spec.compute_capability

        def yes(flag: bool) -> str:
            return "measure" if flag else "model"

        rows.append({
            "machine": label, "compute capability": f"{cc[0]}.{cc[1]}",
            "TF32": yes(spec.supports("tf32")), "BF16 tensor": yes(spec.supports("bf16")),
            # no chapter measures FP8 (yet): it is the model everywhere, and the row says where FP8 tensor
            # cores exist
            "FP8": "model (FP8 tensor cores)" if spec.supports("fp8") else "model",
            "2:4 sparse": yes(spec.sparse_2to4),
            "MIG": "read via NVML" if spec.mig_max_instances else "model",
            "NVLink": "with 2+ GPUs" if spec.nvlink_links else "gloo lab + model",
            "HBM": yes(True) if spec.memory_type.startswith("HBM") else "measure (GDDR)",
        })
    return rows


def capability_markdown() -> str:
    """:func:`capability_rows` as a Markdown table. Shown by the introduction (book/intro.md); module of the
    chapter *Architecture of the GA100*."""
    return markdown_table(capability_rows())


# ---------------------------------------------------------------------------------------------------
# The matmul sweep: measure, compare with the peak, record
# ---------------------------------------------------------------------------------------------------

def _legacy_published_matmul() -> tuple[dict[str, Any], ...]:
    """The published matmul figures in the dict form other modules read before ``ampere.gemm`` existed.

    Transitional: read from ``ampere/data/published/matmul.json`` through :func:`ampere.gemm.published_matmul`
    (the one place the figures live); new code calls ``gemm.published_matmul`` / ``gemm.mamf_flops``.
    """
    out = []
    for rec in gemm.published_matmul():
        if (rec.id.startswith("mamf-v1-") or rec.params.get("data") == "zeros" or rec.params["method"] == "sweep"
                or rec.params["precision"] not in ("bf16", "fp16")):
            continue  # superseded revision, all-zeros contrast, community sweeps, FP8: not in the old tuple
        out.append({"gpu": rec.gpu, "precision": rec.params["precision"], "tflops": gemm.matmul_tflops(rec),
                    "shape": gemm.matmul_shape(rec), "what": rec.note or rec.where, "source": rec.source,
                    **({"kind": "mamf"} if rec.params.get("method") == "mamf" else {})})
    return tuple(out)


def __getattr__(name: str) -> Any:
    if name == "PUBLISHED_MATMUL":  # transitional alias (see _legacy_published_matmul)
        return _legacy_published_matmul()
    raise AttributeError(f"module 'ampere.architecture' has no attribute {name!r}")


#: Precisions of the sweep and the torch dtype / TF32 switch each one needs.
MATMUL_PRECISIONS: dict[str, tuple[str, bool]] = {
    "fp32": ("float32", False), "tf32": ("float32", True), "bf16": ("bfloat16", False), "fp16": ("float16", False),
    "fp64": ("float64", False),
}


def matmul_sweep(sizes: Sequence[int] = (256, 512, 1024, 2048, 4096, 8192),
                 precisions: Sequence[str] = ("fp32", "tf32", "bf16", "fp16"), device: Any = None,
                 warmup_s: float = 1.0, min_time_s: float = 0.2, max_time_s: float = 5.0,
                 progress: Any = None, info: Any = None) -> list[dict[str, Any]]:
    """Time square matmuls C = A @ B (n x n x n) for every size and precision on ``device``.

    FLOPs = 2n^3 (:func:`ampere.gemm.matmul_flops`). Inputs are random normal (never zeros: clocks under a
    power limit depend on the data), created on the CPU generator and moved, outputs preallocated
    (``torch.matmul(..., out=C)``). Warm-up lasts ``warmup_s`` for the first size of each precision (clocks
    and power settle), a tenth of it afterwards. TF32 is set explicitly per precision and restored. Returns
    records with the measurement, TFLOP/s from the median, and % of the device's dense peak when the device
    is in the catalogue. Out of memory at one size: the tensors are freed (outside the handler, whose
    traceback would keep them alive), a warning says so, and the larger sizes of that precision are skipped.
    On a CPU it works too (small sizes), which is how the unit tests and ``--device cpu`` exercise it.

    Chapter: *Architecture of the GA100*, "Measured on this machine".
    """
    import torch

    from . import device as _device
    from . import timing

    for p in precisions:
        check.one_of("precisions", p, MATMUL_PRECISIONS)
    sizes = [check.positive_int("sizes", n) for n in sizes]
    for name, v in (("warmup_s", warmup_s), ("min_time_s", min_time_s), ("max_time_s", max_time_s)):
        check.nonneg(name, v)
    info = info or _device.probe()
    dev = torch.device(device) if device is not None else _device.torch_device(info)
    spec = info.spec if dev.type == "cuda" else None
    oom = (torch.cuda.OutOfMemoryError, MemoryError)  # the CPU path (and the tests) raise MemoryError
    gen = torch.Generator().manual_seed(0)
    records = []
    for p in precisions:
        dtype_name, tf32 = MATMUL_PRECISIONS[p]
        dtype = getattr(torch, dtype_name)
        for i, n in enumerate(sizes):
            out_of_memory = False
            try:
                a = torch.randn(n, n, generator=gen, dtype=torch.float32).to(dev, dtype)
                b = torch.randn(n, n, generator=gen, dtype=torch.float32).to(dev, dtype)
                c = torch.empty(n, n, device=dev, dtype=dtype)
                with _device.tf32_enabled(tf32):
                    m = timing.benchmark(lambda: torch.matmul(a, b, out=c), label=f"matmul {p} {n}^3", device=dev,
                                         warmup_s=warmup_s if i == 0 else warmup_s / 10, min_time_s=min_time_s,
                                         max_time_s=max_time_s, params={"precision": p, "n": n})
            except oom:
                out_of_memory = True
            if out_of_memory:  # DESIGN section 9: free, say so, go on
                a = b = c = None
                if dev.type == "cuda":
                    torch.cuda.empty_cache()
                warnings.warn(f"matmul {p} {n}^3 ran out of memory on {dev}; skipped {p} at n >= {n}")
                break
            flops = gemm.matmul_flops(n, n, n)
            rec: dict[str, Any] = {"precision": p, "n": n, "flops": flops, "tflops": m.rate(flops) / 1e12,
                                   "tflops_best": m.rate(flops, "min") / 1e12, "measurement": m.to_dict()}
            peak_p = gemm.peak_precision_for(spec, p) if spec is not None else None
            if peak_p is not None:
                rec["peak_precision"] = peak_p
                rec["peak_tflops"] = spec.peak_flops(peak_p) / 1e12
                rec["pct_of_peak"] = 100 * rec["tflops"] / rec["peak_tflops"]
            records.append(rec)
            if progress:
                progress(rec)
        a = b = c = None
    return records


def matmul_records(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The records of a recorded matmul result, with the derived figures recomputed from raw samples.

    Chapter: *Architecture of the GA100*, "Recorded results".
    """
    out = []
    spec = specs.match(result["device"].get("name"))
    for rec in result["records"]:
        from .timing import Measurement

        m = Measurement.from_dict(rec["measurement"])
        tflops = m.rate(rec["flops"]) / 1e12
        row = {"gpu": result["device"].get("name"), "precision": rec["precision"], "n": rec["n"], "tflops": tflops}
        peak_p = gemm.peak_precision_for(spec, rec["precision"]) if spec is not None else None
        if peak_p is not None:
            row["pct_of_peak"] = 100 * tflops / (spec.peak_flops(peak_p) / 1e12)
        out.append(row)
    return out


def bench_main(argv: Sequence[str] | None = None) -> int:
    """``python -m ampere bench matmul``: the Architecture chapter's sweep, recorded as a result JSON.

    Chapter: *Architecture of the GA100*, "Measured on this machine".
    """
    from . import benchcli, results

    p = benchcli.bench_parser("matmul", "Square matmul sweep per precision: TFLOP/s and % of the dense peak.")
    p.add_argument("--sizes", type=int, nargs="+", default=None, help="square sizes (default 256..8192)")
    p.add_argument("--precisions", nargs="+", default=["fp32", "tf32", "bf16", "fp16"],
                   choices=sorted(MATMUL_PRECISIONS))
    args = p.parse_args(list(argv or []))
    info = benchcli.probe(args)
    gpu = info.backend == "cuda"
    if args.sizes:
        sizes = args.sizes
    elif gpu:
        sizes = [1024, 4096, 8192] if args.quick else [256, 512, 1024, 2048, 4096, 8192]
    else:  # the whole code path on the CPU, tiny sizes (a test of the code, not a measurement of a GPU)
        sizes = [64, 128]
    # gate on capabilities: TF32 and BF16 tensor cores need sm80+ (a T4 has FP16 tensor cores only); a CPU
    # runs fp32, fp64, bf16 and fp16 in software and has no TF32 mode
    precisions = [pr for pr in args.precisions if pr in ("fp32", "fp64", "fp16") or
                  (pr == "tf32" and info.tf32) or (pr == "bf16" and (info.bf16_tensor or not gpu))]
    skipped = sorted(set(args.precisions) - set(precisions))

    def show(rec: dict[str, Any]) -> None:
        pct = f"{rec['pct_of_peak']:5.1f}% of peak" if "pct_of_peak" in rec else ""
        print(f"  {rec['precision']:5s} {rec['n']:6d}^3  {rec['tflops']:8.1f} TFLOP/s  {pct}", flush=True)

    if gpu:
        timing_args = {"warmup_s": 0.5 if args.quick else 1.0, "max_time_s": 2.0 if args.quick else 5.0}
    else:
        timing_args = {"warmup_s": 0.01, "min_time_s": 0.01, "max_time_s": 0.2}
    records = matmul_sweep(sizes, precisions, device=None if gpu else "cpu", progress=show, info=info, **timing_args)
    notes = [f"skipped (not supported on this device): {', '.join(skipped)}"] if skipped else []
    if not gpu:
        notes.append("CPU code path: tiny sizes on this CPU, not a measurement of a GPU")
    result = results.make_result("matmul", info, {"sizes": sizes, "precisions": precisions, "quick": args.quick},
                                 records, notes)
    summary = [f"matmul sweep on {info.label()}: {len(records)} configurations"]
    target = bf16_peak_check(records)
    if target is not None:
        summary.append(f"bf16 at {target['n']}^3: {target['tflops']:.1f} TFLOP/s = {target['pct_of_peak']:.1f}% of "
                       f"the dense peak; target >= {target['target_pct']:.0f}%: {'met' if target['met'] else 'NOT met'}")
    return benchcli.finish_bench(result, args, "\n".join(summary))


#: The Architecture chapter's acceptance target: a large BF16 matmul reaches this % of the dense BF16 peak.
BF16_TARGET_PCT = 75.0


def bf16_peak_check(records: Sequence[dict[str, Any]], n: int = 8192,
                    target_pct: float = BF16_TARGET_PCT) -> dict[str, Any] | None:
    """The BF16 matmul at ``n``^3 against ``target_pct`` % of the dense BF16 peak (None when not measured or
    the GPU has no catalogue peak). Works on fresh sweep records and on :func:`matmul_records` rows.
    Chapter: *Architecture of the GA100*, "Measured on this machine"."""
    n = check.positive_int("n", n)
    target_pct = check.real("target_pct", target_pct, minimum=0.0, maximum=100.0)
    for r in records:
        if r.get("precision") == "bf16" and int(r.get("n", 0)) == n and r.get("pct_of_peak") is not None:
            pct = float(r["pct_of_peak"])
            return {"n": n, "tflops": float(r["tflops"]), "pct_of_peak": pct, "target_pct": target_pct,
                    "met": pct >= target_pct}
    return None


# ---------------------------------------------------------------------------------------------------
# The chapter's figures, tables and views (the notebook calls these; the logic stays testable here)
# ---------------------------------------------------------------------------------------------------

#: The three generations the chapter draws side by side.
GENERATIONS = ("V100-SXM2-32GB", "A100-SXM4-80GB", "H100-SXM5-80GB")


def plot_dies(axes: Sequence[Any], gpus: Sequence[str] = GENERATIONS) -> list[DieLayout]:
    """One die per axis (:func:`draw_die`). Chapter: *Architecture of the GA100*, "From a die to a product"."""
    if len(axes) != len(gpus):
        raise ValueError(f"axes has {len(axes)} panels for {len(gpus)} GPUs; give one axis per GPU")
    return [draw_die(ax, g) for ax, g in zip(axes, gpus)]


def plot_harvest(ax: Any, units: int = 128, needed: Sequence[int] = (128, 120, 108), q_max: float = 0.10) -> None:
    """Sellable dies against the assumed per-SM defect probability, one curve per requirement ``needed``.

    Chapter: *Architecture of the GA100*, "Why sell a 128-SM die as a 108-SM part?".
    """
    import numpy as np

    from . import plots

    units = check.positive_int("units", units)
    needs = [check.integer("needed", n, minimum=0, maximum=units) for n in needed]
    q = np.linspace(0.0, check.fraction("q_max", q_max, allow_zero=False), 101)
    product = min(needs)
    for n, style in zip(needs, ("-", "--", "-", ":", "-.")):
        y = [harvest_yield(units, n, float(v)) for v in q]
        ax.plot(100 * q, 100 * np.array(y), style, lw=2 if n == product else 1.2,
                color=plots.gpu_color("A100") if n == product else "#888888",
                label=f">= {n} of {units} SMs working")
    ax.set_xlabel("assumed probability that one SM is defective (%)")
    ax.set_ylabel("dies sellable (%)")
    # the free corner between the steep full-die curve and the later ones
    ax.legend(fontsize=8, loc="lower left", bbox_to_anchor=(0.25, 0.1), title="dies sellable with",
              title_fontsize=8)


def sm_table(gpus: Sequence[str] = (*GENERATIONS, "RTX-A6000")) -> list[dict[str, Any]]:
    """:func:`sm_resources` of ``gpus`` transposed: one row per resource, one column per GPU.

    Chapter: *Architecture of the GA100*, "Inside an SM".
    """
    rows = [sm_resources(g) for g in gpus]
    return [{"": k, **{r["gpu"]: r[k] for r in rows}} for k in rows[0] if k != "gpu"]


def peak_table(gpu: str | specs.GPUSpec = "A100-SXM4-80GB") -> list[dict[str, Any]]:
    """Every peak of ``gpu`` with its derivation and the datasheet figure, as Markdown-ready rows.

    Chapter: *Architecture of the GA100*, "Every headline number, derived".
    """
    return [{"precision": r.precision, "dense/sparse": "sparse" if r.sparse else "dense",
             "FMA/clk/SM": r.fma_per_clk_per_sm, "clock MHz": f"{r.clock_mhz:.0f}",
             "derived TFLOP/s": f"{r.derived_tflops:.1f}", "datasheet": r.datasheet or "",
             "agrees": "" if r.agrees is None else ("yes" if r.agrees else "no (see note)")}
            for r in gemm.peak_rows([gpu])]


#: The GPUs of the chapter's catalogue-wide peak table, oldest first.
CATALOGUE_ORDER = ("V100-SXM2-32GB", "A100-SXM4-40GB", "A100-SXM4-80GB", "A100-PCIE-80GB", "H100-SXM5-80GB",
                   "H200-SXM-141GB", "RTX-A6000", "RTX-A2000-12GB", "T4", "L4")


def catalogue_peaks(gpus: Sequence[str] = CATALOGUE_ORDER,
                    precisions: Sequence[str] = ("fp64", "fp64_tc", "fp32", "tf32", "bf16", "fp16", "fp8", "int8")
                    ) -> list[dict[str, Any]]:
    """Dense peaks (TFLOP/s, TOP/s for int8) of every GPU and precision, blank where the GPU has no such unit.

    Chapter: *Architecture of the GA100*, "Every headline number, derived".
    """
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
    for r in gemm.peak_rows(specs.names()):
        if r.note and r.note not in seen:
            seen[r.note] = {"first GPU": r.gpu, "figure": f"{r.precision} {'sparse' if r.sparse else 'dense'}: "
                            f"printed {r.datasheet}, derived {r.derived_tflops:.2f}", "why": r.note}
    return list(seen.values())


def _matmul_what(rec: Any) -> str:
    p = rec.params.get("precision", "?")
    method = rec.params.get("method")
    if method == "mamf":
        return f"{p}, best of a shape search"
    if method == "sweep":
        return f"{p}, square-size sweep"
    shape = gemm.matmul_shape(rec)
    dims = f"{shape[0]}³" if shape and len(set(shape)) == 1 else ("x".join(map(str, shape)) if shape else "")
    data = {"randn": ", random inputs", "zeros": ", all-zero inputs"}.get(rec.params.get("data", ""), "")
    return f"{p} {dims}{data}".strip()


def _dense_peak_tflops(gpu: str, precision: str) -> float | None:
    try:
        spec = specs.get(gpu)
    except ValueError:
        return None
    key = gemm.peak_precision_for(spec, precision) if precision in specs.PRECISIONS else None
    return spec.peak_flops(key) / 1e12 if key else None


def _superseded(rec: Any) -> bool:
    """A record of an earlier revision of a table the same source has since replaced."""
    return rec.id.startswith("mamf-v1-")


def matmul_points(info: Any = None, sweep: Sequence[dict[str, Any]] | None = None, min_n: int = 4096) -> list[Any]:
    """Real matmul throughput beside the dense peak, best evidence first: ``sweep`` (measured here), results
    recorded on real GPUs (``ampere/data``), then published measurements (:func:`ampere.gemm.published_matmul`,
    the superseded revision of a table left out). Square sizes below ``min_n`` are left out (launch- and
    wave-bound, they measure something else). Chapter: *Architecture of the GA100*, "Measured on this machine".
    """
    from . import results, views

    min_n = check.positive_int("min_n", min_n)
    pts = []
    gpu = (getattr(info, "spec_name", None) or info.label()) if info is not None else "this GPU"
    for r in sweep or ():
        if r["n"] >= min_n:
            model = r.get("peak_tflops")
            pts.append(views.Point(f"{r['precision']} {r['n']}³", gpu, model, r["tflops"], "TFLOP/s",
                                   kind="measured", source="measured here"))
    for rec in results.records(benchmark="matmul", kind="measured"):
        n, p = rec.params.get("n"), rec.params.get("precision")
        if isinstance(n, int) and n >= min_n and "tflops" in rec.figures and p in MATMUL_PRECISIONS:
            pts.append(views.point(rec, "tflops", f"{p} {n}³", _dense_peak_tflops(rec.gpu, p), "TFLOP/s"))
    published = [r for r in gemm.published_matmul() if not _superseded(r)]
    order = {name: i for i, name in enumerate(CATALOGUE_ORDER)}
    published.sort(key=lambda r: (order.get(r.gpu, 99), r.params.get("method") != "mamf", r.id))
    for rec in published:
        p = rec.params["precision"]
        pts.append(views.point(rec, f"{p}_tflop_per_s", _matmul_what(rec), _dense_peak_tflops(rec.gpu, p),
                               "TFLOP/s"))
    return pts


def published_matmul_table() -> list[dict[str, Any]]:
    """Every published matmul record with its shape, software and source (the chapter's dropdown table).

    Chapter: *Architecture of the GA100*, "Measured on this machine".
    """
    from . import views

    order = {name: i for i, name in enumerate(CATALOGUE_ORDER)}
    rows = []
    for rec in sorted(gemm.published_matmul(), key=lambda r: (order.get(r.gpu, 99), _superseded(r), r.id)):
        p = rec.params["precision"]
        tf = gemm.matmul_tflops(rec)
        peak = _dense_peak_tflops(rec.gpu, p)
        shape = gemm.matmul_shape(rec)
        software = ", ".join(f"{k} {v}" for k, v in rec.setup.items() if k in ("torch", "cuda", "library"))
        rows.append({"GPU": rec.gpu, "what": _matmul_what(rec), "TFLOP/s": f"{tf:.1f}",
                     "% of dense peak": f"{100 * tf / peak:.1f}" if peak else "",
                     "shape m x n x k": "x".join(map(str, shape)) if shape else "",
                     "software": software, "source": views.source_text(rec)
                     + (" (earlier revision)" if _superseded(rec) else "")})
    return rows


def show_matmul(info: Any, *, measure: bool | None = None, sizes: Sequence[int] = (4096, 8192)) -> list[Any]:
    """The "Measured on this machine" section in one call.

    On a CUDA GPU (or when ``measure`` says so) it times square matmuls in every precision the GPU has
    tensor cores for (FP32 with TF32 off, TF32, BF16, FP16) with :func:`matmul_sweep`; then it shows, as a
    figure and a Markdown table, every real number there is against the dense peak of its GPU: measured
    here, recorded on real GPUs, published (with its source and the ratio to the peak). The list of all
    published records follows in a dropdown. Returns the points shown.

    Chapter: *Architecture of the GA100*, "Measured on this machine".
    """
    from . import tables, views

    run = getattr(info, "backend", "cpu") == "cuda" if measure is None else check.boolean("measure", measure)
    sweep = None
    if run:
        precisions = ["fp32", "fp16"] + [p for p, ok in (("tf32", info.tf32), ("bf16", info.bf16_tensor)) if ok]
        sweep = matmul_sweep(list(sizes), precisions, warmup_s=1.0, max_time_s=3.0, info=info)
    pts = matmul_points(info, sweep, min_n=min(sizes))
    views.show(pts, title="Matmul throughput against the dense peak", model_label="dense peak",
               real_label="reached", digits=1, log=True)
    if sweep:
        target = bf16_peak_check(sweep, n=max(sizes))
        if target:
            tables.show_md(f"BF16 at {target['n']}³ on this GPU: {target['pct_of_peak']:.1f} % of the dense "
                           f"peak (the book expects at least {target['target_pct']:.0f} % on an A100 or H100).")
    tables.show_md("```{dropdown} Every published matmul measurement in the package\n"
                   + tables.markdown_table(published_matmul_table()) + "\n```")
    return pts


def plot_roofline(ax: Any, gpu: str | specs.GPUSpec = "A100-SXM4-80GB",
                  precisions: Sequence[str] = ("bf16", "tf32", "fp32"), l2: bool = True,
                  sizes: Sequence[int] = (256, 512, 1024, 2048, 4096, 8192)) -> None:
    """The roofline of ``gpu`` per precision (DRAM, and the L2 roof for the first precision), the square
    matmuls of ``sizes`` placed on it, and the published matmuls of the same silicon with a stated shape.

    Chapter: *Architecture of the GA100*, "The roofline".
    """
    from . import plots, views

    spec = specs.get(gpu)
    for precision, style in zip(precisions, ("-", "--", ":", "-.")):
        x, y = roofline_curve(spec, precision, lo=0.5, hi=2e4)
        ax.loglog(x, y / 1e12, style, color=plots.gpu_color(spec.name),
                  label=f"{precision} roof, DRAM {spec.hbm_bytes_per_s / 1e9:.0f} GB/s")
    if l2 and spec.l2_bytes_per_s:
        x, y = roofline_curve(spec, precisions[0], lo=0.5, hi=2e4, bytes_per_s=spec.l2_bytes_per_s)
        ax.loglog(x, y / 1e12, "-", color="#9ecae1",
                  label=f"{precisions[0]} roof from L2 ({spec.l2_bytes_per_s / 1e12:.1f} TB/s)")
    p0 = precisions[0]
    ai = [matmul_intensity(n, n, n, p0) for n in sizes]
    ax.loglog(ai, [attainable_flops(spec, p0, i) / 1e12 for i in ai], color="black", linestyle="none",
              marker="|", markersize=12, label=f"square {p0} matmuls {min(sizes)}..{max(sizes)} (model)")
    peak = spec.peak_flops(p0)
    markers: dict[str, str] = {}
    for rec in gemm.published_matmul():
        shape = gemm.matmul_shape(rec)
        rp = rec.params["precision"]
        if shape is None or rp not in ("bf16", "fp16") or specs.get(rec.gpu).peak_flops(rp) != peak:
            continue
        src = views.cite_label(rec.source)
        first = src not in markers
        marker = markers.setdefault(src, "^v<>"[len(markers) % 4])
        ax.loglog([matmul_intensity(*shape, rp)], [gemm.matmul_tflops(rec)], color="black",
                  **{**plots.PROVENANCE["published"], "marker": marker},
                  label=f"published 16-bit matmuls ({src})" if first else None)
    ax.set_xlabel("arithmetic intensity (FLOP per DRAM byte)")
    ax.set_ylabel("attainable TFLOP/s")
    plots.legend_outside(ax, fontsize=8)


def claims_rows() -> list[dict[str, str]]:
    """The chapter's claims-checked table: claim, source, verdict, evidence computed from ``ampere.specs``.

    Chapter: *Architecture of the GA100*, "Claims checked".
    """
    from . import views

    a100, v100 = specs.get("A100-SXM4-80GB"), specs.get("V100-SXM2-32GB")
    a6000, a2000 = specs.get("RTX-A6000"), specs.get("RTX-A2000-12GB")

    def tf(s: specs.GPUSpec, p: str, sparse: bool = False) -> float:
        return s.peak_flops(p, sparse) / 1e12

    rows = [
        ("54 billion transistors on 826 mm² in 7 nm; GV100 21.1 billion on 815 mm²", "seed000", "holds",
         f"GA100 {a100.transistors / 1e9:.1f} B, {a100.die_area_mm2:.0f} mm², {a100.process}; GV100 "
         f"{v100.transistors / 1e9:.1f} B, {v100.die_area_mm2:.0f} mm²"),
        ("The die has 128 SMs, the A100 uses 108; 6,912 CUDA cores and 432 tensor cores", "seed000", "holds",
         f"{a100.die_sms} on the die, {a100.sm_count} enabled: {a100.fp32_cores} FP32 lanes, "
         f"{a100.tensor_cores} tensor cores"),
        ("Boost around 1.41 GHz gives 19.5 TFLOPS FP64, 156 TF32, 312 FP16, 624 INT8", "seed000",
         "holds, but 19.5 is FP64 on the tensor cores",
         f"FP64 {tf(a100, 'fp64'):.1f} (CUDA cores) / {tf(a100, 'fp64_tc'):.1f} (tensor cores); TF32 "
         f"{tf(a100, 'tf32'):.1f}; FP16 {tf(a100, 'fp16'):.1f}; INT8 {tf(a100, 'int8'):.1f} (dense)"),
        ("Precision table: TF32 156 (312 sparse) ... INT4 1,248 (2,496 sparse)", "seed000",
         "holds (sparse column = 2:4 sparsity)",
         f"INT4 {tf(a100, 'int4'):.1f} / {tf(a100, 'int4', True):.1f} TOPS: NVIDIA doubles rounded figures"),
        ("up to 80 GB of HBM2 memory", "seed000", "imprecise",
         "40 GB is HBM2 (2.43 Gb/s/pin); the 80 GB card is HBM2e (3.19 Gb/s/pin)"),
        ("40 MB of L2 against 6 MB on the V100", "seed000", "holds",
         f"{a100.l2_bytes / 2**20:.0f} MiB vs {v100.l2_bytes / 2**20:.0f} MiB"),
        ("A100, A6000 and A2000 are all GA10x silicon with compute capability 8.0", "seed003", "wrong",
         f"A100: {a100.chip}, cc 8.0; A6000: {a6000.chip}, cc 8.6; A2000: {a2000.chip}, cc 8.6"),
        ("FP16 tensor: A100 ~312, A6000 ~155, A2000 ~64 TFLOPS", "seed003", "mixes dense and sparse",
         f"dense {tf(a100, 'fp16'):.0f} / {tf(a6000, 'fp16'):.0f} / {tf(a2000, 'fp16'):.1f}; the A2000's "
         f"63.9 is its sparse figure ({tf(a2000, 'fp16', True):.1f})"),
        ("On tensor cores the A100 leads thanks to more memory bandwidth and more numerous tensor cores",
         "seed003", "half true",
         f"bandwidth {a100.hbm_bytes_per_s / 1e9:.0f} vs {a6000.hbm_bytes_per_s / 1e9:.0f} GB/s: yes; but "
         f"{a100.tensor_cores} vs {a6000.tensor_cores} tensor cores is only "
         f"{a100.tensor_cores / a6000.tensor_cores:.2f}x, against {tf(a100, 'fp16') / tf(a6000, 'fp16'):.2f}x "
         "the FP16 rate: each GA100 tensor core does twice the FMA per clock"),
        ("FP64: 9.7 TFLOPS vs 0.6 for the A6000, a 16x gap", "seed003", "holds",
         f"{tf(a100, 'fp64'):.2f} vs {tf(a6000, 'fp64'):.3f} = {tf(a100, 'fp64') / tf(a6000, 'fp64'):.1f}x "
         "(GA102 runs FP64 at 1/64 of FP32)"),
        ("A6000 38.7 TFLOPS FP32 against 19.5 for the A100", "seed003", "holds",
         f"{tf(a6000, 'fp32'):.1f} vs {tf(a100, 'fp32'):.1f}: 128 FP32 lanes per SM on GA102, 64 on GA100"),
        ("The A100 is supported from CUDA 11.0 (compute capability 8.0)", "seed001", "holds",
         f"cc {a100.compute_capability[0]}.{a100.compute_capability[1]}"),
    ]
    return [{"claim": c, "source": views.cite_label(k), "verdict": v, "evidence": e} for c, k, v, e in rows]


def full_die_l2_bytes(gpu: str | specs.GPUSpec = "A100-SXM4-80GB", slices_per_controller: int = 8,
                      slice_bytes: int = 512 * 1024) -> tuple[int, int]:
    """(L2 bytes of the product, L2 bytes of the full die) counted from the whitepaper's slice rule: eight
    512 KB L2 slices per memory controller. The A100 has 10 controllers (5 HBM2 stacks x 2) for 40 MiB;
    the full GA100 has 12 (6 stacks) [nvidia2020ampere], so by the same rule 48 MiB. The whitepaper prints
    the 40 MB of the product, not an L2 size of the full die: the second number is this derivation.

    Chapter: *Architecture of the GA100*, "The 40 MiB L2, and why it matters".
    """
    spec = specs.get(gpu)
    per = check.positive_int("slices_per_controller", slices_per_controller) * check.positive_int("slice_bytes",
                                                                                                  slice_bytes)
    stacks = spec.memory_stacks or 0
    if not stacks or spec.chip != "GA100":
        raise ValueError(f"gpu={spec.name!r}: the slice rule is the GA100 whitepaper's; give a GA100 product")
    controllers_per_stack = 2  # 512-bit controllers, two per 1024-bit HBM2 stack (10 for 5 stacks)
    product = stacks * controllers_per_stack * per
    die_sites = stacks + 1  # the GA100 has six HBM sites, the A100 uses five (see draw_die)
    return product, die_sites * controllers_per_stack * per
