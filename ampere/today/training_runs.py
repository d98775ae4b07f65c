"""Published Llama pre-training runs on A100s (``ampere/data/published/training-runs-llama.json``) beside
the calculator's training-time model and beside the fixed 40 % utilisation the chapter used to assume.

Chapter: *The A100 today* (book/a100-today.ipynb), "Training time against published Llama runs". Pure
Python: no torch, no matplotlib (the view draws through ``ampere.views``).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

from .. import check, results, specs
from .catalogue import MODELS
from .network import _network
from .training import _fixed_mfu_tokens_per_s, _training_speed
from .workload import Workload


#: The utilisation this chapter used to assume for every training plan (40 % of the dense BF16 peak): kept
#: only as the baseline column of the comparison with published runs, which it misses by up to a third.
FIXED_MFU_BASELINE = 0.40
#: GPUs assumed for the Llama 2 runs, whose papers give GPU-hours but no GPU count: the 2048 A100s of the
#: LLaMA 1 runs on the same cluster (touvron2023llama). Per-GPU throughput barely depends on it at a fixed
#: global batch; it sets the data-parallel width of the layout.
ASSUMED_GPUS = 2048
#: Activation recomputation of the Llama runs: LLaMA saves the costly activations and recomputes the rest
#: (touvron2023llama, section 2.4), which is selective recomputation; Llama 2 adopts LLaMA's pretraining
#: setting (touvron2023llama2), so the same is assumed.
RUN_RECOMPUTE = "selective"
#: The software the runs are timed with: LLaMA's training code reduced recomputation, used model and sequence
#: parallelism "as described by Korthikanti et al. (2022)" and overlapped the all-reduces with computation
#: (touvron2023llama, section 2.4): the Megatron-LM 2022 stack of ``ampere.megatron.STACKS``, with the
#: memory-efficient (xformers) attention as fused attention. The planner's own default, today's
#: "megatron-core", also overlaps the data-parallel reduction: its predictions are shown beside.
RUN_SOFTWARE = "megatron-2022"


@dataclass(frozen=True)
class TrainingRunCheck:
    """One published pre-training run beside the calculator's prediction (see :func:`training_run_checks`)."""

    record: results.Record
    model: str
    gpus: int
    tokens: float
    published_tokens_per_s_per_gpu: float
    predicted_tokens_per_s_per_gpu: float
    baseline_tokens_per_s_per_gpu: float  # at FIXED_MFU_BASELINE of the dense BF16 peak
    layout: str
    assumptions: tuple[str, ...] = ()
    core_tokens_per_s_per_gpu: float = 0.0  # the planner's default software (megatron-core) on the same run

    def __post_init__(self) -> None:
        if not isinstance(self.record, results.Record):
            raise TypeError(f"record must be an ampere.results.Record, got {self.record!r}")
        check.string("model", self.model)
        object.__setattr__(self, "gpus", check.positive_int("gpus", self.gpus, maximum=1_000_000))
        object.__setattr__(self, "tokens", check.positive("tokens", self.tokens, maximum=1e16))
        for name in ("published_tokens_per_s_per_gpu", "predicted_tokens_per_s_per_gpu",
                     "baseline_tokens_per_s_per_gpu"):
            object.__setattr__(self, name, check.positive(name, getattr(self, name), maximum=1e9))
        object.__setattr__(self, "core_tokens_per_s_per_gpu", check.nonneg(
            "core_tokens_per_s_per_gpu", self.core_tokens_per_s_per_gpu, maximum=1e9))
        check.string("layout", self.layout, allow_empty=True)
        if not isinstance(self.assumptions, tuple) or not all(isinstance(a, str) for a in self.assumptions):
            raise TypeError(f"assumptions must be a tuple of strings, got {self.assumptions!r}")

    @property
    def error(self) -> float:
        """predicted / published - 1."""
        return self.predicted_tokens_per_s_per_gpu / self.published_tokens_per_s_per_gpu - 1

    @property
    def core_error(self) -> float:
        """predicted with today's megatron-core / published - 1."""
        return self.core_tokens_per_s_per_gpu / self.published_tokens_per_s_per_gpu - 1

    @property
    def baseline_error(self) -> float:
        return self.baseline_tokens_per_s_per_gpu / self.published_tokens_per_s_per_gpu - 1

    def gpu_hours(self, tokens_per_s_per_gpu: float) -> float:
        """GPU-hours of the run's tokens at ``tokens_per_s_per_gpu`` (> 0)."""
        return self.tokens / check.positive("tokens_per_s_per_gpu", tokens_per_s_per_gpu, maximum=1e9) / 3600

    def row(self) -> dict[str, str]:
        from .. import views

        return {"run": f"{self.model}, {self.tokens / 1e12:.1f}T tokens", "GPUs": f"{self.gpus:,}",
                "published tokens/s/GPU": f"{self.published_tokens_per_s_per_gpu:,.0f}",
                "model tokens/s/GPU": f"{self.predicted_tokens_per_s_per_gpu:,.0f}",
                "model error": f"{self.error:+.0%}",
                "megatron-core tokens/s/GPU": f"{self.core_tokens_per_s_per_gpu:,.0f}",
                "megatron-core error": f"{self.core_error:+.0%}",
                f"fixed {FIXED_MFU_BASELINE:.0%} MFU": f"{self.baseline_tokens_per_s_per_gpu:,.0f}",
                "fixed-MFU error": f"{self.baseline_error:+.0%}",
                "published GPU-hours": f"{self.gpu_hours(self.published_tokens_per_s_per_gpu):,.0f}",
                "model GPU-hours": f"{self.gpu_hours(self.predicted_tokens_per_s_per_gpu):,.0f}",
                "layout": self.layout, "source": views.source_text(self.record)}


