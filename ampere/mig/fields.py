"""Type-driven checks of the chapter's result records: every field of a frozen dataclass checked against
its annotation with the :mod:`ampere.check` vocabulary, so that a record never holds NaN, a bool for a
number, a string for a list or a negative count.

Chapter: every record class of this package (results of its functions, rows of its tables). Pure Python.
Used in ``__post_init__``: ``check_fields(self)``, with the class's own rules in its ``FIELD_RULES``
(``allow_empty``, ``signed``, ``positive``, ``bounds``, ``choices``). The rules, by annotation: ``str`` a non-empty string
(``allow_empty`` names the fields that may be empty); ``bool`` a boolean; ``int`` an integer from 0 (from
``lo`` when ``signed`` names it) to ``MAX_COUNT``, or ``MAX_SIZE`` for sizes (fields ending in ``_bytes``
or ``_mib``); ``float`` a finite number >= 0 (any finite number when ``signed`` names the field);
``tuple[...]``/``list[...]`` a tuple/list (a list given for a tuple is converted); ``dict[...]`` a mapping;
``X | None`` also ``None``. ``positive`` names the numbers that must be > 0, ``bounds`` maps a number to its
``(lo, hi)``, ``choices`` a field to the names it may hold. Other annotations are left to the class.
:func:`accepted` lists what a record may hold by design, with the reason, for the fuzzer's ACCEPT table.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .. import check

#: the largest count a record holds (instances, SMs, requests, rows): a bigger one is a mistake
MAX_COUNT = 10**9
#: the largest size in bytes or MiB a record holds (16 PiB)
MAX_SIZE = 2**54


def _rules(cls: type) -> dict[str, Any]:
    rules = dict(getattr(cls, "FIELD_RULES", {}))
    return {"allow_empty": set(rules.get("allow_empty", ())), "signed": set(rules.get("signed", ())),
            "positive": set(rules.get("positive", ())), "bounds": dict(rules.get("bounds", {})),
            "choices": dict(rules.get("choices", {}))}


def _base(f: dataclasses.Field) -> tuple[str, bool]:
    ann = str(f.type).replace(" ", "")
    optional = ann.endswith("|None")
    return (ann[:-len("|None")] if optional else ann), optional


def _item(name: str, x: Any, base: str) -> Any:
    """An element of a ``tuple[int, ...]``, ``tuple[float, float]`` or ``tuple[str, ...]`` field, checked;
    other element types are left to the class."""
    inner = base[len("tuple["):-1].split(",")[0]
    if inner.endswith("|None") and x is None:
        return x
    inner = inner[:-len("|None")] if inner.endswith("|None") else inner
    if inner == "int":
        return check.integer(name, x, minimum=0, maximum=MAX_COUNT)
    if inner == "float":
        return check.real(name, x, minimum=0.0)
    if inner == "str":
        return check.string(name, x)
    return x


def check_fields(obj: Any) -> None:
    """Check (and normalise) every field of the frozen dataclass ``obj`` by its annotation and its class's
    ``FIELD_RULES``; raise ValueError/TypeError naming ``Class.field``."""
    cls = type(obj).__name__
    rules = _rules(type(obj))
    allow_empty, signed, positive = rules["allow_empty"], rules["signed"], rules["positive"]
    bounds, choices = rules["bounds"], rules["choices"]
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        name = f"{cls}.{f.name}"
        base, optional = _base(f)
        if value is None:
            if optional:
                continue
            raise TypeError(f"{name} must not be None (expected {base})")
        if f.name in choices:
            new = check.one_of(name, value, list(choices[f.name]))
        elif base == "str":
            new = check.string(name, value, allow_empty=f.name in allow_empty)
        elif base == "bool":
            new = check.boolean(name, value)
        elif base == "int":
            lo, hi = bounds.get(f.name, (None if f.name in signed else (1 if f.name in positive else 0),
                                         MAX_SIZE if f.name.endswith(("_bytes", "_mib")) else MAX_COUNT))
            new = check.integer(name, value, minimum=lo, maximum=hi)
        elif base == "float":
            if f.name in bounds:
                new = check.bounded(name, value, *bounds[f.name])
            elif f.name in positive:
                new = check.positive(name, value)
            else:
                new = check.real(name, value, minimum=None if f.name in signed else 0.0)
        elif base.startswith("tuple"):
            if isinstance(value, list):
                value = tuple(value)
            if not isinstance(value, tuple):
                raise TypeError(f"{name} must be a tuple, got {value!r:.60} ({type(value).__name__})")
            new = tuple(_item(f"{name}[{i}]", x, base) for i, x in enumerate(value))
        elif base.startswith("list"):
            if not isinstance(value, list):
                raise TypeError(f"{name} must be a list, got {value!r:.60} ({type(value).__name__})")
            new = value
        elif base.startswith("dict"):
            new = check.mapping(name, value, allow_empty=True)
        else:
            continue
        if new is not value or type(new) is not type(value):
            object.__setattr__(obj, f.name, new)


def accepted(cls: type) -> dict[tuple[str, str, str], str]:
    """What a record of ``cls`` may hold by design, as the fuzzer's ACCEPT entries
    ``(qualified class name, field, kind) -> reason``: 0 for a number that may be zero, 10**12 for a number
    with no upper bound (sizes, rates, FLOPs), -1 for a signed number, any text for free text, "" where a
    field may be empty (tools/fuzz_core.py)."""
    rules = _rules(cls)
    qual = f"{cls.__module__}.{cls.__qualname__}"
    out: dict[tuple[str, str, str], str] = {}
    for f in dataclasses.fields(cls):
        base, optional = _base(f)
        if optional:
            out[(qual, f.name, "none")] = "None: not known or not applicable (the field is optional)"
        if f.name in rules["choices"]:
            continue
        if base == "str":
            out[(qual, f.name, "unknown")] = "free text of a result record"
            out[(qual, f.name, "unknown-case")] = "free text of a result record"
            if f.name in rules["allow_empty"]:
                out[(qual, f.name, "empty")] = "may be empty in a result record"
        elif base in ("int", "float"):
            lo, hi = rules["bounds"].get(f.name, (None, None))
            if f.name in rules["signed"]:
                out[(qual, f.name, "negative")] = "a signed quantity of a result record"
            if f.name not in rules["positive"] and (lo is None or lo <= 0) and (hi is None or hi >= 0):
                out[(qual, f.name, "zero")] = "zero is a value this result record can hold"
            if base == "float" and f.name not in rules["bounds"]:
                out[(qual, f.name, "huge")] = "a result record holds what was computed; no upper bound is imposed"
            if base == "int" and f.name.endswith(("_bytes", "_mib")) and f.name not in rules["bounds"]:
                out[(qual, f.name, "huge")] = "a size; bounded at 16 PiB"
        elif base.startswith(("tuple", "list", "dict")):
            out[(qual, f.name, "empty")] = "an empty collection is a valid result"
    return out


def device_info(name: str, info: Any) -> Any:
    """``info`` as a device description: ``None`` (probe this machine) or an object with the fields of
    :class:`ampere.device.DeviceInfo` this package reads (``backend``, ``sparse_2to4_backends``, ``name``)."""
    from .. import device as _device

    if info is None:
        return _device.probe()
    if not all(hasattr(info, a) for a in ("backend", "name")):
        raise TypeError(f"{name} must be a DeviceInfo (from ampere.device.probe()) or None; got "
                        f"{info!r:.60} ({type(info).__name__})")
    return info


def argv_list(argv: Any) -> list[str]:
    """A command line for a ``bench_main``: ``None`` (no options) or a list of strings."""
    if argv is None:
        return []
    return check.sequence("argv", argv, check.string, min_len=0, max_len=256)
