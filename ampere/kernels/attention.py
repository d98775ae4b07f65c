"""Attention's memory traffic: the HBM bytes of standard attention and of FlashAttention in its two loop
orders, forward and backward, counted line by line from the algorithms; the matmul FLOPs; the roofline time.

Chapter: *Programming the A100's SM* (``book/kernels.ipynb``), "FlashAttention as an IO-aware algorithm" and
"FlashAttention in Triton". The counts follow the FlashAttention paper's Algorithms 0 and 3 (standard
forward and backward) and 1 and 4 (FlashAttention forward and backward, key/value blocks in the outer loop,
``dao2022flashattention``), and the loop order of FlashAttention-2 (query blocks outer,
``dao2023flashattention2``), which is the order of the chapter's Triton kernel. Pure: no torch, no triton,
no matplotlib.
"""

from __future__ import annotations

import math

from .. import check, specs

#: ``standard``: S and P written to HBM (Algorithms 0 and 3); ``flash1``: FlashAttention's Algorithms 1 and 4
#: (blocks of K and V outer, every block of Q, O and the softmax statistics read and written again for each);
#: ``flash2``: the chapter's Triton kernel (blocks of Q outer, K and V read again for each, forward only).
ALGORITHMS = ("standard", "flash1", "flash2")
PASSES = ("forward", "forward+backward")


def _flash1_blocks(seq: int, head_dim: int, sram_bytes: float, dtype_bytes: int) -> int:
    """T_c, the number of key/value blocks of Algorithm 1: B_c = ceil(M / 4d) keys per block."""
    m = check.positive("sram_bytes", sram_bytes) / dtype_bytes
    if m < 4 * head_dim:
        raise ValueError(f"sram_bytes={sram_bytes:g} holds {m:g} elements, fewer than 4 * head_dim = {4 * head_dim}: "
                         "FlashAttention needs at least one key block on chip")
    return math.ceil(seq / math.ceil(m / (4 * head_dim)))


def _kv_rows_read(seq: int, block_m: int, causal: bool) -> int:
    """Rows of K (and of V) the Triton kernel loads over all its query blocks: every row for each block, or
    up to the block's last query when causal (the kernel's loop bound ``hi``)."""
    blocks = math.ceil(seq / block_m)
    if not causal:
        return blocks * seq
    return sum(min(seq, (i + 1) * block_m) for i in range(blocks))


def attention_hbm_bytes(seq: int, head_dim: int, sram_bytes: float | None = None, algorithm: str = "standard",
                        dtype_bytes: int = 2, *, passes: str = "forward", block_m: int = 128, causal: bool = False,
                        l2_reuse: bool = False) -> float:
    """Bytes one attention head moves to and from HBM (elements counted in the algorithm, times ``dtype_bytes``).

    * ``standard`` forward (Algorithm 0): read Q, K; write S; read S; write P; read P, V; write O:
      4 N d + 4 N^2. Backward (Algorithm 3): dV = P^T dO, dP = dO V^T, dS from P and dP, dQ = dS K,
      dK = dS^T Q, each through HBM: 8 N d + 7 N^2. No masking or dropout passes.
    * ``flash1`` (Algorithms 1 and 4, M = ``sram_bytes``): blocks of B_c = ceil(M / 4d) keys, T_c = ceil(N / B_c)
      of them. Forward: K and V once, and for each key block every block of Q, O and the running max and sum
      read and O, max and sum written: 2 N d + T_c (3 N d + 4 N). Backward: K and V once, dK and dV written
      once, and for each key block Q, O, dO, dQ, max and sum read and dQ written: 4 N d + T_c (5 N d + 2 N).
    * ``flash2`` (the chapter's Triton kernel, forward only): blocks of ``block_m`` queries; each reads its
      block of Q once, every block of K and V (up to its last query when ``causal``) and writes O once:
      2 N d + 2 d x (rows of K read). With ``l2_reuse`` the re-reads of K and V are served by the L2 (the
      blocks of one head run together and its K and V, 2 N d elements, fit the L2), leaving 4 N d.

    Writes of the initial zeros (Algorithms 1 and 4, lines 2 and 4) are left out: a kernel keeps them on
    chip. Chapter: *Programming the A100's SM*, "FlashAttention as an IO-aware algorithm".
    """
    n = check.positive_int("seq", seq, maximum=1 << 22)
    d = check.positive_int("head_dim", head_dim, maximum=1 << 12)
    db = check.positive_int("dtype_bytes", dtype_bytes, maximum=8)
    check.optional(check.positive, "sram_bytes", sram_bytes, maximum=1 << 30)  # checked even where unused
    algo = check.one_of("algorithm", algorithm, ALGORITHMS)
    p = check.one_of("passes", passes, PASSES)
    bm = check.positive_int("block_m", block_m, maximum=1 << 16)
    causal = check.boolean("causal", causal)
    reuse = check.boolean("l2_reuse", l2_reuse)
    backward = p == "forward+backward"
    if algo == "standard":
        elements = 4 * n * d + 4 * n * n + ((8 * n * d + 7 * n * n) if backward else 0)
    elif algo == "flash1":
        if sram_bytes is None:
            raise ValueError("algorithm='flash1' needs sram_bytes, the on-chip memory M of Algorithm 1")
        tc = _flash1_blocks(n, d, sram_bytes, db)
        elements = 2 * n * d + tc * (3 * n * d + 4 * n)
        if backward:
            elements += 4 * n * d + tc * (5 * n * d + 2 * n)
    else:
        if backward:
            raise ValueError("algorithm='flash2' models the chapter's Triton kernel, which has no backward pass; "
                             "use 'standard' or 'flash1' for passes='forward+backward'")
        elements = 2 * n * d + 2 * d * (n if reuse else _kv_rows_read(n, bm, causal))
    return float(elements * db)


