"""ampere.specs: the catalogue, derived peaks against the datasheets, matching, errors, citations."""

import re
from dataclasses import fields
from pathlib import Path

import pytest

from ampere import specs

BIB = (Path(__file__).resolve().parent.parent / "book" / "references.bib").read_text()
BIB_KEYS = set(re.findall(r"^@\w+\{([^,]+),", BIB, re.M))

REQUIRED = ["A100-SXM4-40GB", "A100-SXM4-80GB", "A100-PCIE-40GB", "A100-PCIE-80GB", "V100-SXM2-32GB",
            "H100-SXM5-80GB", "H200-SXM-141GB", "RTX-A6000", "RTX-A2000-12GB", "T4", "L4"]


def test_catalogue_has_required_names():
    assert set(REQUIRED) <= set(specs.names())


@pytest.mark.parametrize("name", REQUIRED)
def test_every_datasheet_peak_matches_its_derivation(name):
    spec = specs.get(name)
    assert spec.datasheet, f"{name} has no datasheet figures to check against"
    for (precision, sparse), quoted in spec.datasheet.items():
        derived = spec.peak_flops(precision, sparse)
        if quoted.note is None:
            assert quoted.agrees_with(derived), (name, precision, sparse, quoted.text, derived / 1e12)
        else:  # a documented NVIDIA rounding quirk must really be one, or the note is stale
            assert not quoted.agrees_with(derived), (name, precision, quoted.note)


def test_a100_headline_numbers():
    a100 = specs.get("A100-SXM4-80GB")
    tf = {p: a100.peak_flops(p) / 1e12 for p in a100.precisions()}
    assert round(tf["fp64"], 1) == 9.7 and round(tf["fp64_tc"], 1) == 19.5 and round(tf["fp32"], 1) == 19.5
    assert round(tf["tf32"]) == 156 and round(tf["bf16"]) == 312 and round(tf["fp16"]) == 312
    assert round(tf["int8"]) == 624
    assert round(a100.peak_flops("fp16", sparse=True) / 1e12) == 624
    # the arithmetic itself: 108 SMs x 1024 FMA/clk x 2 FLOP x 1.41 GHz
    assert a100.peak_flops("bf16") == pytest.approx(108 * 1024 * 2 * 1.41e9)


def test_sparse_is_twice_dense_and_only_for_tensor_precisions():
    a100 = specs.get("A100-SXM4-40GB")
    for p in ("tf32", "bf16", "fp16", "int8", "int4"):
        assert a100.peak_flops(p, sparse=True) == 2 * a100.peak_flops(p)
    for p in ("fp64", "fp64_tc", "fp32"):
        with pytest.raises(ValueError, match="sparse"):
            a100.peak_flops(p, sparse=True)
    with pytest.raises(ValueError, match="no 2:4"):
        specs.get("V100-SXM2-32GB").peak_flops("fp16", sparse=True)


def test_hopper_tensor_clock_differs_from_boost():
    h100 = specs.get("H100-SXM5-80GB")
    assert h100.clock_for("bf16") == 1.83e9 and h100.clock_for("fp32") == 1.98e9
    assert round(h100.peak_flops("bf16") / 1e12, 1) == 989.4
    assert h100.peak_flops("fp8") == 2 * h100.peak_flops("bf16")


def test_h200_has_h100_compute_and_more_memory():
    h100, h200 = specs.get("H100-SXM5-80GB"), specs.get("H200-SXM-141GB")
    for p in h100.precisions():
        assert h200.peak_flops(p) == h100.peak_flops(p)
    assert h200.memory_bytes > h100.memory_bytes and h200.hbm_bytes_per_s > h100.hbm_bytes_per_s


@pytest.mark.parametrize("name,expected_gbs,tol", [
    ("A100-SXM4-40GB", 1555, 0.5), ("A100-SXM4-80GB", 2039, 0.5), ("A100-PCIE-80GB", 1935, 0.5),
    ("V100-SXM2-32GB", 900, 2), ("RTX-A6000", 768, 0.5), ("RTX-A2000-12GB", 288, 0.5), ("T4", 320, 0.5),
    ("L4", 300, 0.5), ("H100-SXM5-80GB", 3350, 5), ("H200-SXM-141GB", 4800, 0.5)])
