"""The worked examples and checks of the rule and the format, as table rows, and PyTorch's own encoder.

Chapter: *2:4 structured sparsity* (book/sparsity.ipynb), "The rule", "The compressed format", "Exact round
trips", "Multiplying from the compressed form" and "What the GPU really reads". The notebook calls these; the
logic stays testable here. :func:`torch_cutlass_reference` runs PyTorch's CUTLASS encoder on the CPU to
compare this package's format with the real one.

HEAVY: torch is imported only inside the functions that need it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import check
from .arrays import _is_torch_tensor
from .compressed import (_float_array, compress_2to4, cutlass_metadata_layout, decompress_2to4,
                         hardware_storage_ratio, matmul_2to4, metadata_nibbles, storage_ratio)
from .pattern import is_1to2, is_2to4, prune_1to2, prune_2to4


def torch_cutlass_reference(w: Any) -> tuple[Any, np.ndarray] | None:
    """PyTorch's own CUTLASS encoder run on the CPU: ``(values, metadata as uint16)``, or None if absent.

    Uses the private ``torch.sparse._semi_structured_conversions.sparse_semi_structured_from_dense_cutlass``
    (pure tensor code, so it runs without a GPU). Needs rows % 32 == 0 and cols % 64 == 0 (fp16/bf16) or
    cols % 32 == 0 (fp32, stored 1:2). Used to check this module's format against the real one.

    Chapter: *2:4 structured sparsity*, "What the GPU really reads".
    """
    if not (_is_torch_tensor(w) or isinstance(w, np.ndarray)) or len(w.shape) != 2:
        raise TypeError(f"w must be a 2-D numpy array or torch tensor, got {type(w).__name__}")
    rows, cols = w.shape
    if rows % 32 or cols % 32 or not is_2to4(w):
        raise ValueError(f"w must be 2:4 sparse with rows and columns multiples of 32 (CUTLASS tiles), "
                         f"got shape {tuple(w.shape)}")
    try:
        import torch
        from torch.sparse._semi_structured_conversions import sparse_semi_structured_from_dense_cutlass
    except ImportError:
        return None
    t = w if _is_torch_tensor(w) else torch.from_numpy(np.ascontiguousarray(w))
    values, meta = sparse_semi_structured_from_dense_cutlass(t.cpu().contiguous())
    return values, meta.contiguous().view(torch.int16).numpy().view(np.uint16)


def block_rows(a: Any) -> list[dict[str, str]]:
    """A small matrix as Markdown-ready rows (zeros printed as 0), for the chapter's worked example.

    Chapter: *2:4 structured sparsity*, "The rule".
    """
    arr = _float_array(a, "a")
    if arr.ndim != 2:
        raise ValueError(f"a must be 2-D, got shape {arr.shape}")
    return [{"row": str(i), **{f"c{j}": (f"{x:.2f}" if x != 0 else "0") for j, x in enumerate(r)}}
            for i, r in enumerate(np.asarray(arr, dtype=np.float64))]


def metadata_rows(metadata: np.ndarray, groups: int) -> list[dict[str, str]]:
    """Each row's first metadata word in binary and the (lo, hi) positions of its ``groups`` groups.

    Chapter: *2:4 structured sparsity*, "The compressed format".
    """
    nib = metadata_nibbles(metadata, groups)
    bits = 8 * metadata.dtype.itemsize
    return [{"row": str(r), f"word 0 ({metadata.dtype})": f"0b{int(metadata[r, 0]):0{bits}b}",
             "positions per group": ", ".join(f"({n & 3}, {n >> 2})" for n in nib[r])}
            for r in range(metadata.shape[0])]


def round_trip_rows(rows: int = 256, cols: int = 512, seed: int = 1) -> list[dict[str, str]]:
    """Prune, compress and decompress a random matrix in every format the sparse tensor cores take (FP16,
    BF16 through torch, FP32, INT8): is it 2:4, is the round trip bit-exact, and the storage measured from
    the arrays' byte counts. Chapter: *2:4 structured sparsity*, "Exact round trips".
    """
    import torch

    rows, cols, seed = check.positive_int("rows", rows), check.positive_int("cols", cols), check.nonneg_int("seed", seed)
    base = torch.randn(rows, cols, generator=torch.Generator().manual_seed(seed))
    cases = {"fp16 (numpy)": base.numpy().astype(np.float16), "bf16 (torch)": base.bfloat16(),
             "fp32 (numpy)": base.numpy(), "int8 (numpy)": np.clip(np.round(base.numpy() * 40), -128, 127).astype(np.int8)}
    out = []
    for name, w in cases.items():
        p = prune_2to4(w)
        v, m = compress_2to4(p)
        back = decompress_2to4(v, m, p.shape[1])
        exact = (torch.equal(back.view(torch.int16), p.view(torch.int16)) if _is_torch_tensor(p)
                 else back.tobytes() == p.tobytes())
        ratio = storage_ratio(p, v, m)
        out.append({"format": name, "2:4 after pruning": str(is_2to4(p)), "round trip bit-exact": str(exact),
                    "storage (of dense)": f"{ratio.numerator * 16 / ratio.denominator:g}/16"})
    return out


def tf32_layout_rows(seed: int = 2) -> list[dict[str, str]]:
    """PyTorch's own CUTLASS encoder on a 1:2 FP32 matrix: the nibbles it uses and the storage of its arrays
    (the TF32 sparse format). Empty when this torch lacks the encoder. Chapter: *2:4 structured sparsity*,
    "Exact round trips".
    """
    import torch

    w = prune_1to2(torch.randn(64, 128, generator=torch.Generator().manual_seed(check.nonneg_int("seed", seed))))
    ref = torch_cutlass_reference(w)
    if ref is None:
        return []
    v, m = ref
    nibbles = sorted({int(n) for n in np.unique(metadata_nibbles(m, 128 // 2))})
    r = storage_ratio(w, v, m)
    return [{"1:2 pattern": str(is_1to2(w)), "nibbles used": ", ".join(f"0b{n:04b}" for n in nibbles),
             "positions": ", ".join(f"({n & 3}, {n >> 2})" for n in nibbles),
             "storage from PyTorch's arrays": f"{r.numerator * 16 / r.denominator:g}/16",
             "formula": str(hardware_storage_ratio("tf32"))}]


def compressed_product_checks(seed: int = 3) -> dict[str, bool]:
    """The product from the compressed form against the dense masked product, exact on small integers
    (FP16 with FP32 accumulation, INT8 with INT32), and half the multiply-adds.
    Chapter: *2:4 structured sparsity*, "Multiplying from the compressed form".
    """
    gen = np.random.default_rng(check.nonneg_int("seed", seed))
    a = prune_2to4(gen.integers(-8, 9, (128, 256)).astype(np.float16))
    b = gen.integers(-8, 9, (256, 64)).astype(np.float16)
    va, ma = compress_2to4(a)
    a8 = prune_2to4(gen.integers(-128, 128, (64, 128)).astype(np.int8))
    b8 = gen.integers(-128, 128, (128, 32)).astype(np.int8)
    y8 = matmul_2to4(*compress_2to4(a8), b8)
    return {"fp16 integers: from compressed == dense masked product (FP32 accumulation)":
                bool(np.array_equal(matmul_2to4(va, ma, b), a.astype(np.float32) @ b.astype(np.float32))),
            "int8: int32 result equal to the int32 dense product":
                bool(y8.dtype == np.int32 and np.array_equal(y8, a8.astype(np.int32) @ b8.astype(np.int32))),
            "half the multiply-adds of the dense product": 2 * va.size == a.size}


def cutlass_agreement_rows(seed: int = 4) -> list[dict[str, str]]:
    """This module's format against PyTorch's CUTLASS encoder on all eleven allowed group patterns, FP16 and
    BF16: same values, same metadata after :func:`cutlass_metadata_layout`. Empty without the encoder.
    Chapter: *2:4 structured sparsity*, "What the GPU really reads".
    """
    import torch

    patterns = [p for p in range(16) if bin(p).count("1") <= 2]
    codes = np.random.default_rng(check.nonneg_int("seed", seed)).choice(patterns, size=(64, 32))
    keep = ((codes[..., None] >> np.arange(4)) & 1).astype(bool).reshape(64, 128)
    out = []
    for dtype in (torch.float16, torch.bfloat16):
        w = (torch.randn(64, 128, generator=torch.Generator().manual_seed(seed + 1)) * torch.from_numpy(keep)).to(dtype)
        v, m = compress_2to4(w)
        ref = torch_cutlass_reference(w)
        if ref is None:
            return []
        out.append({"dtype": str(dtype).replace("torch.", ""),
                    "values identical": str(torch.equal(v.view(torch.int16), ref[0].view(torch.int16))),
                    "metadata identical after the permutation": str(np.array_equal(cutlass_metadata_layout(m),
                                                                                    ref[1]))})
    return out
