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

# Files: model.py (precisions, GPUSpec, Quoted, MemoryFigure), catalogue.py (the GPUs and the lookups).
from .model import (ALL_PRECISIONS, MEMORY_QUANTITIES, PRECISIONS, SIMT_PRECISIONS, SPARSE_PRECISIONS,
                    TENSOR_PRECISIONS, GPUSpec, MemoryFigure, Quoted, pcie_bytes_per_s)
from .catalogue import all_specs, get, match, names

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
