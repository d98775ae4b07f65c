"""Properties of ampere.fields: a result record checked by annotation or by rule keeps what is valid
(converted) and refuses what is not, naming ``Class.field``."""

from __future__ import annotations

import dataclasses
import math

from hypothesis import given
from hypothesis import strategies as st

from ampere import fields

from .harness import answers, bad_booleans, bad_floats, bad_ints, covers, finite_floats, rejects


@dataclasses.dataclass(frozen=True)
class _Row:
    FIELD_RULES = {"allow_empty": ("note",), "signed": ("delta",), "positive": ("ms",),
                   "bounds": {"share": (0.0, 1.0), "slot": (0, 7)}, "choices": {"mode": ("a", "b")}}
    name: str
    note: str
    ok: bool
    count: int
    slot: int
    size_bytes: int
    ms: float
    delta: float
    share: float
    mode: str
    dims: tuple[int, ...]
    items: list[str]
    extra: dict[str, int]
    maybe: float | None = None

    def __post_init__(self) -> None:
        fields.check_fields(self)


def _row(**over):
    base = dict(name="x", note="", ok=True, count=3, slot=2, size_bytes=2**40, ms=1.5, delta=-2.0, share=0.5,
                mode="a", dims=[1, 2], items=["p"], extra={"k": 1})
    base.update(over)
    return _Row(**base)


@covers(fields.check_fields, fields.accepted)
@given(st.integers(0, fields.MAX_COUNT), finite_floats(-1e6, 1e6), st.floats(0.0, 1.0),
       st.sampled_from(["count", "slot", "ms", "share", "mode", "ok", "name", "dims", "items", "extra", "maybe"]),
       st.data())
def test_records_checked_by_annotation(count, delta, share, field, data):
    row = answers(_row, count=count, delta=delta, share=share)
    assert row.dims == (1, 2) and isinstance(row.dims, tuple)  # a list given for a tuple is converted
    bad = {"count": bad_ints(0, fields.MAX_COUNT),
           "slot": st.integers(8, 100), "ms": bad_floats(0.0),
           "share": bad_floats(0.0, 1.0, strict=False), "mode": st.sampled_from(["c", "", "A"]),
           "ok": bad_booleans(), "name": st.sampled_from(["", 3, None]), "dims": st.sampled_from(["12", 3, (1, -1)]),
           "items": st.sampled_from([("p",), "p", None]), "extra": st.sampled_from([[1], "k", None]),
           "maybe": st.sampled_from([math.nan, "1", True])}[field]
    rejects(_row, f"_Row.{field}", **{field: data.draw(bad)})
    accepted = fields.accepted(_Row)
    qual = f"{_Row.__module__}.{_Row.__qualname__}"
    assert accepted[(qual, "note", "empty")] and (qual, "name", "empty") not in accepted
    assert (qual, "delta", "negative") in accepted and (qual, "ms", "zero") not in accepted
    assert (qual, "maybe", "none") in accepted and (qual, "mode", "unknown") not in accepted


@dataclasses.dataclass(frozen=True)
class _Ruled:
    n: int
    x: float
    label: str
    flag: bool
    kind: str
    gpu: str
    maybe: float | None

    def __post_init__(self) -> None:
        fields.check_each(self, n=fields.integer_rule(1, 10), x=fields.number_rule(0.0, 5.0, strict=True),
                          label=fields.text_rule(allow_empty=True), flag=fields.flag_rule,
                          kind=fields.name_rule(("SM", "memcpy")), gpu=fields.gpu_rule,
                          maybe=fields.optional_rule(fields.number_rule()))


@covers(fields.check_each, fields.integer_rule, fields.number_rule, fields.optional_rule, fields.text_rule,
        fields.flag_rule, fields.name_rule, fields.gpu_rule)
@given(st.integers(1, 10), st.floats(1e-9, 5.0), st.sampled_from(["n", "x", "label", "flag", "kind", "gpu", "maybe"]),
       st.data())
def test_records_checked_by_rule(n, x, field, data):
    ok = dict(n=n, x=x, label="", flag=False, kind="SM", gpu="a100-sxm4-80gb", maybe=None)
    row = answers(_Ruled, **ok)
    assert row.gpu == "A100-SXM4-80GB" and row.n == n
    bad = {"n": bad_ints(1, 10),
           "x": bad_floats(0.0, 5.0), "label": st.sampled_from([None, 1, ["a"]]),
           "flag": bad_booleans(), "kind": st.sampled_from(["sm", "ce", ""]), "gpu": st.sampled_from(["A100", "", 5]),
           "maybe": st.sampled_from([math.inf, -1.0, "2"])}[field]
    rejects(_Ruled, f"_Ruled.{field}", **{**ok, field: data.draw(bad)})


@given(st.integers(-10, 10), st.integers(1, 10), bad_booleans())
def test_rule_makers_check_their_own_arguments(lo, width, bad_flag):
    assert fields.integer_rule(lo, lo + width)("n", lo) == lo
    rejects(fields.integer_rule, "lo", lo + width + 1, lo + width)
    rejects(fields.integer_rule, "lo", True, 3)
    rejects(fields.number_rule, "hi", 0.0, math.nan)
    rejects(fields.number_rule, "strict", 0.0, 1.0, strict=bad_flag)
    rejects(fields.text_rule, "allow_empty", bad_flag)
    rejects(fields.name_rule, "allowed", "SM")
    rejects(fields.name_rule, "allowed[0]", [3])
    rejects(fields.optional_rule, "rule", "not a rule")
    assert fields.name_rule({"a": 1, "b": 2})("kind", "b") == "b"


@dataclasses.dataclass(frozen=True)
class _Link:
    gpus: int
    rate: float
    cap: float
    offset: float
    label: str
    where: str
    sizes: tuple[int, ...]
    extra: dict[str, int]
    ok: bool
    maybe: int | None = None

    def __post_init__(self) -> None:
        fields.check_annotated(self, positive=("gpus", "rate"), signed=("offset",), maxima={"gpus": 1024},
                               infinite=("cap",), allow_empty=("where",))


@covers(fields.check_annotated)
@given(st.integers(1, 1024), st.floats(1e-6, 1e12), finite_floats(), st.sampled_from(
    ["gpus", "rate", "cap", "label", "sizes", "extra", "ok", "maybe"]), st.data())
def test_records_checked_by_annotation_with_rules_as_arguments(gpus, rate, offset, field, data):
    ok = dict(gpus=gpus, rate=rate, cap=math.inf, offset=offset, label="x", where="", sizes=(1, 2), extra={},
              ok=True)
    row = answers(_Link, **{**ok, "cap": 1.0})
    assert row.gpus == gpus and _Link(**ok).cap == math.inf  # a cap that does not bind may be +inf
    bad = {"gpus": bad_ints(1, 1024), "rate": bad_floats(0.0), "cap": st.sampled_from([-math.inf, -1.0, math.nan]),
           "label": st.sampled_from(["", 3, None]), "sizes": st.sampled_from(["12", 3, None]),
           "extra": st.sampled_from([[1], "k", None]), "ok": bad_booleans(), "maybe": st.sampled_from([-1, 1.5, "1"])}
    rejects(_Link, field, **{**ok, field: data.draw(bad[field])})

    rejects(fields.check_annotated, "positive", row, positive="gpus")
    rejects(fields.check_annotated, "maxima", row, maxima=[("gpus", 3)])
