"""The chapter's views (ampere/megatron/figures.py; chapter: Megatron-LM)."""

from __future__ import annotations

from ampere import megatron as M


def test_layer_gemm_points_show_published_matmuls_without_a_gpu():
    from ampere import device

    pts = M.layer_gemm_points(device.probe(force="cpu"))
    gpus = {p.gpu for p in pts}
    assert {"A100-SXM4-80GB", "H100-SXM5-80GB"} <= gpus
    for p in pts:
        assert p.kind in ("published", "recorded") and p.source and "bekman2024mle" not in p.source
        assert p.model is not None and 0.9 < p.ratio < 1.1  # the model's GEMM input, corrected for waves