def test_memory_bandwidth_derivation(name, expected_gbs, tol):
    spec = specs.get(name)
    assert spec.memory_bandwidth_derived_bytes_per_s / 1e9 == pytest.approx(expected_gbs, abs=tol)
    assert spec.hbm_bytes_per_s / 1e9 == pytest.approx(expected_gbs, abs=tol)


def test_ga10x_is_compute_capability_8_6_not_8_0():
    for name in ("RTX-A6000", "RTX-A2000-12GB"):
        spec = specs.get(name)
        assert spec.compute_capability == (8, 6)
        assert spec.fma_per_clk_per_sm["fp64"] * 64 == spec.fma_per_clk_per_sm["fp32"]  # FP64 at 1/64
        assert spec.mig_max_instances == 0
    assert specs.get("A100-SXM4-80GB").compute_capability == (8, 0)


def test_counts_and_structure():
    a100 = specs.get("A100-SXM4-80GB")
    assert (a100.die_sms, a100.sm_count, a100.fp32_cores, a100.tensor_cores) == (128, 108, 6912, 432)
    assert a100.l2_bytes == 40 * 2**20 and specs.get("V100-SXM2-32GB").l2_bytes == 6 * 2**20
    assert a100.nvlink_bytes_per_s == 600e9 and a100.nvlink_bytes_per_s_per_direction == 300e9
    assert a100.nvlink_bytes_per_s == a100.nvlink_links * 25e9 * 2
    assert specs.get("V100-SXM2-32GB").nvlink_bytes_per_s == 300e9
    assert a100.pcie_bytes_per_s == pytest.approx(31.5e9, rel=1e-3)
    assert a100.l2_bytes_per_s == pytest.approx(7.22e12, rel=1e-3)


def test_unknown_name_lists_known_ones():
    with pytest.raises(ValueError) as err:
        specs.get("A100-SXM4-160GB")
    assert "A100-SXM4-80GB" in str(err.value) and "T4" in str(err.value) and "any case" in str(err.value)
    for bad in (None, 3, True, ["T4"]):  # a wrong type is a TypeError naming the argument
        with pytest.raises(TypeError, match="gpu must be a catalogue name"):
            specs.get(bad)


@pytest.mark.parametrize("bad", [3, True, b"NVIDIA H200", ["NVIDIA H200"]])
def test_match_refuses_what_is_not_a_device_name(bad):
    with pytest.raises(TypeError, match="device_name"):
        specs.match(bad)


@pytest.mark.parametrize("name", ["a100-sxm4-80gb", "A100-sxm4-80GB", "h200-sxm-141gb", "t4", "rtx-a6000"])
def test_names_resolve_in_any_case(name):
    spec = specs.get(name)
    assert spec.name.casefold() == name.casefold() and spec is specs.get(spec.name)


def test_unknown_and_unsupported_precision_list_allowed_values():
    a100 = specs.get("A100-SXM4-80GB")
    with pytest.raises(ValueError) as err:
        a100.peak_flops("fp12")
    assert "fp64_tc" in str(err.value) and "int4" in str(err.value)
    with pytest.raises(ValueError) as err:
        a100.peak_flops("fp8")
    assert "not supported on A100-SXM4-80GB" in str(err.value) and "bf16" in str(err.value)
    with pytest.raises(ValueError):
        specs.get("V100-SXM2-32GB").peak_flops("tf32")
    with pytest.raises(ValueError):
        specs.get("H100-SXM5-80GB").peak_flops("int4")


