"""Training state per GPU: mixed-precision recipes, ZeRO stages, and the three ways sources count them.

Chapter: *HBM and the memory hierarchy* ("Training state"); *Megatron-LM* ("Memory per GPU", "Checked
against Megatron-LM and DeepSpeed"). Pure Python.

* :class:`TrainingRecipe`, :data:`MIXED_ADAM`, :func:`zero_bytes_per_param`: the ZeRO paper's accounting
  (rajbhandari2020zero), 2 + 2 + K bytes per parameter with K = 12.
* :data:`CONVENTIONS` (``ampere/data/tables/memory-conventions.json``): "paper" (the ZeRO paper),
  "megatron" (Megatron-LM's estimator, 18 bytes: fp32 main gradients) and "deepspeed" (DeepSpeed's ZeRO-2/3
  estimators: an fp32 gradient partition, the gathered largest module, offload), each with its source and
  commit; :func:`state_bytes_per_param` and :func:`gathered_layer_bytes` read them;
  :func:`largest_module_params` is the largest module DeepSpeed's ZeRO-3 gathers whole.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping

from .. import check, results
from ..transformer import TransformerShape



#: Largest bytes per parameter of one part of the training state (an fp64 Adam keeps 8 + 8 + 16: far below).
MAX_BYTES_PER_PARAM = 64.0
#: Largest data-parallel group (far above any run: the largest A100 runs used a few thousand GPUs).
MAX_DATA_PARALLEL = 10_000_000


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
        check.string("name", self.name, max_len=80)
        check.string("source", self.source, allow_empty=True, max_len=80)
        for f in ("weight_bytes", "grad_bytes", "master_bytes", "optimizer_bytes"):
            object.__setattr__(self, f, check.nonneg(f, getattr(self, f), maximum=MAX_BYTES_PER_PARAM))
        if self.bytes_per_param == 0:
            raise ValueError(f"{self.name}: weight_bytes, grad_bytes, master_bytes and optimizer_bytes are all 0; "
                             "a recipe keeps something per parameter")

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


def _recipe(recipe: str | TrainingRecipe, name: str = "recipe") -> TrainingRecipe:
    if isinstance(recipe, TrainingRecipe):
        return recipe
    if not isinstance(recipe, str):
        raise TypeError(f"{name} must be a recipe name ({', '.join(RECIPES)}) or a TrainingRecipe, got "
                        f"{recipe!r:.60} ({type(recipe).__name__})")
    return RECIPES[check.one_of(name, recipe, tuple(RECIPES))]


def _stage(name: str, stage: Any) -> int:
    return check.integer(name, stage, minimum=0, maximum=3)


@dataclass(frozen=True)
class StateBytes:
    """Bytes per parameter one GPU holds for each part of the training state. See :func:`zero_bytes_per_param`."""

    weights: float
    gradients: float
    master_weights: float
    optimizer_state: float

    def __post_init__(self) -> None:
        for f in _PARTS:
            object.__setattr__(self, f, check.nonneg(f, getattr(self, f), maximum=MAX_BYTES_PER_PARAM))

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
    st = _stage("stage", stage)
    n = check.positive_int("data_parallel", data_parallel, maximum=MAX_DATA_PARALLEL)
    r = _recipe(recipe)
    return StateBytes(r.weight_bytes / (n if st >= 3 else 1), r.grad_bytes / (n if st >= 2 else 1),
                      r.master_bytes / (n if st >= 1 else 1), r.optimizer_bytes / (n if st >= 1 else 1))


# =======================================================================================================
# Conventions: how a source counts the state (paper, Megatron-LM, DeepSpeed)
# =======================================================================================================

#: Where the optimizer state lives: on the GPU ("none"), the optimizer state and fp32 master on the host
#: ("optimizer"), or the 16-bit weights too ("optimizer+params", ZeRO-3 only). DeepSpeed's estimators
#: give the GPU bytes of each; the host bytes are not modelled.
OFFLOAD: tuple[str, ...] = ("none", "optimizer", "optimizer+params")
_PARTS = ("weights", "gradients", "master_weights", "optimizer_state")


@dataclass(frozen=True)
class MemoryConvention:
    """One source's accounting of the training state (a row of ``memory-conventions.json``)."""

    name: str
    description: str
    source: str  # bib key
    where: str  # file and lines, or section, in the source
    commit: str | None
    stages: Mapping[str, Mapping[str, tuple[float, float]]]  # stage key -> part -> (replicated, sharded)
    from_the_source: tuple[str, ...]  # stage keys the source states itself; the others are derived
    gathered_layer_bytes_per_param: Mapping[str, float]

    def __post_init__(self) -> None:
        for f in ("name", "description", "source", "where"):
            check.string(f, getattr(self, f), max_len=2000)
        check.optional(check.string, "commit", self.commit, max_len=80)
        stages = check.mapping("stages", self.stages, allow_empty=False)
        for key, parts in stages.items():
            parts = check.mapping(f"stages[{key!r}]", parts, allow_empty=False)
            if set(parts) != set(_PARTS):
                raise ValueError(f"stages[{key!r}] must have the parts {', '.join(_PARTS)}, got {sorted(parts)}")
            for p, pair in parts.items():
                rep, shard = check.sequence(f"stages[{key!r}][{p!r}]", pair, check.nonneg, min_len=2, max_len=2)
        object.__setattr__(self, "from_the_source", tuple(check.names("from_the_source", self.from_the_source,
                                                                      tuple(stages), min_len=0)))
        gathered = check.mapping("gathered_layer_bytes_per_param", self.gathered_layer_bytes_per_param)
        for key, v in gathered.items():
            check.nonneg(f"gathered_layer_bytes_per_param[{key!r}]", v, maximum=MAX_BYTES_PER_PARAM)

    def stated(self, stage: int, offload: str = "none") -> bool:
        """True when the source itself states this stage (else it is derived, see ``description``)."""
        st = _stage("stage", stage)
        return _key(st, check.one_of("offload", offload, OFFLOAD)) in self.from_the_source


