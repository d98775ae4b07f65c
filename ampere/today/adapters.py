"""LoRA and QLoRA on a Megatron layout: the memory and the step time of adapter fine-tuning, derived from the
same :class:`ampere.megatron.Estimate` as full training, and the published measurements that check them.

Chapter: *The A100 today* (book/a100-today.ipynb), "A workload calculator" and "Fine-tuning speed against
published runs". Pure Python: no torch, no matplotlib.

LoRA freezes the base weights and trains low-rank adapters on every linear layer [hu2021lora]; QLoRA keeps
the frozen base in 4-bit NF4 and dequantizes it for every use [dettmers2023qlora]. On one layout
(tensor x pipeline x data parallelism, as :func:`ampere.megatron.estimate` times and sizes it):

* **memory**: the layout's activations (the same tensors are saved: the adapters' weight gradients need
  each linear layer's input) plus the frozen base of the GPU's share of the layers (bf16, or NF4 with double
  quantization) plus the adapters with their mixed-precision Adam state; QLoRA adds one layer's dequantized
  weights;
* **time**: the full step without the weight-gradient GEMM of every frozen linear layer (one of its three
  GEMMs per micro-batch, four with full recomputation), with the data-parallel gradient reduction, the
  gradient accumulation and the optimizer step shrunk to the adapters' share of the parameters (the pipeline
  bubble shrinks with the micro-batch it idles for);
* **QLoRA**: the LoRA step times the published ratio of a QLoRA run to the same LoRA run on the same GPU
  (:func:`qlora_ratio`, ``ampere/data/published/finetune-speed.json``): dequantizing the NF4 weights before each
  use is the difference, and it is a measurement, not a model.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from .. import check, results
from ..transformer import TransformerShape

#: The published QLoRA/LoRA pair the calculator applies: LitGPT's Llama 2 7B on one A10G (an Ampere GA102).
QLORA_REFERENCE = ("litgpt-a10g-llama2-7b-qlora", "litgpt-a10g-llama2-7b-lora")
#: The per-micro-batch categories of a Megatron estimate (they make the typical stage's time, which sets the
#: pipeline bubble).
_PER_MICROBATCH = ("layer GEMMs", "attention", "other memory-bound", "tensor-parallel all-reduce",
                   "pipeline sends", "gradient accumulation")
#: Categories that handle every trained parameter once per step or micro-batch: with adapters only theirs.
_PER_PARAMETER = ("data-parallel all-reduce", "optimizer step", "gradient accumulation")


def _records() -> dict[str, results.Record]:
    return {r.id: r for r in results.records(benchmark="finetune-speed", kind="published")}


def _time_of(rec: results.Record) -> float:
    """Seconds per unit of work of a record (runtime, or 1 / tokens per second)."""
    f = rec.figures
    if "training_runtime_minutes" in f:
        return 60.0 * float(f["training_runtime_minutes"])
    key = "training_tokens_per_s" if "training_tokens_per_s" in f else "per_gpu_tokens_per_s"
    return 1.0 / float(f[key])


@functools.lru_cache(maxsize=None)
def qlora_ratio(pair: tuple[str, str] = QLORA_REFERENCE) -> float:
    """Time of a QLoRA step over the same LoRA step on the same GPU, from a published pair of runs.

    ``pair`` is (QLoRA record id, LoRA record id) of ``ampere/data/published/finetune-speed.json``; the default
    is LitGPT's Llama 2 7B on one A10G (:data:`QLORA_REFERENCE`), whose two configurations differ only in the
    NF4 quantization. Chapter: *The A100 today*, "Fine-tuning speed against published runs".
    """
    if not isinstance(pair, tuple) or len(pair) != 2:
        raise TypeError(f"pair must be a (QLoRA id, LoRA id) tuple, got {pair!r}")
    recs = _records()
    q, lo = (check.one_of("pair", p, sorted(recs)) for p in pair)
    rq, rl = recs[q], recs[lo]
    if (rq.params.get("method"), rl.params.get("method")) != ("qlora", "lora") or rq.gpu != rl.gpu:
        raise ValueError(f"pair={pair!r} must be a QLoRA run and a LoRA run on the same GPU")
    return _time_of(rq) / _time_of(rl)


@dataclass(frozen=True)
class AdapterStep:
    """LoRA or QLoRA on one Megatron layout: seconds per step by category, and bytes per GPU by kind."""

    method: str  # "lora" or "qlora"
    time_s: float
    breakdown: dict[str, float]
    memory: dict[str, float]  # the worse pipeline stage: frozen weights, adapters, activations, buffers, total
    adapter_params: float

    def __post_init__(self) -> None:
        check.one_of("method", self.method, ("lora", "qlora"))
        object.__setattr__(self, "time_s", check.positive("time_s", self.time_s, maximum=1e9))
        object.__setattr__(self, "adapter_params", check.positive("adapter_params", self.adapter_params,
                                                                  maximum=1e15))
        for name in ("breakdown", "memory"):
            table = check.mapping(name, getattr(self, name), allow_empty=False)
            object.__setattr__(self, name, {check.string(f"{name} key", k): check.nonneg(f"{name}[{k!r}]", v)
                                            for k, v in table.items()})
        if "total" not in self.memory:
            raise ValueError(f"memory must hold a 'total', got the keys {sorted(self.memory)}")

    @property
    def memory_bytes(self) -> float:
        return self.memory["total"]


def _gemm_passes(recompute: str) -> int:
    """GEMMs of one linear layer per micro-batch: forward, input gradient, weight gradient (+ the forward again
    with full recomputation)."""
    return 4 if recompute == "full" else 3


def adapter_step(est: Any, method: str, lora_rank: int) -> AdapterStep:
    """LoRA (``method="lora"``) or QLoRA on the layout of ``est`` (an :class:`ampere.megatron.Estimate` of the
    full step): its time and memory per GPU, as the module docstring derives them.

    ``lora_rank`` sizes the adapters (rank x (inputs + outputs) on every linear layer). Chapter: *The A100
    today*, "A workload calculator".
    """
    from .. import megatron, memory

    if not isinstance(est, megatron.Estimate):
        raise TypeError(f"est must be an ampere.megatron.Estimate, got {est!r}")
    check.one_of("method", method, ("lora", "qlora"))
    rank = check.positive_int("lora_rank", lora_rank, maximum=65_536)
    zero = dict(est.options).get("zero_stage", 0)
    if zero >= 2:
        raise ValueError(f"est has zero_stage={zero}: adapter_step derives LoRA from a layout whose weights are "
                         "not sharded by ZeRO (allowed: zero_stage 0 or 1)")
    cfg: TransformerShape = est.config
    lay = est.layout
    adapters = float(cfg.lora_params(rank))
    share = adapters / cfg.params
    b = dict(est.breakdown)
    passes = _gemm_passes(est.recompute)
    b["layer GEMMs"] *= (passes - 1) / passes
    for key in _PER_PARAMETER:
        b[key] *= share
    before = sum(est.breakdown[k] for k in _PER_MICROBATCH)
    after = sum(b[k] for k in _PER_MICROBATCH)
    b["pipeline bubble"] *= after / before if before else 1.0
    b["unmodelled (system efficiency)"] = 0.0
    if method == "qlora":
        lora_time = sum(b.values())
        b["NF4 dequantization (published ratio)"] = lora_time * (qlora_ratio() - 1.0)
    bits = (memory.FORMAT_BITS["nf4"] + memory.NF4_DOUBLE_QUANT_OVERHEAD_BITS if method == "qlora"
            else memory.FORMAT_BITS["bf16"])
    adam = memory.MIXED_ADAM.bytes_per_param
    biggest = max(i * o for _n, i, o in cfg.linear_shapes()) / lay.tensor
    stages = {}
    for name, part in est.memory["stages"].items():
        n_par = part["params"]
        stage = {"frozen weights": n_par * bits / 8, "adapters and Adam state": adapters * n_par / cfg.params * adam,
                 "activations": part["activations"], "buffers": part["buffers"]}
        if method == "qlora":
            stage["dequantized layer"] = 2.0 * biggest
        stage["total"] = sum(stage.values())
        stages[name] = stage
    worst = max(stages.values(), key=lambda s: s["total"])
    return AdapterStep(method, sum(b.values()), b, dict(worst), adapters)


#: The LoRA check: GPT-3 175B fine-tuned on this many A100s (a whole number of DGX nodes) with full
#: recomputation, the fastest ZeRO-1 layout for full fine-tuning and the same layout for LoRA (the LoRA
#: paper compares "the same number of weight shards for model parallelism").
LORA_CHECK_GPUS = 128


@functools.lru_cache(maxsize=None)
def _lora_model_ratio() -> tuple[float, str]:
    """(full step / LoRA step on the same layout, the layout) for GPT-3 175B on :data:`LORA_CHECK_GPUS` A100s."""
    from .. import megatron, transformer
    from .training import MEMORY_CONVENTION, SOFTWARE

    cfg = transformer.preset("gpt3-175b")
    n = LORA_CHECK_GPUS
    opts = dict(software=SOFTWARE, precision="bf16", memory_convention=MEMORY_CONVENTION, sequence_parallel=True,
                flash_attention=True)
    full = megatron.search_layouts(cfg, n, n, "A100-SXM4-80GB", microbatches=(1,), recompute="full", top=1,
                                   zero_stage=1, **opts)[0]
    lay = full.layout
    base = megatron.estimate(cfg, n, n, lay.tensor, lay.pipeline, lay.microbatch, lay.interleave, "full",
                             "A100-SXM4-80GB", zero_stage=0, **opts)
    step = adapter_step(base, "lora", 16)
    text = (f"tensor {lay.tensor}, pipeline {lay.pipeline}" + (f" x {lay.interleave} chunks" if lay.interleave > 1
                                                                else "") + f", data {lay.data}")
    return full.time_per_iteration_s / step.time_s, text


def finetune_checks() -> list[dict[str, str]]:
    """Published fine-tuning speed ratios beside what the calculator uses: LoRA against full fine-tuning of
    GPT-3 175B (the LoRA paper; the model on the same layout), and QLoRA against LoRA on the same GPU (the
    pair the calculator applies, :data:`QLORA_REFERENCE`, and the other published pairs).

    Chapter: *The A100 today*, "Fine-tuning speed against published runs".
    """
    from .. import views

    recs = _records()
    rows = []
    full, lora = recs["lora-paper-gpt3-175b-full"], recs["lora-paper-gpt3-175b-lora"]
    ratio, layout = _lora_model_ratio()
    rows.append({"comparison": "LoRA over full fine-tuning, GPT-3 175B, tokens/s",
                 "published": f"{_time_of(full) / _time_of(lora):.2f} (V100s, layout not published)",
                 "calculator": f"{ratio:.2f} ({LORA_CHECK_GPUS} A100s, {layout})",
                 "source": views.cite_label(full.source)})
    pairs = sorted({(r.params["model"], r.gpu) for r in recs.values() if r.params.get("method") == "qlora"})
    for model, gpu in pairs:
        q = next(r for r in recs.values() if (r.params["model"], r.gpu, r.params["method"]) == (model, gpu, "qlora"))
        lo = next(r for r in recs.values() if (r.params["model"], r.gpu, r.params["method"]) == (model, gpu, "lora"))
        applied = (q.id, lo.id) == QLORA_REFERENCE
        rows.append({"comparison": f"QLoRA over LoRA step time, {model} on one {gpu}",
                     "published": f"{_time_of(q) / _time_of(lo):.2f}",
                     "calculator": "applied" if applied else "-", "source": views.cite_label(q.source)})
    return rows
