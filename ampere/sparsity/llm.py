"""2:4 sparsity on large language models: published perplexities, and what a decoder layer gains by Amdahl.

Chapter: *2:4 structured sparsity* (book/sparsity.ipynb), "2:4 on large language models".

One-shot pruning (SparseGPT, Wanda) prunes a trained LLM without retraining it. The published perplexities
are data (``ampere/data/tables/llm-pruning-perplexity.json`` and ``llm-sparse-speedups.json``, each row with
its source and table); :func:`perplexity_rows` lays them out. The model part answers "how much faster is the
whole layer when only its GEMMs get faster?": :func:`decoder_layer_time` is a roofline of one decoder layer
of an :class:`ampere.transformer.TransformerShape` split into three parts,

* ``gemm``: the linear layers (q, k, v, o and the MLP), each timed by :func:`~.roofline.matmul_time_model`
  (dense, or 2:4 sparse: half the math, 9/16 of the weight bytes);
* ``attention``: scores and the weighted sum, FlashAttention-style (no score matrix in HBM): prefill
  ``4 s^2 h / 2`` FLOPs per sequence (causal), decode ``4 c h`` per token with the K/V cache read;
* ``other``: the memory-bound element-wise work per token (two norms, two residual adds, rotary embeddings on
  q and k, the SwiGLU product or the GELU): ``(12 h + 2 kv + 3 f) b`` bytes per token (``2 f`` for GELU),

each at 100 % of its roofline, so that only the GEMM part changes with 2:4 sparsity. The layer's speedup is
then Amdahl's law, :func:`amdahl`: ``1 / ((1 - f) + f / s)`` with ``f`` the GEMM share of the dense time.

Pure Python: no torch, no matplotlib.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from .. import check, specs, transformer
from ..fields import check_fields
from .roofline import _BYTES, LinearShape, matmul_time_model

__all__ = ["PATTERNS", "PHASES", "PerplexityResult", "LLMSpeedup", "published_perplexities", "perplexity_rows",
           "published_llm_speedups", "amdahl", "gemm_speedup_needed", "LayerTime", "decoder_layer_time",
           "layer_speedup", "speedup_rows", "BERT_BASE", "bert_check_rows"]

#: Sparsity patterns of the published pruning tables, in the order the tables print them.
PATTERNS: tuple[str, ...] = ("dense", "unstructured 50%", "4:8", "2:4")
#: The two phases of LLM inference: the prompt (many tokens per sequence) and decoding (one token per step).
PHASES: tuple[str, ...] = ("prefill", "decode")


@dataclass(frozen=True)
class PerplexityResult:
    """One published WikiText perplexity of a pruned (or dense) LLM (``llm-pruning-perplexity`` table)."""
    FIELD_RULES = {"allow_empty": ("where", "note"), "positive": ("wikitext_ppl",)}  # the checks of fields.check_fields


    model: str
    method: str  # "dense", "magnitude", "SparseGPT", "Wanda"
    pattern: str  # one of PATTERNS
    wikitext_ppl: float
    source: str  # bib key
    where: str
    note: str = ""

    def __post_init__(self) -> None:
        check_fields(self)


def published_perplexities() -> list[PerplexityResult]:
    """The rows of ``ampere/data/tables/llm-pruning-perplexity.json``.

    Chapter: *2:4 structured sparsity*, "2:4 on large language models".
    """
    from .. import results

    return [PerplexityResult(**row) for row in results.table("llm-pruning-perplexity")["rows"]]


def perplexity_rows(models: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """One row per (model, pruning method): the dense perplexity, then unstructured 50 %, 4:8 and 2:4, and what
    the 2:4 structure costs over unstructured 50 % (perplexity points). ``models`` filters by model name
    (default: every model of the table, in table order). Chapter: *2:4 structured sparsity*, "2:4 on large
    language models".
    """
    from .. import views

    rows = published_perplexities()
    names = list(dict.fromkeys(r.model for r in rows))
    if isinstance(models, str):
        raise TypeError(f"models must be a list of model names, not one string; got {models!r}")
    if models is not None:
        wanted = check.names("models", models, names)
        names = [n for n in names if n in wanted]
    out = []
    for model in names:
        mine = [r for r in rows if r.model == model]
        dense = next(r.wikitext_ppl for r in mine if r.method == "dense")
        for method in dict.fromkeys(r.method for r in mine if r.method != "dense"):
            by = {r.pattern: r for r in mine if r.method == method}
            cost = (round(by["2:4"].wikitext_ppl - by["unstructured 50%"].wikitext_ppl, 2)  # both printed to 0.01
                    if "2:4" in by and "unstructured 50%" in by else None)
            out.append({"model": model, "dense": dense, "method": method,
                        **{p: (by[p].wikitext_ppl if p in by else None) for p in PATTERNS[1:]},
                        "2:4 - 50%": cost, "source": views.cite_label(next(iter(by.values())).source)})
    return out


@dataclass(frozen=True)
class LLMSpeedup:
    """One published speedup of a 2:4 sparse LLM over the dense one (``llm-sparse-speedups`` table)."""
    FIELD_RULES = {"allow_empty": ("where", "note"), "positive": ("dense_ms", "sparse_ms", "speedup_ratio")}  # the checks of fields.check_fields


    model: str
    what: str
    dense_ms: float | None
    sparse_ms: float | None
    speedup_ratio: float | None  # printed directly when the paper gives no times
    source: str
    where: str
    note: str = ""

    def __post_init__(self) -> None:
        check_fields(self)

    @property
    def speedup(self) -> float:
        """Dense over sparse time, or the printed ratio."""
        if self.dense_ms is not None and self.sparse_ms is not None:
            return self.dense_ms / self.sparse_ms
        if self.speedup_ratio is None:  # pragma: no cover - the table always gives one or the other
            raise ValueError(f"{self.model}: no times and no ratio")
        return self.speedup_ratio


def published_llm_speedups() -> list[LLMSpeedup]:
    """The rows of ``ampere/data/tables/llm-sparse-speedups.json``.

    Chapter: *2:4 structured sparsity*, "2:4 on large language models".
    """
    from .. import results

    return [LLMSpeedup(**row) for row in results.table("llm-sparse-speedups")["rows"]]


def amdahl(fraction: float, speedup: float) -> float:
    """Amdahl's law: the whole speeds up by ``1 / ((1 - f) + f / s)`` when a part ``f`` of its time runs ``s``
    times faster. Chapter: *2:4 structured sparsity*, "2:4 on large language models".
    """
    f = check.fraction("fraction", fraction)
    s = check.positive("speedup", speedup)
    return 1.0 / ((1.0 - f) + f / s)


def gemm_speedup_needed(fraction: float, target: float) -> float:
    """The speedup the part ``fraction`` needs for the whole to reach ``target`` (:func:`amdahl` inverted);
    ``math.inf`` when even an infinitely fast part is not enough (``target >= 1 / (1 - f)``).
    Chapter: *2:4 structured sparsity*, "2:4 on large language models".
    """
    f = check.fraction("fraction", fraction)
    t = check.real("target", target, minimum=1.0)
    if t == 1.0:
        return 1.0
    rest = 1.0 / t - (1.0 - f)
    if rest <= 0:
        return math.inf
    return f / rest if f > 0 else 1.0


@dataclass(frozen=True)
class LayerTime:
    """Roofline time of one decoder layer, in seconds, split into the GEMMs, attention and the rest."""
    FIELD_RULES = {"choices": {"phase": PHASES}, "bounds": {"batch": (1, 10**6), "tokens": (1, 10**9), "context": (0, 10**9)}}  # the checks of fields.check_fields


    model: str
    gpu: str
    phase: str
    batch: int
    tokens: int  # prefill: the prompt length of each sequence; decode: 1
    context: int  # tokens already in the K/V cache (decode) or the prompt length (prefill)
    gemm_kind: str  # "dense" or "2:4"
    gemm_s: float
    attention_s: float
    other_s: float

    def __post_init__(self) -> None:
        check_fields(self)

    @property
    def total_s(self) -> float:
        return self.gemm_s + self.attention_s + self.other_s

    @property
    def gemm_fraction(self) -> float:
        """Share of the layer time spent in the linear layers (the part 2:4 sparsity can speed up)."""
        return self.gemm_s / self.total_s


def _shape(model: str | transformer.TransformerShape) -> transformer.TransformerShape:
    if isinstance(model, transformer.TransformerShape):
        return model
    if not isinstance(model, str):
        raise TypeError(f"model must be a preset name or a TransformerShape; got {model!r}")
    return transformer.preset(check.one_of("model", model, list(transformer.PRESETS)))


def decoder_layer_time(model: str | transformer.TransformerShape, gpu: str | specs.GPUSpec, phase: str,
                       batch: int = 1, context: int = 2048, precision: str = "fp16", gemm_kind: str = "dense",
                       gemm_speedup: float | None = None, causal: bool = True) -> LayerTime:
    """Roofline time of one decoder layer of ``model`` (a :mod:`ampere.transformer` preset name or shape).

    ``phase="prefill"``: ``batch`` sequences of ``context`` prompt tokens each. ``phase="decode"``: ``batch``
    sequences each adding one token to a K/V cache of ``context`` tokens. ``gemm_kind="2:4"`` times the linear
    layers with the 2:4 sparse roofline; alternatively ``gemm_speedup`` divides the dense GEMM time by a
    measured factor (e.g. a published kernel speedup), and then ``gemm_kind`` must stay ``"dense"``.
    Everything else is dense in both cases. ``causal=False`` (an encoder such as BERT) counts the full score
    matrix in prefill instead of its lower half. Chapter: *2:4 structured sparsity*, "2:4 on large language
    models".
    """
    shape = _shape(model)
    causal = check.boolean("causal", causal)
    spec = specs.get(gpu)
    check.one_of("phase", phase, PHASES)
    batch = check.positive_int("batch", batch, maximum=2**16)
    context = check.positive_int("context", context, maximum=2**22)
    check.one_of("precision", precision, ("fp16", "bf16"))
    check.one_of("gemm_kind", gemm_kind, ("dense", "2:4"))
    if gemm_speedup is not None:
        gemm_speedup = check.positive("gemm_speedup", gemm_speedup)
        if gemm_kind != "dense":
            raise ValueError("gemm_speedup scales the dense GEMM time: use it with gemm_kind='dense', "
                             f"got gemm_kind={gemm_kind!r}")
    b = _BYTES[precision]
    q_len = context if phase == "prefill" else 1
    tokens = batch * q_len
    gemm = sum(matmul_time_model(spec, LinearShape(tokens, k, m), precision, gemm_kind)["time_s"]
               for _, k, m in shape.linear_shapes())
    if gemm_speedup is not None:
        gemm /= gemm_speedup
    h, kv, f = shape.hidden, shape.kv_dim, shape.ffn
    peak, bw = spec.peak_flops(precision), spec.hbm_bytes_per_s
    if phase == "prefill":
        att_flops = batch * (2.0 if causal else 4.0) * context * context * h  # 4 s^2 h for QK^T and PV; causal: half
        att_bytes = batch * context * (2 * h + 2 * kv) * b  # q, o, k, v once each
    else:
        att_flops = batch * 4.0 * context * h
        att_bytes = batch * (2 * context * kv + 2 * h + 2 * kv) * b  # the K/V cache read, q and o, the new k, v
    attention = max(att_flops / peak, att_bytes / bw)
    act = 3 * f if shape.glu else 2 * f  # SwiGLU reads gate and up and writes their product; GELU reads and writes
    other = tokens * (12 * h + 2 * kv + act) * b / bw  # norms 4h, residual adds 6h, rotary 2h + 2kv, activation
    return LayerTime(shape.label, spec.name, phase, batch, q_len, context, gemm_kind, gemm, attention, other)


def layer_speedup(model: str | transformer.TransformerShape, gpu: str | specs.GPUSpec, phase: str, batch: int = 1,
                  context: int = 2048, precision: str = "fp16", gemm_speedup: float | None = None,
                  causal: bool = True) -> dict[str, Any]:
    """Dense against 2:4 for one decoder layer: both :class:`LayerTime`, the GEMM share ``f`` of the dense time,
    the GEMM speedup ``s`` and the layer speedup, which equals ``amdahl(f, s)``. With ``gemm_speedup`` the
    GEMMs are ``gemm_speedup`` times faster instead of the 2:4 roofline. Chapter: *2:4 structured sparsity*,
    "2:4 on large language models".
    """
    dense = decoder_layer_time(model, gpu, phase, batch, context, precision, "dense", causal=causal)
    if gemm_speedup is None:
        sparse = decoder_layer_time(model, gpu, phase, batch, context, precision, "2:4", causal=causal)
    else:
        sparse = decoder_layer_time(model, gpu, phase, batch, context, precision, "dense", gemm_speedup, causal)
    s = dense.gemm_s / sparse.gemm_s
    return {"dense": dense, "sparse": sparse, "gemm_fraction": dense.gemm_fraction, "gemm_speedup": s,
            "speedup": dense.total_s / sparse.total_s}


def speedup_rows(model: str | transformer.TransformerShape = "llama2-7b", gpu: str | specs.GPUSpec = "A100-SXM4-80GB",
                 cases: Sequence[tuple[str, int, int]] = (("prefill", 1, 2048), ("decode", 1, 2048),
                                                          ("decode", 64, 2048)),
                 kernel_speedup: float | None = None) -> list[dict[str, str]]:
    """:func:`layer_speedup` for each (phase, batch, context) of ``cases``, as table rows: the GEMM share of
    the dense layer, the roofline 2:4 layer speedup, and, with ``kernel_speedup``, the layer speedup when the
    GEMMs are only that much faster. Chapter: *2:4 structured sparsity*, "2:4 on large language models".
    """
    _shape(model)
    kernel_speedup = check.optional(check.bounded, "kernel_speedup", kernel_speedup, 0.01, 100.0,
                                    why="a GEMM speedup")

    def triple(name: str, case: Any) -> tuple[Any, Any, Any]:
        if not isinstance(case, (tuple, list)) or len(case) != 3:
            raise ValueError(f"{name} must be a (phase, batch, context) triple; got {case!r}")
        return tuple(case)

    cases = check.sequence("cases", cases, triple, max_len=64)
    rows = []
    for case in cases:
        phase, batch, context = case
        roof = layer_speedup(model, gpu, phase, batch, context)
        row = {"phase": phase, "batch": str(batch), "context": str(context),
               "GEMM share": f"{100 * roof['gemm_fraction']:.0f} %", "GEMMs (2:4 roofline)": f"{roof['gemm_speedup']:.2f}x",
               "layer (2:4 roofline)": f"{roof['speedup']:.2f}x"}
        if kernel_speedup is not None:
            k = layer_speedup(model, gpu, phase, batch, context, gemm_speedup=kernel_speedup)
            row[f"layer, GEMMs {kernel_speedup:g}x"] = f"{k['speedup']:.2f}x"
        rows.append(row)
    return rows


#: BERT-base (12 layers, 768 wide, 12 heads, a 3072-wide GELU MLP), the encoder PyTorch timed dense and 2:4.
BERT_BASE = transformer.gpt(12, 768, 12, 28996, 512, name="bert-base-cased")


def bert_check_rows(gpu: str | specs.GPUSpec = "A100-SXM4-80GB") -> list[dict[str, str]]:
    """The layer model against measurements no one here made: PyTorch's BERT-base inference, dense and 2:4
    (sequence 384), eager and compiled, beside :func:`layer_speedup` of a BERT-base layer (not causal) with
    the GEMMs as much faster as PyTorch measured for one large ``Linear``, and at the 2:4 roofline.
    Chapter: *2:4 structured sparsity*, "2:4 on large language models".
    """
    from .claims import published_speedup, published_speedups

    recs = published_speedups(gpu)
    linear = next(r for r in recs if r.params.get("backend") == "cutlass" and "in_features" in r.params)
    kernel = published_speedup(linear)
    rows = []
    for batch in sorted({r.params["batch"] for r in recs if r.params.get("model") == "bert-base-cased"}):
        by = {r.params["mode"]: published_speedup(r) for r in recs
              if r.params.get("model") == "bert-base-cased" and r.params["batch"] == batch}
        seq = next(r.params["seq"] for r in recs if r.params.get("batch") == batch)
        k = layer_speedup(BERT_BASE, gpu, "prefill", batch, seq, gemm_speedup=kernel, causal=False)
        roof = layer_speedup(BERT_BASE, gpu, "prefill", batch, seq, causal=False)
        rows.append({"batch": str(batch), "measured, eager": f"{by['eager']:.2f}x",
                     "measured, compiled": f"{by['compiled']:.2f}x",
                     f"model, GEMMs {kernel:.2f}x": f"{k['speedup']:.2f}x",
                     "model, 2:4 roofline": f"{roof['speedup']:.2f}x"})
    return rows
