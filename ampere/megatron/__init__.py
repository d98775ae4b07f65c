"""Megatron-LM's 3D parallelism on A100 clusters: sizing, memory, pipeline schedules and a throughput model.

Chapter: *Megatron-LM: 3D parallelism predicted, validated, and run* (book/megatron.ipynb). The paper is
Narayanan et al., SC21 [narayanan2021megatron]; its runs used DGX A100 nodes with 8 x 80 GB A100s.

The package, one file per concern (the chapter's sections, in order):

* ``sizing.py``: :func:`GPTConfig`, :func:`params` (eq. 2), :func:`flops_per_iteration` (eq. 3),
  :func:`training_days` (eq. 4). Pure.
* ``published.py``: the paper's :data:`TABLE1`, :data:`TABLE2`, :data:`TRAINING_ESTIMATES` (read from
  ``ampere/data/tables``) and :func:`table1_config`. Pure.
* ``layouts.py``: :class:`Layout`, :func:`layout` (the rules of a PTD-P layout), :func:`params_per_gpu`. Pure.
* ``gpu_memory.py``: :func:`memory_per_gpu`, :func:`activation_bytes_per_layer` (the options the time model
  reads: recomputation, sequence parallelism, FlashAttention, ZeRO stage; the training state as a named
  convention, "megatron" by default; fits = :func:`ampere.memory.usable_bytes`). Pure.
* ``schedules.py``: :func:`schedule_ops` and :func:`simulate_schedule` run GPipe, 1F1B and interleaved
  1F1B step by step; :func:`bubble_formula`. Pure.
* ``inputs.py``: the throughput model's inputs with their sources (:data:`INPUTS`, :data:`MEMORY_OPS`,
  :data:`END_OPS`, :data:`CALIBRATION_RUN`). Pure.
* ``hardware.py``: the GEMM roofline with wave quantisation and its ceiling (:data:`GEMM_CEILINGS`,
  :func:`gemm_time`), the attention core (:func:`attention_core_roofline`, :func:`attention_efficiency`,
  :func:`flash_attention_efficiency`). Pure.
* ``stacks.py``: :class:`Software` and the named stacks :data:`STACKS` ("megatron-2021", "megatron-2022",
  "megatron-core", "megatron-deepspeed", "deepspeed-zero3", "fsdp", "ddp-flash"), each field sourced. Pure.
* ``comms.py``: every collective of a step (tensor-parallel, pipeline, data-parallel, ZeRO-3),
  :func:`overlapped` (what overlap costs), :func:`step_collectives` (ZeRO/FSDP per step). Pure.
* ``layer_costs.py``: one layer's forward and backward by category, with every tensor-parallel collective
  Megatron issues (the sequence-parallel backward re-gather included). Pure.
* ``throughput.py``: :func:`estimate`: one layout, one set of options, an :class:`Estimate` with the time,
  its breakdown, the memory per GPU and the throughput in three FLOP conventions (:data:`FLOP_CONVENTIONS`);
  no fitted constant by default, :func:`system_efficiency` (the 2021 fit) on request. Pure.
* ``validation.py``: the model against the paper's Tables 1 and 2, Korthikanti et al.'s Table 5
  (:func:`table5_rows`) and abstract (:func:`runs_2022`), :func:`validation_groups`, :func:`validate`
  (``python -m ampere validate megatron``), the seed article's :func:`claims`. Pure.
* ``other_teams.py``: published runs of other teams on other stacks, predicted with their own
  configuration (:func:`team_rows`, :func:`team_groups`), and every A100 row of MosaicML's benchmark table
  at 2,048 tokens (:func:`mosaicml_sweep`). Pure.
* ``peers.py``: the package against Megatron-LM's and DeepSpeed's own estimators (:func:`cross_check`,
  :func:`peer_explanations`). Pure.
* ``lessons.py``: tensor-parallel efficiency (:func:`tp_efficiency`), overlap (:func:`overlap_effect`),
  context and expert parallelism (:func:`context_parallel`, :func:`expert_parallel`). Pure.
* ``search.py``: choosing a layout, interleaving included, :func:`search_layouts`. Pure.
* ``measure.py``: one layer's GEMMs timed on the device at hand (:func:`measure_layer_gemms`) and the
  benchmark ``python -m ampere bench megatron`` (:func:`bench_main`). Imports torch inside functions.
* ``figures.py``: :func:`plot_schedule` and the GEMM model beside measurements
  (:func:`layer_gemm_points`, :func:`show_layer_gemms`). Imports matplotlib inside functions.
* ``lab_model.py`` and ``lab.py``: the tensor- and pipeline-parallel lab that runs a tiny GPT on
  ``torch.distributed`` (``lab.py`` is the old path :mod:`ampere.megatron_lab`). Torch inside functions.

For the planner (*The A100 today*): call :func:`estimate` (or :func:`search_layouts`) with the stack of the
software you plan to run (``software="megatron-core"`` for Megatron-LM today), ``memory_convention`` and
``precision``; read ``Estimate.time_per_iteration_s``, ``fits_in_memory``, ``memory`` and
``communication_share()``.

Collective times come from :mod:`ampere.collectives` and the node's network from :mod:`ampere.fabrics`
(chapter *NVLink, NVSwitch and collectives*); the GEMM model and the published MAMF figures from
:mod:`ampere.gemm`; memory arithmetic from :mod:`ampere.memory`; the model shape is
:class:`ampere.transformer.TransformerShape`. GPU facts come from :mod:`ampere.specs`.

Units: seconds, bytes (GB = 1e9), FLOP; TFLOP/s = 1e12 FLOP/s. Bandwidths are per direction.
"""