@pytest.mark.parametrize("device_name,expected", [
    ("NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB"), ("NVIDIA A100-SXM4-40GB", "A100-SXM4-40GB"),
    ("NVIDIA A100 80GB PCIe", "A100-PCIE-80GB"), ("NVIDIA A100-PCIE-40GB", "A100-PCIE-40GB"),
    ("NVIDIA H200", "H200-SXM-141GB"), ("NVIDIA H100 80GB HBM3", "H100-SXM5-80GB"),
    ("Tesla V100-SXM2-32GB", "V100-SXM2-32GB"), ("Tesla T4", "T4"), ("NVIDIA L4", "L4"),
    ("NVIDIA RTX A6000", "RTX-A6000"), ("NVIDIA RTX A2000 12GB", "RTX-A2000-12GB"),
    ("NVIDIA A100-SXM4-40GB MIG 1g.5gb", "A100-SXM4-40GB"),
    ("NVIDIA H100 PCIe", None), ("NVIDIA H200 NVL", None), ("NVIDIA L40S", None),
    ("NVIDIA GeForce RTX 3090", None), ("Tesla V100-SXM2-16GB", None), ("", None), (None, None)])
def test_match(device_name, expected):
    got = specs.match(device_name)
    assert (got.name if got else None) == expected


def test_every_field_has_a_citation_key_in_the_bibliography():
    for spec in specs.all_specs():
        for f in fields(spec):
            key = spec.source(f.name)
            assert key in BIB_KEYS, (spec.name, f.name, key)
    with pytest.raises(ValueError):
        specs.get("T4").source("not_a_field")


def test_specs_are_frozen_and_hashable():
    spec = specs.get("T4")
    with pytest.raises(Exception):
        spec.sm_count = 1
    with pytest.raises(TypeError):
        spec.fma_per_clk_per_sm["fp32"] = 1
    assert len({spec, specs.get("T4")}) == 1


def test_pcie_helper_rejects_bad_input():
    assert specs.pcie_bytes_per_s(4) == pytest.approx(31.5e9, rel=1e-3)
    with pytest.raises(ValueError):
        specs.pcie_bytes_per_s(6)
    with pytest.raises(ValueError):
        specs.pcie_bytes_per_s(4, lanes=3)
    for kwargs in ({"generation": 4, "lanes": True}, {"generation": True}, {"generation": 4.0}):
        with pytest.raises(TypeError, match="lanes|generation"):
            specs.pcie_bytes_per_s(**kwargs)


def test_devicequery_captures_are_the_sources_where_nvidia_prints_none():
    """The H200's 60 MiB L2 and 6144-bit bus, the A100 80GB's and H100's pin rates, the L4's and A6000's L2
    come from deviceQuery captures (ampere/data/tables/devicequery-memory.json), and agree with them."""
    from ampere import results

    rows = {r["gpu"]: r for r in results.table("devicequery-memory")["rows"]}
    h200 = specs.get("H200-SXM-141GB")
    assert h200.l2_bytes == rows["H200-SXM-141GB"]["l2_bytes"] == 60 * MiB
    assert h200.memory_bus_bits == rows["H200-SXM-141GB"]["bus_bits"] == 6144 and h200.memory_stacks == 6
    for field in ("l2_bytes", "memory_bus_bits", "memory_stacks"):
        assert h200.source(field) == rows["H200-SXM-141GB"]["source"], field
    for name in ("A100-SXM4-80GB", "H100-SXM5-80GB"):
        spec = specs.get(name)
        assert spec.memory_data_rate_bps == 2 * rows[name]["memory_clock_mhz"] * 1e6
        assert spec.source("memory_data_rate_bps") == rows[name]["source"]
    for name in ("L4", "RTX-A6000"):
        assert specs.get(name).l2_bytes == rows[name]["l2_bytes"]
        assert specs.get(name).source("l2_bytes") == rows[name]["source"]


def test_non_tensor_16bit_rates_cite_the_primary_table():
    """NVIDIA's Hopper In-Depth post, Table 3: FP16 78 and BF16 39 TFLOP/s (A100), 2x FP32 on the H100."""
    a100, h100 = specs.get("A100-SXM4-80GB"), specs.get("H100-SXM5-80GB")
    for spec in (a100, h100):
        assert spec.source("simt_rates") == "andersch2022hopperblog"
    assert a100.datasheet[("fp16_simt", False)].source == "andersch2022hopperblog"
    assert round(a100.peak_flops("fp16_simt") / 1e12) == 78 and round(a100.peak_flops("bf16_simt") / 1e12) == 39
    assert h100.peak_flops("fp16_simt") == h100.peak_flops("bf16_simt") == 2 * h100.peak_flops("fp32")


