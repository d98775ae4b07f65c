"""HBM and the memory hierarchy: where the bandwidth comes from, what it buys, and what code reaches.

Chapter: *HBM and the memory hierarchy* (book/hbm.ipynb). Every function here is explained there.

What lives here, as in every chapter module:

* **Models** (pure Python, no torch): the DRAM bandwidth derived from the interface
  (:func:`bandwidth_table`), the hierarchy in numbers (:func:`hierarchy_table`), the roofline of
  memory-bound work (:func:`roofline_ops`, :func:`attainable_flops`), the LLM decoding bound
  (:func:`decode_bound`) and the L2 working-set curve (:func:`l2_sweep_model`, :func:`find_knee`).
  The capacity arithmetic (weights, KV cache, training state, ZeRO, activations, what fits) is
  :mod:`ampere.memory`, shared with the Megatron and A100-today chapters; model shapes are
  :class:`ampere.transformer.TransformerShape` (:data:`MODELS` are the chapter's presets).
* **Published measurements**, read from ``ampere/data`` (never typed here): STREAM-type bandwidth
  (:func:`published_stream`) and L2 working-set sweeps (:func:`published_l2_sweeps`) from gpu-benches
  (``ernstgpubenches``), and the ZeRO paper's Figure 1 (:func:`zero_figure1`, ``rajbhandari2020zero``).
* **Measurements** (torch imported inside the functions): STREAM-like kernels with explicitly counted
  bytes (:func:`measure_bandwidth`), the L2 working-set sweep (:func:`measure_l2_sweep`), the capacity the
  driver reports (:func:`measure_capacity`) and ``python -m ampere bench hbm`` (:func:`bench_main`). Every
  measuring function also runs on ``device="cpu"`` with tiny sizes, so the tests exercise the same path.
* **Views** for the chapter's measuring sections (:func:`show_bandwidth`, :func:`show_l2_sweep`,
  :func:`show_capacity`): measured here when the GPU can, else recorded results, else published ones,
  always beside the model, through :mod:`ampere.views`.

Units follow the book: bytes and bytes/s in variables, GB = 1e9 bytes, GiB = 2**30 bytes; bandwidths are
printed in decimal GB/s or TB/s. Capacities of GPUs are NVIDIA's decimal figures (80 GB = 80e9 bytes).
Bad input raises ``ValueError``/``TypeError`` naming the argument (:mod:`ampere.check`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Sequence

from . import check, memory, specs, transformer
from .transformer import TransformerShape

__all__ = [
    # constants and presets
    "GB", "GiB", "MiB", "KiB", "MODELS", "SIZE_CLASSES", "BANDWIDTH_GPUS", "DECODE_GPUS", "KERNELS", "Kernel",
    "L2_SWEEP_CHUNK_BYTES", "ACCEPT_COPY_PCT", "ACCEPT_KNEE_TOLERANCE",
    # models
    "bandwidth_table", "hierarchy_table", "Op", "roofline_ops", "attainable_flops", "DecodeBound",
    "decode_bound", "decode_table", "zero_points", "compare_gpus", "sweep_footprints", "l2_sweep_model", "Knee",
    "find_knee",
    # published data
    "ZeroFigureRow", "zero_figure1", "published_stream", "L2Sweep", "published_l2_sweeps", "published_l2_sweep",
    "validate_models",
    # measurements
    "measure_bandwidth", "measure_l2_sweep", "Capacity", "measure_capacity", "BandwidthRow", "bandwidth_rows",
    "sweep_rows", "Acceptance", "check_acceptance", "bench_main",
    # views
    "bandwidth_points", "show_bandwidth", "show_l2_sweep", "show_capacity",
]

KiB = 1024
MiB = 1024**2
GiB = 1024**3
GB = 1e9


class _Row:
    """Read access by name (``row["kernel"]``) on top of attributes, for callers that index rows like dicts."""

    def __getitem__(self, name: str) -> Any:
        if name not in {f.name for f in fields(self)}:  # type: ignore[arg-type]
            raise KeyError(name)
        return getattr(self, name)

    def get(self, name: str, default: Any = None) -> Any:
        return getattr(self, name, default)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]


# =======================================================================================================
# 1. Where the bandwidth comes from
# =======================================================================================================

#: GPUs of the chapter's derivation table, in print order.
BANDWIDTH_GPUS: tuple[str, ...] = ("A100-SXM4-40GB", "A100-SXM4-80GB", "A100-PCIE-80GB", "V100-SXM2-32GB",
                                   "H100-SXM5-80GB", "H200-SXM-141GB", "RTX-A6000", "RTX-A2000-12GB", "T4", "L4")

# Where the derivation is not independent of the datasheet figure, say so (a100-facts.md, section 1a:
# the H100 per-pin rate is 3352 GB/s / 640 B; the H200 interface width is inferred from its 6 stacks).
_DERIVATION_NOTES: Mapping[str, str] = MappingProxyType({
    "H100-SXM5-80GB": "per-pin rate back-computed from the 3.35 TB/s datasheet figure: agreement by construction",
    "H200-SXM-141GB": "6 stacks / 6144 bits inferred from 141 GB, rate back-computed: agreement by construction",
})


def bandwidth_table(gpus: Iterable[str] = BANDWIDTH_GPUS) -> list[dict[str, Any]]:
    """DRAM bandwidth re-derived from the interface: width (bits) x data rate per pin (bit/s) / 8.

    One row per GPU with the memory type, stacks, bits per stack, per-pin rate, the derived and the
    datasheet bandwidth (bytes/s) and their ratio, plus a note where the derivation is circular.
    Chapter: *HBM and the memory hierarchy*, "Where the bandwidth comes from".
    """
    if isinstance(gpus, (str, specs.GPUSpec)):
        raise TypeError(f"gpus must be a sequence of GPU names, got {gpus!r}; wrap one name in a list")
    rows = []
    for name in gpus:
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




# =======================================================================================================
# 2. The chapter's model shapes (the arithmetic itself is ampere.memory)
# =======================================================================================================

#: The chapter's models, built from :mod:`ampere.transformer` presets: Llama 2 7B/13B/70B, LLaMA 33B and
#: GPT-3 175B (dimensions and sources in ``transformer.PRESETS``).
MODELS: Mapping[str, TransformerShape] = MappingProxyType({name: transformer.PRESETS[name] for name in (
    "llama2-7b", "llama2-13b", "llama-33b", "llama2-70b", "gpt3-175b")})
#: The size classes of the chapter's tables ("30B" is LLaMA's 32.5B model).
SIZE_CLASSES: Mapping[str, str] = MappingProxyType(
    {k: transformer.SIZE_CLASSES[k] for k in ("7B", "13B", "30B", "70B")})


def _shape(model: str | TransformerShape) -> TransformerShape:
    return memory.shape_of(model)


# =======================================================================================================
# 3. Roofline of memory-bound work, and LLM decoding
# =======================================================================================================


@dataclass(frozen=True)
class Op:
    """One operation with its FLOPs and the DRAM bytes it must move at least (each operand once)."""

    name: str
    flops: float
    bytes: float
    description: str

    @property
    def intensity(self) -> float:
        """Arithmetic intensity in FLOP per byte of DRAM traffic."""
        return self.flops / self.bytes


def roofline_ops(element_bytes: float = 2.0) -> list[Op]:
    """Common operations of a transformer with their arithmetic intensity (16-bit elements by default).

    FLOP counts follow the usual conventions: a multiply-add is 2 FLOP, an exponential 1; element-wise
    ops move each operand once. Sizes are those of a 70B-class layer (h = 8192) where it matters.
    Chapter: *HBM and the memory hierarchy*, "Roofline for memory-bound work".
    """
    b = check.positive("element_bytes", element_bytes)
    n, h, tokens, ctx = 2**28, 8192, 4096, 4096
    return [
        Op("vector add", n, 3 * n * b, "z = x + y: 1 FLOP, 2 loads and 1 store per element"),
        Op("triad", 2 * n, 3 * n * b, "a = b + s*c: 2 FLOP, 2 loads, 1 store per element"),
        Op("RMSNorm", 4 * tokens * h, 2 * tokens * h * b, "square, sum, scale, weight: ~4 FLOP per element, "
                                                          "read x and write y"),
        Op("softmax", 5 * tokens * h, 2 * tokens * h * b, "max, subtract, exp, sum, divide: ~5 FLOP per element"),
        Op("GEMV (decode, batch 1)", 2 * h * h, (h * h + 2 * h) * b, "8192x8192 weight times one vector: "
                                                                      "every weight read once per token"),
        Op("attention decode", 4 * ctx * h, 2 * ctx * h * b, "one query token against 4096 cached keys and "
                                                             "values (multi-head)"),
        Op("GEMM, batch 16 tokens", 2 * 16 * h * h, (h * h + 2 * 16 * h) * b, "16 tokens share each weight read"),
        Op("GEMM 4096^3", 2 * 4096**3, 3 * 4096**2 * b, "square matrix product, each matrix moved once"),
    ]


def attainable_flops(intensity: float, gpu: str | specs.GPUSpec = "A100-SXM4-80GB", precision: str = "bf16",
                     bytes_per_s: float | None = None) -> float:
    """The roofline: min(peak FLOP/s, intensity x DRAM bandwidth) (williams2009roofline).

    Chapter: *HBM and the memory hierarchy*, "Roofline for memory-bound work".
    """
    check.positive("intensity", intensity)
    s = specs.get(gpu)
    bw = s.hbm_bytes_per_s if bytes_per_s is None else check.positive("bytes_per_s", bytes_per_s)
    return min(s.peak_flops(precision), intensity * bw)


#: GPUs of the decoding table.
DECODE_GPUS: tuple[str, ...] = ("A100-SXM4-40GB", "A100-SXM4-80GB", "RTX-A6000", "RTX-A2000-12GB",
                                "H100-SXM5-80GB", "H200-SXM-141GB")


@dataclass(frozen=True)
class DecodeBound:
    """Upper bound on LLM decoding speed from the roofline. See :func:`decode_bound`."""

    model: str
    gpu: str
    weights: str
    batch: int
    context: int
    weight_bytes: float  # read once per decoding step, shared by the batch
    kv_bytes: float  # KV cache read per step, all sequences
    bytes_per_step: float
    memory_time_s: float  # bytes_per_step / bandwidth
    compute_time_s: float  # FLOPs of the step / dense peak of compute_precision
    tokens_per_s: float  # batch / max(memory, compute time): tokens of all sequences together
    fits: bool  # weights + KV cache within the GPU's capacity (no reserve)

    @property
    def bound(self) -> str:
        return "memory" if self.memory_time_s >= self.compute_time_s else "compute"

    @property
    def tokens_per_s_per_sequence(self) -> float:
        return self.tokens_per_s / self.batch


def decode_bound(model: str | TransformerShape, gpu: str | specs.GPUSpec = "A100-SXM4-80GB", *,
                 weights: str = "fp16", weight_overhead_bits: float = 0.0, batch: int = 1, context: int = 0,
                 kv_cache: str = "fp16", compute_precision: str = "fp16",
                 bytes_per_s: float | None = None, gpus: int = 1) -> DecodeBound:
    """Tokens per second an LLM can at most generate: one decoding step reads every weight once.

    step time = max(bytes / bandwidth, FLOPs / peak) with bytes = weights + KV cache of ``batch``
    sequences of ``context`` tokens (:mod:`ampere.memory`) and FLOPs = batch x (2 x params + 4 x layers x
    context x hidden). Quantized weights are assumed dequantized to ``compute_precision`` for the math
    (the usual decoding kernels). ``bytes_per_s`` defaults to the datasheet DRAM bandwidth: the bound is
    unreachable, real kernels reach a fraction of it. ``gpus`` > 1 is ideal tensor parallelism: bandwidth,
    peak and capacity add up and communication is free (a looser bound still).
    Chapter: *HBM and the memory hierarchy*, "LLM decoding".
    """
    m = _shape(model)
    s = specs.get(gpu)
    b = check.positive_int("batch", batch)
    ctx = check.nonneg_int("context", context)
    n = check.positive_int("gpus", gpus)
    wb = memory.weight_bytes(m.params, weights, weight_overhead_bits)
    kv = memory.kv_cache_bytes(m, ctx, b, kv_cache)
    bw = n * (s.hbm_bytes_per_s if bytes_per_s is None else check.positive("bytes_per_s", bytes_per_s))
    flops = b * (2 * m.params + 4 * m.layers * ctx * m.hidden)
    t_mem = (wb + kv) / bw
    t_comp = flops / (n * s.peak_flops(check.one_of("compute_precision", compute_precision, s.precisions())))
    return DecodeBound(m.label, s.name, weights, b, ctx, wb, kv, wb + kv, t_mem, t_comp,
                       b / max(t_mem, t_comp), wb + kv <= n * s.memory_bytes)


def zero_points() -> list[Any]:
    """The ZeRO paper's Figure 1 beside :func:`ampere.memory.zero_bytes_per_param` (GB per GPU).

    Chapter: *HBM and the memory hierarchy*, "Training a model".
    """
    from . import views

    return [views.Point(f"stage {z.stage} ({z.label})", f"{z.params / 1e9:g}B model, {z.data_parallel} GPUs",
                        memory.zero_bytes_per_param(z.stage, z.data_parallel).total * z.params / GB, z.per_gpu_gb,
                        "GB", kind="published", source=f"{views.cite_label(z.source)}, {z.where}")
            for z in zero_figure1()]


def decode_table(models: Iterable[str] = ("7B", "13B", "30B", "70B"), gpus: Iterable[str] = DECODE_GPUS,
                 formats: Iterable[str] = ("fp16", "int8", "int4"), **kwargs: Any) -> list[DecodeBound]:
    """:func:`decode_bound` for every (model, GPU, weight format) combination, in that nesting order.

    Chapter: *HBM and the memory hierarchy*, "LLM decoding".
    """
    return [decode_bound(m, g, weights=f, **kwargs) for m in models for g in gpus for f in formats]


def compare_gpus(a: str | specs.GPUSpec = "A100-SXM4-80GB", b: str | specs.GPUSpec = "A100-SXM4-40GB",
                 precision: str = "bf16") -> dict[str, float]:
    """Ratios a/b of dense peak compute, DRAM bandwidth, capacity and L2 (the 40 GB vs 80 GB question).

    Chapter: *HBM and the memory hierarchy*, "40 GB versus 80 GB".
    """
    sa, sb = specs.get(a), specs.get(b)
    return {"compute": sa.peak_flops(precision) / sb.peak_flops(precision),
            "bandwidth": sa.hbm_bytes_per_s / sb.hbm_bytes_per_s,
            "capacity": sa.memory_bytes / sb.memory_bytes, "l2": sa.l2_bytes / sb.l2_bytes}


# =======================================================================================================
# 4. The L2 working-set curve: model and knee
# =======================================================================================================


def sweep_footprints(l2_bytes: int, points: int = 24, start_bytes: int = 256 * KiB, stop_factor: float = 4.0,
                     align: int = 4 * KiB) -> list[int]:
    """Log-spaced footprints from ``start_bytes`` to ``stop_factor`` x L2, multiples of ``align``, unique.

    Chapter: *HBM and the memory hierarchy*, "The L2 working-set sweep".
    """
    l2 = check.positive_int("l2_bytes", l2_bytes)
    n = check.positive_int("points", points)
    start = check.positive_int("start_bytes", start_bytes)
    al = check.positive_int("align", align)
    stop = check.positive("stop_factor", stop_factor) * l2
    if stop <= start:
        raise ValueError(f"stop_factor={stop_factor!r} x l2_bytes={l2_bytes} must exceed start_bytes={start_bytes}")
    if n == 1:
        return [max(al, round(start / al) * al)]
    ratio = (stop / start) ** (1 / (n - 1))
    return sorted({max(al, round(start * ratio**i / al) * al) for i in range(n)})


def _l2_bandwidth(s: specs.GPUSpec) -> tuple[float, str]:
    """Theoretical L2 read bandwidth, or an assumption when NVIDIA publishes no bytes/clock."""
    if s.l2_bytes_per_s is not None:
        return s.l2_bytes_per_s, f"L2 {s.l2_bytes_per_s / 1e12:.2f} TB/s: {s.l2_read_bytes_per_clk} B/clk x boost clock"
    ref = specs.get("A100-SXM4-80GB")
    per_sm_clk = ref.l2_read_bytes_per_clk / ref.sm_count
    bw = per_sm_clk * s.sm_count * s.boost_clock_hz
    return bw, (f"L2 {bw / 1e12:.2f} TB/s ASSUMED: no published bytes/clock, GA100's {per_sm_clk:.1f} B/clk per SM "
                f"scaled to {s.sm_count} SMs at {s.boost_clock_hz / 1e9:.2f} GHz")


def l2_sweep_model(footprints: Sequence[float], gpu: str | specs.GPUSpec = "A100-SXM4-80GB", *,
                   policy: str = "lru", l2_bytes: float | None = None, l2_bytes_per_s: float | None = None,
                   dram_bytes_per_s: float | None = None) -> tuple[list[float], list[str]]:
    """Model of read bandwidth versus footprint when the same footprint is read over and over.

    A fraction ``hit`` of the reads is served by L2 at ``l2_bytes_per_s``, the rest by DRAM:
    time per byte = hit / B_L2 + (1 - hit) / B_DRAM. ``policy="lru"``: an ideal least-recently-used
    cache, hit = 1 up to the capacity and 0 beyond (a cyclic sweep evicts every line before its reuse);
    ``"random"``: random replacement, hit ≈ capacity / footprint beyond it. Returns (bytes/s per footprint,
    assumptions). Chapter: *HBM and the memory hierarchy*, "The L2 working-set sweep".
    """
    s = specs.get(gpu)
    check.one_of("policy", policy, ("lru", "random"))
    cap = s.l2_bytes if l2_bytes is None else check.positive("l2_bytes", l2_bytes)
    notes = [f"L2 capacity {cap / MiB:.0f} MiB" + (" (catalogue)" if l2_bytes is None else " (given)")]
    if l2_bytes_per_s is None:
        b_l2, note = _l2_bandwidth(s)
        notes.append(note)
    else:
        b_l2 = check.positive("l2_bytes_per_s", l2_bytes_per_s)
        notes.append(f"L2 {b_l2 / 1e12:.2f} TB/s (given)")
    b_dram = s.hbm_bytes_per_s if dram_bytes_per_s is None else check.positive("dram_bytes_per_s", dram_bytes_per_s)
    notes.append(f"DRAM {b_dram / 1e12:.2f} TB/s" + (" (datasheet)" if dram_bytes_per_s is None else " (given)"))
    notes.append(f"replacement policy: {policy}")
    if isinstance(footprints, (str, bytes)) or not isinstance(footprints, Iterable):
        raise TypeError(f"footprints must be a sequence of byte counts, got {footprints!r}")
    out = []
    for f in footprints:
        f = check.positive("footprint", f)
        hit = 1.0 if f <= cap else (0.0 if policy == "lru" else cap / f)
        out.append(1.0 / (hit / b_l2 + (1.0 - hit) / b_dram))
    return out, notes


@dataclass(frozen=True)
class Knee(_Row):
    """Where a working-set curve falls from its L2 plateau to its DRAM plateau. See :func:`find_knee`."""

    l2_plateau_bytes_per_s: float
    dram_plateau_bytes_per_s: float
    knee_bytes: float | None  # None when no knee is visible
    ratio_to_l2: float | None
    visible: bool
    within: bool  # knee within ``tolerance`` of ``l2_bytes``
    l2_bytes: float
    tolerance: float


def find_knee(footprints: Sequence[float], bytes_per_s: Sequence[float], l2_bytes: float,
              tolerance: float = 0.25) -> Knee:
    """Where a working-set curve falls from its L2 plateau to its DRAM plateau.

    The L2 plateau is the median bandwidth of footprints <= L2/4, the DRAM plateau that of footprints
    >= 2 x L2; the knee is the footprint where the curve first crosses their mean (interpolated in log
    footprint). ``visible`` needs the L2 plateau to be at least 1.3x the DRAM plateau; ``within`` says
    whether the knee lies within ``tolerance`` of ``l2_bytes``. Chapter: *HBM and the memory hierarchy*.
    """
    import numpy as np

    try:
        f = np.asarray(footprints, dtype=float)
        y = np.asarray(bytes_per_s, dtype=float)
    except (TypeError, ValueError):
        raise TypeError("footprints and bytes_per_s must be sequences of numbers") from None
    if f.ndim != 1 or f.shape != y.shape or f.size < 3:
        raise ValueError(f"footprints and bytes_per_s must be 1-D sequences of the same length (>= 3); got "
                         f"shapes {f.shape} and {y.shape}")
    if np.any(~np.isfinite(f)) or np.any(f <= 0) or np.any(~np.isfinite(y)) or np.any(y <= 0):
        raise ValueError("footprints and bytes_per_s must be finite and positive")
    l2 = check.positive("l2_bytes", l2_bytes)
    tol = check.positive("tolerance", tolerance)
    order = np.argsort(f)
    f, y = f[order], y[order]
    low = y[f <= l2 / 4] if np.any(f <= l2 / 4) else y[:3]
    high = y[f >= 2 * l2] if np.any(f >= 2 * l2) else y[-2:]
    l2_plateau, dram_plateau = float(np.median(low)), float(np.median(high))
    if l2_plateau < 1.3 * dram_plateau:
        return Knee(l2_plateau, dram_plateau, None, None, False, False, l2, tol)
    mid = 0.5 * (l2_plateau + dram_plateau)
    for i in range(1, f.size):
        if y[i] < mid <= y[i - 1]:
            t = (y[i - 1] - mid) / (y[i - 1] - y[i])
            knee = float(np.exp(np.log(f[i - 1]) + t * (np.log(f[i]) - np.log(f[i - 1]))))
            return Knee(l2_plateau, dram_plateau, knee, knee / l2, True, abs(knee / l2 - 1) <= tol, l2, tol)
    return Knee(l2_plateau, dram_plateau, None, None, False, False, l2, tol)


# =======================================================================================================
# 5. Published measurements and tables (ampere/data), and the validation of the models against them
# =======================================================================================================


@dataclass(frozen=True)
class ZeroFigureRow:
    """One bar of the ZeRO paper's Figure 1: per-GPU model-state memory for one ZeRO stage."""

    stage: int
    label: str
    params: float
    data_parallel: int
    per_gpu_gb: float
    source: str
    where: str


