"""Published A100 runs of other teams on other software, predicted by the same model with their own
configuration: :func:`team_runs` reads ``ampere/data/published/training-runs-other-teams.json`` and turns each
record into a shape, a layout, a software stack (:data:`ampere.megatron.STACKS`), a node network and a
precision; :func:`team_rows` predicts them; :func:`team_groups` gives the errors per team;
:func:`mosaicml_sweep` predicts every A100 row of MosaicML's table at 2,048 tokens with the same rules.

Chapter: *Megatron-LM: 3D parallelism predicted, validated, and run* (book/megatron.ipynb), section "Other
teams, other software". Pure. Nothing here is fitted on these runs: a run's inputs are what its source
states, and where it states nothing the rule is written here, the same for every run.

Rules for what a source does not state: ``ffn_hidden`` 4h; ``vocab`` GPT-2's 50,257 padded as Megatron-LM pads
it (multiple of 128 t); tied embeddings; an interleave of 1; no sequence parallelism; ZeRO stage 0; the
stack's FlashAttention choice; the node network of a DGX A100 (8 GPUs, 8 HDR adapters) with the run's
adapter count where stated (BLOOM: 4 Omni-Path links per node, their speed not stated, so HDR's is assumed,
an upper bound). A run is **scored** when its source states the parallel layout, the microbatch, the
recomputation and the global batch, publishes its throughput as time, tokens or FLOP/s in a stated
convention, and fits in the card's memory as configured (a run that does not must have offloaded to host
memory, which the time model does not contain, or differed otherwise); the others are shown with the reason.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from .. import check, fabrics, results, specs
from ..transformer import TransformerShape
from .sizing import MAX_GPUS, GPTConfig, _rows, flops_per_iteration
from .stacks import STACKS, Software
from .throughput import Estimate, estimate

#: The stack each framework of the records runs on (``setup.framework`` prefix -> stack name).
_FRAMEWORK_STACK = (("llm-foundry", "fsdp"), ("Megatron-DeepSpeed + DeepSpeed ZeRO-3", "deepspeed-zero3"),
                    ("Megatron-DeepSpeed", "megatron-deepspeed"), ("LargeScale", "megatron-deepspeed"),
                    ("flash-attention", "ddp-flash"), ("metaseq", "fsdp"), ("DeepSpeed + Megatron", "megatron-deepspeed"),
                    ("Meta internal", "megatron-core"))
#: GPT-2's tokenizer, the vocabulary of the runs that read its BPE without stating the size.
_GPT2_VOCAB = 50257


@dataclass(frozen=True)
class TeamRun:
    """One published run as the model's inputs (see the module docstring for the rules)."""

    id: str
    team: str
    run: str
    gpu: str
    gpus: int
    cfg: TransformerShape | None
    kwargs: tuple[tuple[str, Any], ...]  # estimate()'s arguments beyond the shape
    software: Software
    published_name: str  # the figure compared
    published: float
    scored: bool
    why_not_scored: str
    label: str  # provenance of the record
    record: Any
    assumed: tuple[str, ...] = ()  # inputs the source does not state, set by the module's rules

    def __post_init__(self) -> None:
        for f in ("id", "team", "run", "published_name", "label"):
            check.string(f, getattr(self, f), max_len=500)
        check.string("why_not_scored", self.why_not_scored, allow_empty=True, max_len=500)
        object.__setattr__(self, "gpu", specs.get(check.string("gpu", self.gpu)).name)
        check.positive_int("gpus", self.gpus, maximum=MAX_GPUS)
        if self.cfg is not None and not isinstance(self.cfg, TransformerShape):
            raise TypeError(f"cfg must be a TransformerShape or None, got {self.cfg!r:.60} ({type(self.cfg).__name__})")
        for i, pair in enumerate(check.sequence("kwargs", self.kwargs, min_len=0, max_len=100)):
            if not (isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], str)):
                raise TypeError(f"kwargs[{i}] must be a (name, value) pair, got {pair!r:.60}")
        if not isinstance(self.software, Software):
            raise TypeError(f"software must be a Software (STACKS), got {self.software!r:.60}")
        check.positive("published", self.published)
        check.boolean("scored", self.scored)
        if not isinstance(self.record, results.Record):
            raise TypeError(f"record must be an ampere.results.Record, got {self.record!r:.60}")
        check.sequence("assumed", self.assumed, check.string, min_len=0, max_len=100)

    @property
    def options(self) -> dict[str, Any]:
        return dict(self.kwargs)


