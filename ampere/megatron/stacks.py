"""Software stacks as inputs of the time model: :class:`Software` (what a framework does: interleaving,
overlap of each kind of communication, fused or flash kernels) and its named presets :data:`STACKS`
("megatron-2021", "megatron-2022", "megatron-core", "megatron-deepspeed", "deepspeed-zero3", "fsdp",
"ddp-flash"), read from ``ampere/data/tables/software-stacks.json`` with the source of every value.

Chapter: *Megatron-LM: 3D parallelism predicted, validated, and run* (book/megatron.ipynb), section
"Other teams, other software". Pure. A run of another team is Megatron's model with that team's stack and
layout, never a per-run constant.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any, Mapping

from .. import check, results

#: The boolean fields of a stack, in table order.
_FLAGS = ("interleave", "scatter_gather", "tp_overlap", "dp_overlap", "flash_attention", "fused_kernels")
_FIELDS = ("interleave", "scatter_gather", "tp_overlap", "dp_overlap", "zero3_prefetch", "flash_attention",
           "fused_kernels")
#: How far ZeRO-3/FSDP gathers weights ahead: "none" (each layer's weights just before it runs), "forward"
#: (the next layer's during this one's forward; in the backward pass after the gradient computation, so
#: exposed: PyTorch FSDP's BACKWARD_POST), "both" (ahead in both passes: BACKWARD_PRE, Megatron-LM's
#: --overlap-param-gather).
ZERO3_PREFETCH = ("none", "forward", "both")


@dataclass(frozen=True)
class Software:
    """What a training framework does, as the time model (:func:`estimate`) reads it.

    * ``interleave``: the pipeline engine can run the interleaved 1F1B schedule (Megatron-LM; DeepSpeed's
      pipeline engine cannot);
    * ``scatter_gather``: pipeline sends go 1/t per tensor rank over its own adapter, then an all-gather;
    * ``tp_overlap``: the backward pass's tensor-parallel collectives (the input-gradient all-reduce, with
      sequence parallelism the input re-gather and the reduce-scatter) run beside the GEMMs;
    * ``dp_overlap``: the data-parallel gradient reduction runs in buckets during the last backward pass;
    * ``zero3_prefetch``: how far ZeRO-3/FSDP gathers weights ahead (:data:`ZERO3_PREFETCH`);
    * ``flash_attention``: fused attention, no s x s tensor in HBM (memory and time);
    * ``fused_kernels``: Megatron's fused bias-GELU, bias-dropout-add and scaled masked softmax.

    Overlap is never free: an overlapped collective slows the kernel it runs beside
    (:data:`ampere.megatron.INPUTS` ``overlap_slowdown``). ``sources`` gives each field's source
    ("bibkey: where"). Chapter: "Other teams, other software".
    """

    name: str
    label: str
    interleave: bool
    scatter_gather: bool
    tp_overlap: bool
    dp_overlap: bool
    zero3_prefetch: str
    flash_attention: bool
    fused_kernels: bool
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)
    note: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        check.string("name", self.name, max_len=80)
        check.string("label", self.label, max_len=500)
        check.string("note", self.note, allow_empty=True, max_len=2000)
        for f in _FLAGS:
            check.boolean(f, getattr(self, f))
        check.one_of("zero3_prefetch", self.zero3_prefetch, ZERO3_PREFETCH)
        sources = check.mapping("sources", self.sources)
        for k, v in sources.items():
            check.one_of("sources key", k, _FIELDS)
            check.string(f"sources[{k!r}]", v, max_len=2000)
        object.__setattr__(self, "sources", MappingProxyType(sources))

    def with_(self, **changes: Any) -> "Software":
        """A copy with some fields changed (validated): ``STACKS["megatron-2022"].with_(tp_overlap=False)``.
        Unknown fields raise ``ValueError`` listing the allowed ones."""
        allowed = {f.name for f in fields(self)} - {"sources"}
        unknown = sorted(set(changes) - allowed)
        if unknown:
            raise ValueError(f"unknown Software fields {unknown}; allowed: {', '.join(sorted(allowed))}")
        label = changes.pop("label", None)
        if label is None:
            label = self.label + " (" + ", ".join(f"{k}={v}" for k, v in sorted(changes.items())) + ")"
        return replace(self, label=label, **changes)

    def differences(self, other: "Software") -> dict[str, tuple[Any, Any]]:
        """Fields whose values differ from ``other``'s: {field: (self's, other's)}."""
        if not isinstance(other, Software):
            raise TypeError(f"other must be a Software (a stack of STACKS), got {other!r:.60} ({type(other).__name__})")
        return {f: (getattr(self, f), getattr(other, f)) for f in _FIELDS if getattr(self, f) != getattr(other, f)}


@functools.lru_cache(maxsize=1)
def _stacks() -> Mapping[str, Software]:
    table = results.table("software-stacks")
    out = {}
    for r in table["rows"]:
        out[r["stack"]] = Software(r["stack"], r["label"], *(r[f] for f in _FIELDS),
                                   sources={k: v for k, v in r["sources"].items() if not k.startswith("_")},
                                   note=r["note"])
    return MappingProxyType(out)


#: The named stacks (``ampere/data/tables/software-stacks.json``).
STACKS: Mapping[str, Software] = _stacks()
#: Field meanings, from the same table.
STACK_FIELDS: Mapping[str, str] = MappingProxyType({
    'interleave': 'the pipeline engine can run the interleaved 1F1B schedule (v model chunks per GPU)',
    'scatter_gather': 'a pipeline send is split over the tensor-parallel ranks (1/t each over its own adapter) and all-gathered on arrival',
    'tp_overlap': 'the tensor-parallel collectives of the backward pass are issued asynchronously beside the input- and weight-gradient GEMMs',
    'dp_overlap': 'the data-parallel gradient reduction runs in buckets during the backward pass of the last microbatch (else after the pipeline flush)',
    'zero3_prefetch': "with ZeRO-3/FSDP, how far ahead weights are all-gathered: 'none', 'forward' (the next layer's during this one's forward; in the backward pass after the gradient computation) or 'both'",
    'flash_attention': 'one fused attention kernel (FlashAttention or equivalent): no s x s tensor in memory or HBM traffic',
    'fused_kernels': "Megatron's fused elementwise kernels (bias-GELU, bias-dropout-add, scaled masked softmax); else one kernel per operation",
})
#: The stack :func:`estimate` assumes unless told otherwise: the 2021 paper's code.
DEFAULT_STACK = "megatron-2021"


def software(stack: str | Software | None = None) -> Software:
    """A :class:`Software`: a preset of :data:`STACKS` by name, a :class:`Software` as is, or None for
    :data:`DEFAULT_STACK`. Chapter: "Other teams, other software"."""
    if stack is None:
        return STACKS[DEFAULT_STACK]
    if isinstance(stack, Software):
        return stack
    if not isinstance(stack, str):
        raise TypeError(f"software stack must be a stack name ({', '.join(STACKS)}) or a Software, got {stack!r:.60} "
                        f"({type(stack).__name__})")
    if stack not in STACKS:
        raise ValueError(f"software stack {stack!r:.60} is not known; allowed: {', '.join(STACKS)}")
    return STACKS[stack]
