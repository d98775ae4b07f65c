"""The catalogue: every GPU of the book as a :class:`~ampere.specs.model.GPUSpec`, each field with its source,
and the lookups (``names``, ``get``, ``match``). Rules: the package docstring of :mod:`ampere.specs`."""

from __future__ import annotations

import functools
import re

from .. import check
from .model import GPUSpec, Quoted

# -------------------------------------------------------------------------------------------------------
# The catalogue
# -------------------------------------------------------------------------------------------------------

KiB = 1024
MiB = 1024**2
GiB = 1024**3

# Dense FMA (MAC for integers) per clock per SM. Sources: WP-A100 (GA100, GV100), WP-H100 (GH100),
# CUDA C++ Programming Guide throughput table (FP64 on CC 7.5/8.6/8.9), GA102/Turing/Ada whitepapers.
# Non-tensor 16-bit ("simt_rates" source of each card): GA100 FP16 = 4 x FP32 and BF16 = 2 x FP32 (the A100
# column of Table 3 of NVIDIA's "Hopper Architecture In-Depth" post, 78 and 39 TFLOP/s beside 19.5 FP32);
# GH100 FP16 = BF16 = 2 x FP32 (its H100 SXM5 column, 120 and 120 beside 60 at preliminary clocks);
# compute capability 7.x: 128 16-bit results per clock per SM (the Programming Guide's throughput table).
_RATES_GA100 = {"fp64": 32, "fp64_tc": 64, "fp32": 64, "tf32": 512, "bf16": 1024, "fp16": 1024,
                "int8": 2048, "int4": 4096, "fp16_simt": 256, "bf16_simt": 128}
# INT8 only as DP4A on CUDA cores: not tensor math; no BF16 arithmetic before compute capability 8.0
_RATES_GV100 = {"fp64": 32, "fp32": 64, "fp16": 512, "fp16_simt": 128}
_RATES_GH100 = {"fp64": 64, "fp64_tc": 128, "fp32": 128, "tf32": 1024, "bf16": 2048, "fp16": 2048,
                "fp8": 4096, "int8": 4096, "fp16_simt": 256, "bf16_simt": 256}  # Hopper drops INT4 tensor math
_RATES_GA10X = {"fp64": 2, "fp32": 128, "tf32": 256, "bf16": 512, "fp16": 512, "int8": 1024}
_RATES_TU10X = {"fp64": 2, "fp32": 64, "fp16": 512, "int8": 1024, "int4": 2048, "fp16_simt": 128}
_RATES_AD10X = {"fp64": 2, "fp32": 128, "tf32": 256, "bf16": 512, "fp16": 512, "fp8": 1024, "int8": 1024}

_A100_DATASHEET = {
    ("fp64", False): Quoted("9.7"), ("fp64_tc", False): Quoted("19.5"), ("fp32", False): Quoted("19.5"),
    ("tf32", False): Quoted("156"), ("tf32", True): Quoted("312"),
    ("bf16", False): Quoted("312"), ("bf16", True): Quoted("624"),
    ("fp16", False): Quoted("312"), ("fp16", True): Quoted("624"),
    ("int8", False): Quoted("624"), ("int8", True): Quoted("1248"),
    ("int4", False): Quoted("1248"),
    ("int4", True): Quoted("2496", note="NVIDIA doubles rounded figures (2 x 1248); "
                                        "108 SMs x 4096 x 2 x 2 x 1.41 GHz = 2495.0"),
    ("fp16_simt", False): Quoted("78", source="andersch2022hopperblog"),
    ("bf16_simt", False): Quoted("39", source="andersch2022hopperblog"),
}


