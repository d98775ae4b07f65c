"""What the calculator is asked and what it answers: the tasks and formats it knows, :class:`Workload` (a
model and a task, validated) and :class:`GPUPlan` (fit, cards, speed and cost on one GPU).

Chapter: *The A100 today* (book/a100-today.ipynb), "A workload calculator". Pure Python: no torch, no
matplotlib; :func:`ampere.today.plan` (``calculator.py``) fills a :class:`GPUPlan`.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping

from .. import check, transformer
from ..transformer import TransformerShape
from .catalogue import shape_of
from .network import MAX_CARDS
from .prices import PriceRange


#: Tasks of the calculator and what each one keeps in memory and computes.
TASKS: Mapping[str, str] = MappingProxyType({
    "inference": "weights in the chosen format plus the KV cache of batch x context tokens; decoding bound",
    "lora": "frozen bf16 base weights, rank-r adapters on every linear layer trained with mixed Adam",
    "qlora": "frozen NF4 base weights (double quantization), rank-r adapters trained with mixed Adam",
    "full-finetune": "mixed-precision Adam as Megatron-LM counts it (18 bytes per parameter: bf16 weights, fp32 "
                     "main gradients, fp32 master weights and moments), sharded by ZeRO-1 or ZeRO-3",
    "pretrain": "as full fine-tuning; differs only by the number of tokens (a corpus, not a dataset)",
})
#: Weight formats of inference.
INFERENCE_FORMATS: tuple[str, ...] = ("fp16", "bf16", "int8", "int4")
#: Tensor-core precisions a training run can compute in (fp8 only where the GPU has FP8 tensor cores).
TRAIN_PRECISIONS: tuple[str, ...] = ("bf16", "fp16", "fp8")
#: Model FLOPs per parameter per token: forward 2, backward 4 (activation and weight gradients); LoRA and
#: QLoRA skip the weight gradients of the frozen base (the adapters' own FLOPs are negligible).
_FLOPS_PER_PARAM_TOKEN = MappingProxyType({"full-finetune": 6, "pretrain": 6, "lora": 4, "qlora": 4})
#: INT4 weights carry quantization scales: one fp16 scale per group of 128 weights (0.125 bit per weight).
_INT4_GROUP = 128


def _is_count(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass(frozen=True)
class Workload:
    """What to run. Invalid values raise ``ValueError``/``TypeError`` naming the field.

    ``model`` is a size class ("1B", "3B", "7B", "13B", "30B", "70B"), a name of :data:`MODELS`, a
    :class:`~ampere.transformer.TransformerShape`, or a parameter count (full fine-tuning and pre-training
    only: inference, LoRA and activations need a shape). ``mfu=None`` (the default) takes the training
    time from the Megatron throughput model; a number instead fixes the model-FLOPs utilisation (what
    planners did before, kept for comparison). Chapter: *The A100 today*, "A workload calculator".
    """

    model: Any
    task: str
    weights: str = "fp16"  # inference weight format: fp16, bf16, int8, int4 (int4 with group-128 scales)
    context: int = 4096  # inference: tokens per sequence held in the KV cache
    batch: int = 1  # inference: sequences decoded together
    tokens: float | None = None  # training: tokens of the run (dataset x epochs, or the corpus)
    seq_len: int = 2048  # training: tokens per sequence
    micro_batch: int = 1  # training: sequences per card per micro-step
    global_batch: int | None = None  # training: sequences per optimizer step (None: micro_batch x cards)
    recompute: str = "full"  # training: activation recomputation ("none", "selective", "full")
    lora_rank: int | None = None  # lora/qlora: adapter rank (None: the book's default, ampere.memory)
    precision: str = "bf16"  # training: tensor-core precision of the math
    mfu: float | None = None  # training: None = Megatron model; a number = fixed utilisation of the dense peak
    max_cards: int = 8  # most cards allowed (one 8-GPU node by default; beyond it, whole nodes)
    min_cards: int = 1  # use at least this many cards (more data parallelism, or more tensor parallelism)
    nvlink_bridges: bool = False  # PCIe cards: pairs joined by an NVLink bridge where the card has one
    hcas_per_node: int | None = None  # network adapters per node (None: 8 on a DGX, 2 on a PCIe server)

    def __post_init__(self) -> None:
        from .. import memory

        check.one_of("task", self.task, tuple(TASKS))
        check.one_of("weights", self.weights, INFERENCE_FORMATS)
        check.one_of("precision", self.precision, TRAIN_PRECISIONS)
        check.one_of("recompute", self.recompute, memory.RECOMPUTE)
        for name, top in (("batch", 1_000_000), ("seq_len", 1_048_576), ("micro_batch", 65_536),
                          ("max_cards", MAX_CARDS), ("min_cards", MAX_CARDS)):
            object.__setattr__(self, name, check.positive_int(name, getattr(self, name), maximum=top))
        object.__setattr__(self, "context", check.nonneg_int("context", self.context, maximum=1_048_576))
        object.__setattr__(self, "nvlink_bridges", check.boolean("nvlink_bridges", self.nvlink_bridges))
        object.__setattr__(self, "hcas_per_node", check.optional(check.bounded_int, "hcas_per_node",
                                                                 self.hcas_per_node, 0, 64,
                                                                 why="adapters of one node"))
        rank = memory.DEFAULT_LORA_RANK if self.lora_rank is None else self.lora_rank
        object.__setattr__(self, "lora_rank", check.positive_int("lora_rank", rank, maximum=65_536))
        if self.global_batch is not None:
            object.__setattr__(self, "global_batch", check.positive_int("global_batch", self.global_batch,
                                                                        maximum=100_000_000))
        if self.min_cards > self.max_cards:
            raise ValueError(f"min_cards={self.min_cards!r} is above max_cards={self.max_cards!r}")
        if self.tokens is not None:
            object.__setattr__(self, "tokens", check.positive("tokens", self.tokens))
        if self.mfu is not None:
            object.__setattr__(self, "mfu", check.fraction("mfu", self.mfu, allow_zero=False))
        if _is_count(self.model):
            object.__setattr__(self, "model", check.positive("model", self.model))
            if self.task in ("inference", "lora", "qlora"):
                raise ValueError(f"model={self.model!r} is a parameter count; task={self.task!r} needs a model "
                                 f"shape: use a size class ({', '.join(transformer.SIZE_CLASSES)}) or a model name")
        else:
            self.shape()  # raises for unknown names and wrong types

    @property
    def is_training(self) -> bool:
        return self.task != "inference"

    def shape(self) -> TransformerShape | None:
        """The model's shape, or None for a bare parameter count."""
        return None if _is_count(self.model) else shape_of(self.model)

    @property
    def params(self) -> float:
        s = self.shape()
        return float(s.params) if s is not None else float(self.model)

    @property
    def name(self) -> str:
        s = self.shape()
        return s.label if s is not None else f"{self.params / 1e9:.3g}B parameters"

    def weight_overhead_bits(self) -> float:
        from .. import memory

        return memory.group_scale_overhead_bits(_INT4_GROUP) if self.weights == "int4" else 0.0

    def describe(self) -> str:
        """One line for the reader: model, task and the settings that matter for it."""
        if self.task == "inference":
            return (f"{self.name}, inference, {self.weights} weights, batch {self.batch} x {self.context} tokens "
                    "of context")
        t = f", {self.tokens:.3g} tokens" if self.tokens else ""
        speed = "Megatron model" if self.mfu is None else f"fixed MFU {self.mfu:.0%}"
        return (f"{self.name}, {self.task}{t}, micro-batch {self.micro_batch} x {self.seq_len}, {self.precision}, "
                f"{self.recompute} recomputation, {speed}")


