"""Measuring: the GEMMs of one transformer layer timed on the device at hand (:func:`layer_gemm_shapes`,
:func:`measure_layer_gemms`) and the benchmark ``python -m ampere bench megatron`` (:func:`bench_main`,
registered in ``ampere/cli.py``).

Chapter: *Megatron-LM: 3D parallelism predicted, validated, and run* (book/megatron.ipynb),
section "A throughput model built from hardware", "Measured". Imports torch only inside
:func:`measure_layer_gemms`; the probe, the timing harness and the benchmark options come from
:mod:`ampere.device`, :mod:`ampere.timing` and :mod:`ampere.benchcli`; the model column is
``hardware.gemm_time``.
"""

from __future__ import annotations

import sys
from typing import Any, Sequence

from .. import check
from ..transformer import TransformerShape
from .hardware import gemm_time
from .published import TABLE1, table1_config
from .sizing import GPTConfig, _cfg

# ===========================================================================================================
# Measuring: the GEMMs of one layer on the GPU at hand, next to the model
# ===========================================================================================================


#: Largest microbatch of :func:`layer_gemm_shapes`, and largest operand :func:`measure_layer_gemms` builds
#: (2**30 elements: 4 GB in fp32 on the host before it moves to the GPU; Table 1's layers at t = 8 need under
#: a third of it).
MAX_MICROBATCH, MAX_ELEMENTS = 65_536, 2**30


