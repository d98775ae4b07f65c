"""HBM and the memory hierarchy: where the bandwidth comes from, what fits, and what it costs to move.

Chapter: *HBM and the memory hierarchy* (book/hbm.ipynb). Every function here is explained there.

Three kinds of content live side by side, as in every chapter module:

* **Models** (pure Python, no torch): the DRAM bandwidth derived from the interface
  (:func:`bandwidth_table`), capacity arithmetic for inference and training (:func:`model_memory`, with
  the byte-per-parameter constants public so other chapters reuse them), the roofline of memory-bound
  work (:func:`roofline_ops`) and the LLM decoding bound (:func:`decode_bound`), and the L2 working-set
  curve (:func:`l2_sweep_model`, :func:`find_knee`).
* **Measurements** (torch imported inside the functions): STREAM-like kernels with explicitly counted
  bytes (:func:`measure_bandwidth`), the L2 working-set sweep (:func:`measure_l2_sweep`), what the driver
  reports as capacity (:func:`measure_capacity`), and the benchmark entry point :func:`bench_main`
  (``python -m ampere bench hbm``). Every measuring function also runs on ``device="cpu"`` with tiny
  sizes, so the unit tests exercise the same code path.
* **Published figures** kept next to their citation key: measured L2 sweeps and STREAM results from
  gpu-benches (``ernstgpubenches``), the ZeRO paper's memory table (``rajbhandari2020zero``).

Units follow the book: bytes and bytes/s in variables, GB = 1e9 bytes, GiB = 2**30 bytes; bandwidths are
printed in decimal GB/s or TB/s. Capacities of GPUs are NVIDIA's decimal figures (80 GB = 80e9 bytes).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Sequence

from . import specs

__all__ = [
    # constants
    "GB", "GiB", "MiB", "KiB", "FORMAT_BITS", "NF4_DOUBLE_QUANT_OVERHEAD_BITS", "NF4_SINGLE_QUANT_OVERHEAD_BITS",
    "TrainingRecipe", "RECIPES", "MIXED_ADAM", "FP32_ADAM", "BYTES_PER_PARAM_MIXED_ADAM", "ZERO_STAGES",
    "TransformerShape", "MODELS", "SIZE_CLASSES", "BANDWIDTH_GPUS", "DECODE_GPUS", "KERNELS", "Kernel",
    "PUBLISHED_L2_SWEEPS", "PUBLISHED_STREAM", "ZERO_PAPER_FIGURE1",
    # models
    "bandwidth_table", "hierarchy_table", "group_scale_overhead_bits", "weight_bytes", "kv_cache_bytes",
    "activation_bytes", "zero_bytes_per_param", "MemoryEstimate", "model_memory", "gpus_to_hold",
    "max_trainable_params", "max_batch", "min_gpus_zero", "Op", "roofline_ops", "attainable_flops", "DecodeBound",
    "decode_bound", "decode_table", "compare_gpus", "sweep_footprints", "l2_sweep_model", "find_knee",
    "published_l2_sweep", "validate_models",
    # measurements
    "measure_bandwidth", "measure_l2_sweep", "measure_capacity", "bandwidth_rows", "sweep_rows",
    "check_acceptance", "ACCEPT_COPY_PCT", "ACCEPT_KNEE_TOLERANCE", "L2_SWEEP_CHUNK_BYTES",
    "bench_main",
]

KiB = 1024
MiB = 1024**2
GiB = 1024**3
GB = 1e9

# =======================================================================================================
# 1. Where the bandwidth comes from
# =======================================================================================================

#: GPUs of the chapter's derivation table, in print order.
BANDWIDTH_GPUS: tuple[str, ...] = ("A100-SXM4-40GB", "A100-SXM4-80GB", "A100-PCIE-80GB", "V100-SXM2-32GB",
                                   "H100-SXM5-80GB", "H200-SXM-141GB", "RTX-A6000", "RTX-A2000-12GB", "T4", "L4")

# Where the derivation is not independent of the datasheet figure, say so (a100-facts.md, section 1a:
# the H100 per-pin rate is 3352 GB/s / 640 B; the H200 interface width is inferred from its 6 stacks).
_DERIVATION_NOTES: Mapping[str, str] = MappingProxyType({
    "H100-SXM5-80GB": "per-pin rate back-computed from the 3.35 TB/s datasheet figure: agreement by construction",
    "H200-SXM-141GB": "6 stacks / 6144 bits inferred from 141 GB, rate back-computed: agreement by construction",
})


def bandwidth_table(gpus: Iterable[str] = BANDWIDTH_GPUS) -> list[dict[str, Any]]:
    """DRAM bandwidth re-derived from the interface: width (bits) x data rate per pin (bit/s) / 8.

    One row per GPU with the memory type, stacks, bits per stack, per-pin rate, the derived and the
    datasheet bandwidth (bytes/s) and their ratio, plus a note where the derivation is circular.
    Chapter: *HBM and the memory hierarchy*, "Where the bandwidth comes from".
    """
    rows = []
    for name in gpus:
        s = specs.get(name)
        derived = s.memory_bandwidth_derived_bytes_per_s
        rows.append({
            "gpu": s.name, "memory_type": s.memory_type, "stacks": s.memory_stacks,
            "bus_bits": s.memory_bus_bits,
            "bits_per_stack": s.memory_bus_bits // s.memory_stacks if s.memory_stacks else None,
            "data_rate_bps": s.memory_data_rate_bps, "derived_bytes_per_s": derived,
            "datasheet_bytes_per_s": s.hbm_bytes_per_s, "ratio": derived / s.hbm_bytes_per_s,
            "capacity_bytes": s.memory_bytes, "source": s.source("hbm_bytes_per_s"),
            "note": _DERIVATION_NOTES.get(s.name, ""),
        })
    return rows


def hierarchy_table(gpu: str | specs.GPUSpec = "A100-SXM4-80GB") -> list[dict[str, Any]]:
    """Capacity and (where published) bandwidth of each level: registers, L1/shared, L2, DRAM.

    Per-SM quantities are multiplied by the SM count. Bandwidths are theoretical (L2: bytes/clock x boost
    clock, from ``GPUSpec.l2_bytes_per_s``; DRAM: the datasheet). Chapter: *HBM and the memory hierarchy*.
    """
    s = specs.get(gpu)
    return [
        {"level": "registers", "capacity_bytes": s.register_file_bytes_per_sm * s.sm_count, "bytes_per_s": None,
         "scope": f"{s.register_file_bytes_per_sm // KiB} KiB per SM"},
        {"level": "L1 / shared memory", "capacity_bytes": s.l1_shared_bytes_per_sm * s.sm_count,
         "bytes_per_s": None, "scope": f"{s.l1_shared_bytes_per_sm // KiB} KiB per SM"},
        {"level": "L2", "capacity_bytes": s.l2_bytes, "bytes_per_s": s.l2_bytes_per_s, "scope": "shared by all SMs"},
        {"level": f"DRAM ({s.memory_type})", "capacity_bytes": s.memory_bytes, "bytes_per_s": s.hbm_bytes_per_s,
         "scope": "the whole GPU"},
    ]


# =======================================================================================================
# 2. Capacity arithmetic: bytes per parameter, KV cache, training state, activations
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


def _positive(name: str, value: Any, *, integer: bool = False, allow_zero: bool = False) -> float:
    """Validate a size: finite, positive (or zero when allowed), integral when asked."""
    ok_type = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if ok_type and integer:
        ok_type = math.isfinite(value) and float(value).is_integer()
    if not ok_type or not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        kind = "an integer" if integer else "a number"
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name}={value!r} must be {kind} {bound}")
    return value


def _format(name: str, value: str) -> float:
    if value not in FORMAT_BITS:
        raise ValueError(f"{name}={value!r} is not a known format; allowed: {', '.join(FORMAT_BITS)}")
    return FORMAT_BITS[value]


def group_scale_overhead_bits(group_size: int, scale_bits: int = 16, zero_point_bits: int = 0) -> float:
    """Bits per weight spent on quantization scales: one scale (and zero point) per group of weights.

    A group of 128 INT4 weights sharing one FP16 scale adds 16/128 = 0.125 bits per weight.
    Chapter: *HBM and the memory hierarchy*, "What fits".
    """
    _positive("group_size", group_size, integer=True)
    _positive("scale_bits", scale_bits, integer=True)
    _positive("zero_point_bits", zero_point_bits, integer=True, allow_zero=True)
    return (scale_bits + zero_point_bits) / group_size


def weight_bytes(params: float, fmt: str = "bf16", overhead_bits: float = 0.0) -> float:
    """Bytes to store ``params`` weights in format ``fmt`` plus ``overhead_bits`` of scales per weight."""
    _positive("params", params)
    _positive("overhead_bits", overhead_bits, allow_zero=True)
    return params * (_format("fmt", fmt) + overhead_bits) / 8


@dataclass(frozen=True)
class TrainingRecipe:
    """Bytes per trained parameter kept on the GPU, by component (before activations)."""

    name: str
    weight_bytes: float  # the copy used in forward and backward (fp16/bf16 in mixed precision)
    grad_bytes: float  # gradients, same precision as the weights here
    master_bytes: float  # fp32 master copy of the weights (mixed precision only)
    optimizer_bytes: float  # optimizer state: Adam keeps momentum and variance, 4 + 4 bytes in fp32
    source: str  # bib key

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
    if recipe not in RECIPES:
        raise ValueError(f"recipe={recipe!r} is unknown; allowed: {', '.join(RECIPES)} or a TrainingRecipe")
    return RECIPES[recipe]


def zero_bytes_per_param(stage: int = 0, data_parallel: int = 1,
                         recipe: str | TrainingRecipe = MIXED_ADAM) -> dict[str, float]:
    """Bytes per parameter held by each GPU under ZeRO ``stage`` with ``data_parallel`` GPUs.

    Stage 1 divides master weights and optimizer state by N, stage 2 also the gradients, stage 3 also the
    weights (rajbhandari2020zero, Figure 1). Returns the four components. Chapter: *HBM and the memory
    hierarchy*, "Training state".
    """
    if stage not in ZERO_STAGES:
        raise ValueError(f"zero_stage={stage!r} is not a ZeRO stage; allowed: {', '.join(map(str, ZERO_STAGES))}")
    n = _positive("data_parallel", data_parallel, integer=True)
    r = _recipe(recipe)
    return {
        "weights": r.weight_bytes / (n if stage >= 3 else 1),
        "gradients": r.grad_bytes / (n if stage >= 2 else 1),
        "master_weights": r.master_bytes / (n if stage >= 1 else 1),
        "optimizer_state": r.optimizer_bytes / (n if stage >= 1 else 1),
    }


@dataclass(frozen=True)
class TransformerShape:
    """A decoder-only transformer as the capacity arithmetic needs it (no biases unless said)."""

    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int  # grouped-query attention: fewer key/value heads than query heads (Llama 2 70B: 8)
    ffn_hidden: int
    vocab: int
    max_context: int
    gated_mlp: bool = True  # SwiGLU: gate, up and down matrices (LLaMA); False: two matrices (GPT)
    tied_embeddings: bool = False  # the output projection reuses the input embedding (GPT-3)
    biases: bool = False  # biases on every linear layer (GPT-3)
    layer_norm: bool = False  # LayerNorm has weight and bias (GPT-3); RMSNorm only a weight (LLaMA)
    learned_positions: bool = False  # a learned position-embedding table (GPT-3); LLaMA uses RoPE
    source: str = ""  # bib key of the dimensions

    def __post_init__(self) -> None:
        for f in ("layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "max_context"):
            _positive(f, getattr(self, f), integer=True)
        if self.hidden % self.heads:
            raise ValueError(f"hidden={self.hidden} is not a multiple of heads={self.heads}")
        if self.heads % self.kv_heads:
            raise ValueError(f"heads={self.heads} is not a multiple of kv_heads={self.kv_heads}")

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    @property
    def kv_dim(self) -> int:
        return self.kv_heads * self.head_dim

    def linear_shapes(self) -> list[tuple[str, int, int]]:
        """(name, inputs, outputs) of the linear layers of one transformer layer."""
        h, kv, f = self.hidden, self.kv_dim, self.ffn_hidden
        out = [("q", h, h), ("k", h, kv), ("v", h, kv), ("o", h, h)]
        out += [("gate", h, f), ("up", h, f), ("down", f, h)] if self.gated_mlp else [("up", h, f), ("down", f, h)]
        return out

    @property
    def params(self) -> int:
        """Parameter count: embeddings, every layer's linear weights (+ biases) and norms, final norm."""
        norm = self.hidden * (2 if self.layer_norm else 1)
        per_layer = sum(i * o + (o if self.biases else 0) for _, i, o in self.linear_shapes()) + 2 * norm
        emb = self.vocab * self.hidden + (self.max_context * self.hidden if self.learned_positions else 0)
        unemb = 0 if self.tied_embeddings else self.vocab * self.hidden
        return emb + unemb + self.layers * per_layer + norm

    def lora_params(self, rank: int, targets: Sequence[str] | None = None) -> int:
        """Trainable LoRA parameters: rank x (inputs + outputs) per adapted matrix, every layer.

        ``targets`` defaults to every linear layer (QLoRA's choice, dettmers2023qlora).
        """
        _positive("lora_rank", rank, integer=True)
        names = [n for n, _, _ in self.linear_shapes()]
        targets = names if targets is None else list(targets)
        unknown = sorted(set(targets) - set(names))
        if unknown:
            raise ValueError(f"targets={unknown} are not linear layers of {self.name}; allowed: {', '.join(names)}")
        return self.layers * sum(rank * (i + o) for n, i, o in self.linear_shapes() if n in targets)

    def kv_bytes_per_token(self, fmt: str = "bf16") -> float:
        """Key and value vectors of one token in every layer: 2 x layers x kv_heads x head_dim elements."""
        return 2 * self.layers * self.kv_dim * _format("kv_cache", fmt) / 8


