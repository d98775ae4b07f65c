"""Memory per GPU of a layout: weights, gradients, optimizer state (ZeRO stages, as a named convention
counts them), working buffers and the activations of the microbatches in flight, for the first and the last
pipeline stage (:func:`memory_per_gpu`, :func:`activation_bytes_per_layer`).

Chapter: *Megatron-LM: 3D parallelism predicted, validated, and run* (book/megatron.ipynb),
sections "Memory per GPU" and "Checked against Megatron-LM and DeepSpeed". Pure: the byte counts come from
:mod:`ampere.memory` (Korthikanti et al. for the activations, generalised to SwiGLU, grouped-query and fused
attention; the conventions "paper", "megatron" and "deepspeed" for the training state), and whether a
layout fits from the package's one capacity rule, :func:`ampere.memory.usable_bytes`.
"""

from __future__ import annotations

from typing import Any

from .. import check, memory, specs
from ..transformer import TransformerShape
from .layouts import layout, params_per_gpu
from .sizing import MAX_BATCH, _cfg, _recompute

# ===========================================================================================================
# Memory per GPU
# ===========================================================================================================

#: The memory convention :func:`memory_per_gpu` and :func:`estimate` use unless told otherwise: Megatron-LM's
#: own estimator (bf16 weights, fp32 main gradients and state: 18 bytes per parameter).
DEFAULT_CONVENTION = "megatron"


def _zero_stage(zero_stage: Any, distributed_optimizer: bool) -> int:
    """ZeRO stage from ``zero_stage`` (0-3, None) and ``distributed_optimizer`` (stage 1)."""
    if zero_stage is None:
        return 1 if distributed_optimizer else 0
    stage = check.integer("zero_stage", zero_stage, minimum=0, maximum=3)
    if distributed_optimizer and stage == 0:
        raise ValueError("distributed_optimizer=True is ZeRO stage 1; zero_stage=0 contradicts it")
    return stage


def activation_bytes_per_layer(cfg: TransformerShape, tensor: int = 1, microbatch: int = 1, recompute: Any = "none",
                               sequence_parallel: bool = False, flash_attention: bool = False) -> float:
    """Activation bytes one transformer layer of ``cfg`` keeps for one microbatch (16-bit activations).

    Chapter: "Memory per GPU". Korthikanti et al. [korthikanti2022reducing], Table 2, implemented once in
    :func:`ampere.memory.activation_bytes_per_layer`: ``s b h (10 + 24/t + 5 a s/(h t))`` with tensor
    parallelism (2021 Megatron), ``s b h (34/t + 5 a s/(h t))`` with sequence parallelism, the ``5 a s/h``
    term gone with selective recomputation, and ``2 s b h`` (``/t`` with sequence parallelism) with full.
    The 24 follows the layer: a SwiGLU MLP keeps its gate and up outputs and their product, grouped-query
    attention smaller keys and values. ``flash_attention=True`` keeps no s x s tensor (only each query
    row's fp32 log-sum-exp), the same option the time model reads.
    """
    cfg = _cfg(cfg)
    check.positive_int("microbatch", microbatch, maximum=MAX_BATCH)
    return memory.shape_activation_bytes_per_layer(cfg, microbatch, _recompute(recompute), tensor=tensor,
                                                   sequence_parallel=sequence_parallel,
                                                   flash_attention=flash_attention)


