"""Pipeline schedules simulated (ampere/megatron/schedules.py; chapter: Megatron-LM, section Pipeline
schedules)."""

from __future__ import annotations

import pytest

from ampere import megatron as M


@pytest.mark.parametrize("kind,p,m,v", [
    ("gpipe", 4, 8, 1), ("gpipe", 2, 3, 1), ("1f1b", 4, 8, 1), ("1f1b", 8, 5, 1), ("1f1b", 1, 4, 1),
    ("interleaved", 4, 8, 2), ("interleaved", 4, 4, 4), ("interleaved", 8, 16, 3),
])
def test_simulated_bubble_equals_the_formula(kind, p, m, v):
    res = M.simulate_schedule(kind, p, m, v)
    assert res.bubble_fraction == pytest.approx(M.bubble_formula(p, m, v), abs=1e-12)
    # every microbatch runs forward and backward once per chunk on every device
    for r in range(p):
        ops = [o for o in res.ops if o["device"] == r]
        assert len(ops) == 2 * m * v


def test_in_flight_activations_gpipe_1f1b_interleaved():
    assert M.simulate_schedule("gpipe", 4, 12).max_in_flight[0] == 12
    assert M.simulate_schedule("1f1b", 4, 12).max_in_flight == [4, 3, 2, 1]
    p, v = 8, 2
    res = M.simulate_schedule("interleaved", p, 16, v)
    assert res.max_in_flight[0] == pytest.approx(p * (1 + (p - 1) / (p * v)))


def test_unbalanced_pipeline_matches_the_closed_form_used_by_estimate():
    p, m = 8, 32
    stage_times = [(1.0, 2.0)] * (p - 1) + [(1.1, 2.2)]
    res = M.simulate_schedule("1f1b", p, m, stage_times=stage_times)
    assert res.makespan == pytest.approx(m * 3.3 + (p - 1) * 3.0)


def test_schedule_errors():
    with pytest.raises(ValueError, match="multiple of pipeline"):
        M.schedule_ops("interleaved", 4, 6, 2)
    with pytest.raises(ValueError, match="kind must be one of"):
        M.schedule_ops("zero-bubble", 4, 8)
    with pytest.raises(ValueError, match="t_comm must be a finite number"):
        M.simulate_schedule("1f1b", 4, 8, t_comm=float("nan"))
    with pytest.raises(ValueError, match="pipeline must be an integer <= "):
        M.simulate_schedule("1f1b", 10**12, 8)
    with pytest.raises(ValueError, match="microbatches must be an integer <= "):
        M.schedule_ops("gpipe", 4, 10**12)
    with pytest.raises(ValueError, match="operations"):
        M.schedule_ops("interleaved", 4096, 4096, 64)
    with pytest.raises(ValueError, match="t_fwd must be > 0"):
        M.simulate_schedule("1f1b", 4, 8, t_fwd=0.0)
    with pytest.raises(TypeError, match="stage_times"):
        M.simulate_schedule("1f1b", 2, 4, stage_times="1,2")
    with pytest.raises(ValueError, match=r"stage_times\[1\]\[0\] must be > 0"):
        M.simulate_schedule("1f1b", 2, 4, stage_times=[(1.0, 2.0), (0.0, 2.0)])
    with pytest.raises(ValueError, match="needs kind='interleaved'"):
        M.schedule_ops("1f1b", 4, 8, 2)


def test_communication_delays_the_pipeline():
    a = M.simulate_schedule("1f1b", 4, 8)
    b = M.simulate_schedule("1f1b", 4, 8, t_comm=0.1)
    assert b.makespan > a.makespan

