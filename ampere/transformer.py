"""One decoder-only transformer shape for every chapter: dimensions, linear layers, exact parameter counts.

Chapter: *HBM and the memory hierarchy* ("What fits") explains the counting; *Megatron-LM* sizes GPT
models with it and *The A100 today* sizes its workloads. Pure Python: no torch, no numpy.

:class:`TransformerShape` describes a decoder-only transformer the way the memory and FLOP arithmetic
needs it. The defaults are the GPT-2/GPT-3/Megatron-LM layer (LayerNorm with weight and bias, biases on
every linear layer, a 4h MLP with two matrices, learned position embeddings, the output layer tied to the
input embedding, Megatron's padded vocabulary of 51,200 and 2,048 positions); a LLaMA/Mistral layer is
``glu=True, biases=False, norm="rmsnorm", positions="rope", tied_embeddings=False`` (see :func:`llama`).

Counting rules of :attr:`TransformerShape.params` (exact, an ``int``):

* embeddings: ``vocab x hidden``, plus ``seq x hidden`` for learned positions; an untied output layer
  adds another ``vocab x hidden`` (no bias);
* per layer: every linear layer of :meth:`TransformerShape.linear_shapes` (``in x out`` weights, plus
  ``out`` biases when ``biases``) and two norms (LayerNorm: weight and bias, ``2h``; RMSNorm: weight,
  ``h``);
* one final norm after the last layer.

With the GPT defaults this is Megatron-LM's ``12 l h^2 (1 + 13/(12 h) + (V + s)/(12 l h))``
(narayanan2021megatron, eq. 2) plus the ``2h`` of the final LayerNorm, which that formula leaves out.
The released checkpoints of :data:`PRESETS` match their published parameter counts exactly (tests).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping, Sequence

from . import check

__all__ = ["NORMS", "POSITIONS", "LIMITS", "TransformerShape", "gpt", "llama", "PRESETS", "SIZE_CLASSES", "preset"]

#: Normalisation layers: LayerNorm has a weight and a bias per channel, RMSNorm only a weight.
NORMS: tuple[str, ...] = ("layernorm", "rmsnorm")
#: Position encodings: a learned table of ``seq x hidden`` (GPT) or rotary embeddings without parameters.
POSITIONS: tuple[str, ...] = ("learned", "rope")
#: Largest value of each dimension of a :class:`TransformerShape`: far above any model built (GPT-3 has 96
#: layers of width 12,288; Llama 3.2 a 131,072-token context and a 128,256-token vocabulary), low enough that
#: the arithmetic built on a shape (FLOPs, bytes, loops over layers) stays finite and fast.
LIMITS: Mapping[str, int] = MappingProxyType({"layers": 10_000, "hidden": 1 << 20, "heads": 1 << 16,
                                              "vocab": 100_000_000, "seq": 100_000_000, "kv_heads": 1 << 16,
                                              "ffn_hidden": 1 << 24, "lora_rank": 1 << 16})


@dataclass(frozen=True)
class TransformerShape:
    """A decoder-only transformer: ``layers`` layers of width ``hidden`` with ``heads`` attention heads.

    ``kv_heads`` (default: ``heads``) key/value heads give grouped-query attention (Llama 2 70B: 8);
    ``ffn_hidden`` (default ``4 x hidden``) is the MLP width; ``glu=True`` is a SwiGLU MLP with gate, up
    and down matrices, False the GPT MLP with two. ``seq`` is the (maximum) sequence length: the size of
    a learned position table and the default context of the memory arithmetic. Bad values raise
    ``ValueError``/``TypeError`` naming the field. Chapter: *HBM and the memory hierarchy*, "What fits".
    """

    layers: int
    hidden: int
    heads: int
    vocab: int = 51200
    seq: int = 2048
    kv_heads: int | None = None
    ffn_hidden: int | None = None
    glu: bool = False
    tied_embeddings: bool = True
    biases: bool = True
    norm: str = "layernorm"
    positions: str = "learned"
    name: str = ""
    source: str = ""  # bib key of the dimensions

    def __post_init__(self) -> None:
        for f in ("layers", "hidden", "heads", "vocab", "seq"):
            object.__setattr__(self, f, check.positive_int(f, getattr(self, f), maximum=LIMITS[f]))
        for f in ("kv_heads", "ffn_hidden"):
            if getattr(self, f) is not None:
                object.__setattr__(self, f, check.positive_int(f, getattr(self, f), maximum=LIMITS[f]))
        for f in ("glu", "tied_embeddings", "biases"):
            object.__setattr__(self, f, check.boolean(f, getattr(self, f)))
        check.one_of("norm", self.norm, NORMS)
        check.one_of("positions", self.positions, POSITIONS)
        for f in ("name", "source"):  # free text: any string, empty allowed
            check.string(f, getattr(self, f), allow_empty=True, max_len=200)
        if self.hidden % self.heads:
            raise ValueError(f"hidden={self.hidden} must be a multiple of heads={self.heads}")
        if self.heads % self.n_kv_heads:
            raise ValueError(f"heads={self.heads} must be a multiple of kv_heads={self.n_kv_heads}")

    # --- resolved dimensions ---------------------------------------------------------------------------
    @property
    def head_dim(self) -> int:
        """Width of one attention head: hidden / heads."""
        return self.hidden // self.heads

    @property
    def n_kv_heads(self) -> int:
        """Key/value heads, ``kv_heads`` resolved (None means one per query head)."""
        return self.heads if self.kv_heads is None else self.kv_heads

    @property
    def ffn(self) -> int:
        """MLP width, ``ffn_hidden`` resolved (None means 4 x hidden)."""
        return 4 * self.hidden if self.ffn_hidden is None else self.ffn_hidden

    @property
    def kv_dim(self) -> int:
        """Width of the key (and of the value) projection: kv_heads x head_dim."""
        return self.n_kv_heads * self.head_dim

    @property
    def label(self) -> str:
        """The name, or the dimensions when the shape has none."""
        return self.name or f"{self.layers}L-{self.hidden}h-{self.heads}a"

    # --- parameters ------------------------------------------------------------------------------------
    def linear_shapes(self) -> list[tuple[str, int, int]]:
        """(name, inputs, outputs) of the linear layers of one transformer layer, in execution order."""
        h, kv, f = self.hidden, self.kv_dim, self.ffn
        out = [("q", h, h), ("k", h, kv), ("v", h, kv), ("o", h, h)]
        out += [("gate", h, f), ("up", h, f), ("down", f, h)] if self.glu else [("up", h, f), ("down", f, h)]
        return out

    @property
    def norm_params(self) -> int:
        """Parameters of one norm: 2h (LayerNorm weight and bias) or h (RMSNorm weight)."""
        return self.hidden * (2 if self.norm == "layernorm" else 1)

    @property
    def layer_params(self) -> int:
        """Parameters of one transformer layer: linear weights (+ biases) and its two norms."""
        linear = sum(i * o + (o if self.biases else 0) for _, i, o in self.linear_shapes())
        return linear + 2 * self.norm_params

    @property
    def embedding_params(self) -> int:
        """Input embedding (+ learned positions) and, when untied, the output layer."""
        emb = self.vocab * self.hidden + (self.seq * self.hidden if self.positions == "learned" else 0)
        return emb + (0 if self.tied_embeddings else self.vocab * self.hidden)

    @property
    def params(self) -> int:
        """Exact parameter count: embeddings, output layer if untied, every layer, the final norm."""
        return self.embedding_params + self.layers * self.layer_params + self.norm_params

    def lora_params(self, rank: int, targets: Sequence[str] | None = None) -> int:
        """Trainable LoRA parameters: rank x (inputs + outputs) per adapted matrix, in every layer.

        ``targets`` names linear layers of :meth:`linear_shapes` and defaults to all of them (QLoRA's
        choice, dettmers2023qlora). Chapter: *HBM and the memory hierarchy*, "Fine-tuning".
        """
        r = check.positive_int("rank", rank, maximum=LIMITS["lora_rank"])
        names = [n for n, _, _ in self.linear_shapes()]
        chosen = names if targets is None else check.names("targets", targets, names)
        return self.layers * sum(r * (i + o) for n, i, o in self.linear_shapes() if n in chosen)


def gpt(layers: int, hidden: int, heads: int, vocab: int = 51200, seq: int = 2048, *, name: str = "",
        source: str = "") -> TransformerShape:
    """A GPT/Megatron-LM layer stack (the class defaults), spelled out for readers of the Megatron chapter."""
    return TransformerShape(layers, hidden, heads, vocab, seq, name=name, source=source)


def llama(layers: int, hidden: int, heads: int, ffn_hidden: int, vocab: int, seq: int, *,
          kv_heads: int | None = None, tied_embeddings: bool = False, name: str = "",
          source: str = "") -> TransformerShape:
    """A LLaMA-style stack: SwiGLU MLP, RMSNorm, rotary positions, no biases, untied output by default.

    Chapter: *HBM and the memory hierarchy*, "Serving a model".
    """
    check.positive_int("ffn_hidden", ffn_hidden, maximum=LIMITS["ffn_hidden"])  # required: no 4h default here
    return TransformerShape(layers, hidden, heads, vocab, seq, kv_heads=kv_heads, ffn_hidden=ffn_hidden, glu=True,
                            tied_embeddings=tied_embeddings, biases=False, norm="rmsnorm", positions="rope",
                            name=name, source=source)


#: Released checkpoints and published architectures, by name. Dimensions: Llama 2 from the released
#: config.json files (metallama2023configs; 8 KV heads of the 70B also in touvron2023llama2), LLaMA 1 33B
#: from touvron2023llama Table 2 (FFN width from its released configuration), Mistral 7B from
#: jiang2023mistral Table 1, Llama 3.2 from its configuration files (meta2024llama32), GPT-3 175B from
#: brown2020gpt3 Table 2.1 (GPT-2 tokenizer, 50,257 tokens; 2,048-token context).
PRESETS: Mapping[str, TransformerShape] = MappingProxyType({m.name: m for m in (
    llama(32, 4096, 32, 11008, 32000, 4096, name="llama2-7b", source="metallama2023configs"),
    llama(40, 5120, 40, 13824, 32000, 4096, name="llama2-13b", source="metallama2023configs"),
    llama(60, 6656, 52, 17920, 32000, 2048, name="llama-33b", source="touvron2023llama"),
    # LLaMA 65B: Table 2 of touvron2023llama (80 layers, 8192, 64 heads); MLP width 22016 from its configuration
    llama(80, 8192, 64, 22016, 32000, 2048, name="llama-65b", source="touvron2023llama"),
    llama(80, 8192, 64, 28672, 32000, 4096, kv_heads=8, name="llama2-70b", source="metallama2023configs"),
    llama(32, 4096, 32, 14336, 32000, 8192, kv_heads=8, name="mistral-7b", source="jiang2023mistral"),
    llama(16, 2048, 32, 8192, 128256, 131072, kv_heads=8, tied_embeddings=True, name="llama3.2-1b",
          source="meta2024llama32"),
    llama(28, 3072, 24, 8192, 128256, 131072, kv_heads=8, tied_embeddings=True, name="llama3.2-3b",
          source="meta2024llama32"),
    gpt(96, 12288, 96, 50257, 2048, name="gpt3-175b", source="brown2020gpt3"),
)})


#: Size classes of the book's tables, each a released model ("30B" is LLaMA's 32.5B model).
SIZE_CLASSES: Mapping[str, str] = MappingProxyType({
    "1B": "llama3.2-1b", "3B": "llama3.2-3b", "7B": "llama2-7b", "13B": "llama2-13b", "30B": "llama-33b",
    "70B": "llama2-70b"})


def preset(name: str) -> TransformerShape:
    """The :data:`PRESETS` shape called ``name`` (or of the size class ``name``, e.g. "70B").

    An unknown name raises ``ValueError`` listing the names allowed.
    Chapter: *HBM and the memory hierarchy*, "Serving a model".
    """
    key = check.one_of("name", name, (*SIZE_CLASSES, *PRESETS))
    return PRESETS[SIZE_CLASSES.get(key, key)]
