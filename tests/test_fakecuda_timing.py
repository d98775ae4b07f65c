"""The CUDA branch of ampere.timing.benchmark, driven through the fake torch.cuda and NVML (tests/fakecuda.py)."""

import pytest

from ampere import device, timing

from .fakecuda import fake_cuda  # noqa: F401 (fixture)

QUIET = dict(warmup_s=0.0, min_time_s=0.0)  # no warm-up by time, stop at min_samples


def test_event_milliseconds_become_seconds_per_call(fake_cuda):  # noqa: F811
    fake = fake_cuda("A100-SXM4-80GB")
    fake.script_ms([2.0, 1.0, 3.0, 5.0, 4.0])
    m = timing.benchmark(lambda: None, device="cuda", min_samples=5, max_samples=5, calls_per_sample=1, **QUIET)
    assert m.mode == "cuda-events" and m.device == "cuda:0" and m.calls_per_sample == 1
    assert m.samples_s == pytest.approx([2e-3, 1e-3, 3e-3, 5e-3, 4e-3])
    # distinct min / median / max: a rate from the wrong statistic cannot pass
    assert (m.min_s, m.median_s, max(m.samples_s)) == pytest.approx((1e-3, 3e-3, 5e-3))
    assert m.rate(6e9) == pytest.approx(2e12)  # 6 GFLOP in 3 ms
    assert m.rate(6e9, "min") == pytest.approx(6e12)  # best case: 1 ms
    assert fake.elapsed_calls == 5


def test_a_batched_sample_is_divided_by_its_calls(fake_cuda):  # noqa: F811
    fake = fake_cuda("H200")
    fake.script_ms([8.0, 4.0, 12.0])
    calls = []
    m = timing.benchmark(lambda: calls.append(1), device="cuda:0", min_samples=3, max_samples=3,
                         calls_per_sample=4, **QUIET)
    assert m.samples_s == pytest.approx([2e-3, 1e-3, 3e-3])  # one event pair around 4 calls
    assert fake.elapsed_calls == 3 and len(fake.events()) == 6
    assert len(calls) == 1 + 3 + 3 * 4  # cold call, estimate, samples (no warm-up)


def test_flush_before_every_timed_call(fake_cuda, monkeypatch):  # noqa: F811
    fake = fake_cuda("A100-SXM4-40GB")
    fake.script_ms([1.0, 3.0, 2.0])  # per call; a sample is the mean of its three cold calls
    real_flusher = timing.l2_flusher

    def spy(dev, l2_bytes=None):
        flush = real_flusher(dev, l2_bytes)

        def logged():
            fake.timeline.append(("flush",))
            flush()

        return logged

    monkeypatch.setattr(timing, "l2_flusher", spy)

    def fn():
        fake.timeline.append(("call",))

    m = timing.benchmark(fn, device="cuda", min_samples=2, max_samples=2, calls_per_sample=3, flush_l2=True,
                         **QUIET)
    assert m.l2_flushed and m.calls_per_sample == 3
    assert m.samples_s == pytest.approx([2e-3, 2e-3])
    timed = [e[0] for e in fake.timeline if e[0] in ("flush", "record", "call")]
    timed = timed[timed.index("flush"):]
    # flush, start, call, end, for each of the 2 x 3 timed calls: no call shares an L2 state with another
    assert timed == ["flush", "record", "call", "record"] * 6
    # flushing without an explicit calls_per_sample times one call per sample
    assert timing.benchmark(fn, device="cuda", min_samples=2, max_samples=2, flush_l2=True,
                            **QUIET).calls_per_sample == 1