def _a100(name: str, marketing: str, form: str, memory_gib: int, memory_type: str, data_rate_bps: float,
          bandwidth_bytes_per_s: float, tdp_w: float, year: int, extra_sources: dict[str, str]) -> GPUSpec:
    """The four A100 products share the GA100 die configuration; they differ in memory, power and form.

    ``memory_gib``: NVIDIA's "40GB"/"80GB" are 40 and 80 GiB (five HBM2/HBM2e stacks of 8 or 16 GiB; NVML
    reports 40960 and 81920 MiB, ``gpu_memory.json``).
    """
    sources = {"*": "nvidia2020ampere", "memory_bytes": "nvidia2021a100datasheet",
               "simt_rates": "andersch2022hopperblog",
               "hbm_bytes_per_s": "nvidia2021a100datasheet", "tdp_w": "nvidia2021a100datasheet",
               "nvlink_bytes_per_s": "nvidia2021a100datasheet", "datasheet": "nvidia2021a100datasheet",
               "l1_shared_bytes_per_sm": "nvidia2020amperetuning",
               "max_shared_bytes_per_sm": "nvidia2020amperetuning",
               "compute_capability": "nvidiacudagpus"}
    sources.update(extra_sources)
    return GPUSpec(
        name=name, marketing_name=marketing, architecture="Ampere", chip="GA100", form_factor=form,
        launch_year=year, compute_capability=(8, 0), sm_count=108, die_gpcs=8, die_tpcs_per_gpc=8,
        boost_clock_hz=1.41e9, tensor_clock_hz=1.41e9, fma_per_clk_per_sm=_RATES_GA100, sparse_2to4=True,
        tensor_cores_per_sm=4, tensor_core_generation=3, memory_type=memory_type,
        memory_bytes=memory_gib * GiB, memory_bus_bits=5120, memory_data_rate_bps=data_rate_bps,
        hbm_bytes_per_s=bandwidth_bytes_per_s, memory_stacks=5, l2_bytes=40 * MiB, l2_read_bytes_per_clk=5120,
        l1_shared_bytes_per_sm=192 * KiB, max_shared_bytes_per_sm=164 * KiB,
        register_file_bytes_per_sm=256 * KiB, max_threads_per_sm=2048, tdp_w=tdp_w, nvlink_generation=3,
        nvlink_links=12, nvlink_bytes_per_s=600e9, pcie_generation=4, mig_max_instances=7,
        transistors=54.2e9, die_area_mm2=826, process="TSMC N7", datasheet=_A100_DATASHEET, sources=sources,
        notes=("108 of the die's 128 SMs are enabled (7 of 8 GPCs, partially).",) + (
            ("PCIe cards reach NVLink only through a bridge between 2 GPUs.",) if form == "PCIe" else ()),
    )


_CATALOGUE: dict[str, GPUSpec] = {}


def _add(spec: GPUSpec) -> None:
    if spec.name in _CATALOGUE:
        raise ValueError(f"duplicate spec name {spec.name!r}")
    _CATALOGUE[spec.name] = spec


_add(_a100("A100-SXM4-40GB", "NVIDIA A100 40GB SXM4", "SXM4", 40, "HBM2", 2.43e9, 1555e9, 400, 2020, {}))
_add(_a100("A100-SXM4-80GB", "NVIDIA A100 80GB SXM4", "SXM4", 80, "HBM2e", 3.186e9, 2039e9, 400, 2020,
           {"memory_data_rate_bps": "thamada2024nvidiasmi"}))  # deviceQuery: 1593 MHz, both edges
_add(_a100("A100-PCIE-40GB", "NVIDIA A100 40GB PCIe", "PCIe", 40, "HBM2", 2.43e9, 1555e9, 250, 2020,
           {"boost_clock_hz": "techpowerup", "tensor_clock_hz": "techpowerup"}))
_add(_a100("A100-PCIE-80GB", "NVIDIA A100 80GB PCIe", "PCIe", 80, "HBM2e", 3.024e9, 1935e9, 300, 2021,
           {"boost_clock_hz": "techpowerup", "tensor_clock_hz": "techpowerup",
            "memory_data_rate_bps": "techpowerup"}))