def memory_per_gpu(cfg: TransformerShape, gpus: int, batch: int, tensor: int, pipeline: int, microbatch: int = 1,
                   interleave: int = 1, recompute: Any = "full", sequence_parallel: bool = False,
                   distributed_optimizer: bool = False, schedule: str = "1f1b",
                   gpu: str | specs.GPUSpec = "A100-SXM4-80GB", zero_stage: int | None = None, *,
                   flash_attention: bool = False, convention: str = DEFAULT_CONVENTION, offload: str = "none",
                   reserve_bytes: float | None = None) -> dict[str, Any]:
    """Bytes per GPU on the first and the last pipeline stage, by kind, and whether the worse one fits.

    Chapter: "Memory per GPU". Training state: ``convention`` ("megatron" by default: Megatron-LM's
    estimator, 18 bytes per parameter with bf16 weights and fp32 main gradients; "paper": the ZeRO paper's
    16; "deepspeed": DeepSpeed's estimators, with ``offload`` and ZeRO-3's gathered largest module; see
    :data:`ampere.memory.CONVENTIONS`), partitioned over the d data-parallel ranks by ``zero_stage`` 0-3
    (``distributed_optimizer=True`` is stage 1; FSDP's full sharding is stage 3). Activations
    (:func:`activation_bytes_per_layer`, the options the time model reads: ``recompute``,
    ``sequence_parallel``, ``flash_attention``): 1F1B keeps at most p microbatches in flight on the first
    stage (GPipe: all m); interleaving multiplies that by 1 + (p-1)/(p v) [korthikanti2022reducing]. With
    full recomputation one layer's full activations are also live during its backward pass. The first
    stage adds the token ids and the embedding's dropout mask of its microbatches in flight; the last
    holds the final norm's input and output and the fp32 softmax of the logits
    (:func:`ampere.memory.logits_bytes`). ``fits`` compares the worse stage with
    :func:`ampere.memory.usable_bytes` (what CUDA exposes minus the runtime reserve, or minus
    ``reserve_bytes``), the rule every chapter uses; ``capacity`` is that usable figure. Not modelled:
    communication buckets and allocator fragmentation beyond the reserve.
    """
    lay = layout(cfg, gpus, batch, tensor, pipeline, microbatch, interleave)
    rc = _recompute(recompute)
    check.one_of("schedule", schedule, ("1f1b", "gpipe"))
    sequence_parallel = check.boolean("sequence_parallel", sequence_parallel)
    distributed_optimizer = check.boolean("distributed_optimizer", distributed_optimizer)
    flash_attention = check.boolean("flash_attention", flash_attention)
    conv = memory.memory_convention(check.one_of("convention", convention, tuple(memory.CONVENTIONS))
                                    if not isinstance(convention, memory.MemoryConvention) else convention)
    zstage = _zero_stage(zero_stage, distributed_optimizer)
    spec = specs.get(gpu)
    usable = memory.usable_bytes(spec, reserve_bytes)
    t, p, d, m, v, b = tensor, pipeline, lay.data, lay.microbatches, interleave, microbatch
    state = memory.state_bytes_per_param(zstage, d, conv, offload)
    per = params_per_gpu(cfg, t, p)
    buffers = memory.gathered_layer_bytes(zstage, memory.largest_module_params(cfg) / t, conv, offload)
    layers_stage = lay.stage_layers(cfg)
    opts = dict(sequence_parallel=sequence_parallel, flash_attention=flash_attention)
    full = activation_bytes_per_layer(cfg, t, b, "none", **opts)
    kept = activation_bytes_per_layer(cfg, t, b, rc, **opts)
    if schedule == "gpipe":
        in_flight = float(m)
    else:
        in_flight = min(p, m) * ((1 + (p - 1) / (p * v)) if v > 1 else 1.0)
    s, h = cfg.seq, cfg.hidden
    split = t if sequence_parallel else 1
    stages = {}
    for stage in ("first", "last"):
        n_par = per[stage]
        flight = in_flight if stage == "first" else 1.0
        act = layers_stage * kept * flight + (full if rc == "full" else 0.0)
        if stage == "first" or p == 1:  # token ids (int64) and the embedding's dropout mask, per microbatch
            act += flight * (8 * s * b + s * b * h / split)
        if stage == "last":  # final norm input and output, fp32 softmax of the logits
            act += 4 * s * b * h / split + memory.logits_bytes(s, b, cfg.vocab, t)
        part = {"weights": state.weights * n_par, "gradients": state.gradients * n_par,
                "optimizer": (state.master_weights + state.optimizer_state) * n_par, "buffers": buffers,
                "activations": act}
        part["total"] = sum(part.values())
        part["params"] = n_par
        stages[stage] = part
    worst = max(stages, key=lambda k: stages[k]["total"])
    out: dict[str, Any] = {k: val for k, val in stages[worst].items() if k != "params"}
    out.update(stage=worst, capacity=usable, physical_capacity=spec.memory_bytes, fits=out["total"] <= usable,
               bytes_per_param=state.total, zero_stage=zstage, convention=conv.name, offload=offload,
               stated_by_source=conv.stated(zstage, offload), flash_attention=flash_attention,
               in_flight=in_flight, stages=stages)
    return out
