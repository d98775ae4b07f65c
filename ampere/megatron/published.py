"""The paper's published tables, read from ``ampere/data/tables``: :data:`TABLE1`, :data:`TABLE2`
and the two training-time estimates of section 5.1 (:data:`TRAINING_ESTIMATES`), plus
:func:`table1_config`, the model of a row.

Chapter: *Megatron-LM: 3D parallelism predicted, validated, and run* (book/megatron.ipynb),
sections "Sizing a GPT" and "Validation". Pure: the rows are data; the checks against them are in
``validation.py``.
"""

from __future__ import annotations

from typing import Any, Mapping

from .. import results
from ..transformer import TransformerShape
from .sizing import GPTConfig

def _rows(name: str) -> tuple[dict[str, Any], ...]:
    table = results.table(name)
    return tuple({**row, "source": row.get("source", table["source"])} for row in table["rows"])


#: The two training-time estimates of section 5.1 (published values; the check is in the chapter), read
#: from ``ampere/data/tables/megatron-training-estimates.json``.
TRAINING_ESTIMATES: tuple[dict[str, Any], ...] = _rows("megatron-training-estimates")


# ===========================================================================================================
# Published runs
# ===========================================================================================================

#: Table 1 of the paper [narayanan2021megatron]: weak scaling from 1.7B to 1T parameters on 80 GB A100s,
#: read from ``ampere/data/tables/megatron-table1.json``. ``microbatch``, ``interleave`` (model chunks per
#: GPU) and ``ddp`` come from the paper's released run script ``examples/sc21/run_table_1.sh``
#: [megatronsc21scripts]: interleave = layers per pipeline stage / ``--num-layers-per-virtual-pipeline-stage``
#: (1 where the script sets none); ``ddp`` is torch's DistributedDataParallel (gradient all-reduce
#: overlapped with the backward pass) or Megatron's "local" one (all-reduce after the backward pass).
TABLE1: tuple[dict[str, Any], ...] = _rows("megatron-table1")

#: Table 2 of the paper, PTD-P rows: the same model and global batch on 2x and 4x more GPUs (tensor 8,
#: microbatch 1), from ``ampere/data/tables/megatron-table2.json``. The table does not state the
#: schedule: ``interleave`` is the rule of this module (see :func:`table2_rows`).
TABLE2: tuple[dict[str, Any], ...] = tuple({**r, "name": f"{r['model']} on {r['gpus']}"}
                                           for r in _rows("megatron-table2"))


def table1_config(row: Mapping[str, Any] | str) -> TransformerShape:
    """The :func:`GPTConfig` of a Table 1 (or Table 2) row, or of a Table 1 row given by name ("1T")."""
    if isinstance(row, str):
        matches = [r for r in TABLE1 if r["name"] == row]
        if not matches:
            raise ValueError(f"row={row!r} is not a Table 1 row; known: {', '.join(r['name'] for r in TABLE1)}")
        row = matches[0]
    if not isinstance(row, Mapping):
        raise TypeError(f"row must be a Table 1 row name ({', '.join(r['name'] for r in TABLE1)}) or a row of TABLE1 "
                        f"or TABLE2, got {row!r:.60} ({type(row).__name__})")
    missing = [k for k in ("layers", "hidden", "heads") if k not in row]
    if missing:
        raise ValueError(f"row lacks {', '.join(missing)}; allowed: a row of TABLE1 or TABLE2")
    return GPTConfig(layers=row["layers"], hidden=row["hidden"], heads=row["heads"])
