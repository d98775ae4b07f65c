"""Properties of ampere.timing and ampere.launch (launch: what is refused before any process starts; the
processes themselves are tested in tests/test_launch.py)."""

import math

from hypothesis import given
from hypothesis import strategies as st

from ampere import launch, timing

from .harness import (answers, bad_booleans, bad_floats, bad_ints, bad_names, bad_strings, covers, not_lists,
                      rejects, rejects_any)


def _noop():
    return None


@covers(timing.summarize)
@given(st.lists(st.floats(1e-9, 10), min_size=1, max_size=40), st.one_of(not_lists(), st.just([]),
                                                                       st.just([math.nan]), st.just([-1.0])))
def test_summarize(samples, bad):
    out = answers(timing.summarize, samples, type_=dict)
    assert out["n"] == len(samples) and out["min_s"] <= out["median_s"] <= max(samples)
    assert out["p25_s"] <= out["median_s"] <= out["p75_s"] and out["iqr_s"] >= 0
    rejects(timing.summarize, "samples_s", bad)
    assert timing.summarize([0.0, 0.0])["rel_iqr"] == 0.0  # all equal: no spread, even at zero


@covers(timing.Measurement)
@given(st.lists(st.floats(1e-6, 1.0), min_size=1, max_size=20), st.data())
def test_measurement(samples, data):
    m = answers(timing.Measurement, label="m", samples_s=samples, type_=timing.Measurement)
    assert m.min_s <= m.median_s and m.rate(1e9) > 0 and m.rate(0) == 0
    assert timing.Measurement.from_dict(m.to_dict()).samples_s == m.samples_s
    valid = {"label": "m", "samples_s": samples}
    rejects_any(data, timing.Measurement, valid, {
        "samples_s": st.one_of(not_lists(), st.just([]), st.just([-1.0])),
        "calls_per_sample": bad_ints(1, timing.MAX_CALLS_PER_SAMPLE), "mode": bad_names(timing.MODES),
        "l2_flushed": bad_booleans(), "timed_out": bad_booleans(), "warmup_s": bad_floats(0.0, strict=False),
        "label": bad_strings(allow_empty=True), "params": not_lists(),
        "max_sm_clock_mhz": bad_floats(0.0, timing.MAX_CLOCK_MHZ).filter(lambda v: v is not None)})
    rejects(m.rate, "amount", -1.0)
    rejects(m.rate, "statistic", 1.0, statistic="mean")


@covers(timing.benchmark)
@given(st.data())
def test_benchmark_refuses_bad_settings_at_once(data):
    rejects_any(data, timing.benchmark, {"fn": _noop, "min_time_s": 0.0, "max_time_s": 0.01}, {
        "fn": st.one_of(st.integers(), st.none(), st.text(max_size=3)),
        "min_samples": bad_ints(1, timing.MAX_SAMPLES), "max_samples": bad_ints(1, timing.MAX_SAMPLES),
        "max_time_s": bad_floats(0.0, timing.MAX_TIME_S), "warmup_s": bad_floats(0.0, timing.MAX_WARMUP_S,
                                                                                strict=False).filter(
                                                                                    lambda v: v is not None),
        "calls_per_sample": bad_ints(1, timing.MAX_CALLS_PER_SAMPLE).filter(lambda v: v is not None),
        "target_sample_s": bad_floats(0.0, timing.MAX_TARGET_SAMPLE_S),
        "flush_l2": bad_booleans(), "l2_bytes": bad_ints(1, timing.MAX_L2_BYTES).filter(lambda v: v is not None),
        "device": st.sampled_from(["", "NoSuchDevice", 3, None]), "label": bad_strings(allow_empty=True),
    }, within_s=2.0)
    # the issue: min_time_s larger than max_time_s ran; now refused, naming both
    lo = data.draw(st.floats(0.01, 10.0))
    err = rejects(timing.benchmark, "min_time_s", _noop, min_time_s=lo + 1.0, max_time_s=lo)
    assert "max_time_s" in str(err)


@covers(timing.l2_flusher)
@given(bad_ints(1, timing.MAX_L2_BYTES).filter(lambda v: v is not None))
def test_l2_flusher(bad):
    flush = answers(timing.l2_flusher, "cpu", type_=object)
    assert callable(flush) and flush() is None
    rejects(timing.l2_flusher, "l2_bytes", "cpu", l2_bytes=bad)
    rejects(timing.l2_flusher, "device", "NoSuchDevice")


def test_benchmark_answers_a_finite_measurement():
    m = answers(timing.benchmark, _noop, min_time_s=0.0, max_time_s=0.05, warmup_s=0.0, type_=timing.Measurement)
    assert m.n >= 1 and m.median_s >= 0 and m.mode == "host"


@covers(launch.spawn)
@given(st.data())
def test_spawn_refuses_bad_arguments_before_any_process(data):
    from tests import launch_workers

    rejects_any(data, launch.spawn, {"fn": launch_workers.all_reduce_sum, "world_size": 2, "args": (4,)}, {
        "fn": st.one_of(st.integers(), st.none(), st.just(lambda ctx: 1)),
        "world_size": bad_ints(1, launch.MAX_WORLD_SIZE),
        "timeout_s": bad_floats(0.0, launch.MAX_TIMEOUT_S), "startup_s": bad_floats(0.0, launch.MAX_TIMEOUT_S),
        "backend": bad_names(launch.BACKENDS).filter(lambda v: v is not None),
        "args": st.one_of(st.just([4]), st.just((lambda: 1,)), st.integers()),
        "validate": st.one_of(st.integers(), st.text(min_size=1, max_size=3)),
    }, within_s=3.0)


@covers(launch.default_backend, launch.RankContext, launch.max_wall_s)
@given(st.integers(1, 8), st.floats(0.1, 1000), st.data())
def test_small_helpers(world, timeout, data):
    rank = data.draw(st.integers(0, world - 1))
    ctx = answers(launch.RankContext, rank, world, "gloo", type_=launch.RankContext)
    assert ctx.rank == rank and str(ctx.device) == "cpu"
    rejects(launch.RankContext, "rank", world, world, "gloo")
    rejects(launch.RankContext, "world_size", 0, data.draw(bad_ints(1, launch.MAX_WORLD_SIZE)), "gloo")
    rejects(launch.RankContext, "backend", 0, world, data.draw(bad_names(launch.BACKENDS)))
    assert launch.max_wall_s(timeout, startup_s=1.0) > timeout
    rejects(launch.max_wall_s, "timeout_s", data.draw(bad_floats(0.0, launch.MAX_TIMEOUT_S)))
    rejects(launch.default_backend, "world_size", data.draw(bad_ints(1, launch.MAX_WORLD_SIZE)))
    assert answers(launch.default_backend, world, type_=str) in launch.BACKENDS