def layer_gemm_shapes(cfg: TransformerShape, tensor: int = 1, microbatch: int = 1) -> list[dict[str, Any]]:
    """The forward GEMMs of one transformer layer on one tensor rank: name, (m, n, k), batch.

    Chapter: "A throughput model built from hardware". QKV (with grouped-query K and V) and the first
    MLP matrix (gate and up fused for SwiGLU) are split by columns, the attention output and the second
    MLP matrix by rows; the two attention products are batched over b a / t heads with the head size as
    a thin dimension.
    """
    cfg = _cfg(cfg)
    t = check.positive_int("tensor", tensor, maximum=cfg.heads)
    b = check.positive_int("microbatch", microbatch, maximum=MAX_MICROBATCH)
    if cfg.heads % t or cfg.n_kv_heads % t:
        raise ValueError(f"tensor={t} does not divide heads={cfg.heads} and kv_heads={cfg.n_kv_heads}")
    tokens, h, s = b * cfg.seq, cfg.hidden, cfg.seq
    hd, heads = cfg.head_dim, cfg.heads // t
    up = cfg.ffn * (2 if cfg.glu else 1) // t
    return [
        {"name": "QKV", "m": tokens, "n": (h + 2 * cfg.kv_dim) // t, "k": h, "batch": 1},
        {"name": "attention scores QK^T", "m": s, "n": s, "k": hd, "batch": b * heads},
        {"name": "attention x V", "m": s, "n": hd, "k": s, "batch": b * heads},
        {"name": "attention output", "m": tokens, "n": h, "k": h // t, "batch": 1},
        {"name": "MLP h to 4h", "m": tokens, "n": up, "k": h, "batch": 1},
        {"name": "MLP 4h to h", "m": tokens, "n": h, "k": cfg.ffn // t, "batch": 1},
    ]


def measure_layer_gemms(cfg: TransformerShape, tensor: int = 1, microbatch: int = 1, device: Any = None,
                        dtype: str = "bf16", warmup_s: float = 1.0, max_time_s: float = 2.0,
                        info: Any = None) -> list[dict[str, Any]]:
    """Time the forward GEMMs of one layer (:func:`layer_gemm_shapes`) and put the model next to them.

    Chapter: "A throughput model built from hardware", section "Measured". Random normal inputs created
    on the CPU generator and moved, outputs preallocated, timed with :func:`ampere.timing.benchmark`
    (CUDA events on a GPU). Warm-up lasts ``warmup_s`` before the first shape (clocks and power settle)
    and a fifth of it before the others. The model column is :func:`gemm_time` for the matched catalogue
    GPU (None on a CPU or an unknown GPU). ``dtype`` is "bf16", "fp16" or "fp32" (use fp32 on a CPU).
    ``info`` is the :class:`ampere.device.DeviceInfo` to use (default: a fresh probe). A shape that does
    not fit in GPU memory (``torch.cuda.OutOfMemoryError``) is skipped with a note in its record
    (``measured_s`` None); its tensors are freed after the handler, so the next shape starts clean.
    """
    from .. import device as _device

    shapes = layer_gemm_shapes(cfg, tensor, microbatch)
    check.one_of("dtype", dtype, ("bf16", "fp16", "fp32"))
    check.nonneg("warmup_s", warmup_s, maximum=600.0)
    check.positive("max_time_s", max_time_s, maximum=3600.0)
    if info is not None and not isinstance(info, _device.DeviceInfo):
        raise TypeError(f"info must be an ampere.device.DeviceInfo or None, got {info!r:.60} ({type(info).__name__})")
    if device is not None:
        device = check.device("device", device)
    largest = max(g["batch"] * max(g["m"] * g["k"], g["k"] * g["n"], g["m"] * g["n"]) for g in shapes)
    check.at_most("cfg", largest, MAX_ELEMENTS, f"elements in one operand of the layer's GEMMs (tensor={tensor}, "
                  f"microbatch={microbatch}); each is first made on the host")

    import torch

    from .. import timing

    info = _device.probe() if info is None else info
    dev = torch.device(device) if device is not None else _device.torch_device(info)
    spec = info.spec if dev.type == "cuda" else None
    tdtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[dtype]
    gen = torch.Generator().manual_seed(0)
    out = []
    for i, g in enumerate(shapes):
        bsz, m, n, k = g["batch"], g["m"], g["n"], g["k"]
        flops = 2.0 * m * n * k * bsz
        rec = {**g, "flops": flops, "measured_s": None, "tflops": None, "model_s": None}
        if spec is not None and dtype in ("bf16", "fp16") and spec.supports(dtype):
            rec["model_s"] = gemm_time(m, n, k, bsz, spec)
        a = b = c = meas = None
        oom = False
        try:
            a = torch.randn(bsz, m, k, generator=gen).to(dev, tdtype)
            b = torch.randn(bsz, k, n, generator=gen).to(dev, tdtype)
            c = torch.empty(bsz, m, n, device=dev, dtype=tdtype)
            meas = timing.benchmark(lambda: torch.bmm(a, b, out=c), label=g["name"], device=dev,
                                    warmup_s=warmup_s if i == 0 else warmup_s / 5, max_time_s=max_time_s,
                                    params=dict(g))
        except torch.cuda.OutOfMemoryError:
            oom = True  # free below: inside the handler the traceback still references the tensors
        a = b = c = None
        if oom:
            if dev.type == "cuda":
                torch.cuda.empty_cache()
            rec["note"] = "out of GPU memory: skipped"
            out.append(rec)
            continue
        rec.update(measured_s=meas.median_s, tflops=flops / meas.median_s / 1e12, measurement=meas.to_dict())
        out.append(rec)
    return out


#: The tiny GPT layer the benchmark times on a CPU (``--device cpu`` or no GPU): a test of the code path.
CPU_BENCH_CONFIG = dict(layers=2, hidden=256, heads=4, vocab=512, seq=128)


def bench_main(argv: Sequence[str] | None = None) -> int:
    """``python -m ampere bench megatron``: one layer's GEMMs of Table 1 models, measured and modelled.

    On a CUDA GPU with BF16 tensor cores: the Table 1 rows' shapes in bf16. Otherwise (``--device cpu``,
    or no such GPU): the same code path on :data:`CPU_BENCH_CONFIG` in fp32, recorded as a CPU result.
    """
    from .. import benchcli

    p = benchcli.bench_parser("megatron", "GEMMs of one transformer layer (Megatron-LM shapes): measured vs model.")
    p.add_argument("--rows", nargs="+", default=None, help="Table 1 rows (default: 1.7B 18B 145B 1T)")
    argv = [] if argv is None else check.sequence("argv", argv, check.string, min_len=0, max_len=100)
    args = p.parse_args(argv)
    names = args.rows or (["18B", "1T"] if args.quick else ["1.7B", "18B", "145B", "1T"])
    rows = {r["name"]: r for r in TABLE1}
    unknown = [n for n in names if n not in rows]
    if unknown:  # before anything is probed or measured
        print(f"error: unknown row(s) {unknown}; known: {', '.join(rows)}", file=sys.stderr)
        return 2
    info = benchcli.probe(args)
    on_gpu = info.backend == "cuda" and info.bf16_tensor
    if on_gpu:
        jobs = [(name, table1_config(rows[name]), rows[name]["tensor"], rows[name]["microbatch"]) for name in names]
        dtype, device, warm, limit = "bf16", None, 1.0, (1.0 if args.quick else 2.0)
    else:
        print(f"{info.label()}: no GPU with BF16 tensor cores in use; timing the code path on a tiny fp32 layer "
              f"on the CPU (not a GPU measurement)")
        jobs = [("tiny", GPTConfig(**CPU_BENCH_CONFIG), 1, 1)]
        names = ["tiny"]
        dtype, device, warm, limit = "fp32", "cpu", 0.05, 0.2
    records = []
    for name, cfg, t, b in jobs:
        for rec in measure_layer_gemms(cfg, t, b, device=device, dtype=dtype, warmup_s=warm, max_time_s=limit,
                                       info=info):
            rec["row"] = name
            model = f"model {rec['model_s'] * 1e3:8.3f} ms" if rec["model_s"] else ""
            measured = (f"{rec['measured_s'] * 1e3:8.3f} ms {rec['tflops']:7.1f} TFLOP/s" if rec["measured_s"]
                        else rec.get("note", "skipped"))
            print(f"  {name:5s} {rec['name']:22s} {measured} {model}", flush=True)
            records.append(rec)
    from .. import results as _results

    result = _results.make_result("megatron", info, {"rows": names, "dtype": dtype, "quick": args.quick},
                                  records, [])
    return benchcli.finish_bench(result, args, f"megatron layer GEMMs on {info.label()}: {len(records)} shapes")
