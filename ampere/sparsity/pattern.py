"""The 2:4 pattern: N:M keep-masks, magnitude pruning, the check, and the masks of the accuracy controls.

Chapter: *2:4 structured sparsity* (book/sparsity.ipynb), "The rule" (and the random and unstructured masks of
"Accuracy").

The rule (NVIDIA Ampere and later, [nvidia2020ampere], [mishra2021asp])
    In every group of 4 consecutive weights along a row of the sparse operand (the reduction dimension K
    of ``A @ B``; the ``in_features`` axis of an ``nn.Linear`` weight), **at most** 2 are non-zero.
    Groups with 0 or 1 non-zero are allowed; the encoder simply keeps zeros in the spare slots.

Pure NumPy: no torch, no matplotlib (torch bf16 tensors are read as bit patterns by :mod:`.arrays`).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import check
from .arrays import _check_groups, _check_nm, _data, _magnitude, _nonzero


def mask_nm(w: Any, n: int = 2, m: int = 4) -> Any:
    """Boolean keep-mask of magnitude N:M pruning along the last axis (the ``n`` largest of every ``m``).

    Ties keep the lower index. NaN weights raise ``ValueError`` (a magnitude order needs numbers).
    Chapter: *2:4 structured sparsity*, "The rule".
    """
    n, m = _check_nm(n, m)
    d = _data(w, "w")
    _check_groups(d.array.shape, m, "w")
    mag = _magnitude(d)
    if mag.dtype.kind == "f" and np.isnan(mag).any():
        raise ValueError("w contains NaN; magnitude pruning needs finite or infinite numbers, not NaN")
    groups = mag.reshape(*mag.shape[:-1], mag.shape[-1] // m, m)
    order = np.argsort(-groups.astype(np.float64), axis=-1, kind="stable")[..., :n]
    keep = np.zeros(groups.shape, dtype=bool)
    np.put_along_axis(keep, order, True, axis=-1)
    return d.back(keep.reshape(mag.shape))


def prune_nm(w: Any, n: int = 2, m: int = 4) -> Any:
    """Keep the ``n`` largest magnitudes in every group of ``m`` along the last axis; zero the others.

    Returns a new array of the same kind (numpy or torch) and dtype. Rows whose width is not a multiple of
    ``m`` raise ``ValueError``. Chapter: *2:4 structured sparsity*.
    """
    d = _data(w, "w")
    keep = np.asarray(_data(mask_nm(w, n, m), "mask").array)
    out = np.where(keep, d.array, np.zeros((), dtype=d.array.dtype))
    return d.back(out.astype(d.array.dtype, copy=False))


def is_nm(w: Any, n: int = 2, m: int = 4) -> bool:
    """True when every group of ``m`` consecutive entries along the last axis has at most ``n`` non-zeros.

    -0.0 counts as zero. Rows whose width is not a multiple of ``m`` raise ``ValueError``.

    Chapter: *2:4 structured sparsity*, "The rule".
    """
    n, m = _check_nm(n, m)
    d = _data(w, "w")
    _check_groups(d.array.shape, m, "w")
    nz = _nonzero(d)
    counts = nz.reshape(*nz.shape[:-1], nz.shape[-1] // m, m).sum(axis=-1)
    return bool(np.all(counts <= n))


def mask_2to4(w: Any) -> Any:
    """Keep-mask of magnitude 2:4 pruning (see :func:`mask_nm`).

    Chapter: *2:4 structured sparsity*, "The rule".
    """
    return mask_nm(w, 2, 4)


def prune_2to4(w: Any) -> Any:
    """Magnitude 2:4 pruning: keep the two largest magnitudes of every 4 consecutive weights of a row.

    Rows must be a multiple of 4 wide, else ``ValueError``. The result always passes :func:`is_2to4`.
    Chapter: *2:4 structured sparsity*, "The rule".
    """
    return prune_nm(w, 2, 4)


def is_2to4(w: Any) -> bool:
    """True when every group of 4 consecutive entries of every row has at most 2 non-zeros.

    "At most", not "exactly": a group with one non-zero (or none) satisfies the hardware rule.

    Chapter: *2:4 structured sparsity*, "The rule".
    """
    return is_nm(w, 2, 4)


def prune_1to2(w: Any) -> Any:
    """Magnitude 1:2 pruning, the pattern TF32 sparse tensor cores need for FP32 data.

    Chapter: *2:4 structured sparsity*, "Exact round trips".
    """
    return prune_nm(w, 1, 2)


def is_1to2(w: Any) -> bool:
    """True when every pair of consecutive entries has at most one non-zero (the TF32 rule).

    Chapter: *2:4 structured sparsity*, "Exact round trips".
    """
    return is_nm(w, 1, 2)


def random_mask_2to4(shape: Sequence[int], seed: int = 0) -> np.ndarray:
    """A 2:4 keep-mask with the two kept positions of every group drawn at random (fixed ``seed``).

    The control of the ASP experiment: same sparsity and structure as magnitude pruning, no information.

    Chapter: *2:4 structured sparsity*, "Accuracy".
    """
    if isinstance(shape, (str, bytes)) or not isinstance(shape, Sequence):
        raise TypeError(f"shape must be a sequence of positive integers, got {shape!r}")
    shape = tuple(check.positive_int("shape", s) for s in shape)
    check.at_most("shape", float(np.prod([float(s) for s in shape])), 2**28, "elements of one mask (2 GiB of float64)")
    _check_groups(shape, 4, "shape")
    rng = np.random.default_rng(check.nonneg_int("seed", seed))
    groups = int(np.prod(shape)) // 4
    order = np.argsort(rng.random((groups, 4)), axis=-1)[:, :2]
    keep = np.zeros((groups, 4), dtype=bool)
    np.put_along_axis(keep, order, True, axis=-1)
    return keep.reshape(shape)


def unstructured_mask(w: Any, sparsity: float = 0.5) -> np.ndarray:
    """Keep-mask of unstructured magnitude pruning: zero the ``sparsity`` fraction of smallest magnitudes.

    Over the whole array (one threshold), ties broken by position. Returns a numpy boolean array.

    Chapter: *2:4 structured sparsity*, "Accuracy".
    """
    sparsity = check.fraction("sparsity", sparsity)
    if sparsity >= 1.0:
        raise ValueError(f"sparsity must be in [0, 1), got {sparsity:g} (a fraction of zeros; 1 keeps nothing)")
    d = _data(w, "w")
    mag = _magnitude(d).astype(np.float64).ravel()
    n_zero = int(round(sparsity * mag.size))
    keep = np.ones(mag.size, dtype=bool)
    keep[np.argsort(mag, kind="stable")[:n_zero]] = False
    return keep.reshape(d.array.shape)
