"""GPU facts as data: the one source of truth for every number the book derives.

Chapter: *Architecture of the GA100* (book/architecture.ipynb) explains every field; the other chapters
read their hardware figures from here.

Rules kept by this module:

* Units are in the field names (SI): ``boost_clock_hz``, ``memory_bytes``, ``hbm_bytes_per_s``. GB = 1e9
  bytes, GiB = 2**30 bytes.
* Peak arithmetic throughput is never typed in. It is derived as
  ``SMs x (dense FMA per clock per SM) x 2 FLOP/FMA x clock`` and doubled for 2:4 sparsity. What NVIDIA
  prints is kept separately in ``datasheet`` so the book can put the two side by side.
* Every value carries a citation key of ``book/references.bib`` (``GPUSpec.source(field)``).

Precisions understood by :meth:`GPUSpec.peak_flops`:

``fp64``     FP64 on the CUDA cores (FMA)
``fp64_tc``  FP64 on the tensor cores (DMMA; A100 and H100 class only)
``fp32``     FP32 on the CUDA cores (FMA)
``tf32``     TF32 tensor-core math (FP32 inputs, 10-bit mantissa, FP32 accumulate)
``bf16``     BF16 tensor-core math with FP32 accumulate
``fp16``     FP16 tensor-core math with FP32 accumulate
``fp8``      FP8 tensor-core math (Hopper, Ada; the A100 has none)
``int8``     INT8 tensor-core math (operations, one MAC = 2 ops)
``int4``     INT4 tensor-core math (operations)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Mapping

__all__ = [
    "PRECISIONS",
    "TENSOR_PRECISIONS",
    "SPARSE_PRECISIONS",
    "GPUSpec",
    "Quoted",
    "names",
    "get",
    "match",
    "all_specs",
    "pcie_bytes_per_s",
]

#: Every precision the package knows, in the order tables print them.
PRECISIONS: tuple[str, ...] = ("fp64", "fp64_tc", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4")
#: Precisions executed by tensor cores.
TENSOR_PRECISIONS = frozenset({"fp64_tc", "tf32", "bf16", "fp16", "fp8", "int8", "int4"})
#: Precisions that 2:4 structured sparsity accelerates (FP64 is never sparse).
SPARSE_PRECISIONS = frozenset({"tf32", "bf16", "fp16", "fp8", "int8", "int4"})
# Low-precision tensor math runs at ``tensor_clock_hz``. On H100/H200 NVIDIA's tensor peaks correspond to
# 1830 MHz while the FP32/FP64 (and FP64 tensor) peaks correspond to the 1980 MHz boost clock.
_TENSOR_CLOCKED = SPARSE_PRECISIONS

#: PCIe signalling rate per lane in transfers/s, by generation (128b/130b encoding from Gen3 on).
_PCIE_GT_PER_S = {3: 8e9, 4: 16e9, 5: 32e9}


def pcie_bytes_per_s(generation: int, lanes: int = 16) -> float:
    """Usable PCIe bandwidth per direction in bytes/s (Gen3+: 128b/130b encoding).

    Gen4 x16 gives 31.5 GB/s per direction (63 GB/s both ways), the figure NVIDIA rounds to "64 GB/s".
    """
    if generation not in _PCIE_GT_PER_S:
        raise ValueError(f"generation={generation!r} is not supported; allowed: {sorted(_PCIE_GT_PER_S)}")
    if lanes not in (1, 2, 4, 8, 16):
        raise ValueError(f"lanes={lanes!r} is not a PCIe link width; allowed: 1, 2, 4, 8, 16")
    return _PCIE_GT_PER_S[generation] * lanes * (128 / 130) / 8


@dataclass(frozen=True)
class Quoted:
    """A figure as a vendor prints it: ``text`` keeps the printed precision ("9.7", "1248").

    ``scale`` converts the printed unit to SI (1e12 for TFLOPS/TOPS). ``note`` explains a known
    inconsistency between the printed figure and the derivation.
    """

    text: str
    scale: float = 1e12
    note: str | None = None

    @property
    def value(self) -> float:
        return float(self.text) * self.scale

    @property
    def unit_in_last_place(self) -> float:
        """Size of one unit in the last printed digit, in SI units (0.1e12 for "9.7")."""
        decimals = len(self.text.split(".")[1]) if "." in self.text else 0
        return 10.0 ** (-decimals) * self.scale

    def agrees_with(self, derived: float) -> bool:
        """True when ``derived`` is within one unit of the last printed digit.

        One unit, not half: NVIDIA rounds first and doubles after (2 x 624 = "1248" although
        108 x 4096 x 2 x 1.41 GHz = 1247.5 TOPS), so a strict half-unit test would flag arithmetic that is
        merely rounded in a different order.
        """
        return abs(derived - self.value) < self.unit_in_last_place * (1 - 1e-9)


@dataclass(frozen=True)
class GPUSpec:
    """One GPU product as data. Fields carry SI units in their names; see ``source(field)``."""

    name: str  # catalogue key, e.g. "A100-SXM4-80GB"
    marketing_name: str  # what NVIDIA calls it
    architecture: str  # "Ampere", "Volta", ...
    chip: str  # die name, e.g. "GA100"
    form_factor: str  # "SXM4", "PCIe", ...
    launch_year: int
    compute_capability: tuple[int, int]
    sm_count: int  # SMs enabled on this product
    die_gpcs: int  # GPCs on the full die
    die_tpcs_per_gpc: int  # TPCs per GPC on the full die (2 SMs per TPC on every die here)
    boost_clock_hz: float  # maximum boost clock used for the FP32/FP64 peaks
    tensor_clock_hz: float  # clock at which NVIDIA's low-precision tensor peaks are quoted
    fma_per_clk_per_sm: Mapping[str, int]  # dense FMA (or MAC) per clock per SM, by precision
    sparse_2to4: bool  # tensor cores accelerate 2:4 structured sparsity (2x)
    tensor_cores_per_sm: int
    tensor_core_generation: int  # 0 = none
    memory_type: str  # "HBM2", "HBM2e", "GDDR6", ...
    memory_bytes: float  # capacity as NVIDIA quotes it, decimal bytes (80 GB = 80e9)
    memory_bus_bits: int  # total DRAM interface width
    memory_data_rate_bps: float  # data rate per pin, bit/s
    hbm_bytes_per_s: float  # datasheet DRAM bandwidth (HBM or GDDR), bytes/s
    memory_stacks: int | None  # active HBM stacks (None for GDDR)
    l2_bytes: int  # L2 capacity in bytes (NVIDIA's "40 MB" is 40 MiB)
    l2_read_bytes_per_clk: int | None  # L2 read bandwidth per clock where NVIDIA publishes it
    l1_shared_bytes_per_sm: int  # combined L1 data cache / shared memory per SM
    max_shared_bytes_per_sm: int  # largest shared-memory carve-out per SM
    register_file_bytes_per_sm: int
    max_threads_per_sm: int
    tdp_w: float  # board power limit (TDP/TGP), W
    nvlink_generation: int | None  # None: no NVLink
    nvlink_links: int
    nvlink_bytes_per_s: float  # NVLink total, bidirectional (A100: 600e9 = 12 links x 25 GB/s x 2)
    pcie_generation: int
    mig_max_instances: int  # 0 = no MIG
    transistors: float | None
    die_area_mm2: float | None
    process: str
    datasheet: Mapping[tuple[str, bool], Quoted] = field(default_factory=dict, compare=False)
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)  # field -> bib key; "*" default
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "fma_per_clk_per_sm", MappingProxyType(dict(self.fma_per_clk_per_sm)))
        object.__setattr__(self, "datasheet", MappingProxyType(dict(self.datasheet)))
        object.__setattr__(self, "sources", MappingProxyType(dict(self.sources)))
        unknown = set(self.fma_per_clk_per_sm) - set(PRECISIONS)
        if unknown:
            raise ValueError(f"{self.name}: fma_per_clk_per_sm has unknown precisions {sorted(unknown)}")
        if "*" not in self.sources:
            raise ValueError(f"{self.name}: sources needs a default key '*'")

    def __hash__(self) -> int:
        return hash(self.name)

    # --- derived quantities -------------------------------------------------------------------------

    @property
    def die_sms(self) -> int:
        """SMs on the full die (GPCs x TPCs per GPC x 2)."""
        return self.die_gpcs * self.die_tpcs_per_gpc * 2

    @property
    def fp32_cores(self) -> int:
        """"CUDA cores" in NVIDIA's counting: FP32 lanes per SM x SMs."""
        return self.fma_per_clk_per_sm["fp32"] * self.sm_count

    @property
    def tensor_cores(self) -> int:
        return self.tensor_cores_per_sm * self.sm_count

    @property
    def memory_bandwidth_derived_bytes_per_s(self) -> float:
        """Interface width x data rate per pin / 8: the datasheet bandwidth re-derived."""
        return self.memory_bus_bits * self.memory_data_rate_bps / 8

    @property
    def pcie_bytes_per_s(self) -> float:
        """PCIe x16 bandwidth per direction, bytes/s."""
        return pcie_bytes_per_s(self.pcie_generation)

    @property
    def nvlink_bytes_per_s_per_direction(self) -> float:
        return self.nvlink_bytes_per_s / 2

    @property
    def l2_bytes_per_s(self) -> float | None:
        """Theoretical L2 read bandwidth at the boost clock, where the bytes/clock are published."""
        if self.l2_read_bytes_per_clk is None:
            return None
        return self.l2_read_bytes_per_clk * self.boost_clock_hz

    def precisions(self) -> tuple[str, ...]:
        """Precisions this GPU executes natively, in table order."""
        return tuple(p for p in PRECISIONS if p in self.fma_per_clk_per_sm)

    def supports(self, precision: str, sparse: bool = False) -> bool:
        if precision not in self.fma_per_clk_per_sm:
            return False
        return not sparse or (self.sparse_2to4 and precision in SPARSE_PRECISIONS)

    def clock_for(self, precision: str) -> float:
        """Clock (Hz) at which the peak of ``precision`` is quoted."""
        return self.tensor_clock_hz if precision in _TENSOR_CLOCKED else self.boost_clock_hz

    def peak_flops(self, precision: str, sparse: bool = False) -> float:
        """Peak throughput in FLOP/s (OP/s for int8/int4), derived from per-SM per-clock rates.

        ``sparse=True`` gives the 2:4 structured-sparsity figure (2x dense) where the tensor cores
        support it. Unknown or unsupported precisions raise ``ValueError`` naming what is allowed.
        """
        if precision not in PRECISIONS:
            raise ValueError(f"precision={precision!r} is unknown; allowed: {', '.join(PRECISIONS)}")
        if precision not in self.fma_per_clk_per_sm:
            raise ValueError(
                f"precision={precision!r} is not supported on {self.name}; "
                f"allowed on this GPU: {', '.join(self.precisions())}"
            )
        if sparse:
            if not self.sparse_2to4:
                raise ValueError(f"sparse=True: {self.name} has no 2:4 sparse tensor cores; use sparse=False")
            if precision not in SPARSE_PRECISIONS:
                raise ValueError(
                    f"sparse=True is not defined for precision={precision!r}; "
                    f"2:4 sparsity applies to: {', '.join(p for p in PRECISIONS if p in SPARSE_PRECISIONS)}"
                )
        rate = self.fma_per_clk_per_sm[precision] * 2 * self.sm_count * self.clock_for(precision)
        return rate * (2 if sparse else 1)

    def ridge_point(self, precision: str, bytes_per_s: float | None = None) -> float:
        """Arithmetic intensity (FLOP/byte) where the roofline turns: peak / bandwidth.

        ``bytes_per_s`` defaults to the datasheet DRAM bandwidth; pass ``l2_bytes_per_s`` for the L2 roof.
        """
        from . import check

        bandwidth = self.hbm_bytes_per_s if bytes_per_s is None else check.positive("bytes_per_s", bytes_per_s)
        return self.peak_flops(precision) / bandwidth

    def source(self, field_name: str) -> str:
        """Citation key (book/references.bib) for ``field_name``."""
        valid = {f.name for f in fields(self)} | {"peak_flops"}
        if field_name not in valid:
            raise ValueError(f"field_name={field_name!r} is not a GPUSpec field; allowed: {sorted(valid)}")
        return self.sources.get(field_name, self.sources["*"])

    def citation_keys(self) -> set[str]:
        return set(self.sources.values())


