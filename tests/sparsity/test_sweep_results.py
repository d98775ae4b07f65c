"""ampere.sparsity.sweep_results: the rows and the verdict of a recorded A100 result."""

import pytest

from ampere import results
from ampere import sparsity as sp


def test_sweep_table_and_verdict_for_a_recorded_a100_result():
    from ampere.timing import Measurement

    def rec(kind, backend, ms, dtype="float16", shape=(16384, 8192, 8192), derived=None):
        n, k, m = shape
        meas = Measurement(label=kind, samples_s=[ms / 1e3] * 10, mode="cuda-events", device="cuda:0")
        return {"tokens": n, "in_features": k, "out_features": m, "label": "", "dtype": dtype,
                "flops": 2.0 * n * k * m, "kind": kind, "backend": backend, "measurement": meas.to_dict(),
                "derived": derived or {}}

    records = [rec("dense", "cublas", 8.0), rec("compress", "cusparselt", 2.0),
               rec("sparse", "cusparselt", 7.0, derived={"rel_err": 1e-3, "numerics_ok": True}),
               rec("dense", "cublas", 0.1, shape=(32, 4096, 4096)),
               rec("sparse", "cusparselt", 0.08, shape=(32, 4096, 4096), derived={"numerics_ok": True})]
    device = {"backend": "cuda", "name": "NVIDIA A100-SXM4-80GB", "compute_capability": [8, 0]}
    result = results.make_result("sparsity", device, {}, records)
    table = {r["shape"].split(" ")[0]: r for r in sp.sweep_table(result)}
    big = table["16384x8192->8192"]
    assert big["speedup"] == pytest.approx(8 / 7) and big["compress_ms"] == pytest.approx(2.0)
    assert big["model_bound"] == pytest.approx(2.0)
    assert 1.7 < table["32x4096->4096"]["model_bound"] < 16 / 9
    (line,) = sp.verdict(result)
    assert "below the 1.2x target" in line and "% of the sparse peak" in line and "is the limit" in line
