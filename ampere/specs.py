"""GPU facts as data: the one source of truth for every number the book derives.

Chapter: *Architecture of the GA100* (book/architecture.ipynb) explains every field; the other chapters
read their hardware figures from here.

Rules kept by this module:

* Units are in the field names (SI): ``boost_clock_hz``, ``memory_bytes``, ``hbm_bytes_per_s``. GB = 1e9
  bytes, GiB = 2**30 bytes.
* Memory comes three ways (``ampere/data/tables/gpu_memory.json``, one source per figure):
  ``memory_bytes`` is the physical capacity of the product, in binary units where the product is binary
  (NVIDIA's "80GB" A100 has 80 GiB: nvidia-smi shows 81920 MiB); ``nvidia_smi_memory_bytes`` is NVML's
  framebuffer total (smaller on Hopper, and smaller by 1/16 on GDDR cards with ECC enabled);
  ``cuda_memory_bytes`` is what CUDA exposes (``totalGlobalMem``, torch's ``total_memory``): the NVML
  total minus the driver's reserve. :attr:`GPUSpec.cuda_visible_bytes` is the published CUDA total, or a
  stated conservative estimate where none is published; ``ampere.memory`` budgets against it.
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

Non-tensor ("SIMT") 16-bit arithmetic on the CUDA cores, :data:`SIMT_PRECISIONS` (packed ``half2`` /
``__nv_bfloat162`` add, multiply, FMA; one result = one FMA per element):

``fp16_simt``  FP16 on the CUDA cores (A100: 78 TFLOP/s, four times FP32)
``bf16_simt``  BF16 on the CUDA cores (A100: 39 TFLOP/s, twice FP32)

They are kept out of :data:`PRECISIONS` on purpose: that tuple is the column order of every peak table
of the book (``spec.precisions()``), and those tables show the tensor and FP32/FP64 peaks the chapters
discuss. :meth:`GPUSpec.peak_flops` and :meth:`GPUSpec.supports` accept them; :meth:`GPUSpec.all_precisions`
lists them after the table precisions. A card carries a SIMT rate only where a source gives it
(``spec.source("simt_rates")``); none is given here for GA10x (8.6) and AD10x (8.9).
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Mapping

from . import check

__all__ = [
    "PRECISIONS",
    "SIMT_PRECISIONS",
    "ALL_PRECISIONS",
    "TENSOR_PRECISIONS",
    "SPARSE_PRECISIONS",
    "MEMORY_QUANTITIES",
    "GPUSpec",
    "MemoryFigure",
    "Quoted",
    "names",
    "get",
    "match",
    "all_specs",
    "pcie_bytes_per_s",
]

#: The precisions of the book's peak tables, in the order tables print them (``spec.precisions()``).
PRECISIONS: tuple[str, ...] = ("fp64", "fp64_tc", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4")
#: Non-tensor 16-bit arithmetic on the CUDA cores; accepted by ``peak_flops``, absent from the tables.
SIMT_PRECISIONS: tuple[str, ...] = ("fp16_simt", "bf16_simt")
#: Every precision the package knows: the table precisions, then the SIMT ones.
ALL_PRECISIONS: tuple[str, ...] = PRECISIONS + SIMT_PRECISIONS
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
    inconsistency between the printed figure and the derivation. ``source`` names the document when it is
    not the spec's ``datasheet`` source (the A100's non-tensor 16-bit peaks are printed in NVIDIA's
    comparison tables, not in its datasheet).
    """

    text: str
    scale: float = 1e12
    note: str | None = None
    source: str | None = None  # bib key when the figure comes from another document than spec "datasheet"

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


#: The memory figures of ``ampere/data/tables/gpu_memory.json``, one row per (GPU, quantity):
#: physical capacity, NVML framebuffer total, NVML's driver reserve, CUDA's total global memory.
MEMORY_QUANTITIES: tuple[str, ...] = ("physical", "nvidia_smi_total", "nvidia_smi_reserved", "cuda_total")
_MEMORY_TABLE = "gpu_memory"


