"""Input handling of every 2:4 function: numpy arrays, torch tensors, torch bf16 as bit patterns.

Chapter: *2:4 structured sparsity* (book/sparsity.ipynb), "The rule" and "Exact round trips".

The functions of this package take a numpy array or a torch tensor and hand results back in the caller's kind
(:class:`_Data`); dtypes outside :data:`ALLOWED_DTYPES` are refused with a ``TypeError`` naming them.

bf16
    numpy has no bfloat16. Pass a torch ``bfloat16`` tensor: every function here works on its bit
    patterns (``uint16``), exactly, and returns a torch ``bfloat16`` tensor again. Magnitudes are read by
    widening the bits to float32 (bf16 is the top half of an fp32), so nothing is rounded.

torch is imported only inside :func:`_data`, when the caller passed a torch tensor (torch is loaded then).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .. import check


@dataclass
class _Data:
    """A numpy view of the caller's array and how to hand results back in the caller's kind."""

    array: np.ndarray
    bf16_bits: bool  # array holds bfloat16 bit patterns as uint16
    back: Callable[[np.ndarray], Any]


def _is_torch_tensor(x: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


#: Element types the pattern, format and product functions handle (torch ``bfloat16`` as its bit patterns).
ALLOWED_DTYPES = ("float16", "bfloat16 (torch)", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
                  "bool (masks)")
_NUMPY_KINDS = "fiub"  # floats, signed and unsigned integers, booleans


def _refuse_dtype(name: str, dtype: Any) -> None:
    raise TypeError(f"{name} has dtype {dtype}, which 2:4 sparsity here does not handle; allowed: "
                    f"{', '.join(ALLOWED_DTYPES)}")


def _data(x: Any, name: str) -> _Data:
    if isinstance(x, np.ndarray):
        if x.dtype.kind not in _NUMPY_KINDS or x.dtype.itemsize > 8:
            _refuse_dtype(name, x.dtype)
        return _Data(x, False, lambda a: a)
    if _is_torch_tensor(x):
        import torch

        allowed = (torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int8, torch.int16,
                   torch.int32, torch.int64, torch.uint8, torch.bool)
        if x.dtype not in allowed:  # float8, complex, quantized ...: no numpy view, no 2:4 format here
            _refuse_dtype(name, str(x.dtype).replace("torch.", "torch "))
        t = x.detach().to("cpu").contiguous()
        device = x.device
        if t.dtype == torch.bfloat16:
            bits = t.view(torch.int16).numpy().view(np.uint16)

            def back_bf16(a: np.ndarray) -> Any:
                if a.dtype == np.uint16:
                    return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16).to(device)
                return torch.from_numpy(np.ascontiguousarray(a)).to(device)

            return _Data(bits, True, back_bf16)
        return _Data(t.numpy(), False, lambda a: torch.from_numpy(np.ascontiguousarray(a)).to(device))
    if isinstance(x, (list, tuple)):
        return _data(np.asarray(x), name)
    raise TypeError(f"{name} must be a numpy array or a torch tensor, got {type(x).__name__}")


def _nonzero(d: _Data) -> np.ndarray:
    if d.bf16_bits:
        return (d.array & np.uint16(0x7FFF)) != 0  # -0.0 (0x8000) is a zero
    return d.array != 0


def _magnitude(d: _Data) -> np.ndarray:
    a = d.array
    if d.bf16_bits:
        return np.abs((a.astype(np.uint32) << 16).view(np.float32))
    if a.dtype.kind in "iub":
        return np.abs(a.astype(np.float64))  # abs(int8(-128)) would overflow in int8
    return np.abs(a)


def _check_groups(shape: tuple[int, ...], m: int, name: str) -> None:
    if len(shape) < 1:
        raise ValueError(f"{name} must have at least one dimension, got a scalar")
    if shape[-1] % m:
        raise ValueError(f"{name} has rows {shape[-1]} wide; the {m}-wide groups need a width that is a multiple "
                         f"of {m} (pad the rows with zeros)")


def _check_nm(n: int, m: int) -> tuple[int, int]:
    m = check.bounded_int("m", m, 2, 64, why="group sizes of structured-sparsity formats")
    n = check.integer("n", n, minimum=1, maximum=m - 1)  # 0 < n < m: 2:4 is n=2, m=4
    return n, m
