"""Choosing a layout (ampere/megatron/search.py; chapter: Megatron-LM, section Choosing a layout)."""

from __future__ import annotations

import pytest

from ampere import megatron as M


def test_search_keeps_tensor_parallelism_inside_a_node():
    cfg = M.table1_config("1T")
    best = M.search_layouts(cfg, 3072, 3072, top=5)
    assert best and all(e.fits_in_memory for e in best)
    assert [e.tflops_per_gpu for e in best] == sorted((e.tflops_per_gpu for e in best), reverse=True)
    assert all(e.layout.tensor <= 8 for e in best)
    assert all(e.layout.pipeline > 1 for e in best)  # the model does not fit otherwise
    small = M.search_layouts(M.GPTConfig(4, 256, 4, vocab=512, seq=128), 8, 64, top=None)
    assert all(e.layout.gpus == 8 for e in small)


def test_search_layouts_skips_layouts_that_do_not_fit():
    cfg = M.table1_config("145B")
    found = M.search_layouts(cfg, 1536, 2304, top=None, microbatches=(1, 2), max_interleave=1)
    assert found and all(e.fits_in_memory for e in found)
    every = M.search_layouts(cfg, 1536, 2304, top=None, microbatches=(1, 2), max_interleave=1,
                             include_infeasible=True)
    assert any(not e.fits_in_memory for e in every)


def test_search_layouts_passes_options_and_respects_kv_heads():
    from ampere import transformer

    shape = transformer.preset("llama2-70b")  # 8 KV heads: tensor sizes above 8 are refused
    found = M.search_layouts(shape, 64, 512, microbatches=(1,), max_interleave=1, recompute="selective",
                             top=None, sequence_parallel=True, flash_attention=True)
    assert found and all(e.layout.tensor <= 8 for e in found)
    assert all("flashattention-fig2-gpt2-medium-flash" in " ".join(e.figures_used) for e in found)



def test_search_layouts_interleaves_where_the_stack_can_and_pays_in_memory():
    cfg = M.table1_config("145B")
    found = M.search_layouts(cfg, 1536, 2304, microbatches=(1, 2), max_interleave=4, top=None, include_infeasible=True)
    inter = [e for e in found if e.layout.interleave > 1]
    assert inter
    for e in inter:
        same = next(x for x in found if x.layout.interleave == 1 and (x.layout.tensor, x.layout.pipeline,
                    x.layout.microbatch) == (e.layout.tensor, e.layout.pipeline, e.layout.microbatch))
        assert e.memory["activations"] > same.memory["activations"]  # 1 + (p-1)/(p v) more in flight
        assert e.bubble_fraction < same.bubble_fraction
    ds = M.search_layouts(cfg, 1536, 2304, microbatches=(1, 2), max_interleave=4, top=None, include_infeasible=True,
                          software="megatron-deepspeed")
    assert all(e.layout.interleave == 1 for e in ds)


def test_search_layouts_bounds_its_inputs():
    cfg = M.GPTConfig(4, 256, 8)
    with pytest.raises(ValueError, match="max_interleave must be an integer <= "):
        M.search_layouts(cfg, 8, 8, max_interleave=10**12)
    with pytest.raises(TypeError, match="microbatches must be a list or tuple"):
        M.search_layouts(cfg, 8, 8, microbatches="1,2")
    with pytest.raises(ValueError, match="microbatches"):
        M.search_layouts(cfg, 8, 8, microbatches=())
    with pytest.raises(ValueError, match="gpus must be an integer <= "):
        M.search_layouts(cfg, 10**12, 8)
