"""Tests of ampere.numerics (chapter: TF32 and the precision formats)."""

from __future__ import annotations

import inspect
import json
import math
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ampere import numerics as N  # noqa: E402

# ---------------------------------------------------------------------------------------------------------
# Formats
# ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name, np_dtype", [("fp64", np.float64), ("fp32", np.float32), ("fp16", np.float16)])
def test_ieee_formats_match_numpy_finfo(name, np_dtype):
    f, fi = N.FORMATS[name], np.finfo(np_dtype)
    assert f.max_normal == float(fi.max)
    assert f.min_normal == float(fi.smallest_normal)
    assert f.min_subnormal == float(fi.smallest_subnormal)
    assert f.epsilon == float(fi.eps)
    assert f.mantissa_bits == fi.nmant and f.exponent_bits == fi.nexp


@pytest.mark.parametrize("name, dtype", [("bf16", "bfloat16"), ("fp8_e4m3", "float8_e4m3fn"),
                                         ("fp8_e5m2", "float8_e5m2")])
def test_formats_match_torch_finfo(name, dtype):
    f, fi = N.FORMATS[name], torch.finfo(getattr(torch, dtype))
    assert f.max_normal == fi.max
    assert f.min_normal == fi.smallest_normal
    assert f.epsilon == fi.eps


def test_special_format_values():
    assert N.FORMATS["fp8_e4m3"].max_normal == 448.0  # no infinities: the top exponent holds normals
    assert N.FORMATS["fp8_e5m2"].max_normal == 57344.0
    assert N.FORMATS["fp16"].max_normal == 65504.0
    tf32 = N.FORMATS["tf32"]
    assert tf32.bits == 19 and tf32.storage_bits == 32
    assert tf32.unit_roundoff == 2.0**-11 == N.FORMATS["fp16"].unit_roundoff
    assert tf32.min_normal == N.FORMATS["fp32"].min_normal  # FP32 range ...
    assert tf32.max_normal == (2 - 2.0**-10) * 2.0**127
    assert N.FORMATS["int8"].max_normal == 127 and N.FORMATS["int8"].epsilon is None
    assert N.FORMATS["fp16"].overflow_threshold == 65520.0
    assert N.FORMATS["fp64"].range_decades == pytest.approx(631.6, abs=0.1)


def test_format_table_and_render():
    rows = N.format_table()
    assert [r["format"] for r in rows] == [f.label for f in N.FORMATS.values()]
    text = N.render_table(rows, ["format", "bits", "max", "epsilon"], {"max": ".4g"})
    assert "FP8 E4M3" in text and "448" in text and "65500" not in text
    assert "65504" in N.render_table(N.format_table(["fp16"]), ["format", "max"], {"max": ".6g"})
    assert N.render_table([]) == "(no rows)"
    with pytest.raises(ValueError, match="fmt must be one of .*got 'fp12'"):
        N.format_table(["fp12"])


def test_bit_fields_sum_to_storage():
    for name, f in N.FORMATS.items():
        assert sum(w for _, w in N.bit_fields(name)) == f.storage_bits
    assert N.bit_fields("tf32")[-1] == ("unused", 13)


# ---------------------------------------------------------------------------------------------------------
# Rounding: bit for bit against torch on >= 10^6 values spanning the whole FP32 range plus specials
# ---------------------------------------------------------------------------------------------------------

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


def test_round_tensor_equals_round_to():
    x = np.concatenate([_random_bits(100_000, 7), np.array(_SPECIAL_BITS, dtype=np.uint32)]).view(np.float32)
    t = torch.from_numpy(x.copy())
    for fmt, modes in N.ROUNDING_MODES.items():
        for mode in modes:
            a = N.round_to(x, fmt, mode)
            b = N.round_tensor(t, fmt, mode).numpy()
            nan = np.isnan(a)
            np.testing.assert_array_equal(np.isnan(b), nan)
            np.testing.assert_array_equal(a.view(np.uint32)[~nan], b.view(np.uint32)[~nan])
    assert N.round_tensor(t, "fp32") is t


# ---------------------------------------------------------------------------------------------------------
# Emulated matmuls, errors and bounds
# ---------------------------------------------------------------------------------------------------------