def zero_figure1() -> list[ZeroFigureRow]:
    """The ZeRO paper's Figure 1 (7.5B parameters, 64 GPUs, K = 12), from ``ampere/data/tables/zero-figure1.json``.

    A validation target of :func:`ampere.memory.zero_bytes_per_param`, never an input.
    Chapter: *HBM and the memory hierarchy*, "Training a model".
    """
    from . import results

    t = results.table("zero-figure1")
    return [ZeroFigureRow(int(r["stage"]), r["label"], float(r["params"]), int(r["data_parallel"]),
                          float(r["per_gpu_gb"]), t["source"], r["where"]) for r in t["rows"]]


#: The STREAM kernels of gpu-benches and the names of ours that do the same traffic.
_STREAM_FIGURES: Mapping[str, str] = MappingProxyType({
    "write": "write_gb_per_s", "read": "read_gb_per_s", "scale": "scale_gb_per_s", "triad": "triad_gb_per_s"})


def published_stream(gpu: str | None = None) -> list[Any]:
    """Published STREAM-type bandwidth records (``benchmark="stream"``), optionally of one ``gpu``.

    Each is an :class:`ampere.results.Record` with figures ``write_gb_per_s``, ``read_gb_per_s``,
    ``scale_gb_per_s`` and ``triad_gb_per_s`` (bytes of every load and store stream per second).
    Chapter: *HBM and the memory hierarchy*, "Measured bandwidth".
    """
    from . import results

    return results.records(benchmark="stream", gpu=gpu, kind="published")


