"""The rounding of :mod:`.rounding` on the torch side: :func:`round_tensor` rounds a tensor on its own
device (the training experiment's autograd function uses it), and :func:`torch_agreement` checks that
:func:`~.rounding.round_to` equals torch's ``.to(bfloat16)`` / ``.to(float16)`` bit for bit.

torch is imported inside the functions. Chapter: *TF32 and the precision formats* (book/tf32.ipynb),
section "Rounding, bit for bit".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import check
from .formats import FORMATS
from .rounding import ROUNDING_MODES, _check_mode, round_to


def round_tensor(t: Any, fmt: str, mode: str = "nearest") -> Any:
    """:func:`round_to` for a torch tensor, computed with torch ops on the tensor's own device.

    BF16/FP16 ``nearest`` use torch's conversion (the unit tests show it equals :func:`round_to`); TF32 and
    ``truncate`` use the same integer arithmetic on an int32 view. ``fmt="fp32"`` returns ``t`` unchanged.
    Used inside the training experiment's autograd function. Chapter *TF32 and the precision formats*.
    """
    import torch

    if not isinstance(t, torch.Tensor):
        raise TypeError(f"t must be a torch tensor, got {type(t).__name__}")
    if t.dtype.is_complex or not (t.dtype.is_floating_point or t.dtype in (torch.int8, torch.int16, torch.int32,
                                                                          torch.int64, torch.uint8)):
        raise TypeError(f"t must hold real numbers, got a tensor of dtype {t.dtype}")
    check.one_of("fmt", fmt, ("fp32", "fp64", *ROUNDING_MODES))
    if fmt in ("fp32", "fp64"):
        check.one_of("mode", mode, ("nearest",))
        return t
    _check_mode(fmt, mode)
    t = t.to(torch.float32)
    if mode == "nearest" and fmt in ("bf16", "fp16"):
        return t.to(torch.bfloat16 if fmt == "bf16" else torch.float16).to(torch.float32)
    drop = 23 - FORMATS[fmt].mantissa_bits
    keep = -(1 << drop)  # 0xFFFF_E000 as a signed int32 for TF32
    bits = t.contiguous().view(torch.int32)
    if mode == "truncate":
        r = bits & keep
    elif mode == "nearest":  # tf32: ties away from zero
        r = (bits + (1 << (drop - 1))) & keep
    else:  # nearest_even
        r = (bits + ((1 << (drop - 1)) - 1) + ((bits >> drop) & 1)) & keep
    out = r.view(torch.float32)
    return torch.where(torch.isnan(t), t, out)


#: Hand-picked FP32 bit patterns every comparison with torch includes: signed zeros, infinities, a NaN,
#: the smallest subnormal, the largest finite value, FP16's rounding boundaries and subnormal edges.
_SPECIAL_BITS = (0x0000_0000, 0x8000_0000, 0x7F80_0000, 0xFF80_0000, 0x7FC0_0000, 0x0000_0001, 0x7F7F_FFFF,
                 0x477F_EFFF, 0x477F_F000, 0x3300_0000, 0x3300_0001)


def torch_agreement(count: int = 1_000_000, seed: int = 2026) -> dict[str, bool]:
    """Whether :func:`round_to` equals torch's ``.to(bfloat16)`` / ``.to(float16)`` bit for bit on ``count``
    random FP32 bit patterns (every exponent, NaNs, infinities, subnormals) plus the special values (NaN
    equals NaN: payloads are not part of the result). Chapter *TF32 and the precision formats*.
    """
    import torch

    count = check.bounded_int("count", count, 1, 50_000_000, why="random bit patterns held in memory at once")
    seed = check.nonneg_int("seed", seed, maximum=2**63 - 1)
    rng = np.random.default_rng(seed)
    bits = np.concatenate([rng.integers(0, 2**32, count, dtype=np.uint64).astype(np.uint32),
                           np.array(_SPECIAL_BITS, dtype=np.uint32)])
    x = bits.view(np.float32)
    out = {}
    for fmt, dtype in (("bf16", torch.bfloat16), ("fp16", torch.float16)):
        ours = round_to(x, fmt)
        theirs = torch.from_numpy(x.copy()).to(dtype).float().numpy()
        nan = np.isnan(theirs)
        out[fmt] = bool(np.array_equal(np.isnan(ours), nan)) and bool(
            np.array_equal(ours.view(np.uint32)[~nan], theirs.view(np.uint32)[~nan]))
    return out
