"""Choosing a layout (ampere/megatron/search.py; chapter: Megatron-LM, section Choosing a layout)."""

from __future__ import annotations

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

