"""Recorded results: the JSON every measurement writes, and the records the book ships in ampere/data/.

Chapter: *Architecture of the GA100*, section "Measure, model, record"; *The reference check* shows all
records side by side.

A result file holds one benchmark run on one device::

    {
      "schema": "ampere-result/1",
      "benchmark": "matmul",                   # which measurement (see ``python -m ampere bench --list``)
      "created_utc": "2026-12-02T17:00:00Z",
      "device": {...},                         # ampere.device.DeviceInfo.to_dict()
      "versions": {"ampere": ..., "torch": ..., "cuda": ..., "driver": ..., "python": ...},
      "parameters": {...},                     # how the benchmark was run (sizes, dtypes, flags)
      "records": [                             # one per configuration measured
        {"params": {...}, "measurement": {...},  # ampere.timing.Measurement.to_dict() (raw samples kept)
         "derived": {"flops_per_s": ..., "pct_of_peak": ...}}
      ],
      "notes": ["..."]
    }

Files are written atomically (temporary file in the same folder, fsync, rename): a reader never sees
half a file, even if the writer is killed.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import re
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any, Iterable

from . import __version__

__all__ = ["SCHEMA", "make_result", "validate", "save", "load", "recorded", "default_filename", "provenance",
           "write_atomic"]

SCHEMA = "ampere-result/1"
_REQUIRED = {"schema": str, "benchmark": str, "created_utc": str, "device": dict, "versions": dict,
             "parameters": dict, "records": list, "notes": list}


def _utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def make_result(benchmark: str, device: Any, parameters: dict[str, Any], records: Iterable[dict[str, Any]],
                notes: Iterable[str] = (), created_utc: str | None = None) -> dict[str, Any]:
    """Assemble and validate a result. ``device`` is a DeviceInfo (or its dict)."""
    dev = device.to_dict() if hasattr(device, "to_dict") else dict(device)
    result = {
        "schema": SCHEMA,
        "benchmark": benchmark,
        "created_utc": created_utc or _utc_now(),
        "device": dev,
        "versions": {"ampere": __version__, "torch": dev.get("torch_version"), "cuda": dev.get("cuda_version"),
                     "driver": dev.get("driver_version"), "python": dev.get("python_version")},
        "parameters": dict(parameters),
        "records": [dict(r) for r in records],
        "notes": [str(n) for n in notes],
    }
    validate(result)
    return result


def validate(result: Any) -> dict[str, Any]:
    """Check a result against the schema; raise ``ValueError`` naming the first bad field."""
    if not isinstance(result, dict):
        raise ValueError(f"result must be a JSON object, got {type(result).__name__}")
    for key, typ in _REQUIRED.items():
        if key not in result:
            raise ValueError(f"result is missing field {key!r}; required: {', '.join(_REQUIRED)}")
        if not isinstance(result[key], typ):
            raise ValueError(f"result field {key!r} must be {typ.__name__}, got {type(result[key]).__name__}")
    if result["schema"] != SCHEMA:
        raise ValueError(f"result field 'schema' is {result['schema']!r}; this package reads {SCHEMA!r}")
    if not re.fullmatch(r"[a-z0-9][a-z0-9_-]*", result["benchmark"]):
        raise ValueError(f"result field 'benchmark' is {result['benchmark']!r}; use lower-case letters, "
                         "digits, '-' and '_'")
    try:
        _dt.datetime.fromisoformat(result["created_utc"].replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"result field 'created_utc' is {result['created_utc']!r}; expected ISO 8601") from None
    for key in ("backend", "name"):
        if key not in result["device"]:
            raise ValueError(f"result field 'device' lacks {key!r}")
    for i, rec in enumerate(result["records"]):
        if not isinstance(rec, dict):
            raise ValueError(f"result field 'records[{i}]' must be an object")
        meas = rec.get("measurement")
        if meas is not None:
            samples = meas.get("samples_s") if isinstance(meas, dict) else None
            if not isinstance(samples, list) or not samples:
                raise ValueError(f"result field 'records[{i}].measurement.samples_s' must be a non-empty list")
    json.dumps(result, allow_nan=False)  # raises ValueError for NaN/inf, TypeError for objects
    return result


def default_filename(result: dict[str, Any]) -> str:
    """``<benchmark>-<spec or device>-<YYYYMMDD>.json``, safe for any file system."""
    dev = result["device"]
    who = dev.get("spec_name") or dev.get("name") or dev.get("backend", "device")
    slug = re.sub(r"[^A-Za-z0-9.]+", "-", str(who)).strip("-").lower()
    day = result["created_utc"][:10].replace("-", "")
    return f"{result['benchmark']}-{slug}-{day}.json"


def save(result: dict[str, Any], path: str | os.PathLike[str]) -> Path:
    """Validate and write ``result`` atomically to ``path`` (a file, or a folder for the default name)."""
    validate(result)
    path = Path(path)
    if path.is_dir() or str(path).endswith(os.sep):
        path = path / default_filename(result)
    folder = path.parent if str(path.parent) else Path(".")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"output folder {str(folder)!r} cannot be created: {exc.strerror or exc}") from None
    if not os.access(folder, os.W_OK):
        raise ValueError(f"output folder {str(folder)!r} is not writable")
    return write_atomic(path, json.dumps(result, indent=1, sort_keys=False, allow_nan=False) + "\n")


def write_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file in the same folder, fsync, then rename.

    A reader sees the old file or the new one, never half of one, even if the writer is killed.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; a result is an ordinary file
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def load(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate one result file."""
    with open(path, encoding="utf-8") as fh:
        try:
            data = json.load(fh)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not valid JSON ({exc})") from None
    try:
        return validate(data)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def recorded(benchmark: str | None = None, gpu: str | None = None) -> list[dict[str, Any]]:
    """Results bundled with the package (ampere/data/*.json), optionally filtered.

    ``gpu`` matches the catalogue spec name (e.g. "H200-SXM-141GB") or, for GPUs outside the catalogue,
    the device name. Sorted by benchmark, device and date.
    """
    out = []
    for entry in resources.files("ampere").joinpath("data").iterdir():
        if not entry.name.endswith(".json"):
            continue
        with resources.as_file(entry) as p:
            res = load(p)
        res["_file"] = entry.name
        if benchmark is not None and res["benchmark"] != benchmark:
            continue
        if gpu is not None and gpu not in (res["device"].get("spec_name"), res["device"].get("name")):
            continue
        out.append(res)
    return sorted(out, key=lambda r: (r["benchmark"], r["device"].get("name", ""), r["created_utc"]))


def provenance(result: dict[str, Any]) -> str:
    """"recorded on NVIDIA H200 (sm90), 2026-12-02, torch 2.13.0" for figure and table captions."""
    dev = result["device"]
    cc = dev.get("compute_capability")
    who = dev.get("name", "?") + (f" (sm{cc[0]}{cc[1]})" if cc else "")
    return f"recorded on {who}, {result['created_utc'][:10]}, torch {result['versions'].get('torch')}"
