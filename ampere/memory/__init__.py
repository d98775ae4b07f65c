"""Memory arithmetic, in one place: weights by format, KV cache, training state with ZeRO, activations.

Chapter: *HBM and the memory hierarchy* ("What fits", "Training state", "Activations") explains every
function; *Megatron-LM* ("Memory per GPU") and *The A100 today* (the workload calculator) use them.
Pure Python: no torch, no numpy. Shapes are :class:`ampere.transformer.TransformerShape`.

* **Weights**: :data:`FORMAT_BITS` bits per element, plus quantization scales
  (:func:`group_scale_overhead_bits`; QLoRA's NF4 with double quantization, :data:`NF4_DOUBLE_QUANT_OVERHEAD_BITS`).
* **KV cache**: 2 (key and value) x layers x kv_heads x head_dim elements per token (:func:`kv_cache_bytes`).
* **Training state** (``training.py``): bytes per parameter of a :class:`TrainingRecipe` (mixed-precision
  Adam: 2 + 2 + K with K = 12, rajbhandari2020zero), partitioned over the data-parallel GPUs by ZeRO stages
  0-3 (:func:`zero_bytes_per_param`, returning a :class:`StateBytes`); the same state as three sources count
  it, :data:`CONVENTIONS` "paper", "megatron" (Megatron-LM's estimator) and "deepspeed" (DeepSpeed's
  estimators), with offload and ZeRO-3's gathered largest module (:func:`state_bytes_per_param`,
  :func:`gathered_layer_bytes`, :func:`largest_module_params`).
* **Activations** (``activations.py``): korthikanti2022reducing, Table 2, per transformer layer and
  micro-batch, 16-bit activations, generalised to SwiGLU, grouped-query and fused (flash) attention
  (:func:`activation_bytes_per_layer`, :func:`shape_activation_bytes_per_layer`), and the whole stack
  (:func:`activation_bytes`).
* **What fits**: :func:`model_memory` (a :class:`MemoryEstimate` by component), :func:`gpus_to_hold`,
  :func:`max_batch`, :func:`max_trainable_params`, :func:`min_gpus_zero`, and the fine-tuning recipe both
  chapters quote, :func:`finetune_memory`.
* **The one capacity rule**: every "fits" / "GPUs needed" / "largest model" answer budgets against
  :func:`usable_bytes` = what CUDA exposes (:func:`cuda_visible_bytes`, ``totalGlobalMem``) minus the runtime
  reserve (:func:`runtime_reserve`, :data:`RESERVE_FRACTION` of it) unless ``reserve_bytes`` is given.
  Not the physical capacity: an A100 80GB has 80 GiB, NVML shows 81920 MiB, CUDA exposes 85.10e9 bytes
  (79.26 GiB) and the book budgets 95 % of that (``ampere/data/tables/gpu_memory.json``).

Units: bytes; GB = 1e9 bytes, GiB = 2**30 bytes. GPU capacities are physical and binary where the product
is (``specs.GPUSpec.memory_bytes``: 80 GiB for NVIDIA's "80GB").
Bad input raises ``ValueError``/``TypeError`` naming the argument (``ampere.check``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping

from .. import check, specs
from ..transformer import TransformerShape
from .activations import (RECOMPUTE, activation_bytes, activation_bytes_per_layer, layer_activation_terms,
                          logits_bytes, shape_activation_bytes_per_layer, shape_of)
from .training import (BYTES_PER_PARAM_MIXED_ADAM, CONVENTIONS, FP32_ADAM, MIXED_ADAM, OFFLOAD, RECIPES, ZERO_STAGES,
                       MemoryConvention, StateBytes, TrainingRecipe, _recipe, _stage, gathered_layer_bytes,
                       largest_module_params, memory_convention, state_bytes_per_param, zero_bytes_per_param)

__all__ = [
    "GB", "FORMAT_BITS", "NF4_DOUBLE_QUANT_OVERHEAD_BITS", "NF4_SINGLE_QUANT_OVERHEAD_BITS", "format_bits",
    "group_scale_overhead_bits", "weight_bytes", "kv_bytes_per_token", "kv_cache_bytes",
    "TrainingRecipe", "MIXED_ADAM", "FP32_ADAM", "RECIPES", "BYTES_PER_PARAM_MIXED_ADAM", "ZERO_STAGES",
    "StateBytes", "zero_bytes_per_param", "RECOMPUTE", "activation_bytes_per_layer", "logits_bytes",
    "activation_bytes", "MemoryEstimate", "model_memory", "gpus_to_hold", "max_batch", "max_trainable_params",
    "min_gpus_zero", "DEFAULT_LORA_RANK", "DEFAULT_FINETUNE_SEQ", "RESERVE_FRACTION", "runtime_reserve",
    "cuda_visible_bytes", "usable_bytes", "finetune_memory", "shape_of", "CONVENTIONS", "MemoryConvention",
    "memory_convention", "OFFLOAD", "state_bytes_per_param", "gathered_layer_bytes", "largest_module_params",
    "layer_activation_terms", "shape_activation_bytes_per_layer",
]

GB = 1e9

# =======================================================================================================
# Weights and KV cache
# =======================================================================================================

#: Bits per stored element of each weight or cache format, before quantization scales.
FORMAT_BITS: Mapping[str, float] = MappingProxyType({
    "fp32": 32, "fp16": 16, "bf16": 16, "fp8": 8, "int8": 8, "int4": 4, "nf4": 4,
})

#: QLoRA's NF4 with double quantization: one 8-bit constant per block of 64 weights plus one 32-bit
#: constant per 256 blocks, 8/64 + 32/(64*256) = 0.127 bits per parameter (dettmers2023qlora, section 3).
NF4_DOUBLE_QUANT_OVERHEAD_BITS = 8 / 64 + 32 / (64 * 256)
#: The same without double quantization: one 32-bit absmax per block of 64 weights (dettmers2023qlora).
NF4_SINGLE_QUANT_OVERHEAD_BITS = 32 / 64


def format_bits(name: str, fmt: str) -> float:
    """Bits per element of format ``fmt`` (a key of :data:`FORMAT_BITS`); ``name`` is the argument's name.

    Chapter: *HBM and the memory hierarchy*, "Serving a model".
    """
    return FORMAT_BITS[check.one_of(name, fmt, tuple(FORMAT_BITS))]


def group_scale_overhead_bits(group_size: int, scale_bits: int = 16, zero_point_bits: int = 0) -> float:
    """Bits per weight spent on quantization scales: one scale (and zero point) per group of weights.

    A group of 128 INT4 weights sharing one FP16 scale adds 16/128 = 0.125 bits per weight.
    Chapter: *HBM and the memory hierarchy*, "What fits".
    """
    g = check.positive_int("group_size", group_size)
    s = check.positive_int("scale_bits", scale_bits)
    z = check.nonneg_int("zero_point_bits", zero_point_bits)
    return (s + z) / g


def weight_bytes(params: float, fmt: str = "bf16", overhead_bits: float = 0.0) -> float:
    """Bytes to store ``params`` weights in format ``fmt`` plus ``overhead_bits`` of scales per weight.

    Chapter: *HBM and the memory hierarchy*, "Serving a model".
    """
    n = check.positive("params", params)
    extra = check.nonneg("overhead_bits", overhead_bits)
    return n * (format_bits("fmt", fmt) + extra) / 8


def kv_bytes_per_token(model: TransformerShape | str, fmt: str = "bf16") -> float:
    """Key and value vectors of one token in every layer: 2 x layers x kv_heads x head_dim elements.

    Chapter: *HBM and the memory hierarchy*, "Serving a model".
    """
    m = shape_of(model)
    return 2 * m.layers * m.kv_dim * format_bits("kv_cache", fmt) / 8


def kv_cache_bytes(model: TransformerShape | str, context: int, batch: int = 1, fmt: str = "bf16") -> float:
    """KV cache of ``batch`` sequences of ``context`` tokens: 2 x layers x kv_heads x head_dim x tokens x bytes.

    Chapter: *HBM and the memory hierarchy*, "Serving a model".
    """
    ctx = check.nonneg_int("context", context)
    b = check.positive_int("batch", batch)
    return kv_bytes_per_token(model, fmt) * ctx * b


# =======================================================================================================
# What one GPU holds
# =======================================================================================================


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
        object.__setattr__(self, "breakdown", MappingProxyType(dict(self.breakdown)))

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
#: Fraction of what CUDA exposes (:func:`cuda_visible_bytes`) the book keeps free for the runtime: the CUDA
#: context of the process, the libraries' workspaces (cuBLAS, cuDNN, NCCL buffers) and the caching
#: allocator's fragmentation. An assumption, not a published figure: 3.96 GiB of an A100 80GB's 79.26 GiB.
#: What is published is a floor: an allocation loop of tiny tensors on an H100 got PyTorch's allocator to
#: within about 0.65 GB of CUDA's total (belotti2025gpumemory), i.e. a bare context costs under 1 %; real
#: training adds library workspaces and fragmentation, hence 5 %. The driver's own reserve (hundreds of
#: MiB) is already outside CUDA's total and is not counted again. See :func:`usable_bytes`.
RESERVE_FRACTION = 0.05


def cuda_visible_bytes(gpu: str | specs.GPUSpec) -> int:
    """What CUDA exposes on ``gpu`` (``totalGlobalMem``): the published figure, or the catalogue's stated
    estimate where none is published (``specs.GPUSpec.cuda_visible_bytes``). Chapter: *HBM*, "What fits".
    """
    return specs.get(gpu).cuda_visible_bytes


def runtime_reserve(gpu: str | specs.GPUSpec, fraction: float | None = None) -> float:
    """Bytes kept free on ``gpu`` for the runtime: ``fraction`` (default :data:`RESERVE_FRACTION`, read when
    called) of what CUDA exposes (:func:`cuda_visible_bytes`), not of the physical capacity.

    Chapter: *HBM and the memory hierarchy*, "Training a model".
    """
    f = RESERVE_FRACTION if fraction is None else check.fraction("fraction", fraction)
    return cuda_visible_bytes(gpu) * f


def _usable(gpu: str | specs.GPUSpec, reserve_bytes: float | None) -> float:
    """The one capacity rule of the package: CUDA-visible bytes minus the reserve (may be <= 0)."""
    reserve = runtime_reserve(gpu) if reserve_bytes is None else check.nonneg("reserve_bytes", reserve_bytes)
    return cuda_visible_bytes(gpu) - reserve


def usable_bytes(gpu: str | specs.GPUSpec, reserve_bytes: float | None = None) -> float:
    """Bytes a workload may use on one ``gpu``: :func:`cuda_visible_bytes` minus ``reserve_bytes``.

    ``reserve_bytes`` defaults to :func:`runtime_reserve` (:data:`RESERVE_FRACTION` of the CUDA total); 0
    budgets against everything CUDA exposes. Every "fits", "GPUs needed" and "largest model" function of
    this module uses this rule. An A100 80GB: 85.10e9 bytes exposed, 80.85e9 usable. Raises ``ValueError``
    when the reserve leaves nothing. Chapter: *HBM and the memory hierarchy*, "What fits".
    """
    usable = _usable(gpu, reserve_bytes)
    if usable <= 0:
        spec = specs.get(gpu)
        raise ValueError(f"reserve_bytes={reserve_bytes!r} leaves no capacity on {spec.name} "
                         f"(CUDA exposes {spec.cuda_visible_bytes} bytes)")
    return usable


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
        shape = shape_of(params)
        n_params = float(shape.params)
    else:
        n_params = check.positive("params", params)
    format_bits("weights", weights)
    format_bits("kv_cache", kv_cache)
    check.nonneg("weight_overhead_bits", weight_overhead_bits)
    context = check.nonneg_int("context", context)
    check.positive_int("batch", batch)
    check.positive_int("data_parallel", data_parallel)
    seq_len = check.nonneg_int("seq_len", seq_len)
    check.positive_int("micro_batch", micro_batch)
    _stage("zero_stage", zero_stage)
    check.one_of("recompute", recompute, RECOMPUTE)
    check.one_of("finetune", finetune, _FINETUNE)
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

    r = _recipe(recipe)
    if finetune == "full" and convention is not None:
        conv = memory_convention(convention)
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
        ar = _recipe(adapter_recipe)
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


def gpus_to_hold(total_bytes: float, gpu: str | specs.GPUSpec, reserve_bytes: float | None = None) -> int:
    """Smallest number of ``gpu`` whose :func:`usable_bytes` (each) hold ``total_bytes`` split evenly.

    ``reserve_bytes`` defaults to the runtime reserve (:func:`runtime_reserve`).
    Chapter: *HBM and the memory hierarchy*, "What fits".
    """
    total = check.nonneg("total_bytes", total_bytes)
    usable = usable_bytes(gpu, reserve_bytes)
    return max(1, math.ceil(total / usable - 1e-12))


def max_batch(model: TransformerShape | str, gpu: str | specs.GPUSpec, *, context: int, weights: str = "bf16",
              weight_overhead_bits: float = 0.0, kv_cache: str = "bf16", reserve_bytes: float | None = None) -> int:
    """Most sequences of ``context`` tokens whose KV cache fits beside the weights in :func:`usable_bytes`
    (0: not even one); ``reserve_bytes`` defaults to the runtime reserve.

    Chapter: *HBM and the memory hierarchy*, "The 2026 use cases, checked".
    """
    ctx = check.positive_int("context", context)
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
    n_params = check.positive("params", params)
    cap = _usable(gpu, reserve_bytes)
    st = _stage("stage", stage)
    limit = check.positive_int("max_gpus", max_gpus)
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
