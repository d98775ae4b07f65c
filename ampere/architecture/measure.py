"""The matmul sweep: time square matmuls per precision on a real device, recompute recorded results, check
the BF16 acceptance target, and ``python -m ampere bench matmul`` (:func:`bench_main`).

Chapter: *Architecture of the GA100* (book/architecture.ipynb), "How close real matmuls come to the peak" and "Recorded
results". Measures with torch, imported inside the functions that need it (never at module level), gated on
the probed device; on a CPU the whole code path runs with tiny sizes.
"""

from __future__ import annotations

import warnings
from typing import Any, Sequence

from .. import check, gemm, specs


#: Precisions of the sweep and the torch dtype / TF32 switch each one needs.
MATMUL_PRECISIONS: dict[str, tuple[str, bool]] = {
    "fp32": ("float32", False), "tf32": ("float32", True), "bf16": ("bfloat16", False), "fp16": ("float16", False),
    "fp64": ("float64", False),
}


#: The sweep's sizes on a GPU, and on a CPU (where it tests the code path, not a GPU).
GPU_SIZES, CPU_SIZES = (256, 512, 1024, 2048, 4096, 8192), (64, 128)
#: Largest square size the sweep times: a 65536^2 FP64 matrix is 32 GiB (three of them at once).
MAX_SIZE = 65536


def _sizes(name: str, sizes: Sequence[int] | None, dev: Any) -> list[int]:
    """``sizes`` checked (1 to 64 sizes, each 1..MAX_SIZE), or the default for the device's type."""
    if sizes is None:
        return list(GPU_SIZES if dev.type == "cuda" else CPU_SIZES)
    return check.sequence(name, sizes, lambda n, v: check.positive_int(n, v, maximum=MAX_SIZE), max_len=64)


def _timing(warmup_s: float, min_time_s: float, max_time_s: float) -> None:
    for name, v in (("warmup_s", warmup_s), ("min_time_s", min_time_s), ("max_time_s", max_time_s)):
        check.nonneg(name, v, maximum=600.0)


def matmul_sweep(sizes: Sequence[int] | None = None,
                 precisions: Sequence[str] = ("fp32", "tf32", "bf16", "fp16"), device: Any = None,
                 warmup_s: float = 1.0, min_time_s: float = 0.2, max_time_s: float = 5.0,
                 progress: Any = None, info: Any = None) -> list[dict[str, Any]]:
    """Time square matmuls C = A @ B (n x n x n) for every size and precision on ``device``.

    ``sizes`` defaults to 256 ... 8192 on a GPU and to 64 and 128 on a CPU (:data:`GPU_SIZES`, :data:`CPU_SIZES`).
    FLOPs = 2n^3 (:func:`ampere.gemm.matmul_flops`). Inputs are random normal (never zeros: clocks under a
    power limit depend on the data), created on the CPU generator and moved, outputs preallocated
    (``torch.matmul(..., out=C)``). Warm-up lasts ``warmup_s`` for the first size of each precision (clocks
    and power settle), a tenth of it afterwards. TF32 is set explicitly per precision and restored. Returns
    records with the measurement, TFLOP/s from the median, and % of the device's dense peak when the device
    is in the catalogue. Out of memory at one size: the tensors are freed (outside the handler, whose
    traceback would keep them alive), a warning says so, and the larger sizes of that precision are skipped.
    On a CPU it works too (small sizes), which is how the unit tests and ``--device cpu`` exercise it.

    Chapter: *Architecture of the GA100*, "How close real matmuls come to the peak".
    """
    import torch

    from .. import device as _device
    from .. import timing

    precisions = check.names("precisions", precisions, MATMUL_PRECISIONS, max_len=len(MATMUL_PRECISIONS))
    _timing(warmup_s, min_time_s, max_time_s)
    progress = check.optional(check.function, "progress", progress)
    info = info or _device.probe()
    dev = torch.device(check.device("device", device)) if device is not None else _device.torch_device(info)
    sizes = _sizes("sizes", sizes, dev)
    spec = info.spec if dev.type == "cuda" else None
    oom = (torch.cuda.OutOfMemoryError, MemoryError)  # the CPU path (and the tests) raise MemoryError
    gen = torch.Generator().manual_seed(0)
    records = []
    for p in precisions:
        dtype_name, tf32 = MATMUL_PRECISIONS[p]
        dtype = getattr(torch, dtype_name)
        for i, n in enumerate(sizes):
            out_of_memory = False
            try:
                a = torch.randn(n, n, generator=gen, dtype=torch.float32).to(dev, dtype)
                b = torch.randn(n, n, generator=gen, dtype=torch.float32).to(dev, dtype)
                c = torch.empty(n, n, device=dev, dtype=dtype)
                with _device.tf32_enabled(tf32):
                    m = timing.benchmark(lambda: torch.matmul(a, b, out=c), label=f"matmul {p} {n}^3", device=dev,
                                         warmup_s=warmup_s if i == 0 else warmup_s / 10, min_time_s=min_time_s,
                                         max_time_s=max_time_s, params={"precision": p, "n": n})
            except oom:
                out_of_memory = True
            if out_of_memory:  # DESIGN section 9: free, say so, go on
                a = b = c = None
                if dev.type == "cuda":
                    torch.cuda.empty_cache()
                warnings.warn(f"matmul {p} {n}^3 ran out of memory on {dev}; skipped {p} at n >= {n}")
                break
            flops = gemm.matmul_flops(n, n, n)
            rec: dict[str, Any] = {"precision": p, "n": n, "flops": flops, "tflops": m.rate(flops) / 1e12,
                                   "tflops_best": m.rate(flops, "min") / 1e12, "measurement": m.to_dict()}
            peak_p = gemm.peak_precision_for(spec, p) if spec is not None else None
            if peak_p is not None:
                rec["peak_precision"] = peak_p
                rec["peak_tflops"] = spec.peak_flops(peak_p) / 1e12
                rec["pct_of_peak"] = 100 * rec["tflops"] / rec["peak_tflops"]
            records.append(rec)
            if progress:
                progress(rec)
        a = b = c = None
    return records


