"""Tests of ampere.numerics.rounding: bit for bit against torch on >= 10^6 values spanning the whole FP32
range plus specials, the TF32 modes, NaNs and input checks (chapter: TF32 and the precision formats)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ampere import numerics as N  # noqa: E402


_SPECIAL_BITS = [
    0x0000_0000, 0x8000_0000,  # +-0
    0x7F80_0000, 0xFF80_0000,  # +-inf
    0x7FC0_0000, 0xFFC0_0000, 0x7F80_0001, 0x7FBF_FFFF,  # NaNs (quiet, signalling)
    0x0000_0001, 0x8000_0001, 0x007F_FFFF, 0x0000_8000, 0x0000_7FFF, 0x0001_8000,  # FP32 subnormals
    0x7F7F_FFFF, 0xFF7F_FFFF, 0x7F7F_7FFF, 0x7F7F_8000,  # near FP32 max (BF16 overflow boundary)
    0x477F_E000, 0x477F_EFFF, 0x477F_F000, 0x477F_F001, 0x4780_0000,  # FP16 max 65504 .. 65536
    0x3380_0000, 0x3300_0000, 0x3300_0001, 0x33C0_0000, 0x387F_E000, 0x387F_F000, 0x3880_0000,  # FP16 subnormals
    0x3F80_0000, 0x3F80_8000, 0x3F81_8000, 0x3F80_1000, 0x3F80_3000,  # ties
]


def _random_bits(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)


def _focused_bits(n: int, seed: int) -> np.ndarray:
    """FP32 values whose exponents cover FP16's subnormal, normal and overflow range, half of them ties."""
    rng = np.random.default_rng(seed)
    exp = rng.integers(127 - 40, 127 + 18, n).astype(np.uint32)
    mant = rng.integers(0, 2**23, n).astype(np.uint32)
    tie = rng.random(n) < 0.5
    mant = np.where(tie, (mant & np.uint32(0x7F_E000)) | np.uint32(0x1000), mant)
    sign = (rng.random(n) < 0.5).astype(np.uint32) << np.uint32(31)
    return sign | (exp << np.uint32(23)) | mant


@pytest.mark.parametrize("fmt, dtype", [("bf16", torch.bfloat16), ("fp16", torch.float16)])
def test_round_to_matches_torch_bit_for_bit(fmt, dtype):
    bits = np.concatenate([_random_bits(1_000_000, 1), _focused_bits(1_000_000, 2),
                           np.array(_SPECIAL_BITS, dtype=np.uint32)])
    x = bits.view(np.float32)
    ours = N.round_to(x, fmt)
    ref = torch.from_numpy(x.copy()).to(dtype).to(torch.float32).numpy()
    assert ours.dtype == np.float32 and ours.shape == x.shape
    nan = np.isnan(ref)
    assert nan.sum() > 1000  # the random patterns include NaNs
    np.testing.assert_array_equal(np.isnan(ours), nan)
    mismatch = np.nonzero(ours.view(np.uint32)[~nan] != ref.view(np.uint32)[~nan])[0]
    assert mismatch.size == 0, [hex(v) for v in x[~nan][mismatch[:5]].view(np.uint32)]
    # the comparison covered subnormal results, overflow to inf and signed zeros
    assert np.any(np.isinf(ref) & np.isfinite(x))
    assert np.any((ref == 0) & (x != 0) & np.signbit(x)) and np.any(np.signbit(ours[(ref == 0) & (x != 0)]))


def test_round_to_does_not_modify_input_and_keeps_shape():
    x = np.array([[1.0001, -3.3], [1e-30, 7.0]], dtype=np.float32)
    before = x.copy()
    y = N.round_to(x, "tf32")
    np.testing.assert_array_equal(x, before)
    assert y.shape == (2, 2)
    assert float(N.round_to(1.0001, "tf32")) == 1.0
    assert N.round_to(np.float64(0.1), "bf16").dtype == np.float32


def _tf32(bits: int, mode: str) -> int:
    x = np.array([bits], dtype=np.uint32).view(np.float32)
    return int(N.round_to(x, "tf32", mode).view(np.uint32)[0])


