"""Memory arithmetic, in one place: weights by format, KV cache, training state with ZeRO, activations.

Chapter: *HBM and the memory hierarchy* ("What fits", "Training state", "Activations") explains every
function; *Megatron-LM* ("Memory per GPU") and *The A100 today* (the workload calculator) use them.
Pure Python: no torch, no numpy. Shapes are :class:`ampere.transformer.TransformerShape`.

* **Weights**: :data:`FORMAT_BITS` bits per element, plus quantization scales
  (:func:`group_scale_overhead_bits`; QLoRA's NF4 with double quantization, :data:`NF4_DOUBLE_QUANT_OVERHEAD_BITS`).
* **KV cache**: 2 (key and value) x layers x kv_heads x head_dim elements per token (:func:`kv_cache_bytes`).
* **Training state**: bytes per parameter of a :class:`TrainingRecipe` (mixed-precision Adam: 2 + 2 + K
  with K = 12, rajbhandari2020zero), partitioned over the data-parallel GPUs by ZeRO stages 0-3
  (:func:`zero_bytes_per_param`, returning a :class:`StateBytes`).
* **Activations**: korthikanti2022reducing, Table 2, per transformer layer and micro-batch, 16-bit
  activations (:func:`activation_bytes_per_layer`), and the whole stack (:func:`activation_bytes`).
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

from . import check, specs
from .transformer import TransformerShape, preset

__all__ = [
    "GB", "FORMAT_BITS", "NF4_DOUBLE_QUANT_OVERHEAD_BITS", "NF4_SINGLE_QUANT_OVERHEAD_BITS", "format_bits",
    "group_scale_overhead_bits", "weight_bytes", "kv_bytes_per_token", "kv_cache_bytes",
    "TrainingRecipe", "MIXED_ADAM", "FP32_ADAM", "RECIPES", "BYTES_PER_PARAM_MIXED_ADAM", "ZERO_STAGES",
    "StateBytes", "zero_bytes_per_param", "RECOMPUTE", "activation_bytes_per_layer", "logits_bytes",
    "activation_bytes", "MemoryEstimate", "model_memory", "gpus_to_hold", "max_batch", "max_trainable_params",
    "min_gpus_zero", "DEFAULT_LORA_RANK", "DEFAULT_FINETUNE_SEQ", "RESERVE_FRACTION", "runtime_reserve",
    "cuda_visible_bytes", "usable_bytes", "finetune_memory", "shape_of",
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


def shape_of(model: Any) -> TransformerShape:
    """``model`` as a shape: a :class:`TransformerShape`, or a preset name / size class of ampere.transformer.

    Chapter: *HBM and the memory hierarchy*, "What fits".
    """
    if isinstance(model, TransformerShape):
        return model
    if isinstance(model, str):
        return preset(model)
    raise TypeError(f"model must be a TransformerShape or a preset name, got {model!r} ({type(model).__name__})")


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
# Training state and ZeRO
# =======================================================================================================


@dataclass(frozen=True)
class TrainingRecipe:
    """Bytes per trained parameter kept on the GPU, by component (before activations)."""

    name: str
    weight_bytes: float  # the copy used in forward and backward (fp16/bf16 in mixed precision)
    grad_bytes: float  # gradients
    master_bytes: float  # fp32 master copy of the weights (mixed precision only)
    optimizer_bytes: float  # optimizer state: Adam keeps momentum and variance, 4 + 4 bytes in fp32
    source: str  # bib key

    def __post_init__(self) -> None:
        for f in ("weight_bytes", "grad_bytes", "master_bytes", "optimizer_bytes"):
            object.__setattr__(self, f, check.nonneg(f, getattr(self, f)))

    @property
    def bytes_per_param(self) -> float:
        return self.weight_bytes + self.grad_bytes + self.master_bytes + self.optimizer_bytes

    @property
    def sharded_state_bytes(self) -> float:
        """What ZeRO stage 1 partitions: master weights plus optimizer state (the paper's K)."""
        return self.master_bytes + self.optimizer_bytes


#: Mixed-precision training with Adam: 2 (fp16/bf16 weights) + 2 (gradients) + 4 (fp32 master) + 4 + 4
#: (Adam momentum and variance) = 16 bytes per parameter; the ZeRO paper's (2 + 2 + K) with K = 12.
MIXED_ADAM = TrainingRecipe("mixed_adam", 2, 2, 4, 8, "rajbhandari2020zero")
#: Plain fp32 training with Adam: 4 + 4 + 8, also 16 bytes per parameter (no separate master copy).
FP32_ADAM = TrainingRecipe("fp32_adam", 4, 4, 0, 8, "rajbhandari2020zero")
RECIPES: Mapping[str, TrainingRecipe] = MappingProxyType({r.name: r for r in (MIXED_ADAM, FP32_ADAM)})
#: The number everybody quotes: bytes per parameter of mixed-precision Adam training, before activations.
BYTES_PER_PARAM_MIXED_ADAM = MIXED_ADAM.bytes_per_param
#: ZeRO-DP stages (rajbhandari2020zero): what each one partitions across the data-parallel GPUs.
ZERO_STAGES: Mapping[int, str] = MappingProxyType({
    0: "no partitioning (plain data parallelism)",
    1: "optimizer state partitioned (P_os)",
    2: "optimizer state and gradients partitioned (P_os+g)",
    3: "optimizer state, gradients and weights partitioned (P_os+g+p)",
})


def _recipe(recipe: str | TrainingRecipe) -> TrainingRecipe:
    if isinstance(recipe, TrainingRecipe):
        return recipe
    if not isinstance(recipe, str):
        raise TypeError(f"recipe must be a recipe name or a TrainingRecipe, got {recipe!r}")
    return RECIPES[check.one_of("recipe", recipe, tuple(RECIPES))]


def _stage(name: str, stage: Any) -> int:
    return check.integer(name, stage, minimum=0, maximum=3)


@dataclass(frozen=True)
class StateBytes:
    """Bytes per parameter one GPU holds for each part of the training state. See :func:`zero_bytes_per_param`."""

    weights: float
    gradients: float
    master_weights: float
    optimizer_state: float

    @property
    def total(self) -> float:
        return self.weights + self.gradients + self.master_weights + self.optimizer_state

    def items(self) -> list[tuple[str, float]]:
        """(component, bytes per parameter) in a stable order."""
        return [("weights", self.weights), ("gradients", self.gradients),
                ("master_weights", self.master_weights), ("optimizer_state", self.optimizer_state)]

    def to_dict(self) -> dict[str, float]:
        return dict(self.items())


def zero_bytes_per_param(stage: int = 0, data_parallel: int = 1,
                         recipe: str | TrainingRecipe = MIXED_ADAM) -> StateBytes:
    """Bytes per parameter held by each GPU under ZeRO ``stage`` with ``data_parallel`` GPUs.

    Stage 1 divides master weights and optimizer state by N, stage 2 also the gradients, stage 3 also the
    weights (rajbhandari2020zero, Figure 1: 7.5B parameters on 64 GPUs hold 120, 31.4, 16.6 and 1.9 GB).
    A Megatron "distributed optimizer" is stage 1. Chapter: *HBM and the memory hierarchy*, "Training state".
    """
    st = _stage("zero_stage", stage)
    n = check.positive_int("data_parallel", data_parallel)
    r = _recipe(recipe)
    return StateBytes(r.weight_bytes / (n if st >= 3 else 1), r.grad_bytes / (n if st >= 2 else 1),
                      r.master_bytes / (n if st >= 1 else 1), r.optimizer_bytes / (n if st >= 1 else 1))


# =======================================================================================================
# Activations (korthikanti2022reducing)
# =======================================================================================================

#: Activation recomputation: none, selective (attention scores and softmax recomputed), full (only each
#: layer's input kept).
RECOMPUTE: tuple[str, ...] = ("none", "selective", "full")


def activation_bytes_per_layer(seq: int, micro_batch: int, hidden: int, heads: int, *, tensor: int = 1,
                               sequence_parallel: bool = False, recompute: str = "none") -> float:
    """Activation bytes one transformer layer keeps for one micro-batch: korthikanti2022reducing, Table 2.

    With s = ``seq``, b = ``micro_batch``, h = ``hidden``, a = ``heads``, t = ``tensor`` (16-bit
    activations, GPT layer with a 4h MLP; for SwiGLU or grouped-query layers the constants are an
    approximation):

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
    stored input is the sequence-split one, 2 s b h / t. Chapter: *HBM and the memory hierarchy*,
    "Activations"; *Megatron-LM*, "Memory per GPU".
    """
    s = check.positive_int("seq", seq)
    b = check.positive_int("micro_batch", micro_batch)
    h = check.positive_int("hidden", hidden)
    a = check.positive_int("heads", heads)
    t = check.positive_int("tensor", tensor)
    sp = check.boolean("sequence_parallel", sequence_parallel)
    rc = check.one_of("recompute", recompute, RECOMPUTE)
    sbh = s * b * h
    if rc == "full":
        return 2 * sbh / (t if sp else 1)
    linear = 34 / t if sp else 10 + 24 / t
    scores = 0.0 if rc == "selective" else 5 * a * s / (h * t)
    return sbh * (linear + scores)


def logits_bytes(seq: int, micro_batch: int, vocab: int, tensor: int = 1) -> float:
    """The fp32 logits (softmax) the cross-entropy keeps for backward: 4 s b V / t bytes.

    Chapter: *HBM and the memory hierarchy*, "Training a model".
    """
    s = check.positive_int("seq", seq)
    b = check.positive_int("micro_batch", micro_batch)
    v = check.positive_int("vocab", vocab)
    return 4 * s * b * v / check.positive_int("tensor", tensor)


def activation_bytes(model: TransformerShape | str, seq: int | None = None, micro_batch: int = 1,
                     recompute: str = "full", *, tensor: int = 1, sequence_parallel: bool = False,
                     layers: int | None = None) -> float:
    """Activation memory of one training micro-batch through ``layers`` layers (default: all of them).

    ``layers`` x :func:`activation_bytes_per_layer`; with full recomputation one layer's complete
    activations are also live while it is recomputed; plus the fp32 logits (:func:`logits_bytes`).
    ``seq`` defaults to the shape's ``seq``. Chapter: *HBM and the memory hierarchy*, "Activations".
    """
    m = shape_of(model)
    s = m.seq if seq is None else check.positive_int("seq", seq)
    n = m.layers if layers is None else check.positive_int("layers", layers)
    kw = dict(tensor=tensor, sequence_parallel=sequence_parallel)
    kept = activation_bytes_per_layer(s, micro_batch, m.hidden, m.heads, recompute=recompute, **kw)
    total = n * kept
    if recompute == "full":
        total += activation_bytes_per_layer(s, micro_batch, m.hidden, m.heads, recompute="none", **kw)
    return total + logits_bytes(s, micro_batch, m.vocab, tensor)


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
    ``"lora"`` freezes the base weights in ``weights`` format and trains rank-``lora_rank`` adapters on
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
    if finetune == "full":
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
                  max_gpus: int = 1_000_000) -> int | None:
    """Fewest data-parallel GPUs for which ZeRO ``stage`` brings the training state under :func:`usable_bytes`
    (``reserve_bytes`` defaults to the runtime reserve).

    Returns None when no number of GPUs up to ``max_gpus`` is enough (stages 0-2 keep unpartitioned parts
    on every GPU).
    Chapter: *HBM and the memory hierarchy*, "Training a model".
    """
    n_params = check.positive("params", params)
    cap = _usable(gpu, reserve_bytes)
    r = _recipe(recipe)
    st = _stage("stage", stage)
    limit = check.positive_int("max_gpus", max_gpus)
    one, two = zero_bytes_per_param(st, 1, r).items(), dict(zero_bytes_per_param(st, 2, r).items())
    fixed = n_params * sum(v for k, v in one if two[k] == v)  # parts every GPU keeps whole
    shrinking = n_params * sum(v for k, v in one if two[k] != v)  # parts divided by the GPU count
    if fixed >= cap:
        return None
    n = max(1, math.ceil(shrinking / (cap - fixed) - 1e-12)) if shrinking else 1
    return n if n <= limit else None