@dataclass(frozen=True)
class MemoryFigure:
    """One memory figure of one GPU as a source prints it (a row of ``gpu_memory.json``).

    ``bytes`` is None where no citable figure was found (``note`` says what was looked for); ``printed``
    keeps the source's own text ("81559MiB", "40339 MBytes (42298834944 bytes)"); ``driver`` the driver or
    CUDA version of the capture (the driver's reserve changes with it); ``ecc`` "on"/"off" where known.
    """

    gpu: str
    quantity: str
    bytes: int | None
    printed: str | None
    source: str | None
    where: str
    driver: str | None = None
    ecc: str | None = None
    note: str = ""

    @property
    def mib(self) -> float | None:
        return None if self.bytes is None else self.bytes / 2**20

    @property
    def gib(self) -> float | None:
        return None if self.bytes is None else self.bytes / 2**30


@functools.lru_cache(maxsize=1)
def _memory_figures() -> Mapping[tuple[str, str], MemoryFigure]:
    """The memory table as {(gpu, quantity): MemoryFigure}, read once from ``ampere/data/tables``."""
    from . import results

    out: dict[tuple[str, str], MemoryFigure] = {}
    for row in results.table(_MEMORY_TABLE)["rows"]:
        value = row.get("bytes")
        fig = MemoryFigure(gpu=row["gpu"], quantity=check.one_of("quantity", row["quantity"], MEMORY_QUANTITIES),
                           bytes=None if value is None else check.nonneg_int("bytes", value),
                           printed=row.get("printed"), source=row.get("source") or None, where=row.get("where", ""),
                           driver=row.get("driver"), ecc=row.get("ecc"), note=row.get("note", ""))
        if (fig.gpu, fig.quantity) in out:
            raise ValueError(f"{_MEMORY_TABLE}.json: two rows for ({fig.gpu!r}, {fig.quantity!r})")
        if fig.bytes is not None and not fig.source:
            raise ValueError(f"{_MEMORY_TABLE}.json: ({fig.gpu!r}, {fig.quantity!r}) has a value but no source")
        if fig.bytes is None and not fig.note:
            raise ValueError(f"{_MEMORY_TABLE}.json: ({fig.gpu!r}, {fig.quantity!r}) is null without a note")
        out[(fig.gpu, fig.quantity)] = fig
    return MappingProxyType(out)


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
    memory_bytes: float  # physical capacity, bytes; binary where the product is (A100 "80GB" = 80 * 2**30)
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
        unknown = set(self.fma_per_clk_per_sm) - set(ALL_PRECISIONS)
        if unknown:
            raise ValueError(f"{self.name}: fma_per_clk_per_sm has unknown precisions {sorted(unknown)}")
        quoted_unknown = {p for p, _ in self.datasheet} - set(self.fma_per_clk_per_sm)
        if quoted_unknown:
            raise ValueError(f"{self.name}: datasheet quotes precisions without a rate {sorted(quoted_unknown)}")
        if any(p in self.fma_per_clk_per_sm for p in SIMT_PRECISIONS) and "simt_rates" not in self.sources:
            raise ValueError(f"{self.name}: SIMT rates need a source key 'simt_rates'")
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
        """Precisions of the book's peak tables this GPU executes natively, in table order (no SIMT ones)."""
        return tuple(p for p in PRECISIONS if p in self.fma_per_clk_per_sm)

    def all_precisions(self) -> tuple[str, ...]:
        """Every precision with a rate on this GPU: :meth:`precisions`, then the SIMT ones it has."""
        return tuple(p for p in ALL_PRECISIONS if p in self.fma_per_clk_per_sm)

    def supports(self, precision: str, sparse: bool = False) -> bool:
        """True when the catalogue holds a rate for ``precision`` (and 2:4 sparsity, with ``sparse=True``).

        An unknown precision name is simply not supported (False); ``sparse`` must be a boolean.
        """
        if not isinstance(precision, str):
            raise TypeError(f"precision must be a string, one of {', '.join(ALL_PRECISIONS)}; got {precision!r}")
        sparse = check.boolean("sparse", sparse)
        if precision not in self.fma_per_clk_per_sm:
            return False
        return not sparse or (self.sparse_2to4 and precision in SPARSE_PRECISIONS)

    def clock_for(self, precision: str) -> float:
        """Clock (Hz) at which the peak of ``precision`` is quoted (SIMT precisions: the boost clock)."""
        return self.tensor_clock_hz if precision in _TENSOR_CLOCKED else self.boost_clock_hz

    def peak_flops(self, precision: str, sparse: bool = False) -> float:
        """Peak throughput in FLOP/s (OP/s for int8/int4), derived from per-SM per-clock rates.

        ``precision`` is one of :data:`ALL_PRECISIONS` (the table precisions and the non-tensor
        ``fp16_simt``/``bf16_simt``). ``sparse=True`` gives the 2:4 structured-sparsity figure (2x dense)
        where the tensor cores support it; ``sparse`` must be a boolean (``"false"`` raises ``TypeError``).
        Unknown or unsupported precisions raise ``ValueError`` naming what is allowed.
        """
        check.one_of("precision", precision, ALL_PRECISIONS)
        sparse = check.boolean("sparse", sparse)
        if precision not in self.fma_per_clk_per_sm:
            why = ("no source in the catalogue gives its rate" if precision in SIMT_PRECISIONS
                   else "it has no such units")
            raise ValueError(
                f"precision={precision!r} is not supported on {self.name} ({why}); "
                f"allowed on this GPU: {', '.join(self.all_precisions())}"
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

    # --- memory as the software sees it (ampere/data/tables/gpu_memory.json) ---------------------------

    def memory_figure(self, quantity: str) -> MemoryFigure | None:
        """The ``quantity`` row of the memory table (one of :data:`MEMORY_QUANTITIES`), None when absent."""
        return _memory_figures().get((self.name, check.one_of("quantity", quantity, MEMORY_QUANTITIES)))

    @property
    def nvidia_smi_memory_bytes(self) -> int | None:
        """NVML's framebuffer total (nvidia-smi "Total", MiB x 2**20) in a cited capture; None if none found."""
        fig = self.memory_figure("nvidia_smi_total")
        return None if fig is None else fig.bytes

    @property
    def cuda_memory_bytes(self) -> int | None:
        """CUDA's total global memory (``totalGlobalMem``, torch ``total_memory``) in a cited capture.

        None where no citable figure was found (the table's note says so); see :attr:`cuda_visible_bytes`.
        """
        fig = self.memory_figure("cuda_total")
        return None if fig is None else fig.bytes

    @property
    def cuda_memory_estimated(self) -> bool:
        """True when :attr:`cuda_visible_bytes` is an estimate (no published CUDA total for this card)."""
        return self.cuda_memory_bytes is None

    @property
    def cuda_visible_bytes(self) -> int:
        """What CUDA exposes: the published CUDA total, else a conservative estimate.

        The estimate removes from :attr:`memory_bytes` the largest fraction (physical - CUDA total) /
        physical among the catalogue cards with the same kind of memory (HBM: ``memory_stacks`` set; GDDR:
        not) that have a published CUDA total, rounded down to a MiB. It never invents a figure: it is
        computed from the table's cited rows, and :attr:`cuda_memory_estimated` says it is one.
        """
        published = self.cuda_memory_bytes
        if published is not None:
            return published
        fraction = _largest_cuda_carveout(self.memory_stacks is not None)
        return math.floor(self.memory_bytes * (1 - fraction) / 2**20) * 2**20

    def source(self, field_name: str) -> str:
        """Citation key (book/references.bib) for ``field_name``.

        Besides the dataclass fields: ``"peak_flops"``, ``"simt_rates"`` (the per-clock rates of the
        non-tensor 16-bit precisions), and the memory figures ``"cuda_memory_bytes"`` and
        ``"nvidia_smi_memory_bytes"`` (their rows of ``gpu_memory.json``; ``ValueError`` with the table's note
        where no figure was found).
        """
        memory = {"cuda_memory_bytes": "cuda_total", "nvidia_smi_memory_bytes": "nvidia_smi_total"}
        valid = {f.name for f in fields(self)} | {"peak_flops", "simt_rates"} | set(memory)
        if not isinstance(field_name, str) or field_name not in valid:
            raise ValueError(f"field_name={field_name!r} is not a GPUSpec field; allowed: {sorted(valid)}")
        if field_name in memory:
            fig = self.memory_figure(memory[field_name])
            if fig is None or fig.source is None:
                why = fig.note if fig is not None else "no row in gpu_memory.json"
                raise ValueError(f"{self.name} has no published {field_name}: {why}")
            return fig.source
        if field_name == "simt_rates" and "simt_rates" not in self.sources:
            raise ValueError(f"{self.name} has no SIMT rates: no source in the catalogue gives them")
        return self.sources.get(field_name, self.sources["*"])

    def citation_keys(self) -> set[str]:
        return set(self.sources.values())


# -------------------------------------------------------------------------------------------------------
# The catalogue
# -------------------------------------------------------------------------------------------------------

KiB = 1024
MiB = 1024**2
GiB = 1024**3

# Dense FMA (MAC for integers) per clock per SM. Sources: WP-A100 (GA100, GV100), WP-H100 (GH100),
# CUDA C++ Programming Guide throughput table (FP64 on CC 7.5/8.6/8.9), GA102/Turing/Ada whitepapers.
# Non-tensor 16-bit ("simt_rates" source of each card): GA100 FP16 = 4 x FP32 and BF16 = 2 x FP32 (NVIDIA's
# A100 column, 78 and 39 TFLOP/s beside 19.5 FP32); GH100 FP16 = BF16 = 2 x FP32 (NVIDIA's H100 SXM5 column);
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
    ("fp16_simt", False): Quoted("78", source="nvforum2022nontensor"),
    ("bf16_simt", False): Quoted("39", source="nvforum2022nontensor"),
}


