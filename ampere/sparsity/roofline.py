"""Why the hardware likes 2:4: dense and sparse peaks, and a roofline time model of one Linear layer.

Chapter: *2:4 structured sparsity* (book/sparsity.ipynb), "Why the hardware likes it".

:func:`peak_rows` pivots the package's peak table; :class:`LinearShape` is one ``nn.Linear`` call;
:func:`matmul_time_model` gives its roofline time dense, 2:4 and unstructured (CSR or bitmap);
:func:`speedup_model` is the bound every measured speedup of the chapter is shown beside.

Pure Python/NumPy: no torch, no matplotlib.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from .. import check, gemm, specs
from .compressed import hardware_storage_ratio


_BYTES = {"fp16": 2, "bf16": 2, "int8": 1, "tf32": 4}

#: How a CSR kernel does its arithmetic on the CUDA cores (it cannot use the tensor cores):
#: ``"native"`` in the data's own precision at the non-tensor rate of ``ampere.specs`` (FP16 with paired half2
#: FMAs: ``fp16_simt``, 78 TFLOP/s on an A100; BF16: ``bf16_simt``; TF32 data are FP32 on the CUDA cores), or
#: ``"fp32"``: products accumulated in FP32 (the FP32 rate, 19.5 TFLOP/s on an A100).
CSR_MATH: tuple[str, ...] = ("native", "fp32")
_CSR_NATIVE = {"fp16": "fp16_simt", "bf16": "bf16_simt", "tf32": "fp32"}


def csr_precision(precision: str, csr_math: str = "native") -> str:
    """The ``ampere.specs`` precision whose CUDA-core rate a CSR kernel runs at, for data in ``precision``.

    ``csr_math="native"``: ``fp16 -> fp16_simt``, ``bf16 -> bf16_simt``, ``tf32 -> fp32`` (INT8 has no
    non-tensor rate in the catalogue: use ``"fp32"``); ``csr_math="fp32"``: ``fp32``.
    Chapter: *2:4 structured sparsity*, "Why the hardware likes it".
    """
    check.one_of("precision", precision, _BYTES)
    check.one_of("csr_math", csr_math, CSR_MATH)
    if csr_math == "fp32":
        return "fp32"
    if precision not in _CSR_NATIVE:
        raise ValueError(f"precision={precision!r} has no non-tensor (CUDA-core) rate in ampere.specs; "
                         "pass csr_math='fp32' (the kernel computes in FP32)")
    return _CSR_NATIVE[precision]


def _csr_peak(spec: specs.GPUSpec, precision: str, csr_math: str) -> float:
    math_precision = csr_precision(precision, csr_math)
    if not spec.supports(math_precision):
        raise ValueError(f"{spec.name} has no catalogued {math_precision} rate for a CSR kernel in {precision}; "
                         "pass csr_math='fp32' (the FP32 CUDA-core rate)")
    return spec.peak_flops(math_precision)


def peak_rows(gpus: Iterable[str] = ("A100-SXM4-80GB", "H100-SXM5-80GB", "RTX-A6000"),
              precisions: Sequence[str] = ("tf32", "bf16", "fp16", "int8")) -> list[dict[str, Any]]:
    """Dense and 2:4-sparse tensor peaks side by side (TFLOP/s, TOP/s for int8), with the printed sparse figure.

    A pivot of the package's one peak table, :func:`ampere.gemm.peak_rows` (dense and sparse rows of the same
    GPU and precision become one row). Chapter: *2:4 structured sparsity*, "Why the hardware likes it".
    """
    gpus = check.gpus("gpus", gpus)
    precisions = check.names("precisions", precisions, sorted({p for g in gpus for p in specs.get(g).precisions()}))
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for r in gemm.peak_rows(gpus, precisions):
        row = rows.setdefault((r.gpu, r.precision), {"gpu": r.gpu, "precision": r.precision, "dense": None,
                                                      "sparse": None, "ratio": None, "datasheet sparse": None,
                                                      "agrees": None})
        if r.sparse:
            row.update({"sparse": r.derived_tflops, "datasheet sparse": r.datasheet, "agrees": r.agrees})
        else:
            row["dense"] = r.derived_tflops
    for row in rows.values():
        if row["sparse"] is not None and row["dense"]:
            row["ratio"] = row["sparse"] / row["dense"]
    return list(rows.values())


@dataclass(frozen=True)
class LinearShape:
    """One ``nn.Linear`` call ``Y = X W^T``: X is (tokens, in_features), W is (out_features, in_features).

    Chapter: *2:4 structured sparsity*, "Why the hardware likes it".
    """

    tokens: int  # rows of X: batch x sequence length
    in_features: int  # K, the reduction dimension (the 2:4 groups run along it)
    out_features: int  # M
    label: str = ""  # where the shape comes from

    def __post_init__(self) -> None:
        for f, hi in (("tokens", 10**8), ("in_features", 10**6), ("out_features", 10**6)):
            object.__setattr__(self, f, check.bounded_int(f, getattr(self, f), 1, hi,
                                                          why="a layer one GPU can hold"))
        if not isinstance(self.label, str):
            raise TypeError(f"label must be a string, got {self.label!r}")
        if self.in_features % 4:
            raise ValueError(f"in_features={self.in_features} must be a multiple of 4 for 2:4 sparsity")

    @property
    def flops(self) -> float:
        """2 x tokens x in x out: the dense FLOP count (a sparse product is quoted the same way)."""
        return 2.0 * self.tokens * self.in_features * self.out_features

    def name(self) -> str:
        return f"{self.tokens}x{self.in_features}->{self.out_features}" + (f" ({self.label})" if self.label else "")


def matmul_time_model(gpu: str | specs.GPUSpec, shape: LinearShape, precision: str = "fp16",
                      kind: str = "dense", sparsity: float = 0.5, efficiency: float = 1.0,
                      index_bits: int = 16, strategy: str | None = None, csr_math: str = "native") -> dict[str, Any]:
    """Roofline time of one Linear layer: ``max(FLOPs / peak, bytes / HBM bandwidth)`` (no overlap loss).

    ``kind``:
      ``"dense"``        tensor-core peak, all of W moved;
      ``"2:4"``          the sparse peak (2x), W moved compressed (values + metadata, ``hardware_storage_ratio``);
      ``"unstructured"`` the better of two ways to run W with a ``sparsity`` fraction of zeros anywhere:
                         (a) CSR on the CUDA cores, FLOPs saved but no tensor-core MMA (the CUDA-core peak of
                         :func:`csr_precision` x ``efficiency``), W moved as values + ``index_bits`` column
                         indices + row pointers;
                         (b) load sparse, compute dense: W moved as values + a 1-bit-per-entry bitmap, then
                         decompressed on chip and multiplied densely on the tensor cores.
    ``strategy`` ("csr" or "bitmap") forces one of the two unstructured strategies. Activations X and
    outputs Y move once in ``precision``. An upper bound of what a kernel can reach.
    Chapter: *2:4 structured sparsity*, "Why the hardware likes it".
    """
    spec = specs.get(gpu)
    check.one_of("precision", precision, _BYTES)
    check.one_of("kind", kind, ("dense", "2:4", "unstructured"))
    if not isinstance(shape, LinearShape):
        raise TypeError(f"shape must be a LinearShape, got {type(shape).__name__}")
    sparsity = check.fraction("sparsity", sparsity)
    if sparsity >= 1:
        raise ValueError(f"sparsity must be in [0, 1), got {sparsity:g}")
    efficiency = check.fraction("efficiency", efficiency, allow_zero=False)
    index_bits = check.positive_int("index_bits", index_bits, maximum=64)
    if strategy is not None:
        check.one_of("strategy", strategy, ("csr", "bitmap"))
    check.one_of("csr_math", csr_math, CSR_MATH)
    b = _BYTES[precision]
    n, k, m = shape.tokens, shape.in_features, shape.out_features
    act_bytes = (n * k + n * m) * b
    w_bytes = k * m * b
    bw = spec.hbm_bytes_per_s
    peak = spec.peak_flops(precision)
    out: dict[str, Any] = {"gpu": spec.name, "precision": precision, "kind": kind, "flops": shape.flops}
    if kind == "dense":
        t_c, t_m, strategy, moved = shape.flops / peak, (act_bytes + w_bytes) / bw, "tensor cores", act_bytes + w_bytes
    elif kind == "2:4":
        if not spec.supports(precision, sparse=True):
            raise ValueError(f"{spec.name} has no 2:4 sparse tensor cores for precision={precision!r}")
        moved = act_bytes + w_bytes * float(hardware_storage_ratio(precision))
        t_c, t_m, strategy = shape.flops / spec.peak_flops(precision, sparse=True), moved / bw, "sparse tensor cores"
    else:
        nnz = (1 - sparsity) * k * m
        csr_bytes = act_bytes + nnz * (b + index_bits / 8) + (m + 1) * 4  # values, column indices, row pointers
        csr_peak = _csr_peak(spec, precision, csr_math)
        csr = (2 * n * nnz / (csr_peak * efficiency), csr_bytes / bw, "CSR on CUDA cores", csr_bytes)
        bitmap_bytes = act_bytes + nnz * b + k * m / 8  # values and one bit per entry
        bitmap = (shape.flops / peak, bitmap_bytes / bw, "bitmap, dense tensor-core math", bitmap_bytes)
        options = {"csr": [csr], "bitmap": [bitmap], None: [csr, bitmap]}[strategy]
        t_c, t_m, strategy, moved = min(options, key=lambda c: max(c[0], c[1]))
    out.update({"bytes": moved, "compute_s": t_c, "memory_s": t_m, "time_s": max(t_c, t_m),
                "bound": "compute" if t_c >= t_m else "memory", "strategy": strategy})
    return out


def speedup_model(gpu: str | specs.GPUSpec, shape: LinearShape, precision: str = "fp16", kind: str = "2:4",
                  **kwargs: Any) -> float:
    """Dense time over ``kind`` time from :func:`matmul_time_model` (an upper bound on the speedup).

    Chapter: *2:4 structured sparsity*, "Why the hardware likes it".
    """
    dense = matmul_time_model(gpu, shape, precision, "dense")["time_s"]
    return dense / matmul_time_model(gpu, shape, precision, kind, **kwargs)["time_s"]


def unstructured_break_even(gpu: str | specs.GPUSpec, precision: str = "fp16", efficiency: float = 1.0,
                            csr_math: str = "native") -> float:
    """Sparsity above which CSR on the CUDA cores beats dense tensor cores when compute-bound.

    ``1 - efficiency x CUDA-core peak / dense tensor peak``. The CUDA-core peak is the one the CSR kernel runs
    at (:func:`csr_precision`): for FP16 data in FP16 arithmetic, the FP16 non-tensor rate, so on an A100
    ``1 - 78/312 = 75 %`` even at 100 % efficiency; with FP32 accumulation ``1 - 19.5/312 = 93.75 %``.

    Chapter: *2:4 structured sparsity*, "Why the hardware likes it".
    """
    spec = specs.get(gpu)
    efficiency = check.fraction("efficiency", efficiency, allow_zero=False)
    check.one_of("precision", precision, _BYTES)
    return 1 - efficiency * _csr_peak(spec, precision, csr_math) / spec.peak_flops(precision)


def break_even_rows(gpus: Iterable[str] = ("A100-SXM4-80GB", "H100-SXM5-80GB"),
                    precisions: Sequence[str] = ("fp16", "bf16")) -> list[dict[str, str]]:
    """:func:`unstructured_break_even` for each GPU, tensor precision and CSR arithmetic, as table rows with the
    two peaks compared (TFLOP/s). A GPU without a catalogued non-tensor rate gets only the FP32 row.
    Chapter: *2:4 structured sparsity*, "Why the hardware likes it".
    """
    gpus = check.gpus("gpus", gpus)
    precisions = check.names("precisions", precisions, ("fp16", "bf16", "tf32"))
    rows = []
    for gpu in gpus:
        spec = specs.get(gpu)
        for precision in precisions:
            for csr_math in CSR_MATH:
                math_precision = csr_precision(precision, csr_math)
                if not spec.supports(math_precision) or (csr_math == "fp32" and math_precision
                                                         == csr_precision(precision)):
                    continue
                rows.append({"GPU": spec.name, "dense tensor": f"{precision} {spec.peak_flops(precision) / 1e12:.1f}",
                             "CSR on CUDA cores": f"{math_precision} {spec.peak_flops(math_precision) / 1e12:.1f}",
                             "break-even (% zeros)": f"{100 * unstructured_break_even(spec, precision, 1.0, csr_math):.2f}"})
    return rows


def speedup_curves(gpu: str | specs.GPUSpec = "A100-SXM4-80GB", in_features: int = 4096, out_features: int = 4096,
                   precision: str = "fp16", tokens: Sequence[int] = tuple(2**i for i in range(0, 15))
                   ) -> dict[str, list[float]]:
    """Model speedups over dense vs tokens for 2:4 and unstructured 50 % (both strategies).

    Chapter: *2:4 structured sparsity*, "Why the hardware likes it".
    """
    tokens = check.sequence("tokens", tokens, lambda n, t: check.bounded_int(n, t, 1, 10**8, why="tokens of one layer"),
                            max_len=64)
    out: dict[str, list[float]] = {"tokens": tokens, "2:4": [], "unstructured": []}
    for t in tokens:
        s = LinearShape(t, in_features, out_features)
        out["2:4"].append(speedup_model(gpu, s, precision, "2:4"))
        out["unstructured"].append(speedup_model(gpu, s, precision, "unstructured", sparsity=0.5))
    return out