def staircase_sweep(ns: Sequence[int], m: int = 1536, k: int = 4096, precision: str = "fp16", device: Any = None,
                    warmup_s: float = 0.5, min_time_s: float = 0.05, max_time_s: float = 0.5,
                    info: Any = None) -> list[dict[str, Any]]:
    """Time C[m,n] = A[m,k] B[k,n] for every n of ``ns`` on ``device``: the tile and wave staircase, measured.

    Same harness rules as :func:`matmul_sweep` (random normal inputs from the CPU generator, output
    preallocated, warm-up by time before the first size, TF32 set explicitly and restored); at most 2,000
    sizes. Returns rows ``{"n", "m", "k", "precision", "tflops", "measurement"}``. Runs on a CPU too (tiny
    sizes), which is how the tests exercise it. Chapter: *Architecture of the GA100*, "Tiles, waves and
    alignment".
    """
    import torch

    from .. import device as _device
    from .. import timing

    check.one_of("precision", precision, MATMUL_PRECISIONS)
    ns = check.sequence("ns", ns, lambda name, n: check.positive_int(name, n, maximum=MAX_SIZE), max_len=2000)
    m, k = check.positive_int("m", m, maximum=MAX_SIZE), check.positive_int("k", k, maximum=MAX_SIZE)
    _timing(warmup_s, min_time_s, max_time_s)
    info = info or _device.probe()
    dev = torch.device(check.device("device", device)) if device is not None else _device.torch_device(info)
    dtype_name, tf32 = MATMUL_PRECISIONS[precision]
    dtype = getattr(torch, dtype_name)
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(m, k, generator=gen, dtype=torch.float32).to(dev, dtype)
    b_full = torch.randn(k, max(ns), generator=gen, dtype=torch.float32).to(dev, dtype)
    rows = []
    with _device.tf32_enabled(tf32):
        for i, n in enumerate(ns):
            b = b_full[:, :n].contiguous()
            c = torch.empty(m, n, device=dev, dtype=dtype)
            meas = timing.benchmark(lambda: torch.matmul(a, b, out=c), label=f"matmul {precision} {m}x{n}x{k}",
                                    device=dev, warmup_s=warmup_s if i == 0 else warmup_s / 20,
                                    min_time_s=min_time_s, max_time_s=max_time_s,
                                    params={"precision": precision, "m": m, "n": n, "k": k})
            rows.append({"n": n, "m": m, "k": k, "precision": precision,
                         "tflops": meas.rate(gemm.matmul_flops(m, n, k)) / 1e12, "measurement": meas.to_dict()})
    return rows