_add(GPUSpec(
    name="V100-SXM2-32GB", marketing_name="NVIDIA Tesla V100 SXM2 32GB", architecture="Volta", chip="GV100",
    form_factor="SXM2", launch_year=2018, compute_capability=(7, 0), sm_count=80, die_gpcs=6,
    die_tpcs_per_gpc=7, boost_clock_hz=1.53e9, tensor_clock_hz=1.53e9, fma_per_clk_per_sm=_RATES_GV100,
    sparse_2to4=False, tensor_cores_per_sm=8, tensor_core_generation=1, memory_type="HBM2",
    memory_bytes=32 * GiB, memory_bus_bits=4096, memory_data_rate_bps=1.755e9, hbm_bytes_per_s=900e9,
    memory_stacks=4, l2_bytes=6 * MiB, l2_read_bytes_per_clk=2048, l1_shared_bytes_per_sm=128 * KiB,
    max_shared_bytes_per_sm=96 * KiB, register_file_bytes_per_sm=256 * KiB, max_threads_per_sm=2048,
    tdp_w=300, nvlink_generation=2, nvlink_links=6, nvlink_bytes_per_s=300e9, pcie_generation=3,
    mig_max_instances=0, transistors=21.1e9, die_area_mm2=815, process="TSMC 12FFN",
    datasheet={("fp64", False): Quoted("7.8"), ("fp32", False): Quoted("15.7"), ("fp16", False): Quoted("125")},
    sources={"*": "nvidia2020ampere", "memory_bytes": "nvidia2017volta", "compute_capability": "nvidiacudagpus",
             "simt_rates": "nvforum2019halfthroughput"},
    notes=("INT8 runs as DP4A on the CUDA cores, not on tensor cores: the book treats int8 as unsupported.",
           "32 GB = 32 GiB in four 8 GiB HBM2 stacks; no citable nvidia-smi or CUDA total was found "
           "(cuda_visible_bytes is an estimate)."),
))

_H100_SOURCES = {"*": "nvidia2022hopper", "compute_capability": "nvidiacudagpus",
                 "tensor_clock_hz": "bekman2024mle", "simt_rates": "andersch2022hopperblog"}
