"""Bad input raises ValueError/TypeError naming the argument, across the public API of ampere.hbm (every
file of the package). Chapter: HBM and the memory hierarchy."""

from __future__ import annotations

import pytest

from ampere import hbm


@pytest.mark.parametrize("call,exc", [
    (lambda: hbm.decode_bound("7B", batch=0), ValueError),
    (lambda: hbm.decode_bound("7B", batch=1.0), TypeError),
    (lambda: hbm.decode_bound("7B", context=-1), ValueError),
    (lambda: hbm.decode_bound("7B", compute_precision="fp12"), ValueError),
    (lambda: hbm.decode_bound("llama-7b-v9"), ValueError),
    (lambda: hbm.decode_bound(7e9), TypeError),
    (lambda: hbm.roofline_ops(0), ValueError),
    (lambda: hbm.attainable_flops(float("nan")), ValueError),
    (lambda: hbm.sweep_footprints(2**20, points=0), ValueError),
    (lambda: hbm.l2_sweep_model("abc"), TypeError),
    (lambda: hbm.l2_sweep_model([0.0]), ValueError),
    (lambda: hbm.measure_bandwidth("cpu", kernels="copy"), TypeError),
    (lambda: hbm.measure_bandwidth("cpu", array_bytes=1.5), TypeError),
    (lambda: hbm.measure_bandwidth("tpu"), ValueError),  # named, not torch's RuntimeError
    (lambda: hbm.measure_bandwidth(3), TypeError),
    (lambda: hbm.measure_l2_sweep("cpu", footprints="64k"), TypeError),
    (lambda: hbm.measure_l2_sweep("cpu", total_bytes=0, footprints=[65536]), ValueError),
    (lambda: hbm.show_bandwidth(None, measure="no"), TypeError),
    (lambda: hbm.bandwidth_table("A100-SXM4-80GB"), TypeError),
    (lambda: hbm.bandwidth_table(["A100"]), ValueError),
    (lambda: hbm.attainable_flops(1.0, precision="fp12"), ValueError),
    (lambda: hbm.find_knee([1, 2, 3], [1, 2, 3], 1e6, tolerance=0), ValueError),
    (lambda: hbm.l2_sweep_model([1e6], policy=3), TypeError),
])
def test_bad_input_names_the_argument(call, exc):
    with pytest.raises(exc):
        call()
