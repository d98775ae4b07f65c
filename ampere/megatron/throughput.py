"""One training iteration predicted from hardware: :func:`estimate` (an :class:`Estimate` with the time and
the memory per GPU of one layout under one set of options, and its breakdown by :data:`CATEGORIES`) and
:func:`system_efficiency` (the 2021 comparison constant, fitted on :data:`CALIBRATION_RUN`, off by default).

Chapter: *Megatron-LM: 3D parallelism predicted, validated, and run* (book/megatron.ipynb),
sections "A throughput model built from hardware" and "Calibration". Pure: a layer's GEMMs, attention
and memory-bound kernels (``hardware.py``, ``inputs.py``), the tensor-parallel, pipeline and
data-parallel communication (:mod:`ampere.collectives`), the bubble and the optimizer step; the memory
of the layout from ``gpu_memory.py``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Any, Mapping

from .. import check, fabrics, gemm, memory, specs
from ..transformer import TransformerShape
from .comms import dp_bytes_per_s, dp_collective, overlapped, p2p_time, slowdown_at, tp_collective
from .gpu_memory import DEFAULT_CONVENTION, _zero_stage, memory_per_gpu
from .hardware import _A100_MAMF, ATTENTION_BENCHMARK, _flash_record, _gemm, _Hardware, _hardware
from .inputs import _ATTENTION, CALIBRATION_RUN, END_OPS, INPUTS
from .layer_costs import LAYER_CATEGORIES, layer_costs
from .layouts import Layout, layout, params_per_gpu
from .published import TABLE1, table1_config
from .sizing import FLOP_CONVENTIONS, MAX_BATCH, MAX_GPUS, RECOMPUTE, _cfg, _recompute, flops_per_iteration
from .stacks import Software
from .stacks import software as _software

# ===========================================================================================================
# The throughput model: one iteration
# ===========================================================================================================

#: Categories of :attr:`Estimate.breakdown`, in the order the chapter plots them.
CATEGORIES: tuple[str, ...] = LAYER_CATEGORIES + (
    "pipeline sends", "gradient accumulation", "embedding, logits, loss", "pipeline bubble",
    "data-parallel all-reduce", "optimizer step", "unmodelled (system efficiency)",
)
#: How the chapter labels the categories whose names keep their 2021 wording for the programs that read them:
#: "all-reduce" covers every collective of its kind (with sequence parallelism reduce-scatters and
#: all-gathers, the backward re-gather included; with ZeRO the reduce-scatter and all-gather, with ZeRO-3
#: every layer's weight gathers).
CATEGORY_LABELS: dict[str, str] = {"tensor-parallel all-reduce": "tensor-parallel collectives",
                                   "data-parallel all-reduce": "data-parallel collectives (ZeRO gathers included)"}
#: The categories that are communication (:meth:`Estimate.communication_share`).
COMMUNICATION = ("tensor-parallel all-reduce", "pipeline sends", "data-parallel all-reduce")
#: Numeric precision of a run: it sets how gradients are accumulated and reduced (bf16: in fp32).
PRECISIONS = ("fp16", "bf16")


@dataclass(frozen=True)
class Estimate:
    """What :func:`estimate` predicts for one layout and one set of options. Times in seconds, memory in bytes.

    ``breakdown`` splits ``time_per_iteration_s`` into :data:`CATEGORIES` (they sum to it); ``memory`` is
    :func:`memory_per_gpu`'s dictionary for the same options (``memory_convention`` names how the training
    state is counted). Throughput comes in three FLOP conventions (:data:`FLOP_CONVENTIONS`):
    ``tflops_per_gpu`` counts hardware FLOPs (recomputation included, the paper's eq. 3),
    ``model_tflops_per_gpu`` model FLOPs (3 passes, full attention: the count behind Korthikanti's MFU and
    Megatron-LM until March 2025), ``causal_model_tflops_per_gpu`` Megatron-LM's count since then;
    ``mfu`` and ``hfu`` are the model and hardware rates over the dense 16-bit peak. ``figures_used`` names
    the measured figures the prediction was built from.
    """

    config: TransformerShape
    layout: Layout
    gpu: str
    recompute: str  # "full", "selective" or "none"
    calibrated: bool
    system_efficiency: float  # 1.0 when not calibrated
    time_per_iteration_s: float
    tflops_per_gpu: float  # hardware FLOPs (FLOP_CONVENTIONS["hardware"])
    bubble_fraction: float  # pipeline bubble / ideal time, as the simulation would read it
    memory_bytes_per_gpu: float
    fits_in_memory: bool
    breakdown: dict[str, float]
    memory: dict[str, Any]
    notes: tuple[str, ...] = ()
    figures_used: tuple[str, ...] = ()  # the measured figures the prediction is built from, with their sources
    model_tflops_per_gpu: float = 0.0  # FLOP_CONVENTIONS["model"]
    causal_model_tflops_per_gpu: float = 0.0  # FLOP_CONVENTIONS["model-causal"]
    software: str = ""  # Software.name
    options: tuple[tuple[str, Any], ...] = ()  # the options the time and the memory were computed with
    flop_convention: str = "hardware"  # the convention of tflops_per_gpu

    def __post_init__(self) -> None:
        if not isinstance(self.config, TransformerShape):
            raise TypeError(f"config must be a GPTConfig (TransformerShape), got {self.config!r:.60} "
                            f"({type(self.config).__name__})")
        if not isinstance(self.layout, Layout):
            raise TypeError(f"layout must be a Layout, got {self.layout!r:.60} ({type(self.layout).__name__})")
        object.__setattr__(self, "gpu", specs.get(self.gpu).name)
        check.one_of("recompute", self.recompute, RECOMPUTE)
        check.boolean("calibrated", self.calibrated)
        check.fraction("system_efficiency", self.system_efficiency, allow_zero=False)
        check.positive("time_per_iteration_s", self.time_per_iteration_s)
        for f in ("tflops_per_gpu", "bubble_fraction", "memory_bytes_per_gpu", "model_tflops_per_gpu",
                  "causal_model_tflops_per_gpu"):
            check.nonneg(f, getattr(self, f))
        check.boolean("fits_in_memory", self.fits_in_memory)
        breakdown = check.mapping("breakdown", self.breakdown)
        if list(breakdown) != list(CATEGORIES):
            raise ValueError(f"breakdown must have the categories {', '.join(CATEGORIES)} in that order")
        for k, v in breakdown.items():
            check.nonneg(f"breakdown[{k!r}]", v)
        check.mapping("memory", self.memory)
        check.string("software", self.software, allow_empty=True, max_len=80)
        for f in ("notes", "figures_used"):
            check.sequence(f, getattr(self, f), lambda n, v: check.string(n, v, max_len=2000), min_len=0,
                           max_len=200)
        for i, pair in enumerate(check.sequence("options", self.options, min_len=0, max_len=100)):
            if not (isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], str)):
                raise TypeError(f"options[{i}] must be a (name, value) pair, got {pair!r:.60}")
        check.one_of("flop_convention", self.flop_convention, tuple(FLOP_CONVENTIONS))

    @property
    def percent_of_peak(self) -> float:
        """Hardware FLOPs over the dense 16-bit peak, in percent (the HFU)."""
        return 100 * self.tflops_per_gpu * 1e12 / _hardware(self.gpu).peak

    @property
    def hfu(self) -> float:
        """Hardware FLOPs utilisation: hardware FLOP/s over the dense 16-bit peak (a fraction)."""
        return self.tflops_per_gpu * 1e12 / _hardware(self.gpu).peak

    @property
    def mfu(self) -> float:
        """Model FLOPs utilisation, the "model" convention (3 passes, full s x s attention) over the peak."""
        return self.model_tflops_per_gpu * 1e12 / _hardware(self.gpu).peak

    @property
    def tokens_per_s_per_gpu(self) -> float:
        return self.layout.batch * self.config.seq / self.time_per_iteration_s / self.layout.gpus

    @property
    def aggregate_pflops(self) -> float:
        return self.tflops_per_gpu * self.layout.gpus / 1e3

    def shares(self) -> dict[str, float]:
        """Breakdown as fractions of the iteration time."""
        return {k: v / self.time_per_iteration_s for k, v in self.breakdown.items()}

    def communication_share(self) -> float:
        """Fraction of the iteration spent in exposed communication (:data:`COMMUNICATION`)."""
        return sum(self.breakdown[k] for k in COMMUNICATION) / self.time_per_iteration_s

    def throughput_text(self) -> str:
        """The throughput with its FLOP conventions named, for printing."""
        return (f"{self.model_tflops_per_gpu:.1f} TFLOP/s per GPU in model FLOPs (MFU {self.mfu:.1%}), "
                f"{self.tflops_per_gpu:.1f} in hardware FLOPs (HFU {self.hfu:.1%}), "
                f"{self.causal_model_tflops_per_gpu:.1f} in Megatron-LM's causal count")


def _ends(cfg: TransformerShape, hw: _Hardware, t: int, b: int) -> tuple[float, float, float]:
    """(embedding stage, logits stage, logits backward compute) seconds per microbatch at the model's ends:
    the embedding and its all-reduce over the vocabulary-parallel ranks (forward); the final norm, logits
    GEMMs, fp32 cross-entropy, the logits' input-gradient all-reduce and three small all-reduces of the
    vocabulary-parallel cross-entropy."""
    tokens, h, V = b * cfg.seq, cfg.hidden, cfg.vocab
    counts = {"h": tokens * h, "logit": tokens * V / t, "table": V * h / t}

    def end_ops(first: bool) -> float:
        ops = [o for o in END_OPS if ("first stage" in o[0]) == first]
        return sum((fb + bb) * counts[kind] / hw.hbm + 2 * hw.gap for _n, kind, fb, bb, _w in ops)

    embed = end_ops(True) + tp_collective(hw, "all_reduce", 2.0 * tokens * h, t)
    f = _gemm(hw, tokens, V // t, h)
    g = _gemm(hw, tokens, h, V // t) + _gemm(hw, h, V // t, tokens)
    logits = (f + g + end_ops(False) + tp_collective(hw, "all_reduce", 2.0 * tokens * h, t)
              + 3 * tp_collective(hw, "all_reduce", 4.0 * tokens, t))
    return embed, logits, g


@functools.lru_cache(maxsize=64)
def _figures_used(spec: specs.GPUSpec, ceiling: str, flash: bool) -> tuple[str, ...]:
    """The measured figures behind an estimate on ``spec`` (GEMM ceiling, attention core, the inputs), with their
    sources; cached, since every estimate of a layout search reads the same ones."""
    used = []
    sustained = gemm.sustained_matmul_flops(spec) if ceiling == "sustained" else None
    if sustained is not None:
        srec = sustained[2]
        used.append(f"GEMM ceiling: {srec.id} ({gemm.matmul_tflops(srec):.0f} TFLOP/s, long GEMM on random data; "
                    f"{srec.source}, {srec.where})")
    else:
        try:
            _f, _shape, mrec = gemm.mamf_flops(spec, "bf16")
            used.append(f"GEMM ceiling: {mrec.id} ({gemm.matmul_tflops(mrec):.1f} TFLOP/s; {mrec.source}, "
                        f"{mrec.where})")
        except ValueError:
            used.append(f"GEMM ceiling: the A100 SXM's MAMF fraction ({_A100_MAMF[2]}), no figure for {spec.name}")
    if flash:
        frec = _flash_record()
        used.append(f"attention core: {frec.id} ({frec.source}, {frec.where})")
    else:
        used.append(f"attention core: {ATTENTION_BENCHMARK['source']}, {_ATTENTION['rows'][0]['where']}")
    for name in ("hbm_fraction", "kernel_gap_s", "nvswitch_allreduce_busbw", "nvlink_overhead_s", "ib_fraction",
                 "ib_overhead_s", "overlap_slowdown"):
        i = INPUTS[name]
        used.append(f"{name}: {i.value:.4g} {i.unit} ({i.source or 'assumption'})")
    return tuple(used)


@functools.lru_cache(maxsize=4096)
def _estimate_cached(cfg: TransformerShape, gpus: int, batch: int, tensor: int, pipeline: int, microbatch: int,
                     interleave: int, recompute: str, gpu: str, sw: Software, ddp: str, scatter_gather: bool,
                     sequence_parallel: bool, eta: float, network: fabrics.NodeNetwork, zero_stage: int,
                     flash: bool, precision: str, reduce_bytes: int, convention: str, offload: str,
                     ceiling: str) -> Estimate:
    lay = layout(cfg, gpus, batch, tensor, pipeline, microbatch, interleave)
    hw = _hardware(gpu, network, ceiling)
    t, p, d, m, v, b = tensor, pipeline, lay.data, lay.microbatches, interleave, microbatch
    s, h = cfg.seq, cfg.hidden
    k = slowdown_at(hw, hw.nvl_bw if t <= hw.per_node else min(hw.nvl_bw, hw.per_node * hw.ib_bw))  # tensor-parallel
    lc = layer_costs(cfg, hw, t, b, sequence_parallel, flash, sw.fused_kernels, sw.tp_overlap, k)
    k_dp = slowdown_at(hw, dp_bytes_per_s(hw, t, d))  # data-parallel collectives
    layers = lay.stage_layers(cfg)  # the heaviest stage paces the pipeline (uneven splits: ceil(l / p))
    if recompute == "full":  # every layer's forward runs a second time before its backward
        again = dict(lc["fwd"])
    elif recompute == "selective":  # only the attention core (scores, softmax, dropout, times V)
        again = {key: (lc["fwd"][key] if key == "attention" else 0.0) for key in lc["fwd"]}
    else:
        again = dict.fromkeys(lc["fwd"], 0.0)
    per_mb = {key: layers * (lc["fwd"][key] + again[key] + lc["bwd"][key]) for key in lc["fwd"]}
    n_par = params_per_gpu(cfg, t, p)
    # gradient accumulation per microbatch (torch DDP: autograd accumulates from the second microbatch on);
    # bf16 accumulates into fp32 main gradients; ZeRO-2/3 accumulate only their shard
    acc_bytes = INPUTS["grad_accumulation_bytes_fp32" if precision == "bf16" else "grad_accumulation_bytes"].value
    acc_share = 1.0 if ddp == "local" else (m - 1) / m
    per_mb["gradient accumulation"] = acc_share * acc_bytes * n_par["max"] / hw.hbm / (d if zero_stage >= 2 else 1)
    per_mb["pipeline sends"] = (2 * v * p2p_time(hw, 2.0 * b * s * h, t, d, p, scatter_gather)) if p > 1 else 0.0
    embed, logits, logits_bwd = _ends(cfg, hw, t, b)
    ends = embed + logits if p == 1 else max(embed, logits)
    typical = sum(per_mb.values())
    heaviest = typical + ends
    bubble = (p - 1) / v * typical
    # data-parallel communication
    layer_params = n_par["max"] / max(layers, 1)
    dp_per_mb = 0.0
    if zero_stage == 3 and d > 1:  # weights gathered for each layer's forward and backward, gradients reduced
        fwd_compute = sum(val for key, val in lc["fwd"].items() if key != "tensor-parallel all-reduce")
        bwd_compute = sum(val for key, val in lc["bwd"].items() if key != "tensor-parallel all-reduce")
        bwd_compute += sum(val for key, val in again.items() if key != "tensor-parallel all-reduce")
        ag = dp_collective(hw, "all_gather", 2.0 * layer_params, t, d)
        rs = dp_collective(hw, "reduce_scatter", reduce_bytes * layer_params, t, d)
        if sw.zero3_prefetch == "both":  # the next layer's gather runs beside this layer's compute
            per_layer = overlapped(ag, fwd_compute, k_dp) + overlapped(ag + rs, bwd_compute, k_dp)
        elif sw.zero3_prefetch == "forward":  # backward: the next layer's gather is issued after this layer's
            # gradients, beside their reduce-scatter (they share the adapters): exposed; the rest of the
            # reduce-scatter runs beside the next layer's compute
            shared = min(ag, rs)
            per_layer = overlapped(ag, fwd_compute, k_dp) + ag + shared + overlapped(rs - shared, bwd_compute, k_dp)
        else:  # gathered just before each layer: in the backward pass beside the last reduce-scatter, whose
            # rest overlaps the next layer's compute when the stack overlaps gradient reduction (overlap_comm)
            shared = min(ag, rs)
            per_layer = 2 * ag + shared + (overlapped(rs - shared, bwd_compute, k_dp) if sw.dp_overlap else rs - shared)
        first = ag if sw.zero3_prefetch != "none" else 0.0  # the first layer's gather overlaps nothing
        table = cfg.vocab * h / t
        emb_ag = dp_collective(hw, "all_gather", 2.0 * table, t, d)
        emb_rs = dp_collective(hw, "reduce_scatter", reduce_bytes * table, t, d)
        dp_per_mb = layers * per_layer + first + emb_ag + (overlapped(emb_ag + emb_rs, logits_bwd, k_dp)
                                                          if sw.zero3_prefetch == "both" else emb_ag + emb_rs)
        dp_end = 0.0
    else:
        grads = reduce_bytes * n_par["max"]
        if zero_stage == 0:
            reduce = dp_collective(hw, "all_reduce", grads, t, d)
            gather = 0.0
        else:  # reduce-scatter of the gradients, all-gather of the updated 16-bit weights
            reduce = dp_collective(hw, "reduce_scatter", grads, t, d)
            gather = dp_collective(hw, "all_gather", 2.0 * n_par["max"], t, d)
        if zero_stage == 2 and m > 1:  # gradients are partitioned: reduced every microbatch, not accumulated
            dp_per_mb = overlapped(reduce, layers * lc["bwd"]["layer GEMMs"], k_dp) if ddp == "torch" else reduce
            reduce = 0.0
        if ddp == "torch" and reduce:  # bucketed, beside the last microbatch's backward; the last bucket exposed
            bucket = dp_collective(hw, "all_reduce" if zero_stage == 0 else "reduce_scatter",
                                   min(INPUTS["ddp_bucket_bytes"].value, grads), t, d)
            reduce = max(overlapped(reduce, layers * lc["bwd"]["layer GEMMs"], k_dp), bucket)
        dp_end = reduce + gather
    if p > 1 and cfg.tied_embeddings:  # first and last stage hold the tied word embedding: sum its gradient
        dp_end += p2p_time(hw, reduce_bytes * 2.0 * cfg.vocab * h / t, t, 1, 2, False) * 2
    # the optimizer step streams every parameter's state; ZeRO-1 and up update 1/d of them
    optimizer = INPUTS["optimizer_bytes"].value * n_par["max"] / hw.hbm / (d if zero_stage >= 1 else 1)
    modelled = m * (heaviest + dp_per_mb) + bubble + dp_end + optimizer
    breakdown = dict.fromkeys(CATEGORIES, 0.0)
    for key, val in per_mb.items():
        breakdown[key] += m * val
    breakdown["embedding, logits, loss"] = m * ends
    breakdown["pipeline bubble"] = bubble
    breakdown["data-parallel all-reduce"] = m * dp_per_mb + dp_end
    breakdown["optimizer step"] = optimizer
    total = modelled / eta
    breakdown["unmodelled (system efficiency)"] = total - modelled
    hw_flops = flops_per_iteration(cfg, batch, recompute)
    model_flops = flops_per_iteration(cfg, batch, recompute, convention="model")
    causal_flops = flops_per_iteration(cfg, batch, recompute, convention="model-causal")
    mem = memory_per_gpu(cfg, gpus, batch, tensor, pipeline, microbatch, interleave, recompute=recompute,
                         sequence_parallel=sequence_parallel, gpu=gpu, zero_stage=zero_stage, flash_attention=flash,
                         convention=convention, offload=offload)
    notes = list(hw.notes)
    if eta != 1.0 and hw.spec.name != "A100-SXM4-80GB":
        notes.append("the system efficiency was calibrated on an A100 80GB run and is applied unchanged")
    used = [*_figures_used(hw.spec, ceiling, flash), f"node network: {network.name} ({network.source or 'assumption'})",
            f"software: {sw.label}"]
    if eta != 1.0:
        used.append(f"2021 system efficiency {eta:.3f} fitted on Table 1's {CALIBRATION_RUN} row")
    options = (("software", sw.name), ("recompute", recompute), ("sequence_parallel", sequence_parallel),
               ("flash_attention", flash), ("zero_stage", zero_stage), ("precision", precision),
               ("reduce_bytes", reduce_bytes), ("ddp", ddp), ("scatter_gather", scatter_gather),
               ("memory_convention", convention), ("offload", offload), ("gemm_ceiling", ceiling))
    rate = gpus * total * 1e12
    return Estimate(config=cfg, layout=lay, gpu=hw.spec.name, recompute=recompute, calibrated=eta != 1.0,
                    system_efficiency=eta, time_per_iteration_s=total, tflops_per_gpu=hw_flops / rate,
                    bubble_fraction=bubble / (m * heaviest), memory_bytes_per_gpu=mem["total"],
                    fits_in_memory=mem["fits"], breakdown=breakdown, memory=mem, notes=tuple(notes),
                    figures_used=tuple(used), model_tflops_per_gpu=model_flops / rate,
                    causal_model_tflops_per_gpu=causal_flops / rate, software=sw.name, options=options)


def estimate(cfg: TransformerShape, gpus: int, batch: int, tensor: int, pipeline: int, microbatch: int = 1,
             interleave: int = 1, recompute: str | bool = "full", gpu: str | specs.GPUSpec = "A100-SXM4-80GB",
             calibrated: bool = False, *, software: str | Software | None = None, scatter_gather: bool | None = None,
             ddp: str | None = None, sequence_parallel: bool = False, distributed_optimizer: bool = False,
             network: fabrics.NodeNetwork | None = None, zero_stage: int | None = None,
             flash_attention: bool | None = None, precision: str = "fp16", reduce_bytes: int | None = None,
             memory_convention: str = DEFAULT_CONVENTION, offload: str = "none",
             gemm_ceiling: str = "sustained") -> Estimate:
    """Predict one training iteration of ``cfg`` on ``gpus`` GPUs: its time and its memory per GPU, for one
    layout (t = ``tensor``, p = ``pipeline``, d = gpus / (t p), b = ``microbatch``, v = ``interleave``) and one
    set of options that both read.

    Chapter: "A throughput model built from hardware". Per microbatch and GPU, a transformer layer costs
    its GEMMs (roofline with wave quantisation, :func:`gemm_time`; ceiling ``gemm_ceiling``: "sustained", a
    long GEMM on random data at the power limit where one is published, or "mamf", the best of a shape
    search), its attention core, the memory-bound kernels of :data:`MEMORY_OPS`, and every tensor-parallel
    collective Megatron-LM issues (``ampere.megatron.layer_costs``; with ``sequence_parallel`` the
    reduce-scatters and all-gathers, including the backward pass's re-gather of each column-parallel input).
    A device's microbatch adds its gradient accumulation and pipeline sends; the first and last stages the
    embedding and the logits and loss. The iteration is ``m x (heaviest device) + (p-1)/v x (typical
    device) + exposed data-parallel communication + optimizer``, the pipeline part checked against
    :func:`simulate_schedule`.

    ``software`` (a name of :data:`STACKS` or a :class:`Software`; default "megatron-2021") says what the
    framework does: interleaving allowed, which collectives overlap compute (priced by
    :func:`ampere.megatron.comms.overlapped`: never free), fused kernels, FlashAttention by default.
    ``scatter_gather``, ``ddp`` ("local": gradient reduction after the backward pass; "torch": in buckets
    during it) and ``flash_attention`` override the stack's choice. ``zero_stage`` 0-3
    (``distributed_optimizer=True`` is 1; FSDP is 3: every layer's weights all-gathered for its forward and
    backward and its gradients reduce-scattered, overlapped when the stack prefetches); ``precision``
    "fp16" or "bf16" (bf16 accumulates and reduces gradients in fp32, ``reduce_bytes`` 4, unless given);
    ``network`` the node's network (:class:`ampere.fabrics.NodeNetwork`, default
    :data:`ampere.fabrics.DGX_A100`; a 4-HCA node is ``fabrics.DGX_A100.with_(hcas_per_node=4)``).
    ``recompute`` is "full", "selective" or "none" (True/False alias "full"/"none").

    Memory (:func:`memory_per_gpu`) reads the same options, FlashAttention included; ``memory_convention``
    ("megatron", "paper", "deepspeed") and ``offload`` say how the training state is counted, and
    ``Estimate.fits_in_memory`` compares with :func:`ampere.memory.usable_bytes`. By default no end-to-end
    constant is applied; ``calibrated=True`` divides the time by the 2021 system efficiency of
    :func:`system_efficiency`, kept as a comparison. A layout that does not divide raises ``ValueError``
    (see :func:`layout`); ``cfg`` must be a :func:`GPTConfig`.
    """
    cfg = _cfg(cfg)
    rc = _recompute(recompute)
    check.positive_int("gpus", gpus, maximum=MAX_GPUS)
    check.positive_int("batch", batch, maximum=MAX_BATCH)
    calibrated = check.boolean("calibrated", calibrated)
    sw = _software(software)
    sg = sw.scatter_gather if scatter_gather is None else check.boolean("scatter_gather", scatter_gather)
    sequence_parallel = check.boolean("sequence_parallel", sequence_parallel)
    distributed_optimizer = check.boolean("distributed_optimizer", distributed_optimizer)
    flash = sw.flash_attention if flash_attention is None else check.boolean("flash_attention", flash_attention)
    ddp_kind = ("torch" if sw.dp_overlap else "local") if ddp is None else check.one_of("ddp", ddp, ("local", "torch"))
    check.one_of("precision", precision, PRECISIONS)
    rb = (4 if precision == "bf16" else 2) if reduce_bytes is None else check.choice("reduce_bytes", reduce_bytes, (2, 4))
    spec = specs.get(gpu)
    layout(cfg, gpus, batch, tensor, pipeline, microbatch, interleave)  # ValueError before anything else
    if microbatch * cfg.seq > gemm.MAX_DIM:
        raise ValueError(f"microbatch x seq = {microbatch} x {cfg.seq} tokens in one GEMM; allowed: at most "
                         f"{gemm.MAX_DIM} (cuBLAS dimensions are 32-bit)")
    if interleave > 1 and not sw.interleave:
        raise ValueError(f"interleave={interleave}: the {sw.name!r} stack's pipeline engine has no interleaved "
                         f"schedule ({sw.sources.get('interleave', '')}); use interleave=1")
    eta = system_efficiency() if calibrated else 1.0
    net = fabrics.DGX_A100 if network is None else network
    _hardware(spec, net, gemm_ceiling)  # TypeError for a network that is not a NodeNetwork, ValueError for a ceiling
    check.one_of("memory_convention", memory_convention, tuple(memory.CONVENTIONS))
    check.one_of("offload", offload, memory.OFFLOAD)
    est = _estimate_cached(cfg, gpus, batch, tensor, pipeline, microbatch, interleave, rc, spec.name, sw, ddp_kind,
                           sg, sequence_parallel, eta, net, _zero_stage(zero_stage, distributed_optimizer), flash,
                           precision, rb, memory_convention, offload, gemm_ceiling)
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
