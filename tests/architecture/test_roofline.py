"""ampere.architecture.roofline: intensity, ridge points, attainable FLOP/s, the curve."""

import pytest

from ampere import architecture as arch
from ampere import specs


def test_matmul_intensity_and_roofline():
    assert arch.matmul_intensity(4096, 4096, 4096, "bf16") == pytest.approx(4096 / 3)
    assert arch.matmul_intensity(1, 4096, 4096, "fp16") < 1.0  # a matrix-vector product is memory bound
    a100 = specs.get("A100-SXM4-80GB")
    assert arch.attainable_flops(a100, "bf16", 1.0) == pytest.approx(2039e9)
    assert arch.attainable_flops(a100, "bf16", 1e4) == pytest.approx(a100.peak_flops("bf16"))
    ridge = {r["precision"]: r for r in arch.ridge_points(a100)}
    assert ridge["bf16"]["ridge_dram"] == pytest.approx(a100.peak_flops("bf16") / 2039e9)
    assert ridge["bf16"]["ridge_l2"] < ridge["bf16"]["ridge_dram"]
    x, y = arch.roofline_curve(a100, "fp32", points=10)
    assert len(x) == len(y) == 10 and max(y) == pytest.approx(a100.peak_flops("fp32"))
    with pytest.raises(ValueError):
        arch.matmul_intensity(0, 1, 1)
    with pytest.raises(ValueError):
        arch.matmul_intensity(1, 1, 1, "fp7")
    with pytest.raises(ValueError):
        arch.attainable_flops(a100, "bf16", 0.0)
    with pytest.raises(ValueError):
        arch.ridge_points(a100, ["fp8"])


def test_ridge_point_refuses_bad_bandwidths():
    a100 = specs.get("A100-SXM4-80GB")
    assert arch.ridge_point(a100, "bf16") == pytest.approx(a100.peak_flops("bf16") / a100.hbm_bytes_per_s)
    assert arch.ridge_point("A100-SXM4-80GB", "bf16", a100.l2_bytes_per_s) < arch.ridge_point(a100, "bf16")
    for bad in (float("nan"), float("inf"), 0, -1.0):
        with pytest.raises(ValueError, match="bytes_per_s"):
            arch.ridge_point(a100, "bf16", bytes_per_s=bad)
        with pytest.raises(ValueError, match="bytes_per_s"):
            arch.attainable_flops(a100, "bf16", 10.0, bytes_per_s=bad)
    for bad in ("2e12", True):
        with pytest.raises(TypeError, match="bytes_per_s"):
            arch.ridge_point(a100, "bf16", bytes_per_s=bad)
    with pytest.raises(ValueError, match="precision"):
        arch.ridge_point(a100, "fp8")
    with pytest.raises(ValueError, match="intensity"):
        arch.attainable_flops(a100, "bf16", [1.0, float("nan")])
    with pytest.raises(ValueError, match="hi"):
        arch.roofline_curve(a100, "bf16", lo=10, hi=1)
