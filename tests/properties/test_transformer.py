"""Properties of ampere.transformer: every shape in bounds has an exact, positive parameter count; every bad
dimension, flag or name is refused with the field named."""

from hypothesis import given
from hypothesis import strategies as st

from ampere import transformer as tr

from .harness import answers, bad_booleans, bad_ints, bad_names, bad_strings, covers, not_lists, rejects, rejects_any


@st.composite
def shapes(draw):
    """Valid shape arguments: heads divides hidden, kv_heads divides heads."""
    head_dim = draw(st.sampled_from([8, 64, 128]))
    kv = draw(st.integers(1, 8))
    heads = kv * draw(st.integers(1, 8))
    return dict(layers=draw(st.integers(1, 200)), hidden=heads * head_dim, heads=heads,
                vocab=draw(st.integers(1, 300_000)), seq=draw(st.integers(1, 200_000)), kv_heads=kv,
                ffn_hidden=draw(st.one_of(st.none(), st.integers(1, 100_000))), glu=draw(st.booleans()),
                tied_embeddings=draw(st.booleans()), biases=draw(st.booleans()),
                norm=draw(st.sampled_from(tr.NORMS)), positions=draw(st.sampled_from(tr.POSITIONS)),
                name=draw(st.text(max_size=10)))


@covers(tr.TransformerShape)
@given(shapes(), st.data())
def test_shapes_count_their_parameters_and_refuse_bad_fields(kw, data):
    shape = answers(tr.TransformerShape, type_=tr.TransformerShape, **kw)
    assert isinstance(shape.params, int) and shape.params > 0
    assert shape.params == shape.embedding_params + shape.layers * shape.layer_params + shape.norm_params
    assert shape.head_dim * shape.heads == shape.hidden and shape.heads % shape.n_kv_heads == 0
    rank = data.draw(st.integers(1, 64))
    assert answers(shape.lora_params, rank, type_=int) == shape.layers * sum(
        rank * (i + o) for _, i, o in shape.linear_shapes())
    assert answers(shape.lora_params, rank, ["q", "v"], type_=int) > 0
    rejects(shape.lora_params, "rank", data.draw(bad_ints(1, tr.LIMITS["lora_rank"])))
    rejects(shape.lora_params, "targets", rank, data.draw(st.one_of(not_lists().filter(lambda v: v is not None),
                                                                    st.just([]), st.just(["w1"]))))
    rejects_any(data, tr.TransformerShape, kw, {
        **{f: bad_ints(1, tr.LIMITS[f]) for f in ("layers", "hidden", "heads", "vocab", "seq")},
        **{f: bad_ints(1, tr.LIMITS[f]).filter(lambda v: v is not None) for f in ("kv_heads", "ffn_hidden")},
        **{f: bad_booleans() for f in ("glu", "tied_embeddings", "biases")},
        "norm": bad_names(tr.NORMS), "positions": bad_names(tr.POSITIONS),
        "name": bad_strings(allow_empty=True), "source": bad_strings(allow_empty=True)})


@covers(tr.gpt, tr.llama, tr.preset)
@given(st.sampled_from(sorted({*tr.PRESETS, *tr.SIZE_CLASSES})), st.data())
def test_presets_and_builders(name, data):
    shape = answers(tr.preset, name, type_=tr.TransformerShape)
    assert shape in tr.PRESETS.values()
    rejects(tr.preset, "name", data.draw(bad_names([*tr.PRESETS, *tr.SIZE_CLASSES])))
    gpt = answers(tr.gpt, 24, 1024, 16, type_=tr.TransformerShape)
    assert not gpt.glu and gpt.positions == "learned"
    llama = answers(tr.llama, 32, 4096, 32, 11008, 32000, 4096, type_=tr.TransformerShape)
    assert llama.params == tr.preset("llama2-7b").params
    rejects(tr.gpt, "layers", data.draw(bad_ints(1, tr.LIMITS["layers"])), 1024, 16)
    rejects(tr.llama, "ffn_hidden", 32, 4096, 32, data.draw(bad_ints(1, tr.LIMITS["ffn_hidden"])), 32000, 4096)
    rejects(tr.llama, "kv_heads", 32, 4096, 32, 11008, 32000, 4096, kv_heads=data.draw(st.sampled_from([0, 5, True])))
