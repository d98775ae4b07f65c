"""The GPU measurements: matmul throughput per precision (:func:`measure_throughput`, gated on the
device's capabilities), the device's TF32 product against the CPU emulation
(:func:`compare_tf32_with_emulation`) and the probe of the rounding TF32 applies to its inputs
(:func:`tf32_conversion_probe`). Every one runs on a CPU with tiny sizes, which is how the unit tests
exercise them.

torch is imported inside the functions. Chapter: *TF32 and the precision formats* (book/tf32.ipynb),
section "How much faster is TF32?".
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .. import check
from ..device import tf32_enabled
from .matmul_error import emulated_matmul, relative_error
from .rounding import round_to
from .throughput import MATMUL_PRECISIONS, _peak_for


def _supported_precisions(info: Any, dev: Any, precisions: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    run, skipped = [], {}
    for p in precisions:
        check.one_of("precisions", p, MATMUL_PRECISIONS)
        if dev.type == "cuda":
            if p == "tf32" and not info.tf32:
                skipped[p] = "TF32 tensor cores need sm80+"
            elif p == "bf16" and not info.bf16_tensor:
                skipped[p] = "BF16 tensor cores need sm80+"
            elif p == "int8" and not info.int8_tensor:
                skipped[p] = "torch._int_mm needs INT8 tensor cores (sm80+)"
            else:
                run.append(p)
        elif p == "tf32":
            skipped[p] = "TF32 is a tensor-core mode: a CPU has none"
        else:
            run.append(p)
    return run, skipped


#: Longest predicted FP64 matmul call :func:`measure_throughput` times on a GPU (a T4 or an RTX card runs FP64 at
#: 1/32 to 1/64 of FP32: an 8192^3 DGEMM there takes seconds per call, times ten samples and a warm-up).
_FP64_MAX_CALL_S = 0.1


def _fp64_sizes(spec: Any, dev: Any, sizes: Sequence[int]) -> list[int]:
    """The sizes at which FP64 is worth timing on ``dev``: all on a CPU (tiny sizes there) and on GPUs whose FP64
    peak (tensor cores where present) finishes a call within :data:`_FP64_MAX_CALL_S`; up to 2048 on a GPU
    outside the catalogue."""
    if dev.type != "cuda":
        return list(sizes)
    peak = _peak_for(spec, "fp64")
    if peak is None:
        return [n for n in sizes if n <= 2048]
    return [n for n in sizes if 2.0 * n**3 / peak[1] <= _FP64_MAX_CALL_S]


#: torch dtype and TF32 switch of every precision :func:`measure_throughput` times.
_TORCH_DTYPES: dict[str, tuple[str, bool]] = {"fp64": ("float64", False), "fp32": ("float32", False),
                                              "tf32": ("float32", True), "bf16": ("bfloat16", False),
                                              "fp16": ("float16", False), "int8": ("int8", False)}


def _measure_square(precision: str, n: int, dev: Any, spec: Any, warmup_s: float, min_time_s: float,
                    max_time_s: float, gen: Any) -> dict[str, Any] | None:
    """One timed n x n x n matmul of ``precision`` on ``dev`` (None when it does not fit in memory).

    Random normal inputs from the CPU generator ``gen`` (int8: scaled to the int8 range and rounded, never
    zeros: power and clocks depend on the data), preallocated output, TF32 switched explicitly; int8 runs
    ``torch._int_mm`` into int32. Out of memory frees the inputs outside the handler and returns None.
    """
    import torch

    from .. import gemm, timing
    from .. import device as _device

    dtype_name, tf32 = _TORCH_DTYPES[precision]
    oom = (torch.cuda.OutOfMemoryError, MemoryError)  # the CPU path (and the tests) raise MemoryError
    out_of_memory = False
    try:
        if precision == "int8":
            a = (torch.randn(n, n, generator=gen) * 32).round().clamp(-127, 127).to(torch.int8).to(dev)
            b = (torch.randn(n, n, generator=gen) * 32).round().clamp(-127, 127).to(torch.int8).to(dev)
            c = torch.empty(n, n, dtype=torch.int32, device=dev)
            op = lambda: torch._int_mm(a, b, out=c)  # noqa: E731
        else:
            dtype = getattr(torch, dtype_name)
            a = torch.randn(n, n, generator=gen, dtype=torch.float32).to(dev, dtype)
            b = torch.randn(n, n, generator=gen, dtype=torch.float32).to(dev, dtype)
            c = torch.empty(n, n, device=dev, dtype=dtype)
            op = lambda: torch.matmul(a, b, out=c)  # noqa: E731
        with _device.tf32_enabled(tf32):
            m = timing.benchmark(op, label=f"matmul {precision} {n}^3", device=dev, warmup_s=warmup_s,
                                 min_time_s=min_time_s, max_time_s=max_time_s, params={"precision": precision, "n": n})
    except oom:
        out_of_memory = True
    if out_of_memory:  # freed outside the handler, whose traceback would keep the tensors alive
        a = b = c = op = None
        if dev.type == "cuda":
            torch.cuda.empty_cache()
        return None
    flops = gemm.matmul_flops(n, n, n)
    rec: dict[str, Any] = {"precision": precision, "n": n, "flops": flops, "tflops": m.rate(flops) / 1e12,
                           "tflops_best": m.rate(flops, "min") / 1e12, "measurement": m.to_dict()}
    peak = _peak_for(spec, precision)
    if peak:
        rec["peak_precision"] = peak[0]
        rec["peak_tflops"] = peak[1] / 1e12
        rec["pct_of_peak"] = 100 * rec["tflops"] / rec["peak_tflops"]
    return rec


#: Default sizes on a GPU and on a CPU (where the functions test the code path, not a GPU), and the largest size.
GPU_SIZES, CPU_SIZES, MAX_SIZE = (2048, 4096, 8192), (128, 256), 65536


def _device_and_info(device: Any, info: Any) -> tuple[Any, Any]:
    """The probed device info and the torch device to use (``device`` checked with :func:`ampere.check.device`)."""
    import torch

    from .. import device as _device

    info = info or _device.probe()
    dev = torch.device(check.device("device", device)) if device is not None else _device.torch_device(info)
    return dev, info


def measure_throughput(sizes: Sequence[int] | None = None, precisions: Sequence[str] = MATMUL_PRECISIONS,
                       device: Any = None, warmup_s: float = 1.0, min_time_s: float = 0.2, max_time_s: float = 5.0,
                       progress: Callable[[dict[str, Any]], None] | None = None, info: Any = None
                       ) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Time n x n x n matmuls per precision; returns (records, skipped precisions with the reason).

    Random normal inputs, preallocated outputs, TF32 switched explicitly, warm-up by time (``warmup_s`` for
    the first size of each precision, a tenth after), CUDA events; int8 uses ``torch._int_mm``. Each record
    holds TFLOP/s (TOP/s for int8) from the median and, on a catalogued GPU, % of the dense peak; FP64 is
    compared with the FP64 tensor-core peak where the GPU has one (cuBLAS DGEMM runs there). Out of memory
    at one size skips the larger sizes of that precision, with the reason. ``sizes`` defaults to 2048, 4096 and
    8192 on a GPU, 128 and 256 on a CPU. Chapter *TF32 and the precision formats*, section "How much faster is
    TF32?".
    """
    import torch

    precisions = check.names("precisions", precisions, MATMUL_PRECISIONS, max_len=len(MATMUL_PRECISIONS))
    for name, v in (("warmup_s", warmup_s), ("min_time_s", min_time_s), ("max_time_s", max_time_s)):
        check.nonneg(name, v, maximum=600.0)
    progress = check.optional(check.function, "progress", progress)
    dev, info = _device_and_info(device, info)
    sizes = list(GPU_SIZES if dev.type == "cuda" else CPU_SIZES) if sizes is None else check.sequence(
        "sizes", sizes, lambda name, n: check.positive_int(name, n, maximum=MAX_SIZE), max_len=64)
    run, skipped = _supported_precisions(info, dev, precisions)
    spec = info.spec if dev.type == "cuda" else None
    records: list[dict[str, Any]] = []
    gen = torch.Generator().manual_seed(0)
    for p in run:
        todo = _fp64_sizes(spec, dev, sizes) if p == "fp64" else sizes
        if len(todo) < len(sizes):
            which = f"sizes above {max(todo)}" if todo else "every size"
            skipped[p] = (f"{which} skipped: at this GPU's FP64 rate one call would take longer than "
                          f"{_FP64_MAX_CALL_S} s")
        for i, n in enumerate(todo):
            rec = _measure_square(p, n, dev, spec, warmup_s if i == 0 else warmup_s / 10, min_time_s, max_time_s, gen)
            if rec is None:
                skipped[p] = f"out of memory at {n}^3 on {dev}: larger sizes skipped"
                break
            rec["kind"] = "throughput"
            records.append(rec)
            if progress:
                progress(rec)
    return records, skipped