def _shape(rec: Any) -> TransformerShape | None:
    sh = rec.params["shape"]
    if "preset" in sh:
        from ..transformer import preset
        return preset(sh["preset"])
    if not sh.get("layers"):
        return None
    t = rec.params["layout"].get("tensor") or 1
    vocab = sh.get("vocab")
    if vocab is None:  # GPT-2 BPE padded to a multiple of 128 t, as Megatron-LM pads it
        mult = 128 * t
        vocab = -(-_GPT2_VOCAB // mult) * mult
    glu = sh.get("mlp") in ("geglu", "swiglu")
    learned = str(sh.get("position", "learned")).startswith("learned")
    return GPTConfig(sh["layers"], sh["hidden"], sh["heads"], vocab, sh["seq"],
                     kv_heads=sh.get("kv_heads"), ffn_hidden=sh.get("ffn_hidden"), glu=glu,
                     tied_embeddings=sh.get("tied_embeddings") is not False,
                     positions="learned" if learned else "rope", name=rec.params.get("model", ""))


def _stack(rec: Any) -> Software:
    fw = rec.setup["framework"]
    for prefix, name in _FRAMEWORK_STACK:
        if fw.startswith(prefix):
            return STACKS[name]
    raise ValueError(f"{rec.id}: no software stack for framework {fw!r}")


def _network(rec: Any) -> fabrics.NodeNetwork:
    net = rec.setup.get("network") or {}
    node = fabrics.DGX_A100
    changes: dict[str, Any] = {}
    if net.get("hcas_per_node"):
        changes["hcas_per_node"] = int(net["hcas_per_node"])
    if net.get("hca_gbps"):
        changes["hca_bytes_per_s"] = float(net["hca_gbps"]) * 1e9 / 8
    if changes:
        node = node.with_(name=f"{node.name} with {rec.setup.get('team', '')}'s adapters", **changes)
    return node


def _published(rec: Any) -> tuple[str, float]:
    for name in ("time_per_iteration_s", "per_gpu_tokens_per_s", "total_tokens_per_s",
                 "hardware_tflop_per_s_per_gpu", "model_tflop_per_s_per_gpu", "reported_tflop_per_s_per_gpu"):
        if name in rec.figures:
            return name, float(rec.figure(name))
    raise ValueError(f"{rec.id}: no throughput figure")


def _why_not(rec: Any, cfg: TransformerShape | None, figure: str) -> str:
    lay = rec.params["layout"]
    missing = [k for k in ("tensor", "pipeline", "data", "microbatch", "recompute", "global_batch_sequences")
               if lay.get(k) is None]
    if not rec.setup.get("layout_published", False) or cfg is None:
        return "layout not published"
    if missing:
        return "not stated: " + ", ".join(m.replace("_", " ") for m in missing)
    if figure == "reported_tflop_per_s_per_gpu":
        return "FLOP-counting convention not stated"
    return ""


def team_runs() -> list[TeamRun]:
    """Every record of ``training-runs-other-teams.json`` as model inputs (:class:`TeamRun`).
    Chapter: "Other teams, other software"."""
    out = []
    for rec in results.records(benchmark="training-throughput", kind="published"):
        if "shape" not in rec.params or "team" not in rec.setup:
            continue  # other throughput records (not a team's run with its configuration)
        cfg = _shape(rec)
        lay = rec.params["layout"]
        kern = rec.params.get("kernels") or {}
        sw = _stack(rec)
        figure, value = _published(rec)
        why = _why_not(rec, cfg, figure)
        assumed = [f"{k} 1" for k in ("microbatch",) if lay.get(k) is None]
        assumed += ["full recomputation"] if lay.get("recompute") is None else []
        zero = lay.get("zero_stage")
        if zero is None and "no-reshard" in str(lay.get("fsdp_sharding") or ""):
            zero = 2  # FSDP without resharding after the forward keeps the weights: ZeRO-2's sharding
        precision = "bf16" if "bf16" in str(rec.params.get("precision")) else "fp16"
        # Composer's FSDP mixed precision "PURE" reduces gradients in the compute dtype (get_mixed_precision)
        reduce = 2 if "mode PURE" in str(lay.get("note")) else None
        kwargs: dict[str, Any] = dict(
            microbatch=lay.get("microbatch") or 1, interleave=lay.get("virtual_pipeline") or 1,
            recompute=lay.get("recompute") or "full", sequence_parallel=bool(lay.get("sequence_parallel")),
            zero_stage=zero or 0, software=sw, network=_network(rec), precision=precision, reduce_bytes=reduce)
        if kern.get("flash_attention") is not None:
            kwargs["flash_attention"] = bool(kern["flash_attention"])
        t, p = lay.get("tensor") or 1, lay.get("pipeline") or 1
        gpus = rec.params["gpus"]
        batch = lay.get("global_batch_sequences") or gpus // (t * p) * kwargs["microbatch"]
        kwargs.update(tensor=t, pipeline=p, batch=batch)
        out.append(TeamRun(rec.id, rec.setup["team"], rec.params.get("model", rec.id), rec.gpu, gpus, cfg,
                           tuple(sorted(kwargs.items(), key=lambda kv: kv[0])), sw, figure, value, not why, why,
                           rec.label(), rec, tuple(assumed)))
    return out


def _predict(run: TeamRun, **overrides: Any) -> Estimate:
    kw = run.options
    kw.update(overrides)
    t, p, batch = kw.pop("tensor"), kw.pop("pipeline"), kw.pop("batch")
    return estimate(run.cfg, run.gpus, batch, t, p, gpu=run.gpu, **kw)


def _published_time(run: TeamRun, est: Estimate) -> float | None:
    """The published throughput as seconds per iteration of the run's global batch, or None."""
    lay = est.layout
    tokens = lay.batch * run.cfg.seq  # type: ignore[union-attr]
    name, value = run.published_name, run.published
    if name == "time_per_iteration_s":
        return value
    if name == "per_gpu_tokens_per_s":
        return tokens / (value * run.gpus)
    if name == "total_tokens_per_s":
        return tokens / value
    if name == "hardware_tflop_per_s_per_gpu":  # counted with full recomputation, eq. 3 (96 = 24 x 4)
        return flops_per_iteration(run.cfg, lay.batch, "full") / (value * 1e12 * run.gpus)  # type: ignore[arg-type]
    if name == "model_tflop_per_s_per_gpu":
        return flops_per_iteration(run.cfg, lay.batch, convention="model") / (value * 1e12 * run.gpus)  # type: ignore[arg-type]
    return None


def _differences(run: TeamRun, est: Estimate) -> list[str]:
    """What this run does differently from Megatron-LM at its 2022 best, in words (the model's inputs)."""
    opts, sw, lay = run.options, run.software, est.layout
    out = []
    if lay.pipeline > 1 and lay.interleave == 1:
        out.append("no interleaving")
    if lay.tensor > 1 and not opts["sequence_parallel"]:
        out.append("no sequence parallelism")
    if lay.tensor > 1 and not sw.tp_overlap:
        out.append("synchronous tensor-parallel collectives")
    if opts["recompute"] != "selective":
        out.append({"full": "full recomputation", "none": "no recomputation"}[opts["recompute"]])
    if opts["zero_stage"]:
        out.append(f"ZeRO-{opts['zero_stage']}" + (f" (prefetch: {sw.zero3_prefetch})" if opts["zero_stage"] == 3 else ""))
    if lay.data > 1:
        out.append("gradient reduction " + ("overlapped" if sw.dp_overlap else "after the flush"))
    if opts.get("flash_attention", sw.flash_attention):
        out.append("FlashAttention")
    if opts["network"].hcas_per_node != fabrics.DGX_A100.hcas_per_node:
        out.append(f"{opts['network'].hcas_per_node} adapters per node")
    if run.gpu != "A100-SXM4-80GB":
        out.append("40 GB cards" if "40GB" in run.gpu else run.gpu)
    out.append(f"{opts['precision']}, microbatch {lay.microbatch}")
    return out


def team_rows(**overrides: Any) -> list[dict[str, Any]]:
    """Each run of :func:`team_runs` predicted (``overrides`` go to :func:`estimate`, e.g.
    ``software="megatron-2022"`` to see what the run's own stack changes): published and predicted seconds
    per iteration, the error, model TFLOP/s per GPU, memory, and what the stack does differently from
    Megatron-LM 2022. Runs without a shape or a usable figure get ``error`` None.
    Chapter: "Other teams, other software"."""
    rows = []
    for run in team_runs():
        row: dict[str, Any] = {"id": run.id, "team": run.team, "run": run.run, "gpus": run.gpus, "gpu": run.gpu,
                               "stack": run.software.name, "scored": run.scored, "why_not_scored": run.why_not_scored,
                               "published_figure": run.published_name, "published": run.published,
                               "label": run.label, "error": None, "estimate": None,
                               "assumed": ", ".join(run.assumed)}
        if run.cfg is None or not run.record.setup.get("layout_published", False):
            rows.append(row)  # no layout to predict
            continue
        est = _predict(run, **overrides)
        pub = _published_time(run, est)
        if row["scored"] and not est.fits_in_memory:  # by the model's own count the run did something else
            row.update(scored=False, why_not_scored=f"needs {est.memory_bytes_per_gpu / 1e9:.0f} GB per GPU as "
                       "configured: the run offloaded to host memory (not in the time model) or differed")
        differs = _differences(run, est)
        row.update(predicted_time_s=est.time_per_iteration_s, published_time_s=pub,
                   error=(est.time_per_iteration_s / pub - 1) if pub else None,
                   model_tflops_per_gpu=est.model_tflops_per_gpu, mfu=est.mfu,
                   published_model_tflops_per_gpu=(est.model_tflops_per_gpu * est.time_per_iteration_s / pub)
                   if pub else None,
                   microbatch=est.layout.microbatch, memory_gb=est.memory_bytes_per_gpu / 1e9,
                   fits=est.fits_in_memory, differs=", ".join(differs) or "nothing", estimate=est)
        rows.append(row)
    return rows


@dataclass(frozen=True)
class TeamGroup:
    """Errors of the scored runs of one team (:func:`team_groups`)."""

    team: str
    stack: str
    runs: int
    scored: int
    mean_abs_error: float | None
    max_abs_error: float | None

    def __post_init__(self) -> None:
        check.string("team", self.team, max_len=200)
        check.string("stack", self.stack, allow_empty=True, max_len=80)
        runs = check.nonneg_int("runs", self.runs, maximum=100_000)
        if check.nonneg_int("scored", self.scored, maximum=100_000) > runs:
            raise ValueError(f"scored={self.scored} must be at most runs={runs}")
        for f in ("mean_abs_error", "max_abs_error"):
            check.optional(check.nonneg, f, getattr(self, f))
        if (self.mean_abs_error is None) != (self.scored == 0) or (self.max_abs_error is None) != (self.scored == 0):
            raise ValueError(f"mean_abs_error and max_abs_error are None exactly when scored=0, got scored="
                             f"{self.scored}, mean {self.mean_abs_error!r}, max {self.max_abs_error!r}")


#: The keys :func:`team_groups` reads from each row of :func:`team_rows`.
_ROW_KEYS = ("team", "stack", "scored", "error")


def team_groups(rows: list[dict[str, Any]] | None = None) -> list[TeamGroup]:
    """Mean and max |error| of the iteration time per team, over its scored runs; and over all of them
    (the last row, team "all scored runs"). Chapter: "Other teams, other software"."""
    rows = team_rows() if rows is None else _rows("rows", rows, _ROW_KEYS)
    out = []
    teams: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        teams.setdefault(r["team"], []).append(r)
    for team, rs in teams.items():
        errs = [abs(r["error"]) for r in rs if r["scored"] and r["error"] is not None]
        out.append(TeamGroup(team, rs[0]["stack"], len(rs), len(errs), statistics.mean(errs) if errs else None,
                             max(errs) if errs else None))
    every = [abs(r["error"]) for r in rows if r["scored"] and r["error"] is not None]
    out.append(TeamGroup("all scored runs", "", len(rows), len(every), statistics.mean(every) if every else None,
                         max(every) if every else None))
    return out


#: The GPUs of the MosaicML table's columns (its names) in the catalogue.
_MOSAIC_GPUS = {"a100_40gb": "A100-SXM4-40GB", "a100_80gb": "A100-SXM4-80GB"}


def mosaicml_sweep() -> list[dict[str, Any]]:
    """Every A100 row of MosaicML's MPT benchmark table at 2,048 tokens (``ampere/data/tables/mosaicml-a100-sweep.json``,
    31 rows, of which the scored records of :func:`team_runs` are a part), predicted with the same rules as
    :func:`team_runs`: the "fsdp" stack (FULL_SHARD as ZeRO-3, FlashAttention), bf16, gradients reduced in bf16
    with FSDP's "PURE" mixed precision and in fp32 otherwise, recomputation as the row's activation
    checkpointing, a node of 8 GPUs with 8 x 200 Gb/s (the table's 1600 Gbps). Each row: the published and the
    predicted model TFLOP/s per GPU, the error of the iteration time, the memory per GPU, and whether the row is
    also a scored record. The published time is the global batch's tokens over the tokens per second per GPU,
    as :func:`team_rows` reads the scored records. Nothing is fitted on these rows. Chapter: "Other teams,
    other software"."""
    table = results.table("mosaicml-a100-sweep")
    scored = {(r.run.lower(), r.gpus, r.gpu) for r in team_runs() if r.team == "MosaicML" and r.scored}
    out = []
    for row in table["rows"]:
        cfg = GPTConfig(row["layers"], row["hidden"], row["heads"], row["vocab"], row["seq"],
                        ffn_hidden=row["ffn_hidden"], name=f"MPT-{row['model']}")
        gpu = _MOSAIC_GPUS[row["gpu"]]
        est = estimate(cfg, row["gpus"], row["global_batch"], 1, 1, row["microbatch"], gpu=gpu,
                       recompute="full" if row["activation_checkpointing"] else "none", software=STACKS["fsdp"],
                       zero_stage=3, precision="bf16", reduce_bytes=2 if row["mp_mode"] == "PURE" else 4)
        published_s = row["global_batch"] * row["seq"] / (row["per_gpu_tokens_per_s"] * row["gpus"])  # as team_runs
        out.append({"model": f"MPT-{row['model']}", "gpus": row["gpus"], "gpu": gpu, "microbatch": row["microbatch"],
                    "grad_accum": row["grad_accum"], "checkpointing": row["activation_checkpointing"],
                    "published_tflops": float(row["model_tflop_per_s"]), "predicted_tflops": est.model_tflops_per_gpu,
                    "error": est.time_per_iteration_s / published_s - 1, "memory_gb": est.memory_bytes_per_gpu / 1e9,
                    "fits": est.fits_in_memory,
                    "scored_record": (f"mpt-{row['model']}", row["gpus"], gpu) in scored, "where": row["where"]})
    return out