def matmul_records(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The records of a recorded matmul result, with the derived figures recomputed from raw samples.

    Chapter: *Architecture of the GA100*, "Recorded results".
    """
    from .. import results
    from ..timing import Measurement

    result = results.validate(result)
    if result["benchmark"] != "matmul":
        raise ValueError(f"result is a {result['benchmark']!r} result; give a 'matmul' result")
    out = []
    spec = specs.match(result["device"].get("name"))
    for i, rec in enumerate(result["records"]):
        if not {"measurement", "flops", "precision", "n"} <= set(rec):
            raise ValueError(f"result['records'][{i}] lacks measurement, flops, precision or n: not a matmul record")
        m = Measurement.from_dict(rec["measurement"])
        tflops = m.rate(rec["flops"]) / 1e12
        row = {"gpu": result["device"].get("name"), "precision": rec["precision"], "n": rec["n"], "tflops": tflops}
        peak_p = gemm.peak_precision_for(spec, rec["precision"]) if spec is not None else None
        if peak_p is not None:
            row["pct_of_peak"] = 100 * tflops / (spec.peak_flops(peak_p) / 1e12)
        out.append(row)
    return out


def bench_main(argv: Sequence[str] | None = None) -> int:
    """``python -m ampere bench matmul``: the Architecture chapter's sweep, recorded as a result JSON.

    Chapter: *Architecture of the GA100*, "How close real matmuls come to the peak".
    """
    from .. import benchcli, results

    p = benchcli.bench_parser("matmul", "Square matmul sweep per precision: TFLOP/s and % of the dense peak.")
    p.add_argument("--sizes", type=int, nargs="+", default=None, help="square sizes (default 256..8192)")
    p.add_argument("--precisions", nargs="+", default=["fp32", "tf32", "bf16", "fp16"],
                   choices=sorted(MATMUL_PRECISIONS))
    argv = [] if argv is None else check.sequence("argv", argv, lambda n, v: check.string(n, v, allow_empty=True),
                                                  min_len=0, max_len=1000)
    args = p.parse_args(argv)
    info = benchcli.probe(args)
    gpu = info.backend == "cuda"
    if args.sizes:
        sizes = args.sizes
    elif gpu:
        sizes = [1024, 4096, 8192] if args.quick else [256, 512, 1024, 2048, 4096, 8192]
    else:  # the whole code path on the CPU, tiny sizes (a test of the code, not a measurement of a GPU)
        sizes = [64, 128]
    # gate on capabilities: TF32 and BF16 tensor cores need sm80+ (a T4 has FP16 tensor cores only); a CPU
    # runs fp32, fp64, bf16 and fp16 in software and has no TF32 mode
    precisions = [pr for pr in args.precisions if pr in ("fp32", "fp64", "fp16") or
                  (pr == "tf32" and info.tf32) or (pr == "bf16" and (info.bf16_tensor or not gpu))]
    skipped = sorted(set(args.precisions) - set(precisions))

    def show(rec: dict[str, Any]) -> None:
        pct = f"{rec['pct_of_peak']:5.1f}% of peak" if "pct_of_peak" in rec else ""
        print(f"  {rec['precision']:5s} {rec['n']:6d}^3  {rec['tflops']:8.1f} TFLOP/s  {pct}", flush=True)

    if gpu:
        timing_args = {"warmup_s": 0.5 if args.quick else 1.0, "max_time_s": 2.0 if args.quick else 5.0}
    else:
        timing_args = {"warmup_s": 0.01, "min_time_s": 0.01, "max_time_s": 0.2}
    records = matmul_sweep(sizes, precisions, device=None if gpu else "cpu", progress=show, info=info, **timing_args)
    notes = [f"skipped (not supported on this device): {', '.join(skipped)}"] if skipped else []
    if not gpu:
        notes.append("CPU code path: tiny sizes on this CPU, not a measurement of a GPU")
    result = results.make_result("matmul", info, {"sizes": sizes, "precisions": precisions, "quick": args.quick},
                                 records, notes)
    summary = [f"matmul sweep on {info.label()}: {len(records)} configurations"]
    target = bf16_peak_check(records)
    if target is not None:
        summary.append(f"bf16 at {target['n']}^3: {target['tflops']:.1f} TFLOP/s = {target['pct_of_peak']:.1f}% of "
                       f"the dense peak; target >= {target['target_pct']:.0f}%: {'met' if target['met'] else 'NOT met'}")
    return benchcli.finish_bench(result, args, "\n".join(summary))


#: The Architecture chapter's acceptance target: a large BF16 matmul reaches this % of the dense BF16 peak.
BF16_TARGET_PCT = 75.0


def bf16_peak_check(records: Sequence[dict[str, Any]], n: int = 8192,
                    target_pct: float = BF16_TARGET_PCT) -> dict[str, Any] | None:
    """The BF16 matmul at ``n``^3 against ``target_pct`` % of the dense BF16 peak (None when not measured or
    the GPU has no catalogue peak). Works on fresh sweep records and on :func:`matmul_records` rows.
    Chapter: *Architecture of the GA100*, "How close real matmuls come to the peak"."""
    n = check.positive_int("n", n, maximum=MAX_SIZE)
    target_pct = check.real("target_pct", target_pct, minimum=0.0, maximum=100.0)
    records = check.sequence("records", records, check.mapping, min_len=0, max_len=100_000)
    for r in records:
        if r.get("precision") == "bf16" and int(r.get("n", 0)) == n and r.get("pct_of_peak") is not None:
            pct = float(r["pct_of_peak"])
            return {"n": n, "tflops": float(r["tflops"]), "pct_of_peak": pct, "target_pct": target_pct,
                    "met": pct >= target_pct}
    return None
