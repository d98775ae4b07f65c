"""``python -m ampere report``: is this machine configured and performing like the reference?

Chapter: *The reference check* (book/reference-check.ipynb) explains the settings that make identical
clusters differ and how to read the report; this package is the command.

One command reads the configuration behind a training step and judges it in named checks
(:data:`CHECKS`: clocks, power, persistence, ECC, MIG, PCIe, NUMA, ACS/IOMMU, GPUDirect RDMA, NCCL, NVLink,
versions, CPU governor), ranks what is wrong by expected loss of training throughput (:func:`findings`),
probes the device, runs every measurement of the package that the device supports in a short mode, and
compares each figure with

* the **model** of the same GPU (``ampere.specs``: the datasheet peak the figure is a fraction of),
* the **reference** of the same GPU, measured the same way and at the same size (recorded results in
  ``ampere/data/*.json`` and any ``--reference DIR``, published measurements): the median of the values of
  the same figure, and it **flags** a figure more than 10 % below it. An all-reduce runs on the busbw
  plateau (4 and 8 GiB) and is compared only with references of the same size and GPU count,
* recorded values of **other GPUs** (what the same figure is on an H200, an A100 ...).

Measurements are *probes*: named entries of :data:`PROBES`, each importing its chapter module lazily and
saying "not available in this version" (module or function missing) or "not supported on this device"
(capability missing) instead of failing. Outputs, written as one set (a reader finds the old set or the
new one): ``report.json`` (schema ``ampere-result/1``, benchmark ``report``, one record per figure with its
raw samples, plus ``checks``, ``findings`` and the ``facts`` read), a self-contained ``report.html`` and
``report.txt`` (what the command prints). On a CPU the checks say why they do not apply and the model-only
report is written in seconds.

A *figure* (the unit everything here compares) is a dict::

    {"probe": "matmul", "key": "matmul/bf16/n8192", "label": "BF16 matmul 8192^3", "value": 702.4,
     "unit": "TFLOP/s", "model": 989.4, "model_label": "dense BF16 tensor peak", "higher_is_better": True,
     "measurement": {...}}   # optional, ampere.timing.Measurement.to_dict()

Map of the package (one concern per file):

* ``extract.py``    -- figures from results, one extractor per benchmark (matmul, hbm, sparsity, generic);
                       the recorded results to compare with (pure)
* ``references.py`` -- published figures as references, key labels and models, the chapter's reference
                       table, the published training runs grouped per GPU and team (pure)
* ``comparison.py`` -- the comparison with the model and the recorded reference, the flag threshold,
                       configuration differences, printable rows (pure)
* ``claims.py``     -- published cases of one wrong setting, single-GPU variation rows, the cost of a gap,
                       the claims-checked table (pure)
* ``arguments.py``  -- the shapes of the report's arguments (figures, results, judged checks, paths, streams),
                       checked with the ``ampere.check`` vocabulary (pure)
* ``config_facts.py``  -- readers: NVML, sysfs, procfs, environment, nvidia-smi topo -m, lspci (never raise)
* ``config_judges.py`` -- the verdict and the judges of the GPU settings (pure)
* ``node_judges.py``   -- the judges of the node: NUMA, PCIe path, RDMA, NCCL, NVLink, versions, governor (pure)
* ``config_checks.py`` -- the named checks (text, judge, NVIDIA's prescreen item), the step shares on each GPU's
                       own DGX network, findings ranked by loss (pure)
* ``examples.py``   -- the facts of a published A100 node and the same node with named faults (pure)
* ``workload.py``   -- one transformer layer fwd+bwd timed, the Megatron model's prediction (torch inside)
* ``probes.py``     -- the probes the report can run, their selection and the plan
* ``figures.py``    -- the report's figures and the chapter's reference figure (matplotlib inside functions)
* ``output.py``     -- the output folder, the report's files written as one set, the HTML page
* ``progress.py``   -- the plain-text progress bar
* ``runner.py``     -- :func:`run` (probe, measure, compare, write) and the ``main`` of the command
"""

from __future__ import annotations

from .claims import GAP_PRICE_QUOTE, case_rows, claims_rows, gap_cost, variation_rows
from .comparison import FLAG_THRESHOLD, compare, config_differences, model_rows, recorded_rows, summary_rows
from .config_checks import (CHECKS, ConfigCheck, catalogue_rows, check_names, check_rows, findings, judge_all,
                            share_rows, step_shares, throughput_loss)
from .config_facts import read_facts
from .config_judges import Verdict
from .examples import FAULTS, example_facts
from .extract import ALLREDUCE_SIZES, allreduce_key, allreduce_sizes, figures_from_result, load_references, recorded_figures
from .figures import (comparison_figure, draw_comparison, draw_findings, draw_model, draw_recorded, model_figure,
                      recorded_figure, show_cases, show_references)
from .output import REPORT_FILES, check_output_folder, render_html, write_report_set, write_text_atomic
from .probes import PROBES, Probe, plan, probe_names, select_probes
from .progress import Progress
from .references import (REFERENCE_GPUS, Reference, allreduce_points, figure_unit, key_label, key_model,
                         published_figures, reference_points, reference_rows, reference_table, training_rows,
                         unsized_allreduce)
from .runner import TIME_BUDGET_S, main, mig_scale, run, summary_text
from .workload import layer_flops, layer_shape, measure_layer, predict_layer_s, prediction_rows

# Names outside __all__ that were reachable as ``ampere.report.<name>`` when report was one module, and that
# code outside the package used there: they still resolve at the old path.
from .. import specs  # noqa: F401
from .comparison import CONFIG_FIELDS  # noqa: F401
from .extract import _gpu_id, _matmul_figures, _model_precision, _peak_label  # noqa: F401
from .output import MODEL_FALLBACK_GPU  # noqa: F401
from .probes import ProbeContext, _matmul_precisions, _needs_cuda  # noqa: F401
from .runner import ReportOutcome  # noqa: F401

__all__ = [
    "FLAG_THRESHOLD", "TIME_BUDGET_S", "Probe", "PROBES", "probe_names", "select_probes", "plan",
    "figures_from_result", "recorded_figures", "load_references", "compare", "config_differences",
    "summary_rows", "model_rows", "recorded_rows", "draw_comparison", "draw_model", "draw_recorded",
    "comparison_figure", "model_figure", "recorded_figure", "mig_scale", "render_html", "write_text_atomic",
    "check_output_folder", "run", "main", "Progress", "variation_rows", "gap_cost", "REFERENCE_GPUS",
    "Reference", "reference_table", "reference_rows", "figure_unit", "published_figures", "key_label",
    "key_model", "reference_points", "show_references", "claims_rows", "GAP_PRICE_QUOTE",
    "CHECKS", "ConfigCheck", "Verdict", "check_names", "judge_all", "findings", "check_rows", "catalogue_rows",
    "step_shares", "throughput_loss", "read_facts", "ALLREDUCE_SIZES", "allreduce_sizes", "allreduce_points",
    "unsized_allreduce", "allreduce_key", "REPORT_FILES", "write_report_set", "summary_text", "layer_shape", "layer_flops",
    "predict_layer_s", "measure_layer", "share_rows", "prediction_rows", "case_rows", "FAULTS", "example_facts",
    "show_cases", "draw_findings", "training_rows",
]
