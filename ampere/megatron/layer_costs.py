"""One transformer layer's time on one GPU for one microbatch, forward and backward, by category: its GEMMs,
its attention core (unfused 2021 kernels or FlashAttention), its memory-bound kernels (fused or not), and
every tensor-parallel collective Megatron-LM issues, overlapped with the GEMM it runs beside when the
software does so (:func:`layer_costs`).

Chapter: *Megatron-LM: 3D parallelism predicted, validated, and run* (book/megatron.ipynb), section
"A throughput model built from hardware". Pure.

The collectives, from the code [megatronlm2022code; megatron/core/tensor_parallel/layers.py lines 667-708 at
d98e8a64]: without sequence parallelism, the forward pass all-reduces the outputs of the two row-parallel
GEMMs and the backward pass the input gradients of the two column-parallel ones. With it, the forward pass
all-gathers the sequence-split input of each column-parallel GEMM and reduce-scatters the output of each
row-parallel one; the backward pass all-gathers the output gradient of each row-parallel GEMM and, for each
column-parallel GEMM, all-gathers its input again (to save memory the full input is not kept: the weight
gradient needs it) and reduce-scatters its input gradient. The backward collectives of a column-parallel
GEMM are issued asynchronously, the re-gather beside the input-gradient GEMM and the reduction beside the
weight-gradient GEMM (``Software.tp_overlap``).
"""

from __future__ import annotations

from .. import check
from ..transformer import TransformerShape
from .comms import overlapped, tp_collective
from .hardware import _flash_roofline, _gemm, _Hardware, attention_efficiency, flash_attention_efficiency
from .inputs import MEMORY_OPS, UNFUSED_OPS

#: The per-layer categories, in the order of :data:`ampere.megatron.CATEGORIES`.
LAYER_CATEGORIES = ("layer GEMMs", "attention", "other memory-bound", "tensor-parallel all-reduce")


def layer_costs(cfg: TransformerShape, hw: _Hardware, t: int, b: int, sequence_parallel: bool = False,
                flash: bool = False, fused: bool = True, tp_overlap: bool = False,
                slowdown: float | None = None) -> dict[str, dict[str, float]]:
    """Seconds per microbatch for one transformer layer on one GPU: ``{"fwd": {...}, "bwd": {...}}`` by
    :data:`LAYER_CATEGORIES`.

    The layer's linear layers (:meth:`TransformerShape.linear_shapes`: QKV with grouped-query K and V, GPT or
    SwiGLU MLP) split by columns then rows over ``t`` ranks; each forward GEMM has an input-gradient and a
    weight-gradient GEMM in the backward pass. With ``sequence_parallel`` the memory-bound kernels on b s h
    tensors are split over the ``t`` ranks and the collectives are those listed in the module docstring;
    ``tp_overlap`` prices the asynchronous ones with :func:`ampere.megatron.comms.overlapped` (``slowdown``:
    its interference factor). ``flash`` replaces the unfused attention core by one fused kernel at
    :func:`flash_attention_efficiency` of its GEMM roofline; ``fused=False`` runs the fused elementwise
    kernels as separate operations (:data:`UNFUSED_OPS`).
    """
    check.boolean("sequence_parallel", sequence_parallel)
    s, h = cfg.seq, cfg.hidden
    tokens, heads, hd = b * s, cfg.heads // t, cfg.head_dim
    row_split = {"o", "down"}
    fwd = dict.fromkeys(LAYER_CATEGORIES, 0.0)
    bwd = dict(fwd)
    groups: dict[tuple[int, int], int] = {}  # (in, kind) of fused column-split matrices: QKV, gate+up
    for name, i, o in cfg.linear_shapes():
        if name in row_split:
            fwd["layer GEMMs"] += _gemm(hw, tokens, o, i // t)
            bwd["layer GEMMs"] += _gemm(hw, tokens, i // t, o) + _gemm(hw, i // t, o, tokens)
        else:
            key = (i, -1 if name in ("q", "k", "v") else -2)
            groups[key] = groups.get(key, 0) + o // t
    column = []  # (input-gradient GEMM, weight-gradient GEMM) of each column-parallel group
    for (i, _kind), n_out in groups.items():
        fwd["layer GEMMs"] += _gemm(hw, tokens, n_out, i)
        dgrad, wgrad = _gemm(hw, tokens, i, n_out), _gemm(hw, i, n_out, tokens)
        bwd["layer GEMMs"] += dgrad + wgrad
        column.append((dgrad, wgrad))
    att_eff = attention_efficiency()
    if flash:  # one fused kernel: no s x s traffic; scores recomputed in the backward pass
        total = _flash_roofline(hw, s, hd, b * heads) / flash_attention_efficiency()
        fwd["attention"] += total * 4 / 14
        bwd["attention"] += total * 10 / 14
    else:
        for (m, n, k) in ((s, s, hd), (s, hd, s)):  # scores Q K^T, then probabilities times V
            fwd["attention"] += _gemm(hw, m, n, k, b * heads) / att_eff
            bwd["attention"] += (_gemm(hw, m, k, n, b * heads) + _gemm(hw, k, n, m, b * heads)) / att_eff
    hp = h // t
    ffn_p = cfg.ffn * (2 if cfg.glu else 1) // t
    qkv_p = (h + 2 * cfg.kv_dim) // t
    replicated = tokens * h / (t if sequence_parallel else 1)
    counts = {"h": replicated, "hp": tokens * hp, "3hp": tokens * qkv_p, "4hp": tokens * ffn_p,
              "att": b * heads * s * s}
    for name, kind, fb, bb, _why in MEMORY_OPS:
        if kind == "att" and flash:
            continue  # fused into the FlashAttention kernel
        if not fused and name in UNFUSED_OPS:
            fb, bb = UNFUSED_OPS[name]
        if kind == "3hp" and not cfg.biases and fb:
            fb = 0  # no bias to add outside the GEMM
        cat, eff = ("attention", att_eff) if kind == "att" else ("other memory-bound", 1.0)
        if fb:
            fwd[cat] += (fb * counts[kind] / hw.hbm + hw.gap) / eff
        if bb:
            bwd[cat] += (bb * counts[kind] / hw.hbm + hw.gap) / eff
    nbytes = 2.0 * tokens * h  # the f/g collectives move b s h 16-bit values
    if t > 1:
        if sequence_parallel:
            ag, rs = tp_collective(hw, "all_gather", nbytes, t), tp_collective(hw, "reduce_scatter", nbytes, t)
            fwd["tensor-parallel all-reduce"] = 2 * (ag + rs)
            back = 2 * ag  # output gradients of the two row-parallel GEMMs, gathered before their GEMMs
            for dgrad, wgrad in column:  # input re-gather beside dgrad, gradient reduce-scatter beside wgrad
                back += (overlapped(ag, dgrad, slowdown) + overlapped(rs, wgrad, slowdown)) if tp_overlap else ag + rs
        else:
            ar = tp_collective(hw, "all_reduce", nbytes, t)
            fwd["tensor-parallel all-reduce"] = 2 * ar
            back = sum(overlapped(ar, wgrad, slowdown) if tp_overlap else ar for _dgrad, wgrad in column)
        bwd["tensor-parallel all-reduce"] = back
    return {"fwd": fwd, "bwd": bwd}
