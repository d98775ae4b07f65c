"""The shared GEMM model: which peak a matmul runs against, tile/wave quantisation, the derived peak table,
and the published achievable matmul figures (MAMF) the models take as their ceiling.

Chapter: *Architecture of the GA100* explains all of it ("Every headline number, derived", "Why small
matmuls miss the roof"); *TF32 and the precision formats*, *2:4 structured sparsity*, *Megatron-LM* and
*The reference check* use it. Pure Python: no torch, no chapter module is imported here.

* :func:`peak_precision_for` -- the roof of a measured matmul (cuBLAS runs FP64 GEMMs on the FP64
  tensor cores where they exist).
* :func:`wave_efficiency` -- output tiles run in waves over the SMs; the last wave is partly empty;
  :func:`quantized_matmul_time` -- the time that follows (waves x the time of one tile, plus a fixed
  per-kernel overhead): the tile and wave staircase of throughput against a dimension.
* :func:`alignment_elements` -- NVIDIA's alignment rule for tensor-core GEMM dimensions (16 bytes, 128 on
  the A100) in elements of a precision.
* :func:`peak_rows` -- one :class:`PeakRow` per (GPU, precision, dense/sparse): the derivation
  SMs x FMA/clk/SM x 2 x clock beside the figure NVIDIA prints.
* :func:`published_matmul` -- the published achievable-matmul records of
  ``ampere/data/published/matmul.json`` (``results.Record``); :func:`mamf_flops` -- the best of a shape
  search for a GPU (or its sibling with the same silicon and clocks), the GEMM ceiling of the Megatron
  chapter's throughput model.
"""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Sequence

from . import check, results, specs

__all__ = ["matmul_flops", "peak_precision_for", "wave_efficiency", "PeakRow", "peak_rows", "MATMUL_METHODS",
           "published_matmul", "matmul_tflops", "matmul_shape", "MAMF_SIBLINGS", "mamf_flops",
           "quantized_matmul_time", "ELEMENT_BYTES", "alignment_elements", "sustained_matmul_flops"]

#: How a published matmul figure was obtained: "mamf" = the best of a search over many shapes (maximum
#: achievable matmul FLOPS), "fixed" = one stated shape, "sweep" = a source's summary of a sweep of square
#: sizes (shape not stated).
MATMUL_METHODS = ("mamf", "fixed", "sweep")
#: Largest GEMM dimension (and batch count) the functions accept: cuBLAS takes its dimensions as 32-bit ``int``.
MAX_DIM = 2**31 - 1
#: Largest tile side, SM count and tiles per SM of the wave model (far above any GPU's: the A100 has 108 SMs).
MAX_TILE, MAX_SMS, MAX_TILES_PER_SM = 4096, 4096, 64


def _spec(name: str, gpu: Any) -> specs.GPUSpec:
    """``specs.get(gpu)``, the error naming the argument ``name``."""
    try:
        return specs.get(gpu)
    except (ValueError, TypeError) as exc:
        raise type(exc)(f"{name}: {exc}") from None


def matmul_flops(m: int, n: int, k: int, batch: int = 1) -> float:
    """FLOPs of ``batch`` products C[m,n] = A[m,k] B[k,n]: 2 m n k per product (one multiply, one add).

    Chapter: *Architecture of the GA100*, "How we measure".
    """
    m, n, k = (check.positive_int(name, v, maximum=MAX_DIM) for name, v in (("m", m), ("n", n), ("k", k)))
    return 2.0 * m * n * k * check.positive_int("batch", batch, maximum=MAX_DIM)


def peak_precision_for(spec: str | specs.GPUSpec, precision: str) -> str | None:
    """The peak a measured matmul of ``precision`` is compared with, or None when ``spec`` lacks it.

    cuBLAS runs FP64 GEMMs on the FP64 tensor cores where they exist (A100, H100), so their roof is
    ``fp64_tc``, not the CUDA-core ``fp64``. Chapter: *Architecture of the GA100*, "How close real
    matmuls come to the peak".
    """
    spec = _spec("spec", spec)
    check.one_of("precision", precision, specs.PRECISIONS)
    if precision == "fp64" and spec.supports("fp64_tc"):
        return "fp64_tc"
    return precision if spec.supports(precision) else None