@dataclass(frozen=True)
class L2Sweep:
    """A working-set sweep as arrays: footprints (bytes), read bandwidth (bytes/s), the L2 size it is judged
    against, and where it comes from (the :class:`ampere.results.Record`, or None for a fresh measurement)."""

    gpu: str
    footprints: tuple[float, ...]
    bytes_per_s: tuple[float, ...]
    l2_bytes: float
    label: str
    record: Any = None

    def knee(self, tolerance: float = 0.25) -> Knee:
        return find_knee(self.footprints, self.bytes_per_s, self.l2_bytes, tolerance)


def _sweep_from_record(rec: Any) -> L2Sweep:
    from . import views

    f = [k * KiB for k in rec.params["footprint_kib"]]
    y = [g * 1e9 for g in rec.figure("read_gb_per_s")]
    return L2Sweep(rec.gpu, tuple(f), tuple(y), float(rec.params["l2_bytes"]), views.source_text(rec), rec)


def published_l2_sweeps(gpu: str | None = None) -> list[L2Sweep]:
    """Every published L2 working-set sweep (``benchmark="l2-sweep"``), optionally of one ``gpu``.

    Chapter: *HBM and the memory hierarchy*, "The L2 working-set sweep".
    """
    from . import results

    return [_sweep_from_record(r) for r in results.records(benchmark="l2-sweep", gpu=gpu, kind="published")]


