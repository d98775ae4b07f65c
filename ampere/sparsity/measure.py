"""What is timed: dense against sparse products on this CPU, and the Linear-layer sweep on a GPU.

Chapter: *2:4 structured sparsity* (book/sparsity.ipynb), "Why the hardware likes it"
(:func:`measure_cpu_unstructured`) and "Real 2:4 speedups" (:func:`linear_sweep` over :data:`SWEEP_SHAPES`,
with unstructured 50 % CSR once).

HEAVY: torch and scipy are imported only inside the functions that measure.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from typing import Any, Callable, Sequence

import numpy as np

from .. import check
from .backends import _TOLERANCE, _rel_err, _semi_structured_backend, _torch_mask_2to4, probe_backend
from .compressed import compress_2to4, matmul_2to4, metadata_nibbles
from .pattern import prune_2to4, unstructured_mask
from .roofline import LinearShape


#: the largest dense product (FLOP) a sweep times on a CPU: a few seconds of NumPy or torch
CPU_MAX_FLOPS = 2e10
#: the shapes of the CPU code path (``--device cpu``): tiny, they exercise the code, they measure nothing
CPU_SHAPES: tuple[LinearShape, ...] = (LinearShape(64, 128, 128, "CPU code path"),
                                       LinearShape(32, 256, 64, "CPU code path"))
#: the default unstructured CSR comparison of a GPU sweep (a CPU sweep uses its first CPU shape)
CSR_SHAPE = LinearShape(4096, 4096, 4096, "CSR comparison")


def measure_cpu_unstructured(size: int = 512, tokens: int = 256, sparsity: float = 0.5, seed: int = 0,
                             max_time_s: float = 1.0) -> dict[str, Any]:
    """Time, on this CPU, a dense float32 product against CSR (scipy) and this module's 2:4 gather product.

    Shows the cost of irregular access on hardware without sparse units: at 50 % zeros neither sparse
    form beats a dense BLAS call. Returns median seconds and ratios; hardware-dependent by nature.

    Chapter: *2:4 structured sparsity*, "Why the hardware likes it".
    """
    import scipy.sparse

    from .. import timing

    size = check.bounded_int("size", size, 4, 4096, why="a CPU demonstration")
    tokens = check.bounded_int("tokens", tokens, 1, 8192, why="a CPU demonstration")
    if size % 4:
        raise ValueError(f"size={size} must be a multiple of 4 (the 2:4 groups run along the rows)")
    sparsity = check.bounded("sparsity", sparsity, 0.01, 0.99, why="a share of zeros, neither none nor all")
    max_time_s = check.bounded("max_time_s", max_time_s, 0.01, 60.0, why="seconds per product timed")
    rng = np.random.default_rng(check.bounded_int("seed", seed, 0, 2**32 - 1, why="a NumPy seed"))
    w = rng.standard_normal((size, size)).astype(np.float32)
    x = rng.standard_normal((size, tokens)).astype(np.float32)
    w_uns = w * unstructured_mask(w, sparsity)
    csr = scipy.sparse.csr_matrix(w_uns)
    values, meta = compress_2to4(prune_2to4(w))
    runs = {
        "dense BLAS": lambda: w_uns @ x,
        f"CSR {100 * sparsity:.0f} % (scipy)": lambda: csr @ x,
        "2:4 compressed (numpy gather)": lambda: matmul_2to4(values, meta, x),
    }
    out: dict[str, Any] = {"size": size, "tokens": tokens, "median_s": {}}
    for label, fn in runs.items():
        out["median_s"][label] = timing.benchmark(fn, label=label, max_time_s=max_time_s,
                                                    min_time_s=min(0.05, max_time_s)).median_s
    dense = out["median_s"]["dense BLAS"]
    out["speedup_vs_dense"] = {k: dense / v for k, v in out["median_s"].items()}
    return out


#: The sweep's Linear shapes (tokens, in, out): decode-like, BERT-base/large, the PyTorch tutorial's, an
#: 8B-class LLM MLP, and a large square layer last (the acceptance shape).
SWEEP_SHAPES: tuple[LinearShape, ...] = (
    LinearShape(32, 4096, 4096, "decode, 32 tokens"),
    LinearShape(4096, 768, 3072, "BERT-base FFN up"),
    LinearShape(4096, 4096, 1024, "BERT-large FFN down"),
    LinearShape(3072, 10240, 3072, "PyTorch tutorial"),
    LinearShape(8192, 4096, 14336, "8B LLM MLP up"),
    LinearShape(16384, 8192, 8192, "large square"),
)
QUICK_SHAPES: tuple[LinearShape, ...] = (SWEEP_SHAPES[3], SWEEP_SHAPES[5])


def _reference_linear(values: Any, col_idx: Any) -> Callable[[Any], Any]:
    """y = x @ W^T from the compressed form with a gather (no sparse tensor cores): the CPU stand-in."""
    def run(x: Any) -> Any:
        return (x[:, col_idx] * values).sum(dim=-1)  # (n, m, k/2) -> (n, m)
    return run


def _compressed_torch(w: Any) -> tuple[Any, Any]:
    """Values and absolute column indices of a 2:4 torch weight (via :func:`compress_2to4`)."""
    import torch

    values, meta = compress_2to4(w.detach().cpu())
    rows, cols = w.shape
    nib = metadata_nibbles(meta, cols // 4).astype(np.int64)
    base = 4 * np.arange(cols // 4)
    col_idx = np.stack([base + (nib & 3), base + (nib >> 2)], axis=-1).reshape(rows, cols // 2)
    return values.to(w.device), torch.from_numpy(col_idx).to(w.device)


def linear_sweep(shapes: Sequence[LinearShape] | None = None, dtypes: Sequence[str] = ("float16", "bfloat16"),
                 backends: Sequence[str] | None = None, device: Any = None, warmup_s: float = 0.5,
                 min_time_s: float = 0.1, max_time_s: float = 3.0, alg_search: bool = True,
                 unstructured_shape: LinearShape | None = CSR_SHAPE,
                 progress: Callable[[dict[str, Any]], None] | None = None,
                 info: Any = None) -> tuple[list[dict[str, Any]], list[str]]:
    """Measure ``F.linear(x, W)`` dense against 2:4 sparse for each shape, dtype and backend.

    For every configuration it times the dense product, the conversion ``to_sparse_semi_structured(W)``
    (separately: a one-off cost), and the sparse product; checks the sparse output against the dense
    product of the same masked weight; and, once, times unstructured 50 % CSR (``torch.sparse``). Random
    normal inputs, outputs not preallocated (F.linear allocates, as in a model), ``timing.benchmark``.
    ``backends=None`` uses what :func:`probe_backend` finds; ``"reference"`` (a gather product) runs on a
    CPU so the unit tests exercise the code path. Out of memory: frees, retries with half the tokens, says
    so. A backend that fails on one shape (an unsupported size, a kernel missing for this GPU) is skipped
    for that shape and the error kept in the notes. With ``alg_search`` the cuSPARSELt algorithm found by
    ``torch._cslt_sparse_mm_search`` is used only if it converts and runs. ``shapes=None`` sweeps
    :data:`SWEEP_SHAPES` on a GPU and :data:`CPU_SHAPES` on a CPU; a CPU refuses shapes above
    :data:`CPU_MAX_FLOPS` (and times the default CSR comparison on its first CPU shape). Returns (records, notes).
    Chapter: *2:4 structured sparsity*, "Real 2:4 speedups".
    """
    import torch

    from .. import device as _device
    from .. import timing

    def shape_item(name: str, v: Any) -> LinearShape:
        if not isinstance(v, LinearShape):
            raise TypeError(f"{name} must be a LinearShape, got {v!r:.60} ({type(v).__name__})")
        return v

    shapes = None if shapes is None else check.sequence("shapes", shapes, shape_item, max_len=64)
    dtypes = check.names("dtypes", dtypes, tuple(_TOLERANCE))
    backends = check.optional(check.names, "backends", backends, ("cusparselt", "cutlass", "reference"))
    for name, v in (("warmup_s", warmup_s), ("min_time_s", min_time_s), ("max_time_s", max_time_s)):
        check.bounded(name, v, 0.0, 600.0, why="seconds per timed configuration")
    alg_search = check.boolean("alg_search", alg_search)
    unstructured_shape = check.optional(shape_item, "unstructured_shape", unstructured_shape)
    progress = check.optional(check.function, "progress", progress)
    info = check.device_info("info", info) or _device.probe()
    dev = check.device("device", device) if device is not None else _device.torch_device(info)
    dev = torch.device(dev)
    if shapes is None:
        shapes = list(SWEEP_SHAPES if dev.type == "cuda" else CPU_SHAPES)
    if dev.type != "cuda" and unstructured_shape is CSR_SHAPE:
        unstructured_shape = CPU_SHAPES[0]
    if dev.type != "cuda":  # a CPU runs the same path, on shapes small enough to finish
        for name, group in (("shapes", shapes), ("unstructured_shape", [unstructured_shape] if unstructured_shape
                                                 else [])):
            for shape in group:
                check.at_most(name, shape.flops, CPU_MAX_FLOPS,
                              f"{shape.name()} is {shape.flops:.3g} FLOP: too large for a CPU run")
    notes: list[str] = []
    if backends is None:
        found = probe_backend(info)
        backends = found.working
        notes.append(found.summary())
    is_cuda = dev.type == "cuda"
    oom = torch.cuda.OutOfMemoryError if is_cuda else MemoryError
    records: list[dict[str, Any]] = []

    def emit(rec: dict[str, Any]) -> None:
        records.append(rec)
        if progress:
            progress(rec)

    def bench(fn: Callable[[], Any], what: str, first: bool, **params: Any):
        return timing.benchmark(fn, label=what, device=dev, warmup_s=warmup_s if first else warmup_s / 5,
                                min_time_s=min_time_s, max_time_s=max_time_s, params=params)

    def one(shape: LinearShape, dt: str, first: bool) -> None:
        dtype = getattr(torch, dt)
        gen = torch.Generator(device=dev).manual_seed(0) if is_cuda else torch.Generator().manual_seed(0)
        w = _torch_mask_2to4(torch.randn(shape.out_features, shape.in_features, generator=gen, device=dev,
                                         dtype=torch.float32)).to(dtype)
        x = torch.randn(shape.tokens, shape.in_features, generator=gen, device=dev, dtype=torch.float32).to(dtype)
        base = {"tokens": shape.tokens, "in_features": shape.in_features, "out_features": shape.out_features,
                "label": shape.label, "dtype": dt, "flops": shape.flops}
        with torch.inference_mode():
            ref = torch.nn.functional.linear(x, w)
            m = bench(lambda: torch.nn.functional.linear(x, w), f"dense {dt} {shape.name()}", first, **base)
            emit({**base, "kind": "dense", "backend": "cublas" if is_cuda else "cpu", "measurement": m.to_dict(),
                  "derived": {"tflops": m.rate(shape.flops) / 1e12}})
            dense_s = m.median_s

            def sparse_one(b: str) -> None:
                if b == "reference":
                    m_c = bench(lambda: _compressed_torch(w), f"compress ref {dt}", first, **base)
                    values, col_idx = _compressed_torch(w)
                    fn = _reference_linear(values, col_idx)
                    alg = None
                else:
                    with _semi_structured_backend(b) as to_sparse:
                        m_c = timing.benchmark(lambda: to_sparse(w), label=f"compress {b} {dt}", device=dev,
                                               warmup_s=0.05, min_samples=5, min_time_s=min(0.02, max_time_s),
                                               max_time_s=max_time_s)
                        ws = to_sparse(w)
                        alg = None
                        if b == "cusparselt" and alg_search and hasattr(torch, "_cslt_sparse_mm_search"):
                            # Optional: keep the default algorithm unless the one found converts and runs.
                            # (x.t() and transpose_result=True are what F.linear passes to cuSPARSELt.)
                            with contextlib.suppress(Exception):
                                found = int(torch._cslt_sparse_mm_search(ws.packed, x.t(), transpose_result=True))
                                candidate = to_sparse(w, alg_id=found)
                                torch.nn.functional.linear(x, candidate)
                                ws, alg = candidate, found

                    def fn(xx: Any, ws: Any = ws) -> Any:
                        return torch.nn.functional.linear(xx, ws)
                emit({**base, "kind": "compress", "backend": b, "measurement": m_c.to_dict(), "derived": {}})
                y = fn(x)
                err = _rel_err(y, ref)
                ok = bool(math.isfinite(err) and err <= _TOLERANCE[dt])
                m_s = bench(lambda: fn(x), f"2:4 {b} {dt} {shape.name()}", first, **base)
                emit({**base, "kind": "sparse", "backend": b, "alg_id": alg, "measurement": m_s.to_dict(),
                      "derived": {"tflops_dense_equivalent": m_s.rate(shape.flops) / 1e12,
                                  "speedup_vs_dense": dense_s / m_s.median_s,
                                  "rel_err": err if math.isfinite(err) else None, "numerics_ok": ok}})
                del y, fn

            for b in backends:
                before = len(records)
                try:
                    sparse_one(b)
                except oom:
                    raise
                except Exception as exc:  # one backend failing on one shape must not end the sweep
                    del records[before:]
                    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                    notes.append(f"{b} failed at {shape.name()} {dt}: {type(exc).__name__}: {msg[:160]}")
            del ref

    for dt in dtypes:
        for i, shape in enumerate(shapes):
            before = len(records)
            try:
                one(shape, dt, i == 0)
                failed = False
            except oom:
                failed = True
            if failed:  # retried outside the except block, whose traceback keeps the failed tensors alive
                del records[before:]
                if is_cuda:
                    torch.cuda.empty_cache()
                smaller = LinearShape(max(1, shape.tokens // 2), shape.in_features, shape.out_features,
                                      shape.label + ", tokens halved after OOM")
                notes.append(f"out of memory at {shape.name()} {dt}: retried with {smaller.tokens} tokens")
                one(smaller, dt, False)
            if is_cuda:
                torch.cuda.empty_cache()
    if unstructured_shape is not None:
        records_before = len(records)
        try:
            _unstructured(unstructured_shape, dtypes[0], dev, bench, emit)
        except Exception as exc:  # CSR kernels are not built for every dtype/device
            notes.append(f"unstructured CSR not measured: {type(exc).__name__}: {str(exc)[:160]}")
            del records[records_before:]
    return records, notes


def _unstructured(shape: LinearShape, dt: str, dev: Any, bench: Callable[..., Any],
                  emit: Callable[[dict[str, Any]], None]) -> None:
    """Dense vs unstructured 50 % CSR (``torch.sparse.mm``) for one shape; falls back to float32."""
    import torch

    gen = torch.Generator(device=dev).manual_seed(1) if dev.type == "cuda" else torch.Generator().manual_seed(1)
    w32 = torch.randn(shape.out_features, shape.in_features, generator=gen, device=dev)
    thresh = w32.abs().flatten().kthvalue(w32.numel() // 2).values
    w32 = torch.where(w32.abs() > thresh, w32, torch.zeros((), device=dev))
    x32 = torch.randn(shape.in_features, shape.tokens, generator=gen, device=dev)
    base = {"tokens": shape.tokens, "in_features": shape.in_features, "out_features": shape.out_features,
            "label": shape.label, "flops": shape.flops}
    for cand in (dt, "float32"):
        dtype = getattr(torch, cand)
        w, x = w32.to(dtype), x32.to(dtype)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # "Sparse CSR tensor support is in beta"
                csr = w.to_sparse_csr()
                torch.sparse.mm(csr, x)
        except Exception:
            continue
        with torch.inference_mode():
            md = bench(lambda: torch.mm(w, x), f"dense {cand} (CSR shape)", True, **base, dtype=cand)
            ms = bench(lambda: torch.sparse.mm(csr, x), f"CSR 50% {cand}", True, **base, dtype=cand)
        emit({**base, "dtype": cand, "kind": "dense", "backend": "cublas-for-csr", "measurement": md.to_dict(),
              "derived": {"tflops": md.rate(shape.flops) / 1e12}})
        emit({**base, "dtype": cand, "kind": "unstructured", "backend": "torch.sparse CSR",
              "measurement": ms.to_dict(), "derived": {"speedup_vs_dense": md.median_s / ms.median_s,
                                                         "zeros": 0.5}})
        return
    raise RuntimeError("torch.sparse.mm with a CSR weight runs for neither dtype here")