def wave_efficiency(m: int, n: int, tile_m: int = 128, tile_n: int = 128, sms: int = 108,
                    tiles_per_sm: int = 1, batch: int = 1) -> float:
    """Fraction of SM time doing useful work when an m x n output is cut into tiles that run in waves.

    A GEMM kernel assigns output tiles to SMs; with ``T = ceil(m/tile_m) * ceil(n/tile_n)`` tiles and
    ``sms * tiles_per_sm`` slots per wave it needs ``ceil(T / slots)`` waves, and the last one is partly
    empty: efficiency = useful tiles / (waves x slots). Partial tiles at the edges (tile quantisation)
    waste the rest. ``batch`` independent GEMMs of the same shape (attention heads, say) share the waves.

    Chapter: *Architecture of the GA100*, "Why small matmuls miss the roof"; the Megatron chapter's GEMM
    model uses the same function.
    """
    m, n, tile_m, tile_n, sms, tiles_per_sm, batch = (
        check.positive_int(label, v, maximum=top) for label, v, top in (
            ("m", m, MAX_DIM), ("n", n, MAX_DIM), ("tile_m", tile_m, MAX_TILE), ("tile_n", tile_n, MAX_TILE),
            ("sms", sms, MAX_SMS), ("tiles_per_sm", tiles_per_sm, MAX_TILES_PER_SM), ("batch", batch, MAX_DIM)))
    return _wave_efficiency(m, n, tile_m, tile_n, sms, tiles_per_sm, batch)


@functools.lru_cache(maxsize=65536)
def _wave_efficiency(m: int, n: int, tile_m: int, tile_n: int, sms: int, tiles_per_sm: int, batch: int) -> float:
    """:func:`wave_efficiency` on arguments already checked (positive Python integers), cached: the Megatron
    chapter's layout search asks for the same few shapes tens of thousands of times."""
    tiles = math.ceil(m / tile_m) * math.ceil(n / tile_n) * batch
    slots = sms * tiles_per_sm
    waves = math.ceil(tiles / slots)
    useful = (m * n * batch) / (tile_m * tile_n)  # tiles' worth of real output
    return useful / (waves * slots)


def quantized_matmul_time(m: int, n: int, k: int, peak_flop_per_s: float, tile_m: int = 256, tile_n: int = 128,
                          sms: int = 108, tiles_per_sm: int = 1, overhead_s: float = 0.0) -> float:
    """Seconds for C[m,n] = A[m,k] B[k,n] when output tiles run in waves at the peak rate, plus a fixed overhead.

    Each of the ``sms * tiles_per_sm`` slots of a wave computes one ``tile_m x tile_n`` output tile over the
    whole inner dimension at its share of ``peak_flop_per_s``: a tile takes ``2 tile_m tile_n k / (peak /
    slots)``. A partial tile at the matrix edge costs a whole one (tile quantisation), a partial last wave a
    whole wave (wave quantisation), so the time is ``ceil(tiles / slots)`` tile times plus ``overhead_s`` (a
    kernel launch). ``matmul_flops(m, n, k) / time`` is ``peak x wave_efficiency(...)`` when the overhead is
    zero: plotted against ``n`` it is the staircase of NVIDIA's Matrix Multiplication Background guide. An
    upper bound of a compute-bound kernel, not a prediction of cuBLAS, which picks among many tile shapes.

    Chapter: *Architecture of the GA100*, "Tiles, waves and alignment".
    """
    m, n, k, tile_m, tile_n, sms, tiles_per_sm = (
        check.positive_int(label, v, maximum=top) for label, v, top in (
            ("m", m, MAX_DIM), ("n", n, MAX_DIM), ("k", k, MAX_DIM), ("tile_m", tile_m, MAX_TILE),
            ("tile_n", tile_n, MAX_TILE), ("sms", sms, MAX_SMS), ("tiles_per_sm", tiles_per_sm, MAX_TILES_PER_SM)))
    peak = check.positive("peak_flop_per_s", peak_flop_per_s)
    overhead_s = check.nonneg("overhead_s", overhead_s, maximum=1.0)  # a launch costs microseconds
    slots = sms * tiles_per_sm
    tiles = math.ceil(m / tile_m) * math.ceil(n / tile_n)
    waves = math.ceil(tiles / slots)
    tile_s = 2.0 * tile_m * tile_n * k / (peak / slots)
    return waves * tile_s + overhead_s


