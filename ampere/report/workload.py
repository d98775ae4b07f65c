"""The workload probe: one transformer layer, forward and backward, at a reference shape in BF16, timed on
the GPU, with the Megatron model's prediction for the same GPU beside it.

Measuring file: torch is imported only inside :func:`measure_layer`; :func:`layer_shape` and
:func:`predict_layer_s` are pure (the Megatron model of :mod:`ampere.megatron`, public API, read-only).
Chapter: *The reference check* (book/reference-check.ipynb), "Probes compared like with like".
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .. import check, specs

#: the largest microbatch of one layer on one GPU the functions accept (a bound of sense: 4,096 sequences of
#: the reference shape are terabytes of activations)
MAX_MICROBATCH = 4096

#: the reference shape: one layer of Megatron-LM's Table 1 7.5B model (hidden 4096, 32 heads, sequence
#: 2048), microbatch 1, no tensor parallelism
REFERENCE_ROW = "7.5B"
#: the model's categories that make up one layer's forward and backward on one GPU
LAYER_CATEGORIES = ("layer GEMMs", "attention", "other memory-bound")


def layer_shape(row: str = REFERENCE_ROW) -> Any:
    """The one-layer :class:`ampere.transformer.TransformerShape` of a Table 1 row of Megatron-LM."""
    from .. import megatron

    rows = {r["name"]: r for r in megatron.TABLE1}
    check.one_of("row", row, tuple(rows))
    return dataclasses.replace(megatron.table1_config(rows[row]), layers=1)


def predict_layer_s(gpu: str | specs.GPUSpec, row: str = REFERENCE_ROW, microbatch: int = 1) -> float:
    """Seconds for one layer's forward and backward on one ``gpu`` (no recomputation, FlashAttention, as
    PyTorch's scaled_dot_product_attention runs it), from :func:`ampere.megatron.estimate` (the sum of
    :data:`LAYER_CATEGORIES`, uncalibrated). Chapter: *The reference check*."""
    from .. import megatron

    spec = specs.get(check.gpu("gpu", gpu))
    microbatch = check.positive_int("microbatch", microbatch, maximum=MAX_MICROBATCH)
    est = megatron.estimate(layer_shape(row), 1, microbatch, 1, 1, microbatch, recompute="none", gpu=spec.name,
                            flash_attention=True)
    return sum(est.breakdown[c] for c in LAYER_CATEGORIES)


def layer_flops(row: str = REFERENCE_ROW, microbatch: int = 1) -> float:
    """FLOPs of one layer's forward and backward (3 x the forward: 24 b s h^2 + 4 b s^2 h, Narayanan et al.)."""
    shape = layer_shape(row)
    microbatch = check.positive_int("microbatch", microbatch, maximum=MAX_MICROBATCH)
    b, s, h = microbatch, shape.seq, shape.hidden
    return 3 * (24 * b * s * h * h + 4 * b * s * s * h)


