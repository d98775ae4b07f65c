"""Tests of ampere.interconnect.latency: what a tiny all-reduce costs, beside the published logs.

Chapter: NVLink, NVSwitch and collectives.
"""

from __future__ import annotations

import numpy as np
import pytest

from ampere import fabrics
from ampere import interconnect as ic


def test_tiny_model_is_overhead_plus_hops_and_grows_with_gpus():
    for n in range(2, 9):
        assert ic.tiny_all_reduce_model_s(n) == pytest.approx(
            fabrics.A100_INTRA_OVERHEAD_S + 2 * (n - 1) * fabrics.A100_INTRA_LATENCY_S, rel=1e-3)
    t = [ic.tiny_all_reduce_model_s(n) for n in range(2, 9)]
    assert all(a < b for a, b in zip(t, t[1:]))
    assert ic.tiny_all_reduce_model_s(1) == 0.0
    # across nodes NCCL takes the faster of ring and tree: the tree's log2 N network hops
    across = [ic.tiny_all_reduce_model_s(8 * N, N) for N in (2, 4, 8, 16)]
    steps = np.diff(across)
    assert np.allclose(steps, 2 * fabrics.INTER_LATENCY_S, rtol=1e-6)
    assert ic.tiny_all_reduce_model_s(np.int64(8)) == ic.tiny_all_reduce_model_s(8)


def test_single_process_mode_is_the_launch_loop():
    per_gpu = ic.single_process_launch_s()
    assert 2e-6 < per_gpu < 8e-6
    assert ic.tiny_all_reduce_model_s(8, launch="single-process") == pytest.approx(8 * per_gpu)
    # with two GPUs the loop is shorter than the collective itself
    assert ic.tiny_all_reduce_model_s(2, launch="single-process") == ic.tiny_all_reduce_model_s(2)


def test_the_former_model_was_71_us_on_8_gpus():
    assert 65e-6 < ic.former_alpha_model_s(8) < 75e-6
    assert ic.former_alpha_model_s(8) > 3 * ic.tiny_all_reduce_model_s(8)


def test_latency_checks_hold_within_ten_percent_where_held_out():
    checks = ic.latency_checks()
    roles = {c.role for c in checks}
    assert roles == {"derived from", "held out", "other network", "other GPU"}
    derived = [c for c in checks if c.role == "derived from"]
    assert all(c.ratio == pytest.approx(1.0, abs=1e-4) for c in derived)  # up to the 8 bytes of transfer
    held = [c for c in checks if c.role == "held out"]
    assert len(held) >= 8 and all(abs(c.ratio - 1) < 0.1 for c in held)
    # the model does not claim the EFA network: an order of magnitude off there
    efa = next(c for c in checks if "EFA" in c.what)
    assert efa.ratio < 0.3
    assert any(c.launch == "single-process" for c in held)


def test_rows_are_tables_with_labels_not_keys():
    from .test_rows import _bib_keys

    keys = _bib_keys()
    for rows in (ic.latency_rows(), ic.derivation_rows()):
        assert rows and all(isinstance(v, str) for r in rows for v in r.values())
        assert not any(k == r["source"] for r in rows for k in keys)
    assert len(ic.derivation_rows()) == 4


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(gpus=0), ValueError, "gpus must be an integer >= 1"),
    (dict(gpus=8.0), TypeError, "gpus must be an integer"),
    (dict(gpus=8, nodes=3), ValueError, "multiple of nodes"),
    (dict(gpus=16), ValueError, "at most 8"),
    (dict(gpus=8, launch="threads"), ValueError, "launch"),
    (dict(gpus=8, network="DGX"), TypeError, "NodeNetwork"),
])
def test_tiny_model_refuses_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        ic.tiny_all_reduce_model_s(**kwargs)
    with pytest.raises(ValueError, match="gpus"):
        ic.former_alpha_model_s(0)
