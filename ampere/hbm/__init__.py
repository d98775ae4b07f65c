"""HBM and the memory hierarchy: where the bandwidth comes from, what it buys, and what code reaches.

Chapter: *HBM and the memory hierarchy* (book/hbm.ipynb). Every function here is explained there.

What lives here, as in every chapter package:

* **Models** (pure Python, no torch): the DRAM bandwidth derived from the interface
  (:func:`bandwidth_table`, checked against deviceQuery captures by :func:`devicequery_check`), the hierarchy in numbers (:func:`hierarchy_table`), the roofline of
  memory-bound work (:func:`roofline_ops`, :func:`attainable_flops`), the LLM decoding bound
  (:func:`decode_bound`), the L2 working-set curve (:func:`l2_sweep_model`, :func:`l2_plateau`,
  :func:`find_knee`) and coalescing into 32-byte sectors (:func:`warp_request`).
  The capacity arithmetic (weights, KV cache, training state, ZeRO, activations, what fits) is
  :mod:`ampere.memory`, shared with the Megatron and A100-today chapters; model shapes are
  :class:`ampere.transformer.TransformerShape` (:data:`MODELS` are the chapter's presets).
* **Published measurements**, read from ``ampere/data`` (never typed here): STREAM-type bandwidth
  (:func:`published_stream`) and L2 working-set sweeps (:func:`published_l2_sweeps`,
  :func:`published_l2_plateau`) from gpu-benches (``ernstgpubenches``), the ZeRO paper's Figure 1
  (:func:`zero_figure1`, ``rajbhandari2020zero``) and the CUDA guides' coalescing examples
  (:func:`coalescing_examples`, ``nvidiabestpractices``).
* **Measurements** (torch imported inside the functions): STREAM-like kernels with explicitly counted
  bytes (:func:`measure_bandwidth`), the L2 working-set sweep (:func:`measure_l2_sweep`), strided and offset
  copies (:func:`measure_strided_copy`), the capacity the driver reports (:func:`measure_capacity`) and ``python -m ampere bench hbm`` (:func:`bench_main`). Every
  measuring function also runs on ``device="cpu"`` with tiny sizes, so the tests exercise the same path.
* **Views** for the chapter's measuring sections (:func:`show_bandwidth`, :func:`show_l2_sweep`,
  :func:`show_coalescing`, :func:`show_capacity`): measured here when the GPU can, else recorded results, else published ones,
  always beside the model, through :mod:`ampere.views`.

Units follow the book: bytes and bytes/s in variables, GB = 1e9 bytes, GiB = 2**30 bytes; bandwidths are
printed in decimal GB/s or TB/s. A GPU's physical capacity is binary (an A100 "80GB" has 80 GiB,
``specs.GPUSpec.memory_bytes``); what CUDA exposes is less (``cuda_visible_bytes``), and every "fits" of the
chapter budgets against :func:`ampere.memory.usable_bytes` (CUDA's total minus the runtime reserve).
Bad input raises ``ValueError``/``TypeError`` naming the argument (:mod:`ampere.check`).

The package, one file per concern (PURE: no torch or matplotlib anywhere in the file; HEAVY: imports them
inside the functions that measure or draw):

* ``common.py``      units (KiB, MiB, GiB, GB), the dict-like row base, the catalogue lookup (pure)
* ``bandwidth.py``   DRAM bandwidth from the interface, the hierarchy table, two GPUs compared (pure)
* ``roofline.py``    the chapter's model presets, the roofline of memory-bound ops, the decoding bound (pure)
* ``l2_model.py``    the L2 working-set model, the sweep's footprints, the L2 plateau and the knee of a curve (pure)
* ``coalescing.py``  32-byte sectors per warp request for strided and misaligned access (pure)
* ``published.py``   published STREAM figures, L2 sweeps (and their L2 plateau) and the ZeRO paper's Figure 1
                     from ampere/data (pure)
* ``validation.py``  :func:`validate_models`, the models against held-out published figures (pure)
* ``measure.py``     the bandwidth kernels, the L2 sweep, the strided copies and the capacity, measured (heavy)
* ``records.py``     result records flattened: bandwidth rows and the sweep's points (pure)
* ``acceptance.py``  the acceptance checks of a GPU run and their thresholds (pure)
* ``bench.py``       ``python -m ampere bench hbm`` (:func:`bench_main`) and its summary (heavy, via measure)
* ``views.py``       the chapter's views and the points they show (heavy: matplotlib, torch via measure)
"""