@functools.lru_cache(maxsize=1)
def _conventions() -> Mapping[str, MemoryConvention]:
    out = {}
    for r in results.table("memory-conventions")["rows"]:
        stages = {k: MappingProxyType({p: (float(v[p][0]), float(v[p][1])) for p in _PARTS})
                  for k, v in r["stages"].items()}
        out[r["convention"]] = MemoryConvention(
            r["convention"], r["description"], r["source"], r["where"], r["commit"], MappingProxyType(stages),
            tuple(r["from_the_source"]), MappingProxyType(dict(r["gathered_layer_bytes_per_param"])))
    return MappingProxyType(out)


#: The conventions by name: "paper", "megatron", "deepspeed" (``ampere/data/tables/memory-conventions.json``).
CONVENTIONS: Mapping[str, MemoryConvention] = _conventions()


def memory_convention(name: str | MemoryConvention) -> MemoryConvention:
    """The :class:`MemoryConvention` called ``name`` (one of :data:`CONVENTIONS`). Chapter: *Megatron-LM*,
    "Checked against Megatron-LM and DeepSpeed"."""
    return _convention("name", name)


def _convention(field: str, value: Any) -> MemoryConvention:
    """:func:`memory_convention`, the error naming the argument ``field``."""
    if isinstance(value, MemoryConvention):
        return value
    allowed = ", ".join(map(repr, CONVENTIONS))
    if not isinstance(value, str):
        raise TypeError(f"{field} must be a memory convention, one of {allowed}, got {value!r:.60} "
                        f"({type(value).__name__})")
    if value not in CONVENTIONS:
        raise ValueError(f"{field}={value!r:.60} is not a memory convention; allowed: {allowed}")
    return CONVENTIONS[value]


def _key(stage: int, offload: str) -> str:
    if offload == "none":
        return str(stage)
    return f"{stage}+" + ("offload_optimizer" if offload == "optimizer" else "offload_all")


def _stage_key(conv: MemoryConvention, stage: Any, offload: Any) -> str:
    st = _stage("stage", stage)
    off = check.one_of("offload", offload, OFFLOAD)
    key = _key(st, off)
    if key not in conv.stages:
        allowed = sorted(k for k in conv.stages if k.startswith(f"{st}+")) or ["none"]
        raise ValueError(f"offload={offload!r} with stage={st} is not counted by the {conv.name!r} convention "
                         f"(it has: {', '.join(sorted(conv.stages))}); offload needs the 'deepspeed' convention "
                         f"and stage 2 (optimizer) or 3 (optimizer, optimizer+params); allowed here: {allowed}")
    return key


def state_bytes_per_param(stage: int = 0, data_parallel: int = 1, convention: str | MemoryConvention = "paper",
                          offload: str = "none") -> StateBytes:
    """Bytes per parameter one GPU of a data-parallel group of ``data_parallel`` holds, by part, under ZeRO
    ``stage`` as ``convention`` counts it (:data:`CONVENTIONS`): replicated + sharded / N for each part.

    "paper": 16, 4 + 12/N, 2 + 14/N, 16/N for stages 0-3 (:func:`zero_bytes_per_param`); "megatron": 18 and
    6 + 12/N (distributed optimizer), its estimator; "deepspeed": 2 + 18/N (ZeRO-2) and 18/N (ZeRO-3, plus
    :func:`gathered_layer_bytes`), its estimators. ``offload`` ("optimizer", "optimizer+params") is counted
    by the "deepspeed" convention for stages 2 and 3. Chapter: *Megatron-LM*, "Memory per GPU".
    """
    conv = _convention("convention", convention)
    key = _stage_key(conv, stage, offload)
    n = check.positive_int("data_parallel", data_parallel, maximum=MAX_DATA_PARALLEL)
    parts = conv.stages[key]
    return StateBytes(*(parts[p][0] + parts[p][1] / n for p in _PARTS))


def largest_module_params(shape: TransformerShape) -> int:
    """Parameters of the largest single module of ``shape``: the word embedding (vocab x hidden), the
    learned positions or the largest linear layer with its bias, whichever is largest. DeepSpeed's ZeRO-3
    gathers it whole (``model_to_params``, stage3.py lines 3047-3057; the word embedding for Llama 2 and
    GPT-3). Chapter: *Megatron-LM*, "Checked against Megatron-LM and DeepSpeed"."""
    if not isinstance(shape, TransformerShape):
        raise TypeError(f"shape must be an ampere.transformer.TransformerShape, got {shape!r} ({type(shape).__name__})")
    h = shape.hidden
    sizes = [shape.vocab * h, shape.seq * h if shape.positions == "learned" else 0]
    sizes += [i * o + (o if shape.biases else 0) for _, i, o in shape.linear_shapes()]
    return max(sizes)


def gathered_layer_bytes(stage: int, largest_layer_params: float, convention: str | MemoryConvention = "paper",
                         offload: str = "none") -> float:
    """Working buffer of ZeRO-3 as ``convention`` counts it: bytes per parameter of the gathered largest
    module (DeepSpeed: 2 of 16-bit weights + 2 of 16-bit gradients) x ``largest_layer_params``; 0 for the
    conventions and stages that count none. Chapter: *Megatron-LM*, "Memory per GPU"."""
    conv = _convention("convention", convention)
    key = _stage_key(conv, stage, offload)
    n = check.nonneg("largest_layer_params", largest_layer_params, maximum=1e16)
    return conv.gathered_layer_bytes_per_param.get(key, 0.0) * n