#: Model shapes used by the chapter. LLaMA 1 dimensions: touvron2023llama Table 2; Llama 2 dimensions
#: (FFN sizes, 8 KV heads of the 70B) from the released configuration files (metallama2023configs), the
#: grouped-query attention with 8 KV projections in touvron2023llama2; GPT-3: brown2020gpt3 Table 2.1.
MODELS: Mapping[str, TransformerShape] = MappingProxyType({m.name: m for m in (
    TransformerShape("llama2-7b", 32, 4096, 32, 32, 11008, 32000, 4096, source="metallama2023configs"),
    TransformerShape("llama2-13b", 40, 5120, 40, 40, 13824, 32000, 4096, source="metallama2023configs"),
    TransformerShape("llama-33b", 60, 6656, 52, 52, 17920, 32000, 2048, source="touvron2023llama"),
    TransformerShape("llama2-70b", 80, 8192, 64, 8, 28672, 32000, 4096, source="metallama2023configs"),
    TransformerShape("gpt3-175b", 96, 12288, 96, 96, 4 * 12288, 50257, 2048, gated_mlp=False,
                     tied_embeddings=True, biases=True, layer_norm=True, learned_positions=True,
                     source="brown2020gpt3"),
)})
#: The size classes of the chapter's tables ("30B" is LLaMA's 32.5B model).
SIZE_CLASSES: Mapping[str, str] = MappingProxyType(
    {"7B": "llama2-7b", "13B": "llama2-13b", "30B": "llama-33b", "70B": "llama2-70b"})


def _shape(model: str | TransformerShape) -> TransformerShape:
    if isinstance(model, TransformerShape):
        return model
    key = SIZE_CLASSES.get(model, model)
    if key not in MODELS:
        raise ValueError(f"model={model!r} is unknown; allowed: {', '.join([*SIZE_CLASSES, *MODELS])} "
                         "or a TransformerShape")
    return MODELS[key]


def kv_cache_bytes(model: str | TransformerShape, context: int, batch: int = 1, fmt: str = "bf16") -> float:
    """KV cache of ``batch`` sequences of ``context`` tokens: 2 x layers x kv_heads x head_dim x tokens x bytes."""
    _positive("context", context, integer=True, allow_zero=True)
    _positive("batch", batch, integer=True)
    return _shape(model).kv_bytes_per_token(fmt) * context * batch


_RECOMPUTE = ("none", "selective", "full")


def activation_bytes(model: str | TransformerShape, seq_len: int, micro_batch: int = 1,
                     recompute: str = "full") -> float:
    """Activation memory of one training micro-batch (16-bit activations, no tensor parallelism).

    Per layer, korthikanti2022reducing counts s·b·h·(34 + 5·a·s/h) bytes without recomputation and
    34·s·b·h with selective recomputation (attention scores recomputed); with full recomputation only each
    layer's input (2·s·b·h) is kept, plus one layer's full activations while it is recomputed. The fp32
    logits of the loss add 4·s·b·V. The constants were derived for GPT layers (4h MLP, one key/value head
    per query head); for LLaMA's SwiGLU and grouped-query attention they are an approximation.
    """
    m = _shape(model)
    s = _positive("seq_len", seq_len, integer=True)
    b = _positive("micro_batch", micro_batch, integer=True)
    if recompute not in _RECOMPUTE:
        raise ValueError(f"recompute={recompute!r} is not allowed; allowed: {', '.join(_RECOMPUTE)}")
    full_layer = s * b * m.hidden * (34 + 5 * m.heads * s / m.hidden)
    if recompute == "none":
        layers = m.layers * full_layer
    elif recompute == "selective":
        layers = m.layers * 34 * s * b * m.hidden
    else:
        layers = m.layers * 2 * s * b * m.hidden + full_layer
    return layers + 4 * s * b * m.vocab


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

    def headroom_bytes(self, gpu: str | specs.GPUSpec, reserve_bytes: float = 0.0) -> float:
        """Capacity left on ``gpu`` (NVIDIA's decimal capacity minus ``reserve_bytes``); negative: no fit."""
        _positive("reserve_bytes", reserve_bytes, allow_zero=True)
        return specs.get(gpu).memory_bytes - reserve_bytes - self.total_bytes

    def fits(self, gpu: str | specs.GPUSpec, reserve_bytes: float = 0.0) -> bool:
        """True when the per-GPU total fits in ``gpu`` with ``reserve_bytes`` kept free."""
        return self.headroom_bytes(gpu, reserve_bytes) >= 0

    def gpus_needed(self, gpu: str | specs.GPUSpec, reserve_bytes: float = 0.0) -> int:
        """GPUs needed to hold these bytes split evenly across them (ideal model parallelism, no copies)."""
        return gpus_to_hold(self.total_bytes, gpu, reserve_bytes)

    def table(self, unit: float = GB) -> list[tuple[str, float]]:
        """(component, amount in ``unit``) rows plus the total, for printing."""
        rows = [(k, v / unit) for k, v in self.breakdown.items()]
        return rows + [("total", self.total_bytes / unit)]

    def to_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "params": self.params, "breakdown": dict(self.breakdown),
                "total_bytes": self.total_bytes, "data_parallel": self.data_parallel,
                "zero_stage": self.zero_stage, "assumptions": list(self.assumptions)}


