"""Views of the MIG chapter: its tables as Markdown, and the measurement beside recorded and published numbers.

Chapter: *Multi-Instance GPU — one A100, seven tenants* (book/mig.ipynb): the ``show_*`` functions a section
calls (profiles, documentation conflicts, layouts, validation, isolation, NVML, prices, serving) and the
evidence of "On a real GPU" (:func:`instance_points`, :func:`show_instance`), built on the core
:mod:`ampere.views` (imported here as ``views``). No torch or matplotlib at import: the figures come from
:mod:`ampere.views` and the measurement (:func:`ampere.mig.measure.measure_instance`) only when called.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from .. import check, pricing, results, specs, views
from .costs import ServingOption
from .compute_instances import compute_instance_profiles
from .evidence import isolation_evidence_rows
from .geometry import (MEMORY_SLICES, Profile, doc_conflicts, format_layout, instance_peaks, layout_rows,
                       layouts_arg, mig_gpus, profiles, table, validate)
from .measure import measure_instance
from .nvml import compare_with_driver, nvml_mig_report
from .sim import IsolationRow

__all__ = ["profile_rows", "show_profiles", "show_doc_conflicts", "show_layouts", "show_validation",
           "show_isolation", "show_isolation_evidence", "instance_points", "show_instance", "show_nvml", "show_prices", "show_serving",
           "media_owners", "compute_instance_rows", "show_compute_instances"]


# ---------------------------------------------------------------------------------------------------------
# Views: the chapter's tables as Markdown, and the measurement beside recorded and published numbers
# ---------------------------------------------------------------------------------------------------------


def _show_md(text: str) -> None:
    from .. import tables

    tables.show_md(text)


def _starts_text(p: Profile) -> str:
    return "{" + ",".join(map(str, p.starts)) + "}" + f":{p.memory_slices}"


def _source_line(keys: Iterable[str], what: str) -> str:
    labels = ", ".join(dict.fromkeys(views.cite_label(k) for k in keys if k))
    return f"*{what}: {labels}.*"


def profile_rows(gpu: str | specs.GPUSpec) -> list[dict[str, Any]]:
    """The profile table of ``gpu`` as rows for a Markdown table: memory slices, SMs, the nominal shares of
    capacity (GiB of the physical capacity) and bandwidth, the maximum count, the placement rule and the
    media engines (the compute slices are the ``g`` of the name; the L2 share equals the memory share).

    Chapter: *Multi-Instance GPU*, "Slices".
    """
    spec = specs.get(gpu)
    rows = []
    for p in table(spec).profiles:
        f = float(p.memory_fraction)
        # the compute slices are the "g" of the name, and the L2 follows the memory slices: no column for either
        rows.append({"profile": f"`{p.name}`", "ID": p.profile_id, "mem. slices": f"{p.memory_slices}/{MEMORY_SLICES}",
                     "SMs": "n/a" if p.sm_count is None else p.sm_count, "GiB": spec.memory_bytes * f / 2**30, "GB/s": spec.hbm_bytes_per_s * f / 1e9,
                     "max": p.max_count, "placements": f"`{_starts_text(p)}`", "media": p.media})  # NVDEC/JPEG/OFA
    return rows


def show_profiles(gpu: str | specs.GPUSpec) -> None:
    """Display the profile table of ``gpu`` (Markdown) with its sources. Chapter: *Multi-Instance GPU*."""
    from ..tables import markdown_table

    spec = specs.get(gpu)
    t = table(spec)
    text = markdown_table(profile_rows(spec), formats={"GiB": ".3g", "GB/s": ".0f"})
    keys = [t.profiles[0].source] + [p.sm_count_source for p in t.profiles if p.sm_count_source]
    _show_md(f"**{spec.name}**\n\n{text}\n\n" + _source_line(keys, "Profiles, placements and SM counts"))


def media_owners(gpu: str | specs.GPUSpec) -> dict[str, tuple[str, ...]]:
    """Which profiles of ``gpu`` get a JPEG decoder and which the optical-flow unit (the MIG guide's
    "Hardware Units" column): ``{"jpeg": (...), "ofa": (...)}``. Chapter: *Multi-Instance GPU*, "Slices"."""
    ps = profiles(gpu)
    return {"jpeg": tuple(p.name for p in ps if p.jpeg), "ofa": tuple(p.name for p in ps if p.ofa)}


def show_doc_conflicts() -> None:
    """Every row where NVIDIA's MIG guide prints a fraction its own placement rule contradicts (one line
    per profile table, not per product). Chapter: *Multi-Instance GPU*, "Where the documentation
    contradicts itself"."""
    from ..tables import markdown_table

    rows = []
    for gpu in mig_gpus():
        if gpu != table(gpu).gpus[0]:
            continue
        for c in doc_conflicts(gpu):
            rows.append({"profile table": c.gpu, "profile": f"`{c.profile}`", "column": c.column,
                         "printed": c.printed, "placement": f"`{c.starts}`", "placement implies": c.implied_by_placement})
    _show_md(markdown_table(rows) + "\n\n" + _source_line(["nvidiamig"], "Printed fractions and placements"))


