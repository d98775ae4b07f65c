"""What the chapter compares: its five GPUs and the model shapes the calculator accepts by name.

Chapter: *The A100 today* (book/a100-today.ipynb), "Five GPUs side by side" and "A workload calculator".
The shapes are the presets of ``ampere.transformer`` (LLaMA 65B among them, for its published training
run). Pure Python: no torch, no matplotlib.
"""

from __future__ import annotations

from typing import Any, Mapping

from .. import transformer
from ..transformer import TransformerShape


#: The GPUs of the chapter: the seeds' three Ampere cards, then the two Hopper parts of "should I move?".
GPUS: tuple[str, ...] = ("A100-SXM4-80GB", "RTX-A6000", "RTX-A2000-12GB", "H100-SXM5-80GB", "H200-SXM-141GB")
#: The three cards seed 003 compares.
SEED_GPUS: tuple[str, ...] = GPUS[:3]
#: LLaMA 65B, used by the Llama training-run comparison (a preset of ``ampere.transformer``).
LLAMA_65B = transformer.PRESETS["llama-65b"]
#: Every shape the calculator accepts by name: the presets of ``ampere.transformer``.
MODELS: Mapping[str, TransformerShape] = transformer.PRESETS


def shape_of(model: Any) -> TransformerShape:
    """A :class:`~ampere.transformer.TransformerShape` from a shape, a size class ("7B") or a name of :data:`MODELS`.

    Chapter: *The A100 today*, "A workload calculator".
    """
    if isinstance(model, TransformerShape):
        return model
    if not isinstance(model, str):
        raise TypeError(f"model must be a size class, a model name or a TransformerShape, got {model!r} "
                        f"({type(model).__name__})")
    key = transformer.SIZE_CLASSES.get(model, model)
    if key not in MODELS:
        raise ValueError(f"model={model!r} is unknown; allowed: {', '.join([*transformer.SIZE_CLASSES, *MODELS])}, "
                         "a TransformerShape, or (full training only) a parameter count")
    return MODELS[key]
