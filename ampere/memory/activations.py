"""Activation memory of training: per transformer layer and micro-batch (korthikanti2022reducing, Table 2,
generalised to grouped-query attention, SwiGLU MLPs and fused attention), the fp32 logits, the whole stack.

Chapter: *HBM and the memory hierarchy* ("Activations"); *Megatron-LM* ("Memory per GPU"). Pure Python.
"""

from __future__ import annotations

from typing import Any

from .. import check
from ..transformer import LIMITS, PRESETS, SIZE_CLASSES, TransformerShape, preset

#: Activation recomputation: none, selective (attention scores and softmax recomputed), full (only each
#: layer's input kept).
RECOMPUTE: tuple[str, ...] = ("none", "selective", "full")
#: Bounds of the micro-batch and of the tensor-parallel size (far above any run; they keep answers finite).
MAX_MICRO_BATCH = 1_000_000
MAX_TENSOR = LIMITS["heads"]


def shape_of(model: Any) -> TransformerShape:
    """``model`` as a shape: a :class:`TransformerShape`, or a preset name / size class of ampere.transformer.

    Chapter: *HBM and the memory hierarchy*, "What fits".
    """
    return _shape("model", model)


def _shape(name: str, model: Any) -> TransformerShape:
    """:func:`shape_of`, the error naming the argument ``name``."""
    if isinstance(model, TransformerShape):
        return model
    if isinstance(model, str):
        return preset(check.one_of(name, model, (*SIZE_CLASSES, *PRESETS)))
    raise TypeError(f"{name} must be a TransformerShape or a preset name ({', '.join((*SIZE_CLASSES, *PRESETS))}), "
                    f"got {model!r:.60} ({type(model).__name__})")


def layer_activation_terms(hidden: int, heads: int, *, ffn: int | None = None, kv_heads: int | None = None,
                           glu: bool = False) -> dict[str, float]:
    """The per-token constants of :func:`activation_bytes_per_layer`, in units of ``s b h`` bytes.

    ``replicated``: what every tensor rank keeps whole without sequence parallelism (the two LayerNorm
    inputs 4, the QKV and first-MLP inputs 2 + 2, the two dropout masks 1 + 1: 10); ``split``: what tensor
    parallelism divides (Q 2, K and V 2 kv/h each, the projection input 2, the MLP: 4 ffn/h for a GELU MLP
    (its input and output of the activation), 6 ffn/h for SwiGLU (gate and up outputs, their product));
    ``scores_per_as_over_h``: the unfused attention core's softmax output, dropout mask and dropout output,
    5 a s / h; ``flash_per_a_over_h``: what a fused (FlashAttention) kernel keeps instead, the fp32 log-sum-exp
    of each query row, 4 a / h. A GPT layer gives 10 + 24 = 34, Korthikanti et al.'s constant.
    Chapter: *Megatron-LM*, "Memory per GPU".
    """
    h = check.positive_int("hidden", hidden, maximum=LIMITS["hidden"])
    a = check.positive_int("heads", heads, maximum=LIMITS["heads"])
    f = 4 * h if ffn is None else check.positive_int("ffn", ffn, maximum=LIMITS["ffn_hidden"])
    kv = a if kv_heads is None else check.positive_int("kv_heads", kv_heads, maximum=LIMITS["kv_heads"])
    glu = check.boolean("glu", glu)
    if h % a or a % kv:
        raise ValueError(f"hidden={h}, heads={a}, kv_heads={kv}: hidden must divide by heads and heads by kv_heads")
    kv_over_h = kv / a
    mlp = (6 if glu else 4) * f / h
    return {"replicated": 10.0, "split": 4 + 4 * kv_over_h + mlp, "scores_per_as_over_h": 5.0,
            "flash_per_a_over_h": 4.0}


