"""ampere.sparsity.llm: published LLM pruning results, the decoder-layer roofline and Amdahl's law."""

import math

import pytest

from ampere import specs, transformer
from ampere import sparsity as sp

A100 = "A100-SXM4-80GB"


def test_published_perplexities_have_the_shape_the_chapter_states():
    rows = sp.published_perplexities()
    assert {r.pattern for r in rows} <= set(sp.PATTERNS)
    by = {(r.model, r.method, r.pattern): r.wikitext_ppl for r in rows}
    for model in {r.model for r in rows}:
        dense = by[(model, "dense", "dense")]
        for (m, method, pattern), ppl in by.items():
            if m == model and method != "dense" and model != "opt-175b":
                assert ppl > dense  # pruning without retraining costs perplexity in these tables ...
        for method in ("magnitude", "SparseGPT", "Wanda"):
            if (model, method, "2:4") in by:  # ... and the 2:4 structure costs more than 50 % anywhere
                assert by[(model, method, "2:4")] > by[(model, method, "unstructured 50%")]
                if (model, method, "4:8") in by:  # 4:8 (more freedom) sits in between
                    assert by[(model, method, "2:4")] >= by[(model, method, "4:8")] > by[(model, method, "unstructured 50%")]
    # ... except at the largest scale: SparseGPT's 50 % OPT-175B is even slightly below the dense model
    assert by[("opt-175b", "SparseGPT", "unstructured 50%")] < by[("opt-175b", "dense", "dense")]
    for r in rows:
        assert r.source in ("sun2023wandarepo", "sun2024wanda", "frantar2023sparsegpt") and r.where
    # the cost of 2:4 shrinks from 7B to 70B in LLaMA-2 (every method) ...
    for method in ("magnitude", "SparseGPT", "Wanda"):
        gaps = [by[(m, method, "2:4")] - by[(m, "dense", "dense")] for m in ("llama2-7b", "llama2-13b", "llama2-70b")]
        assert gaps == sorted(gaps, reverse=True)
    # ... but not monotonically in LLaMA (v1): the 65B model loses more than the 33B one
    gap = {m: by[(m, "Wanda", "2:4")] - by[(m, "dense", "dense")] for m in ("llama-33b", "llama-65b")}
    assert gap["llama-65b"] > gap["llama-33b"]
    # models named like ampere.transformer presets are presets
    for m in {r.model for r in rows}:
        if m.startswith("llama2"):
            assert m in transformer.PRESETS


def test_perplexity_rows():
    rows = sp.perplexity_rows(["llama2-7b"])
    assert [r["method"] for r in rows] == ["magnitude", "SparseGPT", "Wanda"]
    for r in rows:
        assert r["2:4 - 50%"] == pytest.approx(r["2:4"] - r["unstructured 50%"]) and r["dense"] < r["unstructured 50%"]
        assert "sun" not in r["source"].lower() or " " in r["source"]  # a label, not a bibliography key
    assert len(sp.perplexity_rows()) > len(rows)
    opt = sp.perplexity_rows(["opt-175b"])
    assert opt[0]["2:4"] is None and opt[0]["2:4 - 50%"] is None
    with pytest.raises(ValueError, match="models"):
        sp.perplexity_rows(["gpt-5"])
    with pytest.raises(TypeError, match="models"):
        sp.perplexity_rows("llama2-7b")


def test_published_llm_speedups():
    rows = sp.published_llm_speedups()
    e2e = next(r for r in rows if r.dense_ms is not None)
    assert e2e.speedup == pytest.approx(e2e.dense_ms / e2e.sparse_ms) and 1 < e2e.speedup < 2
    assert all(1 < r.speedup < 2 for r in rows)  # below the 2x of the sparse tensor cores


def test_amdahl_and_its_inverse():
    assert sp.amdahl(0.0, 2.0) == 1.0 and sp.amdahl(1.0, 2.0) == pytest.approx(2.0)
    for f in (0.1, 0.5, 0.9):
        s = sp.amdahl(f, 2.0)
        assert 1.0 < s < 2.0 and s < 1 / (1 - f)
        assert sp.gemm_speedup_needed(f, s) == pytest.approx(2.0)
    assert sp.gemm_speedup_needed(0.5, 2.0) == math.inf  # the other half alone takes half the time
    assert sp.gemm_speedup_needed(0.0, 1.0) == 1.0
    with pytest.raises(ValueError, match="fraction"):
        sp.amdahl(1.5, 2.0)
    with pytest.raises(ValueError, match="speedup"):
        sp.amdahl(0.5, 0.0)
    with pytest.raises(ValueError, match="target"):
        sp.gemm_speedup_needed(0.5, 0.9)


