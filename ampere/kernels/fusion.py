"""Fusion: the HBM bytes a chain of memory-bound operations moves when each is its own kernel, and when the
chain is fused into one kernel (or into the epilogue of the matmul before it), and the time the difference is
worth at a GPU's bandwidth.

Chapter: *Programming the A100's SM* (``book/kernels.ipynb``), "Fusion: bytes that never reach HBM". An
unfused kernel reads every input from HBM and writes its output back; a fused chain reads only the tensors
that come from outside it and writes only the tensors that leave it. CUTLASS's epilogue is where a GEMM
applies such element-wise operations to its accumulators before the one store (``cutlassefficientgemm``).
Pure: no torch, no triton, no matplotlib.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from .. import check, specs
from .rules import _fields, _int, _num

#: Bounds of a chain: kernels, tensors, and any tensor's bytes (1 PB).
MAX_KERNELS = 1000
MAX_TENSOR_BYTES = 1e15


@dataclass(frozen=True)
class FusionOp:
    """One kernel of a chain: its name, the tensors it reads and the tensors it writes (names)."""

    name: str
    reads: tuple[str, ...]
    writes: tuple[str, ...]

    def __post_init__(self) -> None:
        check.string("FusionOp.name", self.name, max_len=200)
        for field in ("reads", "writes"):
            names = check.sequence(f"FusionOp.{field}", getattr(self, field),
                                   lambda n, v: check.string(n, v, max_len=200), min_len=0, max_len=1000)
            object.__setattr__(self, field, tuple(names))
        if not self.writes:
            raise ValueError(f"FusionOp.writes: kernel {self.name!r} writes nothing")


@dataclass(frozen=True)
class FusionTraffic:
    """HBM bytes of a chain run kernel by kernel and fused. See :func:`fusion_traffic`."""

    unfused_bytes: float
    fused_bytes: float
    kernels: int

    def __post_init__(self) -> None:
        _fields(self, unfused_bytes=_num(), fused_bytes=_num(), kernels=_int(1, MAX_KERNELS))
        if self.fused_bytes > self.unfused_bytes:
            raise ValueError(f"FusionTraffic.fused_bytes={self.fused_bytes:g} exceeds unfused_bytes="
                             f"{self.unfused_bytes:g}: fusing never adds traffic")

    @property
    def saved_bytes(self) -> float:
        return self.unfused_bytes - self.fused_bytes

    def saved_s(self, gpu: str | specs.GPUSpec = "A100-SXM4-80GB", bytes_per_s: float | None = None) -> float:
        """Time the saved bytes take at the datasheet HBM bandwidth of ``gpu`` (or ``bytes_per_s``): a lower
        bound on the time saved, since real kernels reach a fraction of the datasheet and launches cost too."""
        bw = (specs.get(gpu).hbm_bytes_per_s if bytes_per_s is None
              else check.positive("bytes_per_s", bytes_per_s, maximum=1e18))
        return self.saved_bytes / bw


def fusion_traffic(ops: Sequence[FusionOp], sizes: Mapping[str, float], outputs: Sequence[str]) -> FusionTraffic:
    """HBM bytes of the chain ``ops`` (in order), each tensor of ``sizes`` bytes. Unfused: every kernel reads
    its inputs and writes its outputs. Fused: the chain reads each tensor no kernel of it writes (once) and
    writes the tensors in ``outputs`` (those needed after the chain). Chapter: *Programming the A100's SM*,
    "Fusion: bytes that never reach HBM".
    """
    def one_op(n: str, op: Any) -> FusionOp:
        if not isinstance(op, FusionOp):
            raise TypeError(f"{n} must be a FusionOp, got {op!r:.60} ({type(op).__name__})")
        return op

    ops = check.sequence("ops", ops, one_op, max_len=MAX_KERNELS)
    sizes = check.mapping("sizes", sizes)
    named = {t for op in ops for t in (*op.reads, *op.writes)}
    for t in sorted(named):
        if t not in sizes:
            raise ValueError(f"sizes has no entry for tensor {t!r}; it has {sorted(map(str, sizes))}")
        check.nonneg(f"sizes[{t!r}]", sizes[t], maximum=MAX_TENSOR_BYTES)
    outputs = check.sequence("outputs", outputs, lambda n, v: check.string(n, v, max_len=200), min_len=0,
                             max_len=MAX_KERNELS)
    written = {t for op in ops for t in op.writes}
    for t in outputs:
        if t not in written:
            raise ValueError(f"outputs: {t!r} is not written by the chain; it writes {sorted(written)}")
    unfused = sum(sizes[t] for op in ops for t in (*op.reads, *op.writes))
    external = {t for op in ops for t in op.reads if t not in written}
    fused = sum(sizes[t] for t in external) + sum(sizes[t] for t in set(outputs))
    return FusionTraffic(float(unfused), float(fused), len(ops))


def bias_gelu_epilogue(tokens: int, hidden: int, ffn: int | None = None, dtype_bytes: int = 2) -> FusionTraffic:
    """The MLP up-projection Y = GELU(X W + b) of ``tokens`` tokens: the GEMM, the bias add and the GELU as
    three kernels, or with bias and GELU fused into the GEMM's epilogue. X and W are read by both; only the
    intermediate Y (tokens x ffn, ffn = 4 x hidden by default) makes the extra trips.
    Chapter: *Programming the A100's SM*, "Fusion"."""
    t = check.positive_int("tokens", tokens, maximum=1 << 24)
    h = check.positive_int("hidden", hidden, maximum=1 << 20)
    f = 4 * h if ffn is None else check.positive_int("ffn", ffn, maximum=1 << 22)
    b = check.positive_int("dtype_bytes", dtype_bytes, maximum=8)
    ops = [FusionOp("GEMM X W", ("X", "W"), ("Y",)), FusionOp("add bias", ("Y", "bias"), ("Yb",)),
           FusionOp("GELU", ("Yb",), ("Z",))]
    sizes = {"X": t * h * b, "W": h * f * b, "bias": f * b, "Y": t * f * b, "Yb": t * f * b, "Z": t * f * b}
    return fusion_traffic(ops, sizes, ["Z"])


def residual_layernorm(tokens: int, hidden: int, dtype_bytes: int = 2) -> FusionTraffic:
    """h = x + residual, y = LayerNorm(h) with weight and bias: two kernels, or one that reads x and the
    residual once and writes both h (the next residual) and y. Chapter: *Programming the A100's SM*,
    "Fusion"."""
    t = check.positive_int("tokens", tokens, maximum=1 << 24)
    h = check.positive_int("hidden", hidden, maximum=1 << 20)
    b = check.positive_int("dtype_bytes", dtype_bytes, maximum=8)
    ops = [FusionOp("residual add", ("x", "r"), ("h",)), FusionOp("LayerNorm", ("h", "gamma", "beta"), ("y",))]
    sizes = {"x": t * h * b, "r": t * h * b, "h": t * h * b, "y": t * h * b, "gamma": h * b, "beta": h * b}
    return fusion_traffic(ops, sizes, ["h", "y"])