def _run_workload(rec: results.Record, gpus: int, mfu: float | None) -> Workload:
    p = rec.params
    seq = int(p["seq"])
    return Workload(p["model"], "pretrain", tokens=float(p["tokens"]), seq_len=seq, micro_batch=1,
                    global_batch=_batch_sequences(float(p["global_batch_tokens"]), seq), min_cards=gpus,
                    max_cards=gpus, mfu=mfu, recompute=RUN_RECOMPUTE)


def _batch_sequences(batch_tokens: float, seq: int) -> int:
    """Sequences per step of a batch published as "4M tokens": the power of two nearest to tokens / seq
    (4M tokens of 4096-token sequences: 1024, i.e. 2**22 tokens)."""
    return 2 ** max(0, round(math.log2(batch_tokens / seq)))


_RUN_PARAMS = frozenset({"model", "tokens", "seq", "global_batch_tokens"})


def _plannable_runs() -> list[results.Record]:
    """Published A100 training runs the calculator can plan: a shape it knows, tokens, sequence length and
    global batch (the Llama runs of ``training-runs-llama.json``; other chapters' runs lack some of them)."""
    return [r for r in results.records(benchmark="training-run", kind="published")
            if _RUN_PARAMS <= set(r.params) and r.params["model"] in MODELS and r.gpu == "A100-SXM4-80GB"
            and ({"gpu_hours", "per_gpu_tokens_per_s"} & set(r.figures))]


@functools.lru_cache(maxsize=None)
def _training_run_checks() -> tuple[TrainingRunCheck, ...]:
    out = []
    for rec in _plannable_runs():
        f, p = rec.figures, rec.params
        assumptions = []
        if "gpus" in p:
            gpus = int(p["gpus"])
        else:
            gpus = ASSUMED_GPUS
            assumptions.append(f"{gpus} GPUs assumed (not published)")
        if "per_gpu_tokens_per_s" in f:
            published = float(f["per_gpu_tokens_per_s"])
        else:
            published = float(p["tokens"]) / (float(f["gpu_hours"]) * 3600)
            assumptions.append("tokens/s per GPU = tokens / published GPU-hours")
        assumptions.append(f"{RUN_RECOMPUTE} recomputation")
        seqs = _batch_sequences(float(p["global_batch_tokens"]), int(p["seq"]))
        assumptions.append(f"a batch of {p['global_batch_tokens'] / 1e6:.0f}M tokens read as {seqs} sequences "
                           f"of {p['seq']}")
        spec = specs.get(rec.gpu)
        w = _run_workload(rec, gpus, None)
        speed = _training_speed(w, spec, gpus, _network(spec, gpus), software=RUN_SOFTWARE)
        core = _training_speed(w, spec, gpus, _network(spec, gpus))
        base = _fixed_mfu_tokens_per_s(rec.params["model"], "pretrain", FIXED_MFU_BASELINE, specs.get(rec.gpu))
        layout = next((n for n in speed.notes if n.startswith("layout")), "")
        layout = layout.replace("layout: ", "").replace(f" (Megatron model, {RUN_SOFTWARE})", "")
        assumptions.append(f"software: {RUN_SOFTWARE} (LLaMA's section 2.4)")
        out.append(TrainingRunCheck(rec, p["model"], gpus, float(p["tokens"]), published,
                                    speed.tokens_per_s / gpus, base, layout, tuple(assumptions),
                                    core.tokens_per_s / gpus))
    return tuple(out)


def training_run_checks() -> list[TrainingRunCheck]:
    """Every published Llama pre-training run on A100s against the calculator's training-time model.

    The runs are those of ``ampere/data/published/training-runs-llama.json`` (:func:`_plannable_runs`):
    the Llama 2 7B/13B/70B GPU-hours of
    their model card and LLaMA 65B's tokens/s per GPU. Each is planned as pre-training of its shape on
    its GPUs (2048 when unpublished, :data:`ASSUMED_GPUS`) with its published global batch and sequence
    length, once with the training-time model (the software the runs describe, :data:`RUN_SOFTWARE`; and the
    planner's default, megatron-core) and once at a fixed 40 % utilisation
    (:data:`FIXED_MFU_BASELINE`, what this chapter used to assume). Chapter: *The A100 today*,
    "Training time against published Llama runs".
    """
    return list(_training_run_checks())


def training_points() -> list[Any]:
    """:func:`training_run_checks` as ``views.Point`` rows: tokens/s per GPU, model beside published."""
    from .. import views

    def what(c: TrainingRunCheck) -> str:
        assumed = " (assumed)" if "gpus" not in c.record.params else ""
        return f"{c.model}, {c.gpus:,} GPUs{assumed}"

    return [views.point(c.record, "per_gpu_tokens_per_s", what(c), c.predicted_tokens_per_s_per_gpu,
                        "tokens/s per GPU")
            if "per_gpu_tokens_per_s" in c.record.figures else
            views.Point(what(c), c.record.gpu, c.predicted_tokens_per_s_per_gpu,
                        c.published_tokens_per_s_per_gpu, "tokens/s per GPU", "published",
                        views.source_text(c.record) + " (GPU-hours)")
            for c in training_run_checks()]


def show_training_runs(info: Any = None) -> None:
    """The training section's view: published Llama runs beside the model, as a figure and a table.

    A training run of this size cannot be measured on the reader's machine; the section shows the
    published A100 runs and the model's error on each. Chapter: *The A100 today*.
    """
    from .. import device, views

    if info is not None and not isinstance(info, device.DeviceInfo):
        raise TypeError(f"info must be None or an ampere.device.DeviceInfo (ab.setup's INFO), got {info!r}")
    views.show(training_points(), title="Llama pre-training on A100s: published against the model",
               model_label="model", real_label="published", digits=0)
