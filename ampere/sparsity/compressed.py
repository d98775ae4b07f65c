"""The compressed 2:4 format: compress, decompress, multiply from the compressed form, storage, CUTLASS layout.

Chapter: *2:4 structured sparsity* (book/sparsity.ipynb), "The compressed format", "Exact round trips",
"Multiplying from the compressed form" and "What the GPU really reads".

The compressed format of this module (numpy, so a reader can look at every bit)
    ``values``   shape ``(rows, cols // 2)``, the input's dtype: the two kept entries of every group, in
                 column order (the entry with the lower column index first).
    ``metadata`` shape ``(rows, ceil(cols / 4 / nibbles_per_word))``, unsigned integers (``uint16`` by
                 default; ``uint8`` and ``uint32`` are accepted). Each group of 4 gets one 4-bit *nibble*
                 ``lo | hi << 2``: two 2-bit positions (0..3) of the kept entries, ``lo < hi``. Group ``g`` of
                 a row lives in word ``g // nibbles_per_word`` at bits ``4 * (g % nibbles_per_word)`` to
                 ``4 * (g % nibbles_per_word) + 3``: the first group of a row sits in the lowest bits
                 (little-endian nibble order). Nibbles past the end of the row are 0.
    A group with fewer than 2 non-zeros is completed with the free positions 2, then 3 (an empty group
    is stored as positions (2, 3), a lone non-zero at 0 as (0, 2)). This is exactly PyTorch's CUTLASS
    encoder [pytorchsemistructured], so our ``uint16`` metadata equals PyTorch's before PyTorch permutes it
    into the interleaved layout the CUTLASS kernel reads (:func:`cutlass_metadata_layout`). Nibbles with
    ``lo == hi`` (0b0000, 0b0101, 0b1010, 0b1111) are invalid, as in the PTX ISA [nvidiaptxmmasp].

    Storage: fp16/bf16 keep 2 x 16 bits + 4 bits of every 64 bits (9/16); int8 2 x 8 + 4 of 32 (10/16).
    FP32 data runs on the tensor cores as TF32 with a **1:2** pattern (one non-zero in every pair); the
    metadata then names two 16-bit halves of the kept 32-bit value, 4 bits per pair: 36/64 = 9/16 again.

Pure NumPy: no torch, no matplotlib (torch tensors are read through :mod:`.arrays`).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from .. import check
from .arrays import _check_groups, _data, _is_torch_tensor, _nonzero


_META_DTYPES = {np.dtype(np.uint8): 2, np.dtype(np.uint16): 4, np.dtype(np.uint32): 8}  # nibbles per word


def _pair_table() -> np.ndarray:
    """nibble (lo | hi << 2) for each 4-bit non-zero mask (bit i = position i); -1 for > 2 non-zeros."""
    table = np.full(16, -1, dtype=np.int16)
    for bits in range(16):
        pos = [i for i in range(4) if bits >> i & 1]
        if len(pos) > 2:
            continue
        for filler in (2, 3):  # complete a short group with the free positions 2, then 3
            if len(pos) < 2 and filler not in pos:
                pos.append(filler)
        lo, hi = sorted(pos)
        table[bits] = lo | hi << 2
    return table


_PAIR_TABLE = _pair_table()


def _meta_dtype(meta_dtype: Any) -> tuple[np.dtype, int]:
    try:
        dt = np.dtype(meta_dtype)
    except TypeError:
        dt = None
    if dt not in _META_DTYPES:
        raise ValueError(f"meta_dtype={meta_dtype!r} is not allowed; allowed: uint8, uint16, uint32")
    return dt, _META_DTYPES[dt]


def compress_2to4(w: Any, meta_dtype: Any = np.uint16) -> tuple[Any, np.ndarray]:
    """Compress a 2-D array that satisfies 2:4 into ``(values, metadata)`` (format: module docstring).

    ``values`` has shape ``(rows, cols // 2)`` and the input's kind and dtype (a torch bf16 tensor gives a
    torch bf16 tensor); ``metadata`` is a numpy array of ``meta_dtype`` (uint16 by default: 4 groups = 16
    dense columns per word). Input that breaks the rule raises ``ValueError`` naming the first bad group.
    Chapter: *2:4 structured sparsity*, "The compressed format".
    """
    d = _data(w, "w")
    a = d.array
    if a.ndim != 2:
        raise ValueError(f"w must be 2-D (rows, cols), got shape {a.shape}")
    _check_groups(a.shape, 4, "w")
    dt, per_word = _meta_dtype(meta_dtype)
    rows, cols = a.shape
    g = cols // 4
    nz = _nonzero(d).reshape(rows, g, 4)
    code = (nz * np.array([1, 2, 4, 8], dtype=np.int64)).sum(axis=-1)
    nibbles = _PAIR_TABLE[code]
    if (nibbles < 0).any():
        r, c = np.argwhere(nibbles < 0)[0]
        raise ValueError(f"w is not 2:4 sparse: row {r}, columns {4 * c}..{4 * c + 3} hold "
                         f"{int(nz[r, c].sum())} non-zeros (at most 2 allowed); prune it with prune_2to4 first")
    lo, hi = nibbles & 3, nibbles >> 2
    groups = a.reshape(rows, g, 4)
    values = np.stack([np.take_along_axis(groups, lo[..., None], -1)[..., 0],
                       np.take_along_axis(groups, hi[..., None], -1)[..., 0]], axis=-1).reshape(rows, cols // 2)
    words = -(-g // per_word)
    padded = np.zeros((rows, words * per_word), dtype=np.uint64)
    padded[:, :g] = nibbles
    shifts = (4 * np.arange(per_word, dtype=np.uint64))
    meta = (padded.reshape(rows, words, per_word) << shifts).sum(axis=-1, dtype=np.uint64).astype(dt)
    return d.back(np.ascontiguousarray(values)), meta


def metadata_nibbles(metadata: np.ndarray, groups: int) -> np.ndarray:
    """Unpack ``metadata`` into one 4-bit nibble per group: shape ``(rows, groups)``, uint8.

    Chapter: *2:4 structured sparsity*, "The compressed format".
    """
    groups = check.positive_int("groups", groups)
    if not isinstance(metadata, np.ndarray):
        raise TypeError(f"metadata must be a numpy array of uint8, uint16 or uint32, got {type(metadata).__name__}")
    meta = metadata
    dt, per_word = _meta_dtype(meta.dtype)
    if meta.ndim != 2:
        raise ValueError(f"metadata must be 2-D (rows, words), got shape {meta.shape}")
    words = -(-groups // per_word)
    if meta.shape[1] != words:
        raise ValueError(f"metadata has {meta.shape[1]} words per row; {groups} groups need {words} {dt.name} words")
    shifts = 4 * np.arange(per_word, dtype=np.uint64)
    nib = (meta.astype(np.uint64)[..., None] >> shifts) & np.uint64(0xF)
    return nib.reshape(meta.shape[0], words * per_word)[:, :groups].astype(np.uint8)


def _check_cols(cols: Any, values_width: int | None = None) -> int:
    """``cols`` (the dense width) as an int: a positive multiple of 4, twice the width of ``values``."""
    cols = check.positive_int("cols", cols)
    if cols % 4:
        raise ValueError(f"cols={cols} must be a multiple of 4 (the dense width, in groups of 4)")
    if values_width is not None and 2 * values_width != cols:
        raise ValueError(f"cols={cols} does not match the compressed values: they are {values_width} wide, so "
                         f"the dense array is {2 * values_width} wide (values keep 2 of every 4 columns)")
    return cols


def _positions(metadata: np.ndarray, cols: int) -> tuple[np.ndarray, np.ndarray]:
    cols = _check_cols(cols)
    nib = metadata_nibbles(metadata, int(cols) // 4)
    lo, hi = nib & 3, nib >> 2
    if (lo == hi).any():
        r, c = np.argwhere(lo == hi)[0]
        raise ValueError(f"metadata row {r}, group {c}: nibble 0b{int(nib[r, c]):04b} names the same position "
                         "twice (0b0000, 0b0101, 0b1010 and 0b1111 are invalid)")
    return lo, hi


def decompress_2to4(values: Any, metadata: np.ndarray, cols: int) -> Any:
    """Rebuild the dense ``(rows, cols)`` array from :func:`compress_2to4`'s output (exact, same dtype).

    Dropped positions come back as +0 of the dtype. Chapter: *2:4 structured sparsity*.
    """
    d = _data(values, "values")
    v = d.array
    if v.ndim != 2:
        raise ValueError(f"values must be 2-D (rows, cols/2), got shape {v.shape}")
    cols = _check_cols(cols, v.shape[1])
    rows = v.shape[0]
    if not isinstance(metadata, np.ndarray):
        raise TypeError(f"metadata must be a numpy array of uint8, uint16 or uint32, got {type(metadata).__name__}")
    if metadata.ndim != 2 or metadata.shape[0] != rows:
        raise ValueError(f"metadata shape {metadata.shape} does not match values with {rows} rows "
                         "(one metadata row per values row)")
    lo, hi = _positions(metadata, cols)
    g = cols // 4
    pairs = v.reshape(rows, g, 2)
    dense = np.zeros((rows, g, 4), dtype=v.dtype)
    np.put_along_axis(dense, lo[..., None].astype(np.int64), pairs[..., :1], axis=-1)
    np.put_along_axis(dense, hi[..., None].astype(np.int64), pairs[..., 1:], axis=-1)
    return d.back(dense.reshape(rows, cols))


def _float_array(x: Any, name: str) -> np.ndarray:
    """numpy array for arithmetic; torch bf16 widened to float32 exactly."""
    d = _data(x, name)
    if d.bf16_bits:
        return (d.array.astype(np.uint32) << 16).view(np.float32)
    return d.array


def _accumulator(dtype: np.dtype) -> np.dtype:
    """Accumulate like the tensor cores: 16-bit floats in FP32, int8 in INT32."""
    if dtype.kind == "f":
        return np.result_type(dtype, np.float32)
    if dtype.kind in "iu":
        return np.dtype(np.int32) if dtype.itemsize == 1 else np.dtype(np.int64)
    raise ValueError(f"dtype {dtype} is not a number type")


def matmul_2to4(values: Any, metadata: np.ndarray, b: Any) -> np.ndarray:
    """``A @ b`` computed from the compressed form of A (``values``, ``metadata``), never densifying A.

    ``b`` has shape ``(cols, n)`` (or ``(cols,)``); A's width ``cols`` is ``b.shape[0]``. Every kept value
    multiplies the row of ``b`` its metadata points to: half the multiply-adds of the dense product, and
    the same result as ``decompress(A) @ b``. Accumulates in FP32 for 16-bit inputs and in INT32 for int8
    (as the tensor cores do); returns that accumulator type. Chapter: *2:4 structured sparsity*.
    """
    v = _float_array(values, "values")
    bb = _float_array(b, "b")
    vector = bb.ndim == 1
    if vector:
        bb = bb[:, None]
    if v.ndim != 2 or bb.ndim != 2:
        raise ValueError(f"values must be 2-D and b 1-D or 2-D; got {v.shape} and {bb.shape}")
    cols = bb.shape[0]
    if v.shape[1] * 2 != cols:
        raise ValueError(f"values has {v.shape[1]} columns, so A is {2 * v.shape[1]} wide, but b has {cols} rows")
    if not isinstance(metadata, np.ndarray):
        raise TypeError(f"metadata must be a numpy array of uint8, uint16 or uint32, got {type(metadata).__name__}")
    lo, hi = _positions(metadata, cols)
    rows, n = v.shape[0], bb.shape[1]
    base = 4 * np.arange(cols // 4)
    col_idx = np.stack([base + lo, base + hi], axis=-1).reshape(rows, cols // 2)
    acc = _accumulator(np.result_type(v.dtype, bb.dtype))
    va, ba = v.astype(acc), bb.astype(acc)
    out = np.empty((rows, n), dtype=acc)
    step = max(1, (1 << 22) // max(1, (cols // 2) * n))  # bound the gathered block to ~4M elements
    for r0 in range(0, rows, step):
        gathered = ba[col_idx[r0:r0 + step]]  # (r, cols/2, n): the rows of b each kept value needs
        out[r0:r0 + step] = np.einsum("rk,rkn->rn", va[r0:r0 + step], gathered)
    return out[:, 0] if vector else out


def _nbytes(x: Any) -> int:
    if _is_torch_tensor(x):
        return int(x.numel() * x.element_size())
    return int(np.asarray(x).nbytes)


def storage_ratio(dense: Any, values: Any, metadata: Any) -> Fraction:
    """Bytes of (values + metadata) over bytes of the dense array, from the real arrays, as a fraction.

    Chapter: *2:4 structured sparsity*, "Exact round trips".
    """
    for name, x in (("dense", dense), ("values", values), ("metadata", metadata)):
        if not (_is_torch_tensor(x) or isinstance(x, np.ndarray)):
            raise TypeError(f"{name} must be a numpy array or a torch tensor, got {type(x).__name__}")
    if _nbytes(dense) == 0:
        raise ValueError("dense must not be empty: a ratio to zero bytes has no meaning")
    return Fraction(_nbytes(values) + _nbytes(metadata), _nbytes(dense))


#: Hardware sparse formats: precision -> (element bits, kept per group, group size, metadata bits per group).
#: TF32 keeps 1 of 2 32-bit values; its 4 metadata bits name the two 16-bit halves of the kept value.
HARDWARE_FORMATS: dict[str, tuple[int, int, int, int]] = {
    "fp16": (16, 2, 4, 4), "bf16": (16, 2, 4, 4), "int8": (8, 2, 4, 4), "tf32": (32, 1, 2, 4),
}


def hardware_storage_ratio(precision: str) -> Fraction:
    """Compressed / dense storage of a hardware sparse format (9/16 fp16, bf16 and tf32; 10/16 int8).

    Chapter: *2:4 structured sparsity*, "The compressed format".
    """
    check.one_of("precision", precision, HARDWARE_FORMATS)
    bits, keep, group, meta = HARDWARE_FORMATS[precision]
    return Fraction(keep * bits + meta, group * bits)


def metadata_overhead(precision: str) -> Fraction:
    """Metadata bytes per byte of kept values: 1/8 for fp16/bf16/tf32, 1/4 for int8.

    Chapter: *2:4 structured sparsity*, "The compressed format".
    """
    check.one_of("precision", precision, HARDWARE_FORMATS)
    bits, keep, _, meta = HARDWARE_FORMATS[precision]
    return Fraction(meta, keep * bits)


#: how an N:M format can name its kept positions: each kept weight's position (``positions``: N x
#: ceil(log2 M) bits per group, the hardware's 2:4 nibble), or the group's whole pattern as one index among
#: the C(M, N) patterns (``pattern``: ceil(log2 C(M, N)) bits per group)
NM_ENCODINGS = ("positions", "pattern")


def nm_storage_ratio(n: int, m: int, bits: int = 16, encoding: str = "positions") -> Fraction:
    """Compressed / dense storage of an N:M format whose kept values take ``bits`` bits each, with the
    metadata encoded as ``encoding`` (:data:`NM_ENCODINGS`): ``nm_storage_ratio(2, 4)`` is the hardware's
    9/16, ``nm_storage_ratio(4, 8)`` 19/32 with a 3-bit position per kept weight, 71/128 with one 7-bit index
    per group of eight (C(8, 4) = 70 patterns). Chapter: *2:4 structured sparsity*, exercise "More freedom,
    more metadata".
    """
    import math

    m = check.bounded_int("m", m, 2, 64, why="group sizes of structured-sparsity formats")
    n = check.bounded_int("n", n, 1, m - 1, why="kept weights per group, fewer than m")
    bits = check.bounded_int("bits", bits, 1, 64, why="bits per stored value")
    encoding = check.one_of("encoding", encoding, NM_ENCODINGS)
    if encoding == "positions":
        meta = n * math.ceil(math.log2(m))
    else:
        meta = math.ceil(math.log2(math.comb(m, n)))
    return Fraction(n * bits + meta, m * bits)


def cutlass_metadata_layout(metadata: np.ndarray) -> np.ndarray:
    """Permute row-major uint16 metadata into the interleaved layout PyTorch's CUTLASS kernel reads.

    A numpy port of ``_calculate_meta_reordering_scatter_offsets`` in PyTorch's
    ``torch/sparse/_semi_structured_conversions.py`` (itself from CUTLASS's ``reorder_meta``): rows are
    interleaved in blocks of 32 and 2x2 blocks swizzled, then stored column-major with an interleave of 2,
    so each thread of a warp finds its metadata in one load. Needs rows % 32 == 0 and an even word count.

    Chapter: *2:4 structured sparsity*, "What the GPU really reads".
    """
    meta = np.asarray(metadata)
    if meta.dtype != np.uint16 or meta.ndim != 2:
        raise ValueError(f"metadata must be 2-D uint16 (fp16/bf16 layout), got {meta.dtype} {meta.shape}")
    m, ncols = meta.shape
    if m % 32 or ncols % 2:
        raise ValueError(f"metadata shape {meta.shape}: rows must be a multiple of 32 and words per row even")
    dst_rows = np.repeat(np.arange(m)[:, None], ncols, axis=1)
    dst_cols = np.repeat(np.arange(ncols)[None, :], m, axis=0)
    dst_rows = dst_rows // 32 * 32 + (dst_rows % 8) * 4 + (dst_rows % 32) // 8
    topright = ((dst_rows % 2 == 0) & (dst_cols % 2 == 1)).astype(np.int64)
    bottomleft = ((dst_rows % 2 == 1) & (dst_cols % 2 == 0)).astype(np.int64)
    dst_rows = dst_rows + topright - bottomleft
    dst_cols = dst_cols - topright + bottomleft
    offsets = (dst_cols // 2) * m * 2 + dst_rows * 2 + dst_cols % 2
    out = np.empty(m * ncols, dtype=np.uint16)
    out[offsets.ravel()] = meta.ravel()
    return out.reshape(m, ncols)