_add(GPUSpec(
    name="H100-SXM5-80GB", marketing_name="NVIDIA H100 80GB SXM5", architecture="Hopper", chip="GH100",
    form_factor="SXM5", launch_year=2022, compute_capability=(9, 0), sm_count=132, die_gpcs=8,
    die_tpcs_per_gpc=9, boost_clock_hz=1.98e9, tensor_clock_hz=1.83e9, fma_per_clk_per_sm=_RATES_GH100,
    sparse_2to4=True, tensor_cores_per_sm=4, tensor_core_generation=4, memory_type="HBM3",
    memory_bytes=80 * GiB, memory_bus_bits=5120, memory_data_rate_bps=5.238e9, hbm_bytes_per_s=3.35e12,
    memory_stacks=5, l2_bytes=50 * MiB, l2_read_bytes_per_clk=None, l1_shared_bytes_per_sm=256 * KiB,
    max_shared_bytes_per_sm=228 * KiB, register_file_bytes_per_sm=256 * KiB, max_threads_per_sm=2048,
    tdp_w=700, nvlink_generation=4, nvlink_links=18, nvlink_bytes_per_s=900e9, pcie_generation=5,
    mig_max_instances=7, transistors=80e9, die_area_mm2=814, process="TSMC 4N",
    datasheet={
        ("fp64", False): Quoted("33.5"), ("fp64_tc", False): Quoted("66.9"), ("fp32", False): Quoted("66.9"),
        ("tf32", False): Quoted("494.7"), ("tf32", True): Quoted("989.4"),
        ("bf16", False): Quoted("989.4"), ("bf16", True): Quoted("1978.9"),
        ("fp16", False): Quoted("989.4"), ("fp16", True): Quoted("1978.9"),
        ("fp8", False): Quoted("1978.9"), ("fp8", True): Quoted("3957.8"),
        ("int8", False): Quoted("1978.9"), ("int8", True): Quoted("3957.8"),
    },
    sources={**_H100_SOURCES, "memory_data_rate_bps": "thamada2024nvidiasmi"},
    notes=("Tensor peaks correspond to 1830 MHz; FP32, FP64 and FP64-tensor peaks to the 1980 MHz boost clock.",
           "memory_data_rate_bps is twice the 2619 MHz memory clock deviceQuery prints on an H100 80GB HBM3 "
           "(NVIDIA does not print a pin rate); 5120 bits x 5.238 Gb/s = 3352 GB/s, the datasheet's 3.35 TB/s.",
           "80 GB = 80 GiB in five 16 GiB HBM3 stacks; NVML exposes 81559 MiB of it (361 MiB less).",
           "Non-tensor FP16/BF16 run at 2x FP32 (NVIDIA's H100 SXM5 column, preliminary clocks): "
           "133.8 TFLOP/s at the 1980 MHz boost clock."),
))
_add(GPUSpec(
    name="H200-SXM-141GB", marketing_name="NVIDIA H200 SXM 141GB", architecture="Hopper", chip="GH100",
    form_factor="SXM5", launch_year=2024, compute_capability=(9, 0), sm_count=132, die_gpcs=8,
    die_tpcs_per_gpc=9, boost_clock_hz=1.98e9, tensor_clock_hz=1.83e9, fma_per_clk_per_sm=_RATES_GH100,
    sparse_2to4=True, tensor_cores_per_sm=4, tensor_core_generation=4, memory_type="HBM3e",
    memory_bytes=141 * GiB, memory_bus_bits=6144, memory_data_rate_bps=6.25e9, hbm_bytes_per_s=4.8e12,
    memory_stacks=6, l2_bytes=60 * MiB, l2_read_bytes_per_clk=None, l1_shared_bytes_per_sm=256 * KiB,
    max_shared_bytes_per_sm=228 * KiB, register_file_bytes_per_sm=256 * KiB, max_threads_per_sm=2048,
    tdp_w=700, nvlink_generation=4, nvlink_links=18, nvlink_bytes_per_s=900e9, pcie_generation=5,
    mig_max_instances=7, transistors=80e9, die_area_mm2=814, process="TSMC 4N",
    datasheet={
        ("fp64", False): Quoted("34"), ("fp64_tc", False): Quoted("67"), ("fp32", False): Quoted("67"),
        ("tf32", True): Quoted("989"), ("bf16", True): Quoted("1979"), ("fp16", True): Quoted("1979"),
        ("fp8", True): Quoted("3958"), ("int8", True): Quoted("3958"),
    },
    sources={**_H100_SOURCES, "memory_bytes": "nvidia2024h200", "hbm_bytes_per_s": "nvidia2024h200",
             "datasheet": "nvidia2024h200", "memory_bus_bits": "thamada2024gls",
             "memory_data_rate_bps": "nvidia2024h200", "memory_stacks": "thamada2024gls",
             "l2_bytes": "thamada2024gls", "tdp_w": "nvidia2024h200"},
    notes=("Same GH100 compute as the H100 SXM; the difference is 141 GB of HBM3e at 4.8 TB/s.",
           "141 GB read as 141 GiB: NVML's 143771 MiB (150.75e9 bytes) exceeds 141e9 bytes, so the figure is "
           "binary, 613 MiB above NVML's total as on the H100 (gpu_memory.json).",
           "NVIDIA publishes neither the interface width nor the L2 size: deviceQuery on an H200 prints a "
           "6144-bit bus (six 1024-bit stacks) and 62914560 bytes (60 MiB) of L2, the full GH100's 12 memory "
           "controllers and 60 MB L2 (nvidia2022hopper), where an H100 SXM5 prints 5120 bits and 50 MiB.",
           "memory_data_rate_bps is back-computed from NVIDIA's 4.8 TB/s over 6144 bits (6.25 Gb/s); the "
           "capture's 3201 MHz memory clock would give 6.402 Gb/s and 4.92 TB/s, 2.4 % more."),
))

_GA10X_SOURCES = {"*": "nvidia2020ga102", "compute_capability": "nvidiacudagpus",
                  "fma_per_clk_per_sm": "nvidiacudaguide", "max_threads_per_sm": "nvidiacudaguide",
                  "max_shared_bytes_per_sm": "nvidia2020amperetuning", "boost_clock_hz": "techpowerup",
                  "tensor_clock_hz": "techpowerup", "l2_bytes": "techpowerup"}
