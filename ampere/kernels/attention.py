"""FlashAttention as an IO-aware algorithm: the HBM traffic of standard and FlashAttention forward passes as
counted in the FlashAttention paper, the matmul FLOPs of attention, and the roofline time of both.

Chapter: *Programming the A100's SM* (``book/kernels.ipynb``), "FlashAttention as an IO-aware algorithm"
and "FlashAttention in Triton". Pure: no torch, no triton, no matplotlib.
"""

from __future__ import annotations

import math

from .. import check, specs

ALGORITHMS = ("standard", "flash")


def attention_hbm_bytes(seq: int, head_dim: int, sram_bytes: float, algorithm: str = "standard",
                        dtype_bytes: int = 2) -> float:
    """HBM bytes of one attention head's forward pass, counted as in the FlashAttention paper.

    ``standard`` (its Algorithm 0): read Q, K; write S; read S; write P; read P, V; write O:
    4 N d + 4 N^2 elements. ``flash`` (its Algorithm 1, M = ``sram_bytes`` / ``dtype_bytes`` elements):
    blocks of Bc = ceil(M / 4d) keys and Br = min(Bc, d) queries; K and V are read once (2 N d), and for
    each of the Tc = ceil(N / Bc) key blocks every Q and O block is read and O written (3 N d) with its
    running max and sum (4 N): 2 N d + Tc (3 N d + 4 N) = Theta(N^2 d^2 / M).
    Chapter: *Programming the A100's SM*, "FlashAttention as an IO-aware algorithm".
    """
    n = check.positive_int("seq", seq)
    d = check.positive_int("head_dim", head_dim)
    db = check.positive_int("dtype_bytes", dtype_bytes, maximum=8)
    algo = check.one_of("algorithm", algorithm, ALGORITHMS)
    m = check.positive("sram_bytes", sram_bytes) / db
    if algo == "standard":
        return float((4 * n * d + 4 * n * n) * db)
    bc = math.ceil(m / (4 * d))
    if bc < 1 or m < 4 * d:
        raise ValueError(f"sram_bytes={sram_bytes:g} holds {m:g} elements, fewer than 4 * head_dim = {4 * d}: "
                         "FlashAttention needs at least one key block on chip")
    tc = math.ceil(n / bc)
    return float((2 * n * d + tc * (3 * n * d + 4 * n)) * db)


def attention_flops(seq: int, head_dim: int, causal: bool = False) -> float:
    """Matmul FLOPs of one head's attention forward: 4 N^2 d (halved when causal).
    Chapter: *Programming the A100's SM*, "FlashAttention"."""
    n = check.positive_int("seq", seq)
    d = check.positive_int("head_dim", head_dim)
    return 4.0 * n * n * d * (0.5 if check.boolean("causal", causal) else 1.0)


def attention_model_ms(gpu: str | specs.GPUSpec, batch: int, heads: int, seq: int, head_dim: int,
                       algorithm: str) -> float:
    """Roofline time of an attention forward: max(HBM bytes / bandwidth, FLOPs / dense bf16 peak), in ms.
    Chapter: *Programming the A100's SM*, "FlashAttention in Triton"."""
    s = specs.get(gpu)
    bh = check.positive_int("batch", batch) * check.positive_int("heads", heads)
    traffic = bh * attention_hbm_bytes(seq, head_dim, s.max_shared_bytes_per_sm, algorithm)
    return 1e3 * max(traffic / s.hbm_bytes_per_s, bh * attention_flops(seq, head_dim) / s.peak_flops("bf16"))
