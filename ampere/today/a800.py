"""The A800, the export variant: an A100 with NVLink cut to the press-reported rate
(``ampere/data/tables/today-a800.json``), and the gradient all-reduce its slower NVLink lengthens.

Chapter: *The A100 today* (book/a100-today.ipynb), "The A800". Pure Python: no torch, no matplotlib.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from .. import check, results, specs
from .network import MAX_CARDS, _network


def _a800_row() -> Mapping[str, Any]:
    rows = [r for r in results.table("today-a800")["rows"] if r["field"] == "nvlink_bytes_per_s"]
    if len(rows) != 1:
        raise ValueError("ampere/data/tables/today-a800.json needs exactly one nvlink_bytes_per_s row")
    return rows[0]


def a800_spec(base: str = "A100-SXM4-80GB") -> specs.GPUSpec:
    """The A800 as the A100 ``base`` with NVLink cut to the press-reported rate; everything else equal.

    The rate and its source are data (``ampere/data/tables/today-a800.json``: heise2022a800, distributor
    listings reported by the press). Not in the catalogue (no NVIDIA datasheet in the book's sources): a
    derived spec for the chapter. Chapter: *The A100 today*, "The A800".
    """
    spec = specs.get(check.gpu("base", base))
    if spec.chip != "GA100":
        raise ValueError(f"base={base!r} is not an A100 (GA100) product")
    row = _a800_row()
    return dataclasses.replace(
        spec, name=spec.name.replace("A100", "A800"), marketing_name=spec.marketing_name.replace("A100", "A800"),
        launch_year=int(row["launch_year"]), nvlink_bytes_per_s=float(row["value"]),
        sources={**spec.sources, "nvlink_bytes_per_s": row["source"]},
        notes=(f"Export variant for China ({row['launch_year']}): NVLink {row['value'] / 1e9:.0f} GB/s instead of "
               f"{spec.nvlink_bytes_per_s / 1e9:.0f} GB/s; compute and memory unchanged.",))


def gradient_allreduce_time(params: float, gpu: str | specs.GPUSpec, gpus: int = 8, bytes_per_grad: float = 2.0
                            ) -> float:
    """All-reduce time (s) of ``params`` gradients over ``gpus`` NVLink-connected cards of ``gpu``.

    The data-parallel cost the A800's slower NVLink raises: the node network of ``ampere.fabrics`` with
    the GPU's NVLink rate, timed by ``ampere.collectives``. Chapter: *The A100 today*, "The A800".
    """
    n_params = check.positive("params", params, maximum=1e15)
    n = check.positive_int("gpus", gpus, maximum=MAX_CARDS)
    b = check.positive("bytes_per_grad", bytes_per_grad, maximum=16)
    spec = specs.get(gpu)
    if not spec.nvlink_bytes_per_s:
        raise ValueError(f"gpu={spec.name!r} has no NVLink")
    net = _network(spec, n)
    if net.reason:
        raise ValueError(f"gpus={n} of {spec.name}: {net.reason}")
    return net.all_reduce_time(n_params * b)
