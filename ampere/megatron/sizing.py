"""Sizing a GPT: the model shape, its parameters, its FLOPs per iteration and the training time.

Chapter: *Megatron-LM: 3D parallelism predicted, validated, and run* (book/megatron.ipynb),
section "Sizing a GPT": :func:`GPTConfig`, :func:`params` (the paper's eq. 2), :func:`flops_per_iteration`
(eq. 3) and :func:`training_days` (eq. 4) [narayanan2021megatron]. Also the small argument checks every
other file of the package uses (``_cfg``, ``_recompute``, ``_rows``).

Pure: no torch, no matplotlib. The shape is :class:`ampere.transformer.TransformerShape`.
"""

from __future__ import annotations

from typing import Any, Mapping

from .. import check, memory
from ..transformer import TransformerShape

# ===========================================================================================================
# Sizing a GPT (paper section 5.1 and appendix)
# ===========================================================================================================

#: Activation recomputation: "full" (the paper's runs: only each layer's input kept), "selective" (the
#: attention core recomputed, korthikanti2022reducing) or "none". True / False are aliases of full / none.
RECOMPUTE: tuple[str, ...] = memory.RECOMPUTE
#: Bounds of the package's counts: a million GPUs, a hundred million sequences in one batch.
MAX_GPUS, MAX_BATCH = 1_000_000, 100_000_000


def GPTConfig(layers: int, hidden: int, heads: int, vocab: int = 51200, seq: int = 2048, **fields: Any
              ) -> TransformerShape:
    """A GPT model as the paper describes it (Table 1 columns): the shared :class:`ampere.transformer.
    TransformerShape` with GPT defaults (vocabulary 51,200 = GPT-2's 50,257 padded to 50 x 1024, 2,048
    tokens, 4h MLP, tied embeddings, biases, LayerNorm, learned positions). Keyword ``fields`` (kv_heads,
    ffn_hidden, glu, tied_embeddings, ...) build Llama-class shapes. Chapter: "Sizing a GPT".
    """
    allowed = {"kv_heads", "ffn_hidden", "glu", "tied_embeddings", "biases", "norm", "positions", "name", "source"}
    unknown = sorted(set(fields) - allowed)
    if unknown:
        raise TypeError(f"GPTConfig got unknown fields {unknown}; allowed: {', '.join(sorted(allowed))}")
    return TransformerShape(layers, hidden, heads, vocab, seq, **fields)


def _cfg(cfg: Any) -> TransformerShape:
    if not isinstance(cfg, TransformerShape):
        raise TypeError(f"cfg must be a GPTConfig (ampere.transformer.TransformerShape), got {cfg!r} "
                        f"({type(cfg).__name__})")
    return cfg


def _recompute(value: Any) -> str:
    """``recompute`` resolved to one of :data:`RECOMPUTE` (True -> "full", False -> "none")."""
    if value is True:
        return "full"
    if value is False:
        return "none"
    if not isinstance(value, str):
        raise TypeError(f"recompute must be one of {', '.join(map(repr, RECOMPUTE))} (or True/False), "
                        f"got {value!r} ({type(value).__name__})")
    return check.one_of("recompute", value, RECOMPUTE)


def _gpt_defaults(cfg: TransformerShape) -> bool:
    """True when ``cfg`` is the paper's GPT layer (the closed-form eqs. 2 and 3 apply exactly)."""
    return (cfg.kv_heads in (None, cfg.heads) and cfg.ffn == 4 * cfg.hidden and not cfg.glu
            and cfg.tied_embeddings and cfg.biases and cfg.norm == "layernorm" and cfg.positions == "learned")


def params(cfg: TransformerShape) -> float:
    """Parameters P = 12 l h^2 (1 + 13/(12h) + (V+s)/(12 l h)), the paper's eq. (2), for a GPT layer.

    Chapter: "Sizing a GPT". Per layer 12h^2 + 13h (QKV, projection, two MLP matrices, their biases and
    two LayerNorms); (V + s) h for the word and position embeddings (the output layer shares the word
    embedding). The final LayerNorm's 2h is left out, as in the paper. For any other shape (grouped-query
    attention, SwiGLU, untied output layer, no biases, RMSNorm, rotary positions) it is the exact count
    :attr:`TransformerShape.params` (Llama-2-7B: 6,738,415,616).
    """
    cfg = _cfg(cfg)
    if not _gpt_defaults(cfg):
        return float(cfg.params)
    l, h, V, s = cfg.layers, cfg.hidden, cfg.vocab, cfg.seq
    return 12 * l * h**2 * (1 + 13 / (12 * h) + (V + s) / (12 * l * h))


def _linear_weights(cfg: TransformerShape) -> int:
    """Weights of one layer's linear layers (12 h^2 for a GPT layer)."""
    return sum(i * o for _, i, o in cfg.linear_shapes())