@dataclass(frozen=True)
class GPUPlan:
    """The calculator's answer for one workload on one GPU (see :func:`plan`)."""

    gpu: str
    workload: Workload
    feasible: bool  # fits on at most ``workload.max_cards`` cards and the GPU supports the precision
    cards: int | None  # cards used (the fewest that hold the workload); None when infeasible
    memory_bytes: float  # what one card holds with ``cards`` cards (total for one card when infeasible)
    capacity_bytes: float  # usable memory per card (datasheet capacity minus the runtime reserve)
    tokens_per_s: float | None  # inference: generated tokens/s (all sequences); training: trained tokens/s
    bound: str | None  # inference: "memory", "compute" or "communication"; training: what the model says
    step_time_s: float | None  # one decoding step, or one training step (optimizer step)
    run_time_s: float | None  # training: time of the whole run, when ``tokens`` is given
    price: PriceRange | None
    reason: str = ""  # why infeasible
    notes: tuple[str, ...] = ()
    nodes: int = 1  # nodes the cards span (8 cards per node)
    mfu: float | None = None  # training: model-FLOPs utilisation of the dense peak (6N per token basis)
    layout: str = ""  # training: the tensor x pipeline x data layout timed (and sized)
    estimate: Any = None  # training: the ampere.megatron.Estimate of that layout (None without a shape)
    memory_breakdown: Mapping[str, float] | None = None  # bytes per card by kind, "total" = memory_bytes

    def __post_init__(self) -> None:
        from .. import specs as _specs

        object.__setattr__(self, "gpu", _specs.get(check.gpu("gpu", self.gpu)).name)
        if not isinstance(self.workload, Workload):
            raise TypeError(f"workload must be an ampere.today.Workload, got {self.workload!r}")
        check.boolean("feasible", self.feasible)
        object.__setattr__(self, "cards", check.optional(check.positive_int, "cards", self.cards, maximum=MAX_CARDS))
        if self.feasible and self.cards is None:
            raise ValueError("cards must be given when feasible=True")
        object.__setattr__(self, "memory_bytes", check.nonneg("memory_bytes", self.memory_bytes, maximum=1e18))
        object.__setattr__(self, "capacity_bytes", check.positive("capacity_bytes", self.capacity_bytes,
                                                                  maximum=1e15))
        for name in ("tokens_per_s", "step_time_s", "run_time_s"):
            object.__setattr__(self, name, check.optional(check.positive, name, getattr(self, name), maximum=1e18))
        if self.mfu is not None:
            object.__setattr__(self, "mfu", check.fraction("mfu", self.mfu))
        if self.price is not None and not isinstance(self.price, PriceRange):
            raise TypeError(f"price must be a PriceRange or None, got {self.price!r}")
        check.optional(check.one_of, "bound", self.bound, ("memory", "compute", "communication"))
        if self.feasible:
            for name in ("tokens_per_s", "step_time_s", "bound"):
                if getattr(self, name) is None:
                    raise ValueError(f"{name} must be given when feasible=True")
        if self.estimate is not None:
            from .. import megatron

            if not isinstance(self.estimate, megatron.Estimate):
                raise TypeError(f"estimate must be None or an ampere.megatron.Estimate, got {self.estimate!r}")
        check.string("reason", self.reason, allow_empty=True)
        check.string("layout", self.layout, allow_empty=True)
        if not isinstance(self.notes, tuple) or not all(isinstance(n, str) for n in self.notes):
            raise TypeError(f"notes must be a tuple of strings, got {self.notes!r}")
        object.__setattr__(self, "nodes", check.positive_int("nodes", self.nodes, maximum=MAX_CARDS))
        if self.memory_breakdown is not None:
            object.__setattr__(self, "memory_breakdown", {
                check.string("memory_breakdown key", k): check.nonneg(f"memory_breakdown[{k!r}]", v)
                for k, v in check.mapping("memory_breakdown", self.memory_breakdown).items()})

    @property
    def fits_one_card(self) -> bool:
        return self.feasible and self.cards == 1

    def cost_per_hour(self) -> tuple[float, float] | None:
        """($/h low, $/h high) of all the cards used."""
        if not self.feasible or self.price is None:
            return None
        return self.cards * self.price.low, self.cards * self.price.high

    def cost_per_million_tokens(self) -> tuple[float, float] | None:
        """($ low, $ high) per million generated (inference) or trained (training) tokens."""
        c = self.cost_per_hour()
        if c is None or not self.tokens_per_s:
            return None
        return tuple(x / (self.tokens_per_s * 3600) * 1e6 for x in c)  # type: ignore[return-value]

    def cost_per_run(self) -> tuple[float, float] | None:
        """($ low, $ high) of the whole training run (needs ``tokens``)."""
        c = self.cost_per_hour()
        if c is None or self.run_time_s is None:
            return None
        return tuple(x * self.run_time_s / 3600 for x in c)  # type: ignore[return-value]

    def row(self) -> dict[str, Any]:
        """A flat, printable summary."""
        def rng(v: tuple[float, float] | None, fmt: str) -> str:
            return "-" if v is None else f"{format(v[0], fmt)}-{format(v[1], fmt)}"

        return {
            "GPU": self.gpu, "fits": "yes" if self.feasible else "no",
            "cards": self.cards if self.feasible else "-",
            "GB per card": f"{self.memory_bytes / 1e9:.1f} of {self.capacity_bytes / 1e9:.1f}",
            "tokens/s": "-" if self.tokens_per_s is None else f"{self.tokens_per_s:,.0f}",
            "bound": self.bound or "-", "MFU": "-" if self.mfu is None else f"{self.mfu:.0%}",
            "run time": "-" if self.run_time_s is None else _duration(self.run_time_s),
            "$/h": rng(self.cost_per_hour(), ".2f"), "$/M tokens": rng(self.cost_per_million_tokens(), ".3g"),
            "$/run": rng(self.cost_per_run(), ",.0f"),
            "note": self.reason or "; ".join(self.notes),
        }


def _duration(seconds: float) -> str:
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"
