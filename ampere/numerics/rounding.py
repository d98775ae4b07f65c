"""Rounding FP32 to TF32, BF16 and FP16 bit for bit, with integer arithmetic in NumPy: :func:`round_to` and
the modes it accepts (:data:`ROUNDING_MODES`). ``nearest`` equals PyTorch's own ``.to(torch.bfloat16)`` /
``.to(torch.float16)`` bit for bit; TF32 offers ``nearest`` (ties away from zero, what cuBLAS was observed
to do on Ampere), ``nearest_even`` (IEEE; PTX has it from sm90 on) and ``truncate`` (what the tensor core
does with unconverted bits). The same rounding on a torch tensor is in :mod:`.torch_rounding`.

Pure NumPy. Chapter: *TF32 and the precision formats* (book/tf32.ipynb), section "Rounding, bit for bit".
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import check
from .formats import FORMATS


#: Modes :func:`round_to` accepts per format. ``nearest`` is IEEE round-to-nearest-even for BF16 and FP16
#: and round-half-away-from-zero for TF32 (PTX ``cvt.rna.tf32.f32``, what cuBLAS was observed to do on Ampere);
#: ``nearest_even`` is IEEE rounding for TF32 (PTX ``cvt.rn.tf32.f32``, sm90+); ``truncate`` zeroes the
#: dropped bits (the tensor core reading unconverted FP32 words).
ROUNDING_MODES: dict[str, tuple[str, ...]] = {
    "tf32": ("nearest", "nearest_even", "truncate"),
    "bf16": ("nearest", "truncate"),
    "fp16": ("nearest",),
}

_SIGN = np.uint32(0x8000_0000)
_ABS = np.uint32(0x7FFF_FFFF)
_INF = np.uint32(0x7F80_0000)
_QUIET = np.uint32(0x0040_0000)


def _check_mode(fmt: str, mode: str) -> None:
    check.one_of("fmt", fmt, ROUNDING_MODES)
    try:
        check.one_of("mode", mode, ROUNDING_MODES[fmt])
    except ValueError as exc:
        raise ValueError(f"{exc} (the rounding modes defined for fmt={fmt!r})") from None


def _float32_array(name: str, x: Any, dtype: Any = np.float32) -> np.ndarray:
    """``x`` (a number, a sequence of numbers, a numpy array or a torch tensor) as a new ``dtype`` array.

    Strings, None, booleans and arrays of text or objects are refused: ``np.array("1.5", np.float32)``
    would silently parse text and ``np.array(None, np.float32)`` silently make a NaN.
    """
    if x is None or isinstance(x, (str, bytes, bool)):
        raise TypeError(f"{name} must be numbers (a number, a sequence, a numpy array or a torch tensor), "
                        f"got {x!r} ({type(x).__name__})")
    if type(x).__module__.startswith("torch"):
        x = x.detach().to("cpu").double().numpy()
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError) as exc:  # ragged nested lists
        raise ValueError(f"{name} must be a rectangular array of numbers: {exc}") from None
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold integers or floats, got an array of dtype {arr.dtype}")
    return np.array(arr, dtype=dtype)


def _round_bits(bits: np.ndarray, fmt: str, mode: str) -> np.ndarray:
    """Round FP32 bit patterns (uint32) to ``fmt``; returns the FP32 bit patterns of the rounded values."""
    f = FORMATS[fmt]
    drop = 23 - f.mantissa_bits
    keep_mask = np.uint32((0xFFFF_FFFF << drop) & 0xFFFF_FFFF)
    half = np.uint32(1 << (drop - 1))
    sign = bits & _SIGN
    mag = bits & _ABS
    nan = mag > _INF
    # Normal range (and, for 8-bit exponents, FP32's own subnormals, whose encoding is linear): an integer
    # add then a mask. A carry out of the mantissa increments the exponent, and past the top exponent it
    # lands exactly on the infinity pattern, which is IEEE overflow.
    if mode == "truncate":
        r = mag & keep_mask
    elif mode == "nearest" and fmt == "tf32":  # ties away from zero: add half an ulp, drop the bits
        r = (mag + half) & keep_mask
    else:  # ties to even: add half an ulp minus one, plus the last kept bit
        lsb = (mag >> np.uint32(drop)) & np.uint32(1)
        r = (mag + (half - np.uint32(1)) + lsb) & keep_mask
    if f.exponent_bits < 8:
        # Below the target's smallest normal the quantum is fixed at 2^(emin - m): shift the significand
        # right by a per-element amount and round to nearest even on the bits shifted out.
        sub = mag < np.uint32((f.emin + 127) << 23)
        if np.any(sub):
            m = mag[sub]
            exp = m >> np.uint32(23)
            sig = (m & np.uint32(0x7F_FFFF)) | np.where(exp > 0, np.uint32(0x80_0000), np.uint32(0))
            exp_eff = np.maximum(exp, np.uint32(1)).astype(np.int64)
            shift = np.minimum((150 + f.emin - f.mantissa_bits) - exp_eff, 31).astype(np.uint32)
            n = sig >> shift
            rem = sig & ((np.uint32(1) << shift) - np.uint32(1))
            halfs = np.uint32(1) << (shift - np.uint32(1))
            up = (rem > halfs) | ((rem == halfs) & ((n & np.uint32(1)) == 1))
            n = n + up.astype(np.uint32)
            value = n.astype(np.float32) * np.float32(math.ldexp(1.0, f.emin - f.mantissa_bits))
            r[sub] = value.view(np.uint32)
        r = np.where(r >= np.uint32((f.emax + 1 + 127) << 23), _INF, r)
    out = sign | r
    # NaN stays NaN: quiet it and keep only the payload bits the format has, so the result is a valid value
    # of the format (torch's own NaN payloads differ between its scalar and vectorised paths)
    return np.where(nan, (bits & keep_mask) | _QUIET, out)


def round_to(x: Any, fmt: str, mode: str = "nearest") -> np.ndarray:
    """Round values to ``fmt`` ("tf32", "bf16" or "fp16"); returns a float32 array of the rounded values.

    The input is first converted to FP32 (what a GPU holds in memory). ``mode="nearest"`` is IEEE
    round-to-nearest-even for BF16 and FP16, identical bit for bit to ``tensor.to(torch.bfloat16)`` and
    ``tensor.to(torch.float16)`` (subnormals, overflow to inf and signed zeros included; NaN stays NaN).
    For TF32, ``nearest`` rounds half away from zero on the 13 dropped bits (PTX ``cvt.rna.tf32.f32``; what
    cuBLAS was observed to do on Ampere GPUs), ``nearest_even`` is IEEE rounding, and ``truncate`` zeroes the
    13 bits, as the tensor core does with FP32 words that were not converted. ``truncate`` also exists for BF16.
    Pure NumPy integer arithmetic (tens of millions of values per second). Chapter *TF32 and the precision formats*,
    section "Rounding, bit for bit".
    """
    _check_mode(fmt, mode)
    arr = _float32_array("x", x)  # a copy: the caller's array is never touched
    flat = arr.reshape(-1)
    out = _round_bits(flat.view(np.uint32), fmt, mode).view(np.float32)
    return out.reshape(arr.shape)