def test_l2_flusher_allocates_twice_the_reported_l2(fake_cuda):  # noqa: F811
    fake = fake_cuda("H100")
    l2 = fake.gpu(0).props.L2_cache_size
    flush = timing.l2_flusher("cuda:0")
    flush()
    size = 2 * l2 + 2**20
    assert fake.allocated[0] == size + (size // 4) * 4 + 4  # dirty buffer, clean buffer, sink


def test_events_go_on_the_measured_devices_stream(fake_cuda):  # noqa: F811
    fake = fake_cuda("A100-SXM4-80GB", "A100-SXM4-80GB")
    fake.script_ms([1.0])
    assert fake.current == 0
    m = timing.benchmark(lambda: None, device="cuda:1", min_samples=4, max_samples=4, calls_per_sample=1, **QUIET)
    assert m.device == "cuda:1"
    assert fake.timeline[0] == ("device", 1)  # everything, the cold call included, runs under cuda:1's guard
    records = fake.events()
    assert len(records) == 8 and {r[1] for r in records} == {1}  # every event on cuda:1's stream
    assert {e[1] for e in fake.timeline if e[0] == "sync"} == {1}  # and cuda:1 is the one synchronised
    assert fake.current == 0  # the device guard is left


def test_one_nvml_init_and_handles_by_pci_bus_id(fake_cuda):  # noqa: F811
    fake = fake_cuda("A100-SXM4-40GB", "H200", visible=[1])  # CUDA_VISIBLE_DEVICES=1: cuda:0 is NVML's GPU 1
    for _ in range(3):
        m = timing.benchmark(lambda: None, device="cuda:0", min_samples=2, max_samples=2, **QUIET)
    info = device.probe()
    assert fake.nvml.init_calls == 1 and fake.nvml.shutdown_calls == 0
    assert {kind for kind, _ in fake.nvml.handle_lookups} == {"pci"}
    assert m.max_sm_clock_mhz == pytest.approx(fake.gpu(0).spec.boost_clock_hz / 1e6)  # the H200's clock
    assert info.name == "NVIDIA H200" and info.sm_clock_max_hz == fake.gpu(0).spec.boost_clock_hz
    assert info.power_limit_w == fake.gpu(0).spec.tdp_w
    device._nvml_shutdown()  # what atexit runs
    assert fake.nvml.shutdown_calls == 1
    device.probe()
    assert fake.nvml.init_calls == 2  # after a shutdown, the next user initialises again


def test_throttling_is_detected_from_nvml_clocks(fake_cuda):  # noqa: F811
    fake = fake_cuda("A100-SXM4-80GB")
    top = fake.gpu(0).spec.boost_clock_hz / 1e6
    fake.nvml.script_clocks(0, [top, 0.7 * top])
    m = timing.benchmark(lambda: None, device="cuda", min_samples=2, max_samples=8, min_time_s=1.0,
                         max_time_s=30.0, warmup_s=0.0, calls_per_sample=1)
    assert m.sm_clocks_mhz == pytest.approx([top, 0.7 * top, top][:len(m.sm_clocks_mhz)])
    assert len(m.sm_clocks_mhz) >= 2  # one reading per round: 2, 2, 4 samples
    assert m.throttled and any("throttled" in w for w in m.warnings)
    fake.nvml.script_clocks(0, [top, 0.8 * top])
    steady = timing.benchmark(lambda: None, device="cuda", min_samples=2, max_samples=8, min_time_s=1.0,
                              max_time_s=30.0, warmup_s=0.0, calls_per_sample=1)
    assert steady.throttled is False


def test_without_nvml_the_clock_is_unknown(fake_cuda):  # noqa: F811
    fake = fake_cuda("T4")
    fake.nvml.init_error = "Driver Not Loaded"
    m = timing.benchmark(lambda: None, device="cuda", min_samples=3, max_samples=3, **QUIET)
    assert m.max_sm_clock_mhz is None and m.sm_clocks_mhz == [] and m.throttled is None


def test_bad_arguments_name_themselves():
    with pytest.raises(TypeError, match="fn"):
        timing.benchmark(None)
    with pytest.raises(TypeError, match="flush_l2"):
        timing.benchmark(lambda: None, flush_l2="yes")
    with pytest.raises(TypeError, match="min_samples"):
        timing.benchmark(lambda: None, min_samples=2.5)
    with pytest.raises(ValueError, match="warmup_s"):
        timing.benchmark(lambda: None, warmup_s=-1)


def test_events_follow_a_side_stream_made_current(fake_cuda):  # noqa: F811
    import torch

    fake = fake_cuda("H100")
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        timing.benchmark(lambda: None, device="cuda", min_samples=2, max_samples=2, **QUIET)
    assert {r[2] for r in fake.events()} == {side.id} != {0}  # the stream the work is enqueued on
    assert torch.cuda.current_stream().id == 0  # restored
