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


def test_an_all_reduce_is_never_compared_with_a_reference_of_another_size():
    """The probe runs on the busbw plateau (4 and 8 GiB); references at 256 MiB, at another GPU count, or
    without a size (a sweep's peak) are never paired with it, and every row states the sizes."""
    from ampere import results
    from ampere.report import references

    gib4, gib8, mib256 = 4 * 2**30, 8 * 2**30, 256 * 2**20
    figs = [{"probe": "allreduce", "key": extract.allreduce_key(8, s), "size_bytes": s, "label": "ar",
             "value": 200.0, "unit": "GB/s"} for s in (gib4, gib8)]
    refs = [{"key": extract.allreduce_key(8, mib256), "size_bytes": mib256, "value": 150.0, "gpu": "A100-SXM4-80GB",
             "provenance": "p"},
            {"key": extract.allreduce_key(8, gib4), "size_bytes": gib4, "value": 232.0, "gpu": "A100-SXM4-80GB",
             "provenance": "p"},
            {"key": extract.allreduce_key(4, gib8), "size_bytes": gib8, "value": 240.0, "gpu": "A100-SXM4-80GB",
             "provenance": "p"},
            # a forged record whose key says 8 GiB but whose size is 256 MiB: refused on the size
            {"key": extract.allreduce_key(8, gib8), "size_bytes": mib256, "value": 100.0, "gpu": "A100-SXM4-80GB",
             "provenance": "p"}]
    rows = {r["size_bytes"]: r for r in comparison.compare(figs, "A100-SXM4-80GB", refs)}
    assert rows[gib4]["reference"] == 232.0 and rows[gib4]["reference_sizes"] == [gib4]
    assert rows[gib8]["reference"] is None and rows[gib8]["status"] == "no reference"
    for r in rows.values():
        assert all(s == r["size_bytes"] for s in r["reference_sizes"])
    assert "at 4 GiB" in comparison.summary_rows([rows[gib4]])[0]["reference"]
    # published all-reduce records: a point only where the size it was read at is known
    for rec in results.records(benchmark="all-reduce", kind="published"):
        for point in references.allreduce_points(rec):
            assert point["key"] == extract.allreduce_key(rec.params["gpus"], point["size_bytes"])
    sized = {f["key"] for f in references.published_figures() if f["key"].startswith("allreduce/")}
    assert all(comparison.size_of({"key": k}) for k in sized)
    context = references.unsized_allreduce(["A100-SXM4-80GB", "H200-SXM-141GB"])
    assert {r["measured at"] for r in context} >= {"peak of a sweep up to 4 GiB", "size not stated"}
    assert extract.allreduce_sizes(80 * 2**30) == [gib4, gib8] and extract.allreduce_sizes(20e9) == [gib4]
    assert extract.allreduce_sizes(None) == [2**30] and extract.size_label(mib256) == "256 MiB"