# -------------------------------------------------------------------------------------------------------
# The catalogue
# -------------------------------------------------------------------------------------------------------

KiB = 1024
MiB = 1024**2

# Dense FMA (MAC for integers) per clock per SM. Sources: WP-A100 (GA100, GV100), WP-H100 (GH100),
# CUDA C++ Programming Guide throughput table (FP64 on CC 7.5/8.6/8.9), GA102/Turing/Ada whitepapers.
_RATES_GA100 = {"fp64": 32, "fp64_tc": 64, "fp32": 64, "tf32": 512, "bf16": 1024, "fp16": 1024,
                "int8": 2048, "int4": 4096}
_RATES_GV100 = {"fp64": 32, "fp32": 64, "fp16": 512}  # INT8 only as DP4A on CUDA cores: not tensor math
_RATES_GH100 = {"fp64": 64, "fp64_tc": 128, "fp32": 128, "tf32": 1024, "bf16": 2048, "fp16": 2048,
                "fp8": 4096, "int8": 4096}  # Hopper drops INT4 tensor math
_RATES_GA10X = {"fp64": 2, "fp32": 128, "tf32": 256, "bf16": 512, "fp16": 512, "int8": 1024}
_RATES_TU10X = {"fp64": 2, "fp32": 64, "fp16": 512, "int8": 1024, "int4": 2048}
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
}