def test_decoder_layer_model():
    shape = transformer.preset("llama2-7b")
    weights = sum(k * m for _, k, m in shape.linear_shapes())
    peak = specs.get(A100).peak_flops("fp16")
    # a long prompt: every GEMM compute bound, at the dense peak
    t = sp.decoder_layer_time("llama2-7b", A100, "prefill", 1, 4096)
    assert t.gemm_s == pytest.approx(2 * 4096 * weights / peak) and t.gemm_fraction > 0.8
    # one decoded token: the GEMMs read the weights once
    d = sp.decoder_layer_time("llama2-7b", A100, "decode", 1, 128)
    assert d.gemm_s == pytest.approx((weights + 1 * sum(k + m for _, k, m in shape.linear_shapes())) * 2
                                     / specs.get(A100).hbm_bytes_per_s)
    for case in (("prefill", 1, 2048), ("decode", 1, 2048), ("decode", 64, 8192), ("decode", 256, 512)):
        r = sp.layer_speedup("llama2-7b", A100, *case)
        assert r["speedup"] == pytest.approx(sp.amdahl(r["gemm_fraction"], r["gemm_speedup"]))
        assert 1.0 < r["speedup"] <= r["gemm_speedup"] <= 2.0 + 1e-9
        k = sp.layer_speedup("llama2-7b", A100, *case, gemm_speedup=1.6)
        assert k["gemm_speedup"] == pytest.approx(1.6) and k["speedup"] == pytest.approx(sp.amdahl(k["gemm_fraction"], 1.6))
    # decoding: the bigger the batch and the longer the cache, the smaller the GEMM share (K/V reads grow)
    shares = [sp.layer_speedup("llama2-7b", A100, "decode", b, 2048)["gemm_fraction"] for b in (1, 8, 64)]
    assert shares == sorted(shares, reverse=True)
    longer = [sp.layer_speedup("llama2-7b", A100, "decode", 16, c)["speedup"] for c in (512, 2048, 8192)]
    assert longer == sorted(longer, reverse=True)
    rows = sp.speedup_rows(kernel_speedup=1.6)
    assert len(rows) == 3 and rows[0]["phase"] == "prefill" and "layer, GEMMs 1.6x" in rows[0]


def test_decoder_layer_model_refuses_bad_input():
    with pytest.raises(ValueError, match="phase"):
        sp.decoder_layer_time("llama2-7b", A100, "train")
    with pytest.raises(ValueError, match="gemm_speedup"):
        sp.decoder_layer_time("llama2-7b", A100, "decode", gemm_kind="2:4", gemm_speedup=1.5)
    with pytest.raises(TypeError, match="model"):
        sp.decoder_layer_time(7, A100, "decode")
    with pytest.raises(ValueError, match="model"):  # the argument is named, with the presets allowed
        sp.decoder_layer_time("llama-9000", A100, "decode")
    with pytest.raises(TypeError, match="batch"):
        sp.decoder_layer_time("llama2-7b", A100, "decode", batch=True)
    with pytest.raises(ValueError, match="precision"):
        sp.decoder_layer_time("llama2-7b", A100, "decode", precision="int8")
    with pytest.raises(ValueError, match="triple"):
        sp.speedup_rows(cases=[("decode", 1)])


def test_bert_check_against_pytorchs_measurements():
    rows = sp.bert_check_rows()
    assert [r["batch"] for r in rows] == ["4", "16", "64", "256"]
    model_col = next(c for c in rows[0] if c.startswith("model, GEMMs"))
    for r in rows:
        model = float(r[model_col].rstrip("x"))
        assert model < float(r["model, 2:4 roofline"].rstrip("x")) < 2.0
        if r["batch"] in ("16", "64"):  # where launches do not dominate, eager PyTorch agrees within 0.05x
            assert abs(float(r["measured, eager"].rstrip("x")) - model) < 0.05
    # an encoder attends to the whole sequence: twice the score FLOPs of a causal decoder in prefill
    enc = sp.decoder_layer_time(sp.BERT_BASE, A100, "prefill", 16, 384, causal=False)
    dec = sp.decoder_layer_time(sp.BERT_BASE, A100, "prefill", 16, 384)
    assert enc.attention_s >= dec.attention_s and enc.gemm_s == dec.gemm_s
    with pytest.raises(TypeError, match="causal"):
        sp.decoder_layer_time(sp.BERT_BASE, A100, "prefill", causal="no")
