"""ampere.timing: statistics, the Measurement object and the harness on the CPU."""

import math
import time

import pytest

from ampere import timing


def test_summarize_statistics():
    s = timing.summarize([1.0, 2.0, 3.0, 4.0, 100.0])
    assert s["median_s"] == 3.0 and s["p25_s"] == 2.0 and s["p75_s"] == 4.0
    assert s["iqr_s"] == 2.0 and s["rel_iqr"] == pytest.approx(2 / 3)
    assert s["min_s"] == 1.0 and s["mean_s"] == 22.0 and s["n"] == 5
    for bad in ([], [1.0, -1.0], [1.0, math.nan]):
        with pytest.raises(ValueError):
            timing.summarize(bad)


def test_measurement_rates_warnings_and_round_trip():
    m = timing.Measurement("x", [1e-3] * 8 + [1.2e-3, 3e-3], calls_per_sample=4)
    assert m.median_s == pytest.approx(1e-3) and m.rate(2e9) == pytest.approx(2e12)
    distinct = timing.Measurement("d", [4e-3, 1e-3, 2e-3, 8e-3, 2e-3])  # min 1 ms != median 2 ms != max 8 ms
    assert distinct.rate(1.0, "min") == pytest.approx(1000.0) and distinct.rate(1.0) == pytest.approx(500.0)
    assert distinct.rate(1.0, "median") == pytest.approx(500.0)
    with pytest.raises(ValueError):
        m.rate(1.0, "mean")
    noisy = timing.Measurement("y", [1.0, 2.0, 3.0, 4.0])
    assert any("noisy" in w for w in noisy.warnings) and any("only 4 samples" in w for w in noisy.warnings)
    assert timing.Measurement.from_dict(m.to_dict()).samples_s == m.samples_s
    assert "median 1 ms" in str(m)
    throttled = timing.Measurement("z", [1.0] * 10, sm_clocks_mhz=[1410, 900], max_sm_clock_mhz=1410)
    assert throttled.throttled and any("throttled" in w for w in throttled.warnings)
    assert timing.Measurement("z", [1.0] * 10).throttled is None
    with pytest.raises(ValueError):
        timing.Measurement("bad", [1.0], calls_per_sample=0)


def test_benchmark_times_a_known_sleep():
    m = timing.benchmark(lambda: time.sleep(0.002), label="sleep", warmup_s=0.0, min_samples=5,
                         min_time_s=0.0, calls_per_sample=1)
    assert m.mode == "host" and m.n >= 5 and m.calls_per_sample == 1
    assert 0.0019 < m.median_s < 0.02


def test_benchmark_batches_short_calls_and_never_times_the_first():
    calls = []

    def fn():
        calls.append(time.perf_counter())
        if len(calls) == 1:
            time.sleep(0.05)  # a slow first call (like cuBLAS initialisation) must not be timed

    m = timing.benchmark(fn, warmup_s=0.0, min_samples=10, min_time_s=0.0, target_sample_s=1e-4)
    assert m.calls_per_sample > 1 and m.median_s < 1e-3 and m.min_s < 0.05


def test_benchmark_stops_at_the_time_limit():
    m = timing.benchmark(lambda: time.sleep(0.01), warmup_s=0.0, min_samples=1000, max_samples=1000,
                         min_time_s=0.0, max_time_s=0.2, calls_per_sample=1)
    assert m.timed_out and m.n < 1000 and any("time limit" in w for w in m.warnings)


def test_benchmark_rejects_bad_arguments():
    for kwargs in ({"min_samples": 0}, {"max_time_s": 0}, {"calls_per_sample": 0},
                   {"min_samples": 10, "max_samples": 5}):
        with pytest.raises(ValueError):
            timing.benchmark(lambda: None, **kwargs)


def test_benchmark_with_a_torch_cpu_device():
    import torch

    a = torch.randn(64, 64)
    m = timing.benchmark(lambda: a @ a, device=torch.device("cpu"), warmup_s=0.0, min_time_s=0.0)
    assert m.mode == "host" and m.device == "cpu" and m.median_s > 0
    assert timing.l2_flusher("cpu")() is None  # no-op off CUDA


def test_host_clock_waits_for_an_apple_gpu(monkeypatch):
    """On MPS the host clock is read only after torch.mps.synchronize(), around every sample."""
    import torch

    calls = []
    monkeypatch.setattr(torch.mps, "synchronize", lambda: calls.append("sync"))
    m = timing.benchmark(lambda: calls.append("call"), device="mps", warmup_s=0.0, min_samples=3, max_samples=3,
                         min_time_s=0.0, calls_per_sample=2)
    assert m.mode == "host" and m.device == "mps" and m.n == 3
    timed = calls[calls.index("call") + 1 + 1 + 3 + 1:]  # after cold call, sync, 3 estimate calls, sync
    assert timed == ["sync", "call", "call", "sync"] * 3