def activation_bytes_per_layer(seq: int, micro_batch: int, hidden: int, heads: int, *, tensor: int = 1,
                               sequence_parallel: bool = False, recompute: str = "none", ffn: int | None = None,
                               kv_heads: int | None = None, glu: bool = False,
                               flash_attention: bool = False) -> float:
    """Activation bytes one transformer layer keeps for one micro-batch: korthikanti2022reducing, Table 2.

    With s = ``seq``, b = ``micro_batch``, h = ``hidden``, a = ``heads``, t = ``tensor`` (16-bit
    activations, GPT layer with a 4h MLP, the defaults):

    ====================================================  =========================
    no parallelism (t = 1)                                 s b h (34 + 5 a s / h)
    tensor parallel                                        s b h (10 + 24/t + 5 a s / (h t))
    tensor + sequence parallel                             s b h (34/t + 5 a s / (h t))
    tensor parallel + selective recomputation              s b h (10 + 24/t)
    tensor + sequence parallel + selective recomputation   s b h (34/t)
    full recomputation                                     2 s b h (the layer input)
    ====================================================  =========================

    The 10 s b h of the tensor-parallel rows are the LayerNorm inputs and dropout masks every tensor rank
    keeps whole; sequence parallelism splits them. With full recomputation and sequence parallelism the
    stored input is the sequence-split one, 2 s b h / t. ``ffn``, ``kv_heads`` and ``glu`` generalise the
    24 to other layers (:func:`layer_activation_terms`: a SwiGLU MLP keeps its gate and up outputs and their
    product, 6 ffn/h instead of 4 ffn/h; grouped-query attention keeps smaller K and V).
    ``flash_attention=True`` (a fused attention kernel) keeps no s x s tensor: the 5 a s/h term becomes the
    log-sum-exp rows, 4 a/h. Chapter: *HBM and the memory hierarchy*, "Activations"; *Megatron-LM*, "Memory
    per GPU".
    """
    s = check.positive_int("seq", seq, maximum=LIMITS["seq"])
    b = check.positive_int("micro_batch", micro_batch, maximum=MAX_MICRO_BATCH)
    h = check.positive_int("hidden", hidden, maximum=LIMITS["hidden"])
    a = check.positive_int("heads", heads, maximum=LIMITS["heads"])
    t = check.positive_int("tensor", tensor, maximum=MAX_TENSOR)
    sp = check.boolean("sequence_parallel", sequence_parallel)
    rc = check.one_of("recompute", recompute, RECOMPUTE)
    flash = check.boolean("flash_attention", flash_attention)
    terms = layer_activation_terms(h, a, ffn=ffn, kv_heads=kv_heads, glu=glu)
    sbh = s * b * h
    if rc == "full":
        return 2 * sbh / (t if sp else 1)
    linear = terms["replicated"] / (t if sp else 1) + terms["split"] / t
    if rc == "selective":
        scores = 0.0
    elif flash:
        scores = terms["flash_per_a_over_h"] * a / (h * t)
    else:
        scores = terms["scores_per_as_over_h"] * a * s / (h * t)
    return sbh * (linear + scores)


def logits_bytes(seq: int, micro_batch: int, vocab: int, tensor: int = 1) -> float:
    """The fp32 logits (softmax) the cross-entropy keeps for backward: 4 s b V / t bytes.

    Chapter: *HBM and the memory hierarchy*, "Training a model".
    """
    s = check.positive_int("seq", seq, maximum=LIMITS["seq"])
    b = check.positive_int("micro_batch", micro_batch, maximum=MAX_MICRO_BATCH)
    v = check.positive_int("vocab", vocab, maximum=LIMITS["vocab"])
    return 4 * s * b * v / check.positive_int("tensor", tensor, maximum=MAX_TENSOR)


def shape_activation_bytes_per_layer(shape: TransformerShape, micro_batch: int = 1, recompute: str = "none", *,
                                     tensor: int = 1, sequence_parallel: bool = False,
                                     flash_attention: bool = False, seq: int | None = None) -> float:
    """:func:`activation_bytes_per_layer` for the layer of ``shape`` (its ffn width, key/value heads and MLP
    kind); ``seq`` defaults to the shape's. Chapter: *Megatron-LM*, "Memory per GPU"."""
    m = _shape("shape", shape)
    s = m.seq if seq is None else check.positive_int("seq", seq, maximum=LIMITS["seq"])
    return activation_bytes_per_layer(s, micro_batch, m.hidden, m.heads, tensor=tensor,
                                      sequence_parallel=sequence_parallel, recompute=recompute, ffn=m.ffn,
                                      kv_heads=m.n_kv_heads, glu=m.glu, flash_attention=flash_attention)


def activation_bytes(model: TransformerShape | str, seq: int | None = None, micro_batch: int = 1,
                     recompute: str = "full", *, tensor: int = 1, sequence_parallel: bool = False,
                     layers: int | None = None) -> float:
    """Activation memory of one training micro-batch through ``layers`` layers (default: all of them).

    ``layers`` x :func:`activation_bytes_per_layer`; with full recomputation one layer's complete
    activations are also live while it is recomputed; plus the fp32 logits (:func:`logits_bytes`).
    ``seq`` defaults to the shape's ``seq``. Chapter: *HBM and the memory hierarchy*, "Activations".
    """
    m = shape_of(model)
    s = m.seq if seq is None else check.positive_int("seq", seq, maximum=LIMITS["seq"])
    n = m.layers if layers is None else check.positive_int("layers", layers, maximum=LIMITS["layers"])
    rc = check.one_of("recompute", recompute, RECOMPUTE)
    kw = dict(tensor=tensor, sequence_parallel=sequence_parallel)
    kept = activation_bytes_per_layer(s, micro_batch, m.hidden, m.heads, recompute=rc, **kw)
    total = n * kept
    if rc == "full":
        total += activation_bytes_per_layer(s, micro_batch, m.hidden, m.heads, recompute="none", **kw)
    return total + logits_bytes(s, micro_batch, m.vocab, tensor)
