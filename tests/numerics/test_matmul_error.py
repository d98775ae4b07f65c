"""Tests of ampere.numerics.matmul_error: emulated matmuls, errors and bounds (chapter: TF32 and the
precision formats)."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ampere import numerics as N  # noqa: E402


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
    # the exact form: (1 + u_in)^2 (1 + gamma_K) - 1, with the cross term (2 u_in + u_in^2) gamma_K
    g = 100 * u32 / (1 - 100 * u32)
    assert N.dot_error_bound(100, "tf32", "fp32") == pytest.approx((1 + u_tf32) ** 2 * (1 + g) - 1, rel=1e-12)
    assert N.dot_error_bound(100, "tf32", "fp32") > 2 * u_tf32 + u_tf32**2 + g
    with pytest.raises(ValueError, match="k=10000: the worst bound"):  # k u >= 1: no worst-case bound
        N.dot_error_bound(10_000, "fp16", "fp16")
    with pytest.raises(TypeError, match="k must be an integer"):
        N.dot_error_bound(2.5)
    assert N.dot_error_bound(1024, "fp16", "fp16", "probabilistic") < N.dot_error_bound(1024, "fp16", "fp16", "worst")
    assert N.max_k_for_error(0.01, "fp16", "fp16") == 20  # 20 u / (1 - 20 u) = 0.0098, 21 -> 0.0103
    assert N.max_k_for_error(1e-4, "tf32", "fp32") == 0  # the input rounding alone exceeds 1e-4
    for tol, inputs, acc, model in [(0.01, "fp16", "fp16", "probabilistic"), (2e-3, "tf32", "fp32", "worst")]:
        k = N.max_k_for_error(tol, inputs, acc, model)
        assert N.dot_error_bound(k, inputs, acc, model) <= tol < N.dot_error_bound(k + 1, inputs, acc, model)
    with pytest.raises(ValueError, match="model must be one of .*got 'typical'"):
        N.dot_error_bound(4, model="typical")
    with pytest.raises(ValueError, match="tol must be > 0, got 0"):
        N.max_k_for_error(0)
    with pytest.raises(ValueError, match="tol must be <= 1"):
        N.max_k_for_error(2.0)


def test_lambda_one_is_a_rule_of_thumb_and_a_confidence_picks_lambda_per_k():
    from ampere.numerics import matmul_error

    # Higham and Mary: P(lambda) = 1 - 2 exp(-lambda^2 (1-u)^2 / 2) per chain, Q = 1 - K (1 - P) for K chains
    assert N.probabilistic_confidence(1, 1.0, "fp16") == 0.0  # 1 - 2 e^-0.5 < 0: no guarantee at lambda = 1
    u = 2.0**-11
    assert N.probabilistic_confidence(1, 3.26, "fp16") == pytest.approx(1 - 2 * math.exp(-(3.26 * (1 - u)) ** 2 / 2))
    assert N.probabilistic_confidence(10, 4.0, "fp16") == pytest.approx(1 - 20 * math.exp(-(4 * (1 - u)) ** 2 / 2))
    k99 = N.max_k_for_error(0.01, "fp16", "fp16", "probabilistic", confidence=0.99)
    assert N.max_k_for_error(0.01, "fp16", "fp16") <= k99 < N.max_k_for_error(0.01, "fp16", "fp16", "probabilistic")
    lam = matmul_error._lambda_for(k99, 0.99, u)
    assert N.probabilistic_confidence(k99, lam, "fp16") == pytest.approx(0.99)
    assert N.dot_error_bound(k99, "fp16", "fp16", "probabilistic", lam) <= 0.01
    with pytest.raises(ValueError, match="confidence"):
        N.max_k_for_error(0.01, "fp16", "fp16", "worst", confidence=0.99)