from __future__ import annotations

from .acceptance import ACCEPT_COPY_PCT, ACCEPT_KNEE_TOLERANCE, Acceptance, check_acceptance
from .bandwidth import BANDWIDTH_GPUS, bandwidth_table, compare_gpus, devicequery_check, hierarchy_table
from .bench import bench_main
from .coalescing import SECTOR_BYTES, WarpRequest, coalescing_examples, coalescing_table, warp_request
from .common import GB, GiB, KiB, MiB
from .l2_model import L2_PLATEAU_WINDOW, Knee, find_knee, l2_plateau, l2_sweep_model, sweep_footprints
from .measure import (KERNELS, L2_SWEEP_CHUNK_BYTES, STRIDED_COPY_OFFSETS, STRIDED_COPY_STRIDES, Capacity, Kernel,
                      measure_bandwidth, measure_capacity, measure_l2_sweep, measure_strided_copy)
from .published import (L2Sweep, ZeroFigureRow, published_l2_plateau, published_l2_sweep, published_l2_sweeps,
                        published_stream, zero_figure1)
from .records import BandwidthRow, bandwidth_rows, sweep_rows
from .roofline import (DECODE_GPUS, MODELS, SIZE_CLASSES, DecodeBound, Op, attainable_flops, decode_bound,
                       decode_table, roofline_ops)
from .validation import validate_models
from .views import (CAPACITY_GPUS, bandwidth_points, capacity_rows, coalescing_points, show_bandwidth, show_capacity, show_coalescing, show_l2_sweep,
                    zero_points)

# Private helpers of the old module ``ampere/hbm.py`` that the tests reach at ``ampere.hbm.<name>``.
from .measure import _chunk_view, _kernel_fn, _retrying_oom  # noqa: F401

__all__ = [
    # constants and presets
    "GB", "GiB", "MiB", "KiB", "MODELS", "SIZE_CLASSES", "BANDWIDTH_GPUS", "DECODE_GPUS", "KERNELS", "Kernel",
    "L2_SWEEP_CHUNK_BYTES", "ACCEPT_COPY_PCT", "ACCEPT_KNEE_TOLERANCE", "SECTOR_BYTES", "STRIDED_COPY_STRIDES",
    "STRIDED_COPY_OFFSETS",
    # models
    "bandwidth_table", "devicequery_check", "hierarchy_table", "Op", "roofline_ops", "attainable_flops", "DecodeBound",
    "decode_bound", "decode_table", "zero_points", "compare_gpus", "sweep_footprints", "l2_sweep_model", "Knee",
    "find_knee", "l2_plateau", "L2_PLATEAU_WINDOW", "WarpRequest", "warp_request", "coalescing_table",
    # published data
    "ZeroFigureRow", "zero_figure1", "published_stream", "L2Sweep", "published_l2_sweeps", "published_l2_sweep",
    "published_l2_plateau", "coalescing_examples", "validate_models",
    # measurements
    "measure_bandwidth", "measure_l2_sweep", "measure_strided_copy", "Capacity", "measure_capacity", "BandwidthRow", "bandwidth_rows",
    "sweep_rows", "Acceptance", "check_acceptance", "bench_main",
    # views
    "bandwidth_points", "show_bandwidth", "show_l2_sweep", "show_capacity", "capacity_rows", "CAPACITY_GPUS", "coalescing_points", "show_coalescing",
]