def _a100(name: str, marketing: str, form: str, memory_gb: int, memory_type: str, data_rate_bps: float,
          bandwidth_bytes_per_s: float, tdp_w: float, year: int, extra_sources: dict[str, str]) -> GPUSpec:
    """The four A100 products share the GA100 die configuration; they differ in memory, power and form."""
    sources = {"*": "nvidia2020ampere", "memory_bytes": "nvidia2021a100datasheet",
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
        memory_bytes=memory_gb * 1e9, memory_bus_bits=5120, memory_data_rate_bps=data_rate_bps,
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
_add(_a100("A100-SXM4-80GB", "NVIDIA A100 80GB SXM4", "SXM4", 80, "HBM2e", 3.186e9, 2039e9, 400, 2020, {}))
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
    memory_bytes=32e9, memory_bus_bits=4096, memory_data_rate_bps=1.755e9, hbm_bytes_per_s=900e9,
    memory_stacks=4, l2_bytes=6 * MiB, l2_read_bytes_per_clk=2048, l1_shared_bytes_per_sm=128 * KiB,
    max_shared_bytes_per_sm=96 * KiB, register_file_bytes_per_sm=256 * KiB, max_threads_per_sm=2048,
    tdp_w=300, nvlink_generation=2, nvlink_links=6, nvlink_bytes_per_s=300e9, pcie_generation=3,
    mig_max_instances=0, transistors=21.1e9, die_area_mm2=815, process="TSMC 12FFN",
    datasheet={("fp64", False): Quoted("7.8"), ("fp32", False): Quoted("15.7"), ("fp16", False): Quoted("125")},
    sources={"*": "nvidia2020ampere", "memory_bytes": "nvidia2017volta", "compute_capability": "nvidiacudagpus"},
    notes=("INT8 runs as DP4A on the CUDA cores, not on tensor cores: the book treats int8 as unsupported.",),
))

