"""PTD-P layouts (ampere/megatron/layouts.py; chapter: Megatron-LM, section Layouts)."""

from __future__ import annotations

import pytest

from ampere import megatron as M

CFG = M.GPTConfig(layers=24, hidden=2304, heads=24)


@pytest.mark.parametrize("kwargs,match", [
    (dict(gpus=32, batch=512, tensor=5, pipeline=1), "tensor=5 does not divide heads=24"),
    (dict(gpus=35, batch=560, tensor=1, pipeline=5, interleave=2), "layers=24 is not divisible by pipeline x interleave"),
    (dict(gpus=50, batch=500, tensor=1, pipeline=25), "pipeline=25 exceeds layers=24"),
    (dict(gpus=36, batch=512, tensor=8, pipeline=1), "gpus=36 is not divisible by tensor x pipeline"),
    (dict(gpus=32, batch=500, tensor=1, pipeline=1, microbatch=16), "batch=500 is not divisible by microbatch x data"),
    (dict(gpus=8, batch=12, tensor=1, pipeline=4, microbatch=1, interleave=2), "multiple of pipeline"),
    (dict(gpus=32, batch=512, tensor=1, pipeline=1, interleave=2), "needs pipeline > 1"),
    (dict(gpus=32, batch=512, tensor=0, pipeline=1), "tensor must be an integer >= 1, got 0"),
])
def test_layouts_that_do_not_divide_say_which_rule(kwargs, match):
    with pytest.raises(ValueError, match=match):
        M.layout(CFG, **kwargs)
    with pytest.raises(ValueError, match=match):
        M.estimate(CFG, **kwargs)


def test_layout_counts():
    lay = M.layout(M.table1_config("1T"), 3072, 3072, 8, 64, 1, 1)
    assert (lay.data, lay.microbatches) == (6, 512)


def test_uneven_pipeline_bloom_layout_is_accepted():
    # a BLOOM-176B-sized model: 70 layers on 12 stages (the example of an uneven split); the heaviest
    # stage (6 layers) paces the pipeline, so it runs like 72 layers
    bloom = M.GPTConfig(70, 14336, 112, 250880, 2048, positions="rope")
    lay = M.layout(bloom, 384, 2048, 4, 12)
    assert lay.stage_layers(bloom) == 6
    est = M.estimate(bloom, 384, 2048, 4, 12)
    even = M.estimate(M.GPTConfig(72, 14336, 112, 250880, 2048, positions="rope"), 384, 2048, 4, 12)
    assert est.time_per_iteration_s == pytest.approx(even.time_per_iteration_s, rel=0.02)
    with pytest.raises(ValueError, match="with interleaving"):
        M.layout(bloom, 384, 2048, 4, 12, interleave=2)

