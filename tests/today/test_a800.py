"""ampere.today.a800: the A800 from the data, and its slower gradient all-reduce."""

import pytest

from ampere import results, specs, today

A100, A6000, A2000, H100, H200 = today.GPUS


def test_a800_is_an_a100_with_slower_nvlink_from_the_data():
    row = results.table("today-a800")["rows"][0]
    a800, a100 = today.a800_spec(), specs.get(A100)
    assert a800.name == "A800-SXM4-80GB" and a800.nvlink_bytes_per_s == row["value"]
    assert a800.source("nvlink_bytes_per_s") == row["source"] == "heise2022a800"
    assert a800.peak_flops("bf16") == a100.peak_flops("bf16") and a800.hbm_bytes_per_s == a100.hbm_bytes_per_s
    slow, fast = today.gradient_allreduce_time(7e9, a800), today.gradient_allreduce_time(7e9, a100)
    assert 1.45 < slow / fast <= 1.5
    with pytest.raises(ValueError, match="GA100"):
        today.a800_spec("H100-SXM5-80GB")
    with pytest.raises(ValueError, match="NVLink"):
        today.gradient_allreduce_time(7e9, A2000)
    with pytest.raises(ValueError, match="params"):
        today.gradient_allreduce_time(-1, A100)
