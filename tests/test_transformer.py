"""Tests of ampere.transformer: exact parameter counts of released checkpoints, GPT defaults, validation."""

import numpy as np
import pytest

from ampere import transformer as tr
from ampere.transformer import TransformerShape

# Parameter counts of the released checkpoints as the Hugging Face libraries count them (sum of the numel of
# every stored tensor), found with the book's search tool in public code: Llama-2 7B/13B/70B in Together's
# fine-tuning client (parameter-count table of togethercomputer/llama-2-*) and KerasHub's Llama presets
# ("params": 6738415616); Mistral-7B-v0.1 in Ollama's model_info ("general.parameter_count": 7241732096);
# Llama 3.2 1B/3B in the same kind of tables (meta-llama/Llama-3.2-1B-Instruct: 1235814400, 3B: 3212749824).
RELEASED = {
    "llama2-7b": 6_738_415_616,
    "llama2-13b": 13_015_864_320,
    "llama2-70b": 68_976_648_192,
    "mistral-7b": 7_241_732_096,
    "llama3.2-1b": 1_235_814_400,
    "llama3.2-3b": 3_212_749_824,
}


@pytest.mark.parametrize("name,count", sorted(RELEASED.items()))
def test_released_checkpoints_exact(name, count):
    shape = tr.preset(name)
    assert isinstance(shape.params, int)
    assert shape.params == count


def test_llama2_13b_by_hand():
    # embeddings + output: 2 x 32000 x 5120; layer: 4 h^2 + 3 h f + 2 h; final norm h.
    h, f, layers, v = 5120, 13824, 40, 32000
    layer = 4 * h * h + 3 * h * f + 2 * h
    s = tr.preset("llama2-13b")
    assert s.layer_params == layer
    assert s.params == 2 * v * h + layers * layer + h


def test_gpt_defaults():
    s = TransformerShape(24, 1024, 16)
    assert (s.vocab, s.seq, s.n_kv_heads, s.ffn, s.kv_dim, s.head_dim) == (51200, 2048, 16, 4096, 1024, 64)
    assert (s.glu, s.tied_embeddings, s.biases, s.norm, s.positions) == (False, True, True, "layernorm", "learned")
    assert [n for n, _, _ in s.linear_shapes()] == ["q", "k", "v", "o", "up", "down"]


@pytest.mark.parametrize("l,h,a,v,seq", [(24, 1024, 16, 51200, 2048), (96, 12288, 96, 50257, 2048),
                                         (40, 6144, 48, 51200, 2048), (128, 25600, 160, 51200, 2048)])
def test_gpt_matches_megatron_formula(l, h, a, v, seq):
    # narayanan2021megatron eq. 2 counts 12 l h^2 (1 + 13/(12h) + (V+s)/(12 l h)) = 12lh^2 + 13lh + (V+s)h,
    # without the final LayerNorm (2h) that the class counts.
    s = tr.gpt(l, h, a, v, seq)
    assert s.params == 12 * l * h * h + 13 * l * h + (v + seq) * h + 2 * h
    approx = 12 * l * h**2 * (1 + 13 / (12 * h) + (v + seq) / (12 * l * h))
    assert s.params - 2 * h == pytest.approx(approx, rel=1e-12)


def test_gpt3_175b_published_size():
    p = tr.preset("gpt3-175b").params
    assert abs(p / 175.0e9 - 1) < 0.005  # brown2020gpt3 Table 2.1: 175.0B


def test_llama_33b_published_size():
    assert abs(tr.preset("llama-33b").params / 32.5e9 - 1) < 0.005  # touvron2023llama Table 2: 32.5B


