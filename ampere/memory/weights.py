"""Weights by format and the KV cache: bits per element (:data:`FORMAT_BITS`), quantization scales
(:func:`group_scale_overhead_bits`, QLoRA's NF4 constants), :func:`weight_bytes`, :func:`kv_bytes_per_token`
and :func:`kv_cache_bytes`.

Chapter: *HBM and the memory hierarchy* ("Serving a model", "What fits"). Pure Python.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

from .. import check
from ..transformer import TransformerShape
from .activations import shape_of

#: Bits per stored element of each weight or cache format, before quantization scales.
FORMAT_BITS: Mapping[str, float] = MappingProxyType({
    "fp32": 32, "fp16": 16, "bf16": 16, "fp8": 8, "int8": 8, "int4": 4, "nf4": 4,
})

#: QLoRA's NF4 with double quantization: one 8-bit constant per block of 64 weights plus one 32-bit
#: constant per 256 blocks, 8/64 + 32/(64*256) = 0.127 bits per parameter (dettmers2023qlora, section 3).
NF4_DOUBLE_QUANT_OVERHEAD_BITS = 8 / 64 + 32 / (64 * 256)
#: The same without double quantization: one 32-bit absmax per block of 64 weights (dettmers2023qlora).
NF4_SINGLE_QUANT_OVERHEAD_BITS = 32 / 64


#: Bounds of the arguments: far above any real model or quantization scheme, low enough that every answer is a
#: finite number of bytes (a trillion-parameter model is 1e12; a scale is at most a 64-bit number).
MAX_PARAMS = 1e16
MAX_BITS = 64
MAX_GROUP = 1 << 20
MAX_CONTEXT = 100_000_000
MAX_BATCH = 10_000_000


def _format_bits(name: str, fmt: str) -> float:
    """Bits per element of format ``fmt`` (a key of :data:`FORMAT_BITS`); ``name`` is the argument's name."""
    return FORMAT_BITS[check.one_of(name, fmt, tuple(FORMAT_BITS))]


def group_scale_overhead_bits(group_size: int, scale_bits: int = 16, zero_point_bits: int = 0) -> float:
    """Bits per weight spent on quantization scales: one scale (and zero point) per group of weights.

    A group of 128 INT4 weights sharing one FP16 scale adds 16/128 = 0.125 bits per weight.
    Chapter: *HBM and the memory hierarchy*, "What fits".
    """
    g = check.positive_int("group_size", group_size, maximum=MAX_GROUP)
    s = check.positive_int("scale_bits", scale_bits, maximum=MAX_BITS)
    z = check.nonneg_int("zero_point_bits", zero_point_bits, maximum=MAX_BITS)
    return (s + z) / g


def weight_bytes(params: float, fmt: str = "bf16", overhead_bits: float = 0.0) -> float:
    """Bytes to store ``params`` weights in format ``fmt`` plus ``overhead_bits`` of scales per weight.

    Chapter: *HBM and the memory hierarchy*, "Serving a model".
    """
    n = check.positive("params", params, maximum=MAX_PARAMS)
    extra = check.nonneg("overhead_bits", overhead_bits, maximum=MAX_BITS)
    return n * (_format_bits("fmt", fmt) + extra) / 8


def kv_bytes_per_token(model: TransformerShape | str, fmt: str = "bf16") -> float:
    """Key and value vectors of one token in every layer: 2 x layers x kv_heads x head_dim elements.

    Chapter: *HBM and the memory hierarchy*, "Serving a model".
    """
    m = shape_of(model)
    return 2 * m.layers * m.kv_dim * _format_bits("fmt", fmt) / 8


def kv_cache_bytes(model: TransformerShape | str, context: int, batch: int = 1, fmt: str = "bf16") -> float:
    """KV cache of ``batch`` sequences of ``context`` tokens: 2 x layers x kv_heads x head_dim x tokens x bytes.

    Chapter: *HBM and the memory hierarchy*, "Serving a model".
    """
    m = shape_of(model)
    ctx = check.nonneg_int("context", context, maximum=MAX_CONTEXT)
    b = check.positive_int("batch", batch, maximum=MAX_BATCH)
    return kv_bytes_per_token(m, fmt) * ctx * b