def test_ridge_point_refuses_bad_bandwidths():
    a100 = specs.get("A100-SXM4-80GB")
    assert a100.ridge_point("bf16") == pytest.approx(a100.peak_flops("bf16") / a100.hbm_bytes_per_s)
    for bad in (float("nan"), float("inf"), 0.0, -1.0):
        with pytest.raises(ValueError, match="bytes_per_s"):
            a100.ridge_point("bf16", bytes_per_s=bad)
    with pytest.raises(TypeError, match="bytes_per_s"):
        a100.ridge_point("bf16", bytes_per_s="2e12")


# ----------------------------------------------------------------------------------------------------
# Memory: physical capacity, nvidia-smi total, CUDA total (ampere/data/tables/gpu_memory.json)
# ----------------------------------------------------------------------------------------------------

MiB, GiB = 2**20, 2**30


def test_a100_capacities_are_binary():
    assert specs.get("A100-SXM4-80GB").memory_bytes == 80 * GiB
    assert specs.get("A100-PCIE-80GB").memory_bytes == 80 * GiB
    assert specs.get("A100-SXM4-40GB").memory_bytes == 40 * GiB
    assert specs.get("A100-PCIE-40GB").memory_bytes == 40 * GiB
    # NVML's total is exactly the physical capacity on the A100s: "80GB" means 80 GiB
    assert specs.get("A100-SXM4-80GB").nvidia_smi_memory_bytes == 81920 * MiB == 80 * GiB
    assert specs.get("A100-SXM4-40GB").nvidia_smi_memory_bytes == 40960 * MiB


@pytest.mark.parametrize("name", REQUIRED)
def test_every_card_has_its_three_memory_figures_each_sourced(name):
    spec = specs.get(name)
    for quantity in ("physical", "nvidia_smi_total", "cuda_total"):
        fig = spec.memory_figure(quantity)
        assert fig is not None, (name, quantity)
        if fig.bytes is None:
            assert fig.note and fig.source is None, (name, quantity, "a null needs a note")
        else:
            assert fig.source in BIB_KEYS, (name, quantity, fig.source)
            assert fig.where and fig.printed, (name, quantity, "say where in the source and what it prints")
    assert spec.memory_figure("physical").bytes == spec.memory_bytes
    assert spec.source("memory_bytes") in BIB_KEYS
    if spec.cuda_memory_bytes is not None:
        assert spec.source("cuda_memory_bytes") in BIB_KEYS
    else:
        with pytest.raises(ValueError, match="no published cuda_memory_bytes"):
            spec.source("cuda_memory_bytes")


@pytest.mark.parametrize("name", REQUIRED)
def test_memory_figures_are_ordered(name):
    spec = specs.get(name)
    smi, cuda = spec.nvidia_smi_memory_bytes, spec.cuda_memory_bytes
    if cuda is not None:
        assert cuda < spec.memory_bytes
    if smi is not None:
        assert smi <= spec.memory_bytes
    if smi is not None and cuda is not None:
        assert cuda < smi
    reserved = spec.memory_figure("nvidia_smi_reserved")
    if reserved is not None and reserved.source == spec.memory_figure("cuda_total").source:
        # the same capture: CUDA exposes NVML's total minus the driver's reserve, to within 1 MiB
        assert abs(smi - reserved.bytes - cuda) <= MiB, name


def test_hopper_nvml_total_is_below_the_physical_capacity():
    h100, h200 = specs.get("H100-SXM5-80GB"), specs.get("H200-SXM-141GB")
    assert h100.memory_bytes - h100.nvidia_smi_memory_bytes == 361 * MiB
    assert h200.memory_bytes == 141 * GiB and h200.nvidia_smi_memory_bytes > 141e9  # binary, not decimal


def test_gddr_with_ecc_loses_one_sixteenth():
    for name in ("T4", "L4", "RTX-A6000"):
        spec = specs.get(name)
        assert spec.memory_figure("nvidia_smi_total").ecc == "on"
        assert spec.nvidia_smi_memory_bytes == pytest.approx(spec.memory_bytes * 15 / 16, abs=16 * MiB)


