"""Activation memory, Korthikanti et al. Table 2 and its generalisations (ampere/memory/activations.py; chapters:
HBM "Activations", Megatron-LM "Memory per GPU")."""

import numpy as np
import pytest

from ampere import memory as mem
from ampere import transformer as tr


S, B, H, A = 2048, 1, 12288, 96  # GPT-3 175B layer


@pytest.mark.parametrize("t,sp,rc,expected", [
    (1, False, "none", S * B * H * (34 + 5 * A * S / H)),
    (8, False, "none", S * B * H * (10 + 24 / 8 + 5 * A * S / (H * 8))),
    (8, True, "none", S * B * H * (34 / 8 + 5 * A * S / (H * 8))),
    (8, False, "selective", S * B * H * (10 + 24 / 8)),
    (8, True, "selective", S * B * H * 34 / 8),
    (8, False, "full", 2 * S * B * H),
    (8, True, "full", 2 * S * B * H / 8),
])
def test_activations_korthikanti_table2(t, sp, rc, expected):
    got = mem.activation_bytes_per_layer(S, B, H, A, tensor=t, sequence_parallel=sp, recompute=rc)
    assert got == pytest.approx(expected, rel=1e-12)


def test_activation_table2_consistency():
    # With t = 1 the tensor-parallel rows reduce to the no-parallelism row: 10 + 24 = 34.
    one = mem.activation_bytes_per_layer(S, 2, H, A)
    assert one == mem.activation_bytes_per_layer(S, 2, H, A, tensor=1, sequence_parallel=True)
    # Selective recomputation removes exactly the 5as/h attention term.
    sel = mem.activation_bytes_per_layer(S, 2, H, A, recompute="selective")
    assert one - sel == pytest.approx(S * 2 * H * 5 * A * S / H)


def test_activation_stack():
    m = tr.preset("gpt3-175b")
    full = mem.activation_bytes(m, 2048, 1, "full")
    layer_in = 2 * 2048 * m.hidden
    one_layer = mem.activation_bytes_per_layer(2048, 1, m.hidden, m.heads)
    assert full == pytest.approx(m.layers * layer_in + one_layer + 4 * 2048 * m.vocab)
    none = mem.activation_bytes(m, micro_batch=1, recompute="none")  # seq defaults to the shape's 2048
    assert none == pytest.approx(m.layers * one_layer + mem.logits_bytes(2048, 1, m.vocab))
    assert mem.activation_bytes(m, 2048, 1, "none", layers=12, tensor=8, sequence_parallel=True) == pytest.approx(
        12 * mem.activation_bytes_per_layer(2048, 1, m.hidden, m.heads, tensor=8, sequence_parallel=True)
        + 4 * 2048 * m.vocab / 8)


@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(seq=0), ValueError, "seq"),
    (dict(micro_batch=1.5), TypeError, "micro_batch"),
    (dict(tensor=0), ValueError, "tensor"),
    (dict(sequence_parallel="yes"), TypeError, "sequence_parallel"),
    (dict(recompute="partial"), ValueError, "recompute"),
    (dict(heads=np.float64(8)), TypeError, "heads"),
])
def test_activation_validation(kwargs, exc, match):
    args = dict(seq=128, micro_batch=1, hidden=64, heads=8)
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        mem.activation_bytes_per_layer(args.pop("seq"), args.pop("micro_batch"), args.pop("hidden"),
                                       args.pop("heads"), **args)


def test_activation_terms_follow_the_layer():
    from ampere import memory

    gpt = memory.layer_activation_terms(4096, 32)
    assert gpt["replicated"] + gpt["split"] == 34  # Korthikanti et al.'s constant
    swiglu = memory.layer_activation_terms(4096, 32, ffn=11008, glu=True)
    assert swiglu["split"] == pytest.approx(4 + 4 + 6 * 11008 / 4096)
    gqa = memory.layer_activation_terms(8192, 64, ffn=28672, kv_heads=8, glu=True)
    assert gqa["split"] == pytest.approx(4 + 4 * 8 / 64 + 6 * 28672 / 8192)
    s, b, h, a = 4096, 1, 4096, 32
    flash = memory.activation_bytes_per_layer(s, b, h, a, flash_attention=True)
    assert flash == pytest.approx(s * b * h * (34 + 4 * a / h))
    assert memory.activation_bytes_per_layer(s, b, h, a) == pytest.approx(s * b * h * (34 + 5 * a * s / h))
    with pytest.raises(ValueError, match="kv_heads"):
        memory.layer_activation_terms(4096, 32, kv_heads=5)
