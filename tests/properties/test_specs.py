"""Properties of ampere.specs: the catalogue's lookups, its derived figures, and the three data classes (GPUSpec,
Quoted, MemoryFigure) refusing bad fields by name."""

import dataclasses
import math

from hypothesis import given
from hypothesis import strategies as st

from ampere import specs

from .harness import (any_case, bad_ints, bad_names, bad_strings, catalogue_names, covers, finite_floats,
                      not_numbers, answers, rejects, rejects_any)

SPECS = specs.all_specs()


@covers(specs.names, specs.all_specs, specs.get)
@given(catalogue_names(), st.data())
def test_get_finds_every_name_in_any_case_and_names_gpu_when_it_refuses(name, data):
    names = answers(specs.names, type_=list)
    assert names == [s.name for s in answers(specs.all_specs, type_=list)] and len(set(names)) == len(names)
    spec = answers(specs.get, name, type_=specs.GPUSpec)
    assert spec.name.casefold() == name.casefold() and specs.get(spec) is spec
    rejects(specs.get, "gpu", data.draw(bad_names(names)))
    rejects(specs.get, "gpu", data.draw(st.one_of(st.integers(), st.none(), st.booleans(), st.just(["T4"]))))


@covers(specs.match)
@given(st.sampled_from(SPECS), st.text(max_size=20), st.data())
def test_match_maps_driver_names_and_refuses_non_strings(spec, text, data):
    assert specs.match(f"NVIDIA {spec.marketing_name}") in (None, *SPECS)  # a marketing name may be ambiguous
    assert specs.match(spec.name) is spec  # the catalogue key itself, as a driver could print it
    got = answers(specs.match, text, type_=(specs.GPUSpec, type(None)))
    assert got is None or got in SPECS
    assert specs.match(None) is None and specs.match("") is None
    rejects(specs.match, "device_name", data.draw(st.one_of(st.integers(), st.booleans(), st.just(b"x"),
                                                            st.just(["NVIDIA H200"]))))


@covers(specs.pcie_bytes_per_s)
@given(st.sampled_from([3, 4, 5]), st.sampled_from([1, 2, 4, 8, 16]), st.data())
def test_pcie_bandwidth_scales_with_lanes_and_refuses_bools(gen, lanes, data):
    bw = answers(specs.pcie_bytes_per_s, gen, lanes, type_=float)
    assert bw == specs.pcie_bytes_per_s(gen) * lanes / 16 and bw > 0
    rejects_any(data, specs.pcie_bytes_per_s, {"generation": gen, "lanes": lanes}, {
        "generation": st.one_of(st.sampled_from([0, 1, 2, 6, 7, True, 4.0, "4", None])),
        "lanes": st.one_of(st.sampled_from([0, 3, 5, 32, True, False, 16.0, "16", None]))})


@covers(specs.GPUSpec)
@given(st.sampled_from(SPECS), st.data())
def test_specs_derive_positive_finite_figures_and_refuse_bad_fields(spec, data):
    for p in spec.all_precisions():
        peak = spec.peak_flops(p)
        assert math.isfinite(peak) and peak > 0 and spec.supports(p)
        assert spec.source("peak_flops") and spec.ridge_point(p) > 0
    assert spec.memory_bandwidth_derived_bytes_per_s > 0 and 0 < spec.cuda_visible_bytes < spec.memory_bytes
    assert all(spec.source(f.name) for f in dataclasses.fields(spec))
    rejects(spec.peak_flops, "precision", data.draw(bad_names(specs.ALL_PRECISIONS)))
    rejects(spec.peak_flops, "sparse", "bf16", data.draw(st.sampled_from(["false", 0, 1, None])))
    rejects(spec.source, "field_name", data.draw(st.one_of(st.integers(), st.just("no_such_field"))))
    rejects(spec.memory_figure, "quantity", data.draw(bad_names(specs.MEMORY_QUANTITIES)))
    # a spec rebuilt with one bad field is refused, naming GPUSpec.<field>
    field, bad = data.draw(st.sampled_from([
        ("sm_count", 0), ("sm_count", True), ("sm_count", 10 ** 12), ("sm_count", 2.0), ("boost_clock_hz", math.nan),
        ("boost_clock_hz", -1.0), ("memory_bytes", "80GB"), ("l2_bytes", None), ("sparse_2to4", "yes"),
        ("compute_capability", (8,)), ("compute_capability", "8.0"), ("pcie_generation", 9), ("name", ""),
        ("memory_stacks", 0), ("notes", "a note"), ("fma_per_clk_per_sm", {"fp12": 1}), ("launch_year", 1900)]))
    rejects(dataclasses.replace, f"GPUSpec.{field}" if field != "fma_per_clk_per_sm" else "fma_per_clk_per_sm",
            spec, **{field: bad})