@pytest.mark.parametrize("bits, nearest, even, trunc", [
    (0x3F80_0000, 0x3F80_0000, 0x3F80_0000, 0x3F80_0000),  # 1.0 is exact
    (0x3F80_1000, 0x3F80_2000, 0x3F80_0000, 0x3F80_0000),  # tie, kept LSB even: away vs even differ
    (0x3F80_3000, 0x3F80_4000, 0x3F80_4000, 0x3F80_2000),  # tie, kept LSB odd: both round up
    (0x3F80_0FFF, 0x3F80_0000, 0x3F80_0000, 0x3F80_0000),  # just below half: down
    (0x3F80_1001, 0x3F80_2000, 0x3F80_2000, 0x3F80_0000),  # just above half: up (truncate: down)
    (0xBF80_1000, 0xBF80_2000, 0xBF80_0000, 0xBF80_0000),  # negative tie: away from zero
    (0x3FFF_F000, 0x4000_0000, 0x4000_0000, 0x3FFF_E000),  # carry into the exponent: 2.0
    (0x7F7F_FFFF, 0x7F80_0000, 0x7F80_0000, 0x7F7F_E000),  # FP32 max overflows to inf
    (0xFF7F_F000, 0xFF80_0000, 0xFF80_0000, 0xFF7F_E000),  # -max tie: -inf
    (0x0000_1000, 0x0000_2000, 0x0000_0000, 0x0000_0000),  # FP32 subnormal tie
    (0x0000_0FFF, 0x0000_0000, 0x0000_0000, 0x0000_0000),  # tiny subnormal flushes to +0
    (0x8000_0FFF, 0x8000_0000, 0x8000_0000, 0x8000_0000),  # ... and to -0 with its sign
    (0x8000_0000, 0x8000_0000, 0x8000_0000, 0x8000_0000),  # -0 stays -0
    (0x7F80_0000, 0x7F80_0000, 0x7F80_0000, 0x7F80_0000),  # inf stays inf
    (0x4480_1000, 0x4480_2000, 0x4480_0000, 0x4480_0000),  # 1024.5 -> 1025 (away), 1024 (even, truncate)
])
def test_tf32_modes_on_hand_made_bit_patterns(bits, nearest, even, trunc):
    assert _tf32(bits, "nearest") == nearest
    assert _tf32(bits, "nearest_even") == even
    assert _tf32(bits, "truncate") == trunc


@pytest.mark.parametrize("bits", [0x7F80_0001, 0x7FC0_0000, 0xFFFF_FFFF, 0x7F80_1000])
def test_nan_stays_nan_in_every_mode(bits):
    x = np.array([bits], dtype=np.uint32).view(np.float32)
    for fmt, modes in N.ROUNDING_MODES.items():
        drop = 23 - N.FORMATS[fmt].mantissa_bits
        for mode in modes:
            r = N.round_to(x, fmt, mode)
            assert np.isnan(r)[0], (fmt, mode)
            out = int(r.view(np.uint32)[0])
            assert out & ((1 << drop) - 1) == 0, (fmt, mode, hex(out))  # a NaN the format can hold
            assert out >> 31 == bits >> 31  # sign kept


def test_tf32_keeps_ten_mantissa_bits_and_bounds_the_error():
    x = _random_bits(200_000, 5).view(np.float32)
    x = x[np.isfinite(x) & (np.abs(x) > 1e-37) & (np.abs(x) < 1e37)]
    for mode, bound in (("nearest", 2.0**-11), ("nearest_even", 2.0**-11), ("truncate", 2.0**-10)):
        r = N.round_to(x, "tf32", mode)
        assert np.all(r.view(np.uint32) & np.uint32(0x1FFF) == 0)
        rel = np.abs(r.astype(np.float64) - x) / np.abs(x.astype(np.float64))
        assert rel.max() <= bound
        assert rel.max() > 0.9 * bound  # the bound is attained, not loose


def test_bf16_truncate_zeroes_sixteen_bits():
    x = np.array([1.0 + 2.0**-8, -3.14159, 1e-40], dtype=np.float32)
    r = N.round_to(x, "bf16", "truncate")
    np.testing.assert_array_equal(r.view(np.uint32), x.view(np.uint32) & np.uint32(0xFFFF_0000))


def test_round_to_rejects_unknown_format_and_mode():
    with pytest.raises(ValueError, match="fmt must be one of 'tf32', 'bf16', 'fp16'; got 'fp8'"):
        N.round_to(1.0, "fp8")
    with pytest.raises(ValueError, match="got 'truncate' .*defined for fmt='fp16'"):
        N.round_to(1.0, "fp16", "truncate")
    with pytest.raises(ValueError, match="mode must be one of .*got 'stochastic'"):
        N.round_to(1.0, "tf32", "stochastic")


def test_round_to_refuses_what_is_not_numbers():
    for bad in (None, "1.5", b"1.5", True, ["1.5"], [None, 1.0], np.array(["a"])):
        with pytest.raises(TypeError, match="x must"):
            N.round_to(bad, "bf16")
    with pytest.raises(TypeError, match="fmt"):
        N.round_to(1.0, None)
    assert N.round_to(np.int64(3), "bf16").item() == 3.0  # numpy numbers are numbers
    assert N.round_to(torch.tensor([1.0]), "tf32").tolist() == [1.0]
    with pytest.raises(TypeError, match="grads"):
        N.best_loss_scale("1e-3")
    with pytest.raises(TypeError, match="k"):
        N.dot_error_bound("4")
    with pytest.raises(TypeError, match="ks"):
        N.error_vs_k(ks=(4.0,))
    assert N.error_vs_k(ks=(np.int64(4),), m=np.int32(4), n=4, trials=1).ks == [4]