def test_emulated_matmul_rounds_inputs_and_accumulates_in_fp32():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((8, 32), dtype=np.float32)
    b = rng.standard_normal((32, 4), dtype=np.float32)
    np.testing.assert_array_equal(N.emulated_matmul(a, b, "fp32"), a @ b)
    np.testing.assert_array_equal(N.emulated_matmul(a, b, "tf32"), N.round_to(a, "tf32") @ N.round_to(b, "tf32"))
    assert N.emulated_matmul(a, b, "fp64").dtype == np.float64
    with pytest.raises(ValueError, match="shapes"):
        N.emulated_matmul(a, a, "fp32")
    with pytest.raises(ValueError, match="fmt must be one of .*got 'int8'"):
        N.emulated_matmul(a, b, "int8")
    with pytest.raises(ValueError, match="accumulate must be one of .*got 'fp64'"):
        N.emulated_matmul(a, b, "fp16", accumulate="fp64")


def test_tensorflow_documentation_example():
    # TensorFlow's docs: 1024-long dot product of 1.0001 and 1 gives 1024.0 with TF32 and about 1024.1 without
    a = np.full((1, 1024), 1.0001, dtype=np.float32)
    b = np.ones((1024, 1), dtype=np.float32)
    assert N.emulated_matmul(a, b, "tf32")[0, 0] == 1024.0
    assert N.emulated_matmul(a, b, "fp32")[0, 0] == pytest.approx(1024.1, abs=0.01)


def test_low_precision_accumulation_is_recursive_summation():
    a = np.ones((1, 4096), dtype=np.float32)
    b = np.ones((4096, 1), dtype=np.float32)
    # FP16 counts exactly to 2048; 2048 + 1 is a tie that rounds to even: the sum stagnates
    assert N.emulated_matmul(a, b, "fp16", accumulate="fp16")[0, 0] == 2048.0
    assert N.emulated_matmul(a, b, "fp16", accumulate="fp32")[0, 0] == 4096.0


def test_error_vs_k_orders_the_formats():
    sweep = N.error_vs_k(ks=(16, 256, 1024), m=16, n=16, trials=2)
    for k in sweep.ks:
        assert sweep.at("fp32", k) < 1e-5
        assert sweep.at("tf32", k) == pytest.approx(sweep.at("fp16", k), rel=0.05)  # same 10-bit mantissa
        assert sweep.at("tf32", k) < sweep.at("tf32 truncate", k) < sweep.at("bf16", k)
        assert 0.2 * 2**-11 < sweep.at("tf32", k) < 2**-11  # input rounding sets the level: about u
    with pytest.raises(ValueError, match="cases"):
        N.error_vs_k(cases=("fp8",))
    with pytest.raises(ValueError, match="data must be one of .*got 'lognormal'"):
        N.error_vs_k(ks=(4,), data="lognormal")


def test_accumulation_error_curve_grows_with_k_in_fp16_and_stays_under_the_bound():
    cur = N.accumulation_error_curve(1024, "fp16", "fp16", checkpoints=[8, 64, 1024])
    assert cur["k"] == [8, 64, 1024]
    assert cur["error"][0] < cur["error"][1] < cur["error"][2]
    for k, e in zip(cur["k"], cur["error"]):
        assert e <= N.dot_error_bound(k, "fp16", "fp16", "worst")
    tf32 = N.accumulation_error_curve(1024, "tf32", "fp32", checkpoints=[8, 1024])
    assert tf32["error"][1] < tf32["error"][0]  # independent input-rounding errors average out
    trunc = N.accumulation_error_curve(1024, "tf32", "fp32", checkpoints=[8, 1024], mode="truncate")
    assert trunc["error"][1] > 5 * tf32["error"][1]  # truncation is biased: it does not average out


