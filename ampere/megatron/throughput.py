"""One training iteration predicted from hardware: :func:`estimate` (an :class:`Estimate` whose
breakdown follows :data:`CATEGORIES`) and :func:`system_efficiency` (the one constant, fitted on
:data:`CALIBRATION_RUN`).

Chapter: *Megatron-LM: 3D parallelism predicted, validated, and run* (book/megatron.ipynb),
sections "A throughput model built from hardware" and "Calibration". Pure: a layer's GEMMs, attention
and memory-bound kernels (``hardware.py``, ``inputs.py``), the tensor-parallel, pipeline and
data-parallel communication (:mod:`ampere.collectives`), the bubble and the optimizer step; the memory
of the layout from ``gpu_memory.py``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from typing import Any, Mapping

from .. import check, collectives, fabrics, gemm, specs
from ..transformer import TransformerShape
from .gpu_memory import _zero_stage, memory_per_gpu
from .hardware import (ATTENTION_BENCHMARK, _allreduce, _flash_record, _flash_roofline, _gemm_fwd_bwd, _Hardware,
                       _hardware, attention_efficiency, flash_attention_efficiency)
from .inputs import _A100_MAMF, _ATTENTION, CALIBRATION_RUN, END_OPS, INPUTS, MEMORY_OPS
from .layouts import Layout, layout, params_per_gpu
from .published import TABLE1, table1_config
from .sizing import _cfg, _recompute, flops_per_iteration

# ===========================================================================================================
# The throughput model: one iteration
# ===========================================================================================================

#: Categories of :attr:`Estimate.breakdown`, in the order the chapter plots them.
CATEGORIES: tuple[str, ...] = (
    "layer GEMMs", "attention", "other memory-bound", "tensor-parallel all-reduce", "pipeline sends",
    "gradient accumulation", "embedding, logits, loss", "pipeline bubble", "data-parallel all-reduce",
    "optimizer step", "unmodelled (system efficiency)",
)


@dataclass(frozen=True)
class Estimate:
    """What :func:`estimate` predicts for one layout. Times in seconds, memory in bytes.

    ``breakdown`` splits ``time_per_iteration_s`` into :data:`CATEGORIES` (they sum to it);
    ``memory`` is :func:`memory_per_gpu`'s dictionary; ``figures_used`` names the measured figures (record
    ids, inputs with their bib keys, the node network) the prediction was built from.
    """

    config: TransformerShape
    layout: Layout
    gpu: str
    recompute: str  # "full", "selective" or "none"
    calibrated: bool
    system_efficiency: float  # 1.0 when not calibrated
    time_per_iteration_s: float
    tflops_per_gpu: float
    bubble_fraction: float  # pipeline bubble / ideal time, as the simulation would read it
    memory_bytes_per_gpu: float
    fits_in_memory: bool
    breakdown: dict[str, float]
    memory: dict[str, Any]
    notes: tuple[str, ...] = ()
    figures_used: tuple[str, ...] = ()  # the measured figures the prediction is built from, with their sources

    @property
    def percent_of_peak(self) -> float:
        return 100 * self.tflops_per_gpu * 1e12 / _hardware(self.gpu).peak

    @property
    def aggregate_pflops(self) -> float:
        return self.tflops_per_gpu * self.layout.gpus / 1e3

    def shares(self) -> dict[str, float]:
        """Breakdown as fractions of the iteration time."""
        return {k: v / self.time_per_iteration_s for k, v in self.breakdown.items()}


def _layer_costs(cfg: TransformerShape, hw: _Hardware, t: int, b: int,
                 sequence_parallel: bool = False, flash: bool = False) -> dict[str, dict[str, float]]:
    """Seconds per microbatch for one transformer layer on one GPU: forward and backward, by category.

    The layer's linear layers (:meth:`TransformerShape.linear_shapes`: QKV with grouped-query K and V,
    GPT or SwiGLU MLP) split by columns then rows over ``t`` ranks; with ``sequence_parallel`` the
    memory-bound kernels on b s h tensors (norms, bias-dropout-add, residuals) are split over the ``t``
    ranks too, and each all-reduce becomes a reduce-scatter plus an all-gather.
    """
    s, h, a = cfg.seq, cfg.hidden, cfg.heads
    tokens, heads, hd = b * s, a // t, cfg.head_dim
    row_split = {"o", "down"}
    fwd = dict.fromkeys(("layer GEMMs", "attention", "other memory-bound", "tensor-parallel all-reduce"), 0.0)
    bwd = dict(fwd)
    shapes = cfg.linear_shapes()
    groups: dict[tuple[int, int], int] = {}  # (in, out) of fused column-split matrices: QKV, gate+up
    for name, i, o in shapes:
        if name in row_split:
            key = (i // t, o)
            f, g = _gemm_fwd_bwd(hw, tokens, o, i // t)
            fwd["layer GEMMs"] += f
            bwd["layer GEMMs"] += g
        else:
            key = (i, -1 if name in ("q", "k", "v") else -2)
            groups[key] = groups.get(key, 0) + o // t
    for (i, _kind), n_out in groups.items():
        f, g = _gemm_fwd_bwd(hw, tokens, n_out, i)
        fwd["layer GEMMs"] += f
        bwd["layer GEMMs"] += g
    att_eff = attention_efficiency()
    if flash:  # one fused kernel: no s x s traffic; scores recomputed in the backward pass
        total = _flash_roofline(hw, s, hd, b * heads) / flash_attention_efficiency()
        fwd["attention"] += total * 4 / 14
        bwd["attention"] += total * 10 / 14
    else:
        for (m, n, k) in ((s, s, hd), (s, hd, s)):  # scores Q K^T, then probabilities times V
            f, g = _gemm_fwd_bwd(hw, m, n, k, b * heads)
            fwd["attention"] += f / att_eff
            bwd["attention"] += g / att_eff
    hp = h // t
    ffn_p = cfg.ffn * (2 if cfg.glu else 1) // t
    qkv_p = (h + 2 * cfg.kv_dim) // t
    replicated = tokens * h / (t if sequence_parallel else 1)
    counts = {"h": replicated, "hp": tokens * hp, "3hp": tokens * qkv_p, "4hp": tokens * ffn_p,
              "att": b * heads * s * s}
    for _name, kind, fb, bb, _why in MEMORY_OPS:
        if kind == "att" and flash:
            continue  # fused into the FlashAttention kernel
        if kind == "3hp" and not cfg.biases and fb:
            fb = 0  # no bias to add outside the GEMM
        cat, eff = ("attention", att_eff) if kind == "att" else ("other memory-bound", 1.0)
        if fb:
            fwd[cat] += (fb * counts[kind] / hw.hbm + hw.gap) / eff
        if bb:
            bwd[cat] += (bb * counts[kind] / hw.hbm + hw.gap) / eff
    nbytes = 2.0 * tokens * h  # the f/g collectives move b s h 16-bit values
    if sequence_parallel and t > 1:
        ar = _tp_collective(hw, "reduce_scatter", nbytes, t) + _tp_collective(hw, "all_gather", nbytes, t)
    else:
        ar = _tp_allreduce(hw, nbytes, t)
    fwd["tensor-parallel all-reduce"] = 2 * ar
    bwd["tensor-parallel all-reduce"] = 2 * ar
    return {"fwd": fwd, "bwd": bwd}


def _tp_collective(hw: _Hardware, op: str, nbytes: float, t: int) -> float:
    """A reduce-scatter or all-gather of ``nbytes`` over the tensor-parallel group inside one node."""
    if t == 1:
        return 0.0
    if t <= hw.per_node:
        return collectives.collective_time(op, nbytes, t, hw.nvl_bw, hw.nvl_lat)
    return collectives.collective_time(op, nbytes, t, hw.ib_bw, hw.ib_lat)


def _tp_allreduce(hw: _Hardware, nbytes: float, t: int) -> float:
    """A tensor-parallel all-reduce: NVSwitch inside a node; beyond 8 GPUs it spans nodes (InfiniBand)."""
    if t <= hw.per_node:
        return _allreduce(hw, nbytes, t)
    nodes = math.ceil(t / hw.per_node)
    return collectives.hierarchical_all_reduce_time(nbytes, nodes, gpus_per_node=hw.per_node,
                                                     intra_bytes_per_s=hw.nvl_bw,
                                                     inter_bytes_per_s=hw.per_node * hw.ib_bw,
                                                     intra_latency_s=hw.nvl_lat, inter_latency_s=hw.ib_lat)


def _p2p_time(hw: _Hardware, cfg: TransformerShape, t: int, d: int, p: int, b: int, scatter_gather: bool) -> float:
    """One exchange between consecutive stages: b s h 16-bit values (forward activations or gradients).

    Stage k holds ranks [k t d, (k+1) t d): when the pipeline spans more than one node, some stage
    boundary crosses nodes, and the device behind it paces the pipeline.
    """
    nbytes = 2.0 * b * cfg.seq * cfg.hidden
    if t * d * p <= hw.per_node:  # the whole pipeline inside one node: NVLink
        return nbytes / hw.nvl_bw + hw.nvl_lat
    if scatter_gather and 1 < t <= hw.per_node:  # each tensor rank sends 1/t over its own adapter, then all-gather
        return (nbytes / t) / hw.ib_bw + hw.ib_lat + collectives.collective_time(
            "all_gather", nbytes, t, hw.nvl_bw, hw.nvl_lat)
    return nbytes / hw.ib_bw + hw.ib_lat


def _dp_allreduce_time(hw: _Hardware, nbytes: float, t: int, d: int) -> float:
    """All-reduce of ``nbytes`` over one data-parallel group (ranks ordered tensor, then data, then pipeline)."""
    if d == 1:
        return 0.0
    if t * d <= hw.per_node:
        return _allreduce(hw, nbytes, d)
    per_node = max(1, hw.per_node // t)  # members of this group in one node; each has its own adapter
    nodes = d // per_node
    return collectives.hierarchical_all_reduce_time(nbytes, nodes, gpus_per_node=per_node,
                                                     intra_bytes_per_s=hw.nvl_bw, inter_bytes_per_s=per_node * hw.ib_bw,
                                                     intra_latency_s=hw.nvl_lat, inter_latency_s=hw.ib_lat)


@functools.lru_cache(maxsize=4096)
def _estimate_cached(cfg: TransformerShape, gpus: int, batch: int, tensor: int, pipeline: int, microbatch: int,
                     interleave: int, recompute: str, gpu: str, scatter_gather: bool, ddp: str,
                     sequence_parallel: bool, distributed_optimizer: bool, eta: float,
                     network: fabrics.NodeNetwork, zero_stage: int = 0, flash: bool = False) -> Estimate:
    lay = layout(cfg, gpus, batch, tensor, pipeline, microbatch, interleave)
    hw = _hardware(gpu, network)
    t, p, d, m, v, b = tensor, pipeline, lay.data, lay.microbatches, interleave, microbatch
    s, h, V = cfg.seq, cfg.hidden, cfg.vocab
    tokens = b * s
    lc = _layer_costs(cfg, hw, t, b, sequence_parallel, flash)
    layers = lay.stage_layers(cfg)  # the heaviest stage paces the pipeline (uneven splits: ceil(l / p))
    if recompute == "full":  # every layer's forward runs a second time before its backward
        again = dict(lc["fwd"])
    elif recompute == "selective":  # only the attention core (scores, softmax, dropout, times V)
        again = {k: (lc["fwd"][k] if k == "attention" else 0.0) for k in lc["fwd"]}
    else:
        again = dict.fromkeys(lc["fwd"], 0.0)
    per_mb = {k: layers * (lc["fwd"][k] + again[k] + lc["bwd"][k]) for k in lc["fwd"]}
    n_par = params_per_gpu(cfg, t, p)
    # gradient accumulation per microbatch (torch DDP: autograd accumulates from the second microbatch on)
    acc_share = 1.0 if ddp == "local" else (m - 1) / m
    per_mb["gradient accumulation"] = acc_share * INPUTS["grad_accumulation_bytes"].value * n_par["max"] / hw.hbm
    per_mb["pipeline sends"] = 2 * v * _p2p_time(hw, cfg, t, d, p, b, scatter_gather) if p > 1 else 0.0
    # the ends of the model: embedding (first stage) and final LayerNorm, logits, loss (last stage)
    counts = {"h": tokens * h, "logit": tokens * V / t, "table": V * h / t}

    def end_ops(first: bool) -> float:
        ops = [o for o in END_OPS if ("first stage" in o[0]) == first]
        return sum((fb + bb) * counts[kind] / hw.hbm + 2 * hw.gap for _n, kind, fb, bb, _w in ops)

    # the embedding's output is all-reduced over the vocabulary-parallel ranks (forward); the logits' input
    # gradient too (backward), plus three small all-reduces of the vocabulary-parallel cross-entropy
    embed = end_ops(True) + _tp_allreduce(hw, 2.0 * tokens * h, t)
    f, g = _gemm_fwd_bwd(hw, tokens, V // t, h)
    logits = f + g + end_ops(False) + _tp_allreduce(hw, 2.0 * tokens * h, t) + 3 * _tp_allreduce(hw, 4.0 * tokens, t)
    typical = sum(per_mb.values())
    if p == 1:
        ends = embed + logits
        heaviest = typical + ends
    else:
        ends = max(embed, logits)
        heaviest = typical + ends
    bubble = (p - 1) / v * typical
    # data-parallel gradient all-reduce (16-bit gradients of the most loaded stage) and tied embeddings
    dp = _dp_allreduce_time(hw, 2.0 * n_par["max"], t, d)
    if ddp == "torch":  # overlapped with the last microbatch's backward; the last bucket is always exposed
        overlap = layers * lc["bwd"]["layer GEMMs"]
        bucket = _dp_allreduce_time(hw, min(INPUTS["ddp_bucket_bytes"].value, 2.0 * n_par["max"]), t, d)
        dp_exposed = max(dp - overlap, bucket)
    else:
        dp_exposed = dp
    if p > 1 and cfg.tied_embeddings:  # first and last stage hold the tied word embedding: sum its gradient
        dp_exposed += collectives.collective_time("all_reduce", 2.0 * V * h / t, 2, hw.ib_bw, hw.ib_lat)
    # the optimizer step streams every parameter's state; a distributed optimizer updates 1/d of them (its
    # reduce-scatter + all-gather move the same bytes as the all-reduce on a ring)
    optimizer = INPUTS["optimizer_bytes"].value * n_par["max"] / hw.hbm / (d if zero_stage >= 1 else 1)
    if zero_stage == 3:  # the 16-bit weights are all-gathered before each microbatch's forward and backward
        gather = collectives.collective_time("all_gather", 2.0 * n_par["max"], d, hw.ib_bw, hw.ib_lat) \
            if t * d > hw.per_node else (collectives.collective_time("all_gather", 2.0 * n_par["max"], d, hw.nvl_bw,
                                                                    hw.nvl_lat) if d > 1 else 0.0)
        dp_exposed += 2 * m * gather  # exposed: no overlap with compute is modelled
    modelled = m * heaviest + bubble + dp_exposed + optimizer
    breakdown = {k: 0.0 for k in CATEGORIES}
    for k, val in per_mb.items():
        breakdown[k] += m * val
    breakdown["embedding, logits, loss"] = m * ends
    breakdown["pipeline bubble"] = bubble
    breakdown["data-parallel all-reduce"] = dp_exposed
    breakdown["optimizer step"] = optimizer
    total = modelled / eta
    breakdown["unmodelled (system efficiency)"] = total - modelled
    flops = flops_per_iteration(cfg, batch, recompute)
    mem = memory_per_gpu(cfg, gpus, batch, tensor, pipeline, microbatch, interleave, recompute=recompute,
                         sequence_parallel=sequence_parallel, gpu=gpu, zero_stage=zero_stage)
    notes = list(hw.notes)
    if eta != 1.0 and hw.spec.name != "A100-SXM4-80GB":
        notes.append("the system efficiency was calibrated on an A100 80GB run and is applied unchanged")
    used = []
    try:
        _f, _shape, mrec = gemm.mamf_flops(hw.spec, "bf16")
        used.append(f"GEMM ceiling: {mrec.id} ({gemm.matmul_tflops(mrec):.1f} TFLOP/s; {mrec.source}, {mrec.where})")
    except ValueError:
        used.append(f"GEMM ceiling: the A100 SXM's MAMF fraction ({_A100_MAMF[2]}), no figure for {hw.spec.name}")
    if flash:
        frec = _flash_record()
        used.append(f"attention core: {frec.id} ({frec.source}, {frec.where})")
    else:
        used.append(f"attention core: {ATTENTION_BENCHMARK['source']}, {_ATTENTION['rows'][0]['where']}")
    for name in ("hbm_fraction", "kernel_gap_s", "nvswitch_allreduce_busbw", "ib_fraction"):
        i = INPUTS[name]
        used.append(f"{name}: {i.value:.4g} {i.unit} ({i.source or 'assumption'})")
    used.append(f"node network: {network.name} ({network.source or 'assumption'})")
    if eta != 1.0:
        used.append(f"2021 system efficiency {eta:.3f} fitted on Table 1's {CALIBRATION_RUN} row")
    return Estimate(config=cfg, layout=lay, gpu=hw.spec.name, recompute=recompute, calibrated=eta != 1.0,
                    system_efficiency=eta, time_per_iteration_s=total, tflops_per_gpu=flops / gpus / total / 1e12,
                    bubble_fraction=bubble / (m * heaviest), memory_bytes_per_gpu=mem["total"],
                    fits_in_memory=mem["fits"], breakdown=breakdown, memory=mem, notes=tuple(notes),
                    figures_used=tuple(used))


def estimate(cfg: TransformerShape, gpus: int, batch: int, tensor: int, pipeline: int, microbatch: int = 1,
             interleave: int = 1, recompute: str | bool = "full", gpu: str | specs.GPUSpec = "A100-SXM4-80GB",
             calibrated: bool = False, *, scatter_gather: bool = True, ddp: str = "local",
             sequence_parallel: bool = False, distributed_optimizer: bool = False,
             network: fabrics.NodeNetwork | None = None, zero_stage: int | None = None,
             flash_attention: bool = False) -> Estimate:
    """Predict one training iteration of ``cfg`` with PTD-P on ``gpus`` GPUs (Megatron-LM, 16-bit).

    Chapter: "A throughput model built from hardware". Per microbatch and GPU, a transformer layer costs
    its GEMMs (roofline with wave quantisation, :func:`gemm_time`, from the published MAMF figure of
    :mod:`ampere.gemm`), the attention's batched GEMMs and softmax/dropout traffic, the other memory-bound
    kernels of :data:`MEMORY_OPS`, and four tensor-parallel collectives over NVSwitch
    (:mod:`ampere.collectives`). ``network`` is the node's network as data (an
    :class:`ampere.fabrics.NodeNetwork`: GPUs per node, adapters and their rate, latencies; default
    :data:`ampere.fabrics.DGX_A100`; a 4-HCA node is ``fabrics.DGX_A100.with_(hcas_per_node=4)``). ``recompute`` is "full"
    (the forward runs twice), "selective" (the attention core runs twice, korthikanti2022reducing) or
    "none"; True/False are aliases of "full"/"none". ``sequence_parallel`` splits the b s h memory-bound
    kernels over the tensor ranks and turns each all-reduce into a reduce-scatter plus an all-gather;
    ``distributed_optimizer`` shards the optimizer state and step over the data-parallel ranks (ZeRO-1);
    ``zero_stage`` (0-3) generalises it: stage 2 also shards gradients (a reduce-scatter plus an
    all-gather, the same ring traffic as the all-reduce), stage 3 / FSDP also the weights and adds two
    all-gathers of the stage's 16-bit weights per microbatch (forward and backward), not overlapped.
    ``flash_attention=True`` (for software that used it) replaces the unfused attention core by one fused
    kernel at :func:`flash_attention_efficiency` of its GEMM roofline, with no s x s memory traffic.
    A device's microbatch adds its gradient accumulation and its pipeline sends (scatter/gather over
    InfiniBand); the first and last stages add the embedding and the logits and loss. The iteration is
    ``m x (heaviest device) + (p-1)/v x (typical device) + exposed data-parallel all-reduce + optimizer``,
    the pipeline part checked against :func:`simulate_schedule`.

    By default (``calibrated=False``) no end-to-end constant is applied: the prediction is built from
    the inputs of :data:`INPUTS` only. ``calibrated=True`` divides the time by the 2021 system efficiency
    of :func:`system_efficiency` (ONE constant, fitted on :data:`CALIBRATION_RUN`), kept as a comparison.
    ``Estimate.fits_in_memory`` is False for a layout whose memory (:func:`memory_per_gpu`) exceeds the GPU.

    ``ddp`` is "local" (Megatron's DDP: all-reduce after the backward pass, the paper's runs from 39B up)
    or "torch" (overlapped with the last microbatch's backward). ``cfg`` must be a :func:`GPTConfig`
    (``TypeError`` otherwise); a layout that does not divide raises ``ValueError`` (see :func:`layout`).
    """
    cfg = _cfg(cfg)
    rc = _recompute(recompute)
    calibrated = check.boolean("calibrated", calibrated)
    scatter_gather = check.boolean("scatter_gather", scatter_gather)
    sequence_parallel = check.boolean("sequence_parallel", sequence_parallel)
    distributed_optimizer = check.boolean("distributed_optimizer", distributed_optimizer)
    flash_attention = check.boolean("flash_attention", flash_attention)
    check.one_of("ddp", ddp, ("local", "torch"))
    spec = specs.get(gpu)
    layout(cfg, gpus, batch, tensor, pipeline, microbatch, interleave)  # ValueError before anything else
    eta = system_efficiency() if calibrated else 1.0
    net = fabrics.DGX_A100 if network is None else network
    _hardware(spec, net)  # TypeError for a network that is not a NodeNetwork
    est = _estimate_cached(cfg, gpus, batch, tensor, pipeline, microbatch, interleave, rc, spec.name,
                           scatter_gather, ddp, sequence_parallel, distributed_optimizer, eta, net,
                           _zero_stage(zero_stage, distributed_optimizer), flash_attention)
    return replace(est, breakdown=dict(est.breakdown), memory=dict(est.memory))  # callers may edit their copy


def _row_estimate(row: Mapping[str, Any], calibrated: bool = True, **overrides: Any) -> Estimate:
    """A published row's layout, estimated (calibrated by default: the 2021 comparison of the chapter)."""
    kw = dict(microbatch=row["microbatch"], interleave=row.get("interleave", 1), ddp=row.get("ddp", "local"))
    kw.update(overrides)
    return estimate(table1_config(row), row["gpus"], row["batch"], row["tensor"], row["pipeline"],
                    calibrated=calibrated, **kw)


@functools.lru_cache(maxsize=1)
def system_efficiency() -> float:
    """The model's one calibrated constant: published / predicted throughput of :data:`CALIBRATION_RUN`.

    Chapter: "Calibration". It stands for what a hardware model does not see: clocks sustained under the
    power limit over a whole run, jitter and stragglers at the many synchronisations per layer, allocator
    and CPU stalls, data loading and logging.
    """
    row = next(r for r in TABLE1 if r["name"] == CALIBRATION_RUN)
    return row["tflops_per_gpu"] / _row_estimate(row, calibrated=False).tflops_per_gpu
