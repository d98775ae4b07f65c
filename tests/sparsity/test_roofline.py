"""ampere.sparsity.roofline: the peaks and the roofline time model of one Linear layer."""

import pytest

from ampere import sparsity as sp


def test_peak_rows_double_and_match_datasheet():
    rows = sp.peak_rows()
    assert rows and all(r["ratio"] == 2.0 for r in rows if r["sparse"])
    a100 = {r["precision"]: r for r in rows if r["gpu"] == "A100-SXM4-80GB"}
    assert round(a100["fp16"]["sparse"]) == 624 and a100["fp16"]["agrees"] is True
    assert all(r["agrees"] for r in rows if r["agrees"] is not None)


def test_time_model_limits():
    big = sp.LinearShape(16384, 8192, 8192)
    assert sp.speedup_model("A100-SXM4-80GB", big, "fp16", "2:4") == pytest.approx(2.0)
    tiny = sp.LinearShape(1, 8192, 8192)
    s = sp.speedup_model("A100-SXM4-80GB", tiny, "fp16", "2:4")
    assert 1.7 < s < 16 / 9  # weight-bound: bytes ratio 9/16 plus the activation bytes
    t = sp.matmul_time_model("A100-SXM4-80GB", tiny, "fp16", "2:4")
    assert t["bound"] == "memory" and t["kind"] == "2:4"
    # an FP16 CSR kernel runs at the FP16 non-tensor rate (78 of 312 TFLOP/s on an A100): 1 - 1/4
    assert sp.unstructured_break_even("A100-SXM4-80GB", "fp16") == pytest.approx(3 / 4)
    assert sp.unstructured_break_even("A100-SXM4-80GB", "fp16", csr_math="fp32") == pytest.approx(15 / 16)
    assert sp.unstructured_break_even("A100-SXM4-80GB", "bf16") == pytest.approx(7 / 8)  # BF16 SIMT is half FP16's
    uns = sp.matmul_time_model("A100-SXM4-80GB", big, "fp16", "unstructured", sparsity=0.5)
    assert uns["strategy"].startswith("bitmap")
    assert sp.speedup_model("A100-SXM4-80GB", big, "fp16", "unstructured", sparsity=0.5) == pytest.approx(1.0)
    assert sp.speedup_model("A100-SXM4-80GB", big, "fp16", "unstructured", sparsity=0.97) > 1.0
    csr = sp.matmul_time_model("A100-SXM4-80GB", big, "fp16", "unstructured", sparsity=0.5, strategy="csr")
    assert csr["strategy"].startswith("CSR")
    assert sp.speedup_model("A100-SXM4-80GB", big, "fp16", "unstructured", sparsity=0.5,
                            strategy="csr") == pytest.approx(1 / 2)  # half the FLOPs at a quarter of the rate
    assert sp.speedup_model("A100-SXM4-80GB", big, "fp16", "unstructured", sparsity=0.5, strategy="csr",
                            csr_math="fp32") == pytest.approx(1 / 8)
    with pytest.raises(ValueError, match="strategy"):
        sp.matmul_time_model("A100-SXM4-80GB", big, "fp16", "unstructured", strategy="magic")
    curves = sp.speedup_curves(tokens=(1, 1024, 16384))
    assert len(curves["2:4"]) == 3 and curves["2:4"][-1] > curves["unstructured"][-1]


def test_time_model_rejects_bad_input():
    s = sp.LinearShape(8, 16, 16)
    with pytest.raises(ValueError, match="kind"):
        sp.matmul_time_model("A100-SXM4-80GB", s, kind="1:8")
    with pytest.raises(ValueError, match="precision"):
        sp.matmul_time_model("A100-SXM4-80GB", s, precision="fp64")
    with pytest.raises(ValueError, match="no 2:4"):
        sp.matmul_time_model("T4", s, precision="fp16", kind="2:4")
    with pytest.raises(ValueError, match="efficiency"):
        sp.matmul_time_model("A100-SXM4-80GB", s, kind="unstructured", efficiency=0)
    with pytest.raises(ValueError, match="in_features"):
        sp.LinearShape(8, 6, 16)
    with pytest.raises(ValueError, match="tokens"):
        sp.LinearShape(0, 8, 16)


def test_csr_precision_and_break_even_properties():
    assert sp.csr_precision("fp16") == "fp16_simt" and sp.csr_precision("bf16") == "bf16_simt"
    assert sp.csr_precision("tf32") == "fp32" and sp.csr_precision("int8", "fp32") == "fp32"
    with pytest.raises(ValueError, match="csr_math='fp32'"):
        sp.csr_precision("int8")
    with pytest.raises(ValueError, match="csr_math"):
        sp.csr_precision("fp16", "fp64")
    with pytest.raises(ValueError, match="csr_math='fp32'"):  # no catalogued FP16 non-tensor rate on GA102
        sp.unstructured_break_even("RTX-A6000", "fp16")
    rows = sp.break_even_rows(("A100-SXM4-80GB", "H100-SXM5-80GB", "RTX-A6000"))
    for r in rows:
        tensor = float(r["dense tensor"].split()[1])
        cuda = float(r["CSR on CUDA cores"].split()[1])
        assert float(r["break-even (% zeros)"]) == pytest.approx(100 * (1 - cuda / tensor), abs=0.01)
        assert 50 < float(r["break-even (% zeros)"]) < 100  # never at the 50 % that networks tolerate
    assert {r["CSR on CUDA cores"].split()[0] for r in rows if r["GPU"] == "RTX-A6000"} == {"fp32"}
    # efficiency below 1 only raises the break-even; a faster CUDA-core rate lowers it
    for prec in ("fp16", "bf16"):
        be = sp.unstructured_break_even("A100-SXM4-80GB", prec)
        assert sp.unstructured_break_even("A100-SXM4-80GB", prec, efficiency=0.5) > be
        assert sp.unstructured_break_even("A100-SXM4-80GB", prec, csr_math="fp32") >= be
