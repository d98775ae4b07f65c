"""ampere.architecture.peaks: per-SM resources, peak tables, the datasheet validation."""

import pytest

from ampere import architecture as arch


def test_sm_resources_a100():
    r = arch.sm_resources("A100-SXM4-80GB")
    assert r["FP32 lanes/SM"] == 64 and r["tensor cores/SM"] == 4 and r["FMA/clk per tensor core"] == 256
    assert r["L1+shared KiB/SM"] == 192 and r["registers KiB/SM"] == 256 and r["L2 MiB"] == 40


def test_peak_rows_and_datasheet_validation():
    rows = arch.peak_rows(["A100-SXM4-80GB"])
    by = {(r["precision"], r["sparse"]): r for r in rows}
    assert ("fp64", True) not in by and by[("bf16", True)]["datasheet"] == "624"
    assert by[("tf32", False)]["derived_tflops"] == pytest.approx(155.9, abs=0.05)
    text, ok = arch.validate_datasheets()
    assert ok and "MISMATCH" not in text and "datasheet figures checked" in text


def test_chapter_tables():
    peaks = {r["precision"]: r for r in arch.peak_table("A100-SXM4-80GB")}
    assert peaks["bf16"]["derived TFLOP/s"] == "311.9" and peaks["bf16 sparse"]["datasheet"] == "624"
    # the non-tensor 16-bit rates of the CUDA cores, right after FP32 (A100 whitepaper: 78 and 39 TFLOP/s)
    order = list(peaks)
    assert order.index("fp16_simt") == order.index("fp32") + 1 and peaks["fp16_simt"]["cores"] == "CUDA"
    assert peaks["fp16_simt"]["derived TFLOP/s"] == "78.0" and peaks["fp16_simt"]["agrees"] == "yes"
    assert peaks["bf16_simt"]["datasheet"] == "39" and peaks["bf16_simt"]["FMA/clk/SM"] == 128
    cat = {r["GPU"]: r for r in arch.catalogue_peaks()}
    assert cat["T4"]["bf16"] == "" and cat["H100-SXM5-80GB"]["fp8"] != "" and cat["A100-SXM4-80GB"]["SMs"] == 108
    notes = arch.datasheet_notes()
    assert notes and all(n["why"] for n in notes) and any("2496" in n["figure"] for n in notes)
    sm = {r[""]: r for r in arch.sm_table()}
    assert sm["tensor cores/SM"]["A100-SXM4-80GB"] == 4 and sm["tensor cores/SM"]["V100-SXM2-32GB"] == 8