def _a100(name: str, marketing: str, form: str, memory_gib: int, memory_type: str, data_rate_bps: float,
          bandwidth_bytes_per_s: float, tdp_w: float, year: int, extra_sources: dict[str, str]) -> GPUSpec:
    """The four A100 products share the GA100 die configuration; they differ in memory, power and form.

    ``memory_gib``: NVIDIA's "40GB"/"80GB" are 40 and 80 GiB (five HBM2/HBM2e stacks of 8 or 16 GiB; NVML
    reports 40960 and 81920 MiB, ``gpu_memory.json``).
    """
    sources = {"*": "nvidia2020ampere", "memory_bytes": "nvidia2021a100datasheet",
               "simt_rates": "nvforum2022nontensor",
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
                 "tensor_clock_hz": "bekman2024mle", "simt_rates": "nvforum2022nontensor"}
_add(GPUSpec(
    name="H100-SXM5-80GB", marketing_name="NVIDIA H100 80GB SXM5", architecture="Hopper", chip="GH100",
    form_factor="SXM5", launch_year=2022, compute_capability=(9, 0), sm_count=132, die_gpcs=8,
    die_tpcs_per_gpc=9, boost_clock_hz=1.98e9, tensor_clock_hz=1.83e9, fma_per_clk_per_sm=_RATES_GH100,
    sparse_2to4=True, tensor_cores_per_sm=4, tensor_core_generation=4, memory_type="HBM3",
    memory_bytes=80 * GiB, memory_bus_bits=5120, memory_data_rate_bps=5.24e9, hbm_bytes_per_s=3.35e12,
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
           "memory_data_rate_bps is back-computed from 3.35 TB/s over 5120 bits; NVIDIA does not print it.",
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
           "141 GB read as 141 GiB: NVML's 143771 MiB (150.75e9 bytes) exceeds 141e9 bytes, so the figure is "
           "binary, 613 MiB above NVML's total as on the H100 (gpu_memory.json).",
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
    memory_bytes=48 * GiB, memory_bus_bits=384, memory_data_rate_bps=16e9, hbm_bytes_per_s=768e9,
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
             "boost_clock_hz": "techpowerup", "tensor_clock_hz": "techpowerup", "l2_bytes": "techpowerup",
             "fma_per_clk_per_sm": "nvidiacudaguide", "max_threads_per_sm": "nvidiacudaguide",
             "sm_count": "techpowerup"},
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


def get(name: str | GPUSpec) -> GPUSpec:
    """The spec called ``name``, a catalogue key in any case ("a100-sxm4-80gb" is "A100-SXM4-80GB").

    Unknown names (and non-strings) raise ``ValueError`` listing the known ones. A ``GPUSpec`` passes
    through unchanged, so functions can accept either. Driver names ("NVIDIA A100-SXM4-80GB") are
    :func:`match`'s job, not this one's.
    """
    if isinstance(name, GPUSpec):
        return name
    spec = _CATALOGUE_CASEFOLD.get(name.casefold()) if isinstance(name, str) else None
    if spec is None:
        raise ValueError(f"gpu={name!r} is not in the catalogue (names match in any case); "
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
    catalogue lacks (an H100 PCIe, a 16 GB V100, an H200 NVL) gives None rather than a near miss.
    """
    if not device_name:
        return None
    key = re.sub(r"[\s_]+", "-", str(device_name).strip().upper())
    for pattern, spec_name in _MATCH_RULES:
        if re.search(pattern, key):
            return _CATALOGUE[spec_name]
    return None