def published_l2_sweep(gpu: str) -> L2Sweep:
    """The published sweep of ``gpu`` (a catalogue or device name); ``ValueError`` lists those available.

    Chapter: *HBM and the memory hierarchy*, "The L2 working-set sweep".
    """
    if not isinstance(gpu, str):
        raise TypeError(f"gpu must be a GPU name, got {gpu!r} ({type(gpu).__name__})")
    found = published_l2_sweeps(gpu)
    if not found:
        have = sorted({s.gpu for s in published_l2_sweeps()})
        raise ValueError(f"gpu={gpu!r} has no published L2 sweep; available: {', '.join(have)}")
    return found[0]


def validate_models() -> tuple[str, bool]:
    """Check this chapter's models against published figures; ``(report, passed)`` for ``ampere validate``.

    Held-out targets (never used to set a constant): datasheet bandwidths versus the interface derivation,
    the ZeRO paper's Figure 1, the parameter counts of GPT-3 and LLaMA 33B, and the knee of every
    published L2 sweep of a catalogue GPU against its L2 size.
    """
    lines, ok = [], True

    def check_(label: str, passed: bool, detail: str) -> None:
        nonlocal ok
        ok &= passed
        lines.append(f"{'ok  ' if passed else 'FAIL'} {label}: {detail}")

    for row in bandwidth_table(specs.names()):
        check_(f"bandwidth {row['gpu']}", abs(row["ratio"] - 1) <= 0.005,
               f"derived {row['derived_bytes_per_s'] / 1e9:.1f} GB/s vs datasheet "
               f"{row['datasheet_bytes_per_s'] / 1e9:.1f} GB/s" + (f" ({row['note']})" if row["note"] else ""))
    for z in zero_figure1():
        ours = memory.zero_bytes_per_param(z.stage, z.data_parallel).total * z.params / GB
        check_(f"ZeRO stage {z.stage}", abs(ours - z.per_gpu_gb) <= 0.05 + 1e-9,
               f"{ours:.2f} GB vs {z.per_gpu_gb} GB in {z.where}")
    # published sizes: brown2020gpt3 Table 2.1 (175.0B), touvron2023llama Table 2 (32.5B)
    for name, published in (("gpt3-175b", 175.0e9), ("llama-33b", 32.5e9)):
        p = MODELS[name].params
        check_(f"parameters {name}", abs(p / published - 1) <= 0.005,
               f"{p / 1e9:.2f}B from the shape vs {published / 1e9:.1f}B published")
    for sw in published_l2_sweeps():  # the catalogue's GPUs (an H100 PCIe sweep is shown, not judged)
        if _catalogue(sw.gpu) is None:
            continue
        k = sw.knee()
        check_(f"L2 knee {sw.gpu}", k.within,
               f"knee at {k.knee_bytes / MiB:.1f} MiB = {k.ratio_to_l2:.2f} x its {sw.l2_bytes / MiB:.0f} MiB L2"
               if k.visible else "no visible knee")
    return "\n".join(lines), ok


# =======================================================================================================
# 6. Measurements (torch imported inside; every function runs on the CPU with tiny sizes)
# =======================================================================================================


@dataclass(frozen=True)
class Kernel:
    """A bandwidth kernel: what it runs and which arrays it reads and writes per element."""

    name: str
    reads: int  # arrays read per element
    writes: int  # arrays written per element
    engine: str  # "SM" (a kernel on the SMs) or "memcpy" (cudaMemcpyAsync, the driver's copy path)
    description: str

    @property
    def arrays(self) -> int:
        return self.reads + self.writes


#: The STREAM-like kernels, each a single PyTorch call. Bytes are counted from ``reads``/``writes``:
#: a copy reads N and writes N bytes (the STREAM convention); nvbandwidth counts N for a copy.
KERNELS: Mapping[str, Kernel] = MappingProxyType({k.name: k for k in (
    Kernel("read", 1, 0, "SM", "torch.sum(x): one load stream, a scalar result"),
    Kernel("write", 0, 1, "SM", "x.fill_(c): one store stream"),
    Kernel("copy", 1, 1, "memcpy", "y.copy_(x): PyTorch calls cudaMemcpyAsync device-to-device, the path "
                                   "nvbandwidth files under its copy-engine tests"),
    Kernel("scale", 1, 1, "SM", "torch.mul(x, s, out=y): STREAM scale, an element-wise kernel on the SMs "
                                "(the SM copy)"),
    Kernel("triad", 2, 1, "SM", "torch.add(b, c, alpha=s, out=a): STREAM triad a = b + s*c in one kernel"),
)})


def _kernel_names(kernels: Iterable[str] | None) -> list[str]:
    if kernels is None:
        return list(KERNELS)
    if isinstance(kernels, str):
        raise TypeError(f"kernels must be a sequence of kernel names, got the string {kernels!r}")
    names = list(kernels)
    for k in names:
        check.one_of("kernel", k, tuple(KERNELS))
    if not names:
        raise ValueError(f"kernels is empty; allowed: {', '.join(KERNELS)}")
    return names


def _torch_device(device: Any):
    import torch

    from . import device as _device

    if device is None:
        return _device.torch_device()
    if isinstance(device, bool) or not isinstance(device, (str, torch.device)):
        raise TypeError(f"device must be 'cpu', 'cuda', a torch.device or None, got {device!r}")
    dev = torch.device(device)
    if dev.type not in ("cpu", "cuda"):
        raise ValueError(f"device={device!r}: allowed device types are 'cpu' and 'cuda'")
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={device!r}: CUDA is not available on this machine; use device='cpu'")
    return dev


def _device_l2_bytes(dev: Any, fallback: int | None = None) -> int | None:
    """L2 size the device reports (trust it over datasheets), else ``fallback``."""
    import torch

    if dev.type == "cuda":
        reported = int(getattr(torch.cuda.get_device_properties(dev), "L2_cache_size", 0) or 0)
        if reported:
            return reported
    return fallback


def _datasheet(dev: Any) -> specs.GPUSpec | None:
    import torch

    if dev.type != "cuda":
        return None
    return specs.match(torch.cuda.get_device_properties(dev).name)


def _kernel_fn(kernel: Kernel, arrays: list[Any]):
    """The zero-argument callable of ``kernel`` over preallocated ``arrays`` (inputs first, output last)."""
    import torch

    if kernel.name == "read":
        x, out = arrays[0], arrays[-1]
        return lambda: torch.sum(x, dim=0, out=out)
    if kernel.name == "write":
        x = arrays[0]
        return lambda: x.fill_(1.5)
    if kernel.name == "copy":
        x, y = arrays
        return lambda: y.copy_(x)
    if kernel.name == "scale":
        x, y = arrays
        return lambda: torch.mul(x, 1.0001, out=y)
    if kernel.name == "triad":
        b, c, a = arrays
        return lambda: torch.add(b, c, alpha=0.5, out=a)
    raise ValueError(f"kernel={kernel.name!r} is unknown; allowed: {', '.join(KERNELS)}")


