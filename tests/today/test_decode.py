"""ampere.today.decode: the bound of a generation run beside published decoding runs."""

import pytest

from ampere import memory, results, today, transformer

A100, A6000, A2000, H100, H200 = today.GPUS
LLAMA7 = transformer.preset("llama2-7b")


def test_decode_run_bound_by_hand():
    # one sequence, no prompt, one token: one step reading the weights and one token of KV cache
    b = today.decode_run_bound("llama2-7b", A100, batch=1, prompt_tokens=0, output_tokens=1)
    step = (LLAMA7.params * 2 + memory.kv_cache_bytes(LLAMA7, 1, 1, "fp16")) / 2039e9
    assert b == pytest.approx(1 / step, rel=1e-9)
    long = today.decode_run_bound("llama2-7b", A100, batch=1, prompt_tokens=0, output_tokens=2048)
    assert long < b  # the KV cache grows
    tp = today.decode_run_bound("llama2-70b", A100, batch=1, prompt_tokens=1, output_tokens=128, tensor_parallel=4)
    one = today.decode_run_bound("llama2-70b", "H200-SXM-141GB", batch=1, prompt_tokens=1, output_tokens=128)
    assert tp < 4 * 2039e9 / (transformer.preset("llama2-70b").params * 2)  # all-reduces cost something
    assert one > 0
    with pytest.raises((ValueError, TypeError), match="batch"):
        today.decode_run_bound("llama2-7b", A100, batch=0, prompt_tokens=1, output_tokens=1)
    with pytest.raises(ValueError, match="tensor_parallel"):  # beyond one server, whole servers of eight
        today.decode_run_bound("llama2-7b", A6000, batch=1, prompt_tokens=1, output_tokens=1, tensor_parallel=12)


def test_decode_points_cover_a100_h100_h200_below_the_bound():
    pts = today.decode_points()
    recs = results.records(benchmark="llm-decode", kind="published")
    assert len(pts) == len(recs) >= 8
    assert {A100, H100, H200} <= {p.gpu for p in pts}
    for p in pts:
        assert p.kind == "published" and p.unit == "tokens/s" and p.source and "lmdeploy2023a100" not in p.source
        assert 0.3 < p.ratio < 1.0, (p.what, p.ratio)  # real runs reach a fraction of the bandwidth bound