def test_bounds_and_max_k():
    u16, u32, u_tf32 = 2.0**-11, 2.0**-24, 2.0**-11
    assert N.dot_error_bound(10, "fp16", "fp16") == pytest.approx(10 * u16 / (1 - 10 * u16))
    assert N.dot_error_bound(10, "fp32", "fp32") == pytest.approx(10 * u32 / (1 - 10 * u32))
    assert N.dot_error_bound(100, "tf32", "fp32") == pytest.approx(2 * u_tf32 + u_tf32**2 + 100 * u32, rel=1e-6)
    assert N.dot_error_bound(10_000, "fp16", "fp16") == math.inf
    assert N.dot_error_bound(4096, "fp16", "fp16", "probabilistic") < N.dot_error_bound(4096, "fp16", "fp16", "worst")
    assert N.max_k_for_error(0.01, "fp16", "fp16") == 20  # 20 u / (1 - 20 u) = 0.0098, 21 -> 0.0103
    assert N.max_k_for_error(1e-4, "tf32", "fp32") == 0  # the input rounding alone exceeds 1e-4
    for tol, inputs, acc, model in [(0.01, "fp16", "fp16", "probabilistic"), (2e-3, "tf32", "fp32", "worst")]:
        k = N.max_k_for_error(tol, inputs, acc, model)
        assert N.dot_error_bound(k, inputs, acc, model) <= tol < N.dot_error_bound(k + 1, inputs, acc, model)
    with pytest.raises(ValueError, match="model must be one of .*got 'typical'"):
        N.dot_error_bound(4, model="typical")
    with pytest.raises(ValueError, match="tol must be > 0, got 0"):
        N.max_k_for_error(0)


# ---------------------------------------------------------------------------------------------------------
# Dynamic range and loss scaling
# ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
def test_range_census_agrees_with_round_to(fmt):
    g = np.concatenate([N.gradient_like_values(100_000, -50, 38, seed=3),
                        np.array([3e-8, 2.98023224e-08, 2.9802326e-08, 65519.0, 65520.0, 6.1e-5], dtype=np.float32)])
    g = g[g != 0]  # values below FP32's smallest subnormal are already zero in FP32; the census skips them
    census = N.range_census(g, fmt)
    r = N.round_to(g, fmt)
    f = N.FORMATS[fmt]
    assert census["zero"] == pytest.approx(np.mean(r == 0), abs=1e-12)
    assert census["overflow"] == pytest.approx(np.mean(np.isinf(r)), abs=1e-12)
    assert census["subnormal"] == pytest.approx(np.mean((r != 0) & (np.abs(r) < f.min_normal)), abs=1e-12)
    assert sum(census.values()) == pytest.approx(1.0)


def test_gradient_like_values_and_census_of_thirty_decades():
    g = N.gradient_like_values(50_000, -25, 5, seed=0)
    mag = np.abs(g)
    assert g.dtype == np.float32 and 1e-25 <= mag.min() and mag.max() <= 1e5
    assert 0.4 < np.mean(g < 0) < 0.6
    fp16, bf16 = N.range_census(g, "fp16"), N.range_census(g, "bf16")
    assert fp16["zero"] > 0.5 and fp16["overflow"] > 0  # below 3e-8 flushes; above 65520 overflows
    assert bf16["zero"] == 0 and bf16["overflow"] == 0 and bf16["normal"] == 1.0
    assert N.range_census(g, "tf32") == N.range_census(g, "fp32")
    with pytest.raises(ValueError, match="fmt must be one of .*fp8_e5m2'; got 'int8'"):
        N.range_census(g, "int8")
    with pytest.raises(ValueError, match="distribution must be one of .*got 'gaussian'"):
        N.gradient_like_values(10, distribution="gaussian")


def test_loss_scaling():
    g = N.gradient_like_values(100_000, distribution="lognormal", log10_mean=-8, log10_std=1.5, seed=1)
    rows = N.loss_scale_sweep(g, "fp16", range(0, 30))
    zeros = [r["zero"] for r in rows]
    assert zeros == sorted(zeros, reverse=True) and zeros[0] > 0.5
    k = N.best_loss_scale(g, "fp16")
    assert N.range_census(g * 2.0**k, "fp16")["overflow"] == 0
    assert N.range_census(g * 2.0 ** (k + 1), "fp16")["overflow"] > 0
    assert N.range_census(g * 2.0**k, "fp16")["zero"] < 0.01 < zeros[0]
    assert N.best_loss_scale(np.zeros(4), "fp16", max_log2=24) == 24


# ---------------------------------------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------------------------------------