def _allocate(dev: Any, n: int, count: int, seed: int = 0) -> list[Any]:
    """``count`` float32 arrays of ``n`` random normal values (never zeros: power depends on data), drawn
    with a seeded CPU generator and moved to ``dev``."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    return [torch.randn(n, generator=gen, dtype=torch.float32).to(dev) for _ in range(count)]


def _is_oom(exc: BaseException) -> bool:
    import torch

    oom = getattr(torch.cuda, "OutOfMemoryError", None)
    return (oom is not None and isinstance(exc, oom)) or "out of memory" in str(exc).lower()


def _free_cuda(dev: Any) -> None:
    import gc

    import torch

    gc.collect()
    if dev.type == "cuda":
        torch.cuda.empty_cache()


def _retrying_oom(run: Any, nbytes: int, floor_bytes: int, dev: Any, what: str) -> tuple[Any, int, list[str]]:
    """``run(nbytes)`` until it does not run out of memory, halving ``nbytes`` each time (down to
    ``floor_bytes``, then the error propagates). Returns (result, the bytes that worked, notes saying what
    was retried). The memory of a failed attempt is freed *outside* the ``except`` block: inside it, the
    traceback still holds the failed frames and their tensors, and a retry there would fail again."""
    notes: list[str] = []
    while True:
        failed = False
        try:
            return run(nbytes), nbytes, notes
        except RuntimeError as exc:
            if not _is_oom(exc) or nbytes // 2 < floor_bytes:
                raise
            failed = True
        if failed:
            _free_cuda(dev)
            notes.append(f"out of memory with {what} of {nbytes / MiB:.0f} MiB: freed, retried with "
                         f"{nbytes // 2 / MiB:.0f} MiB")
            nbytes //= 2


def measure_bandwidth(device: Any = None, *, quick: bool = True, kernels: Iterable[str] | None = None,
                      array_bytes: int | None = None, warmup_s: float | None = None, min_samples: int = 10,
                      min_time_s: float = 0.1, max_time_s: float = 5.0) -> list[dict[str, Any]]:
    """Time the :data:`KERNELS` on arrays much larger than L2, with L2 flushed before every timed call.

    ``array_bytes`` (per array) defaults to 1 GiB (``quick``: max(256 MiB, 8 x L2)) on a GPU and 64 MiB
    on the CPU. When the GPU runs out of memory, the arrays are freed and the kernel retried with half the
    size (down to 16 MiB), and the record's notes say so. On a GPU, ``timing.benchmark`` flushes the L2
    (writes twice its size) before every timed call, outside the timed region, so every call starts
    cold. Returns result records ``{"params", "measurement", "derived", "notes"}`` (the JSON form of a
    recorded result): DRAM bytes/s counting every read and write, copy throughput N/t for copy-like
    kernels, and % of the datasheet bandwidth when the device is in the catalogue.
    Chapter: *HBM and the memory hierarchy*, "Measured bandwidth".
    """
    import torch

    from . import timing

    dev = _torch_device(device)
    check.boolean("quick", quick)
    names = _kernel_names(kernels)
    l2 = _device_l2_bytes(dev, fallback=None)
    if array_bytes is None:
        if dev.type == "cuda":
            array_bytes = max(256 * MiB, 8 * (l2 or 64 * MiB)) if quick else GiB
        else:
            array_bytes = 64 * MiB
    array_bytes = check.positive_int("array_bytes", array_bytes)
    spec = _datasheet(dev)
    flush = dev.type == "cuda"
    records = []
    for name in names:
        k = KERNELS[name]

        def run(nbytes: int, k: Kernel = k, name: str = name) -> tuple[Any, int]:
            n = max(1, nbytes // 4)
            arrays = _allocate(dev, n, max(k.arrays, 1))
            if name == "read":
                arrays.append(torch.empty((), device=dev, dtype=torch.float32))
            fn = _kernel_fn(k, arrays)
            m = timing.benchmark(fn, label=f"hbm {name}", device=dev, warmup_s=warmup_s, min_samples=min_samples,
                                 min_time_s=min_time_s, max_time_s=max_time_s, flush_l2=flush, l2_bytes=l2,
                                 params={"kernel": name, "array_bytes": n * 4})
            return m, n

        (m, n), _, notes = _retrying_oom(run, array_bytes, min(16 * MiB, array_bytes), dev, "arrays")
        _free_cuda(dev)
        moved = (k.reads + k.writes) * n * 4
        bw = m.rate(moved)
        derived = {"bytes_read": k.reads * n * 4, "bytes_written": k.writes * n * 4, "bytes_moved": moved,
                   "bytes_per_s": bw, "copied_bytes_per_s": m.rate(n * 4) if (k.reads, k.writes) == (1, 1) else None,
                   "datasheet_bytes_per_s": spec.hbm_bytes_per_s if spec else None,
                   "pct_of_datasheet": 100 * bw / spec.hbm_bytes_per_s if spec else None}
        records.append({"params": {"experiment": "bandwidth", "kernel": name, "engine": k.engine,
                                   "array_bytes": n * 4, "dtype": "float32", "l2_flushed": m.l2_flushed,
                                   "description": k.description},
                        "measurement": m.to_dict(), "derived": derived, "notes": notes + list(m.warnings)})
    return records


#: Bytes each reduction of the L2 sweep reads: one chunk of the footprint per output (one thread block each
#: in PyTorch's reduction kernel). Footprints are whole numbers of chunks.
L2_SWEEP_CHUNK_BYTES = 64 * KiB


def _chunk_view(buf: Any, chunks: int, chunk_elems: int, repeats: int) -> Any:
    """The first ``chunks`` x ``chunk_elems`` elements of ``buf`` as a (repeats, chunks, chunk_elems) view
    with stride 0 along the repeats: no copy, the same chunks ``repeats`` times over."""
    return buf[:chunks * chunk_elems].view(chunks, chunk_elems).unsqueeze(0).expand(repeats, chunks, chunk_elems)


def measure_l2_sweep(device: Any = None, *, quick: bool = True, footprints: Sequence[int] | None = None,
                     total_bytes: int | None = None, chunk_bytes: int = L2_SWEEP_CHUNK_BYTES,
                     warmup_s: float | None = None, min_samples: int = 10, min_time_s: float = 0.05,
                     max_time_s: float = 2.0) -> list[dict[str, Any]]:
    """Read bandwidth versus footprint with fixed total traffic and no L2 flush (the working-set curve).

    The design is gpu-benches' ``gpu-l2-cache`` (ernstgpubenches) written with one PyTorch call: a buffer of
    F bytes is cut into m = F / C chunks of C = ``chunk_bytes`` and viewed, without a copy, as a
    (R, m, C/4) float32 tensor whose first dimension has stride 0 (``expand``); ``torch.sum(..., dim=-1)``
    into a preallocated (R, m) output then runs R x m independent reductions of one chunk each. In
    PyTorch's CUDA reduction kernel each output is one 512-thread block reading its chunk with 16-byte
    vector loads, so the kernel has ``total_bytes / C`` blocks (16384 for 1 GiB) whatever the footprint:
    every footprint runs the same kernel with the same parallelism and the same traffic R x F, about
    ``total_bytes``; only the addresses differ. Output r x m + j reads chunk j, so blocks launched in order
    sweep the buffer cyclically and a byte is reused after F bytes of traffic. The L2 is deliberately not
    flushed (a warm cache is the point).

    Footprints default to 256 KiB ... 4 x the L2 the device reports (12 points in ``quick`` mode, else 24)
    and are rounded down to whole chunks (at least one); ``total_bytes`` defaults to 1 GiB (64 MiB on the
    CPU). If the output of the largest repeat count does not fit, the traffic is halved, with the same
    free-then-retry rule as :func:`measure_bandwidth`, and the notes say so. The smallest footprints are
    read by several blocks of the same SM at once and can be served partly by L1. Returns result records.
    Chapter: *HBM and the memory hierarchy*, "The L2 working-set sweep".
    """
    import torch

    from . import timing

    dev = _torch_device(device)
    check.boolean("quick", quick)
    chunk = check.positive_int("chunk_bytes", chunk_bytes)
    if chunk % 16:
        raise ValueError(f"chunk_bytes={chunk_bytes!r} must be a multiple of 16 (one 16-byte vector load)")
    l2 = _device_l2_bytes(dev, fallback=None)
    if footprints is None:
        base = l2 or (4 * MiB if dev.type == "cpu" else 40 * MiB)
        footprints = sweep_footprints(base, points=12 if quick else 24,
                                      start_bytes=256 * KiB if dev.type == "cuda" else 64 * KiB, align=chunk)
    if isinstance(footprints, (str, bytes)) or not isinstance(footprints, Iterable):
        raise TypeError(f"footprints must be a sequence of byte counts, got {footprints!r}")
    footprints = [check.positive_int("footprint", f) for f in footprints]
    if not footprints:
        raise ValueError("footprints is empty; give at least one footprint in bytes")
    chunks = sorted({max(1, f // chunk) for f in footprints})  # whole chunks, duplicates merged
    if total_bytes is None:
        total_bytes = max(GiB if dev.type == "cuda" else 64 * MiB, 2 * chunks[-1] * chunk)
    total = check.positive_int("total_bytes", total_bytes)
    c = chunk // 4  # float32 elements per chunk
    buf = _allocate(dev, chunks[-1] * c, 1, seed=1)[0]
    records = []
    try:
        for m_chunks in chunks:
            f = m_chunks * chunk

            def run(traffic: int, f: int = f, m_chunks: int = m_chunks) -> Any:
                reps = max(1, round(traffic / f))
                view = _chunk_view(buf, m_chunks, c, reps)
                out = torch.empty((reps, m_chunks), device=dev, dtype=torch.float32)

                def fn(view: Any = view, out: Any = out) -> Any:
                    return torch.sum(view, dim=-1, out=out)

                m = timing.benchmark(fn, label=f"l2 sweep {f / MiB:.2f} MiB", device=dev,
                                     warmup_s=(0.05 if dev.type == "cuda" else 0.0) if warmup_s is None else warmup_s,
                                     min_samples=min_samples, min_time_s=min_time_s, max_time_s=max_time_s,
                                     flush_l2=False, params={"footprint_bytes": f, "repeats": reps})
                return m, reps

            (m, reps), _, notes = _retrying_oom(run, total, max(f, min(total, 16 * MiB)), dev, "sweep traffic")
            traffic = reps * f
            records.append({"params": {"experiment": "l2_sweep", "footprint_bytes": f, "repeats": reps,
                                       "chunk_bytes": chunk, "chunks": m_chunks, "traffic_bytes": traffic,
                                       "dtype": "float32", "l2_flushed": False, "device_l2_bytes": l2},
                            "measurement": m.to_dict(), "derived": {"bytes_per_s": m.rate(traffic)},
                            "notes": notes + list(m.warnings)})
    finally:
        del buf
        _free_cuda(dev)
    return records


@dataclass(frozen=True)
class Capacity(_Row):
    """What the driver reports beside the datasheet. See :func:`measure_capacity`."""

    device: str
    total_bytes: int | None  # what the driver exposes to CUDA
    free_bytes: int | None  # after this process's CUDA context
    datasheet_bytes: float | None
    note: str

    @property
    def total_over_datasheet(self) -> float | None:
        if self.total_bytes is None or not self.datasheet_bytes:
            return None
        return self.total_bytes / self.datasheet_bytes


def measure_capacity(device: Any = None) -> Capacity:
    """What the driver reports: total and free device memory (bytes), beside the datasheet capacity.

    On the CPU (or a GPU outside the catalogue) the GPU fields are None. Chapter: *HBM and the memory
    hierarchy*, "40 GB versus 80 GB" (what "95% DRAM utilisation" could and could not mean).
    """
    import torch

    dev = _torch_device(device)
    if dev.type != "cuda":
        return Capacity("cpu", None, None, None, "a CPU: device capacity is a GPU measurement")
    free, total = torch.cuda.mem_get_info(dev)
    spec = _datasheet(dev)
    return Capacity(torch.cuda.get_device_properties(dev).name, int(total), int(free),
                    spec.memory_bytes if spec else None,
                    "total = what the driver exposes to CUDA; free = after this process's context")


@dataclass(frozen=True)
class BandwidthRow(_Row):
    """One bandwidth kernel of a result, flattened. See :func:`bandwidth_rows`."""

    kernel: str
    engine: str | None
    array_bytes: int | None
    bytes_per_s: float
    pct_of_datasheet: float | None
    copied_bytes_per_s: float | None
    samples: int | None
    rel_iqr: float | None


def bandwidth_rows(records: Iterable[Mapping[str, Any]]) -> list[BandwidthRow]:
    """The bandwidth kernels of result records (from :func:`measure_bandwidth` or a recorded result).

    Chapter: *HBM and the memory hierarchy*, "Measured bandwidth".
    """
    rows = []
    for r in records:
        p, d = r.get("params", {}), r.get("derived", {})
        if p.get("experiment") != "bandwidth":
            continue
        meas = r.get("measurement") or {}
        rows.append(BandwidthRow(p["kernel"], p.get("engine"), p.get("array_bytes"), d["bytes_per_s"],
                                 d.get("pct_of_datasheet"), d.get("copied_bytes_per_s"), meas.get("n"),
                                 meas.get("rel_iqr")))
    return rows


def sweep_rows(records: Iterable[Mapping[str, Any]]) -> tuple[list[float], list[float], int | None]:
    """(footprints, bytes/s, device L2 bytes) of L2-sweep records, sorted by footprint.

    Chapter: *HBM and the memory hierarchy*, "The L2 working-set sweep".
    """
    pts, l2 = [], None
    for r in records:
        p = r.get("params", {})
        if p.get("experiment") == "l2_sweep":
            pts.append((p["footprint_bytes"], r["derived"]["bytes_per_s"]))
            l2 = p.get("device_l2_bytes") or l2
    pts.sort()
    return [f for f, _ in pts], [b for _, b in pts], l2


#: Acceptance thresholds of the chapter's GPU run: the copy reaches 85 % of the datasheet bandwidth on an
#: A100, H100 or H200, and the L2 sweep shows a knee within 25 % of the L2 size the device reports.
ACCEPT_COPY_PCT = 85.0
ACCEPT_KNEE_TOLERANCE = 0.25
_ACCEPT_FAMILIES = ("A100", "H100", "H200")


@dataclass(frozen=True)
class Acceptance(_Row):
    """One acceptance check of a GPU run. ``applies`` is False where the threshold is not meant for this GPU
    or the data to judge it are missing (then ``passed`` means nothing)."""

    check: str
    applies: bool
    passed: bool
    detail: str


def check_acceptance(records: Iterable[Mapping[str, Any]], spec_name: str | None) -> list[Acceptance]:
    """The chapter's acceptance checks on measured records (copy bandwidth, L2 knee)."""
    records = list(records)
    out = []
    rows = {r.kernel: r for r in bandwidth_rows(records)}
    family = bool(spec_name) and any(f in str(spec_name) for f in _ACCEPT_FAMILIES)
    for kernel in ("copy", "scale"):
        pct = rows[kernel].pct_of_datasheet if kernel in rows else None
        out.append(Acceptance(f"{kernel} >= {ACCEPT_COPY_PCT:.0f}% of the datasheet bandwidth",
                              family and pct is not None and kernel == "copy",
                              pct is not None and pct >= ACCEPT_COPY_PCT,
                              f"{pct:.1f}%" if pct is not None else "no datasheet figure to compare with"))
    f, y, l2 = sweep_rows(records)
    name = f"L2 knee within {ACCEPT_KNEE_TOLERANCE:.0%} of the reported L2"
    if len(f) >= 3 and l2:
        k = find_knee(f, y, l2, ACCEPT_KNEE_TOLERANCE)
        detail = (f"knee at {k.knee_bytes / MiB:.1f} MiB = {k.ratio_to_l2:.2f} x {l2 / MiB:.0f} MiB"
                  if k.visible else "no visible knee")
        out.append(Acceptance(name, True, k.within, detail))
    else:
        out.append(Acceptance(name, False, False, "needs a sweep with a device-reported L2 size"))
    return out


