"""The distributed lab (ampere/megatron/lab.py, old path ampere.megatron_lab): the split run agrees with
one process and counts its bytes (chapter: Megatron-LM, section "Run it for real, small")."""

from __future__ import annotations

import dataclasses

import pytest

from ampere.megatron import lab as L

torch = pytest.importorskip("torch")


def test_matches_single_process_fails_beyond_the_bound():
    cfg = L.LabConfig(steps=3)
    tol = L.tolerances(cfg)
    base = L.LabResult(cfg, "gloo", 3.0, 3.0, 0.0, 0.0, 0.0, [3.0, 2.9, 2.8], [3.0, 2.9, 2.8], 0, 0.0, 0.0, 0.0,
                       0.0, 0.0, logit_scale=2.0, grad_scale=0.5)
    assert base.matches_single_process
    assert not dataclasses.replace(base, max_abs_logit_diff=3 * tol["logits"] * 2.0).matches_single_process
    assert not dataclasses.replace(base, max_abs_grad_diff=3 * tol["grads"] * 0.5).matches_single_process
    assert not dataclasses.replace(base, losses=[3.0, 2.9, 2.81]).matches_single_process


def test_lab_matches_single_process_and_counts_bytes():
    pytest.importorskip("torch")

    cfgs = [L.LabConfig(tensor=2, pipeline=1, steps=3), L.LabConfig(tensor=1, pipeline=2, steps=3)]
    tp, pp = L.run_labs(cfgs, backend="gloo", timeout_s=60)
    for r in (tp, pp):
        assert r.matches_single_process, (r.max_abs_grad_diff, r.max_abs_logit_diff)
        assert r.losses[-1] < r.losses[0]
    assert tp.tp_bytes_per_rank == tp.tp_bytes_formula
    assert pp.pp_bytes_per_boundary_per_microbatch == pp.pp_bytes_formula
    assert tp.pp_bytes_formula == 0 and pp.tp_bytes_formula == 0
    with pytest.raises(ValueError, match="same world size"):
        L.run_labs([L.LabConfig(tensor=2), L.LabConfig(tensor=4)])


def test_old_path_is_the_lab_module():
    """``ampere.megatron_lab`` (the module's old path) is this very module: names and monkeypatches agree."""
    import ampere
    from ampere import megatron_lab

    assert megatron_lab is L and ampere.megatron_lab is L
    assert all(hasattr(megatron_lab, name) for name in megatron_lab.__all__)