#: Bytes per element of each precision's matmul inputs (TF32 reads FP32 words, FP64 tensor cores FP64).
ELEMENT_BYTES: dict[str, int] = {"fp64": 8, "fp64_tc": 8, "fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1,
                                 "int8": 1, "int4": 1}


def alignment_elements(precision: str) -> tuple[int, int]:
    """(elements, elements on the A100): the multiples of which GEMM dimensions M, N, K should be for tensor cores.

    NVIDIA's rule is in bytes (``ampere/data/tables/gpu-performance-rules.json``, row ``tensor_core_alignment``):
    dimensions aligned to 16 bytes, 128 bytes on the A100, perform better, and before cuBLAS 11.0 the 16 bytes
    were required to use tensor cores at all. In elements: FP16/BF16 8 and 64, TF32 4 and 32, INT8 16 and 128,
    FP64 2 and 16. (INT4 packs two values per byte: its entry counts bytes.)

    Chapter: *Architecture of the GA100*, "Tiles, waves and alignment".
    """
    check.one_of("precision", precision, ELEMENT_BYTES)
    row = next(r for r in results.table("gpu-performance-rules")["rows"] if r["rule"] == "tensor_core_alignment")
    size = ELEMENT_BYTES[precision]
    return int(row["min_bytes"]) // size, int(row["a100_bytes"]) // size


# ---------------------------------------------------------------------------------------------------
# Every headline number, derived
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PeakRow:
    """One peak of one GPU: the derivation SMs x FMA/clk/SM x 2 x clock (x 2 for 2:4 sparse) and, where
    NVIDIA prints one, the datasheet figure as printed (``datasheet``), whether the two agree to the
    printed precision (``agrees``) and the known rounding quirk that explains a disagreement (``note``).

    Chapter: *Architecture of the GA100*, "Every headline number, derived".
    """

    gpu: str
    precision: str
    sparse: bool
    sms: int
    fma_per_clk_per_sm: int
    clock_hz: float
    derived_flop_per_s: float
    datasheet: str | None = None
    agrees: bool | None = None
    note: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "gpu", _spec("gpu", self.gpu).name)
        check.one_of("precision", self.precision, specs.ALL_PRECISIONS)
        check.boolean("sparse", self.sparse)
        object.__setattr__(self, "sms", check.positive_int("sms", self.sms, maximum=MAX_SMS))
        object.__setattr__(self, "fma_per_clk_per_sm", check.positive_int("fma_per_clk_per_sm",
                                                                          self.fma_per_clk_per_sm, maximum=1 << 20))
        object.__setattr__(self, "clock_hz", check.positive("clock_hz", self.clock_hz, maximum=1e11))
        object.__setattr__(self, "derived_flop_per_s", check.positive("derived_flop_per_s", self.derived_flop_per_s,
                                                                      maximum=1e20))
        check.optional(check.string, "datasheet", self.datasheet, max_len=200)
        check.optional(check.boolean, "agrees", self.agrees)
        check.optional(check.string, "note", self.note, max_len=2000)

    @property
    def derived_tflops(self) -> float:
        """The derived peak in TFLOP/s (TOP/s for int8/int4)."""
        return self.derived_flop_per_s / 1e12

    @property
    def clock_mhz(self) -> float:
        return self.clock_hz / 1e6

    def to_dict(self) -> dict[str, Any]:
        """A plain dict (for JSON and for Markdown tables), with ``derived_tflops`` and ``clock_mhz``."""
        return {**asdict(self), "derived_tflops": self.derived_tflops, "clock_mhz": self.clock_mhz}