def _summary(bw: list[dict[str, Any]], sweep: list[dict[str, Any]], capacity: Capacity | None,
             device_label: str, spec_name: str | None = None) -> str:
    lines = [f"HBM benchmark on {device_label}"]
    for row in bandwidth_rows(bw):
        pct = f"{row.pct_of_datasheet:.1f}% of datasheet" if row.pct_of_datasheet is not None else "no datasheet"
        cp = f", copy throughput {row.copied_bytes_per_s / 1e9:.0f} GB/s" if row.copied_bytes_per_s else ""
        lines.append(f"  {row.kernel:6s} {row.engine:6s} {row.bytes_per_s / 1e9:9.1f} GB/s "
                     f"(reads+writes){cp}; {pct}")
    if sweep:
        f, y, l2 = sweep_rows(sweep)
        lines.append(f"  L2 sweep: {len(f)} footprints, {f[0] / KiB:.0f} KiB .. {f[-1] / MiB:.0f} MiB")
        if l2 and len(f) >= 3:
            k = find_knee(f, y, l2)
            if k.visible:
                lines.append(f"  L2 knee at {k.knee_bytes / MiB:.1f} MiB = {k.ratio_to_l2:.2f} x the "
                             f"reported L2 ({l2 / MiB:.0f} MiB); within 25%: {k.within}")
            else:
                lines.append("  no visible L2 knee")
    for c in check_acceptance(bw + sweep, spec_name):
        if c.applies:
            lines.append(f"  acceptance: {c.check}: {'PASS' if c.passed else 'FAIL'} ({c.detail})")
    if capacity and capacity.total_bytes:
        lines.append(f"  capacity: driver reports {capacity.total_bytes / GiB:.2f} GiB total, "
                     f"{capacity.free_bytes / GiB:.2f} GiB free")
    return "\n".join(lines)