def test_training_runs_are_seeded_and_precisions_agree():
    runs = {p: N.train_digits_mlp(p, epochs=6) for p in ("fp32", "tf32", "bf16")}
    for r in runs.values():
        assert len(r.epoch_losses) == 6 and all(math.isfinite(v) for v in r.epoch_losses)
        assert r.epoch_losses[-1] < 0.5 * r.epoch_losses[0]
        assert r.test_accuracy > 0.85
    assert abs(runs["tf32"].test_accuracy - runs["fp32"].test_accuracy) <= 0.03
    assert runs["tf32"].epoch_losses != runs["fp32"].epoch_losses  # the rounding is really applied
    again = N.train_digits_mlp("fp32", epochs=6)
    assert again.epoch_losses == runs["fp32"].epoch_losses
    with pytest.raises(ValueError, match="precision must be one of .*got 'int8'"):
        N.train_digits_mlp("int8")
    with pytest.raises(ValueError, match="backend='native' needs a CUDA device"):
        N.train_digits_mlp("tf32", backend="native", device="cpu")


def test_emulated_matmul_function_gradients():
    fn = N._emulated_matmul_function()
    x = torch.randn(5, 7, dtype=torch.float32, requires_grad=True)
    w = torch.randn(7, 3, dtype=torch.float32, requires_grad=True)
    fn.apply(x, w, "fp32", "nearest").sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.ones((5, 3), np.float32) @ w.detach().numpy().T, rtol=1e-6)
    x.grad = None
    fn.apply(x, w, "bf16", "nearest").sum().backward()
    expected = N.round_to(np.ones((5, 3)), "bf16") @ N.round_to(w.detach().numpy(), "bf16").T
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)


# ---------------------------------------------------------------------------------------------------------
# GPU paths, exercised on the CPU with tiny sizes
# ---------------------------------------------------------------------------------------------------------


def test_peak_ratios_from_specs():
    assert N.peak_ratio("A100-SXM4-80GB") == pytest.approx(8.0)
    assert N.peak_ratio("A100-SXM4-80GB", "tf32", "fp32", sparse=True) == pytest.approx(16.0)
    assert N.peak_ratio("A100-SXM4-80GB", "tf32", "fp16") == pytest.approx(0.5)
    assert N.peak_ratio("RTX-A6000") == pytest.approx(2.0)
    (notes,) = N.published_tf32()
    assert notes.source == "pytorchcudanotes" and notes.params["k"] == 10240
    assert 6 < N.published_tf32_speedup(notes) < N.peak_ratio(notes.gpu)  # "~7x", below the 8x peak ratio
    assert notes.figures["tf32_max_error_over_mean_ratio"] > 10 * notes.figures["fp32_max_error_over_mean_ratio"]


def test_measure_throughput_on_cpu():
    records, skipped = N.measure_throughput([16, 32], device="cpu", warmup_s=0.0, min_time_s=0.001, max_time_s=0.2)
    assert "tf32" in skipped and "tensor-core" in skipped["tf32"]
    rows = N.throughput_rows(records)
    assert {r["precision"] for r in rows} == {"fp64", "fp32", "bf16", "fp16", "int8"}
    assert all(r["tflops"] > 0 and r["pct_of_peak"] is None for r in rows)
    assert N.tf32_speedups(records) == {}
    with pytest.raises(ValueError, match="precisions must be one of .*got 'fp8'"):
        N.measure_throughput([16], precisions=["fp8"], device="cpu")


def test_tf32_speedups_from_records():
    def rec(p, n, t):
        return {"kind": "throughput", "precision": p, "n": n, "flops": 2.0 * n**3,
                "measurement": {"label": p, "samples_s": [t] * 10}}

    records = [rec("fp32", 4096, 0.1), rec("tf32", 4096, 0.0125), rec("bf16", 4096, 0.01)]
    assert N.tf32_speedups(records) == {4096: pytest.approx(8.0)}


def test_compare_and_probe_on_cpu():
    recs = N.compare_tf32_with_emulation("cpu", ks=[32], m=16, n=16)
    d = recs[0]["derived"]
    assert recs[0]["tf32_active"] is False
    assert d["device_tf32"] == d["device_fp32"] < 1e-5  # a CPU has no TF32: the product is strict FP32
    assert d["emulated_nearest"] < d["emulated_truncate"]
    probe = N.tf32_conversion_probe("cpu", size=32)
    assert probe["derived"]["match"]["unchanged"] == 1.0
    assert probe["derived"]["match_on_ties"]["nearest"] == 0.0
    with pytest.raises(ValueError, match="size must be an integer >= 16, got 8"):
        N.tf32_conversion_probe("cpu", size=8)
    with pytest.raises(ValueError, match="ks must be an integer >= 1, got 0"):
        N.compare_tf32_with_emulation("cpu", ks=[0], m=16, n=16)


