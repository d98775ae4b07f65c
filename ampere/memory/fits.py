"""What one GPU holds and what fits: :class:`MemoryEstimate` (bytes by component), :func:`model_memory` (serving
or training a model), :func:`finetune_memory` (the fine-tuning recipe both chapters quote), :func:`max_batch`,
:func:`max_trainable_params` and :func:`min_gpus_zero`, all against :func:`ampere.memory.usable_bytes`.

Chapter: *HBM and the memory hierarchy* ("What fits", "Training a model", "Fine-tuning"); *Megatron-LM*
("Checked against Megatron-LM and DeepSpeed"). Pure Python.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping

from .. import check, specs
from ..transformer import LIMITS, TransformerShape
from .activations import MAX_MICRO_BATCH, RECOMPUTE, _shape, activation_bytes, shape_of
from .capacity import _usable, gpus_to_hold
from .training import (MAX_DATA_PARALLEL, MIXED_ADAM, OFFLOAD, MemoryConvention, TrainingRecipe, _convention, _recipe, _stage,
                       gathered_layer_bytes, largest_module_params, state_bytes_per_param, zero_bytes_per_param)
from .weights import (FORMAT_BITS, MAX_BATCH, MAX_BITS, MAX_CONTEXT, MAX_PARAMS, NF4_DOUBLE_QUANT_OVERHEAD_BITS,
                      _format_bits, kv_cache_bytes)

#: Bytes in a gigabyte (GB = 1e9 bytes; GiB = 2**30 is spelled out where used).
GB = 1e9


@dataclass(frozen=True)
class MemoryEstimate:
    """Bytes one GPU holds, by component, and the assumptions behind them. See :func:`model_memory`."""

    mode: str  # "inference" or "training"
    params: float
    breakdown: Mapping[str, float]  # component -> bytes per GPU, in a stable order
    data_parallel: int = 1
    zero_stage: int = 0
    assumptions: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        check.one_of("mode", self.mode, _MODES)
        object.__setattr__(self, "params", check.positive("params", self.params, maximum=MAX_PARAMS))
        parts = check.mapping("breakdown", self.breakdown)
        for k, v in parts.items():
            check.string("breakdown key", k)
            parts[k] = check.nonneg(f"breakdown[{k!r}]", v)
        object.__setattr__(self, "breakdown", MappingProxyType(parts))
        object.__setattr__(self, "data_parallel", check.positive_int("data_parallel", self.data_parallel,
                                                                     maximum=MAX_DATA_PARALLEL))
        object.__setattr__(self, "zero_stage", _stage("zero_stage", self.zero_stage))
        if isinstance(self.assumptions, str):
            raise TypeError(f"assumptions must be a tuple of strings, got the string {self.assumptions!r:.60}")
        object.__setattr__(self, "assumptions", tuple(check.sequence(
            "assumptions", self.assumptions, lambda n, v: check.string(n, v, max_len=2000), min_len=0)))

    @property
    def total_bytes(self) -> float:
        return float(sum(self.breakdown.values()))

    def headroom_bytes(self, gpu: str | specs.GPUSpec, reserve_bytes: float | None = None) -> float:
        """Bytes left on ``gpu`` after these: :func:`usable_bytes` minus the total; negative: no fit.

        ``reserve_bytes`` defaults to the runtime reserve (:func:`runtime_reserve`); pass 0 to budget against
        everything CUDA exposes. Chapter: *HBM and the memory hierarchy*, "What fits".
        """
        return _usable(gpu, reserve_bytes) - self.total_bytes

    def fits(self, gpu: str | specs.GPUSpec, reserve_bytes: float | None = None) -> bool:
        """True when the per-GPU total fits in :func:`usable_bytes` of ``gpu`` (same reserve rule)."""
        return self.headroom_bytes(gpu, reserve_bytes) >= 0

    def gpus_needed(self, gpu: str | specs.GPUSpec, reserve_bytes: float | None = None) -> int:
        """GPUs needed to hold these bytes split evenly across them (ideal model parallelism, no copies),
        each holding :func:`usable_bytes`."""
        return gpus_to_hold(self.total_bytes, gpu, reserve_bytes)

    def table(self, unit: float = GB) -> list[tuple[str, float]]:
        """(component, amount in ``unit``) rows plus the total, for printing."""
        u = check.positive("unit", unit)
        rows = [(k, v / u) for k, v in self.breakdown.items()]
        return rows + [("total", self.total_bytes / u)]

    def to_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "params": self.params, "breakdown": dict(self.breakdown),
                "total_bytes": self.total_bytes, "data_parallel": self.data_parallel,
                "zero_stage": self.zero_stage, "assumptions": list(self.assumptions)}


_MODES = ("inference", "training")
_FINETUNE = ("full", "lora", "qlora")
#: The book's fine-tuning assumptions, stated once (assumptions, not published figures): LoRA/QLoRA
#: adapters of rank 16 on every linear layer, micro-batches of one 2048-token sequence with full
#: recomputation. *HBM* and *The A100 today* both quote :func:`finetune_memory` with these defaults.
DEFAULT_LORA_RANK = 16
DEFAULT_FINETUNE_SEQ = 2048


def model_memory(
    params: float | str | TransformerShape,
    *,
    mode: str = "inference",
    weights: str = "bf16",
    weight_overhead_bits: float = 0.0,
    context: int = 0,
    batch: int = 1,
    kv_cache: str = "bf16",
    recipe: str | TrainingRecipe = MIXED_ADAM,
    finetune: str = "full",
    lora_rank: int = DEFAULT_LORA_RANK,
    adapter_recipe: str | TrainingRecipe = MIXED_ADAM,
    data_parallel: int = 1,
    zero_stage: int = 0,
    seq_len: int = 0,
    micro_batch: int = 1,
    recompute: str = "full",
    convention: str | MemoryConvention | None = None,
) -> MemoryEstimate:
    """What one GPU must hold to serve or to train a model, component by component, in bytes.

    ``params`` is a parameter count, a :class:`TransformerShape` or a preset name / size class of
    ``ampere.transformer``; the KV cache, LoRA adapters and activations need a shape.

    Inference (``mode="inference"``): weights in ``weights`` format (+ ``weight_overhead_bits`` of
    quantization scales per weight) and the KV cache of ``batch`` sequences of ``context`` tokens in
    ``kv_cache`` format. Runtime buffers (CUDA context, workspaces) are left to ``reserve_bytes`` of
    :meth:`MemoryEstimate.fits`.

    Training (``mode="training"``): ``finetune="full"`` keeps the ``recipe``'s bytes per parameter
    (mixed-precision Adam: 16), partitioned by ZeRO ``zero_stage`` over ``data_parallel`` GPUs;
    ``convention`` ("paper", "megatron", "deepspeed") counts the full-training state as that source
    does (:func:`state_bytes_per_param`, and DeepSpeed's gathered largest module for ZeRO-3); ``"lora"``
    freezes the base weights in ``weights`` format and trains rank-``lora_rank`` adapters on
    every linear layer with ``adapter_recipe``; ``"qlora"`` does the same over NF4 base weights with
    double quantization (4.127 bits per weight, dettmers2023qlora). Activations are included when
    ``seq_len`` > 0 (see :func:`activation_bytes`), else left out and said so in ``assumptions``.
    Chapter: *HBM and the memory hierarchy*, "What fits".
    """
    check.one_of("mode", mode, _MODES)
    shape = None
    if isinstance(params, (str, TransformerShape)):
        shape = _shape("params", params)
        n_params = float(shape.params)
    else:
        n_params = check.positive("params", params, maximum=MAX_PARAMS)
    _format_bits("weights", weights)
    _format_bits("kv_cache", kv_cache)
    check.nonneg("weight_overhead_bits", weight_overhead_bits, maximum=MAX_BITS)
    context = check.nonneg_int("context", context, maximum=MAX_CONTEXT)
    check.positive_int("batch", batch, maximum=MAX_BATCH)
    check.positive_int("data_parallel", data_parallel, maximum=MAX_DATA_PARALLEL)
    seq_len = check.nonneg_int("seq_len", seq_len, maximum=MAX_CONTEXT)
    check.positive_int("micro_batch", micro_batch, maximum=MAX_MICRO_BATCH)
    _stage("zero_stage", zero_stage)
    check.one_of("recompute", recompute, RECOMPUTE)
    check.one_of("finetune", finetune, _FINETUNE)
    check.positive_int("lora_rank", lora_rank, maximum=LIMITS["lora_rank"])
    r = _recipe(recipe)
    ar = _recipe(adapter_recipe, "adapter_recipe")
    conv = None if convention is None else _convention("convention", convention)
    name = shape.label if shape else f"{n_params / 1e9:.3g}B parameters"
    assumptions: list[str] = []
    breakdown: dict[str, float] = {}

    if mode == "inference":
        if context and shape is None:
            raise ValueError("context > 0 needs the model's shape: pass a preset name or a TransformerShape "
                             "as params")
        bits = FORMAT_BITS[weights] + weight_overhead_bits
        breakdown["weights"] = n_params * bits / 8
        breakdown["kv_cache"] = kv_cache_bytes(shape, context, batch, kv_cache) if context else 0.0
        assumptions.append(f"{name}: weights in {weights} ({bits:.3g} bits per weight)")
        if context:
            assumptions.append(f"KV cache in {kv_cache}: {batch} sequence(s) x {context} tokens")
        assumptions.append("runtime buffers (CUDA context, workspaces, fragmentation) not included")
        return MemoryEstimate("inference", n_params, breakdown, 1, 0, tuple(assumptions))

    if finetune == "full" and conv is not None:
        per = state_bytes_per_param(zero_stage, data_parallel, conv)
        breakdown.update({k: v * n_params for k, v in per.items()})
        if shape is not None and zero_stage == 3:
            buf = gathered_layer_bytes(3, largest_module_params(shape), conv)
            if buf:
                breakdown["gathered_layer"] = buf
        assumptions.append(f"{name}: full training, counted as the {conv.name!r} convention "
                           f"({per.total:.3g} bytes per parameter), ZeRO stage {zero_stage} over {data_parallel} GPU(s)")
    elif finetune == "full":
        per = zero_bytes_per_param(zero_stage, data_parallel, r)
        breakdown.update({k: v * n_params for k, v in per.items()})
        assumptions.append(f"{name}: full training, {r.name} ({r.bytes_per_param:g} bytes per parameter before "
                           f"partitioning), ZeRO stage {zero_stage} over {data_parallel} GPU(s)")
    else:
        if shape is None:
            raise ValueError(f"finetune={finetune!r} needs the model's shape to size the adapters: pass a preset "
                             "name or a TransformerShape as params")
        base_fmt, overhead = (("nf4", NF4_DOUBLE_QUANT_OVERHEAD_BITS) if finetune == "qlora"
                              else (weights, weight_overhead_bits))
        lora = shape.lora_params(lora_rank)
        breakdown["frozen_weights"] = n_params * (FORMAT_BITS[base_fmt] + overhead) / 8
        breakdown["adapter_state"] = lora * zero_bytes_per_param(zero_stage, data_parallel, ar).total
        assumptions.append(f"{name}: {'QLoRA' if finetune == 'qlora' else 'LoRA'} fine-tuning, base "
                           f"weights frozen in {base_fmt} ({FORMAT_BITS[base_fmt] + overhead:.4g} bits per weight)")
        assumptions.append(f"rank-{lora_rank} adapters on every linear layer: {lora / 1e6:.0f}M parameters "
                           f"trained with {ar.name} ({ar.bytes_per_param:g} bytes each)")
    if seq_len:
        if shape is None:
            raise ValueError("seq_len > 0 needs the model's shape for activations: pass a preset name or a "
                             "TransformerShape as params")
        breakdown["activations"] = activation_bytes(shape, seq_len, micro_batch, recompute)
        assumptions.append(f"activations: micro-batch {micro_batch} x {seq_len} tokens, {recompute} "
                           "recomputation (Korthikanti et al. 2022, Table 2; approximate for LLaMA layers)")
    else:
        assumptions.append("activations not included (seq_len=0)")
    return MemoryEstimate("training", n_params, breakdown, data_parallel, zero_stage, tuple(assumptions))


def finetune_memory(model: TransformerShape | str, method: str = "qlora", *,
                    lora_rank: int = DEFAULT_LORA_RANK, seq_len: int = DEFAULT_FINETUNE_SEQ, micro_batch: int = 1,
                    recompute: str = "full") -> MemoryEstimate:
    """The fine-tuning footprint both chapters quote: base weights, adapters with their Adam state, activations.

    ``method`` is "full" (mixed-precision Adam, 16 bytes per parameter), "lora" (bf16 base) or "qlora"
    (NF4 base with double quantization); adapters of rank ``lora_rank`` on every linear layer, trained
    with mixed-precision Adam; activations of ``micro_batch`` sequences of ``seq_len`` tokens with
    ``recompute`` (``seq_len=0`` leaves them out). The defaults are the book's stated assumptions
    (:data:`DEFAULT_LORA_RANK`, :data:`DEFAULT_FINETUNE_SEQ`); no runtime reserve is included (compare with
    :func:`usable_bytes`). *HBM* and *The A100 today* both call this function with the defaults, so they
    print the same figure. Chapter: *HBM and the memory hierarchy*, "Fine-tuning".
    """
    return model_memory(shape_of(model), mode="training", finetune=check.one_of("method", method, _FINETUNE),
                        weights="bf16", lora_rank=lora_rank, seq_len=seq_len, micro_batch=micro_batch,
                        recompute=recompute)


def max_batch(model: TransformerShape | str, gpu: str | specs.GPUSpec, *, context: int, weights: str = "bf16",
              weight_overhead_bits: float = 0.0, kv_cache: str = "bf16", reserve_bytes: float | None = None) -> int:
    """Most sequences of ``context`` tokens whose KV cache fits beside the weights in :func:`usable_bytes`
    (0: not even one); ``reserve_bytes`` defaults to the runtime reserve.

    Chapter: *HBM and the memory hierarchy*, "The 2026 use cases, checked".
    """
    ctx = check.positive_int("context", context, maximum=MAX_CONTEXT)
    _format_bits("kv_cache", kv_cache)
    est = model_memory(shape_of(model), weights=weights, weight_overhead_bits=weight_overhead_bits)
    free = est.headroom_bytes(gpu, reserve_bytes)
    per_seq = kv_cache_bytes(model, ctx, 1, kv_cache)
    return max(0, math.floor(free / per_seq)) if free > 0 else 0


def max_trainable_params(gpu: str | specs.GPUSpec, recipe: str | TrainingRecipe = MIXED_ADAM,
                         reserve_bytes: float | None = None) -> float:
    """Largest model whose full training state (no activations) fits one ``gpu``: :func:`usable_bytes` /
    bytes per parameter (0 when the reserve leaves nothing).

    ``reserve_bytes`` defaults to the book's runtime reserve (:func:`runtime_reserve`, 5 % of what CUDA
    exposes): an A100 80GB then holds 80.85e9 / 16 = 5.05e9 parameters of mixed-precision Adam state (5.32e9
    with ``reserve_bytes=0``). Both *HBM* and *The A100 today* quote this call with the default.
    Chapter: *HBM and the memory hierarchy*, "Training a model".
    """
    bpp = _recipe(recipe).bytes_per_param
    return max(0.0, _usable(gpu, reserve_bytes)) / bpp


def min_gpus_zero(params: float, gpu: str | specs.GPUSpec, stage: int = 3,
                  recipe: str | TrainingRecipe = MIXED_ADAM, reserve_bytes: float | None = None,
                  max_gpus: int = 1_000_000, *, convention: str | MemoryConvention | None = None,
                  largest_layer_params: float = 0.0, offload: str = "none") -> int | None:
    """Fewest data-parallel GPUs for which ZeRO ``stage`` brings the training state under :func:`usable_bytes`
    (``reserve_bytes`` defaults to the runtime reserve).

    By default the state is the ``recipe``'s, partitioned as the ZeRO paper does (:func:`zero_bytes_per_param`).
    ``convention`` ("paper", "megatron", "deepspeed": :data:`CONVENTIONS`) counts it as that source does
    instead (:func:`state_bytes_per_param`), with the gathered largest module of ZeRO-3
    (``largest_layer_params``, :func:`largest_module_params`) and ``offload`` where the convention has them:
    Llama-2-70B on A100 80GB needs more cards with DeepSpeed's own count than with the paper's.
    Returns None when no number of GPUs up to ``max_gpus`` is enough (stages 0-2 keep unpartitioned parts
    on every GPU).
    Chapter: *HBM and the memory hierarchy*, "Training a model"; *Megatron-LM*, "Checked against Megatron-LM
    and DeepSpeed".
    """
    n_params = check.positive("params", params, maximum=MAX_PARAMS)
    cap = _usable(gpu, reserve_bytes)
    st = _stage("stage", stage)
    limit = check.positive_int("max_gpus", max_gpus, maximum=MAX_DATA_PARALLEL)
    check.one_of("offload", offload, OFFLOAD)
    check.nonneg("largest_layer_params", largest_layer_params, maximum=MAX_PARAMS)
    if convention is not None:
        convention = _convention("convention", convention)
    elif offload != "none" or largest_layer_params:
        raise ValueError(f"offload={offload!r} and largest_layer_params={largest_layer_params!r} are counted only "
                         "with a convention (convention='deepspeed'); allowed without one: offload='none', "
                         "largest_layer_params=0")
    if convention is None:
        r = _recipe(recipe)
        one, two = zero_bytes_per_param(st, 1, r).items(), dict(zero_bytes_per_param(st, 2, r).items())
        fixed = n_params * sum(v for k, v in one if two[k] == v)  # parts every GPU keeps whole
        shrinking = n_params * sum(v for k, v in one if two[k] != v)  # parts divided by the GPU count
    else:
        one, two = state_bytes_per_param(st, 1, convention, offload), state_bytes_per_param(st, 2, convention, offload)
        shrinking = n_params * 2 * (one.total - two.total)  # replicated + S = one, replicated + S/2 = two
        fixed = n_params * one.total - shrinking
        fixed += gathered_layer_bytes(st, largest_layer_params, convention, offload)
    if fixed >= cap:
        return None
    n = max(1, math.ceil(shrinking / (cap - fixed) - 1e-12)) if shrinking else 1
    return n if n <= limit else None