_add(GPUSpec(
    name="RTX-A6000", marketing_name="NVIDIA RTX A6000", architecture="Ampere", chip="GA102",
    form_factor="PCIe", launch_year=2020, compute_capability=(8, 6), sm_count=84, die_gpcs=7,
    die_tpcs_per_gpc=6, boost_clock_hz=1.8e9, tensor_clock_hz=1.8e9, fma_per_clk_per_sm=_RATES_GA10X,
    sparse_2to4=True, tensor_cores_per_sm=4, tensor_core_generation=3, memory_type="GDDR6",
    memory_bytes=48 * GiB, memory_bus_bits=384, memory_data_rate_bps=16e9, hbm_bytes_per_s=768e9,
    memory_stacks=None, l2_bytes=6 * MiB, l2_read_bytes_per_clk=None, l1_shared_bytes_per_sm=128 * KiB,
    max_shared_bytes_per_sm=100 * KiB, register_file_bytes_per_sm=256 * KiB, max_threads_per_sm=1536,
    tdp_w=300, nvlink_generation=3, nvlink_links=4, nvlink_bytes_per_s=112.5e9, pcie_generation=4,
    mig_max_instances=0, transistors=28.3e9, die_area_mm2=628.4, process="Samsung 8N",
    datasheet={("fp32", False): Quoted("38.7"), ("fp16", True): Quoted("309.7")},
    sources={**_GA10X_SOURCES, "memory_bytes": "nvidia2020rtxa6000", "hbm_bytes_per_s": "nvidia2020rtxa6000",
             "tdp_w": "nvidia2020rtxa6000", "nvlink_bytes_per_s": "nvidia2020rtxa6000",
             "datasheet": "nvidia2020rtxa6000", "l2_bytes": "thamada2024gls"},
    notes=("Compute capability 8.6, not 8.0: half the per-SM tensor rate of GA100, FP64 at 1/64 of FP32.",
           "The datasheet's 309.7 TFLOPS tensor figure is the sparse one; dense FP16 is 154.8."),
))
_add(GPUSpec(
    name="RTX-A2000-12GB", marketing_name="NVIDIA RTX A2000 12GB", architecture="Ampere", chip="GA106",
    form_factor="PCIe", launch_year=2021, compute_capability=(8, 6), sm_count=26, die_gpcs=3,
    die_tpcs_per_gpc=5, boost_clock_hz=1.2e9, tensor_clock_hz=1.2e9, fma_per_clk_per_sm=_RATES_GA10X,
    sparse_2to4=True, tensor_cores_per_sm=4, tensor_core_generation=3, memory_type="GDDR6",
    memory_bytes=12 * GiB, memory_bus_bits=192, memory_data_rate_bps=12e9, hbm_bytes_per_s=288e9,
    memory_stacks=None, l2_bytes=3 * MiB, l2_read_bytes_per_clk=None, l1_shared_bytes_per_sm=128 * KiB,
    max_shared_bytes_per_sm=100 * KiB, register_file_bytes_per_sm=256 * KiB, max_threads_per_sm=1536,
    tdp_w=70, nvlink_generation=None, nvlink_links=0, nvlink_bytes_per_s=0.0, pcie_generation=4,
    mig_max_instances=0, transistors=12e9, die_area_mm2=276, process="Samsung 8N",
    datasheet={("fp32", False): Quoted("8.0"), ("fp16", True): Quoted("63.9")},
    sources={**_GA10X_SOURCES, "memory_bytes": "nvidia2021rtxa2000", "hbm_bytes_per_s": "nvidia2021rtxa2000",
             "tdp_w": "nvidia2021rtxa2000", "datasheet": "nvidia2021rtxa2000", "die_gpcs": "techpowerup",
             "die_tpcs_per_gpc": "techpowerup", "transistors": "techpowerup", "die_area_mm2": "techpowerup",
             "sm_count": "techpowerup"},
    notes=("The datasheet's 63.9 TFLOPS tensor figure is the sparse one; dense FP16 is 31.9.",),
))
_add(GPUSpec(
    name="T4", marketing_name="NVIDIA T4", architecture="Turing", chip="TU104", form_factor="PCIe",
    launch_year=2018, compute_capability=(7, 5), sm_count=40, die_gpcs=6, die_tpcs_per_gpc=4,
    boost_clock_hz=1.59e9, tensor_clock_hz=1.59e9, fma_per_clk_per_sm=_RATES_TU10X, sparse_2to4=False,
    tensor_cores_per_sm=8, tensor_core_generation=2, memory_type="GDDR6", memory_bytes=16 * GiB,
    memory_bus_bits=256, memory_data_rate_bps=10e9, hbm_bytes_per_s=320e9, memory_stacks=None,
    l2_bytes=4 * MiB, l2_read_bytes_per_clk=None, l1_shared_bytes_per_sm=96 * KiB,
    max_shared_bytes_per_sm=64 * KiB, register_file_bytes_per_sm=256 * KiB, max_threads_per_sm=1024,
    tdp_w=70, nvlink_generation=None, nvlink_links=0, nvlink_bytes_per_s=0.0, pcie_generation=3,
    mig_max_instances=0, transistors=13.6e9, die_area_mm2=545, process="TSMC 12FFN",
    datasheet={("fp32", False): Quoted("8.1"), ("fp16", False): Quoted("65"), ("int8", False): Quoted("130"),
               ("int4", False): Quoted("260")},
    sources={"*": "nvidia2018turing", "memory_bytes": "nvidia2018t4", "hbm_bytes_per_s": "nvidia2018t4",
             "tdp_w": "nvidia2018t4", "datasheet": "nvidia2018t4", "compute_capability": "nvidiacudagpus",
             "boost_clock_hz": "techpowerup", "tensor_clock_hz": "techpowerup", "l2_bytes": "techpowerup",
             "fma_per_clk_per_sm": "nvidiacudaguide", "max_threads_per_sm": "nvidiacudaguide",
             "simt_rates": "nvforum2019halfthroughput"},
    notes=("The free Colab GPU: no TF32, no BF16 tensor cores, no 2:4 sparsity, no MIG.",
           "16 GB = 16 GiB of GDDR6; with ECC enabled 1/16 holds check bits (nvidia-smi: 15360 MiB)."),
))
_add(GPUSpec(
    name="L4", marketing_name="NVIDIA L4", architecture="Ada Lovelace", chip="AD104", form_factor="PCIe",
    launch_year=2023, compute_capability=(8, 9), sm_count=58, die_gpcs=5, die_tpcs_per_gpc=6,
    boost_clock_hz=2.04e9, tensor_clock_hz=2.04e9, fma_per_clk_per_sm=_RATES_AD10X, sparse_2to4=True,
    tensor_cores_per_sm=4, tensor_core_generation=4, memory_type="GDDR6", memory_bytes=24 * GiB,
    memory_bus_bits=192, memory_data_rate_bps=12.5e9, hbm_bytes_per_s=300e9, memory_stacks=None,
    l2_bytes=48 * MiB, l2_read_bytes_per_clk=None, l1_shared_bytes_per_sm=128 * KiB,
    max_shared_bytes_per_sm=100 * KiB, register_file_bytes_per_sm=256 * KiB, max_threads_per_sm=1536,
    tdp_w=72, nvlink_generation=None, nvlink_links=0, nvlink_bytes_per_s=0.0, pcie_generation=4,
    mig_max_instances=0, transistors=35.8e9, die_area_mm2=294.5, process="TSMC 4N",
    datasheet={
        ("fp32", False): Quoted("30.3"),
        ("tf32", True): Quoted("120", note="the datasheet prints 120; 58 SMs x 256 x 2 x 2 x 2.04 GHz = 121.2"),
        ("bf16", True): Quoted("242"), ("fp16", True): Quoted("242"), ("fp8", True): Quoted("485"),
        ("int8", True): Quoted("485"),
    },
    sources={"*": "nvidia2022ada", "memory_bytes": "nvidia2023l4", "hbm_bytes_per_s": "nvidia2023l4",
             "tdp_w": "nvidia2023l4", "datasheet": "nvidia2023l4", "compute_capability": "nvidiacudagpus",
             "boost_clock_hz": "techpowerup", "tensor_clock_hz": "techpowerup", "l2_bytes": "thamada2024nvidiasmi",
             "memory_data_rate_bps": "thamada2024nvidiasmi", "fma_per_clk_per_sm": "nvidiacudaguide",
             "max_threads_per_sm": "nvidiacudaguide", "sm_count": "techpowerup"},
    notes=("Ada's FP8 tensor cores give the L4 a precision the A100 lacks.",),
))