def test_bench_main_on_cpu_writes_a_valid_result(tmp_path, capsys):
    from ampere import results

    rc = N.bench_main(["--sizes", "24", "32", "--precisions", "fp32", "tf32", "int8", "--error-ks", "16",
                       "--out", str(tmp_path)])
    assert rc == 0
    out = capsys.readouterr().out
    assert "skipped tf32" in out and "result written to" in out
    files = list(tmp_path.glob("tf32-*.json"))
    assert len(files) == 1
    res = results.load(files[0])
    kinds = [r.get("kind") for r in res["records"]]
    assert kinds.count("throughput") == 4 and "tf32_error" in kinds and "tf32_conversion" in kinds
    json.dumps(res)
    with pytest.raises(SystemExit):
        N.bench_main(["--sizes", "20"])
    with pytest.raises(SystemExit):  # torch._int_mm on CUDA needs more than 16 rows
        N.bench_main(["--sizes", "16"])


def test_bench_runs_its_whole_code_path_with_device_cpu_quick(capsys):
    import time

    t0 = time.perf_counter()
    assert N.bench_main(["--device", "cpu", "--quick", "--no-save"]) == 0
    assert time.perf_counter() - t0 < 60
    out = capsys.readouterr().out
    assert out.startswith("  fp64") and "TF32 benchmark on CPU" in out and "conversion probe" in out
    assert "skipped tf32: TF32 is a tensor-core mode" in out and "written to" not in out


def test_fp64_sizes_are_capped_on_gpus_with_slow_fp64():
    from ampere import specs

    cuda, cpu = torch.device("cuda"), torch.device("cpu")
    sizes = [2048, 4096, 8192]
    assert N._fp64_sizes(None, cpu, sizes) == sizes
    assert N._fp64_sizes(specs.get("A100-SXM4-80GB"), cuda, sizes) == sizes  # DGEMM on the FP64 tensor cores
    assert N._fp64_sizes(specs.get("H100-SXM5-80GB"), cuda, sizes) == sizes
    assert N._fp64_sizes(specs.get("T4"), cuda, sizes) == [2048]  # 1/32 rate: 8192^3 would take seconds
    assert N._fp64_sizes(specs.get("RTX-A6000"), cuda, sizes) == [2048]
    assert N._fp64_sizes(None, cuda, sizes) == [2048]  # a GPU outside the catalogue: stay small


# ---------------------------------------------------------------------------------------------------------
# Package conventions
# ---------------------------------------------------------------------------------------------------------


def test_import_does_not_load_torch():
    code = "import sys, ampere.numerics; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_public_functions_name_the_chapter():
    for name in N.__all__:
        obj = getattr(N, name)
        if inspect.isfunction(obj) and obj.__module__ == N.__name__:
            assert "TF32 and the precision formats" in " ".join((obj.__doc__ or "").split()), name


def test_tf32_switch_is_the_core_one():
    from ampere import device

    assert N.tf32_enabled is device.tf32_enabled and N.tf32_state is device.tf32_state
    before = N.tf32_state()
    with N.tf32_enabled(True) as state:
        assert state["matmul"] in (True, "tf32")
    assert N.tf32_state() == before