def show_validation(gpu: str | specs.GPUSpec, layouts: Sequence[Iterable[Any]]) -> None:
    """A table of layouts and what :func:`validate` says about each (the normalised layout, or the error).

    Chapter: *Multi-Instance GPU*, "Layouts".
    """
    from ..tables import markdown_table

    rows = []
    for lay in layouts_arg(layouts):
        lay = list(lay)
        try:
            ok = validate(gpu, lay)
            verdict = f"valid: `{format_layout(ok)}`"
        except ValueError as exc:
            verdict = str(exc)
        rows.append({"layout": f"`{format_layout(lay)}`", "validate says": verdict})
    _show_md(markdown_table(rows))


def _profile_counts(layout: str) -> str:
    """``"1g.5gb@0 + 1g.5gb@1 + 2g.10gb@2"`` -> ``"2 x 1g.5gb, 2g.10gb"`` (instances in slot order)."""
    names = [part.split("@")[0] for part in layout.split(" + ")]
    runs: list[list[Any]] = []
    for n in names:
        if runs and runs[-1][0] == n:
            runs[-1][1] += 1
        else:
            runs.append([n, 1])
    return ", ".join(n if k == 1 else f"{k} x {n}" for n, k in runs)


def _layout_table_rows(gpu: str | specs.GPUSpec, layouts: Sequence[Iterable[Any]],
                      profiles: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Every layout as a narrow table row: its instances in slot order (the letters A, B, ... of the maps
    follow that order), the memory map (8 slices) and compute map (7), SMs in use, stranded slices.
    Chapter: *Multi-Instance GPU*, "Every way to cut an A100"."""
    return [{"#": r.n, "instances, in slot order": _profile_counts(r.layout), "memory": f"`{r.memory}`",
             "compute": f"`{r.compute}`", "SMs": r.sms, "stranded": f"{r.stranded_memory} / {r.stranded_compute}"}
            for r in layout_rows(gpu, layouts, profiles)]


def show_layouts(gpu: str | specs.GPUSpec, layouts: Sequence[Iterable[Any]], profiles: Sequence[str] | None = None,
                 title: str | None = None) -> None:
    """Every layout as a row ( instances, letters on the 8 memory and 7 compute
    slices, ``.`` = stranded), inside a collapsed dropdown. Chapter: *Multi-Instance GPU*, "Every way to cut an
    A100"."""
    from ..tables import markdown_table

    if title is not None and not isinstance(title, str):
        raise TypeError(f"title must be a string or None; got {title!r}")
    rows = _layout_table_rows(gpu, layouts, profiles)
    left_out = [n for n in table(gpu).names if profiles is not None and n not in profiles]
    title = title or (f"The {len(rows)} maximal layouts of the {specs.get(gpu).name}"
                      + (f" without {', '.join(left_out)}" if left_out else ""))
    _show_md(f"````{{dropdown}} {title}\n{markdown_table(rows)}\n````")


def compute_instance_rows(gpu: str | specs.GPUSpec) -> list[dict[str, Any]]:
    """For every GPU-instance profile of ``gpu``: the compute-instance profiles it admits (most at once),
    their SMs, and the memory all of them share. Chapter: *Multi-Instance GPU*, "GPU instances and compute
    instances"."""
    spec = specs.get(gpu)
    rows = []
    for gi in table(spec).profiles:
        cis = compute_instance_profiles(spec, gi.name)
        rows.append({"GPU instance": f"`{gi.name}`",
                     "CI profiles (most at once)": ", ".join(
                         f"{'whole' if c.whole_gpu_instance else f'{c.compute_slices}c'} x {c.max_count}"
                         for c in cis),
                     "SMs each": "/".join("?" if c.sms is None else str(c.sms) for c in cis),
                     "shared GiB": cis[0].memory_shared_gib})
    return rows


def show_compute_instances(gpu: str | specs.GPUSpec) -> None:
    """:func:`compute_instance_rows` as a Markdown table with its source. Chapter: *Multi-Instance GPU*,
    "GPU instances and compute instances"."""
    from ..tables import markdown_table

    text = markdown_table(compute_instance_rows(gpu), formats={"shared GiB": ".3g"})
    _show_md(f"**{specs.get(gpu).name}**\n\n{text}\n\n" + _source_line(
        ["nvidiamig"], "Rule written from the examples of Concepts, Getting Started (-lcip) and MIG Device Names in"))


def show_isolation(rows: Sequence[IsolationRow]) -> None:
    """The isolation study as a Markdown table. Chapter: *Multi-Instance GPU*, "Isolation, in a model"."""
    from ..tables import markdown_table

    def row(name: str, r: Any) -> IsolationRow:
        if not isinstance(r, IsolationRow):
            raise TypeError(f"{name} must be an IsolationRow (from isolation_study), got {r!r:.60} ({type(r).__name__})")
        return r

    rows = check.sequence("rows", rows, row, max_len=10**4)
    table_rows = [{"sharing": r.mode, "7th tenant": r.scenario, "p50 ms": r.victim_p50_ms, "p99 ms": r.victim_p99_ms,
                   "p99 / quiet": r.p99_vs_quiet, "served/s": r.victim_throughput_per_s,
                   "bully/s": r.noisy_throughput_per_s} for r in rows]
    _show_md(markdown_table(table_rows, formats={"p50 ms": ".1f", "p99 ms": ".1f", "p99 / quiet": ".2f",
                                                 "served/s": ".0f", "bully/s": ".0f"}))


def show_isolation_evidence(clock_scale: float = 1.0) -> None:
    """The published measurements of loaded MIG instances beside the isolation model's predictions
    (:func:`ampere.mig.evidence.isolation_evidence_rows`), as a Markdown table with its source.
    Chapter: *Multi-Instance GPU*, "Isolation, measured"."""
    from ..tables import markdown_table

    rows = isolation_evidence_rows(clock_scale)
    keys = {r.pop("source") for r in rows}
    _show_md(markdown_table(rows) + "\n\n" + f"*Measured: {', '.join(sorted(keys))}; model: this chapter's "
             f"isolation model, SM clock at {clock_scale:g} of boost.*")


def _info_or_none(name: str, info: Any) -> Any:
    """``None`` (nothing measured here) or a device description with the fields of ``DeviceInfo``."""
    if info is not None and not all(hasattr(info, a) for a in ("backend", "name")):
        raise TypeError(f"{name} must be a DeviceInfo (from ampere.device.probe()) or None; got "
                        f"{info!r:.60} ({type(info).__name__})")
    return info


def _split_gpu(name: str) -> tuple[str, str | None]:
    """"A100-SXM4-80GB MIG 1g.10gb" -> ("A100-SXM4-80GB", "1g.10gb")."""
    base, _, prof = name.partition(" MIG ")
    return base, (prof or None)


def instance_points(info: Any = None, quick: bool = True) -> tuple[list[views.Point], list[views.Point]]:
    """The measurement section's evidence: (matmul points in TFLOP/s, copy points in GB/s).

    Measured here when ``info`` is a CUDA device; then every result of ``bench mig`` recorded in
    ``ampere/data``; then the published matmul throughputs of MIG instances. Each beside the model of its
    instance (:func:`instance_peaks`: the SM share of the dense peak, the memory-slice share of the
    bandwidth). Chapter: *Multi-Instance GPU*, "On a real GPU".
    """
    quick = check.boolean("quick", quick)
    info = _info_or_none("info", info)
    matmul: list[views.Point] = []
    copy: list[views.Point] = []
    if info is not None and getattr(info, "backend", "cpu") == "cuda":
        m = measure_instance(info=info, quick=quick)
        where = m.profile or "whole GPU"
        gpu = m.gpu or str(getattr(info, "name", "this GPU"))
        matmul.append(views.Point(f"{where}: {m.precision} matmul {m.n}^3", gpu,
                                  m.model.flops / 1e12 if m.model else None, m.flops_per_s / 1e12, "TFLOP/s",
                                  kind="measured", source="measured here"))
        copy.append(views.Point(f"{where}: copy {m.copy_bytes / 2**20:.0f} MiB", gpu,
                                m.model.hbm_bytes_per_s / 1e9 if m.model else None, m.copy_bytes_per_s / 1e9,
                                "GB/s", kind="measured", source="measured here"))
    for rec in results.records(benchmark="mig", kind="measured"):
        base, prof = _split_gpu(rec.gpu)
        where = rec.params.get("profile") or prof or "whole GPU"
        if rec.params.get("kernel") == "matmul" and "flops_per_s" in rec.figures:
            model = rec.figures.get("model_flops_per_s")
            matmul.append(views.point(rec, "flops_per_s", f"{where}: {rec.params.get('precision', '')} matmul",
                                      None if model is None else model / 1e12, "TFLOP/s", scale=1e-12, gpu=base))
        elif rec.params.get("kernel") == "copy" and "copy_bytes_per_s" in rec.figures:
            model = rec.figures.get("model_bytes_per_s")
            copy.append(views.point(rec, "copy_bytes_per_s", f"{where}: copy", None if model is None else model / 1e9,
                                    "GB/s", scale=1e-9, gpu=base))
    for rec in results.records(benchmark="mig", kind="published"):
        base, prof = _split_gpu(rec.gpu)
        prec = rec.params["precision"]
        model = instance_peaks(base, prof, prec).flops / 1e12
        matmul.append(views.point(rec, f"{prec}_tflop_per_s", f"{prof or 'whole GPU'}: {prec} matmul, best n",
                                  model, "TFLOP/s", gpu=base))
    return matmul, copy


def _instance_label(p: views.Point) -> str:
    """"1g.10gb: fp16 matmul, best n" -> "1g.10gb, fp16" (the GPU goes in the title)."""
    where, _, rest = p.what.partition(": ")
    prec = next((w for w in rest.split() if w in ("fp16", "bf16", "tf32", "fp32")), rest.split(" ")[0])
    return f"{where}, {prec}" + ("" if p.kind == "published" else f" ({p.kind})")


def show_instance(info: Any = None, quick: bool = True) -> None:
    """The measurement section in one call: a figure of the matmul throughput in MIG instances over the model
    of each instance (the SM share of the dense peak), one row each, with the GPU in the title, then a table
    of the numbers with their provenance and the sources under it (and the copy bandwidth when one was
    measured or recorded). Measures when ``info`` is a CUDA GPU. Chapter: *Multi-Instance GPU*, "On a real
    GPU"."""
    from ..tables import markdown_table
    from .figures import _show_instance_figure

    matmul, copy = instance_points(info, quick=quick)
    shown = [p for p in matmul if p.model and p.real]
    if shown:
        labels = [_instance_label(p) for p in shown]
        _show_instance_figure(shown, labels)
        rows = [{"instance, precision": lab, "model (TFLOP/s)": f"{p.model:.1f}", "real (TFLOP/s)": f"{p.real:.1f}",
                 "real / model": f"{p.real / p.model:.2f}", "provenance": p.kind} for p, lab in zip(shown, labels)]
        sources = ", ".join(dict.fromkeys(p.source.split(",")[0] for p in shown if p.source))
        _show_md(markdown_table(rows) + f"\n\n*Sources: {sources}. Model: the instance's SMs over all SMs "
                 "times the dense tensor peak (`mig.instance_peaks`).*")
    if copy:
        views.show(copy, title="Copy bandwidth in MIG instances: real vs the memory-slice share",
                   model_label="model (slice share)", real_label="real", digits=0)


def show_nvml(info: Any = None, nvml: Any = None) -> None:
    """What the driver says about MIG on this machine, beside the book's table.

    With MIG enabled, the driver's own profile table is compared with the book's, profile by profile.
    Otherwise the table shows the ``nvidia-smi mig -lgip`` and ``-lgipp`` examples NVIDIA's MIG User Guide
    prints for an A100-SXM4-40GB (headed as the guide's output, not as this machine's), the reference a
    reader's own driver can be compared with; the NVML report of the machine that ran the page is in a
    collapsed note. Never raises for the machine's state.
    Chapter: *Multi-Instance GPU*, "On a real GPU".
    """
    import html

    from .. import tables
    from ..tables import markdown_table

    info = _info_or_none("info", info)
    name = getattr(info, "name", None) if getattr(info, "backend", "cpu") == "cuda" else None
    report = nvml_mig_report(nvml=nvml, device_name=name)
    rows = compare_with_driver(report)
    if rows:
        def pl(v: Any) -> str:
            return "" if v is None else " ".join(f"{s}:{z}" for s, z in v)

        text = markdown_table([{"GPU": r.gpu, "ID": r.id, "profile": r.book_name or r.driver_name,
                                "SMs book / driver": f"{r.book_sms} / {r.driver_sms}",
                                "max book / driver": f"{r.book_max} / {r.driver_max}",
                                "driver placements": pl(r.driver_placements), "agree": r.agree} for r in rows])
        _show_md("**The book's profile table against this machine's driver**\n\n" + text)
    else:
        a100 = table("A100-SXM4-40GB")
        text = markdown_table([{"profile ID": p.profile_id, "profile": f"`{p.name}`",
                                "placements (-lgipp)": f"`{_starts_text(p)}`", "SMs (-lgip)": p.sm_count,
                                "GiB (-lgip)": "" if p.lgip_memory_gib is None else f"{p.lgip_memory_gib:.2f}",
                                "instances (-lgip)": p.max_count} for p in a100.profiles])
        _show_md("**NVIDIA's MIG User Guide: its `nvidia-smi mig -lgip` and `-lgipp` examples on an A100-SXM4-40GB"
                 "** (the guide's printed output, not this machine's)\n\n" + text + "\n\n" +
                 _source_line(["nvidiamig"], "Getting Started with MIG, List GPU Instance Profiles, in"))
    tables.show_html('<details class="ampere-device"><summary>What NVML reported on the machine behind this page'
                   f"</summary><pre>{html.escape(report.summary())}</pre></details>")


def _range(lo: float, hi: float, fmt: str = ".2f") -> str:
    return f"{lo:{fmt}}" if lo == hi else f"{lo:{fmt}}–{hi:{fmt}}"


def show_prices(quotes: Sequence[pricing.PriceQuote] | None = None) -> None:
    """The cloud prices the chapter uses, dated and sourced (author-year labels, no keys).

    Chapter: *Multi-Instance GPU*, "What it costs".
    """
    from ..tables import markdown_table

    if quotes is not None:
        from .costs import _quote

        quotes = check.sequence("quotes", quotes, _quote, max_len=1000)
    quotes = list(pricing.quotes() if quotes is None else quotes)
    gpus = {"A100-SXM4-80GB", "A100-SXM4-40GB", "RTX-A6000", "RTX-A2000-12GB"}
    rows = [{"what": q.label, "USD/h": _range(q.low_usd_per_h, q.high_usd_per_h),
             "USD/GPU-h": _range(*q.per_gpu), "as of": q.as_of, "source": views.cite_label(q.source),
             "note": q.note} for q in quotes if q.gpu in gpus]
    _show_md(markdown_table(rows))


def show_serving(options: Sequence[ServingOption]) -> None:
    """The serving options as two Markdown tables narrow enough for the page: what each model gets (SMs,
    bandwidth, service time, capacity, whether it meets the demand), then what it costs (per hour, per
    model-hour, per million requests; the last only where the capacity meets the demand).
    Chapter: *Multi-Instance GPU*, "What it costs"."""
    from ..tables import markdown_table

    def option(name: str, o: Any) -> ServingOption:
        if not isinstance(o, ServingOption):
            raise TypeError(f"{name} must be a ServingOption (from serving_costs), got {o!r:.60} ({type(o).__name__})")
        return o

    options = check.sequence("options", options, option, max_len=1000)
    # short headers (the chapter's text spells them out): each table must fit the page
    gets = [{"option": o.label, "SMs/model": o.per_model_sms, "GB/s/model": o.per_model_hbm_bytes_per_s / 1e9,
             "ms/request": o.service_ms, "req/s/model": o.capacity_per_s, "enough": o.feasible}
            for o in options]
    costs = [{"option": o.label, "USD/h": _range(*o.usd_per_h), "USD/model-h": _range(*o.per_model_usd_per_h),
              "USD/M req": _range(*o.usd_per_million) if o.feasible else "n/a (too slow)"}
             for o in options]
    _show_md(markdown_table(gets, formats={"GB/s/model": ".0f", "ms/request": ".2f", "req/s/model": ".0f"})
             + "\n\n" + markdown_table(costs))