#: The FLOP counts a throughput or MFU can be quoted in (:func:`flops_per_iteration`), with their sources:
#: "hardware" counts the passes the GPUs really run, recomputation included (Narayanan et al. 2021, eq. 3,
#: with full recomputation); "model" counts forward + backward only, attention scores over the full s x s
#: (Korthikanti et al. 2022's MFU; Megatron-LM's ``num_floating_point_operations`` until 2025-03-03);
#: "model-causal" halves the attention-score products for a causal mask (Megatron-LM since 2025-03-06).
FLOP_CONVENTIONS: dict[str, dict[str, str]] = {
    "hardware": {"label": "hardware FLOPs (recomputation counted; Narayanan et al. 2021, eq. 3)",
                 "source": "narayanan2021megatron", "where": "Section 5.1, eq. (3) (full recomputation)"},
    "model": {"label": "model FLOPs (3 passes, full s x s attention; Megatron-LM before 2025-03-06)",
              "source": "korthikanti2022reducing",
              "where": "MFU definition; Megatron-LM training.py num_floating_point_operations at fdfcef87 "
                       "(2025-03-03), lines 123-180"},
    "model-causal": {"label": "model FLOPs, causal attention halved (Megatron-LM since 2025-03-06)",
                     "source": "megatronlm2026code",
                     "where": "training.py num_floating_point_operations at d98e8a64, lines 1164-1170 (the "
                              "'/ 2 # causal mask' of commit 8873b55d)"},
}


def flops_per_iteration(cfg: TransformerShape, batch: int, recompute: Any = "full", *,
                        convention: str = "hardware") -> float:
    """FLOPs of one training iteration of ``batch`` sequences, the paper's eq. (3) generalised.

    Chapter: "Sizing a GPT". With full recomputation F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)): per layer
    the forward pass costs 24 B s h^2 + 4 B s^2 h, the backward twice that, and recomputation one more
    forward (factor 4); the logits layer adds 6 B s h V. Without recomputation the layer factor is 3;
    selective recomputation adds one more forward of the attention core only (4 B s^2 h per layer). For
    other shapes 24 B s h^2 becomes 2 B s x (the layer's linear weights): grouped-query attention and
    SwiGLU change it, the attention products do not. Only matrix multiplications are counted.

    ``convention`` names the count (:data:`FLOP_CONVENTIONS`): "hardware" (the default) counts what
    ``recompute`` makes the GPUs run; "model" ignores recomputation (3 passes: the count behind MFU);
    "model-causal" also halves the attention-score products (4 B s^2 h per layer becomes 2 B s^2 h), as
    Megatron-LM has counted since March 2025. Llama-2 shapes differ by 4-8 % between the two model counts.
    """
    cfg = _cfg(cfg)
    B = check.positive_int("batch", batch, maximum=MAX_BATCH)
    rc = _recompute(recompute)
    conv = check.one_of("convention", convention, tuple(FLOP_CONVENTIONS))
    l, h, V, s = cfg.layers, cfg.hidden, cfg.vocab, cfg.seq
    linear, core = 2 * B * s * _linear_weights(cfg), 4 * B * s**2 * h
    if conv == "model-causal":
        return float(l * 3 * (linear + core / 2) + 6 * B * s * h * V)
    if conv == "model" or rc == "none":
        layer = 3 * (linear + core)
    elif rc == "full":
        layer = 4 * (linear + core)
    else:
        layer = 3 * (linear + core) + core
    return float(l * layer + 6 * B * s * h * V)


def training_days(n_params: float, tokens: float, gpus: int, tflops_per_gpu: float) -> float:
    """End-to-end training time 8 T P / (n X) in days, the paper's eq. (4). Chapter: "Sizing a GPT".

    8 = 2 (forward) + 4 (backward) + 2 (recomputation) FLOPs per parameter and token.
    """
    n_params = check.positive("n_params", n_params, maximum=1e16)
    tokens = check.positive("tokens", tokens, maximum=1e18)
    tflops_per_gpu = check.positive("tflops_per_gpu", tflops_per_gpu, maximum=1e6)
    gpus = check.positive_int("gpus", gpus, maximum=MAX_GPUS)
    return 8 * tokens * n_params / (gpus * tflops_per_gpu * 1e12) / 86400


def _rows(name: str, rows: Any, keys: tuple[str, ...]) -> list[Mapping[str, Any]]:
    """``rows`` as a list of mappings that have ``keys`` (the rows a table function returned)."""
    out = check.sequence(name, rows, lambda n, v: check.mapping(n, v), max_len=100_000)
    for i, r in enumerate(out):
        missing = [k for k in keys if k not in r]
        if missing:
            raise ValueError(f"{name}[{i}] lacks {', '.join(missing)}; allowed: rows as the table function returns "
                             f"them (keys {', '.join(keys)})")
    return out
