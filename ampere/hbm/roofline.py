"""The roofline of memory-bound work and the LLM decoding bound, with the chapter's model presets.

Chapter: *HBM and the memory hierarchy* (book/hbm.ipynb), "Roofline for memory-bound work" and "LLM
decoding". The capacity arithmetic (weights, KV cache) is :mod:`ampere.memory`; model shapes are
:class:`ampere.transformer.TransformerShape` (:data:`MODELS` are the chapter's presets).
Pure: no torch, no matplotlib.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Iterable, Mapping

from .. import check, memory, specs, transformer
from ..transformer import TransformerShape
from .common import _fields, _flag, _int, _name, _num, _text

#: The chapter's models, built from :mod:`ampere.transformer` presets: Llama 2 7B/13B/70B, LLaMA 33B and
#: GPT-3 175B (dimensions and sources in ``transformer.PRESETS``).
MODELS: Mapping[str, TransformerShape] = MappingProxyType({name: transformer.PRESETS[name] for name in (
    "llama2-7b", "llama2-13b", "llama-33b", "llama2-70b", "gpt3-175b")})
#: The size classes of the chapter's tables ("30B" is LLaMA's 32.5B model).
SIZE_CLASSES: Mapping[str, str] = MappingProxyType(
    {k: transformer.SIZE_CLASSES[k] for k in ("7B", "13B", "30B", "70B")})


def _shape(model: str | TransformerShape) -> TransformerShape:
    """``model`` as a shape, a refusal naming ``model`` (a preset name, a size class or a TransformerShape)."""
    if isinstance(model, str):
        try:
            return memory.shape_of(model)
        except ValueError as exc:
            raise ValueError(f"model={model!r} is not a preset: {exc}") from None
    if not isinstance(model, TransformerShape):
        raise TypeError(f"model must be a preset name, a size class or a TransformerShape, got {model!r:.60} "
                        f"({type(model).__name__})")
    return model


@dataclass(frozen=True)
class Op:
    """One operation with its FLOPs and the DRAM bytes it must move at least (each operand once)."""

    name: str
    flops: float
    bytes: float
    description: str

    def __post_init__(self) -> None:
        _fields(self, name=_text(), flops=_num(), bytes=_num(strict=True), description=_text(allow_empty=True))

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
    b = check.positive("element_bytes", element_bytes, maximum=64.0)
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
    intensity = check.positive("intensity", intensity, maximum=1e15)
    s = specs.get(check.gpu("gpu", gpu))
    bw = s.hbm_bytes_per_s if bytes_per_s is None else check.positive("bytes_per_s", bytes_per_s, maximum=1e18)
    return min(s.peak_flops(precision), intensity * bw)


#: Bounds of :func:`decode_bound`'s arguments: far beyond any server, small enough to stay arithmetic.
MAX_BATCH = 1 << 20
MAX_CONTEXT = 1 << 24
MAX_GPUS = 1 << 16

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
    fits: bool  # weights + KV cache within what the GPUs can use (memory.usable_bytes: CUDA total - reserve)

    def __post_init__(self) -> None:
        _fields(self, model=_text(), gpu=lambda n, v: check.gpu(n, v), weights=_name(memory.FORMAT_BITS),
                batch=_int(1, MAX_BATCH), context=_int(0, MAX_CONTEXT), weight_bytes=_num(strict=True),
                kv_bytes=_num(), bytes_per_step=_num(strict=True), memory_time_s=_num(strict=True),
                compute_time_s=_num(strict=True), tokens_per_s=_num(strict=True), fits=_flag)

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
    unreachable, real kernels reach a fraction of it. ``fits`` applies the book's one capacity rule
    (:func:`ampere.memory.usable_bytes`: what CUDA exposes minus the runtime reserve). ``gpus`` > 1 is ideal
    tensor parallelism: bandwidth, peak and capacity add up and communication is free (a looser bound still).
    Chapter: *HBM and the memory hierarchy*, "LLM decoding".
    """
    m = _shape(model)
    s = specs.get(check.gpu("gpu", gpu))
    check.one_of("weights", weights, tuple(memory.FORMAT_BITS))
    check.one_of("kv_cache", kv_cache, tuple(memory.FORMAT_BITS))
    overhead = check.bounded("weight_overhead_bits", weight_overhead_bits, 0.0, 64.0,
                             why="scales of a quantized weight take a few bits")
    b = check.bounded_int("batch", batch, 1, MAX_BATCH)
    ctx = check.bounded_int("context", context, 0, MAX_CONTEXT)
    n = check.bounded_int("gpus", gpus, 1, MAX_GPUS)
    wb = memory.weight_bytes(m.params, weights, overhead)
    kv = memory.kv_cache_bytes(m, ctx, b, kv_cache)
    bw = n * (s.hbm_bytes_per_s if bytes_per_s is None else check.positive("bytes_per_s", bytes_per_s, maximum=1e18))
    flops = b * (2 * m.params + 4 * m.layers * ctx * m.hidden)
    t_mem = (wb + kv) / bw
    t_comp = flops / (n * s.peak_flops(check.one_of("compute_precision", compute_precision, s.precisions())))
    return DecodeBound(m.label, s.name, weights, b, ctx, wb, kv, wb + kv, t_mem, t_comp,
                       b / max(t_mem, t_comp), wb + kv <= n * memory.usable_bytes(s))


def decode_table(models: Iterable[str] = ("7B", "13B", "30B", "70B"), gpus: Iterable[str] = DECODE_GPUS,
                 formats: Iterable[str] = ("fp16", "int8", "int4"), **kwargs: Any) -> list[DecodeBound]:
    """:func:`decode_bound` for every (model, GPU, weight format) combination, in that nesting order.

    ``models`` are preset names or size classes, ``gpus`` catalogue names and ``formats`` weight formats of
    :data:`ampere.memory.FORMAT_BITS`, each a list (at most 64 of each); ``kwargs`` go to every call.
    Chapter: *HBM and the memory hierarchy*, "LLM decoding".
    """
    ms = check.sequence("models", models, lambda n, v: _named_shape(n, v), max_len=64)
    gs = check.gpus("gpus", gpus, max_len=64)
    fs = check.names("formats", formats, tuple(memory.FORMAT_BITS), max_len=64)
    return [decode_bound(m, g, weights=f, **kwargs) for m in ms for g in gs for f in fs]


def _named_shape(name: str, model: Any) -> Any:
    """``model`` if it names a preset (or is a shape), the refusal naming ``name`` otherwise."""
    try:
        _shape(model)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{name}: {exc}") from None
    return model
