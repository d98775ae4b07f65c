"""Training speed of a plan: the Megatron chapter's throughput model (``ampere.megatron.estimate``, the
fastest tensor x pipeline x data layout that fits), or a stated fixed utilisation of the dense peak.

Chapter: *The A100 today* (book/a100-today.ipynb), "A workload calculator" and "Training time against
published Llama runs". Pure Python: no torch, no matplotlib (``ampere.megatron`` is imported inside the
function that needs it; an aggregator may read a chapter).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from .. import specs
from ..transformer import TransformerShape
from .catalogue import shape_of
from .network import Network
from .workload import _FLOPS_PER_PARAM_TOKEN, Workload, _is_count


@dataclass(frozen=True)
class _Speed:
    tokens_per_s: float  # trained tokens per second, all cards together
    step_time_s: float  # one optimizer step of the global batch
    bound: str
    mfu: float  # model FLOPs (6N or 4N per token) over the dense peak of the precision
    notes: tuple[str, ...] = ()


def _fixed_mfu_tokens_per_s(model: Any, task: str, mfu: float, spec: specs.GPUSpec,
                            precision: str = "bf16") -> float:
    """Tokens/s per card at a fixed fraction ``mfu`` of the dense peak: peak x mfu / (model FLOPs per token)."""
    n = shape_of(model).params if not _is_count(model) else float(model)
    return mfu * spec.peak_flops(precision) / (_FLOPS_PER_PARAM_TOKEN[task] * n)


def _layout_estimate(shape: TransformerShape, seq: int, cards: int, batch: int, spec: specs.GPUSpec,
                     micro_batch: int, recompute: str, net: Network) -> tuple[Any, int, bool]:
    """The Megatron model's fastest layout of ``shape`` on ``cards`` GPUs that fits in memory, and whether one
    fits; when none fits (LoRA plans, whose memory ampere.memory sizes), the fastest layout all the same.

    Layouts: tensor x pipeline x data parallelism, each with ZeRO stage 1 (the distributed optimizer) or
    stage 3 (FSDP), sequence parallelism with tensor parallelism, FlashAttention-style fused attention
    (what current training software runs), on the plan's node network (``ampere.fabrics``)."""
    from .. import megatron

    cfg = dataclasses.replace(shape, seq=seq)
    node = net.node if net.node is not None and net.node.hcas_per_node else None
    fitting, others = [], []
    for t in (1, 2, 4, 8):
        if t > cards or cards % t or shape.heads % t or shape.n_kv_heads % t or cfg.vocab % t:
            continue
        for p in range(1, min(shape.layers, 16) + 1):
            if shape.layers % p or cards % (t * p) or batch % (cards // (t * p) * micro_batch):
                continue
            for zero in (1, 3):
                est = megatron.estimate(cfg, cards, batch, t, p, micro_batch, 1, recompute, spec,
                                        sequence_parallel=t > 1, zero_stage=zero, flash_attention=True,
                                        **({"network": node} if node is not None else {}))
                (fitting if est.fits_in_memory else others).append((est, zero))
    pool = fitting or others
    if not pool:
        raise ValueError(f"no tensor x pipeline x data layout of {shape.label} divides {cards} GPUs and a batch of "
                         f"{batch} sequences of micro-batch {micro_batch}")
    best, zero = min(pool, key=lambda ez: ez[0].time_per_iteration_s)
    return best, zero, bool(fitting)


def _training_speed(w: Workload, spec: specs.GPUSpec, cards: int, net: Network) -> _Speed:
    """Trained tokens/s of ``w`` on ``cards`` GPUs: the Megatron model, or ``w.mfu`` of the dense peak."""
    n = w.params
    batch = w.global_batch or cards * w.micro_batch
    if w.mfu is not None:
        tps = cards * _fixed_mfu_tokens_per_s(w.model, w.task, w.mfu, spec, w.precision)
        return _Speed(tps, batch * w.seq_len / tps, "compute", w.mfu,
                      (f"fixed utilisation: {w.mfu:.0%} of the dense {w.precision} peak",))
    shape = w.shape()
    if shape is None:
        raise ValueError(f"model={w.model!r} is a parameter count: the training-time model needs a shape (a size "
                         "class or a model name), or give mfu= for a fixed utilisation")
    est, zero, fits = _layout_estimate(shape, w.seq_len, cards, batch, spec, w.micro_batch, w.recompute, net)
    lay = est.layout
    tps = batch * w.seq_len / est.time_per_iteration_s
    notes = [f"layout: tensor {lay.tensor}, pipeline {lay.pipeline}, data {lay.data}, ZeRO-{zero} "
             "(Megatron model)"]
    if not fits:
        notes.append("speed of the data-parallel layout; memory from ampere.memory")
    if w.task in ("lora", "qlora"):
        tps *= _FLOPS_PER_PARAM_TOKEN["pretrain"] / _FLOPS_PER_PARAM_TOKEN[w.task]
        notes.append("LoRA: the full step's achieved FLOP rate over 4N FLOPs per token")
    if w.precision == "fp8":
        tps *= spec.peak_flops("fp8") / spec.peak_flops("bf16")
        notes.append("FP8: the BF16 run's utilisation of the FP8 peak (an upper bound)")
    mfu = _FLOPS_PER_PARAM_TOKEN[w.task] * n * tps / (cards * spec.peak_flops(w.precision))
    shares = est.shares()
    comm = sum(v for k, v in shares.items() if "all-reduce" in k or "sends" in k or "bubble" in k)
    return _Speed(tps, batch * w.seq_len / tps, "communication" if comm > 0.5 else "compute", mfu, tuple(notes))
