"""The one capacity rule of the package: what CUDA exposes on a GPU (:func:`cuda_visible_bytes`), the runtime
reserve kept free (:data:`RESERVE_FRACTION`, :func:`runtime_reserve`), the bytes a workload may use
(:func:`usable_bytes`) and how many GPUs hold a given total (:func:`gpus_to_hold`).

Chapter: *HBM and the memory hierarchy* ("What fits"). Pure Python. Every "fits", "GPUs needed" and
"largest model" answer of :mod:`ampere.memory` budgets against :func:`usable_bytes`.
"""

from __future__ import annotations

import math

from .. import check, specs

#: Fraction of what CUDA exposes (:func:`cuda_visible_bytes`) the book keeps free for the runtime: the CUDA
#: context of the process, the libraries' workspaces (cuBLAS, cuDNN, NCCL buffers) and the caching
#: allocator's fragmentation. An assumption, not a published figure: 3.96 GiB of an A100 80GB's 79.26 GiB.
#: What is published is a floor: an allocation loop of tiny tensors on an H100 got PyTorch's allocator to
#: within about 0.65 GB of CUDA's total (belotti2025gpumemory), i.e. a bare context costs under 1 %; real
#: training adds library workspaces and fragmentation, hence 5 %. The driver's own reserve (hundreds of
#: MiB) is already outside CUDA's total and is not counted again. See :func:`usable_bytes`.
RESERVE_FRACTION = 0.05


def cuda_visible_bytes(gpu: str | specs.GPUSpec) -> int:
    """What CUDA exposes on ``gpu`` (``totalGlobalMem``): the published figure, or the catalogue's stated
    estimate where none is published (``specs.GPUSpec.cuda_visible_bytes``). Chapter: *HBM*, "What fits".
    """
    return specs.get(gpu).cuda_visible_bytes


def runtime_reserve(gpu: str | specs.GPUSpec, fraction: float | None = None) -> float:
    """Bytes kept free on ``gpu`` for the runtime: ``fraction`` (default :data:`RESERVE_FRACTION`, read when
    called) of what CUDA exposes (:func:`cuda_visible_bytes`), not of the physical capacity.

    Chapter: *HBM and the memory hierarchy*, "Training a model".
    """
    f = RESERVE_FRACTION if fraction is None else check.fraction("fraction", fraction)
    return cuda_visible_bytes(gpu) * f


def _usable(gpu: str | specs.GPUSpec, reserve_bytes: float | None) -> float:
    """The one capacity rule of the package: CUDA-visible bytes minus the reserve (may be <= 0)."""
    reserve = runtime_reserve(gpu) if reserve_bytes is None else check.nonneg("reserve_bytes", reserve_bytes)
    return cuda_visible_bytes(gpu) - reserve


def usable_bytes(gpu: str | specs.GPUSpec, reserve_bytes: float | None = None) -> float:
    """Bytes a workload may use on one ``gpu``: :func:`cuda_visible_bytes` minus ``reserve_bytes``.

    ``reserve_bytes`` defaults to :func:`runtime_reserve` (:data:`RESERVE_FRACTION` of the CUDA total); 0
    budgets against everything CUDA exposes. Every "fits", "GPUs needed" and "largest model" function of
    this module uses this rule. An A100 80GB: 85.10e9 bytes exposed, 80.85e9 usable. Raises ``ValueError``
    when the reserve leaves nothing. Chapter: *HBM and the memory hierarchy*, "What fits".
    """
    usable = _usable(gpu, reserve_bytes)
    if usable <= 0:
        spec = specs.get(gpu)
        raise ValueError(f"reserve_bytes={reserve_bytes!r} leaves no capacity on {spec.name} "
                         f"(CUDA exposes {spec.cuda_visible_bytes} bytes)")
    return usable


def gpus_to_hold(total_bytes: float, gpu: str | specs.GPUSpec, reserve_bytes: float | None = None) -> int:
    """Smallest number of ``gpu`` whose :func:`usable_bytes` (each) hold ``total_bytes`` split evenly.

    ``reserve_bytes`` defaults to the runtime reserve (:func:`runtime_reserve`).
    Chapter: *HBM and the memory hierarchy*, "What fits".
    """
    total = check.nonneg("total_bytes", total_bytes)
    usable = usable_bytes(gpu, reserve_bytes)
    return max(1, math.ceil(total / usable - 1e-12))
