"""Properties of ampere.check: what each helper accepts it returns converted; what it refuses it names."""

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ampere import check, specs

from .harness import (answers, any_case, bad_booleans, bad_floats, bad_ints, bad_names, bad_strings,
                      catalogue_names, covers, finite_floats, not_lists, rejects, words)


@covers(check.integer, check.positive_int, check.nonneg_int, check.bounded_int)
@given(st.integers(-1000, 1000), st.integers(-1000, 1000), st.data())
def test_integers_in_bounds_pass_and_others_are_named(lo, span, data):
    hi = lo + abs(span)
    v = data.draw(st.integers(lo, hi))
    assert answers(check.integer, "n", v, minimum=lo, maximum=hi, type_=int) == v
    assert answers(check.bounded_int, "n", np.int64(v), lo, hi, type_=int) == v
    assert type(check.bounded_int("n", np.int32(v), lo, hi)) is int
    rejects(check.integer, "n", "n", data.draw(bad_ints(lo, hi)), minimum=lo, maximum=hi)
    rejects(check.bounded_int, "n", "n", data.draw(bad_ints(lo, hi)), lo, hi, why="a test")
    rejects(check.positive_int, "n", "n", data.draw(bad_ints(1)))
    rejects(check.nonneg_int, "n", "n", data.draw(bad_ints(0)))
    assert check.positive_int("n", abs(v) + 1) == abs(v) + 1 and check.nonneg_int("n", abs(v)) == abs(v)


@covers(check.real, check.finite, check.positive, check.nonneg, check.bounded, check.fraction)
@given(finite_floats(), st.data())
def test_numbers_are_finite_floats_and_others_are_named(x, data):
    assert answers(check.finite, "x", x, type_=float) == x
    assert answers(check.real, "x", np.float32(1.5), type_=float) == 1.5
    rejects(check.finite, "x", "x", data.draw(bad_floats(None, None)))
    rejects(check.real, "x", "x", 10 ** 400)  # too large for a float: not an OverflowError
    rejects(check.positive, "x", "x", data.draw(bad_floats(0.0)))
    rejects(check.nonneg, "x", "x", data.draw(bad_floats(0.0, strict=False)))
    rejects(check.fraction, "x", "x", data.draw(bad_floats(0.0, 1.0, strict=False)))
    rejects(check.bounded, "x", "x", data.draw(bad_floats(-2.0, 2.0, strict=False)), -2.0, 2.0)
    assert check.positive("x", abs(x) + 1) > 0 and check.nonneg("x", abs(x)) >= 0
    assert 0 <= check.fraction("x", data.draw(st.floats(0, 1))) <= 1
    assert check.real("x", math.inf, allow_inf=True) == math.inf


@covers(check.boolean)
@given(st.booleans(), bad_booleans())
def test_booleans_are_only_booleans(b, bad):
    assert answers(check.boolean, "flag", b, type_=bool) is b
    assert check.boolean("flag", np.bool_(b)) is b
    rejects(check.boolean, "flag", "flag", bad)


@covers(check.string)
@given(words(), bad_strings())
def test_strings(text, bad):
    assert answers(check.string, "label", text, type_=str) == text
    assert check.string("label", "", allow_empty=True) == ""
    rejects(check.string, "label", "label", bad)
    rejects(check.string, "label", "label", "x" * 11, max_len=10)


@covers(check.choice, check.one_of)
@given(st.lists(words(), min_size=1, max_size=5, unique_by=str.casefold), st.data())
def test_names_come_from_the_allowed_ones(allowed, data):
    pick = data.draw(st.sampled_from(allowed))
    assert answers(check.one_of, "precision", pick, allowed, type_=str) == pick
    assert check.one_of("precision", data.draw(any_case(pick)), allowed, ignore_case=True) == pick
    assert check.choice("n", 2, [1, 2]) == 2
    err = rejects(check.one_of, "precision", "precision", data.draw(bad_names(allowed)), allowed)
    assert repr(allowed[0]) in str(err) or not isinstance(err, ValueError)
    rejects(check.choice, "n", "n", True, [1, 2])  # True is not 1 here