_CATALOGUE_CASEFOLD: dict[str, GPUSpec] = {key.casefold(): spec for key, spec in _CATALOGUE.items()}
if len(_CATALOGUE_CASEFOLD) != len(_CATALOGUE):
    raise ValueError("two catalogue names differ only in case")


@functools.lru_cache(maxsize=2)
def _largest_cuda_carveout(hbm: bool) -> float:
    """Largest (physical - CUDA total) / physical among catalogue cards of one memory kind with a published
    CUDA total: the conservative carve-out :attr:`GPUSpec.cuda_visible_bytes` assumes where none is published.
    """
    fractions = [1 - s.cuda_memory_bytes / s.memory_bytes for s in _CATALOGUE.values()
                 if (s.memory_stacks is not None) == hbm and s.cuda_memory_bytes is not None]
    if not fractions:
        raise ValueError(f"no {'HBM' if hbm else 'GDDR'} card of the catalogue has a published CUDA total")
    return max(fractions)


# -------------------------------------------------------------------------------------------------------
# Public API
# -------------------------------------------------------------------------------------------------------


def names() -> list[str]:
    """Catalogue keys, in catalogue order."""
    return list(_CATALOGUE)


def all_specs() -> list[GPUSpec]:
    return list(_CATALOGUE.values())


