"""PTD-P layouts: :class:`Layout` (n = t x p x d GPUs, m microbatches per pipeline, v chunks per GPU),
:func:`layout` (the rules a layout must satisfy, each failure named) and :func:`params_per_gpu` (the
parameters one GPU of the first, a middle and the last stage holds).

Chapter: *Megatron-LM: 3D parallelism predicted, validated, and run* (book/megatron.ipynb),
sections "Layouts" and "Memory per GPU". Pure: no torch, no matplotlib.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import check
from ..transformer import TransformerShape
from .sizing import MAX_BATCH, MAX_GPUS, _cfg, _linear_weights

# ===========================================================================================================
# Layouts
# ===========================================================================================================

#: Bounds of a layout's integers (a million GPUs, a hundred million sequences per batch, 64 model chunks).
MAX_INTERLEAVE = 64


@dataclass(frozen=True)
class Layout:
    """A PTD-P layout: n = t x p x d GPUs, m = B / (b d) microbatches per pipeline, v chunks per GPU."""

    gpus: int
    batch: int
    tensor: int  # t
    pipeline: int  # p
    data: int  # d
    microbatch: int  # b
    interleave: int  # v
    microbatches: int  # m

    def __post_init__(self) -> None:
        for name, top in (("gpus", MAX_GPUS), ("batch", MAX_BATCH), ("tensor", MAX_GPUS), ("pipeline", MAX_GPUS),
                          ("data", MAX_GPUS), ("microbatch", MAX_BATCH), ("interleave", MAX_INTERLEAVE),
                          ("microbatches", MAX_BATCH)):
            object.__setattr__(self, name, check.positive_int(name, getattr(self, name), maximum=top))
        if self.gpus != self.tensor * self.pipeline * self.data:
            raise ValueError(f"gpus={self.gpus} must equal tensor x pipeline x data = {self.tensor} x {self.pipeline} "
                             f"x {self.data}")
        if self.batch != self.microbatch * self.data * self.microbatches:
            raise ValueError(f"batch={self.batch} must equal microbatch x data x microbatches = {self.microbatch} x "
                             f"{self.data} x {self.microbatches}")

    def stage_layers(self, cfg: TransformerShape) -> int:
        """Layers of the most loaded stage: ceil(l / p) (stages of an uneven pipeline differ by one)."""
        return -(-_cfg(cfg).layers // self.pipeline)

    def chunk_layers(self, cfg: TransformerShape) -> int:
        """Layers of one model chunk of the interleaved schedule: l / (p v) (floor for uneven pipelines)."""
        return _cfg(cfg).layers // (self.pipeline * self.interleave)


def layout(cfg: TransformerShape, gpus: int, batch: int, tensor: int, pipeline: int, microbatch: int = 1,
           interleave: int = 1) -> Layout:
    """Check that a layout divides and return it; otherwise ``ValueError`` saying which rule fails.

    Chapter: "Layouts". Rules: heads divisible by t (each tensor rank owns whole heads); at least one
    layer per stage; with interleaving (v > 1) layers divisible by p x v (equal chunks). Without
    interleaving a pipeline may be uneven (BLOOM-176B: 70 layers on 12 stages, as Megatron-DeepSpeed
    partitions it): stages hold ceil(l/p) or floor(l/p) layers and the heaviest one paces the pipeline
    (:meth:`Layout.stage_layers`). GPUs divisible by t x p (data-parallel size d = n / (t p));
    batch divisible by b x d (m = B / (b d) microbatches per pipeline); with interleaving (v > 1) m must
    be a multiple of p (the paper's schedule) and p > 1.
    """
    cfg = _cfg(cfg)
    for name, v, top in (("gpus", gpus, MAX_GPUS), ("batch", batch, MAX_BATCH), ("tensor", tensor, MAX_GPUS),
                         ("pipeline", pipeline, MAX_GPUS), ("microbatch", microbatch, MAX_BATCH),
                         ("interleave", interleave, MAX_INTERLEAVE)):
        check.positive_int(name, v, maximum=top)
    if cfg.heads % tensor or cfg.n_kv_heads % tensor:
        raise ValueError(f"tensor={tensor} does not divide heads={cfg.heads} and kv_heads={cfg.n_kv_heads}: "
                         f"each tensor-parallel rank must own whole attention heads (allowed: common divisors)")
    if cfg.vocab % tensor:
        raise ValueError(f"tensor={tensor} does not divide vocab={cfg.vocab} (the output layer is split by vocabulary)")
    if pipeline > cfg.layers:
        raise ValueError(f"pipeline={pipeline} exceeds layers={cfg.layers}: every stage needs at least one layer")
    if interleave > 1 and cfg.layers % (pipeline * interleave):
        raise ValueError(f"layers={cfg.layers} is not divisible by pipeline x interleave = {pipeline} x {interleave} "
                         f"= {pipeline * interleave}: with interleaving every model chunk needs the same number of "
                         f"layers (without it, uneven stages are allowed)")
    if gpus % (tensor * pipeline):
        raise ValueError(f"gpus={gpus} is not divisible by tensor x pipeline = {tensor} x {pipeline} = "
                         f"{tensor * pipeline}: the data-parallel size d = gpus / (t p) must be an integer")
    d = gpus // (tensor * pipeline)
    if batch % (microbatch * d):
        raise ValueError(f"batch={batch} is not divisible by microbatch x data = {microbatch} x {d} = "
                         f"{microbatch * d}: each pipeline needs a whole number of microbatches")
    m = batch // (microbatch * d)
    if interleave > 1:
        if pipeline == 1:
            raise ValueError(f"interleave={interleave} needs pipeline > 1 (model chunks are interleaved across stages)")
        if m % pipeline:
            raise ValueError(f"interleave={interleave}: the interleaved schedule needs the number of microbatches "
                             f"m = {m} to be a multiple of pipeline = {pipeline}")
    return Layout(gpus, batch, tensor, pipeline, d, microbatch, interleave, m)


def params_per_gpu(cfg: TransformerShape, tensor: int, pipeline: int) -> dict[str, float]:
    """Parameters held by one GPU of the first, a middle and the last pipeline stage. Chapter: "Memory".

    Per layer and tensor rank (GPT layer): 12h^2/t + 7h/t (split matrices and the biases of the
    column-split ones) + 6h (the two LayerNorms and the two output biases are replicated); other shapes
    count their own linear layers and norms the same way. The first stage adds its slice of the word
    embedding (V h / t) and the learned positions (s h); the last stage the final norm and, when p > 1 or
    the output layer is untied, its own V h / t for the output layer (Megatron keeps tied weights on both
    ends).
    """
    cfg = _cfg(cfg)
    h, V, s = cfg.hidden, cfg.vocab, cfg.seq
    t = check.positive_int("tensor", tensor, maximum=MAX_GPUS)
    p = check.positive_int("pipeline", pipeline, maximum=MAX_GPUS)
    shapes = cfg.linear_shapes()
    row_split = {"o", "down"}  # their outputs are all-reduced: the bias is added once, replicated
    per_layer = _linear_weights(cfg) / t + 2 * cfg.norm_params
    if cfg.biases:
        per_layer += sum(o for n, _, o in shapes if n not in row_split) / t
        per_layer += sum(o for n, _, o in shapes if n in row_split)
    body = per_layer * -(-cfg.layers // p)  # the most loaded stage: ceil(l / p) layers
    embed = V * h / t + (s * h if cfg.positions == "learned" else 0)
    output = V * h / t
    if p == 1:
        only = body + embed + cfg.norm_params + (0 if cfg.tied_embeddings else output)
        return {"first": only, "middle": only, "last": only, "max": only}
    first = body + embed
    last = body + cfg.norm_params + output
    return {"first": first, "middle": body, "last": last, "max": max(first, last)}