_H100_SOURCES = {"*": "nvidia2022hopper", "compute_capability": "nvidiacudagpus",
                 "tensor_clock_hz": "bekman2024mle"}
_add(GPUSpec(
    name="H100-SXM5-80GB", marketing_name="NVIDIA H100 80GB SXM5", architecture="Hopper", chip="GH100",
    form_factor="SXM5", launch_year=2022, compute_capability=(9, 0), sm_count=132, die_gpcs=8,
    die_tpcs_per_gpc=9, boost_clock_hz=1.98e9, tensor_clock_hz=1.83e9, fma_per_clk_per_sm=_RATES_GH100,
    sparse_2to4=True, tensor_cores_per_sm=4, tensor_core_generation=4, memory_type="HBM3",
    memory_bytes=80e9, memory_bus_bits=5120, memory_data_rate_bps=5.24e9, hbm_bytes_per_s=3.35e12,
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
    sources=_H100_SOURCES,
    notes=("Tensor peaks correspond to 1830 MHz, FP32/FP64 peaks to the 1980 MHz boost clock.",
           "memory_data_rate_bps is back-computed from 3.35 TB/s over 5120 bits; NVIDIA does not print it."),
))
_add(GPUSpec(
    name="H200-SXM-141GB", marketing_name="NVIDIA H200 SXM 141GB", architecture="Hopper", chip="GH100",
    form_factor="SXM5", launch_year=2024, compute_capability=(9, 0), sm_count=132, die_gpcs=8,
    die_tpcs_per_gpc=9, boost_clock_hz=1.98e9, tensor_clock_hz=1.83e9, fma_per_clk_per_sm=_RATES_GH100,
    sparse_2to4=True, tensor_cores_per_sm=4, tensor_core_generation=4, memory_type="HBM3e",
    memory_bytes=141e9, memory_bus_bits=6144, memory_data_rate_bps=6.25e9, hbm_bytes_per_s=4.8e12,
    memory_stacks=6, l2_bytes=50 * MiB, l2_read_bytes_per_clk=None, l1_shared_bytes_per_sm=256 * KiB,
    max_shared_bytes_per_sm=228 * KiB, register_file_bytes_per_sm=256 * KiB, max_threads_per_sm=2048,
    tdp_w=700, nvlink_generation=4, nvlink_links=18, nvlink_bytes_per_s=900e9, pcie_generation=5,
    mig_max_instances=7, transistors=80e9, die_area_mm2=814, process="TSMC 4N",
    datasheet={
        ("fp64", False): Quoted("34"), ("fp64_tc", False): Quoted("67"), ("fp32", False): Quoted("67"),
        ("tf32", True): Quoted("989"), ("bf16", True): Quoted("1979"), ("fp16", True): Quoted("1979"),
        ("fp8", True): Quoted("3958"), ("int8", True): Quoted("3958"),
    },
    sources={**_H100_SOURCES, "memory_bytes": "nvidia2024h200", "hbm_bytes_per_s": "nvidia2024h200",
             "datasheet": "nvidia2024h200", "memory_bus_bits": "bekman2024mle",
             "memory_data_rate_bps": "bekman2024mle", "memory_stacks": "bekman2024mle",
             "l2_bytes": "nvidia2022hopper", "tdp_w": "nvidia2024h200"},
    notes=("Same GH100 compute as the H100 SXM; the difference is 141 GB of HBM3e at 4.8 TB/s.",
           "The 6144-bit interface (6 stacks) is inferred from the capacity, not published by NVIDIA.",
           "NVIDIA publishes no H200 L2 size; 50 MB is GH100's H100 SXM5 configuration (nvidia2022hopper), "
           "and the knee of the published gpu-benches sweep sits at 0.98 x 50 MiB."),
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
    memory_bytes=48e9, memory_bus_bits=384, memory_data_rate_bps=16e9, hbm_bytes_per_s=768e9,
    memory_stacks=None, l2_bytes=6 * MiB, l2_read_bytes_per_clk=None, l1_shared_bytes_per_sm=128 * KiB,
    max_shared_bytes_per_sm=100 * KiB, register_file_bytes_per_sm=256 * KiB, max_threads_per_sm=1536,
    tdp_w=300, nvlink_generation=3, nvlink_links=4, nvlink_bytes_per_s=112.5e9, pcie_generation=4,
    mig_max_instances=0, transistors=28.3e9, die_area_mm2=628.4, process="Samsung 8N",
    datasheet={("fp32", False): Quoted("38.7"), ("fp16", True): Quoted("309.7")},
    sources={**_GA10X_SOURCES, "memory_bytes": "nvidia2020rtxa6000", "hbm_bytes_per_s": "nvidia2020rtxa6000",
             "tdp_w": "nvidia2020rtxa6000", "nvlink_bytes_per_s": "nvidia2020rtxa6000",
             "datasheet": "nvidia2020rtxa6000"},
    notes=("Compute capability 8.6, not 8.0: half the per-SM tensor rate of GA100, FP64 at 1/64 of FP32.",
           "The datasheet's 309.7 TFLOPS tensor figure is the sparse one; dense FP16 is 154.8."),
))
_add(GPUSpec(
    name="RTX-A2000-12GB", marketing_name="NVIDIA RTX A2000 12GB", architecture="Ampere", chip="GA106",
    form_factor="PCIe", launch_year=2021, compute_capability=(8, 6), sm_count=26, die_gpcs=3,
    die_tpcs_per_gpc=5, boost_clock_hz=1.2e9, tensor_clock_hz=1.2e9, fma_per_clk_per_sm=_RATES_GA10X,
    sparse_2to4=True, tensor_cores_per_sm=4, tensor_core_generation=3, memory_type="GDDR6",
    memory_bytes=12e9, memory_bus_bits=192, memory_data_rate_bps=12e9, hbm_bytes_per_s=288e9,
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
    tensor_cores_per_sm=8, tensor_core_generation=2, memory_type="GDDR6", memory_bytes=16e9,
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
             "fma_per_clk_per_sm": "nvidiacudaguide", "max_threads_per_sm": "nvidiacudaguide"},
    notes=("The free Colab GPU: no TF32, no BF16 tensor cores, no 2:4 sparsity, no MIG.",),
))
_add(GPUSpec(
    name="L4", marketing_name="NVIDIA L4", architecture="Ada Lovelace", chip="AD104", form_factor="PCIe",
    launch_year=2023, compute_capability=(8, 9), sm_count=58, die_gpcs=5, die_tpcs_per_gpc=6,
    boost_clock_hz=2.04e9, tensor_clock_hz=2.04e9, fma_per_clk_per_sm=_RATES_AD10X, sparse_2to4=True,
    tensor_cores_per_sm=4, tensor_core_generation=4, memory_type="GDDR6", memory_bytes=24e9,
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
             "boost_clock_hz": "techpowerup", "tensor_clock_hz": "techpowerup", "l2_bytes": "techpowerup",
             "fma_per_clk_per_sm": "nvidiacudaguide", "max_threads_per_sm": "nvidiacudaguide",
             "sm_count": "techpowerup"},
    notes=("Ada's FP8 tensor cores give the L4 a precision the A100 lacks.",),
))


# -------------------------------------------------------------------------------------------------------
# Public API
# -------------------------------------------------------------------------------------------------------


def names() -> list[str]:
    """Catalogue keys, in catalogue order."""
    return list(_CATALOGUE)


def all_specs() -> list[GPUSpec]:
    return list(_CATALOGUE.values())


def get(name: str | GPUSpec) -> GPUSpec:
    """The spec called ``name`` (a catalogue key). Unknown names raise ``ValueError`` listing the known ones.

    A ``GPUSpec`` passes through unchanged, so functions can accept either.
    """
    if isinstance(name, GPUSpec):
        return name
    try:
        return _CATALOGUE[name]
    except (KeyError, TypeError):
        raise ValueError(f"gpu={name!r} is not in the catalogue; known: {', '.join(_CATALOGUE)}") from None


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
    catalogue lacks (an H100 PCIe, a 16 GB V100, an H200 NVL) gives None rather than a near miss.
    """
    if not device_name:
        return None
    key = re.sub(r"[\s_]+", "-", str(device_name).strip().upper())
    for pattern, spec_name in _MATCH_RULES:
        if re.search(pattern, key):
            return _CATALOGUE[spec_name]
    return None
