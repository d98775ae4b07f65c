"""ampere.sparsity.pattern (the 2:4 rule: masks, pruning, the check) and the input handling of
ampere.sparsity.arrays (numpy, torch, bf16 bit patterns, refused dtypes)."""

import numpy as np
import pytest
import torch

from ampere import sparsity as sp

RNG = np.random.default_rng(1234)


def _random(shape, dtype):
    if np.dtype(dtype).kind == "i":
        return RNG.integers(-128, 128, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int8])
@pytest.mark.parametrize("shape", [(4,), (3, 8), (16, 64), (2, 5, 12)])
def test_prune_output_always_passes_is_2to4(dtype, shape):
    w = _random(shape, dtype)
    p = sp.prune_2to4(w)
    assert p.dtype == w.dtype and p.shape == w.shape
    assert sp.is_2to4(p)
    # exactly the two largest magnitudes of every group survive, with their values unchanged
    groups, kept = w.reshape(-1, 4), p.reshape(-1, 4)
    mags = np.abs(groups.astype(np.float64))
    for g, k, mg in zip(groups, kept, mags):
        order = np.argsort(-mg, kind="stable")[:2]
        assert set(np.flatnonzero(k != 0)) <= set(order)
        assert np.array_equal(k[order], g[order])


def test_prune_breaks_ties_towards_lower_index_and_keeps_values():
    w = np.array([[1.0, -1.0, 1.0, 0.5, 3.0, -4.0, 0.0, 0.0]], dtype=np.float32)
    assert sp.prune_2to4(w).tolist() == [[1.0, -1.0, 0.0, 0.0, 3.0, -4.0, 0.0, 0.0]]


def test_prune_torch_bf16_stays_bf16_and_exact():
    t = torch.randn(8, 32, generator=torch.Generator().manual_seed(0)).bfloat16()
    p = sp.prune_2to4(t)
    assert p.dtype == torch.bfloat16 and sp.is_2to4(p)
    ref = t.float().reshape(8, 8, 4)
    order = torch.argsort(ref.abs(), dim=-1, descending=True, stable=True)[..., :2]
    keep = torch.zeros_like(ref, dtype=torch.bool).scatter_(-1, order, True)
    assert torch.equal(p, (t.reshape(8, 8, 4) * keep).reshape(8, 32))


def test_is_2to4_means_at_most_two():
    assert sp.is_2to4(np.array([[0, 0, 0, 0, 5, 0, 0, 0, 1, 2, 0, 0]]))  # 0, 1 and 2 non-zeros all pass
    assert not sp.is_2to4(np.array([[1, 2, 3, 0]]))
    assert sp.is_2to4(np.array([[-0.0, 1.0, -0.0, 2.0]]))  # -0.0 is a zero
    neg_zero_bf16 = torch.tensor([[-0.0, 1.0, -0.0, 2.0]], dtype=torch.bfloat16)
    assert sp.is_2to4(neg_zero_bf16)


@pytest.mark.parametrize("fn", [sp.prune_2to4, sp.is_2to4, sp.mask_2to4, sp.compress_2to4])
def test_width_not_multiple_of_4_is_rejected(fn):
    with pytest.raises(ValueError, match="multiple of 4"):
        fn(np.ones((2, 6), dtype=np.float32))


def test_prune_rejects_nan_and_bad_nm():
    with pytest.raises(ValueError, match="NaN"):
        sp.prune_2to4(np.array([[np.nan, 1, 2, 3]], dtype=np.float32))
    with pytest.raises(ValueError, match="n must be an integer <= 3"):
        sp.prune_nm(np.ones((1, 4)), 4, 4)
    with pytest.raises(TypeError, match="numpy array or a torch tensor"):
        sp.prune_2to4("weights")
    assert sp.is_nm(np.ones((1, 4)), np.int64(2), np.int32(4)) is False  # numpy integers accepted
    with pytest.raises(TypeError, match="n must be an integer"):
        sp.prune_nm(np.ones((1, 4)), 2.0, 4)


def test_unsupported_dtypes_are_named_not_numpy_internals():
    for bad in (np.array([["a", "b", "c", "d"]]), np.array([[1 + 1j, 0, 0, 0]]), np.array([[None] * 4], dtype=object)):
        with pytest.raises(TypeError, match=r"w has dtype .*allowed: float16, bfloat16 \(torch\)"):
            sp.prune_2to4(bad)
    if hasattr(torch, "float8_e4m3fn"):
        with pytest.raises(TypeError, match="w has dtype torch float8_e4m3fn.*allowed"):
            sp.prune_2to4(torch.zeros(2, 4).to(torch.float8_e4m3fn))
    with pytest.raises(TypeError, match="values has dtype"):
        sp.decompress_2to4(np.array([["a", "b"]]), np.zeros((1, 1), np.uint16), 4)


def test_one_to_two_pattern():
    w = _random((4, 16), np.float32)
    p = sp.prune_1to2(w)
    assert sp.is_1to2(p) and sp.is_2to4(p)
    assert not sp.is_1to2(sp.prune_2to4(np.array([[1.0, 2.0, 0.1, 0.2]])))


def test_random_and_unstructured_masks():
    m = sp.random_mask_2to4((8, 16), seed=3)
    assert m.reshape(-1, 4).sum(axis=1).tolist() == [2] * 32
    assert np.array_equal(m, sp.random_mask_2to4((8, 16), seed=3))
    assert not np.array_equal(m, sp.random_mask_2to4((8, 16), seed=4))
    w = _random((16, 16), np.float32)
    keep = sp.unstructured_mask(w, 0.5)
    assert keep.sum() == 128 and np.abs(w[keep]).min() >= np.abs(w[~keep]).max()
    with pytest.raises(ValueError, match="sparsity"):
        sp.unstructured_mask(w, 1.0)