def test_switches_change_counts_as_documented():
    base = TransformerShape(2, 64, 4, 100, 16)
    h = 64
    assert base.params - TransformerShape(2, 64, 4, 100, 16, tied_embeddings=False).params == -100 * h
    assert base.params - TransformerShape(2, 64, 4, 100, 16, positions="rope").params == 16 * h
    assert base.params - TransformerShape(2, 64, 4, 100, 16, norm="rmsnorm").params == (2 * 2 + 1) * h
    no_bias = TransformerShape(2, 64, 4, 100, 16, biases=False)
    assert base.params - no_bias.params == 2 * (h + h + h + h + 4 * h + h)
    gqa = TransformerShape(2, 64, 4, 100, 16, kv_heads=1, biases=False)
    assert gqa.kv_dim == 16
    assert no_bias.params - gqa.params == 2 * 2 * h * (h - 16)
    glu = TransformerShape(2, 64, 4, 100, 16, glu=True, ffn_hidden=96, biases=False)
    assert [n for n, _, _ in glu.linear_shapes()][-3:] == ["gate", "up", "down"]
    assert glu.layer_params == 4 * h * h + 3 * h * 96 + 2 * 2 * h


def test_numpy_integers_accepted():
    s = TransformerShape(np.int64(2), np.int32(64), np.int16(4), vocab=np.int64(100), seq=np.int64(16))
    assert type(s.layers) is int and s.params == TransformerShape(2, 64, 4, 100, 16).params


def test_lora_params():
    s = tr.preset("llama2-7b")
    h, f = 4096, 11008
    per_layer = 4 * (h + h) + 2 * (h + f) + (f + h)  # q, k, v, o (h->h), gate/up (h->f), down (f->h)
    assert s.lora_params(1) == 32 * per_layer
    assert s.lora_params(16, ["q", "v"]) == 32 * 16 * 2 * (h + h)
    with pytest.raises(ValueError, match="gate_proj"):
        s.lora_params(8, ["gate_proj"])
    with pytest.raises(TypeError, match="targets"):
        s.lora_params(8, "q")
    with pytest.raises(ValueError, match="rank"):
        s.lora_params(0)


@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(layers=0, hidden=64, heads=4), ValueError, "layers"),
    (dict(layers=2.0, hidden=64, heads=4), TypeError, "layers"),
    (dict(layers=True, hidden=64, heads=4), TypeError, "layers"),
    (dict(layers=2, hidden=65, heads=4), ValueError, "hidden=65"),
    (dict(layers=2, hidden=64, heads=4, kv_heads=3), ValueError, "kv_heads=3"),
    (dict(layers=2, hidden=64, heads=4, kv_heads=0), ValueError, "kv_heads"),
    (dict(layers=2, hidden=64, heads=4, ffn_hidden=-1), ValueError, "ffn_hidden"),
    (dict(layers=2, hidden=64, heads=4, vocab="50k"), TypeError, "vocab"),
    (dict(layers=2, hidden=64, heads=4, norm="batchnorm"), ValueError, "norm"),
    (dict(layers=2, hidden=64, heads=4, positions="alibi"), ValueError, "positions"),
    (dict(layers=2, hidden=64, heads=4, glu="yes"), TypeError, "glu"),
    (dict(layers=2, hidden=64, heads=4, name=7), TypeError, "name"),
])
def test_validation(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        TransformerShape(**kwargs)


def test_preset_unknown_and_frozen():
    with pytest.raises(ValueError, match="llama2-7b"):
        tr.preset("llama-7b-v9")
    s = tr.preset("llama2-70b")
    assert (s.n_kv_heads, s.kv_dim, s.head_dim) == (8, 1024, 128)
    with pytest.raises(AttributeError):
        s.layers = 3  # type: ignore[misc]


def test_no_torch_import():
    import subprocess
    import sys

    code = "import sys, ampere.transformer; print('torch' in sys.modules, 'numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split()[0] == "False"


def test_size_classes():
    assert tr.preset("70B") is tr.PRESETS["llama2-70b"]
    assert tr.preset("30B").name == "llama-33b"
    assert set(tr.SIZE_CLASSES.values()) <= set(tr.PRESETS)
    with pytest.raises(TypeError, match="name"):
        tr.preset(7)
