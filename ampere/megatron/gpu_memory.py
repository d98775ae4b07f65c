"""Memory per GPU of a layout: weights, gradients, optimizer state (ZeRO stages) and the activations of
the microbatches in flight, on the most loaded pipeline stage (:func:`memory_per_gpu`,
:func:`activation_bytes_per_layer`).

Chapter: *Megatron-LM: 3D parallelism predicted, validated, and run* (book/megatron.ipynb),
section "Memory per GPU". Pure: the byte counts come from :mod:`ampere.memory` (Korthikanti et al. for
the activations, ZeRO for the sharded state), GPU capacities from :mod:`ampere.specs`.
"""

from __future__ import annotations

from typing import Any

from .. import check, memory, specs
from ..transformer import TransformerShape
from .layouts import layout, params_per_gpu
from .sizing import _cfg, _recompute

# ===========================================================================================================
# Memory per GPU
# ===========================================================================================================


def _zero_stage(zero_stage: Any, distributed_optimizer: bool) -> int:
    """ZeRO stage from ``zero_stage`` (0-3, None) and ``distributed_optimizer`` (stage 1)."""
    if zero_stage is None:
        return 1 if distributed_optimizer else 0
    stage = check.integer("zero_stage", zero_stage, minimum=0, maximum=3)
    if distributed_optimizer and stage == 0:
        raise ValueError("distributed_optimizer=True is ZeRO stage 1; zero_stage=0 contradicts it")
    return stage


def activation_bytes_per_layer(cfg: TransformerShape, tensor: int = 1, microbatch: int = 1, recompute: Any = "none",
                               sequence_parallel: bool = False) -> float:
    """Activation bytes one transformer layer keeps for one microbatch (16-bit activations).

    Chapter: "Memory per GPU". Korthikanti et al. [korthikanti2022reducing], Table 2, implemented once in
    :func:`ampere.memory.activation_bytes_per_layer`: ``s b h (10 + 24/t + 5 a s/(h t))`` with tensor
    parallelism (2021 Megatron), ``s b h (34/t + 5 a s/(h t))`` with sequence parallelism, the ``5 a s/h``
    term gone with selective recomputation, and ``2 s b h`` (``/t`` with sequence parallelism) with full.
    """
    cfg = _cfg(cfg)
    return memory.activation_bytes_per_layer(cfg.seq, microbatch, cfg.hidden, cfg.heads, tensor=tensor,
                                             sequence_parallel=sequence_parallel, recompute=_recompute(recompute))


def memory_per_gpu(cfg: TransformerShape, gpus: int, batch: int, tensor: int, pipeline: int, microbatch: int = 1,
                   interleave: int = 1, recompute: Any = "full", sequence_parallel: bool = False,
                   distributed_optimizer: bool = False, schedule: str = "1f1b", grad_bytes_per_param: int = 2,
                   gpu: str | specs.GPUSpec = "A100-SXM4-80GB", zero_stage: int | None = None) -> dict[str, Any]:
    """Bytes per GPU on the most loaded pipeline stage, by kind, and whether it fits in ``gpu``'s memory.

    Chapter: "Memory per GPU". ``zero_stage`` 0-3 (:func:`ampere.memory.zero_bytes_per_param`: 1 shards the
    fp32 state, 2 also the gradients, 3 also the 16-bit weights over the d data-parallel ranks; FSDP's
    full sharding is stage 3); ``distributed_optimizer=True`` is stage 1. Mixed precision with Adam, from
    :data:`ampere.memory.MIXED_ADAM`: 16-bit
    weights, ``grad_bytes_per_param`` of gradients (2 for the paper's fp16 runs, 4 when gradients are
    accumulated in fp32, as with bf16) and the fp32 master weights and Adam moments (the ZeRO paper's
    K = 12), divided by d with a distributed optimizer (ZeRO stage 1). Activations: 1F1B keeps at most p
    microbatches in flight on the first stage (GPipe: all m); interleaving multiplies that by
    1 + (p-1)/(p v) [korthikanti2022reducing]. With full recomputation one layer's full activations are
    also live during its backward pass. The last stage holds the fp32 softmax of the logits
    (:func:`ampere.memory.logits_bytes`). Not modelled: allocator fragmentation, communication buffers
    and the CUDA context (a few GB on a real GPU).
    """
    lay = layout(cfg, gpus, batch, tensor, pipeline, microbatch, interleave)
    rc = _recompute(recompute)
    check.one_of("schedule", schedule, ("1f1b", "gpipe"))
    check.choice("grad_bytes_per_param", grad_bytes_per_param, (2, 4))
    sequence_parallel = check.boolean("sequence_parallel", sequence_parallel)
    distributed_optimizer = check.boolean("distributed_optimizer", distributed_optimizer)
    zstage = _zero_stage(zero_stage, distributed_optimizer)
    spec = specs.get(gpu)
    t, p, d, m, v = tensor, pipeline, lay.data, lay.microbatches, interleave
    recipe = memory.MIXED_ADAM
    state = memory.zero_bytes_per_param(zstage, d, recipe)
    per = params_per_gpu(cfg, t, p)
    layers_stage = lay.stage_layers(cfg)
    full = activation_bytes_per_layer(cfg, t, microbatch, "none", sequence_parallel)
    kept = activation_bytes_per_layer(cfg, t, microbatch, rc, sequence_parallel)
    if schedule == "gpipe":
        in_flight = m
    else:
        in_flight = min(p, m) * ((1 + (p - 1) / (p * v)) if v > 1 else 1.0)
    stages = {}
    for stage in ("first", "last"):
        n_par = per[stage]
        weights = state.weights * n_par
        grads = grad_bytes_per_param * n_par / (d if zstage >= 2 else 1)
        optimizer = (state.master_weights + state.optimizer_state) * n_par
        flight = in_flight if stage == "first" else 1.0
        act = layers_stage * kept * flight + (full if rc == "full" else 0.0)
        if stage == "last":
            act += memory.logits_bytes(cfg.seq, microbatch, cfg.vocab, t)  # fp32 softmax, kept for backward
        stages[stage] = {"weights": weights, "gradients": grads, "optimizer": optimizer, "activations": act}
    worst = max(stages, key=lambda k: sum(stages[k].values()))
    out: dict[str, Any] = dict(stages[worst])
    out["total"] = sum(stages[worst].values())
    out["stage"] = worst
    out["capacity"] = spec.memory_bytes
    out["fits"] = out["total"] <= spec.memory_bytes
    out["bytes_per_param"] = (state.weights + grad_bytes_per_param / (d if zstage >= 2 else 1) + state.master_weights
                              + state.optimizer_state)
    out["zero_stage"] = zstage
    return out