def test_figures_draw(monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    from ampere import plots

    fig, axes = plots.figure("wide", 1, 3)
    N.plot_bit_layouts(axes[0])
    N.plot_error_vs_k(axes[1], N.error_vs_k(ks=(4, 16), m=4, n=4, trials=1))
    N.plot_ranges(axes[2], sample=N.gradient_like_values(1000))
    fig2, ax = plots.figure("full")
    g = N.gradient_like_values(1000, distribution="lognormal")
    N.plot_loss_scaling(ax, N.loss_scale_sweep(g, log2_scales=range(4)), best=N.best_loss_scale(g))
    N.plot_training(ax, [N.TrainingRun("fp32", "emulated", "cpu", [1.0, 0.5], 1.0, 1.0, 0.1)])
    N.plot_throughput(ax, [{"precision": "fp32", "n": 64, "tflops": 1.0},
                           {"precision": "tf32", "n": 64, "tflops": 7.0}])
    import matplotlib.pyplot as plt

    plt.close("all")


def test_gating_on_capabilities_not_on_gpu_presence():
    from ampere import specs
    from ampere.device import DeviceInfo

    t4 = DeviceInfo(backend="cuda", name="Tesla T4", compute_capability=(7, 5), spec_name="T4")
    run, skipped = N._supported_precisions(t4, torch.device("cuda"), N.MATMUL_PRECISIONS)
    assert run == ["fp64", "fp32", "fp16"] and set(skipped) == {"tf32", "bf16", "int8"}
    a100 = DeviceInfo(backend="cuda", name="NVIDIA A100-SXM4-80GB", compute_capability=(8, 0), tf32=True,
                      bf16_tensor=True, int8_tensor=True, spec_name="A100-SXM4-80GB")
    run, skipped = N._supported_precisions(a100, torch.device("cuda"), N.MATMUL_PRECISIONS)
    assert run == list(N.MATMUL_PRECISIONS) and skipped == {}
    spec = specs.get("A100-SXM4-80GB")
    assert N._peak_for(spec, "fp64") == ("fp64_tc", spec.peak_flops("fp64_tc"))  # DGEMM runs on DMMA
    assert N._peak_for(specs.get("T4"), "fp64") == ("fp64", specs.get("T4").peak_flops("fp64"))
    assert N._peak_for(specs.get("T4"), "tf32") is None and N._peak_for(None, "fp32") is None


def test_recorded_results_is_a_list():
    assert isinstance(N.recorded_results(), list)


def test_chapter_tables_and_checks():
    rows = {r["format"]: r for r in N.format_rows()}
    # TF32 and BF16 share FP32's normal range; only the subnormal tail differs
    assert rows["FP32"]["decades (normal)"] == rows["TF32"]["decades (normal)"] == rows["BF16"]["decades (normal)"]
    assert float(rows["FP32"]["decades (with subnormals)"]) > float(rows["TF32"]["decades (with subnormals)"]) \
        > float(rows["BF16"]["decades (with subnormals)"])
    assert rows["INT8"]["min normal"] == "" and rows["FP16"]["max"] == "6.55e+04"
    demo = N.rounding_rows([1024.5])
    assert demo == [{"x (FP32)": "1024.5", "BF16": "1024", "FP16": "1024", "TF32 nearest": "1025",
                     "TF32 truncate": "1024"}]
    assert N.torch_agreement(count=2000, seed=1) == {"bf16": True, "fp16": True}
    sweep = N.error_vs_k(ks=(16, 256), m=16, n=16, trials=1, seed=0)
    assert [r["K"] for r in N.error_rows(sweep)] == ["16", "256"]
    checks = N.error_checks(sweep)
    assert len(checks) == 4 and all(isinstance(v, bool) for v in checks.values())
    census = {r["format"]: r for r in N.census_rows(N.gradient_like_values(2000, seed=0))}
    assert census["FP32"]["zero (%)"] == "0.0" and float(census["FP16"]["zero (%)"]) > 10
    peaks = {r["GPU"]: r for r in N.tf32_peak_rows()}
    assert peaks["A100-SXM4-80GB"]["TF32/FP32"] == "8.0" and "T4" not in peaks
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    N.plot_accumulation(ax, N.accumulation_curves(k_max=64))
    assert len(ax.get_lines()) == len(N.ACCUMULATION_CASES) + 2
    plt.close(fig)


def test_tf32_view_without_a_gpu_shows_the_published_a100_numbers(monkeypatch):
    import matplotlib.pyplot as plt

    from ampere import device, tables

    monkeypatch.setattr(tables, "show_md", lambda text: None)
    monkeypatch.setattr(plt, "show", lambda: None)
    pts = N.show_tf32(device.DeviceInfo("cpu", "test CPU"))
    assert {p.kind for p in pts} <= {"recorded", "published"} and pts
    by = {p.what.split()[0]: p for p in pts if p.kind == "published"}
    assert 0.99 < by["FP32"].ratio < 1.01 and 0.8 < by["TF32"].ratio < 0.9  # 2 x 10240^3 / 0.11 s vs 19.5 TFLOP/s
    assert all(p.source and "pytorchcudanotes" not in p.source for p in pts)
    plt.close("all")