def _distance(c: np.ndarray, emulated: np.ndarray, ref: np.ndarray) -> float:
    """||C - C_emulated||_F / ||C_ref||_F."""
    return float(np.linalg.norm(c.astype(np.float64) - emulated.astype(np.float64)) / np.linalg.norm(ref))


def compare_tf32_with_emulation(device: Any = None, ks: Sequence[int] | None = None, m: int | None = None,
                                n: int | None = None, seed: int = 0) -> list[dict[str, Any]]:
    """The device's TF32 matmul against the CPU emulation on the same random normal inputs, per K.

    For each K: relative errors (vs an FP64 reference computed on the CPU) of the device's TF32 and strict
    FP32 matmuls and of the emulations with TF32 ``nearest`` and ``truncate`` rounding, and the distance
    between the device result and each emulation. If the device rounds its inputs the way the emulation
    does, the device/emulation distance is at the FP32 accumulation level, far below the TF32 error
    itself. ``tf32_active`` says whether TF32 tensor cores really ran (False on a CPU or a pre-sm80 GPU,
    where the "TF32" product is strict FP32). Defaults: K of 256, 1024 and 4096 with 512 x 512 outputs on a GPU,
    K of 64 and 256 with 64 x 64 outputs on a CPU. Chapter *TF32 and the precision formats*, section "How much
    faster is TF32?".
    """
    import torch

    dev, info = _device_and_info(device, None)
    gpu = dev.type == "cuda"
    m = (512 if gpu else 64) if m is None else check.positive_int("m", m, maximum=4096)
    n = (512 if gpu else 64) if n is None else check.positive_int("n", n, maximum=4096)
    ks = ([256, 1024, 4096] if gpu else [64, 256]) if ks is None else check.sequence(
        "ks", ks, lambda name, k: check.positive_int(name, k, maximum=65536), max_len=16)
    seed = check.nonneg_int("seed", seed, maximum=2**63 - 1)
    if max(ks) * max(m, n) > 2**26:
        raise ValueError(f"ks up to {max(ks)} with m={m}, n={n}: {max(ks) * max(m, n):,} elements per input, more "
                         f"than the {2**26:,} (256 MiB of FP32) the comparison allows")
    active = dev.type == "cuda" and info.tf32
    gen = torch.Generator().manual_seed(seed)
    out = []
    for k in ks:
        a = torch.randn(m, int(k), generator=gen, dtype=torch.float32)
        b = torch.randn(int(k), n, generator=gen, dtype=torch.float32)
        ref = (a.double() @ b.double()).numpy()
        with tf32_enabled(True):
            c_tf32 = (a.to(dev) @ b.to(dev)).cpu().numpy()
        with tf32_enabled(False):
            c_fp32 = (a.to(dev) @ b.to(dev)).cpu().numpy()
        an, bn = a.numpy(), b.numpy()
        e_near = emulated_matmul(an, bn, "tf32", "nearest")
        e_trunc = emulated_matmul(an, bn, "tf32", "truncate")
        rec = {"kind": "tf32_error", "params": {"m": m, "n": n, "k": int(k), "seed": seed, "device": str(dev)},
               "tf32_active": bool(active),
               "derived": {"device_tf32": relative_error(c_tf32, ref), "device_fp32": relative_error(c_fp32, ref),
                           "emulated_nearest": relative_error(e_near, ref),
                           "emulated_truncate": relative_error(e_trunc, ref),
                           "distance_to_nearest": _distance(c_tf32, e_near, ref),
                           "distance_to_truncate": _distance(c_tf32, e_trunc, ref)}}
        d = rec["derived"]
        d["ratio_to_nearest"] = d["device_tf32"] / d["emulated_nearest"]
        out.append(rec)
    return out