def get(gpu: str | GPUSpec) -> GPUSpec:
    """The spec called ``gpu``, a catalogue key in any case ("a100-sxm4-80gb" is "A100-SXM4-80GB").

    Unknown names raise ``ValueError`` and non-strings ``TypeError``, both naming ``gpu`` and listing the
    known names. A ``GPUSpec`` passes through unchanged, so functions can accept either. Driver names
    ("NVIDIA A100-SXM4-80GB") are :func:`match`'s job, not this one's.
    """
    if isinstance(gpu, GPUSpec):
        return gpu
    if not isinstance(gpu, str):
        raise TypeError(f"gpu must be a catalogue name (a string, any case) or a GPUSpec, got {gpu!r} "
                        f"({type(gpu).__name__}); known: {', '.join(_CATALOGUE)}")
    spec = _CATALOGUE_CASEFOLD.get(gpu.casefold())
    if spec is None:
        raise ValueError(f"gpu={gpu!r} is not in the catalogue (names match in any case); "
                         f"known: {', '.join(_CATALOGUE)}")
    return spec


# Patterns on the normalised device name (upper case, spaces/underscores -> '-'), most specific first.
_MATCH_RULES: tuple[tuple[str, str], ...] = (
    (r"A100.*SXM.*80G", "A100-SXM4-80GB"),
    (r"A100.*SXM", "A100-SXM4-40GB"),
    (r"A100.*80GB.*PCIE|A100.*PCIE.*80GB", "A100-PCIE-80GB"),
    (r"A100.*PCIE", "A100-PCIE-40GB"),
    (r"V100.*SXM2.*32GB", "V100-SXM2-32GB"),
    (r"H100.*(SXM|HBM3)", "H100-SXM5-80GB"),
    (r"H200(?!.*NVL)", "H200-SXM-141GB"),
    (r"RTX-A6000", "RTX-A6000"),
    (r"RTX-A2000.*12GB", "RTX-A2000-12GB"),
    (r"(^|-)T4($|-)", "T4"),
    (r"(^|-)L4($|-)", "L4"),
)


def match(device_name: str | None) -> GPUSpec | None:
    """Map a driver's device name to a catalogue spec, or None when no spec fits exactly.

    Examples: "NVIDIA A100-SXM4-80GB" -> A100-SXM4-80GB, "NVIDIA H200" -> H200-SXM-141GB,
    "NVIDIA A100 80GB PCIe" -> A100-PCIE-80GB, "Tesla T4" -> T4, "NVIDIA GeForce RTX 3090" -> None.
    MIG device names ("NVIDIA A100-SXM4-40GB MIG 1g.5gb") match their parent GPU. A variant the
    catalogue lacks (an H100 PCIe, a 16 GB V100, an H200 NVL) gives None rather than a near miss. ``None`` and
    ``""`` (no device) give None; anything but a string raises ``TypeError`` naming ``device_name``.
    """
    if device_name is None:
        return None
    device_name = check.string("device_name", device_name, allow_empty=True, max_len=256)
    if not device_name.strip():
        return None
    key = re.sub(r"[\s_]+", "-", device_name.strip().upper())
    for pattern, spec_name in _MATCH_RULES:
        if re.search(pattern, key):
            return _CATALOGUE[spec_name]
    return None
