"""The benches' CUDA control flow on the fake GPUs of tests/fakecuda.py: sizes a CPU could never run (meta
tensors cost nothing), scripted event times, capability gating, out-of-memory handling, bytes counted per
kernel. The numbers asserted follow from the scripted times and the catalogue, never from a real GPU."""

import warnings

import pytest

from ampere import architecture, benchcli, device, hbm, specs

from .fakecuda import fake_cuda  # noqa: F401 (fixture)

FAST = dict(warmup_s=0.0, min_time_s=0.0, max_time_s=5.0)


def _per_call_s(rec_measurement, ms):
    """Seconds per call when every event pair was scripted to ``ms`` around ``calls_per_sample`` calls."""
    return ms / 1e3 / rec_measurement["calls_per_sample"]


def test_matmul_sweep_at_gpu_sizes(fake_cuda):  # noqa: F811
    fake = fake_cuda("A100-SXM4-80GB")
    fake.script_ms([4.0])
    info = device.probe()
    spec = specs.get("A100-SXM4-80GB")
    recs = architecture.matmul_sweep([1024, 8192], ["bf16"], info=info, **FAST)
    recs += architecture.matmul_sweep([1024], ["fp32"], info=info, **FAST)
    assert [(r["precision"], r["n"]) for r in recs] == [("bf16", 1024), ("bf16", 8192), ("fp32", 1024)]
    for r in recs:
        t = _per_call_s(r["measurement"], 4.0)
        assert r["measurement"]["mode"] == "cuda-events" and r["measurement"]["device"] == "cuda:0"
        assert r["tflops"] == pytest.approx(2 * r["n"] ** 3 / t / 1e12)
        assert r["pct_of_peak"] == pytest.approx(100 * r["tflops"] * 1e12 / spec.peak_flops(r["peak_precision"]))
    check = architecture.bf16_peak_check(recs)
    assert check is not None and check["n"] == 8192
    assert fake.allocated[0] == 0  # every operand freed after the sweep


def test_matmul_sweep_out_of_memory_frees_and_skips_larger_sizes(fake_cuda):  # noqa: F811
    fake = fake_cuda("A100-SXM4-80GB")
    fake.gpus[0].props.total_memory = 300 * 10**6  # 3 bf16 operands of 4096^2 fit (100 MB), of 8192^2 not (403 MB)
    with pytest.warns(UserWarning, match="out of memory"):
        recs = architecture.matmul_sweep([4096, 8192], ["bf16"], info=device.probe(), **FAST)
    assert [(r["precision"], r["n"]) for r in recs] == [("bf16", 4096)]
    assert any(e[0] == "oom" for e in fake.timeline) and fake.allocated[0] == 0


@pytest.mark.slow
@pytest.mark.parametrize("model,gated", [("A100-SXM4-80GB", set()), ("T4", {"tf32", "bf16"})])
def test_matmul_bench_gates_on_capabilities(fake_cuda, monkeypatch, model, gated):  # noqa: F811
    fake = fake_cuda(model)
    fake.script_ms([2.0])
    got = []
    monkeypatch.setattr(benchcli, "finish_bench", lambda result, args, summary: got.append(result) or 0)
    # bench_main looks matmul_sweep up in its own file, ampere/architecture/measure.py: patch it there
    monkeypatch.setattr(architecture.measure, "matmul_sweep", _quick_sweep(architecture.matmul_sweep))
    assert architecture.bench_main(["--quick", "--no-save"]) == 0
    result = got[0]
    assert result["device"]["backend"] == "cuda" and result["device"]["name"] == fake.gpu(0).props.name
    measured = {r["precision"] for r in result["records"]}
    assert measured == {"fp32", "tf32", "bf16", "fp16"} - gated
    assert {r["n"] for r in result["records"]} == {1024, 4096, 8192}  # the GPU sizes of --quick


def _quick_sweep(real):
    def sweep(*args, **kwargs):
        kwargs.update(FAST)
        return real(*args, **kwargs)

    return sweep