def tf32_conversion_probe(device: Any = None, size: int = 512, seed: int = 0) -> dict[str, Any]:
    """Which rounding does the device apply when TF32 converts FP32 inputs? A = crafted values, B = identity.

    Every product a_ik x delta_kj is exact and every sum adds zeros, so C = A @ I returns the converted A
    itself. A quarter of the values sit exactly half-way between two TF32 numbers (the dropped 13 bits are
    0x1000), where the rules differ. Returns the fraction of entries of C that match each hypothesis:
    "unchanged" (no conversion: strict FP32), "nearest" (ties away from zero), "nearest_even",
    "truncate". Chapter *TF32 and the precision formats*, section "How much faster is TF32?".
    """
    import torch

    size = check.bounded_int("size", size, 16, 8192, why="a size x size matrix and an identity of that size")
    seed = check.nonneg_int("seed", seed)
    dev, info = _device_and_info(device, None)
    rng = np.random.default_rng(seed)
    count = size * size
    exps = rng.integers(127 - 20, 127 + 20, count, dtype=np.uint32)  # moderate magnitudes: no overflow
    mant = rng.integers(0, 1 << 23, count, dtype=np.uint32)
    ties = rng.random(count) < 0.25
    mant = np.where(ties, (mant & np.uint32(~0x1FFF & 0x7FFFFF)) | np.uint32(0x1000), mant)
    signs = np.where(rng.random(count) < 0.5, np.uint32(0x8000_0000), np.uint32(0))
    a_np = (signs | (exps << np.uint32(23)) | mant).view(np.float32).reshape(size, size)
    a = torch.from_numpy(a_np.copy()).to(dev)
    eye = torch.eye(size, dtype=torch.float32, device=dev)
    with tf32_enabled(True):
        c = (a @ eye).cpu().numpy()
    got = c.view(np.uint32)
    hyp = {"unchanged": a_np, "nearest": round_to(a_np, "tf32", "nearest"),
           "nearest_even": round_to(a_np, "tf32", "nearest_even"), "truncate": round_to(a_np, "tf32", "truncate")}
    match = {name: float(np.mean(got == v.view(np.uint32))) for name, v in hyp.items()}
    tie_match = {name: float(np.mean((got == v.view(np.uint32))[ties.reshape(size, size)])) for name, v in hyp.items()}
    return {"kind": "tf32_conversion", "params": {"size": size, "seed": seed, "device": str(dev)},
            "tf32_active": bool(dev.type == "cuda" and info.tf32),
            "derived": {"match": match, "match_on_ties": tie_match}}
