"""Tests of ampere.numerics.measure: the GPU paths exercised on the CPU with tiny sizes, FP64 size caps and
gating on capabilities (chapter: TF32 and the precision formats)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from ampere import numerics as N  # noqa: E402
from ampere.numerics import measure, throughput  # noqa: E402


def test_measure_throughput_on_cpu():
    records, skipped = N.measure_throughput([16, 32], device="cpu", warmup_s=0.0, min_time_s=0.001, max_time_s=0.2)
    assert "tf32" in skipped and "tensor-core" in skipped["tf32"]
    rows = N.throughput_rows(records)
    assert {r["precision"] for r in rows} == {"fp64", "fp32", "bf16", "fp16", "int8"}
    assert all(r["tflops"] > 0 and r["pct_of_peak"] is None for r in rows)
    assert N.tf32_speedups(records) == {}
    with pytest.raises(ValueError, match=r"precisions\[0\] must be one of .*got 'fp8'"):
        N.measure_throughput([16], precisions=["fp8"], device="cpu")


def test_compare_and_probe_on_cpu():
    recs = N.compare_tf32_with_emulation("cpu", ks=[32], m=16, n=16)
    d = recs[0]["derived"]
    assert recs[0]["tf32_active"] is False
    assert d["device_tf32"] == d["device_fp32"] < 1e-5  # a CPU has no TF32: the product is strict FP32
    assert d["emulated_nearest"] < d["emulated_truncate"]
    probe = N.tf32_conversion_probe("cpu", size=32)
    assert probe["derived"]["match"]["unchanged"] == 1.0
    assert probe["derived"]["match_on_ties"]["nearest"] == 0.0
    with pytest.raises(ValueError, match="size must be an integer from 16 to 8192"):
        N.tf32_conversion_probe("cpu", size=8)
    with pytest.raises(ValueError, match=r"ks\[0\] must be an integer >= 1, got 0"):
        N.compare_tf32_with_emulation("cpu", ks=[0], m=16, n=16)


def test_fp64_sizes_are_capped_on_gpus_with_slow_fp64():
    from ampere import specs

    cuda, cpu = torch.device("cuda"), torch.device("cpu")
    sizes = [2048, 4096, 8192]
    assert measure._fp64_sizes(None, cpu, sizes) == sizes
    assert measure._fp64_sizes(specs.get("A100-SXM4-80GB"), cuda, sizes) == sizes  # DGEMM on the FP64 tensor cores
    assert measure._fp64_sizes(specs.get("H100-SXM5-80GB"), cuda, sizes) == sizes
    assert measure._fp64_sizes(specs.get("T4"), cuda, sizes) == [2048]  # 1/32 rate: 8192^3 would take seconds
    assert measure._fp64_sizes(specs.get("RTX-A6000"), cuda, sizes) == [2048]
    assert measure._fp64_sizes(None, cuda, sizes) == [2048]  # a GPU outside the catalogue: stay small


def test_gating_on_capabilities_not_on_gpu_presence():
    from ampere import specs
    from ampere.device import DeviceInfo

    t4 = DeviceInfo(backend="cuda", name="Tesla T4", compute_capability=(7, 5), spec_name="T4")
    run, skipped = measure._supported_precisions(t4, torch.device("cuda"), N.MATMUL_PRECISIONS)
    assert run == ["fp64", "fp32", "fp16"] and set(skipped) == {"tf32", "bf16", "int8"}
    a100 = DeviceInfo(backend="cuda", name="NVIDIA A100-SXM4-80GB", compute_capability=(8, 0), tf32=True,
                      bf16_tensor=True, int8_tensor=True, spec_name="A100-SXM4-80GB")
    run, skipped = measure._supported_precisions(a100, torch.device("cuda"), N.MATMUL_PRECISIONS)
    assert run == list(N.MATMUL_PRECISIONS) and skipped == {}
    spec = specs.get("A100-SXM4-80GB")
    assert throughput._peak_for(spec, "fp64") == ("fp64_tc", spec.peak_flops("fp64_tc"))  # DGEMM runs on DMMA
    assert throughput._peak_for(specs.get("T4"), "fp64") == ("fp64", specs.get("T4").peak_flops("fp64"))
    assert throughput._peak_for(specs.get("T4"), "tf32") is None and throughput._peak_for(None, "fp32") is None