def attention_flops(seq: int, head_dim: int, causal: bool = False, *, passes: str = "forward",
                    algorithm: str = "standard") -> float:
    """Matmul FLOPs of one head: forward 4 N^2 d (QK^T and PV); backward 8 N^2 d (dV, dP, dQ, dK), plus
    2 N^2 d for FlashAttention, which recomputes S instead of reading it. Halved when ``causal`` (the blocks
    above the diagonal are skipped). Chapter: *Programming the A100's SM*, "FlashAttention"."""
    n = check.positive_int("seq", seq, maximum=1 << 22)
    d = check.positive_int("head_dim", head_dim, maximum=1 << 12)
    algo = check.one_of("algorithm", algorithm, ALGORITHMS)
    p = check.one_of("passes", passes, PASSES)
    per = 4.0
    if p == "forward+backward":
        if algo == "flash2":
            raise ValueError("algorithm='flash2' (the chapter's Triton kernel) has no backward pass")
        per += 8.0 + (2.0 if algo == "flash1" else 0.0)
    return per * n * n * d * (0.5 if check.boolean("causal", causal) else 1.0)


def attention_model_ms(gpu: str | specs.GPUSpec, batch: int, heads: int, seq: int, head_dim: int,
                       algorithm: str, *, passes: str = "forward", block_m: int = 128, causal: bool = False,
                       l2_reuse: bool = True) -> float:
    """Roofline time of attention, ms: max(HBM bytes / bandwidth, FLOPs / dense bf16 peak) over ``batch`` x
    ``heads`` heads. FlashAttention-1 uses the GPU's largest shared memory per SM as M; the Triton kernel
    (``flash2``) counts K and V once when ``l2_reuse`` (the default: one head's K and V fit the L2).
    Chapter: *Programming the A100's SM*, "FlashAttention in Triton"."""
    s = specs.get(gpu)
    if "bf16" not in s.fma_per_clk_per_sm:
        with_bf16 = [n for n in specs.names() if "bf16" in specs.get(n).fma_per_clk_per_sm]
        raise ValueError(f"gpu={s.name!r} has no bf16 tensor cores (the model times bf16 attention); "
                         f"allowed: {', '.join(with_bf16)}")
    bh = check.positive_int("batch", batch, maximum=1 << 20) * check.positive_int("heads", heads, maximum=1 << 12)
    traffic = bh * attention_hbm_bytes(seq, head_dim, s.max_shared_bytes_per_sm, algorithm, passes=passes,
                                       block_m=block_m, causal=causal, l2_reuse=l2_reuse)
    flops = bh * attention_flops(seq, head_dim, causal, passes=passes, algorithm=algorithm)
    return 1e3 * max(traffic / s.hbm_bytes_per_s, flops / s.peak_flops("bf16"))
