"""ampere.report.comparison: the comparison and its flags, configuration differences, peak labels."""

import pytest

from ampere import specs
from ampere.report import comparison, extract

from .helpers import _fig, _info, _rec, _report_result


def test_compare_flags_more_than_ten_percent_below_the_reference():
    recorded = [_rec("matmul/bf16/n8192", 800.0), _rec("matmul/bf16/n8192", 780.0), _rec("matmul/bf16/n8192", 820.0),
                _rec("matmul/bf16/n8192", 270.0, gpu="A100-SXM4-80GB"), _rec("matmul/fp16/n8192", 790.0)]
    figs = [_fig("matmul/bf16/n8192", 700.0, 989.4), _fig("matmul/fp16/n8192", 720.0, 989.4),
            _fig("matmul/tf32/n8192", 300.0, 494.7)]
    rows = {r["key"]: r for r in comparison.compare(figs, "H200-SXM-141GB", recorded)}
    bf16 = rows["matmul/bf16/n8192"]
    assert bf16["reference"] == 800.0 and bf16["reference_n"] == 3  # median of the same GPU's records
    assert bf16["flag"] and bf16["status"] == "below reference" and bf16["pct_of_reference"] == pytest.approx(87.5)
    assert bf16["pct_of_model"] == pytest.approx(100 * 700 / 989.4)
    assert bf16["others"] == [{"gpu": "A100-SXM4-80GB", "value": 270.0, "n": 1, "ratio": pytest.approx(700 / 270)}]
    assert not rows["matmul/fp16/n8192"]["flag"] and rows["matmul/fp16/n8192"]["status"] == "ok"  # 8.9 % below
    assert rows["matmul/tf32/n8192"]["status"] == "no reference" and rows["matmul/tf32/n8192"]["reference"] is None


def test_compare_direction_flaggable_and_threshold():
    rec = [_rec("lat", 1.0), _rec("knee", 1.0)]
    figs = [_fig("lat", 1.2, higher_is_better=False), _fig("knee", 0.5, flaggable=False)]
    rows = comparison.compare(figs, "H200-SXM-141GB", rec)
    assert rows[0]["flag"] and not rows[1]["flag"] and rows[1]["status"] == "ok"
    for bad in (0, 1, 1.5, -0.1):
        with pytest.raises(ValueError, match="threshold"):
            comparison.compare([], "x", [], threshold=bad)


def test_mig_slice_is_its_own_gpu_and_config_differences():
    assert extract._gpu_id({"spec_name": "A100-SXM4-80GB", "mig_instance": "1g.10gb"}) == "A100-SXM4-80GB MIG 1g.10gb"
    ref = _report_result({}, info=_info(driver_version="570.0", power_limit_w=700.0))
    rows = comparison.config_differences(_info(power_limit_w=500.0).to_dict(), [ref])
    fields = {r["field"]: r for r in rows}
    assert fields["power limit (W)"]["this machine"] == 500.0 and fields["power limit (W)"]["reference"] == 700.0
    assert "driver" in fields and "torch" not in fields
    other = _report_result({}, info=_info(spec_name="H100-SXM5-80GB", name="NVIDIA H100 80GB HBM3"))
    assert comparison.config_differences(_info().to_dict(), [other]) == []


def test_fp64_label_and_configuration_fields():
    spec = specs.get("A100-SXM4-80GB")
    assert extract._peak_label(extract._model_precision(spec, "fp64")) == "dense FP64 tensor-core peak"
    assert extract._peak_label("tf32") == "dense TF32 tensor peak"
    assert extract._model_precision(None, "fp64") is None
    fields = dict(comparison.CONFIG_FIELDS)
    assert "ecc_enabled" in fields and "pcie_link" in fields
    ref = _report_result({"matmul/bf16/n8192": 700.0}, info=_info(ecc_enabled=False))
    rows = comparison.config_differences(_info(ecc_enabled=True).to_dict(), [ref])
    assert {"field": "ECC enabled", "this machine": True, "reference": False}.items() <= rows[0].items()
