"""Multi-Instance GPU, the chapter package: the MIG model, figures of layouts, NVML, a measurement, costs, views.

Chapter: *Multi-Instance GPU — one A100, seven tenants* (book/mig.ipynb). ``from ampere import mig`` gives
the whole chapter: every public name of the files below is re-exported here (``mig.instance_peaks``,
``mig.simulate``, ``mig.show_profiles`` ...). One file per concern:

* ``profile_tables.py`` — pure: the MIG profile tables (data), one profile's slices and SMs, the guide's
  own contradictions (:func:`doc_conflicts`), the model peaks of one instance (:func:`instance_peaks`);
* ``geometry.py`` — pure: placements and layouts (:func:`validate`, :func:`enumerate_layouts`,
  :func:`place`, :func:`usage`, slice maps and rows); re-exports ``profile_tables``, and is the old path
  ``ampere.mig_geometry``;
* ``compute_instances.py`` — pure: the compute-instance profiles a GPU instance admits
  (:func:`compute_instance_profiles`);
* ``tenants.py`` — pure: the isolation model's inputs (:class:`Workload`, :class:`SimConfig`,
  :func:`default_tenants`, :func:`service_time`);
* ``sim.py`` — pure (NumPy): the isolation event simulator (:func:`simulate`, :func:`isolation_study`);
  re-exports ``tenants``, and is the old path ``ampere.mig_sim``;
* ``evidence.py`` — pure: published measurements of loaded instances beside the model
  (:func:`published_isolation`, :func:`isolation_evidence_rows`);
* ``costs.py`` — pure: seven small models on one A100 or on seven cards (:func:`serving_costs`);
* ``nvml.py`` — MIG mode, instances and the driver's profile table through NVML, read-only, never raises
  (:func:`nvml_mig_report`, :func:`compare_with_driver`);
* ``measure.py`` — torch inside functions: a matmul and a copy on this GPU or MIG instance
  (:func:`measure_instance`) and ``python -m ampere bench mig`` (:func:`bench_main`);
* ``figures.py`` — matplotlib inside functions: :func:`plot_layout`, :func:`plot_layouts`,
  :func:`plot_layout_census`, :func:`plot_isolation`;
* ``views.py`` — the chapter's tables as Markdown (``show_*``) and the measurement beside recorded and
  published numbers (:func:`instance_points`, :func:`show_instance`).

Importing the package imports neither torch nor matplotlib.
"""

from __future__ import annotations

from .compute_instances import CI_SLICES, ComputeProfile, compute_instance_profiles
from .costs import ServingOption, serving_costs
from .evidence import CHANNELS, IsolationMeasurement, isolation_evidence_rows, published_isolation
from .figures import plot_isolation, plot_layout, plot_layout_census, plot_layouts
from .geometry import (COMPUTE_SLICES, MEMORY_SLICES, DocConflict, InstancePeaks, LayoutRow, LayoutUsage, MigTable,
                       Placement, Profile, addable, doc_conflicts, enumerate_layouts, format_layout, instance_peaks,
                       layout_maps, layout_rows, mig_gpus, place, placement, profile, profile_from_device_name,
                       profiles, smallest_profile, table, usage, validate)
from .geometry import layouts_arg  # noqa: F401  (not in __all__, but ampere.mig.layouts_arg resolved before the split)
from .measure import InstanceMeasurement, bench_main, measure_instance
from .nvml import (DriverComparison, DriverProfile, MigGpu, MigInstance, MigReport, compare_with_driver,
                   nvml_mig_report)
from .sim import (MODES, SCENARIOS, IsolationRow, SimConfig, SimResult, TenantStats, VictimSummary, Workload,
                  default_tenants, isolation_study, service_time, simulate)
from .views import (compute_instance_rows, instance_points, media_owners, profile_rows, show_compute_instances,
                    show_doc_conflicts, show_instance, show_isolation, show_isolation_evidence, show_layouts,
                    show_nvml, show_prices,
                    show_profiles, show_serving, show_validation)

__all__ = [
    # geometry (ampere.mig.geometry, ampere.mig.profile_tables)
    "Profile", "MigTable", "Placement", "MEMORY_SLICES", "COMPUTE_SLICES", "mig_gpus", "table", "profiles",
    "profile", "placement", "validate", "enumerate_layouts", "place", "addable", "LayoutUsage", "usage",
    "format_layout", "layout_maps", "LayoutRow", "layout_rows", "DocConflict", "doc_conflicts", "InstancePeaks",
    "instance_peaks", "profile_from_device_name", "smallest_profile",
    # compute instances (ampere.mig.compute_instances)
    "CI_SLICES", "ComputeProfile", "compute_instance_profiles",
    # isolation model (ampere.mig.sim, ampere.mig.tenants)
    "Workload", "SimConfig", "TenantStats", "VictimSummary", "SimResult", "IsolationRow", "MODES", "SCENARIOS",
    "default_tenants", "simulate", "isolation_study", "service_time",
    # measured isolation (ampere.mig.evidence)
    "CHANNELS", "IsolationMeasurement", "published_isolation", "isolation_evidence_rows", "show_isolation_evidence",
    # figures (ampere.mig.figures)
    "plot_layout", "plot_layouts", "plot_layout_census", "plot_isolation",
    # NVML (ampere.mig.nvml)
    "MigInstance", "DriverProfile", "MigGpu", "MigReport", "nvml_mig_report", "DriverComparison",
    "compare_with_driver",
    # measurement (ampere.mig.measure, ampere.mig.views)
    "InstanceMeasurement", "measure_instance", "bench_main", "instance_points",
    # cost (ampere.mig.costs)
    "ServingOption", "serving_costs",
    # views (ampere.mig.views)
    "profile_rows", "show_profiles", "show_doc_conflicts", "show_layouts", "show_validation", "show_isolation",
    "show_instance", "show_nvml", "show_prices", "show_serving", "media_owners", "compute_instance_rows",
    "show_compute_instances",
]
