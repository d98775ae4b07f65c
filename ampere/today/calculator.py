"""The workload calculator: does a :class:`~ampere.today.Workload` fit on a GPU, on how many cards and
nodes, how fast (decoding bound or training time), and what does it cost (:func:`plan`, :func:`plans`).

Chapter: *The A100 today* (book/a100-today.ipynb), "A workload calculator". Pure Python: no torch, no
matplotlib. Memory from ``ampere.memory``, decoding from ``ampere.hbm.decode_bound``, the network from
``network.py``, training speed from ``training.py``.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from .. import specs
from .catalogue import GPUS
from .network import _allowed_cards, _network
from .prices import PriceRange, _price, _user_price, seed_prices
from .training import _training_speed
from .workload import GPUPlan, Workload


def _memory(w: Workload, cards: int) -> Any:
    """``ampere.memory.model_memory`` of the workload with ``cards`` cards (ZeRO-3 for full training on 2+)."""
    from .. import memory

    shape = w.shape()
    target = shape if shape is not None else w.params
    if w.task == "inference":
        return memory.model_memory(target, mode="inference", weights=w.weights,
                                   weight_overhead_bits=w.weight_overhead_bits(), context=w.context, batch=w.batch,
                                   kv_cache="fp16")
    seq = w.seq_len if shape is not None else 0
    if w.task in ("lora", "qlora"):
        return memory.model_memory(target, mode="training", finetune=w.task, weights="bf16", lora_rank=w.lora_rank,
                                   seq_len=seq, micro_batch=w.micro_batch, recompute=w.recompute)
    return memory.model_memory(target, mode="training", finetune="full", data_parallel=cards,
                               zero_stage=3 if cards > 1 else 0, seq_len=seq, micro_batch=w.micro_batch,
                               recompute=w.recompute)


def plan(workload: Workload, gpu: str | specs.GPUSpec, price: PriceRange | tuple[float, float] | None = None,
         reserve_fraction: float | None = None) -> GPUPlan:
    """Does ``workload`` fit on ``gpu``, on how many cards and nodes, how fast, and what does it cost?

    * **Memory** (``ampere.memory.model_memory``): inference and LoRA/QLoRA are split evenly over the
      fewest cards that hold them (ideal model parallelism); full fine-tuning and pre-training add cards with
      ZeRO stage 3 until each card's share (plus its activations) fits. Never fewer than
      ``workload.min_cards``. Each card keeps ``reserve_fraction`` of its capacity free (default: the
      book's runtime reserve, ``ampere.memory.RESERVE_FRACTION``).
    * **Network** (``ampere.fabrics``): cards fill the GPU's NVLink domain first (8 on a DGX A100 or DGX
      H100 node), then span nodes over InfiniBand; PCIe cards pair over an NVLink bridge where they have
      one and otherwise talk over PCIe inside one server.
    * **Inference speed** (``ampere.hbm.decode_bound``): tokens/s of ``batch`` sequences, memory or compute
      bound; on 2+ cards the step is split over them (tensor parallelism) and two all-reduces of the
      activations per layer are added (``ampere.collectives``).
    * **Training speed**: the Megatron-LM throughput model of the Megatron chapter
      (``ampere.megatron.estimate``, built from published kernel measurements with no fitted constant):
      the fastest tensor x pipeline x data layout that fits, with ZeRO-1 or ZeRO-3, sequence parallelism
      and fused (FlashAttention-style) attention, on the plan's node network; LoRA at the same achieved
      FLOP rate over 4N FLOPs per token; FP8 at the BF16 utilisation of the FP8 peak (an upper bound).
      ``workload.mfu`` set instead fixes the utilisation of the dense peak.
    * **Cost**: ``price`` ($/GPU-hour range) x cards; per million tokens; per run when ``tokens`` is given.

    A GPU without the precision (FP8 on an A100) or a workload needing more than ``max_cards`` cards gives
    ``feasible=False`` with the reason. Chapter: *The A100 today*, "A workload calculator".
    """
    from .. import memory

    spec = specs.get(gpu)
    if not isinstance(workload, Workload):
        raise TypeError(f"workload={workload!r} must be an ampere.today.Workload")
    fraction = memory.RESERVE_FRACTION if reserve_fraction is None else reserve_fraction
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 <= fraction < 1:
        raise ValueError(f"reserve_fraction={reserve_fraction!r} must be a number within [0, 1)")
    if isinstance(price, (tuple, list)):
        price = _user_price(price, "price")
    elif price is not None and not isinstance(price, PriceRange):
        raise ValueError(f"price={price!r} must be a PriceRange, (low, high) in $/GPU-hour, or None")
    w = workload
    reserve = memory.runtime_reserve(spec, fraction)
    usable = spec.memory_bytes - reserve
    notes: list[str] = []

    def infeasible(reason: str, mem: float) -> GPUPlan:
        return GPUPlan(spec.name, w, False, None, mem, usable, None, None, None, None, price, reason, tuple(notes))

    if w.is_training and not spec.supports(w.precision):
        tensor = ", ".join(p for p in spec.precisions() if p in specs.TENSOR_PRECISIONS)
        return infeasible(f"{w.precision} is not supported on {spec.name} (tensor precisions: {tensor})",
                          _memory(w, 1).total_bytes)
    if w.task in ("full-finetune", "pretrain"):
        cards, est = None, None
        for n in range(w.min_cards, w.max_cards + 1):
            if not _allowed_cards(spec, n):
                continue
            est = _memory(w, n)
            if est.fits(spec, reserve):
                cards = n
                break
        if cards is None:
            least = memory.min_gpus_zero(w.params, spec, 3, reserve_bytes=reserve)
            return infeasible(f"needs more than {w.max_cards} cards (ZeRO-3 alone needs "
                              f"{least if least else 'too many'} before activations)", _memory(w, 1).total_bytes)
        mem = est.total_bytes
    else:
        est = _memory(w, 1)
        cards = max(est.gpus_needed(spec, reserve), w.min_cards)
        if cards > w.max_cards:
            return infeasible(f"needs {cards} cards, more than max_cards={w.max_cards}", est.total_bytes)
        mem = est.total_bytes / cards
    net = _network(spec, cards)
    if net.reason:
        return infeasible(net.reason, mem)
    if cards > 1:
        notes.append(net.describe())

    if w.task == "inference":
        from .. import hbm

        shape = w.shape()
        db = hbm.decode_bound(shape, spec, weights=w.weights, weight_overhead_bits=w.weight_overhead_bits(),
                              batch=w.batch, context=w.context, kv_cache="fp16", compute_precision="fp16")
        step = max(db.memory_time_s, db.compute_time_s) / cards
        bound = db.bound
        if cards > 1:  # tensor parallelism: two all-reduces of the activations per layer, not overlapped
            comm = 2 * shape.layers * net.all_reduce_time(w.batch * shape.hidden * 2)
            if comm > step:
                bound = "communication"
            step += comm
        return GPUPlan(spec.name, w, True, cards, mem, usable, w.batch / step, bound, step, None,
                       price, "", tuple(notes), net.nodes)

    speed = _training_speed(w, spec, cards, net)
    notes.extend(speed.notes)
    run = w.tokens / speed.tokens_per_s if w.tokens else None
    return GPUPlan(spec.name, w, True, cards, mem, usable, speed.tokens_per_s, speed.bound, speed.step_time_s, run,
                   price, "", tuple(notes), net.nodes, speed.mfu)


def plans(workload: Workload, gpus: Iterable[str] = GPUS, prices: Mapping[str, PriceRange] | None | str = "seed",
          reserve_fraction: float | None = None) -> list[GPUPlan]:
    """:func:`plan` for every GPU, each with its price from ``prices`` (None where the table has none).

    ``prices="seed"`` (the default) uses :func:`seed_prices`; None prices nothing. Chapter: *The A100
    today*, "A workload calculator".
    """
    table = seed_prices() if isinstance(prices, str) and prices == "seed" else prices
    if table is not None and not isinstance(table, Mapping):
        raise TypeError(f"prices must be a mapping of GPU name to PriceRange, 'seed' or None; got {prices!r}")
    return [plan(workload, g, _price(table, specs.get(g).name), reserve_fraction) for g in gpus]
