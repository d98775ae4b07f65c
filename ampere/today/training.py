"""Training plans from the Megatron chapter's layout search: on a number of cards, every tensor x pipeline x
data layout (interleaved schedules included) is timed and sized by one :func:`ampere.megatron.estimate`, and
the plan takes the fastest layout that fits; its time and its memory are the same estimate's.

Chapter: *The A100 today* (book/a100-today.ipynb), "A workload calculator" and "Training time against
published Llama runs". Pure Python: no torch, no matplotlib (``ampere.megatron`` is imported inside the
functions that need it; an aggregator may read a chapter).

What the search assumes (the software a reader would run today): Megatron-LM's current stack
(:data:`SOFTWARE`, "megatron-core": overlapped collectives, FlashAttention, interleaving), its memory
convention (:data:`MEMORY_CONVENTION`: bf16 weights, fp32 main gradients and Adam state, 18 bytes per
parameter), sequence parallelism with tensor parallelism, ZeRO stage 1 (Megatron's distributed optimizer)
or stage 3 for full training, plain data parallelism of the adapters for LoRA and QLoRA, and the node's real
network (``network.py``). A fixed utilisation (``Workload.mfu``) replaces the time model only; the layout
and its memory still come from the search.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from .. import specs
from .adapters import AdapterStep, adapter_step
from .catalogue import shape_of
from .network import Network
from .workload import _FLOPS_PER_PARAM_TOKEN, Workload, _is_count

#: The software stack the planner times (``ampere.megatron.STACKS``).
SOFTWARE = "megatron-core"
#: How the training state is counted (``ampere.memory.CONVENTIONS``): Megatron-LM's own estimator.
MEMORY_CONVENTION = "megatron"
#: Most model chunks per GPU the search tries in interleaved pipeline schedules.
MAX_INTERLEAVE = 4


@dataclass(frozen=True)
class _Choice:
    """One layout, timed and sized: the Megatron estimate, and for LoRA/QLoRA the adapter step on it."""

    estimate: Any  # ampere.megatron.Estimate of the full step on this layout
    zero: int
    adapter: AdapterStep | None
    time_s: float  # one optimizer step of the global batch (BF16 math)
    memory: dict[str, float]  # bytes per GPU by kind, "total" included: what this layout holds
    breakdown: dict[str, float]

    @property
    def memory_bytes(self) -> float:
        return self.memory["total"]

    def layout_text(self) -> str:
        lay = self.estimate.layout
        inter = f", {lay.interleave} chunks per GPU (interleaved)" if lay.interleave > 1 else ""
        zero = "adapters data-parallel" if self.adapter is not None else f"ZeRO-{self.zero}"
        return (f"tensor {lay.tensor}, pipeline {lay.pipeline}{inter}, data {lay.data}, micro-batch "
                f"{lay.microbatch}, {zero}")


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


def _memory_of(est: Any) -> dict[str, float]:
    return {k: float(v) for k, v in est.memory.items()
            if k in ("weights", "gradients", "optimizer", "buffers", "activations", "total")}


def _layouts(w: Workload, spec: specs.GPUSpec, cards: int, net: Network, software: str = SOFTWARE) -> list[_Choice]:
    """Every layout of ``w`` on ``cards`` GPUs of ``spec`` on the network ``net``, each timed and sized by one
    Megatron estimate (and, for LoRA/QLoRA, the adapter step on it). Chapter: *The A100 today*."""
    from .. import megatron

    shape = w.shape()
    cfg = dataclasses.replace(shape, seq=w.seq_len)
    batch = w.global_batch or cards * w.micro_batch
    precision = "fp16" if w.precision == "fp16" else "bf16"
    adapters = w.task in ("lora", "qlora")
    zeros = (0,) if adapters else (1, 3)
    node = net.megatron_node()
    found = []
    for zero in zeros:
        for est in megatron.search_layouts(cfg, cards, batch, spec, microbatches=(w.micro_batch,),
                                           max_interleave=MAX_INTERLEAVE, recompute=w.recompute, top=None,
                                           include_infeasible=True, software=software, precision=precision,
                                           memory_convention=MEMORY_CONVENTION, sequence_parallel=True,
                                           flash_attention=True, zero_stage=zero, network=node):
            if adapters:
                step = adapter_step(est, w.task, w.lora_rank)
                found.append(_Choice(est, zero, step, step.time_s, dict(step.memory), dict(step.breakdown)))
            else:
                found.append(_Choice(est, zero, None, est.time_per_iteration_s, _memory_of(est),
                                     dict(est.breakdown)))
    return found


def _best_layout(w: Workload, spec: specs.GPUSpec, cards: int, net: Network, usable: float,
                 software: str = SOFTWARE) -> _Choice | None:
    """The fastest layout whose memory per GPU fits ``usable`` bytes, or None."""
    fitting = [c for c in _layouts(w, spec, cards, net, software) if c.memory_bytes <= usable]
    return min(fitting, key=lambda c: (c.time_s, c.memory_bytes)) if fitting else None


def _speed(w: Workload, spec: specs.GPUSpec, cards: int, choice: _Choice | None,
           software: str = SOFTWARE) -> _Speed:
    """Trained tokens/s of ``w`` on ``cards`` GPUs: the chosen layout's time, or ``w.mfu`` of the dense peak."""
    n = w.params
    batch = w.global_batch or cards * w.micro_batch
    notes = [f"layout: {choice.layout_text()} (Megatron model, {software})"] if choice is not None else []
    if w.mfu is not None:
        tps = cards * _fixed_mfu_tokens_per_s(w.model, w.task, w.mfu, spec, w.precision)
        notes.append(f"fixed utilisation: {w.mfu:.0%} of the dense {w.precision} peak")
        return _Speed(tps, batch * w.seq_len / tps, "compute", w.mfu, tuple(notes))
    if choice is None:
        raise ValueError(f"model={w.model!r} is a parameter count: the training-time model needs a shape (a size "
                         "class or a model name), or give mfu= for a fixed utilisation")
    step = choice.time_s
    if w.precision == "fp8":
        step *= spec.peak_flops("bf16") / spec.peak_flops("fp8")
        notes.append("FP8: the BF16 layout's utilisation of the FP8 peak (an upper bound)")
    if w.task == "qlora":
        notes.append("QLoRA: the LoRA step times the published QLoRA/LoRA ratio of the same runs")
    tps = batch * w.seq_len / step
    mfu = _FLOPS_PER_PARAM_TOKEN[w.task] * n * tps / (cards * spec.peak_flops(w.precision))
    comm = sum(v for k, v in choice.breakdown.items() if "all-reduce" in k or "sends" in k)
    bound = "communication" if comm > 0.5 * choice.time_s else "compute"
    return _Speed(tps, step, bound, mfu, tuple(notes))


def _training_speed(w: Workload, spec: specs.GPUSpec, cards: int, net: Network,
                    usable: float | None = None, software: str = SOFTWARE) -> _Speed:
    """The plan's speed on ``cards`` GPUs (the fastest fitting layout; the fastest of all when none fits)."""
    from .. import memory

    if w.shape() is None:
        return _speed(w, spec, cards, None)
    cap = memory.usable_bytes(spec) if usable is None else usable
    choice = _best_layout(w, spec, cards, net, cap, software)
    if choice is None:
        every = _layouts(w, spec, cards, net, software)
        if not every:
            raise ValueError(f"no tensor x pipeline x data layout of {w.name} divides {cards} GPUs and a batch of "
                             f"{w.global_batch or cards * w.micro_batch} sequences of micro-batch {w.micro_batch}")
        choice = min(every, key=lambda c: c.time_s)
    return _speed(w, spec, cards, choice, software)
