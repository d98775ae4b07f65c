"""ampere.sparsity.compressed: the compressed format, its round trips, storage, the CUTLASS layout
and the product from the compressed form."""

from fractions import Fraction

import numpy as np
import pytest
import torch

from ampere import sparsity as sp

RNG = np.random.default_rng(1234)


def _random(shape, dtype):
    if np.dtype(dtype).kind == "i":
        return RNG.integers(-128, 128, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int8])
@pytest.mark.parametrize("cols", [4, 12, 16, 64])
@pytest.mark.parametrize("meta_dtype", [np.uint8, np.uint16, np.uint32])
def test_round_trip_is_exact(dtype, cols, meta_dtype):
    w = sp.prune_2to4(_random((5, cols), dtype))
    values, meta = sp.compress_2to4(w, meta_dtype=meta_dtype)
    assert values.shape == (5, cols // 2) and values.dtype == w.dtype
    per_word = {np.uint8: 2, np.uint16: 4, np.uint32: 8}[meta_dtype]
    assert meta.dtype == meta_dtype and meta.shape == (5, -(-cols // 4 // per_word))
    back = sp.decompress_2to4(values, meta, cols)
    assert back.dtype == w.dtype and back.tobytes() == w.tobytes()  # bit for bit


def test_round_trip_torch_bf16_and_fp16_bitwise():
    for dtype in (torch.bfloat16, torch.float16, torch.float32):
        w = sp.prune_2to4(torch.randn(32, 64, generator=torch.Generator().manual_seed(1)).to(dtype))
        values, meta = sp.compress_2to4(w)
        assert isinstance(values, torch.Tensor) and values.dtype == dtype and values.shape == (32, 32)
        back = sp.decompress_2to4(values, meta, 64)
        assert back.dtype == dtype
        assert torch.equal(back.view(torch.int16 if dtype != torch.float32 else torch.int32),
                           w.view(torch.int16 if dtype != torch.float32 else torch.int32))


def test_groups_with_fewer_than_two_nonzeros_round_trip():
    w = np.array([[0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, -3, 0, 5, 0, 0]], dtype=np.float16)
    values, meta = sp.compress_2to4(w)
    assert np.array_equal(sp.decompress_2to4(values, meta, 16), w)
    # filler rule: empty -> (2, 3); lone 0 -> (0, 2); lone 3 -> (2, 3); lone 1 -> (1, 2)
    assert sp.metadata_nibbles(meta, 4).tolist() == [[2 | 3 << 2, 0 | 2 << 2, 2 | 3 << 2, 1 | 2 << 2]]


def test_metadata_bit_order_is_documented_order():
    # group 0 keeps positions (0, 2) -> nibble 0b1000; group 1 keeps (1, 3) -> 0b1101; little-endian nibbles
    w = np.array([[1, 0, 2, 0, 0, 3, 0, 4]], dtype=np.float32)
    values, meta = sp.compress_2to4(w)
    assert values.tolist() == [[1, 2, 3, 4]]
    assert meta.dtype == np.uint16 and int(meta[0, 0]) == 0b1101_1000
    _, meta8 = sp.compress_2to4(w, meta_dtype=np.uint8)
    assert int(meta8[0, 0]) == 0b1101_1000


def test_compress_rejects_non_2to4_naming_the_group():
    w = np.zeros((3, 8), dtype=np.float32)
    w[2, 4:7] = 1.0
    with pytest.raises(ValueError, match="row 2, columns 4..7 hold 3 non-zeros"):
        sp.compress_2to4(w)
    with pytest.raises(ValueError, match="2-D"):
        sp.compress_2to4(np.zeros(8))
    with pytest.raises(ValueError, match="meta_dtype"):
        sp.compress_2to4(np.zeros((1, 4)), meta_dtype=np.int16)


def test_decompress_rejects_bad_metadata_and_shapes():
    values, meta = sp.compress_2to4(np.array([[1, 0, 2, 0]], dtype=np.float32))
    with pytest.raises(ValueError, match="same position twice"):
        sp.decompress_2to4(values, np.zeros_like(meta), 4)
    with pytest.raises(ValueError, match="cols"):
        sp.decompress_2to4(values, meta, 6)
    with pytest.raises(ValueError, match="words per row"):
        sp.decompress_2to4(values, np.zeros((1, 2), dtype=np.uint16), 4)
    # a wrong (but plausible) width is an error about the width, not about a padding nibble
    wide_values, wide_meta = sp.compress_2to4(sp.prune_2to4(np.arange(1, 17, dtype=np.float32).reshape(1, 16)))
    with pytest.raises(ValueError, match=r"cols=12 does not match the compressed values: they are 8 wide"):
        sp.decompress_2to4(wide_values, wide_meta, 12)
    assert sp.decompress_2to4(wide_values, wide_meta, np.int64(16)).shape == (1, 16)
    with pytest.raises(TypeError, match="cols"):
        sp.decompress_2to4(wide_values, wide_meta, 16.0)
    with pytest.raises(ValueError, match="metadata shape"):
        sp.decompress_2to4(wide_values, np.zeros((2, 1), np.uint16), 16)


def test_storage_ratios_from_the_real_arrays():
    for dtype, expected in ((np.float16, Fraction(9, 16)), (np.int8, Fraction(10, 16)), (np.float32, Fraction(17, 32))):
        w = sp.prune_2to4(_random((16, 64), dtype))
        assert sp.storage_ratio(w, *sp.compress_2to4(w)) == expected
    wb = sp.prune_2to4(torch.randn(16, 64).bfloat16())
    assert sp.storage_ratio(wb, *sp.compress_2to4(wb)) == Fraction(9, 16)
    assert {p: sp.hardware_storage_ratio(p) for p in sp.HARDWARE_FORMATS} == {
        "fp16": Fraction(9, 16), "bf16": Fraction(9, 16), "int8": Fraction(10, 16), "tf32": Fraction(9, 16)}
    assert sp.metadata_overhead("fp16") == Fraction(1, 8) and sp.metadata_overhead("int8") == Fraction(1, 4)
    with pytest.raises(ValueError, match="precision must be one of"):
        sp.hardware_storage_ratio("fp64")


def test_same_format_as_pytorch_cutlass_encoder():
    patterns = [p for p in range(16) if bin(p).count("1") <= 2]  # the 11 allowed groups
    rng = np.random.default_rng(0)
    codes = rng.choice(patterns, size=(64, 16))
    bits = ((codes[..., None] >> np.arange(4)) & 1).astype(bool).reshape(64, 64)
    for dtype in (torch.float16, torch.bfloat16):
        w = (torch.randn(64, 64) * torch.from_numpy(bits)).to(dtype)
        values, meta = sp.compress_2to4(w)
        ref = sp.torch_cutlass_reference(w)
        assert ref is not None
        assert torch.equal(values.view(torch.int16), ref[0].view(torch.int16))
        assert np.array_equal(sp.cutlass_metadata_layout(meta), ref[1])
    tf32 = sp.prune_1to2(torch.randn(32, 64))
    v, m = sp.torch_cutlass_reference(tf32)
    assert sp.storage_ratio(tf32, v, m) == sp.hardware_storage_ratio("tf32")
    with pytest.raises(ValueError, match="multiple of 32"):
        sp.cutlass_metadata_layout(np.zeros((16, 4), dtype=np.uint16))


def test_matmul_from_compressed_equals_masked_dense_product():
    a = sp.prune_2to4(RNG.integers(-4, 5, (48, 64)).astype(np.float32))
    b = RNG.integers(-4, 5, (64, 7)).astype(np.float32)
    values, meta = sp.compress_2to4(a)
    assert np.array_equal(sp.matmul_2to4(values, meta, b), a @ b)  # small integers: exact in any order
    assert np.array_equal(sp.matmul_2to4(values, meta, b[:, 0]), a @ b[:, 0])
    a8 = sp.prune_2to4(_random((16, 32), np.int8))
    b8 = _random((32, 5), np.int8)
    out = sp.matmul_2to4(*sp.compress_2to4(a8), b8)
    assert out.dtype == np.int32 and np.array_equal(out, a8.astype(np.int32) @ b8.astype(np.int32))
    h = sp.prune_2to4(_random((32, 64), np.float16))
    xh = _random((64, 9), np.float16)
    got = sp.matmul_2to4(*sp.compress_2to4(h), xh)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, h.astype(np.float64) @ xh.astype(np.float64), rtol=1e-5, atol=1e-5)
    tb = sp.prune_2to4(torch.randn(8, 16).bfloat16())
    xb = torch.randn(16, 3).bfloat16()
    np.testing.assert_allclose(sp.matmul_2to4(*sp.compress_2to4(tb), xb), (tb.float() @ xb.float()).numpy(),
                               rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="wide"):
        sp.matmul_2to4(values, meta, b[:60])


def test_nm_storage_ratio_by_encoding():
    """Per-position indices (the hardware's 2:4 nibble) against one index per group pattern: 4:8 costs 19/32
    with 3-bit positions but 71/128 with a 7-bit pattern index, below the 72/128 of the real 2:4 format."""
    from fractions import Fraction

    assert sp.nm_storage_ratio(2, 4) == sp.hardware_storage_ratio("fp16") == Fraction(9, 16)
    assert sp.nm_storage_ratio(4, 8) == Fraction(19, 32)
    assert sp.nm_storage_ratio(4, 8, encoding="pattern") == Fraction(71, 128)
    assert sp.nm_storage_ratio(2, 4, encoding="pattern") == Fraction(70, 128)
    assert sp.nm_storage_ratio(2, 4, 8) == sp.hardware_storage_ratio("int8")
    for bad in ({"n": 4, "m": 4}, {"n": 0, "m": 4}, {"n": 2, "m": True}, {"n": 2, "m": 4, "encoding": "x"},
                {"n": 2, "m": 4, "bits": 0}):
        with pytest.raises((ValueError, TypeError)):
            sp.nm_storage_ratio(**bad)