_MODES = ("inference", "training")
_FINETUNE = ("full", "lora", "qlora")


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
    lora_rank: int = 16,
    adapter_recipe: str | TrainingRecipe = MIXED_ADAM,
    data_parallel: int = 1,
    zero_stage: int = 0,
    seq_len: int = 0,
    micro_batch: int = 1,
    recompute: str = "full",
) -> MemoryEstimate:
    """What one GPU must hold to serve or to train a model, component by component, in bytes.

    ``params`` is a parameter count, a model name of :data:`MODELS` (or a size class "7B", "13B", "30B",
    "70B") or a :class:`TransformerShape`; the KV cache, LoRA adapters and activations need a shape.

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

    Bad input (negative sizes, unknown formats, modes, stages) raises ``ValueError`` naming the field.
    Chapter: *HBM and the memory hierarchy*, "What fits".
    """
    if mode not in _MODES:
        raise ValueError(f"mode={mode!r} is not allowed; allowed: {', '.join(_MODES)}")
    shape = None
    if isinstance(params, (str, TransformerShape)):
        shape = _shape(params)
        n_params = float(shape.params)
    else:
        n_params = float(_positive("params", params))
    _format("weights", weights)
    _format("kv_cache", kv_cache)
    _positive("weight_overhead_bits", weight_overhead_bits, allow_zero=True)
    _positive("context", context, integer=True, allow_zero=True)
    _positive("batch", batch, integer=True)
    _positive("data_parallel", data_parallel, integer=True)
    _positive("seq_len", seq_len, integer=True, allow_zero=True)
    _positive("micro_batch", micro_batch, integer=True)
    if zero_stage not in ZERO_STAGES:
        raise ValueError(f"zero_stage={zero_stage!r} is not a ZeRO stage; allowed: 0, 1, 2, 3")
    if recompute not in _RECOMPUTE:
        raise ValueError(f"recompute={recompute!r} is not allowed; allowed: {', '.join(_RECOMPUTE)}")
    if finetune not in _FINETUNE:
        raise ValueError(f"finetune={finetune!r} is not allowed; allowed: {', '.join(_FINETUNE)}")
    name = shape.name if shape else f"{n_params / 1e9:.3g}B parameters"
    assumptions: list[str] = []
    breakdown: dict[str, float] = {}

    if mode == "inference":
        if context and shape is None:
            raise ValueError("context > 0 needs the model's shape: pass a model name or a TransformerShape "
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
            raise ValueError(f"finetune={finetune!r} needs the model's shape to size the adapters: pass a model "
                             "name or a TransformerShape as params")
        base_fmt, overhead = (("nf4", NF4_DOUBLE_QUANT_OVERHEAD_BITS) if finetune == "qlora"
                              else (weights, weight_overhead_bits))
        ar = _recipe(adapter_recipe)
        lora = shape.lora_params(lora_rank)
        breakdown["frozen_weights"] = n_params * (FORMAT_BITS[base_fmt] + overhead) / 8
        per = zero_bytes_per_param(zero_stage, data_parallel, ar)
        breakdown["adapter_state"] = lora * sum(per.values())
        assumptions.append(f"{name}: {'QLoRA' if finetune == 'qlora' else 'LoRA'} fine-tuning, base "
                           f"weights frozen in {base_fmt} ({FORMAT_BITS[base_fmt] + overhead:.4g} bits per weight)")
        assumptions.append(f"rank-{lora_rank} adapters on every linear layer: {lora / 1e6:.0f}M parameters "
                           f"trained with {ar.name} ({ar.bytes_per_param:g} bytes each)")
    if seq_len:
        if shape is None:
            raise ValueError("seq_len > 0 needs the model's shape for activations: pass a model name or a "
                             "TransformerShape as params")
        breakdown["activations"] = activation_bytes(shape, seq_len, micro_batch, recompute)
        assumptions.append(f"activations: micro-batch {micro_batch} x {seq_len} tokens, {recompute} "
                           "recomputation (korthikanti2022reducing, approximate for LLaMA layers)")
    else:
        assumptions.append("activations not included (seq_len=0)")
    return MemoryEstimate("training", n_params, breakdown, data_parallel, zero_stage, tuple(assumptions))


def gpus_to_hold(total_bytes: float, gpu: str | specs.GPUSpec, reserve_bytes: float = 0.0) -> int:
    """Smallest number of ``gpu`` whose capacity (each minus ``reserve_bytes``) holds ``total_bytes``."""
    _positive("total_bytes", total_bytes, allow_zero=True)
    _positive("reserve_bytes", reserve_bytes, allow_zero=True)
    usable = specs.get(gpu).memory_bytes - reserve_bytes
    if usable <= 0:
        raise ValueError(f"reserve_bytes={reserve_bytes!r} leaves no capacity on {specs.get(gpu).name}")
    return max(1, math.ceil(total_bytes / usable - 1e-12))


def max_batch(model: str | TransformerShape, gpu: str | specs.GPUSpec, *, context: int, weights: str = "bf16",
              weight_overhead_bits: float = 0.0, kv_cache: str = "bf16", reserve_bytes: float = 0.0) -> int:
    """Most sequences of ``context`` tokens whose KV cache fits beside the weights (0: not even one)."""
    _positive("context", context, integer=True)
    est = model_memory(model, weights=weights, weight_overhead_bits=weight_overhead_bits)
    free = est.headroom_bytes(gpu, reserve_bytes)
    per_seq = kv_cache_bytes(model, context, 1, kv_cache)
    return max(0, math.floor(free / per_seq)) if free > 0 else 0


def max_trainable_params(gpu: str | specs.GPUSpec, recipe: str | TrainingRecipe = MIXED_ADAM,
                         reserve_bytes: float = 0.0) -> float:
    """Largest model whose full training state (no activations) fits one ``gpu``: capacity / bytes per param."""
    _positive("reserve_bytes", reserve_bytes, allow_zero=True)
    return (specs.get(gpu).memory_bytes - reserve_bytes) / _recipe(recipe).bytes_per_param


def min_gpus_zero(params: float, gpu: str | specs.GPUSpec, stage: int = 3,
                  recipe: str | TrainingRecipe = MIXED_ADAM, reserve_bytes: float = 0.0,
                  max_gpus: int = 1_000_000) -> int | None:
    """Fewest data-parallel GPUs for which ZeRO ``stage`` brings the training state under capacity.

    Returns None when no number of GPUs is enough (stages 0-2 keep unpartitioned parts on every GPU).
    """
    _positive("params", params)
    cap = specs.get(gpu).memory_bytes - _positive("reserve_bytes", reserve_bytes, allow_zero=True)
    r = _recipe(recipe)
    if stage not in ZERO_STAGES:
        raise ValueError(f"stage={stage!r} is not a ZeRO stage; allowed: 0, 1, 2, 3")
    one, two = zero_bytes_per_param(stage, 1, r), zero_bytes_per_param(stage, 2, r)
    fixed = params * sum(v for k, v in one.items() if two[k] == v)  # parts every GPU keeps whole
    shrinking = params * sum(v for k, v in one.items() if two[k] != v)  # parts divided by the GPU count
    if fixed >= cap:
        return None
    n = max(1, math.ceil(shrinking / (cap - fixed) - 1e-12)) if shrinking else 1
    return n if n <= max_gpus else None


# =======================================================================================================
# 3. Roofline of memory-bound work, and LLM decoding
# =======================================================================================================


@dataclass(frozen=True)
class Op:
    """One operation with its FLOPs and the DRAM bytes it must move at least (each operand once)."""

    name: str
    flops: float
    bytes: float
    description: str

    @property
    def intensity(self) -> float:
        """Arithmetic intensity in FLOP per byte of DRAM traffic."""
        return self.flops / self.bytes


def roofline_ops(element_bytes: float = 2.0) -> list[Op]:
    """Common operations of a transformer with their arithmetic intensity (16-bit elements by default).

    FLOP counts follow the usual conventions: a multiply-add is 2 FLOP, an exponential 1; element-wise
    ops move each operand once. Sizes are those of a 70B-class layer (h = 8192) where it matters.
    Chapter: *HBM and the memory hierarchy*, "Roofline for memory-bound work".
    """
    b = _positive("element_bytes", element_bytes)
    n, h, tokens, ctx = 2**28, 8192, 4096, 4096
    return [
        Op("vector add", n, 3 * n * b, "z = x + y: 1 FLOP, 2 loads and 1 store per element"),
        Op("triad", 2 * n, 3 * n * b, "a = b + s*c: 2 FLOP, 2 loads, 1 store per element"),
        Op("RMSNorm", 4 * tokens * h, 2 * tokens * h * b, "square, sum, scale, weight: ~4 FLOP per element, "
                                                          "read x and write y"),
        Op("softmax", 5 * tokens * h, 2 * tokens * h * b, "max, subtract, exp, sum, divide: ~5 FLOP per element"),
        Op("GEMV (decode, batch 1)", 2 * h * h, (h * h + 2 * h) * b, "8192x8192 weight times one vector: "
                                                                      "every weight read once per token"),
        Op("attention decode", 4 * ctx * h, 2 * ctx * h * b, "one query token against 4096 cached keys and "
                                                             "values (multi-head)"),
        Op("GEMM, batch 16 tokens", 2 * 16 * h * h, (h * h + 2 * 16 * h) * b, "16 tokens share each weight read"),
        Op("GEMM 4096^3", 2 * 4096**3, 3 * 4096**2 * b, "square matrix product, each matrix moved once"),
    ]


def attainable_flops(intensity: float, gpu: str | specs.GPUSpec = "A100-SXM4-80GB", precision: str = "bf16",
                     bytes_per_s: float | None = None) -> float:
    """The roofline: min(peak FLOP/s, intensity x DRAM bandwidth) (williams2009roofline)."""
    _positive("intensity", intensity)
    s = specs.get(gpu)
    bw = s.hbm_bytes_per_s if bytes_per_s is None else _positive("bytes_per_s", bytes_per_s)
    return min(s.peak_flops(precision), intensity * bw)


#: GPUs of the decoding table.
DECODE_GPUS: tuple[str, ...] = ("A100-SXM4-40GB", "A100-SXM4-80GB", "RTX-A6000", "RTX-A2000-12GB",
                                "H100-SXM5-80GB", "H200-SXM-141GB")


@dataclass(frozen=True)
class DecodeBound:
    """Upper bound on LLM decoding speed from the roofline. See :func:`decode_bound`."""

    model: str
    gpu: str
    weights: str
    batch: int
    context: int
    weight_bytes: float  # read once per decoding step, shared by the batch
    kv_bytes: float  # KV cache read per step, all sequences
    bytes_per_step: float
    memory_time_s: float  # bytes_per_step / bandwidth
    compute_time_s: float  # FLOPs of the step / dense peak of compute_precision
    tokens_per_s: float  # batch / max(memory, compute time): tokens of all sequences together
    fits: bool  # weights + KV cache within the GPU's capacity (no reserve)

    @property
    def bound(self) -> str:
        return "memory" if self.memory_time_s >= self.compute_time_s else "compute"

    @property
    def tokens_per_s_per_sequence(self) -> float:
        return self.tokens_per_s / self.batch


def decode_bound(model: str | TransformerShape, gpu: str | specs.GPUSpec = "A100-SXM4-80GB", *,
                 weights: str = "fp16", weight_overhead_bits: float = 0.0, batch: int = 1, context: int = 0,
                 kv_cache: str = "fp16", compute_precision: str = "fp16",
                 bytes_per_s: float | None = None) -> DecodeBound:
    """Tokens per second an LLM can at most generate: one decoding step reads every weight once.

    step time = max(bytes / bandwidth, FLOPs / peak) with bytes = weights + KV cache of ``batch``
    sequences of ``context`` tokens and FLOPs = batch x (2 x params + 4 x layers x context x hidden).
    Quantized weights are assumed dequantized to ``compute_precision`` for the math (the usual decoding
    kernels). ``bytes_per_s`` defaults to the datasheet DRAM bandwidth: the bound is unreachable, real
    kernels reach a fraction of it. Chapter: *HBM and the memory hierarchy*, "LLM decoding".
    """
    m = _shape(model)
    s = specs.get(gpu)
    _positive("batch", batch, integer=True)
    _positive("context", context, integer=True, allow_zero=True)
    wb = weight_bytes(m.params, weights, weight_overhead_bits)
    kv = kv_cache_bytes(m, context, batch, kv_cache)
    bw = s.hbm_bytes_per_s if bytes_per_s is None else _positive("bytes_per_s", bytes_per_s)
    flops = batch * (2 * m.params + 4 * m.layers * context * m.hidden)
    t_mem = (wb + kv) / bw
    t_comp = flops / s.peak_flops(compute_precision)
    return DecodeBound(m.name, s.name, weights, batch, context, wb, kv, wb + kv, t_mem, t_comp,
                       batch / max(t_mem, t_comp), wb + kv <= s.memory_bytes)


def decode_table(models: Iterable[str] = ("7B", "13B", "30B", "70B"), gpus: Iterable[str] = DECODE_GPUS,
                 formats: Iterable[str] = ("fp16", "int8", "int4"), **kwargs: Any) -> list[DecodeBound]:
    """:func:`decode_bound` for every (model, GPU, weight format) combination, in that nesting order."""
    return [decode_bound(m, g, weights=f, **kwargs) for m in models for g in gpus for f in formats]


def compare_gpus(a: str | specs.GPUSpec = "A100-SXM4-80GB", b: str | specs.GPUSpec = "A100-SXM4-40GB",
                 precision: str = "bf16") -> dict[str, float]:
    """Ratios a/b of dense peak compute, DRAM bandwidth, capacity and L2 (the 40 GB vs 80 GB question)."""
    sa, sb = specs.get(a), specs.get(b)
    return {"compute": sa.peak_flops(precision) / sb.peak_flops(precision),
            "bandwidth": sa.hbm_bytes_per_s / sb.hbm_bytes_per_s,
            "capacity": sa.memory_bytes / sb.memory_bytes, "l2": sa.l2_bytes / sb.l2_bytes}


# =======================================================================================================
# 4. The L2 working-set curve: model, knee, published sweeps
# =======================================================================================================


def sweep_footprints(l2_bytes: int, points: int = 24, start_bytes: int = 256 * KiB, stop_factor: float = 4.0,
                     align: int = 4 * KiB) -> list[int]:
    """Log-spaced footprints from ``start_bytes`` to ``stop_factor`` x L2, multiples of ``align``, unique."""
    _positive("l2_bytes", l2_bytes, integer=True)
    _positive("points", points, integer=True)
    _positive("start_bytes", start_bytes, integer=True)
    _positive("align", align, integer=True)
    stop = _positive("stop_factor", stop_factor) * l2_bytes
    if stop <= start_bytes:
        raise ValueError(f"stop_factor={stop_factor!r} x l2_bytes={l2_bytes} must exceed start_bytes={start_bytes}")
    if points == 1:
        return [max(align, round(start_bytes / align) * align)]
    ratio = (stop / start_bytes) ** (1 / (points - 1))
    out = sorted({max(align, round(start_bytes * ratio**i / align) * align) for i in range(points)})
    return out


def _l2_bandwidth(s: specs.GPUSpec) -> tuple[float, str]:
    """Theoretical L2 read bandwidth, or an assumption when NVIDIA publishes no bytes/clock."""
    if s.l2_bytes_per_s is not None:
        return s.l2_bytes_per_s, f"L2 {s.l2_bytes_per_s / 1e12:.2f} TB/s: {s.l2_read_bytes_per_clk} B/clk x boost clock"
    ref = specs.get("A100-SXM4-80GB")
    per_sm_clk = ref.l2_read_bytes_per_clk / ref.sm_count
    bw = per_sm_clk * s.sm_count * s.boost_clock_hz
    return bw, (f"L2 {bw / 1e12:.2f} TB/s ASSUMED: no published bytes/clock, GA100's {per_sm_clk:.1f} B/clk per SM "
                f"scaled to {s.sm_count} SMs at {s.boost_clock_hz / 1e9:.2f} GHz")


def l2_sweep_model(footprints: Sequence[float], gpu: str | specs.GPUSpec = "A100-SXM4-80GB", *,
                   policy: str = "lru", l2_bytes: float | None = None, l2_bytes_per_s: float | None = None,
                   dram_bytes_per_s: float | None = None) -> tuple[list[float], list[str]]:
    """Model of read bandwidth versus footprint when the same footprint is read over and over.

    A fraction ``hit`` of the reads is served by L2 at ``l2_bytes_per_s``, the rest by DRAM:
    time per byte = hit / B_L2 + (1 - hit) / B_DRAM. ``policy="lru"``: an ideal least-recently-used
    cache, hit = 1 up to the capacity and 0 beyond (a cyclic sweep evicts every line before its reuse);
    ``"random"``: random replacement, hit ≈ capacity / footprint beyond it. Returns (bytes/s per footprint,
    assumptions). Chapter: *HBM and the memory hierarchy*, "The L2 working-set sweep".
    """
    s = specs.get(gpu)
    if policy not in ("lru", "random"):
        raise ValueError(f"policy={policy!r} is not allowed; allowed: 'lru', 'random'")
    cap = s.l2_bytes if l2_bytes is None else _positive("l2_bytes", l2_bytes)
    notes = [f"L2 capacity {cap / MiB:.0f} MiB" + (" (catalogue)" if l2_bytes is None else " (given)")]
    if l2_bytes_per_s is None:
        b_l2, note = _l2_bandwidth(s)
        notes.append(note)
    else:
        b_l2 = _positive("l2_bytes_per_s", l2_bytes_per_s)
        notes.append(f"L2 {b_l2 / 1e12:.2f} TB/s (given)")
    b_dram = s.hbm_bytes_per_s if dram_bytes_per_s is None else _positive("dram_bytes_per_s", dram_bytes_per_s)
    notes.append(f"DRAM {b_dram / 1e12:.2f} TB/s" + (" (datasheet)" if dram_bytes_per_s is None else " (given)"))
    notes.append(f"replacement policy: {policy}")
    out = []
    for f in footprints:
        f = _positive("footprint", f)
        hit = 1.0 if f <= cap else (0.0 if policy == "lru" else cap / f)
        out.append(1.0 / (hit / b_l2 + (1.0 - hit) / b_dram))
    return out, notes


def find_knee(footprints: Sequence[float], bytes_per_s: Sequence[float], l2_bytes: float,
              tolerance: float = 0.25) -> dict[str, Any]:
    """Where a working-set curve falls from its L2 plateau to its DRAM plateau.

    The L2 plateau is the median bandwidth of footprints <= L2/4, the DRAM plateau that of footprints
    >= 2 x L2; the knee is the footprint where the curve first crosses their mean (interpolated in log
    footprint). ``visible`` needs the L2 plateau to be at least 1.3x the DRAM plateau; ``within`` says
    whether the knee lies within ``tolerance`` of ``l2_bytes``. Chapter: *HBM and the memory hierarchy*.
    """
    import numpy as np

    f = np.asarray(footprints, dtype=float)
    y = np.asarray(bytes_per_s, dtype=float)
    if f.ndim != 1 or f.shape != y.shape or f.size < 3:
        raise ValueError("footprints and bytes_per_s must be 1-D sequences of the same length (>= 3)")
    if np.any(~np.isfinite(f)) or np.any(f <= 0) or np.any(~np.isfinite(y)) or np.any(y <= 0):
        raise ValueError("footprints and bytes_per_s must be finite and positive")
    _positive("l2_bytes", l2_bytes)
    order = np.argsort(f)
    f, y = f[order], y[order]
    low = y[f <= l2_bytes / 4] if np.any(f <= l2_bytes / 4) else y[:3]
    high = y[f >= 2 * l2_bytes] if np.any(f >= 2 * l2_bytes) else y[-2:]
    l2_plateau, dram_plateau = float(np.median(low)), float(np.median(high))
    result: dict[str, Any] = {"l2_plateau_bytes_per_s": l2_plateau, "dram_plateau_bytes_per_s": dram_plateau,
                              "knee_bytes": None, "ratio_to_l2": None, "visible": False, "within": False,
                              "l2_bytes": float(l2_bytes), "tolerance": tolerance}
    if l2_plateau < 1.3 * dram_plateau:
        return result
    mid = 0.5 * (l2_plateau + dram_plateau)
    for i in range(1, f.size):
        if y[i] < mid <= y[i - 1]:
            t = (y[i - 1] - mid) / (y[i - 1] - y[i])
            knee = float(np.exp(np.log(f[i - 1]) + t * (np.log(f[i]) - np.log(f[i - 1]))))
            result.update(knee_bytes=knee, ratio_to_l2=knee / l2_bytes, visible=True,
                          within=abs(knee / l2_bytes - 1) <= tolerance)
            break
    return result


# Published working-set sweeps: gpu-benches `gpu-l2-cache` (ernstgpubenches), files
# gpu-l2-cache/a100_80.txt and gpu-l2-cache/h200.txt at commit 3088b33. Each row: data set in kB
# (1 kB = 1024 bytes, as the program prints it), bandwidth in GB/s from the fastest of 7 runs.
# 100000 thread blocks each read a 512 kB chunk; the data set is the number of distinct chunks x 512 kB.
_A100_80_SWEEP = (
    (1536, 4315.9), (2048, 5481.9), (2560, 5415.1), (3072, 5420.1), (3584, 5406.6), (4096, 5466.9),
    (4608, 5428.5), (5120, 5387.8), (5632, 5430.8), (6144, 5422.5), (6656, 5364.1), (7168, 5343.4),
    (7680, 5381.7), (8192, 5436.5), (8704, 5391.1), (9216, 5383.4), (9728, 5349.9), (10240, 5264.0),
    (11264, 5417.9), (12288, 5434.7), (13312, 5421.8), (14336, 5402.9), (15360, 5405.0), (16896, 5447.7),
    (18432, 5435.9), (19968, 5325.4), (21504, 5374.0), (23552, 5427.4), (25600, 5376.2), (28160, 5170.5),
    (30720, 3999.5), (33792, 3621.8), (36864, 3004.0), (40448, 2462.0), (44032, 2188.0), (48128, 2026.5),
    (52736, 1945.5), (57856, 1915.4), (63488, 1894.6), (69632, 1885.6), (76288, 1879.2), (83456, 1876.9),
    (91648, 1875.4), (100352, 1866.9), (110080, 1879.1), (120832, 1869.3), (132608, 1865.3), (145408, 1859.0),
    (159744, 1868.5), (175616, 1857.1), (193024, 1856.0), (211968, 1850.8), (232960, 1842.5), (256000, 1838.4),
    (281600, 1829.4), (309760, 1823.6), (340480, 1876.2), (374272, 1874.2), (411648, 1804.9), (452608, 1788.2),
    (497664, 1779.5), (547328, 1770.1), (601600, 1762.5), (661504, 1748.2), (727552, 1730.2), (800256, 1737.0),
    (880128, 1739.4), (967680, 1734.5), (1064448, 1727.5), (1170432, 1730.5), (1287168, 1731.1),
    (1415680, 1730.2), (1556992, 1729.7), (1712640, 1730.3), (1883648, 1728.6), (2071552, 1732.1),
    (2278400, 1734.9), (2506240, 1729.4), (2756608, 1730.3), (3032064, 1731.1), (3335168, 1733.6),
    (3668480, 1731.0), (4035072, 1731.7), (4438528, 1732.0), (4881920, 1732.3),
)
_H200_SWEEP = (
    (1536, 13526.6), (2048, 11745.0), (2560, 11385.1), (3072, 11049.3), (3584, 10706.6), (4096, 10619.2),
    (4608, 10544.9), (5120, 10538.3), (5632, 10325.0), (6144, 10260.0), (6656, 10236.1), (7168, 10231.8),
    (7680, 10238.0), (8192, 10251.9), (8704, 10074.8), (9216, 10042.1), (9728, 9916.7), (10240, 10084.5),
    (11264, 9914.4), (12288, 9716.0), (13312, 9834.6), (14336, 9836.4), (15360, 9920.3), (16896, 9765.2),
    (18432, 9774.3), (19968, 9885.0), (21504, 9739.7), (23552, 9766.9), (25600, 9675.0), (28160, 9780.0),
    (30720, 9769.1), (33792, 9628.8), (36864, 9477.3), (40448, 9666.0), (44032, 9105.3), (48128, 7542.5),
    (52736, 6467.1), (57856, 5053.8), (63488, 4463.9), (69632, 4201.3), (76288, 4017.5), (83456, 3946.8),
    (91648, 3916.1), (100352, 3903.5), (110080, 3892.8), (120832, 3889.9), (132608, 3887.9), (145408, 3888.2),
    (159744, 3887.9), (175616, 3888.2), (193024, 3888.5), (211968, 3887.3), (232960, 3888.6), (256000, 3887.6),
    (281600, 3888.2), (309760, 3888.5), (340480, 3887.7), (374272, 3887.3), (411648, 3888.8), (452608, 3888.6),
    (497664, 3887.7), (547328, 3889.7), (601600, 3888.2), (661504, 3887.6), (727552, 3888.6), (800256, 3888.3),
    (880128, 3887.9), (967680, 3887.9), (1064448, 3888.8), (1170432, 3888.5), (1287168, 3888.6),
    (1415680, 3888.5), (1556992, 3888.8), (1712640, 3888.2), (1883648, 3888.5), (2071552, 3888.5),
    (2278400, 3888.5), (2506240, 3887.9), (2756608, 3888.5), (3032064, 3888.2), (3335168, 3888.5),
    (3668480, 3888.6), (4035072, 3887.7), (4438528, 3888.8), (4881920, 3888.2),
)

#: Published L2 working-set sweeps, keyed by catalogue name; ``l2_bytes`` is what the device reports
#: (an H200 reports 60 MiB, more than the 50 MB of the H100 datasheet).
PUBLISHED_L2_SWEEPS: Mapping[str, Mapping[str, Any]] = MappingProxyType({
    "A100-SXM4-80GB": MappingProxyType({"rows_kib_gbps": _A100_80_SWEEP, "l2_bytes": 40 * MiB,
                                        "source": "ernstgpubenches", "file": "gpu-l2-cache/a100_80.txt"}),
    "H200-SXM-141GB": MappingProxyType({"rows_kib_gbps": _H200_SWEEP, "l2_bytes": 60 * MiB,
                                        "source": "ernstgpubenches", "file": "gpu-l2-cache/h200.txt"}),
})

#: Published STREAM-like results at full occupancy, bytes/s counting every load and store stream:
#: gpu-benches `cuda-stream/a100_80.txt` (commit cdcc732), last row (1024 threads per block, 100%).
#: Their kernels: init A[i] = c (our "write"), read = sum of A, scale A = B*c, triad A = B + c*C.
PUBLISHED_STREAM: Mapping[str, Mapping[str, float]] = MappingProxyType({
    "A100-SXM4-80GB": MappingProxyType({"write": 1880e9, "read": 1769e9, "scale": 1732e9, "triad": 1759e9}),
})

#: ZeRO paper, Figure 1: per-GPU model-state memory of a 7.5B-parameter model on 64 data-parallel GPUs
#: with K = 12 (mixed-precision Adam), in GB (rajbhandari2020zero). Our validation target.
ZERO_PAPER_FIGURE1: Mapping[str, Any] = MappingProxyType({
    "params": 7.5e9, "data_parallel": 64, "per_gpu_gb": MappingProxyType({0: 120.0, 1: 31.4, 2: 16.6, 3: 1.9}),
    "source": "rajbhandari2020zero"})


def published_l2_sweep(gpu: str) -> tuple[list[float], list[float], float, str]:
    """(footprints in bytes, bandwidth in bytes/s, device-reported L2 bytes, bib key) of a published sweep."""
    name = specs.get(gpu).name
    if name not in PUBLISHED_L2_SWEEPS:
        raise ValueError(f"gpu={gpu!r} has no published sweep here; available: {', '.join(PUBLISHED_L2_SWEEPS)}")
    d = PUBLISHED_L2_SWEEPS[name]
    rows = d["rows_kib_gbps"]
    return [k * KiB for k, _ in rows], [g * 1e9 for _, g in rows], float(d["l2_bytes"]), d["source"]


def validate_models() -> tuple[str, bool]:
    """Check this chapter's models against published figures; ``(report, passed)`` for ``ampere validate``.

    Held-out targets (never used to set a constant): datasheet bandwidths versus the interface derivation,
    the ZeRO paper's Figure 1, the parameter counts of GPT-3 and LLaMA, and the knee of published L2 sweeps.
    """
    lines, ok = [], True

    def check(label: str, passed: bool, detail: str) -> None:
        nonlocal ok
        ok &= passed
        lines.append(f"{'ok  ' if passed else 'FAIL'} {label}: {detail}")

    for row in bandwidth_table(specs.names()):
        check(f"bandwidth {row['gpu']}", abs(row["ratio"] - 1) <= 0.005,
              f"derived {row['derived_bytes_per_s'] / 1e9:.1f} GB/s vs datasheet "
              f"{row['datasheet_bytes_per_s'] / 1e9:.1f} GB/s" + (f" ({row['note']})" if row["note"] else ""))
    z = ZERO_PAPER_FIGURE1
    for stage, gb in z["per_gpu_gb"].items():
        ours = sum(zero_bytes_per_param(stage, z["data_parallel"]).values()) * z["params"] / GB
        check(f"ZeRO stage {stage}", abs(ours - gb) <= 0.05 + 1e-9, f"{ours:.2f} GB vs {gb} GB in Figure 1")
    for name, published in (("gpt3-175b", 175.0e9), ("llama-33b", 32.5e9)):
        p = MODELS[name].params
        check(f"parameters {name}", abs(p / published - 1) <= 0.005,
              f"{p / 1e9:.2f}B from the shape vs {published / 1e9:.1f}B published")
    for gpu in PUBLISHED_L2_SWEEPS:
        f, y, l2, _ = published_l2_sweep(gpu)
        k = find_knee(f, y, l2)
        check(f"L2 knee {gpu}", bool(k["within"]),
              f"knee at {k['knee_bytes'] / MiB:.1f} MiB = {k['ratio_to_l2']:.2f} x the reported L2"
              if k["visible"] else "no visible knee")
    return "\n".join(lines), ok


# =======================================================================================================
# 5. Measurements (torch imported inside; every function runs on the CPU with tiny sizes)
# =======================================================================================================


@dataclass(frozen=True)
class Kernel:
    """A bandwidth kernel: what it runs and which arrays it reads and writes per element."""

    name: str
    reads: int  # arrays read per element
    writes: int  # arrays written per element
    engine: str  # "SM" (a kernel on the SMs) or "memcpy" (cudaMemcpyAsync, the driver's copy path)
    description: str

    @property
    def arrays(self) -> int:
        return self.reads + self.writes


#: The STREAM-like kernels, each a single PyTorch call. Bytes are counted from ``reads``/``writes``:
#: a copy reads N and writes N bytes (the STREAM convention); nvbandwidth counts N for a copy.
KERNELS: Mapping[str, Kernel] = MappingProxyType({k.name: k for k in (
    Kernel("read", 1, 0, "SM", "torch.sum(x): one load stream, a scalar result"),
    Kernel("write", 0, 1, "SM", "x.fill_(c): one store stream"),
    Kernel("copy", 1, 1, "memcpy", "y.copy_(x): PyTorch calls cudaMemcpyAsync device-to-device, the path "
                                   "nvbandwidth files under its copy-engine tests"),
    Kernel("scale", 1, 1, "SM", "torch.mul(x, s, out=y): STREAM scale, an element-wise kernel on the SMs "
                                "(the SM copy)"),
    Kernel("triad", 2, 1, "SM", "torch.add(b, c, alpha=s, out=a): STREAM triad a = b + s*c in one kernel"),
)})


def _torch_device(device: Any):
    import torch

    from . import device as _device

    if device is None:
        return _device.torch_device()
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={device!r}: CUDA is not available on this machine; use device='cpu'")
    return dev


def _device_l2_bytes(dev: Any, fallback: int | None = None) -> int | None:
    """L2 size the device reports (trust it over datasheets), else ``fallback``."""
    import torch

    if dev.type == "cuda":
        reported = int(getattr(torch.cuda.get_device_properties(dev), "L2_cache_size", 0) or 0)
        if reported:
            return reported
    return fallback


def _datasheet(dev: Any) -> specs.GPUSpec | None:
    import torch

    if dev.type != "cuda":
        return None
    return specs.match(torch.cuda.get_device_properties(dev).name)


def _kernel_fn(kernel: Kernel, arrays: list[Any]):
    """The zero-argument callable of ``kernel`` over preallocated ``arrays`` (inputs first, output last)."""
    import torch

    if kernel.name == "read":
        x, out = arrays[0], arrays[-1]
        return lambda: torch.sum(x, dim=0, out=out)
    if kernel.name == "write":
        x = arrays[0]
        return lambda: x.fill_(1.5)
    if kernel.name == "copy":
        x, y = arrays
        return lambda: y.copy_(x)
    if kernel.name == "scale":
        x, y = arrays
        return lambda: torch.mul(x, 1.0001, out=y)
    if kernel.name == "triad":
        b, c, a = arrays
        return lambda: torch.add(b, c, alpha=0.5, out=a)
    raise ValueError(f"kernel={kernel.name!r} is unknown; allowed: {', '.join(KERNELS)}")


def _allocate(dev: Any, n: int, count: int, seed: int = 0) -> list[Any]:
    """``count`` float32 arrays of ``n`` random normal values (never zeros: power depends on data)."""
    import torch

    gen = torch.Generator(device=dev).manual_seed(seed)
    return [torch.randn(n, generator=gen, device=dev, dtype=torch.float32) for _ in range(count)]


def _is_oom(exc: BaseException) -> bool:
    import torch

    oom = getattr(torch.cuda, "OutOfMemoryError", None)
    return (oom is not None and isinstance(exc, oom)) or "out of memory" in str(exc).lower()


def _free_cuda(dev: Any) -> None:
    import gc

    import torch

    gc.collect()
    if dev.type == "cuda":
        torch.cuda.empty_cache()


def measure_bandwidth(device: Any = None, *, quick: bool = True, kernels: Iterable[str] | None = None,
                      array_bytes: int | None = None, warmup_s: float | None = None, min_samples: int = 10,
                      min_time_s: float = 0.1, max_time_s: float = 5.0) -> list[dict[str, Any]]:
    """Time the :data:`KERNELS` on arrays much larger than L2, with L2 flushed before every sample.

    ``array_bytes`` (per array) defaults to 1 GiB (``quick``: max(256 MiB, 8 x L2)) on a GPU and 64 MiB
    on the CPU; it is halved (and said so in the record's notes) when the GPU runs out of memory.
    Returns result records ``{"params", "measurement", "derived", "notes"}``: DRAM bytes/s counting
    every read and write, copy throughput N/t for copy-like kernels, and % of the datasheet bandwidth when
    the device is in the catalogue. Chapter: *HBM and the memory hierarchy*, "Measured bandwidth".
    """
    import torch

    from . import timing

    dev = _torch_device(device)
    names = list(KERNELS) if kernels is None else list(kernels)
    unknown = [k for k in names if k not in KERNELS]
    if unknown or not names:
        raise ValueError(f"kernels={names!r}: unknown {unknown}; allowed: {', '.join(KERNELS)}")
    l2 = _device_l2_bytes(dev, fallback=None)
    if array_bytes is None:
        if dev.type == "cuda":
            array_bytes = max(256 * MiB, 8 * (l2 or 64 * MiB)) if quick else GiB
        else:
            array_bytes = 64 * MiB
    _positive("array_bytes", array_bytes, integer=True)
    spec = _datasheet(dev)
    records = []
    for name in names:
        k = KERNELS[name]
        nbytes, notes = int(array_bytes), []
        while True:
            n = max(1, nbytes // 4)
            arrays = fn = None
            try:
                arrays = _allocate(dev, n, max(k.arrays, 1))
                if name == "read":
                    arrays.append(torch.empty((), device=dev, dtype=torch.float32))
                fn = _kernel_fn(k, arrays)
                m = timing.benchmark(fn, label=f"hbm {name}", device=dev, warmup_s=warmup_s,
                                     min_samples=min_samples, min_time_s=min_time_s, max_time_s=max_time_s,
                                     calls_per_sample=1 if dev.type == "cuda" else None,
                                     flush_l2=dev.type == "cuda", l2_bytes=l2,
                                     params={"kernel": name, "array_bytes": n * 4})
                break
            except RuntimeError as exc:
                if not _is_oom(exc) or nbytes <= 16 * MiB:
                    raise
            # Free outside the except block: the traceback keeps the failed frames (and their arrays) alive.
            arrays = fn = None
            _free_cuda(dev)
            notes.append(f"out of memory at {nbytes / MiB:.0f} MiB per array: retried with half")
            nbytes //= 2
        del arrays, fn
        _free_cuda(dev)
        moved = (k.reads + k.writes) * n * 4
        bw = m.rate(moved)
        derived = {"bytes_read": k.reads * n * 4, "bytes_written": k.writes * n * 4, "bytes_moved": moved,
                   "bytes_per_s": bw, "copy_bytes_per_s": m.rate(n * 4) if (k.reads, k.writes) == (1, 1) else None,
                   "datasheet_bytes_per_s": spec.hbm_bytes_per_s if spec else None,
                   "pct_of_datasheet": 100 * bw / spec.hbm_bytes_per_s if spec else None}
        records.append({"params": {"experiment": "bandwidth", "kernel": name, "engine": k.engine,
                                   "array_bytes": n * 4, "dtype": "float32", "l2_flushed": m.l2_flushed,
                                   "description": k.description},
                        "measurement": m.to_dict(), "derived": derived, "notes": notes + m.warnings})
    return records


#: Bytes each reduction of the L2 sweep reads: one chunk of the footprint per output (one thread block each
#: in PyTorch's reduction kernel). Footprints are whole numbers of chunks.
L2_SWEEP_CHUNK_BYTES = 64 * KiB


def _chunk_view(buf: Any, chunks: int, chunk_elems: int, repeats: int) -> Any:
    """The first ``chunks`` x ``chunk_elems`` elements of ``buf`` as a (repeats, chunks, chunk_elems) view
    with stride 0 along the repeats: no copy, the same chunks ``repeats`` times over."""
    return buf[:chunks * chunk_elems].view(chunks, chunk_elems).unsqueeze(0).expand(repeats, chunks, chunk_elems)


def measure_l2_sweep(device: Any = None, *, quick: bool = True, footprints: Sequence[int] | None = None,
                     total_bytes: int | None = None, chunk_bytes: int = L2_SWEEP_CHUNK_BYTES,
                     warmup_s: float | None = None, min_samples: int = 10, min_time_s: float = 0.05,
                     max_time_s: float = 2.0) -> list[dict[str, Any]]:
    """Read bandwidth versus footprint with fixed total traffic and no L2 flush (the working-set curve).

    The design is gpu-benches' ``gpu-l2-cache`` (ernstgpubenches) written with one PyTorch call: a buffer of
    F bytes is cut into m = F / C chunks of C = ``chunk_bytes`` and viewed, without a copy, as a
    (R, m, C/4) float32 tensor whose first dimension has stride 0 (``expand``); ``torch.sum(..., dim=-1)``
    into a preallocated (R, m) output then runs R x m independent reductions of one chunk each. In
    PyTorch's CUDA reduction kernel each output is one 512-thread block reading its chunk with 16-byte
    vector loads, so the kernel has ``total_bytes / C`` blocks (16384 for 1 GiB) whatever the footprint:
    every footprint runs the same kernel with the same parallelism and the same traffic R x F, about
    ``total_bytes``; only the addresses differ. Output r x m + j reads chunk j, so blocks launched in order
    sweep the buffer cyclically and a byte is reused after F bytes of traffic.

    Footprints default to 256 KiB ... 4 x the L2 the device reports (12 points in ``quick`` mode, else 24)
    and are rounded down to whole chunks (at least one); ``total_bytes`` defaults to 1 GiB (64 MiB on the
    CPU). The smallest footprints are read by several blocks of the same SM at once and can be served
    partly by L1. Returns result records. Chapter: *HBM and the memory hierarchy*, "The L2 working-set sweep".
    """
    import torch

    from . import timing

    dev = _torch_device(device)
    chunk = int(_positive("chunk_bytes", chunk_bytes, integer=True))
    if chunk % 16:
        raise ValueError(f"chunk_bytes={chunk_bytes!r} must be a multiple of 16 (one 16-byte vector load)")
    l2 = _device_l2_bytes(dev, fallback=None)
    if footprints is None:
        base = l2 or (4 * MiB if dev.type == "cpu" else 40 * MiB)
        footprints = sweep_footprints(base, points=12 if quick else 24,
                                      start_bytes=256 * KiB if dev.type == "cuda" else 64 * KiB, align=chunk)
    footprints = [int(_positive("footprint", f, integer=True)) for f in footprints]
    if not footprints:
        raise ValueError("footprints is empty; give at least one footprint in bytes")
    chunks = sorted({max(1, f // chunk) for f in footprints})  # whole chunks, duplicates merged
    if total_bytes is None:
        total_bytes = max(GiB if dev.type == "cuda" else 64 * MiB, 2 * chunks[-1] * chunk)
    _positive("total_bytes", total_bytes, integer=True)
    c = chunk // 4  # float32 elements per chunk
    buf = _allocate(dev, chunks[-1] * c, 1, seed=1)[0]
    records = []
    try:
        for m_chunks in chunks:
            f = m_chunks * chunk
            reps = max(1, round(total_bytes / f))
            view = _chunk_view(buf, m_chunks, c, reps)
            out = torch.empty((reps, m_chunks), device=dev, dtype=torch.float32)

            def fn(view=view, out=out):
                return torch.sum(view, dim=-1, out=out)

            m = timing.benchmark(fn, label=f"l2 sweep {f / MiB:.2f} MiB", device=dev,
                                 warmup_s=(0.05 if dev.type == "cuda" else 0.0) if warmup_s is None else warmup_s,
                                 min_samples=min_samples, min_time_s=min_time_s, max_time_s=max_time_s,
                                 flush_l2=False, params={"footprint_bytes": f, "repeats": reps})
            traffic = reps * f
            records.append({"params": {"experiment": "l2_sweep", "footprint_bytes": f, "repeats": reps,
                                       "chunk_bytes": chunk, "chunks": m_chunks, "traffic_bytes": traffic,
                                       "dtype": "float32", "l2_flushed": False, "device_l2_bytes": l2},
                            "measurement": m.to_dict(), "derived": {"bytes_per_s": m.rate(traffic)},
                            "notes": m.warnings})
            del view, out, fn
    finally:
        del buf
        _free_cuda(dev)
    return records


def measure_capacity(device: Any = None) -> dict[str, Any]:
    """What the driver reports: total and free device memory (bytes), beside the datasheet capacity.

    On the CPU (or a GPU outside the catalogue) the datasheet fields are None. Chapter: *HBM and the
    memory hierarchy*, "40 GB versus 80 GB" (what "95% utilisation" could and could not mean).
    """
    import torch

    dev = _torch_device(device)
    if dev.type != "cuda":
        return {"device": "cpu", "total_bytes": None, "free_bytes": None, "datasheet_bytes": None,
                "total_over_datasheet": None, "note": "no CUDA device: capacity is a GPU measurement"}
    free, total = torch.cuda.mem_get_info(dev)
    spec = _datasheet(dev)
    return {"device": torch.cuda.get_device_properties(dev).name, "total_bytes": int(total),
            "free_bytes": int(free), "datasheet_bytes": spec.memory_bytes if spec else None,
            "total_over_datasheet": total / spec.memory_bytes if spec else None,
            "note": "total = what the driver exposes to CUDA; free = after this process's context"}


def bandwidth_rows(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Flat rows (kernel, engine, GB/s, % of datasheet, copy GB/s, samples) of bandwidth records."""
    rows = []
    for r in records:
        p, d = r.get("params", {}), r.get("derived", {})
        if p.get("experiment") != "bandwidth":
            continue
        meas = r.get("measurement") or {}
        rows.append({"kernel": p["kernel"], "engine": p.get("engine"), "array_bytes": p.get("array_bytes"),
                     "bytes_per_s": d["bytes_per_s"], "pct_of_datasheet": d.get("pct_of_datasheet"),
                     "copy_bytes_per_s": d.get("copy_bytes_per_s"), "samples": meas.get("n"),
                     "rel_iqr": meas.get("rel_iqr")})
    return rows


def sweep_rows(records: Iterable[Mapping[str, Any]]) -> tuple[list[float], list[float], int | None]:
    """(footprints, bytes/s, device L2 bytes) of L2-sweep records, sorted by footprint."""
    pts, l2 = [], None
    for r in records:
        p = r.get("params", {})
        if p.get("experiment") == "l2_sweep":
            pts.append((p["footprint_bytes"], r["derived"]["bytes_per_s"]))
            l2 = p.get("device_l2_bytes") or l2
    pts.sort()
    return [f for f, _ in pts], [b for _, b in pts], l2


#: Acceptance thresholds of the chapter's GPU run: the copy reaches 85 % of the datasheet bandwidth on an
#: A100, H100 or H200, and the L2 sweep shows a knee within 25 % of the L2 size the device reports.
ACCEPT_COPY_PCT = 85.0
ACCEPT_KNEE_TOLERANCE = 0.25
_ACCEPT_FAMILIES = ("A100", "H100", "H200")


def check_acceptance(records: Iterable[Mapping[str, Any]], spec_name: str | None) -> list[dict[str, Any]]:
    """The chapter's acceptance checks on measured records: ``[{"check", "applies", "passed", "detail"}]``.

    ``applies`` is False where a threshold is not meant for this GPU (the copy threshold is set for the
    A100/H100/H200 families) or the data to judge it are missing.
    """
    records = list(records)
    out = []
    rows = {r["kernel"]: r for r in bandwidth_rows(records)}
    family = bool(spec_name) and any(f in str(spec_name) for f in _ACCEPT_FAMILIES)
    for kernel in ("copy", "scale"):
        pct = rows.get(kernel, {}).get("pct_of_datasheet")
        out.append({"check": f"{kernel} >= {ACCEPT_COPY_PCT:.0f}% of the datasheet bandwidth",
                    "applies": family and pct is not None and kernel == "copy",
                    "passed": pct is not None and pct >= ACCEPT_COPY_PCT,
                    "detail": f"{pct:.1f}%" if pct is not None else "not measured or no datasheet"})
    f, y, l2 = sweep_rows(records)
    if len(f) >= 3 and l2:
        k = find_knee(f, y, l2, ACCEPT_KNEE_TOLERANCE)
        detail = (f"knee at {k['knee_bytes'] / MiB:.1f} MiB = {k['ratio_to_l2']:.2f} x {l2 / MiB:.0f} MiB"
                  if k["visible"] else "no visible knee")
        out.append({"check": f"L2 knee within {ACCEPT_KNEE_TOLERANCE:.0%} of the reported L2", "applies": True,
                    "passed": bool(k["within"]), "detail": detail})
    else:
        out.append({"check": f"L2 knee within {ACCEPT_KNEE_TOLERANCE:.0%} of the reported L2", "applies": False,
                    "passed": False, "detail": "no sweep with a device-reported L2 size"})
    return out


def _summary(bw: list[dict[str, Any]], sweep: list[dict[str, Any]], capacity: dict[str, Any] | None,
             device_label: str, spec_name: str | None = None) -> str:
    lines = [f"HBM benchmark on {device_label}"]
    for row in bandwidth_rows(bw):
        pct = f"{row['pct_of_datasheet']:.1f}% of datasheet" if row["pct_of_datasheet"] is not None else "no datasheet"
        cp = f", copy throughput {row['copy_bytes_per_s'] / 1e9:.0f} GB/s" if row["copy_bytes_per_s"] else ""
        lines.append(f"  {row['kernel']:6s} {row['engine']:6s} {row['bytes_per_s'] / 1e9:9.1f} GB/s "
                     f"(reads+writes){cp}; {pct}")
    if sweep:
        f, y, l2 = sweep_rows(sweep)
        lines.append(f"  L2 sweep: {len(f)} footprints, {f[0] / KiB:.0f} KiB .. {f[-1] / MiB:.0f} MiB")
        if l2 and len(f) >= 3:
            k = find_knee(f, y, l2)
            if k["visible"]:
                lines.append(f"  L2 knee at {k['knee_bytes'] / MiB:.1f} MiB = {k['ratio_to_l2']:.2f} x the "
                             f"reported L2 ({l2 / MiB:.0f} MiB); within 25%: {k['within']}")
            else:
                lines.append("  no visible L2 knee")
    for c in check_acceptance(bw + sweep, spec_name):
        if c["applies"]:
            lines.append(f"  acceptance: {c['check']}: {'PASS' if c['passed'] else 'FAIL'} ({c['detail']})")
    if capacity and capacity.get("total_bytes"):
        lines.append(f"  capacity: driver reports {capacity['total_bytes'] / 2**30:.2f} GiB total, "
                     f"{capacity['free_bytes'] / 2**30:.2f} GiB free")
    return "\n".join(lines)


def bench_main(argv: Sequence[str] | None = None) -> int:
    """``python -m ampere bench hbm``: bandwidth kernels, the L2 sweep and the capacity report, recorded.

    Chapter: *HBM and the memory hierarchy*. A full run takes well under 3 minutes on an A100/H100/H200;
    ``--quick`` about 20 s. On a machine without CUDA it measures the CPU (small arrays) and says so.
    """
    from . import benchcli, device as _device, results

    p = benchcli.bench_parser("hbm", "DRAM bandwidth (read, write, copy, scale, triad) and the L2 working-set sweep")
    p.add_argument("--kernels", default=",".join(KERNELS),
                   help=f"comma-separated kernels (default: all of {','.join(KERNELS)})")
    p.add_argument("--array-mib", type=int, default=None, help="MiB per array (default: 1024, quick: >= 256)")
    p.add_argument("--sweep-points", type=int, default=None, help="footprints of the L2 sweep (default 24, quick 12)")
    p.add_argument("--no-sweep", action="store_true", help="skip the L2 working-set sweep")
    p.add_argument("--no-bandwidth", action="store_true", help="skip the bandwidth kernels")
    args = p.parse_args(list(argv or []))
    kernels = [k for k in args.kernels.split(",") if k]
    unknown = [k for k in kernels if k not in KERNELS]
    if unknown:
        p.error(f"unknown kernel(s) {unknown}; allowed: {', '.join(KERNELS)}")
    if args.array_mib is not None and args.array_mib < 1:
        p.error("--array-mib must be >= 1")
    if args.sweep_points is not None and args.sweep_points < 3:
        p.error("--sweep-points must be >= 3")

    info = _device.probe()
    dev = _device.torch_device(info)
    notes = []
    if dev.type != "cuda":
        notes.append("no CUDA GPU: the CPU's memory was measured with small arrays; not comparable with a GPU")
        print(f"note: {notes[-1]}")
    array_bytes = args.array_mib * MiB if args.array_mib else (None if dev.type == "cuda" else 8 * MiB)
    bw = [] if args.no_bandwidth else measure_bandwidth(dev, quick=args.quick, kernels=kernels,
                                                        array_bytes=array_bytes)
    sweep: list[dict[str, Any]] = []
    if not args.no_sweep:
        footprints = None
        if args.sweep_points or dev.type != "cuda":
            l2 = info.l2_bytes or (4 * MiB if dev.type != "cuda" else 40 * MiB)
            footprints = sweep_footprints(l2, points=args.sweep_points or (12 if args.quick else 24),
                                          start_bytes=256 * KiB if dev.type == "cuda" else 64 * KiB,
                                          align=L2_SWEEP_CHUNK_BYTES)
        sweep = measure_l2_sweep(dev, quick=args.quick, footprints=footprints,
                                 total_bytes=None if dev.type == "cuda" else 16 * MiB)
    capacity = measure_capacity(dev)
    records = bw + sweep + [{"params": {"experiment": "capacity"}, "derived": capacity}]
    if sweep:
        f, y, l2 = sweep_rows(sweep)
        if l2 and len(f) >= 3:
            knee = find_knee(f, y, l2)
            records.append({"params": {"experiment": "l2_knee"}, "derived": knee})
    records.append({"params": {"experiment": "acceptance"}, "derived": {"checks": check_acceptance(bw + sweep,
                                                                                                     info.spec_name)}})
    result = results.make_result(
        "hbm", info,
        parameters={"quick": args.quick, "kernels": kernels, "array_bytes": array_bytes,
                    "sweep": not args.no_sweep, "bytes_convention": "reads + writes (STREAM); copy N/t also given"},
        records=records, notes=notes)
    return benchcli.finish_bench(result, args, _summary(bw, sweep, capacity, info.label(), info.spec_name))
