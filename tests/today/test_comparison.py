"""ampere.today.comparison: the five GPUs from the specs; seed 003's table checked."""

import pytest

from ampere import results, today

A100, A6000, A2000, H100, H200 = today.GPUS


def test_spec_rows_come_from_specs():
    rows = {r["GPU"]: r for r in today.spec_rows()}
    assert rows[A100]["BF16"] == pytest.approx(311.87, abs=0.01) and rows[A100]["FP8"] is None
    assert rows[A6000]["cc"] == "8.6" and rows[A2000]["cc"] == "8.6" and rows[A100]["cc"] == "8.0"
    assert rows[A2000]["FP16 sparse"] == pytest.approx(2 * rows[A2000]["BF16"])
    assert rows[A6000]["FP64 TC"] is None and rows[A100]["FP64 TC"] == pytest.approx(19.49, abs=0.01)
    assert rows[H100]["FP8"] == pytest.approx(1978.9, abs=0.1) and rows[A2000]["NVLink GB/s"] is None


def test_seed_spec_check_reads_the_seed_table_and_finds_its_errors():
    table = results.table("today-seed-specs")
    assert table["source"] == "seed003" and len(table["rows"]) == 31
    rows = today.seed_spec_check()
    assert len(rows) == len(table["rows"])
    verdict = {(r["quantity"], r["GPU"]): r["verdict"] for r in rows}
    assert verdict[("FP16 tensor TFLOPS", A2000)].startswith("wrong: the sparse figure")
    assert verdict[("FP16 tensor TFLOPS", A6000)] == "holds (dense)"
    assert verdict[("compute capability", A6000)].startswith("wrong")
    assert verdict[("compute capability", A100)] == "holds"
    assert verdict[("FP64 TFLOPS", A6000)] == "holds" and verdict[("TDP W", A100)].startswith("imprecise")
    assert verdict[("NVLink GB/s", A2000)] == "holds" and verdict[("MIG instances", A6000)] == "holds"
    assert all(verdict[(q, g)] == "holds" for q in ("CUDA cores", "tensor cores", "bandwidth GB/s")
               for g in today.SEED_GPUS)
    assert sum(v.startswith(("holds",)) for v in verdict.values()) == 27
