"""The workload calculator: does a :class:`~ampere.today.Workload` fit on a GPU, on how many cards and
nodes, how fast (decoding bound or training time), and what does it cost (:func:`plan`, :func:`plans`).

Chapter: *The A100 today* (book/a100-today.ipynb), "A workload calculator". Pure Python: no torch, no
matplotlib. Training plans take time and memory from one layout search (``training.py``: the Megatron
chapter's estimate on the plan's network); inference from ``ampere.memory`` and ``ampere.hbm.decode_bound``;
the network from ``network.py``.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from .. import check, specs
from .catalogue import GPUS
from .network import MAX_CARDS, Network, _allowed_cards, _network
from .prices import PriceRange, _price, _prices_arg, _user_price, seed_prices
from .training import MEMORY_CONVENTION, _best_layout, _Choice, _speed
from .workload import GPUPlan, Workload


def _inference_memory(w: Workload) -> Any:
    """``ampere.memory.model_memory`` of an inference workload on one card (weights and KV cache)."""
    from .. import memory

    return memory.model_memory(w.shape(), mode="inference", weights=w.weights,
                               weight_overhead_bits=w.weight_overhead_bits(), context=w.context, batch=w.batch,
                               kv_cache="fp16")


def _zero3_memory(w: Workload, cards: int) -> Any:
    """Training state of a bare parameter count with ZeRO-3 over ``cards`` (no layout: no shape to time)."""
    from .. import memory

    return memory.model_memory(w.params, mode="training", finetune="full", data_parallel=cards,
                               zero_stage=3 if cards > 1 else 0, convention=MEMORY_CONVENTION)


def _state_floor(w: Workload, spec: specs.GPUSpec, cards: int) -> float:
    """Bytes per card no layout of ``cards`` can go below: the training state sharded over every card."""
    from .. import memory

    if w.task in ("lora", "qlora"):
        bits = memory.FORMAT_BITS["nf4"] if w.task == "qlora" else memory.FORMAT_BITS["bf16"]
        return w.params * bits / 8 / cards
    return w.params * memory.state_bytes_per_param(3, cards, MEMORY_CONVENTION).total


def _train(w: Workload, spec: specs.GPUSpec, usable: float, notes: list[str]
           ) -> tuple[int, Network, _Choice | None, float] | str:
    """Fewest cards (from ``w.min_cards``) with a layout that fits, the network, the layout and its memory per
    card; or why there is none."""
    last = ""
    for n in range(w.min_cards, w.max_cards + 1):
        if not _allowed_cards(spec, n) or _state_floor(w, spec, n) > usable:
            continue
        net = _network(spec, n, w.nvlink_bridges, w.hcas_per_node)
        if net.reason:
            last = net.reason
            continue
        if w.shape() is None:  # a bare parameter count (fixed utilisation): ZeRO-3 arithmetic, no layout
            est = _zero3_memory(w, n)
            if est.fits(spec, memory_reserve(spec, usable)):
                notes.append("memory: ZeRO-3 training state of a parameter count (no shape, no layout, no "
                             "activations)")
                return n, net, None, est.total_bytes
            continue
        choice = _best_layout(w, spec, n, net, usable)
        if choice is not None:
            return n, net, choice, choice.memory_bytes
    floor = next((k for k in range(w.max_cards + 1, MAX_CARDS + 1) if _allowed_cards(spec, k)
                  and _state_floor(w, spec, k) <= usable), None)
    state = f"the state alone needs {floor} cards" if floor else "the state alone needs too many cards"
    return last or f"needs more than {w.max_cards} cards ({state}; activations come on top)"


def memory_reserve(spec: specs.GPUSpec, usable: float) -> float:
    """The reserve that leaves ``usable`` bytes of what CUDA exposes on ``spec``."""
    return spec.cuda_visible_bytes - usable


def plan(workload: Workload, gpu: str | specs.GPUSpec, price: PriceRange | tuple[float, float] | None = None,
         reserve_fraction: float | None = None) -> GPUPlan:
    """Does ``workload`` fit on ``gpu``, on how many cards and nodes, how fast, and what does it cost?

    * **Capacity**: what a card may use is ``ampere.memory.usable_bytes`` (what CUDA exposes minus
      ``reserve_fraction`` of it, by default the book's runtime reserve), the rule of every chapter.
    * **Network** (``network.py``): cards fill one node first (a DGX-class NVSwitch node for SXM GPUs, a PCIe
      server for PCIe cards, with NVLink-bridged pairs when ``workload.nvlink_bridges``), then whole nodes of
      eight over the node's adapters (``workload.hcas_per_node``).
    * **Training** (full fine-tuning, pre-training, LoRA, QLoRA) comes from one search (``training.py``): on
      the fewest cards (at least ``workload.min_cards``) for which a layout fits, every tensor x pipeline x data
      layout, interleaved schedules included, is timed and sized by the Megatron chapter's
      ``ampere.megatron.estimate`` on the plan's network, LoRA and QLoRA derived from the same estimate
      (``adapters.py``); the plan takes the fastest layout that fits. The memory shown is the memory of the
      layout timed (``GPUPlan.estimate``, ``GPUPlan.memory_breakdown``). FP8 takes the BF16 layout's
      utilisation of the FP8 peak (an upper bound); ``workload.mfu`` set instead fixes the utilisation of the
      dense peak (the layout and its memory still come from the search).
    * **Inference**: weights and KV cache (``ampere.memory``) split evenly over the fewest cards that hold
      them; the decoding bound (``ampere.hbm.decode_bound``) split over the cards (tensor parallelism) plus
      two all-reduces of the activations per layer over the plan's network (``ampere.collectives``).
    * **Cost**: ``price`` ($/GPU-hour range) x cards; per million tokens; per run when ``tokens`` is given.

    A GPU without the precision (FP8 on an A100) or a workload needing more than ``max_cards`` cards gives
    ``feasible=False`` with the reason. Chapter: *The A100 today*, "A workload calculator".
    """
    from .. import memory

    spec = specs.get(gpu)
    if not isinstance(workload, Workload):
        raise TypeError(f"workload={workload!r} must be an ampere.today.Workload")
    if reserve_fraction is not None:
        if isinstance(reserve_fraction, bool) or not isinstance(reserve_fraction, (int, float)) \
                or not 0 <= reserve_fraction < 1:
            raise ValueError(f"reserve_fraction={reserve_fraction!r} must be a number within [0, 1)")
    if isinstance(price, (tuple, list)):
        price = _user_price(price, "price")
    elif price is not None and not isinstance(price, PriceRange):
        raise ValueError(f"price={price!r} must be a PriceRange, (low, high) in $/GPU-hour, or None")
    w = workload
    usable = memory.usable_bytes(spec, memory.runtime_reserve(spec, reserve_fraction))
    notes: list[str] = []

    def infeasible(reason: str, mem: float) -> GPUPlan:
        return GPUPlan(spec.name, w, False, None, mem, usable, None, None, None, None, price, reason, tuple(notes))

    if w.is_training and not spec.supports(w.precision):
        tensor = ", ".join(p for p in spec.precisions() if p in specs.TENSOR_PRECISIONS)
        return infeasible(f"{w.precision} is not supported on {spec.name} (tensor precisions: {tensor})",
                          _state_floor(w, spec, 1))
    if w.is_training:
        found = _train(w, spec, usable, notes)
        if isinstance(found, str):
            return infeasible(found, _state_floor(w, spec, 1))
        cards, net, choice, mem = found
        if cards > 1:
            notes.insert(0, net.describe())
        speed = _speed(w, spec, cards, choice)
        notes.extend(speed.notes)
        run = w.tokens / speed.tokens_per_s if w.tokens else None
        return GPUPlan(spec.name, w, True, cards, mem, usable, speed.tokens_per_s, speed.bound, speed.step_time_s,
                       run, price, "", tuple(notes), net.nodes, speed.mfu,
                       choice.layout_text() if choice else "", choice.estimate if choice else None,
                       dict(choice.memory) if choice else None)

    est = _inference_memory(w)
    cards = max(est.gpus_needed(spec, memory_reserve(spec, usable)), w.min_cards)
    if cards > w.max_cards:
        return infeasible(f"needs {cards} cards, more than max_cards={w.max_cards}", est.total_bytes)
    while not _allowed_cards(spec, cards) and cards <= w.max_cards:
        cards += 1
    if cards > w.max_cards:
        return infeasible(f"needs whole nodes of 8 cards beyond one node, more than max_cards={w.max_cards}",
                          est.total_bytes)
    mem = est.total_bytes / cards
    net = _network(spec, cards, w.nvlink_bridges, w.hcas_per_node)
    if net.reason:
        return infeasible(net.reason, mem)
    if cards > 1:
        notes.append(net.describe())
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
                   price, "", tuple(notes), net.nodes, memory_breakdown={k: v / cards for k, v in
                                                                         est.breakdown.items()})


def plans(workload: Workload, gpus: Iterable[str] = GPUS, prices: Mapping[str, PriceRange] | None | str = "seed",
          reserve_fraction: float | None = None) -> list[GPUPlan]:
    """:func:`plan` for every GPU, each with its price from ``prices`` (None where the table has none).

    ``prices="seed"`` (the default) uses :func:`seed_prices`; None prices nothing. Chapter: *The A100
    today*, "A workload calculator".
    """
    if isinstance(prices, str):
        check.one_of("prices", prices, ("seed",))
        table = seed_prices()
    else:
        table = None if prices is None else _prices_arg("prices", prices)
    names = check.gpus("gpus", list(gpus) if isinstance(gpus, tuple) else gpus)
    return [plan(workload, g, _price(table, specs.get(g).name), reserve_fraction) for g in names]