def peak_rows(gpus: Iterable[str | specs.GPUSpec], precisions: Sequence[str] = specs.PRECISIONS,
              modes: Sequence[bool] = (False, True)) -> list[PeakRow]:
    """One :class:`PeakRow` per (gpu, precision, dense/sparse) the GPU supports, in the order given.

    ``modes`` selects dense (False) and/or 2:4 sparse (True) rows. The one peak table of the package: the
    Architecture chapter prints all of it, the sparsity chapter pivots its tensor precisions.

    Chapter: *Architecture of the GA100*, "Every headline number, derived".
    """
    if isinstance(gpus, (str, specs.GPUSpec)):
        gpus = [gpus]
    chosen = check.sequence("gpus", gpus, _spec, max_len=64)
    precisions = check.names("precisions", precisions, specs.ALL_PRECISIONS)
    modes = check.sequence("modes", modes, check.boolean, max_len=2)
    rows = []
    for spec in chosen:
        for p in precisions:
            for sparse in modes:
                if not spec.supports(p, sparse):
                    continue
                derived = spec.peak_flops(p, sparse)
                quoted = spec.datasheet.get((p, sparse))
                rows.append(PeakRow(
                    gpu=spec.name, precision=p, sparse=sparse, sms=spec.sm_count,
                    fma_per_clk_per_sm=spec.fma_per_clk_per_sm[p], clock_hz=spec.clock_for(p),
                    derived_flop_per_s=derived, datasheet=quoted.text if quoted else None,
                    agrees=quoted.agrees_with(derived) if quoted else None, note=quoted.note if quoted else None))
    return rows


# ---------------------------------------------------------------------------------------------------
# Published achievable matmul figures
# ---------------------------------------------------------------------------------------------------


def published_matmul(gpu: str | None = None, precision: str | None = None,
                     method: str | None = None) -> list[results.Record]:
    """Published achievable dense matmul throughput (``ampere/data/published/matmul.json``), filtered.

    Each record has benchmark "matmul", params ``{"precision", "m", "n", "k"`` (None when the source
    does not give the shape), ``"method"}`` (:data:`MATMUL_METHODS`) and one figure
    ``"<precision>_tflop_per_s"``. Read the number with :func:`matmul_tflops`, the shape with
    :func:`matmul_shape`. Chapter: *Architecture of the GA100*, "The roofline".
    """
    if gpu is not None:
        gpu = _spec("gpu", gpu).name
    if precision is not None:
        check.one_of("precision", precision, specs.PRECISIONS)
    if method is not None:
        check.one_of("method", method, MATMUL_METHODS)
    out = []
    for rec in results.records(benchmark="matmul", gpu=gpu, kind="published"):
        if precision is not None and rec.params.get("precision") != precision:
            continue
        if method is not None and rec.params.get("method") != method:
            continue
        out.append(rec)
    return out


def _matmul_record(rec: Any) -> results.Record:
    if not isinstance(rec, results.Record):
        raise TypeError(f"rec must be a results.Record of benchmark 'matmul', got {rec!r:.60} ({type(rec).__name__})")
    if rec.benchmark != "matmul":
        raise ValueError(f"rec={rec.id!r} is a {rec.benchmark!r} record; allowed: a 'matmul' record "
                         "(published_matmul)")
    return rec


def matmul_tflops(rec: results.Record) -> float:
    """The TFLOP/s figure of a published matmul record (the ``<precision>_tflop_per_s`` figure)."""
    precision = _matmul_record(rec).params.get("precision")
    return float(rec.figure(f"{precision}_tflop_per_s"))


