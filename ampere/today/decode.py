"""Serving: the bound on a generation run's output tokens/s (prefill, then decoding steps at a growing
context, split over tensor-parallel cards) beside published LLM decoding runs on A100, H100 and H200.

Chapter: *The A100 today* (book/a100-today.ipynb), "Serving: the bound against published runs". Pure
Python: no torch, no matplotlib (the view draws through ``ampere.views``).
"""

from __future__ import annotations

import functools
from typing import Any

from .. import check, results, specs
from .catalogue import shape_of
from .network import _network


def _run_parts(model: Any, gpu: str | specs.GPUSpec, batch: int, prompt_tokens: int, output_tokens: int,
               weights: str, kv_cache: str, tensor_parallel: int) -> tuple[float, float, float]:
    """(prefill s, decoding steps' compute-or-memory s, decoding steps' all-reduce s) of a generation run."""
    from .. import hbm, memory

    shape = shape_of(model)
    spec = specs.get(gpu)
    b = check.positive_int("batch", batch, maximum=1_000_000)
    p = check.nonneg_int("prompt_tokens", prompt_tokens, maximum=1_048_576)
    o = check.positive_int("output_tokens", output_tokens, maximum=65_536)
    tp = check.positive_int("tensor_parallel", tensor_parallel, maximum=1024)
    check.one_of("weights", weights, tuple(memory.FORMAT_BITS))
    check.one_of("kv_cache", kv_cache, tuple(memory.FORMAT_BITS))
    net = _network(spec, tp)
    if net.reason:
        raise ValueError(f"tensor_parallel={tp} on {spec.name}: {net.reason}")
    compute = "fp8" if weights == "fp8" and spec.supports("fp8") else "fp16"
    comm = 2 * shape.layers * net.all_reduce_time(b * shape.hidden * 2) if tp > 1 else 0.0
    steps = 0.0
    for ctx in range(p + 1, p + o + 1):  # the step that generates token j attends over p + j tokens
        db = hbm.decode_bound(shape, spec, weights=weights, batch=b, context=ctx, kv_cache=kv_cache,
                              compute_precision=compute)
        steps += max(db.memory_time_s, db.compute_time_s) / tp
    w_bytes = memory.weight_bytes(shape.params, weights)
    prefill = (max(w_bytes / spec.hbm_bytes_per_s, b * p * 2 * shape.params / spec.peak_flops(compute)) / tp
               if p else 0.0)
    return prefill, steps, comm * o


def decode_run_bound(model: Any, gpu: str | specs.GPUSpec, *, batch: int, prompt_tokens: int, output_tokens: int,
                     weights: str = "fp16", kv_cache: str = "fp16", tensor_parallel: int = 1) -> float:
    """Upper bound on the output tokens/s of a generation run (what serving benchmarks report).

    ``batch`` sequences each read ``prompt_tokens`` (prefill: one pass, compute bound) and then generate
    ``output_tokens``; every decoding step is ``ampere.hbm.decode_bound`` at the context it has reached
    (weights plus the growing KV cache, datasheet bandwidth), split over ``tensor_parallel`` cards that add
    two all-reduces of the activations per layer (``ampere.collectives`` over the GPU's node). FP8 weights
    compute in FP8 where the GPU has it. Returns generated tokens per second of all sequences together.
    Chapter: *The A100 today*, "Serving: the bound against published runs".
    """
    prefill, steps, comm = _run_parts(model, gpu, batch, prompt_tokens, output_tokens, weights, kv_cache,
                                      tensor_parallel)
    return batch * output_tokens / (prefill + steps + comm)


def decode_gap_rows() -> list[dict[str, str]]:
    """The published one-stream A100 runs, from the bound to what was measured: the bound at datasheet
    bandwidth, the all-reduces it includes per token, the same bound at the achievable HBM bandwidth of a
    streaming kernel (``ampere.megatron.INPUTS["hbm_fraction"]``, measured on an A100 80GB), and the
    published throughput as a fraction of that. Chapter: *The A100 today*, "Serving: the bound against
    published runs" (the Llama 2 70B run on four A100s against the one-card runs).
    """
    from .. import megatron, views

    frac = megatron.INPUTS["hbm_fraction"].value
    rows = []
    for rec in views.best(results.records(benchmark="llm-decode", gpu="A100-SXM4-80GB")):
        p = rec.params
        if p["batch"] != 1:
            continue
        args = (p["model"], rec.gpu, p["batch"], p["prompt_tokens"], p["output_tokens"], p["weights"],
                p.get("kv_cache", "fp16"), p.get("tensor_parallel", 1))
        prefill, steps, comm = _run_parts(*args)
        n = p["batch"] * p["output_tokens"]
        bound = n / (prefill + steps + comm)
        achievable = n / ((prefill + steps) / frac + comm)
        real = float(rec.figure("output_tokens_per_s"))
        rows.append({"run": _decode_what(rec), "bound tokens/s": f"{bound:.0f}",
                     "all-reduces per token": f"{1e3 * comm / p['output_tokens']:.2f} ms",
                     f"bound at {frac:.0%} of the bandwidth": f"{achievable:.0f}",
                     "published tokens/s": f"{real:.0f}", "published / that bound": f"{real / achievable:.0%}",
                     "source": views.source_text(rec)})
    return rows


def _decode_what(rec: results.Record) -> str:
    p = rec.params
    tp = f", TP {p['tensor_parallel']}" if p.get("tensor_parallel", 1) > 1 else ""
    return f"{p['model']} {p['weights']}, batch {p['batch']}, {p['prompt_tokens']}+{p['output_tokens']} tokens{tp}"


@functools.lru_cache(maxsize=None)
def _decode_points() -> tuple[Any, ...]:
    from .. import views

    pts = []
    for rec in views.best(results.records(benchmark="llm-decode")):
        p = rec.params
        bound = decode_run_bound(p["model"], rec.gpu, batch=p["batch"], prompt_tokens=p["prompt_tokens"],
                                 output_tokens=p["output_tokens"], weights=p["weights"],
                                 kv_cache=p.get("kv_cache", "fp16"), tensor_parallel=p.get("tensor_parallel", 1))
        pts.append(views.point(rec, "output_tokens_per_s", _decode_what(rec), bound, "tokens/s"))
    return tuple(pts)


def decode_points() -> list[Any]:
    """Published (and recorded) LLM decoding runs beside :func:`decode_run_bound`, as ``views.Point`` rows.

    The records are ``ampere/data/published/decode.json`` (benchmark "llm-decode"): serving benchmarks of
    Llama 2 on A100, H100 and H200 with their batch, prompt and output lengths and tensor parallelism.
    Chapter: *The A100 today*, "Serving: the bound against published runs".
    """
    return list(_decode_points())


def show_decode(info: Any = None) -> None:
    """The decoding section's view: every published run beside its bound, as a figure and a table.

    Nothing to measure here (decoding a real model needs its weights); the section shows the published
    A100, H100 and H200 runs and the fraction of the bandwidth bound each reached. Chapter: *The A100
    today*, "Serving: the bound against published runs".
    """
    from .. import device, views

    if info is not None and not isinstance(info, device.DeviceInfo):
        raise TypeError(f"info must be None or an ampere.device.DeviceInfo (ab.setup's INFO), got {info!r}")
    views.show(decode_points(), title="LLM decoding: published runs against the bandwidth bound",
               model_label="bound", real_label="published", digits=0, log=True)