def measure_layer(device: Any = None, row: str = REFERENCE_ROW, microbatch: int = 1, quick: bool = True,
                  dtype: str = "bf16", shape: Any = None) -> dict[str, Any]:
    """Time one transformer layer (pre-norm GPT block: LayerNorm, fused QKV, causal scaled-dot-product
    attention, output projection, LayerNorm, 4h GELU MLP, residuals) forward and backward.

    Inputs are random normal, made on the CPU generator and moved; gradients accumulate into the same
    buffers, so nothing is allocated per call after the first. Returns ``{"seconds", "measurement",
    "shape"}``. ``device`` is a torch device (default ``cuda``); ``shape`` (a TransformerShape) replaces the
    Table 1 row, e.g. a tiny one in "fp32" on a CPU.
    """
    quick = check.boolean("quick", quick)
    check.one_of("dtype", dtype, ("bf16", "fp16", "fp32"))
    b = check.positive_int("microbatch", microbatch, maximum=MAX_MICROBATCH)
    reference = layer_shape(row)  # checks row even when shape replaces it
    shape = reference if shape is None else shape
    for field in ("seq", "hidden", "heads"):
        if not hasattr(shape, field):
            raise TypeError(f"shape must be an ampere.transformer.TransformerShape (seq, hidden, heads), got "
                            f"{shape!r:.60} ({type(shape).__name__})")
    s = check.positive_int("shape.seq", shape.seq, maximum=1_048_576)
    h = check.positive_int("shape.hidden", shape.hidden, maximum=1_048_576)
    a = check.positive_int("shape.heads", shape.heads, maximum=h)
    if h % a:
        raise ValueError(f"shape.hidden={h} is not a multiple of shape.heads={a}")
    check.at_most("microbatch x shape", 16 * b * s * h, 2**36, "elements of one layer's activations: 64 Gi")
    dev = check.device("device", "cuda" if device is None else device)

    import torch
    import torch.nn.functional as F

    from .. import timing

    if str(dev) == "cpu":
        dev = torch.device("cpu")
    elif dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={str(dev)!r}, but torch sees no CUDA GPU here: pass device='cpu' and a small "
                         "shape to run the layer on the CPU")
    tdt = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[dtype]
    gen = torch.Generator().manual_seed(0)

    def param(*size: int, std: float = 0.02) -> Any:
        return (torch.randn(*size, generator=gen) * std).to(device=dev, dtype=tdt).requires_grad_()

    w = {"qkv": param(3 * h, h), "qkv_b": param(3 * h), "o": param(h, h), "o_b": param(h),
         "fc1": param(4 * h, h), "fc1_b": param(4 * h), "fc2": param(h, 4 * h), "fc2_b": param(h)}
    norms = [(torch.ones(h, device=dev, dtype=tdt, requires_grad=True),
              torch.zeros(h, device=dev, dtype=tdt, requires_grad=True)) for _ in range(2)]
    x = torch.randn(b, s, h, generator=gen).to(device=dev, dtype=tdt).requires_grad_()
    grad = torch.randn(b, s, h, generator=gen).to(device=dev, dtype=tdt)

    def layer(inp: Any) -> Any:
        y = F.layer_norm(inp, (h,), *norms[0])
        q, k, v = F.linear(y, w["qkv"], w["qkv_b"]).view(b, s, 3, a, h // a).permute(2, 0, 3, 1, 4).unbind(0)
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, s, h)
        y = inp + F.linear(att, w["o"], w["o_b"])
        z = F.gelu(F.linear(F.layer_norm(y, (h,), *norms[1]), w["fc1"], w["fc1_b"]))
        return y + F.linear(z, w["fc2"], w["fc2_b"])

    def step() -> None:
        layer(x).backward(grad)

    m = timing.benchmark(step, device=dev, label=f"layer fwd+bwd {row}", warmup_s=0.5 if quick else 1.0,
                         min_time_s=0.2, max_time_s=1.5 if quick else 4.0,
                         params={"row": row, "microbatch": b, "seq": s, "hidden": h, "heads": a, "dtype": dtype})
    return {"seconds": m.median_s, "measurement": m.to_dict(),
            "shape": {"row": row, "microbatch": b, "seq": s, "hidden": h, "heads": a, "dtype": dtype}}


def prediction_rows(gpus: tuple[str, ...] = ("A100-SXM4-40GB", "A100-SXM4-80GB", "H100-SXM5-80GB",
                                             "H200-SXM-141GB"), row: str = REFERENCE_ROW) -> list[dict[str, str]]:
    """The Megatron model of the reference layer on each of ``gpus``: milliseconds, TFLOP/s and the share
    of the dense BF16 peak (:func:`predict_layer_s`); the layer is BF16, so every GPU must have BF16 tensor
    cores. Chapter: *The reference check*."""
    out = []
    gpus = check.gpus("gpus", gpus, max_len=len(specs.names()))
    no_bf16 = [g for g in gpus if not specs.get(g).supports("bf16")]
    if no_bf16:
        raise ValueError(f"gpus lists {', '.join(no_bf16)}, without BF16 tensor cores: the workload layer is BF16; "
                         f"allowed: {', '.join(n for n in specs.names() if specs.get(n).supports('bf16'))}")
    for g in gpus:
        spec, t = specs.get(g), predict_layer_s(g, row)
        rate = layer_flops(row) / t
        out.append({"GPU": spec.name, "model: ms per layer": f"{1e3 * t:.1f}", "TFLOP/s": f"{rate / 1e12:.0f}",
                    "% of dense BF16 peak": f"{100 * rate / spec.peak_flops('bf16'):.0f}"})
    return out