def bench_main(argv: Sequence[str] | None = None) -> int:
    """``python -m ampere bench hbm``: bandwidth kernels, the L2 sweep and the capacity report, recorded.

    Chapter: *HBM and the memory hierarchy*. A full run takes well under 3 minutes on an A100/H100/H200;
    ``--quick`` about 20 s. Without CUDA (or with ``--device cpu``) the whole code path runs on the CPU with
    tiny arrays (4 MiB with ``--quick``, 8 MiB otherwise) and a short sweep, in a few seconds; such a result
    says ``backend: cpu`` and is not comparable with a GPU.
    """
    from . import benchcli, device as _device, results

    p = benchcli.bench_parser("hbm", "DRAM bandwidth (read, write, copy, scale, triad) and the L2 working-set sweep")
    p.add_argument("--kernels", default=",".join(KERNELS),
                   help=f"comma-separated kernels (default: all of {','.join(KERNELS)})")
    p.add_argument("--array-mib", type=int, default=None, help="MiB per array (default: 1024, quick: >= 256)")
    p.add_argument("--sweep-points", type=int, default=None, help="footprints of the L2 sweep (default 24, quick 12)")
    p.add_argument("--no-sweep", action="store_true", help="skip the L2 working-set sweep")
    p.add_argument("--no-bandwidth", action="store_true", help="skip the bandwidth kernels")
    args = p.parse_args(list(argv or []))
    kernels = [k for k in args.kernels.split(",") if k]
    unknown = [k for k in kernels if k not in KERNELS]
    if unknown or not kernels:
        p.error(f"--kernels {args.kernels!r}: unknown kernel(s) {unknown}; allowed: {', '.join(KERNELS)}")
    if args.array_mib is not None and args.array_mib < 1:
        p.error(f"--array-mib must be >= 1, got {args.array_mib}")
    if args.sweep_points is not None and args.sweep_points < 3:
        p.error(f"--sweep-points must be >= 3, got {args.sweep_points}")

    info = benchcli.probe(args)
    dev = _device.torch_device(info)
    gpu = dev.type == "cuda"
    notes = []
    if not gpu:
        notes.append("no CUDA GPU used: the CPU's memory was measured with tiny arrays (the code path, not a GPU "
                     "figure)")
        print(f"note: {notes[-1]}")
    array_bytes = args.array_mib * MiB if args.array_mib else (None if gpu else (4 if args.quick else 8) * MiB)
    bw = [] if args.no_bandwidth else measure_bandwidth(
        dev, quick=args.quick, kernels=kernels, array_bytes=array_bytes,
        **({} if gpu else {"min_samples": 5, "min_time_s": 0.01, "max_time_s": 0.5}))
    sweep: list[dict[str, Any]] = []
    if not args.no_sweep:
        footprints = None
        if args.sweep_points or not gpu:
            l2 = info.l2_bytes or (40 * MiB if gpu else 4 * MiB)
            footprints = sweep_footprints(l2, points=args.sweep_points or (12 if args.quick else 24),
                                          start_bytes=256 * KiB if gpu else 64 * KiB,
                                          stop_factor=4.0 if gpu else 2.0, align=L2_SWEEP_CHUNK_BYTES)
        sweep = measure_l2_sweep(dev, quick=args.quick, footprints=footprints,
                                 **({} if gpu else {"total_bytes": 16 * MiB, "min_samples": 5, "min_time_s": 0.01,
                                                    "max_time_s": 0.3}))
    capacity = measure_capacity(dev)
    records = bw + sweep + [{"params": {"experiment": "capacity"}, "derived": capacity.to_dict()}]
    if sweep:
        f, y, l2 = sweep_rows(sweep)
        if l2 and len(f) >= 3:
            records.append({"params": {"experiment": "l2_knee"}, "derived": find_knee(f, y, l2).to_dict()})
    records.append({"params": {"experiment": "acceptance"},
                    "derived": {"checks": [c.to_dict() for c in check_acceptance(bw + sweep, info.spec_name)]}})
    result = results.make_result(
        "hbm", info,
        parameters={"quick": args.quick, "kernels": kernels, "array_bytes": array_bytes,
                    "sweep": not args.no_sweep, "bytes_convention": "reads + writes (STREAM); copy N/t also given"},
        records=records, notes=notes)
    return benchcli.finish_bench(result, args, _summary(bw, sweep, capacity, info.label(), info.spec_name))


# =======================================================================================================
# 7. Views: one call per measuring section of the chapter (ampere.views renders them all the same way)
# =======================================================================================================

#: Kernels shown for each published STREAM record (gpu-benches' init is our write).
_VIEW_KERNELS = ("read", "write", "scale", "triad")


def _catalogue(name: str) -> specs.GPUSpec | None:
    return specs.get(name) if name in specs.names() else None


def bandwidth_points(info: Any = None, measured: Sequence[Mapping[str, Any]] | None = None) -> list[Any]:
    """The bandwidth section's rows: each kernel's bytes/s beside the datasheet DRAM bandwidth (the model).

    Rows come in the book's order of evidence: ``measured`` (records of :func:`measure_bandwidth` on this
    machine's GPU), then results recorded on real GPUs (``results.records(benchmark="hbm",
    kind="measured")``), then the published STREAM measurements of gpu-benches for the GPUs of the catalogue
    (A100 80GB and 40GB, H200). Values in GB/s; the model of a GPU outside the catalogue is left empty.
    Chapter: *HBM and the memory hierarchy*, "Measured bandwidth".
    """
    from . import results, views

    pts = []
    if measured:
        spec = getattr(info, "spec", None)
        gpu = getattr(info, "spec_name", None) or (info.label() if info is not None else "this GPU")
        for row in bandwidth_rows(measured):
            pts.append(views.Point(f"{row.kernel} ({row.engine})", gpu,
                                   spec.hbm_bytes_per_s / 1e9 if spec else None, row.bytes_per_s / 1e9, "GB/s",
                                   kind="measured", source="measured here"))
    for rec in results.records(benchmark="hbm", kind="measured"):
        if rec.params.get("experiment") != "bandwidth" or "bytes_per_s" not in rec.figures:
            continue
        spec = _catalogue(rec.gpu)
        pts.append(views.point(rec, "bytes_per_s", f"{rec.params.get('kernel')} ({rec.params.get('engine')})",
                               spec.hbm_bytes_per_s / 1e9 if spec else None, "GB/s", scale=1e-9))
    for rec in published_stream():
        spec = _catalogue(rec.gpu)
        if spec is None:
            continue
        for kernel in _VIEW_KERNELS:
            pts.append(views.point(rec, _STREAM_FIGURES[kernel], kernel, spec.hbm_bytes_per_s / 1e9, "GB/s"))
    return pts


