"""Which 2:4 backend works on this GPU: PyTorch's cuSPARSELt and CUTLASS semi-structured kernels, tried.

Chapter: *2:4 structured sparsity* (book/sparsity.ipynb), "Real 2:4 speedups".

:func:`probe_backend` tries each backend ``info.sparse_2to4_backends`` allows (in :data:`BACKEND_ORDER`) with
a tiny conversion and product checked against dense, and says why in a :class:`BackendCheck`. The helpers
(:func:`_semi_structured_backend`, :func:`_rel_err`, :func:`_torch_mask_2to4`) serve the sweep as well.

HEAVY: torch is imported only inside the functions that need it.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from dataclasses import dataclass
from typing import Any

from .. import check
from ..fields import check_fields


@dataclass(frozen=True)
class BackendCheck:
    """What :func:`probe_backend` found: a working backend (or none) and why.

    Chapter: *2:4 structured sparsity*, "Real 2:4 speedups".
    """
    FIELD_RULES = {"allow_empty": ("reason",)}  # the checks of fields.check_fields


    works: bool
    backend: str | None  # "cusparselt" or "cutlass" (PyTorch's two semi-structured backends), or None
    reason: str  # one line a reader can act on
    tried: tuple[tuple[str, bool, str], ...] = ()  # (backend, worked, detail) for every backend tried
    cusparselt_version: int | None = None

    def __post_init__(self) -> None:
        check_fields(self)

    @property
    def working(self) -> list[str]:
        return [b for b, ok, _ in self.tried if ok]

    def summary(self) -> str:
        lines = [f"2:4 backend: {self.backend or 'none'} ({self.reason})"]
        lines += [f"  {b:10s} {'works' if ok else 'fails'}: {why}" for b, ok, why in self.tried]
        return "\n".join(lines)


@contextlib.contextmanager
def _semi_structured_backend(backend: str):
    """Select PyTorch's semi-structured backend for the ``with`` block, then restore the class flag."""
    import torch

    cls = torch.sparse.SparseSemiStructuredTensor
    before = cls._FORCE_CUTLASS
    cls._FORCE_CUTLASS = backend == "cutlass"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # the "prototype stage" notice
            yield torch.sparse.to_sparse_semi_structured
    finally:
        cls._FORCE_CUTLASS = before


_TOLERANCE = {"float16": 5e-3, "bfloat16": 2e-2, "float32": 1e-4}


def _rel_err(y: Any, ref: Any) -> float:
    import torch

    ref32 = ref.float()
    return float(torch.linalg.vector_norm(y.float() - ref32) / torch.clamp(torch.linalg.vector_norm(ref32), min=1e-30))


def _torch_mask_2to4(w: Any) -> Any:
    """2:4 magnitude pruning of a torch tensor on its own device (same rule as :func:`prune_2to4`)."""
    import torch

    rows, cols = w.shape
    g = w.reshape(rows, cols // 4, 4)
    order = torch.argsort(-g.abs().float(), dim=-1, stable=True)[..., :2]
    keep = torch.zeros_like(g, dtype=torch.bool).scatter_(-1, order, True)
    return (g * keep).reshape(rows, cols)


def _try_backend(backend: str, dev: Any, dtype: Any) -> tuple[bool, str]:
    import torch

    if backend == "cusparselt":
        csl = getattr(torch.backends, "cusparselt", None)
        if csl is None or not csl.is_available():
            return False, "this torch build has no cuSPARSELt"
    try:
        gen = torch.Generator().manual_seed(0)
        w = _torch_mask_2to4(torch.randn(128, 128, generator=gen)).to(dev, dtype)
        x = torch.randn(64, 128, generator=gen).to(dev, dtype)
        with _semi_structured_backend(backend) as to_sparse:
            ws = to_sparse(w)
            y = torch.nn.functional.linear(x, ws)
        ref = torch.nn.functional.linear(x, w)
        torch.cuda.synchronize(dev)
        err = _rel_err(y, ref)
        if not math.isfinite(err) or err > _TOLERANCE.get(str(dtype).replace("torch.", ""), 2e-2):
            return False, f"runs but the product is wrong (relative error {err:.1e})"
        return True, f"128x128 {str(dtype).replace('torch.', '')} product matches dense (relative error {err:.1e})"
    except Exception as exc:  # RuntimeError (architecture mismatch, not supported), NotImplementedError, ...
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return False, f"{type(exc).__name__}: {msg[:160]}"


#: The order :func:`probe_backend` tries PyTorch's semi-structured backends in (PyTorch's default first).
BACKEND_ORDER = ("cusparselt", "cutlass")


def probe_backend(info: Any = None, dtype: str = "float16") -> BackendCheck:
    """Try a tiny 2:4 conversion and product with each backend this GPU can run; never raises.

    The candidates come from the device probe, ``info.sparse_2to4_backends``: PyTorch's CUTLASS kernels are
    built for sm8x only (A100, A30, A10, L4), cuSPARSELt runs on sm8x and sm90 (H100, H200 need it) when the
    torch build has it. They are tried in :data:`BACKEND_ORDER`; a backend "works" only when
    ``to_sparse_semi_structured`` converts, ``F.linear`` runs, and the result matches the dense product of
    the same masked weight, because a capability is not a guarantee: some torch/Hopper combinations fail
    [pytorch2024hopper]. Chapter: *2:4 structured sparsity*, "Real 2:4 speedups".
    """
    from .. import device as _device

    check.one_of("dtype", dtype, tuple(_TOLERANCE))
    try:
        import torch
    except ImportError:
        return BackendCheck(False, None, "torch is not installed")
    info = check.device_info("info", info) or _device.probe()
    if info.backend != "cuda":
        return BackendCheck(False, None, "no CUDA GPU here: the chapter shows recorded and published measurements")
    candidates = [b for b in BACKEND_ORDER if b in info.sparse_2to4_backends]
    if not candidates:
        cc = info.compute_capability or (0, 0)
        why = ("it has no sparse tensor cores (they need sm80 or newer)" if tuple(cc) < (8, 0) else
               "this torch has no 2:4 backend for it (CUTLASS kernels are built for sm8x; cuSPARSELt runs on sm8x "
               "and sm90 when torch is built with it)")
        return BackendCheck(False, None, f"{info.label()}: {why}")
    version = None
    with contextlib.suppress(Exception):
        version = int(torch.backends.cusparselt.version())
    dev = torch.device("cuda")
    dt = getattr(torch, dtype)
    tried = tuple((b, *_try_backend(b, dev, dt)) for b in candidates)
    for b, ok, why in tried:
        if ok:
            return BackendCheck(True, b, f"{b} works on {info.label()}", tried, version)
    return BackendCheck(False, None, f"no backend works on {info.label()} with torch {torch.__version__}", tried,
                        version)