from __future__ import annotations

from ..tables import markdown_table  # noqa: F401  (the chapter reads it through ampere.book)
from . import lab  # noqa: F401  (the lab; ampere.megatron_lab is this module)
from .figures import layer_gemm_points, plot_schedule, show_layer_gemms
from .gpu_memory import activation_bytes_per_layer, memory_per_gpu
from .hardware import (ATTENTION_BENCHMARK, _hardware, attention_core_roofline, attention_efficiency,  # noqa: F401
                       flash_attention_efficiency, gemm_time)
from .inputs import CALIBRATION_RUN, END_OPS, INPUTS, MEMORY_OPS, Input
from .layouts import Layout, layout, params_per_gpu
from .measure import CPU_BENCH_CONFIG, bench_main, layer_gemm_shapes, measure_layer_gemms  # noqa: F401
from .published import TABLE1, TABLE2, TRAINING_ESTIMATES, table1_config
from .schedules import SCHEDULES, ScheduleResult, bubble_formula, schedule_ops, simulate_schedule
from .search import search_layouts
from .sizing import RECOMPUTE, GPTConfig, flops_per_iteration, params, training_days
from .throughput import (CATEGORIES, CATEGORY_LABELS, COMMUNICATION, PRECISIONS, Estimate, _row_estimate, estimate,  # noqa: F401
                         system_efficiency)
from .stacks import DEFAULT_STACK, STACK_FIELDS, STACKS, ZERO3_PREFETCH, Software, software
from .comms import overlapped, step_collectives
from .gpu_memory import DEFAULT_CONVENTION
from .hardware import GEMM_CEILINGS
from .sizing import FLOP_CONVENTIONS
from .validation import (TARGET_2022_MAX, TARGET_2022_MEAN, TARGET_2022_SPEEDUP, TARGET_FALL_POINTS,  # noqa: F401
                         TARGET_MAX_ABS_ERROR, TARGET_MEAN_ABS_ERROR, ValidationGroup, _table1_scores, claims,
                         runs_2022, speedup_2022, table1_rows, table2_rows, table5_rows, validate,
                         validation_groups)
from .other_teams import TeamGroup, TeamRun, mosaicml_sweep, team_groups, team_rows, team_runs
from .peers import cross_check
from .peers import explanations as peer_explanations
from .lessons import context_parallel, expert_parallel, overlap_effect, tp_efficiency

__all__ = [
    "GPTConfig", "params", "params_per_gpu", "flops_per_iteration", "training_days", "TABLE1", "TABLE2",
    "table1_config", "Layout", "layout", "memory_per_gpu", "activation_bytes_per_layer", "RECOMPUTE",
    "SCHEDULES", "ScheduleResult", "schedule_ops", "simulate_schedule", "bubble_formula", "plot_schedule",
    "Input", "INPUTS", "MEMORY_OPS", "END_OPS", "CALIBRATION_RUN", "Estimate", "estimate", "system_efficiency",
    "gemm_time", "attention_core_roofline", "attention_efficiency", "ATTENTION_BENCHMARK", "CATEGORIES",
    "table1_rows", "table2_rows", "validate", "search_layouts", "claims", "TRAINING_ESTIMATES",
    "layer_gemm_shapes", "measure_layer_gemms", "bench_main", "markdown_table", "runs_2022", "speedup_2022",
    "ValidationGroup", "validation_groups", "layer_gemm_points", "show_layer_gemms",
    "flash_attention_efficiency", "COMMUNICATION", "PRECISIONS", "DEFAULT_STACK", "STACK_FIELDS", "STACKS",
    "Software", "software", "overlapped", "step_collectives", "DEFAULT_CONVENTION", "GEMM_CEILINGS",
    "FLOP_CONVENTIONS", "ZERO3_PREFETCH", "table5_rows", "TeamGroup", "TeamRun", "team_groups", "team_rows",
    "team_runs", "cross_check", "peer_explanations", "context_parallel", "expert_parallel", "overlap_effect",
    "tp_efficiency", "CATEGORY_LABELS", "mosaicml_sweep",
]