def matmul_shape(rec: results.Record) -> tuple[int, int, int] | None:
    """(m, n, k) of a published matmul record, or None when the source does not give the shape."""
    dims = tuple(_matmul_record(rec).params.get(d) for d in ("m", "n", "k"))
    return None if any(d is None for d in dims) else tuple(int(d) for d in dims)  # type: ignore[return-value]


#: Catalogue GPUs without a published MAMF figure of their own that share one with a sibling of the same
#: silicon, SM count and clocks (so the same dense peak): the 40 GB A100s take their 80 GB twin's figure,
#: the H200 the H100 SXM's (same GH100 compute, faster memory, which a large matmul does not feel).
MAMF_SIBLINGS: dict[str, str] = {"A100-SXM4-40GB": "A100-SXM4-80GB", "A100-PCIE-40GB": "A100-PCIE-80GB",
                                 "H200-SXM-141GB": "H100-SXM5-80GB"}


def _newest(recs: Sequence[results.Record]) -> results.Record:
    """The most recent record (then the highest figure): a source's later table supersedes its earlier one."""
    return max(recs, key=lambda r: (r.date, matmul_tflops(r)))


def mamf_flops(gpu: str | specs.GPUSpec,
               precision: str = "bf16") -> tuple[float, tuple[int, int, int] | None, results.Record]:
    """(FLOP/s, shape or None, the record) of the best achievable ``precision`` matmul published for ``gpu``.

    Reads the "mamf" records of :func:`published_matmul`; a GPU without its own takes its sibling's
    (:data:`MAMF_SIBLINGS`); several records (revisions of one table) -> the newest. Raises
    ``ValueError`` naming the GPUs that have one when neither ``gpu`` nor its sibling does.

    Chapter: *Megatron-LM*, "A hardware-built throughput model" (the GEMM ceiling); *Architecture of the
    GA100*, "The roofline".
    """
    spec = _spec("gpu", gpu)
    check.one_of("precision", precision, specs.PRECISIONS)
    for name in (spec.name, MAMF_SIBLINGS.get(spec.name)):
        if name is None:
            continue
        recs = published_matmul(name, precision, "mamf")
        if recs:
            rec = _newest(recs)
            return matmul_tflops(rec) * 1e12, matmul_shape(rec), rec
    have = sorted({r.gpu for r in published_matmul(precision=precision, method="mamf")})
    raise ValueError(f"gpu={spec.name!r}: no published {precision} MAMF figure (nor for a sibling); "
                     f"GPUs with one: {', '.join(have) or 'none'}")


def sustained_matmul_flops(gpu: str | specs.GPUSpec) -> tuple[float, tuple[int, int, int], results.Record] | None:
    """(FLOP/s, shape, record) of the published 16-bit matmul of one large fixed shape on random data for
    ``gpu`` (or a GPU of the same silicon and clocks, :data:`MAMF_SIBLINGS` either way), or None.

    A long GEMM on random data runs at the board's power limit, below the best of a quick shape search
    (:func:`mamf_flops`): on an A100, 8192^3 with random normal inputs, against the same with zeros
    (``ampere/data/published/matmul.json``). Training runs GEMMs back to back for hours, so the Megatron
    chapter's time model takes this as its GEMM ceiling where one is published. Chapter: *Megatron-LM*,
    "A throughput model built from hardware".
    """
    spec = _spec("gpu", gpu)
    names = {spec.name, MAMF_SIBLINGS.get(spec.name)} | {k for k, v in MAMF_SIBLINGS.items() if v == spec.name}
    found = [r for name in sorted(n for n in names if n) for r in published_matmul(name, method="fixed")
             if r.params.get("data") == "randn" and r.params.get("precision") in ("fp16", "bf16")
             and matmul_shape(r) is not None]
    if not found:
        return None
    rec = _newest(found)
    shape = matmul_shape(rec)
    assert shape is not None
    return matmul_tflops(rec) * 1e12, shape, rec