def _other_stream_table() -> str:
    """Published STREAM figures of GPUs outside the catalogue (no datasheet model here), as Markdown."""
    from . import tables, views

    rows = [{"GPU": rec.gpu, **{f"{k} (GB/s)": rec.figure(_STREAM_FIGURES[k]) for k in _VIEW_KERNELS},
             "source": views.source_text(rec)} for rec in published_stream() if _catalogue(rec.gpu) is None]
    return tables.markdown_table(rows) if rows else ""


def show_bandwidth(info: Any, *, measure: bool | None = None) -> list[Any]:
    """The "Measured bandwidth" section in one call: measure the kernels when ``info`` is a CUDA GPU (or
    ``measure`` says so), then show every row of :func:`bandwidth_points` as a figure and a Markdown table,
    each number with its source and its ratio to the datasheet bandwidth; published figures of GPUs outside
    the catalogue follow in a dropdown. Returns the points shown. Chapter: *HBM*, "Measured bandwidth".
    """
    from . import tables, views

    run = getattr(info, "backend", "cpu") == "cuda" if measure is None else check.boolean("measure", measure)
    measured = measure_bandwidth(quick=True) if run else None
    pts = bandwidth_points(info, measured)
    views.show(pts, title="STREAM-like kernels against the datasheet DRAM bandwidth",
               model_label="datasheet", real_label="reached", digits=0)
    other = _other_stream_table()
    if other:
        tables.show_md("```{dropdown} Published STREAM figures of other GPUs (not in the catalogue)\n"
                       + other + "\n```")
    return pts


def _sweep_points(sweeps: Sequence[L2Sweep]) -> list[Any]:
    """Per sweep: L2 plateau vs the theoretical L2 bandwidth, DRAM plateau vs the datasheet, knee vs L2 size."""
    from . import views

    pts = []
    for sw in sweeps:
        k = sw.knee()
        spec = _catalogue(sw.gpu)
        kind = "measured" if sw.record is None else ("recorded" if sw.record.kind == "measured" else "published")
        l2_model = _l2_bandwidth(spec)[0] / 1e12 if spec else None
        pts.append(views.Point("L2 plateau", sw.gpu, l2_model, k.l2_plateau_bytes_per_s / 1e12, "TB/s",
                               kind=kind, source=sw.label))
        pts.append(views.Point("DRAM plateau", sw.gpu, spec.hbm_bytes_per_s / 1e12 if spec else None,
                               k.dram_plateau_bytes_per_s / 1e12, "TB/s", kind=kind, source=sw.label))
        if k.visible:
            pts.append(views.Point("knee", sw.gpu, sw.l2_bytes / MiB, k.knee_bytes / MiB, "MiB", kind=kind,
                                   source=sw.label))
    return pts


def _recorded_sweeps() -> list[L2Sweep]:
    """L2 sweeps of results recorded on real GPUs (``ampere/data/hbm-*.json``)."""
    from . import results, views

    out = []
    for res in results.recorded(benchmark="hbm"):
        f, y, l2 = sweep_rows(res["records"])
        spec_name = res["device"].get("spec_name") or res["device"].get("name", "?")
        if len(f) >= 3 and (l2 or _catalogue(spec_name)):
            recs = [r for r in results.measured_records(res) if r.params.get("experiment") == "l2_sweep"]
            label = views.source_text(recs[0]) if recs else results.provenance(res)
            out.append(L2Sweep(spec_name, tuple(f), tuple(y), float(l2 or specs.get(spec_name).l2_bytes), label,
                               recs[0] if recs else None))
    return out


def show_l2_sweep(info: Any, *, measure: bool | None = None) -> list[L2Sweep]:
    """The "L2 working-set sweep" section in one call: sweep this GPU when ``info`` is a CUDA GPU (or
    ``measure`` says so), then draw every sweep there is (measured here, recorded, published) over the
    two-level model of its GPU, and tabulate plateaus and knee against the model with their sources.
    Returns the sweeps shown. Chapter: *HBM*, "The L2 working-set sweep".
    """
    import matplotlib.pyplot as plt
    import numpy as np

    from . import plots, tables, views

    run = getattr(info, "backend", "cpu") == "cuda" if measure is None else check.boolean("measure", measure)
    sweeps: list[L2Sweep] = []
    if run:
        recs = measure_l2_sweep(quick=True)
        f, y, l2 = sweep_rows(recs)
        spec = getattr(info, "spec", None)
        if len(f) >= 3 and (l2 or spec):
            sweeps.append(L2Sweep(getattr(info, "spec_name", None) or info.label(), tuple(f), tuple(y),
                                  float(l2 or spec.l2_bytes), "measured here"))
    sweeps += _recorded_sweeps() + published_l2_sweeps()
    n = min(4, len(sweeps))  # measured here (on a GPU) + the three published sweeps
    fig, axes = plots.figure("wide", 1, n) if n <= 3 else plots.figure("tall", 2, 2)
    axes = np.atleast_1d(axes).ravel()
    for ax, sw in zip(axes, sweeps[:n]):
        spec = _catalogue(sw.gpu)
        xs = np.geomspace(min(sw.footprints), max(sw.footprints), 200)
        if spec is not None:
            ym, _ = l2_sweep_model(xs, spec, policy="lru", l2_bytes=sw.l2_bytes)
            ax.plot(xs / MiB, np.array(ym) / 1e12, "-", color="#555555", lw=1, label="model (ideal LRU)")
        kind = "measured" if sw.record is None else ("recorded" if sw.record.kind == "measured" else "published")
        ax.plot(np.array(sw.footprints) / MiB, np.array(sw.bytes_per_s) / 1e12, color=plots.gpu_color(sw.gpu),
                **plots.PROVENANCE[kind], label=kind)
        k = sw.knee()
        ax.axvline(sw.l2_bytes / MiB, color="k", lw=0.8, ls=":")
        if k.visible:
            ax.axvline(k.knee_bytes / MiB, color=plots.gpu_color(sw.gpu), lw=1)
        ax.set_xscale("log")
        ax.set_xlabel("footprint (MiB)", fontsize=8)
        ax.set_title(sw.gpu, fontsize=9)
        ax.tick_params(labelsize=8)
    for ax in axes[::3 if n <= 3 else 2]:
        ax.set_ylabel("read bandwidth (TB/s)", fontsize=8)
    axes[n - 1].legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    plt.show()
    tables.show_md(views.table(_sweep_points(sweeps), model_label="model", real_label="sweep", digits=2))
    return sweeps


def show_capacity(info: Any) -> Capacity | None:
    """The capacity cell of "40 GB versus 80 GB": on a CUDA GPU, what the driver exposes beside the datasheet
    (a measurement); elsewhere the A100 datasheet capacities in GB and GiB and what the book's runtime reserve
    (:data:`ampere.memory.RESERVE_FRACTION`) leaves. Chapter: *HBM*, "40 GB versus 80 GB"."""
    from . import tables

    if getattr(info, "backend", "cpu") == "cuda":
        cap = measure_capacity()
        tables.show_md(tables.markdown_table([{
            "GPU": cap.device, "driver total (GB)": cap.total_bytes / GB, "driver total (GiB)": cap.total_bytes / GiB,
            "datasheet (GB)": cap.datasheet_bytes / GB if cap.datasheet_bytes else None,
            "total / datasheet": cap.total_over_datasheet, "free after this context (GB)": cap.free_bytes / GB,
            "source": "measured here"}], formats={"driver total (GB)": ".2f", "driver total (GiB)": ".2f",
                                                  "datasheet (GB)": ".0f", "total / datasheet": ".3f",
                                                  "free after this context (GB)": ".2f"}))
        return cap
    rows = []
    for name in ("A100-SXM4-40GB", "A100-SXM4-80GB", "H100-SXM5-80GB", "H200-SXM-141GB"):
        s = specs.get(name)
        rows.append({"GPU": name, "datasheet (GB)": s.memory_bytes / GB, "the same in GiB": s.memory_bytes / GiB,
                     f"usable with a {memory.RESERVE_FRACTION:.0%} reserve (GB)":
                         (s.memory_bytes - memory.runtime_reserve(s)) / GB})
    tables.show_md(tables.markdown_table(rows, formats={
        "datasheet (GB)": ".0f", "the same in GiB": ".1f",
        f"usable with a {memory.RESERVE_FRACTION:.0%} reserve (GB)": ".1f"}))
    return None