def test_cuda_visible_bytes_published_or_estimated():
    a100 = specs.get("A100-SXM4-80GB")
    assert a100.cuda_visible_bytes == a100.cuda_memory_bytes == 85_100_068_864 and not a100.cuda_memory_estimated
    v100 = specs.get("V100-SXM2-32GB")  # no citable CUDA total: a conservative estimate from the HBM cards
    assert v100.cuda_memory_bytes is None and v100.cuda_memory_estimated
    hbm = [s for s in specs.all_specs() if s.memory_stacks is not None and s.cuda_memory_bytes is not None]
    worst = max(1 - s.cuda_memory_bytes / s.memory_bytes for s in hbm)
    assert v100.cuda_visible_bytes == pytest.approx(v100.memory_bytes * (1 - worst), abs=MiB)
    assert v100.cuda_visible_bytes % MiB == 0
    with pytest.raises(ValueError, match="quantity"):
        a100.memory_figure("bar1_total")


# ----------------------------------------------------------------------------------------------------
# Non-tensor 16-bit rates (SIMT_PRECISIONS)
# ----------------------------------------------------------------------------------------------------


def test_a100_non_tensor_16_bit_peaks_match_nvidia():
    a100 = specs.get("A100-SXM4-80GB")
    for precision, printed in (("fp16_simt", "78"), ("bf16_simt", "39")):
        quoted = a100.datasheet[(precision, False)]
        assert quoted.text == printed and quoted.source in BIB_KEYS
        assert quoted.agrees_with(a100.peak_flops(precision)), precision  # within the printed precision
    assert a100.peak_flops("fp16_simt") == pytest.approx(108 * 256 * 2 * 1.41e9)  # 4 x FP32
    assert a100.peak_flops("bf16_simt") == 2 * a100.peak_flops("fp32")
    assert a100.source("simt_rates") in BIB_KEYS


def test_simt_precisions_stay_out_of_the_tables():
    assert specs.PRECISIONS == ("fp64", "fp64_tc", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4")
    assert specs.ALL_PRECISIONS == specs.PRECISIONS + specs.SIMT_PRECISIONS
    a100 = specs.get("A100-SXM4-80GB")
    assert not set(a100.precisions()) & set(specs.SIMT_PRECISIONS)
    assert a100.all_precisions()[-2:] == ("fp16_simt", "bf16_simt") and a100.supports("bf16_simt")
    assert not a100.supports("bf16_simt", sparse=True)
    with pytest.raises(ValueError, match="sparse"):
        a100.peak_flops("fp16_simt", sparse=True)


def test_simt_rates_where_sources_give_them():
    h100, v100, t4, a6000 = (specs.get(n) for n in ("H100-SXM5-80GB", "V100-SXM2-32GB", "T4", "RTX-A6000"))
    assert h100.peak_flops("fp16_simt") == h100.peak_flops("bf16_simt") == 2 * h100.peak_flops("fp32")
    assert round(h100.peak_flops("fp16_simt") / 1e12, 1) == 133.8  # at the 1980 MHz boost clock
    assert v100.peak_flops("fp16_simt") == 2 * v100.peak_flops("fp32") and not v100.supports("bf16_simt")
    assert t4.supports("fp16_simt") and not t4.supports("bf16_simt")
    assert not a6000.supports("fp16_simt")
    with pytest.raises(ValueError, match="no source in the catalogue gives its rate"):
        a6000.peak_flops("fp16_simt")
    with pytest.raises(ValueError, match="no SIMT rates"):
        a6000.source("simt_rates")


def test_flags_are_booleans():
    a100 = specs.get("A100-SXM4-80GB")
    for bad in ("false", "True", 0, 1, None):
        with pytest.raises(TypeError, match="sparse"):
            a100.peak_flops("bf16", sparse=bad)
        with pytest.raises(TypeError, match="sparse"):
            a100.supports("bf16", sparse=bad)
    assert a100.peak_flops("bf16", sparse=False) * 2 == a100.peak_flops("bf16", sparse=True)
    with pytest.raises(TypeError, match="precision"):
        a100.peak_flops(16)
    with pytest.raises(TypeError, match="precision"):
        a100.supports(None)