def test_hbm_bandwidth_counts_bytes_per_kernel_and_retries_oom(fake_cuda):  # noqa: F811
    fake = fake_cuda("A100-SXM4-80GB")
    fake.script_ms([1.0, 2.0, 3.0])  # per call (flushed: one call per sample); median 2 ms
    fake.gpus[0].props.total_memory = 600 * 2**20  # two 320 MiB arrays do not fit, two of 160 MiB do
    spec = specs.get("A100-SXM4-80GB")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        recs = hbm.measure_bandwidth("cuda", quick=True, kernels=["copy", "read"], warmup_s=0.0, min_time_s=0.0)
    by = {r["params"]["kernel"]: r for r in recs}
    copy, read = by["copy"], by["read"]
    n_copy = copy["params"]["array_bytes"]
    assert n_copy == 160 * 2**20 and any("out of memory" in note for note in copy["notes"])
    assert copy["params"]["l2_flushed"] and copy["measurement"]["calls_per_sample"] == 1
    assert copy["measurement"]["median_s"] == pytest.approx(2e-3)
    d = copy["derived"]
    assert (d["bytes_read"], d["bytes_written"], d["bytes_moved"]) == (n_copy, n_copy, 2 * n_copy)
    assert d["bytes_per_s"] == pytest.approx(2 * n_copy / 2e-3)  # a copy reads N and writes N
    assert d["copied_bytes_per_s"] == pytest.approx(n_copy / 2e-3)  # nvbandwidth's N/t
    assert d["pct_of_datasheet"] == pytest.approx(100 * d["bytes_per_s"] / spec.hbm_bytes_per_s)
    r = read["derived"]
    assert r["bytes_written"] == 0 and r["bytes_read"] == read["params"]["array_bytes"]
    assert r["copied_bytes_per_s"] is None
    assert fake.allocated[0] == 0


@pytest.mark.parametrize("model,csl,why", [("H100", False, "sm90"), ("H200", False, "sm90"), ("T4", False, "sm80")])
def test_sparsity_bench_gates_on_the_2to4_backends(fake_cuda, model, csl, why):  # noqa: F811
    from ampere import sparsity

    fake_cuda(model, cusparselt=csl)
    info = device.probe()
    found = sparsity.probe_backend(info)
    assert info.sparse_2to4_backends == () and not found.works and found.backend is None
    assert why in found.summary()


def test_sparsity_tries_cutlass_on_an_a100(fake_cuda):  # noqa: F811
    from ampere import sparsity

    fake_cuda("A100-SXM4-80GB")
    info = device.probe()
    assert info.sparse_2to4_backends == ("cutlass",)
    found = sparsity.probe_backend(info)
    assert "cutlass" in found.summary()  # tried (the fake's meta tensors cannot run it: that is a real GPU's job)


def test_mig_bench_on_a_whole_a100(fake_cuda, monkeypatch):  # noqa: F811
    from ampere import mig

    fake = fake_cuda("A100-SXM4-40GB")
    fake.script_ms([2.0])
    got = []
    monkeypatch.setattr(benchcli, "finish_bench", lambda result, args, summary: got.append(result) or 0)
    assert mig.bench_main(["--quick", "--no-save"]) == 0
    result = got[0]
    assert result["device"]["backend"] == "cuda" and result["device"]["mig_capable"]
    by = {r["params"].get("kernel"): r for r in result["records"] if "kernel" in r["params"]}
    mm, cp = by["matmul"], by["copy"]
    # the copy runs cold on every call (L2 flushed per call), the matmul warm
    assert cp["measurement"]["l2_flushed"] and cp["measurement"]["calls_per_sample"] == 1
    assert cp["measurement"]["median_s"] == pytest.approx(2e-3)
    assert not mm["measurement"]["l2_flushed"]
    n = mm["params"]["n"]
    assert mm["derived"]["flops_per_s"] == pytest.approx(2 * n**3 / mm["measurement"]["median_s"])
    assert fake.nvml.init_calls >= 1
