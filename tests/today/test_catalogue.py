"""ampere.today.catalogue: the chapter's GPUs and the model shapes by name."""

import pytest

from ampere import today, transformer


def test_shapes_and_models():
    assert today.shape_of("7B") is transformer.preset("llama2-7b")
    assert today.shape_of("llama-65b").params == pytest.approx(65.2e9, rel=0.01)
    with pytest.raises(TypeError, match="model"):
        today.shape_of(7)
    with pytest.raises(ValueError, match="model"):
        today.shape_of("GPT-5")