@covers(specs.Quoted)
@given(st.integers(0, 10 ** 6), st.integers(0, 3), st.data())
def test_quoted_reads_the_printed_precision(whole, decimals, data):
    text = f"{whole / 10 ** decimals:.{decimals}f}"
    q = answers(specs.Quoted, text, type_=specs.Quoted)
    assert q.unit_in_last_place == 10.0 ** -decimals * 1e12 and q.agrees_with(q.value)
    assert not q.agrees_with(q.value + 2 * q.unit_in_last_place)
    rejects(q.agrees_with, "derived", data.draw(st.one_of(not_numbers(), st.just(math.nan), st.just(-1.0))))
    rejects_any(data, specs.Quoted, {"text": text}, {
        "text": st.one_of(bad_strings(), st.sampled_from(["9.7 TFLOPS", "1,248", "-1", "1e3", ".5"])),
        "scale": st.one_of(not_numbers(), st.sampled_from([0.0, -1.0, math.inf, 1e40])),
        "note": bad_strings().filter(lambda v: v is not None), "source": bad_strings().filter(lambda v: v is not None)},
        field=lambda a: f"Quoted.{a}")


@covers(specs.MemoryFigure)
@given(st.sampled_from(SPECS), st.sampled_from(specs.MEMORY_QUANTITIES), st.data())
def test_memory_figures_come_from_the_table_and_refuse_bad_fields(spec, quantity, data):
    fig = spec.memory_figure(quantity)
    if fig is not None:
        assert isinstance(fig, specs.MemoryFigure) and fig.gpu == spec.name
        assert fig.bytes is None or (fig.bytes >= 0 and fig.source)
    valid = {"gpu": data.draw(any_case(spec.name)), "quantity": quantity, "bytes": 2 ** 30, "printed": "1024MiB",
             "source": "thamada2024nvidiasmi", "where": "a capture"}
    made = answers(specs.MemoryFigure, **valid, type_=specs.MemoryFigure)
    assert made.gpu == spec.name and made.mib == 1024 and made.gib == 1
    rejects_any(data, specs.MemoryFigure, valid, {
        "gpu": bad_names(specs.names()), "quantity": bad_names(specs.MEMORY_QUANTITIES),
        "bytes": bad_ints(0, 2 ** 50).filter(lambda v: v is not None), "where": bad_strings(allow_empty=True),
        "ecc": st.sampled_from(["yes", 1, True, ""])}, field=lambda a: f"MemoryFigure.{a}")
    rejects(specs.MemoryFigure, "MemoryFigure.note", **{**valid, "bytes": None, "source": None})  # null needs a note


@given(finite_floats(0, 1e18))
def test_derived_peaks_are_finite_for_any_bandwidth(bw):
    a100 = specs.get("A100-SXM4-80GB")
    if bw > 0:
        assert math.isfinite(a100.ridge_point("bf16", bw))
    else:
        rejects(a100.ridge_point, "bytes_per_s", "bf16", bw)