@covers(check.names, check.sequence)
@given(st.lists(words(), min_size=1, max_size=5, unique=True), st.data())
def test_lists_of_names_are_lists_never_strings(allowed, data):
    picks = data.draw(st.lists(st.sampled_from(allowed), min_size=1, max_size=4))
    assert answers(check.names, "gpus", picks, allowed, type_=list) == picks
    assert answers(check.names, "gpus", tuple(picks), allowed, type_=list) == picks
    rejects(check.names, "gpus", "gpus", data.draw(not_lists()), allowed)
    rejects(check.names, "gpus", "gpus", [], allowed)
    rejects(check.names, "gpus", "gpus", [data.draw(bad_names(allowed))], allowed)
    rejects(check.sequence, "xs", "xs", list(range(5)), max_len=4)
    rejects(check.sequence, "xs", "xs", iter(range(10 ** 9)), max_len=10)  # bounded: not built
    assert check.sequence("xs", range(3), check.nonneg_int) == [0, 1, 2]
    assert check.sequence("xs", np.arange(3.0), check.finite) == [0.0, 1.0, 2.0]
    rejects(check.sequence, "xs", "xs", np.zeros((2, 2)))
    if len(picks) > 1 and len(set(picks)) < len(picks):
        rejects(check.names, "gpus", "gpus", picks, allowed, unique=True)


@covers(check.gpu, check.gpus)
@given(catalogue_names(), bad_names(specs.names()))
def test_gpu_names_match_in_any_case(name, bad):
    canonical = answers(check.gpu, "gpu", name, type_=str)
    assert canonical in specs.names() and canonical.casefold() == name.casefold()
    assert check.gpu("gpu", specs.get(canonical)) == canonical
    assert check.gpus("gpus", [name, name]) == [canonical, canonical]
    rejects(check.gpu, "gpu", "gpu", bad)
    rejects(check.gpus, "gpus", "gpus", name)  # a bare string is not a list of GPUs
    rejects(check.gpus, "gpus", "gpus", [])


@covers(check.mapping, check.function, check.optional)
@given(st.dictionaries(words(), st.integers(), max_size=3), st.one_of(not_lists(), st.just([("a", 1)])))
def test_mappings_functions_and_optional(d, bad):
    assert answers(check.mapping, "params", d, type_=dict) == d
    if not isinstance(bad, dict):
        rejects(check.mapping, "params", "params", bad)
    rejects(check.mapping, "params", "params", {}, allow_empty=False)
    assert check.function("fn", len) is len
    rejects(check.function, "fn", "fn", bad)
    assert check.optional(check.positive, "x", None) is None
    assert check.optional(check.positive, "x", 2.0, maximum=3.0) == 2.0
    rejects(check.optional, "x", check.positive, "x", 4.0, maximum=3.0)


@covers(check.at_most)
@given(st.integers(0, 10 ** 6), st.integers(1, 10 ** 12))
def test_at_most_refuses_what_is_over_the_limit(limit, over):
    assert answers(check.at_most, "n", limit, limit, "a test limit") == limit
    err = rejects(check.at_most, "n", "n", limit + over, limit, "a test limit")
    assert "a test limit" in str(err)
    rejects(check.at_most, "n", "n", "1", limit, "a test limit")
    rejects(check.at_most, "n", "n", math.nan, limit, "a test limit")


@covers(check.device)
@given(st.sampled_from(["cpu", "cuda", "cuda:0", "meta"]),
       st.one_of(st.sampled_from(["", "gpu", "cuda:x", "NoSuchDevice"]), st.integers(), st.none(), st.floats()))
def test_devices(good, bad):
    import torch

    value = answers(check.device, "device", good)
    assert value == "cpu" if good == "cpu" else value == torch.device(good)
    rejects(check.device, "device", "device", bad)


@covers(check.device_info, check.argv)
@given(st.one_of(st.integers(), st.text(max_size=5), st.floats(), st.just(object())),
       st.lists(st.text(min_size=1, max_size=8), max_size=5),
       st.one_of(st.just("--quick"), st.integers(), st.lists(st.integers(), min_size=1, max_size=3)))
def test_device_infos_and_command_lines(bad_info, argv, bad_argv):
    from ampere import device

    info = device.DeviceInfo("cpu", "a CPU")
    assert check.device_info("info", info) is info
    assert check.device_info("info", None) is None
    rejects(check.device_info, "info", "info", None, allow_none=False)
    rejects(check.device_info, "info", "info", bad_info)
    assert answers(check.argv, "argv", argv, type_=list) == argv
    assert check.argv("argv", None) == []
    rejects(check.argv, "argv", "argv", bad_argv)
