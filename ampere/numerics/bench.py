"""The benchmark ``python -m ampere bench tf32`` (:func:`bench_main`, registered in ``ampere/cli.py``):
throughput, the TF32 error against the emulation and the conversion probe, written as one result JSON,
with its printed summary.

torch is imported inside :func:`bench_main`. Chapter: *TF32 and the precision formats* (book/tf32.ipynb),
section "How much faster is TF32?".
"""

from __future__ import annotations

import os
from typing import Any, Mapping, Sequence

from ..device import tf32_state
from .formats import render_table
from .measure import compare_tf32_with_emulation, measure_throughput, tf32_conversion_probe
from .throughput import MATMUL_PRECISIONS, throughput_rows, tf32_speedups


def _summary(records: Sequence[Mapping[str, Any]], label: str, skipped: Mapping[str, str]) -> str:
    lines = [f"TF32 benchmark on {label}"]
    rows = throughput_rows(records)
    if rows:
        lines.append(render_table(rows, ["precision", "n", "tflops", "pct_of_peak", "median_ms"],
                                  {"tflops": ".4g", "pct_of_peak": ".1f", "median_ms": ".4g"},
                                  {"tflops": "TFLOP/s", "pct_of_peak": "% of peak"}))
    for n, s in tf32_speedups(records).items():
        lines.append(f"TF32 / strict FP32 speedup at {n}^3: {s:.2f}x")
    for rec in records:
        if rec.get("kind") == "tf32_error":
            d = rec["derived"]
            lines.append(f"K={rec['params']['k']}: rel. error device TF32 {d['device_tf32']:.2e}, emulated (nearest) "
                         f"{d['emulated_nearest']:.2e}, truncate {d['emulated_truncate']:.2e}; distance device-"
                         f"emulation {d['distance_to_nearest']:.1e} (nearest) / {d['distance_to_truncate']:.1e} "
                         f"(truncate){'' if rec['tf32_active'] else '  [TF32 not active on this device]'}")
        if rec.get("kind") == "tf32_conversion":
            mt = rec["derived"]["match_on_ties"]
            lines.append("conversion probe, share of half-way values matching: "
                         + ", ".join(f"{k} {v:.3f}" for k, v in mt.items()))
    lines += [f"skipped {p}: {why}" for p, why in skipped.items()]
    return "\n".join(lines)


def bench_main(argv: Sequence[str] | None = None) -> int:
    """``python -m ampere bench tf32``: matmul throughput for fp64, strict fp32, tf32, bf16, fp16, int8, the
    TF32/FP32 speedup, the device's TF32 error against the CPU emulation, and the conversion probe.

    Writes one result JSON (``--out``). On a CPU it runs the same code on small sizes (TF32 skipped), so
    the path is tested everywhere. Chapter *TF32 and the precision formats*, section "How much faster is TF32?".
    """
    import torch

    from .. import benchcli, results
    from .. import device as _device

    p = benchcli.bench_parser("tf32", "TF32 versus strict FP32 (and FP64, BF16, FP16, INT8): matmul throughput, "
                                 "% of peak, and the TF32 error against the CPU emulation.")
    p.add_argument("--sizes", type=int, nargs="+", default=None,
                   help="square sizes n (default 2048 4096 8192 on a GPU, 4096 with --quick; 128 256 on a CPU)")
    p.add_argument("--precisions", nargs="+", default=list(MATMUL_PRECISIONS), choices=MATMUL_PRECISIONS)
    p.add_argument("--error-ks", type=int, nargs="+", default=None,
                   help="inner dimensions K of the error comparison (default 256 1024 4096; 64 256 on a CPU)")
    from .. import check

    argv = [] if argv is None else check.sequence("argv", argv, lambda n, v: check.string(n, v, allow_empty=True),
                                                  min_len=0, max_len=1000)
    args = p.parse_args(argv)
    for n in args.sizes or []:
        if n < 24 or n % 8:
            p.error(f"--sizes {n}: sizes must be multiples of 8 and >= 24 (torch._int_mm on CUDA needs more than "
                    "16 rows and dimensions divisible by 8)")
    info = benchcli.probe(args)
    dev = _device.torch_device(info)
    gpu = dev.type == "cuda"
    if args.sizes:
        sizes = args.sizes
    elif gpu:
        sizes = [4096] if args.quick else [2048, 4096, 8192]
    else:
        sizes = [128, 256]
    ks = args.error_ks or ([256, 1024, 4096] if gpu else [64, 256])
    warmup = (0.5 if args.quick else 1.0) if gpu else 0.02

    def show(rec: dict[str, Any]) -> None:
        peak = rec.get("peak_precision", rec["precision"])
        pct = f"{rec['pct_of_peak']:6.1f}% of {peak} peak" if "pct_of_peak" in rec else ""
        print(f"  {rec['precision']:5s} {rec['n']:6d}^3 {rec['tflops']:9.2f} TFLOP/s {pct}", flush=True)

    notes = []
    env = {k: os.environ.get(k) for k in ("NVIDIA_TF32_OVERRIDE", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE")}
    if env["TORCH_ALLOW_TF32_CUBLAS_OVERRIDE"] == "1":
        notes.append("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 (NGC containers set it): 'strict FP32' matmuls may use TF32")
    if env["NVIDIA_TF32_OVERRIDE"] == "0":
        notes.append("NVIDIA_TF32_OVERRIDE=0: NVIDIA's libraries refuse TF32, the 'tf32' rows are strict FP32")
    if not info.tf32:
        notes.append("this device has no TF32 tensor cores (sm80+): TF32 is skipped, the error comparison "
                     "shows strict FP32 in place of the device's TF32")
    records, skipped = measure_throughput(sizes, args.precisions, device=dev, warmup_s=warmup,
                                          min_time_s=0.2 if gpu else 0.01,
                                          max_time_s=(2.0 if args.quick else 5.0) if gpu else 0.5,
                                          progress=show, info=info)
    if gpu:
        torch.cuda.empty_cache()
    records += compare_tf32_with_emulation(dev, ks=ks, m=512 if gpu else 64, n=512 if gpu else 64)
    records.append(tf32_conversion_probe(dev, size=512 if gpu else 32))
    notes += [f"skipped {k}: {v}" for k, v in skipped.items()]
    params = {"sizes": list(sizes), "precisions": list(args.precisions), "error_ks": list(ks), "quick": args.quick,
              "warmup_s": warmup, "tf32_state_outside_measurements": {k: str(v) for k, v in tf32_state().items()},
              "environment": env}
    result = results.make_result("tf32", info, params, records, notes)
    return benchcli.finish_bench(result, args, _summary(records, info.label(), skipped))
