"""Every figure the book shows that is not derived: recorded results, published measurements, tables.

Chapter: *Architecture of the GA100*, section "Measure, model, record"; *The reference check* shows all
records side by side. The folder ``ampere/data/`` ships inside the wheel and holds three kinds of file:

``ampere/data/*.json`` — **recorded results**, one benchmark run on one device, written by
``python -m ampere bench NAME --out ampere/data/``::

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

``ampere/data/published/<benchmark>.json`` — **published measurements**, one record per published
result::

    {"schema": "ampere-published/1",
     "records": [{"id": "mamf-a100-sxm4-80gb-bf16",       # unique over all files
                  "benchmark": "matmul",                  # what was measured
                  "gpu": "A100-SXM4-80GB",                # a catalogue name of ampere.specs (or a system name)
                  "figures": {"bf16_tflop_per_s": 250.0}, # numbers (or lists), the unit in every name
                  "params": {"m": 1024, ...},             # the configuration measured
                  "setup": {"torch": "2.6"},              # clocks, power limit, software, as stated
                  "source": "bekman2024mle",              # a key of book/references.bib
                  "where": "MAMF table",                  # table, figure, page or file in the source
                  "date": "2024-09",                      # of the source (ISO prefix)
                  "note": ""}]}

``ampere/data/tables/<name>.json`` — **other published constants** a model reads (prices, published
tables a model is validated on)::

    {"schema": "ampere-table/1", "name": "cloud-prices", "description": "...",
     "source": "bib key (or per row)", "rows": [{...}, ...]}

:func:`records` is the one reading API: it returns :class:`Record` dataclasses for both recorded
(``kind="measured"``) and published (``kind="published"``) figures. Files are written atomically
(temporary file in the same folder, fsync, rename): a reader never sees half a file.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import math
import os
import re
import tempfile
from importlib import resources
from pathlib import Path
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Iterable, Mapping

from . import __version__, check

__all__ = ["SCHEMA", "PUBLISHED_SCHEMA", "TABLE_SCHEMA", "UNIT_SUFFIXES", "KINDS", "RECORDED_BENCHMARKS",
           "FigureError", "Record", "make_result",
           "validate", "save", "load", "recorded", "records", "published", "table", "default_filename",
           "provenance", "write_atomic", "data_files"]

SCHEMA = "ampere-result/1"
PUBLISHED_SCHEMA = "ampere-published/1"
TABLE_SCHEMA = "ampere-table/1"
KINDS = ("measured", "published")
#: the benchmarks ``python -m ampere bench NAME`` (and ``report``) record: names ``records(benchmark=...)``
#: accepts before any result of them is recorded (tests/test_results.py keeps it in step with the CLI)
RECORDED_BENCHMARKS = ("matmul", "tf32", "hbm", "kernels", "sparsity", "mig", "collectives", "megatron", "report")


class FigureError(KeyError, ValueError):
    """A record has no figure of that name (a ``KeyError`` for lookups, a ``ValueError`` for callers)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def _path(name: str, value: Any) -> str:
    """A non-empty path (``str`` or ``os.PathLike``) as text."""
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a path (str or os.PathLike), got {value!r} ({type(value).__name__})")
    text = os.fspath(value)
    if not isinstance(text, str):
        raise TypeError(f"{name} must be a text path, got {value!r}")
    if not text:
        raise ValueError(f"{name} is empty; give a file or folder path")
    return text

#: The unit every figure name ends with (CONTRIBUTING.md, "Units and words"). "_pct" is a percentage,
#: "_ratio" a dimensionless ratio, "_count" a count.
UNIT_SUFFIXES = ("_s", "_ms", "_us", "_ns", "_minutes", "_hours", "_days", "_flop_per_s", "_tflop_per_s",
                 "_pflop_per_s", "_gflop_per_s", "_bytes", "_kib", "_mib", "_gib", "_gb", "_bytes_per_s",
                 "_gb_per_s", "_tb_per_s", "_pct", "_ratio", "_count", "_tokens_per_s", "_samples_per_s",
                 "_w", "_kw", "_mw", "_hz", "_mhz", "_gflop_per_w", "_score", "_cycles", "_usd",
                 "_usd_per_hour", "_tflop_per_s_per_gpu")
_REQUIRED = {"schema": str, "benchmark": str, "created_utc": str, "device": dict, "versions": dict,
             "parameters": dict, "records": list, "notes": list}


def _utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def make_result(benchmark: str, device: Any, parameters: dict[str, Any], records: Iterable[dict[str, Any]],
                notes: Iterable[str] = (), created_utc: str | None = None) -> dict[str, Any]:
    """Assemble and validate a result. ``device`` is a DeviceInfo (or its dict)."""
    benchmark = check.string("benchmark", benchmark)
    dev = device.to_dict() if hasattr(device, "to_dict") else check.mapping("device", device)
    parameters = check.mapping("parameters", parameters)
    rows = check.sequence("records", records, check.mapping, min_len=0)
    notes_ = check.sequence("notes", notes, check.string, min_len=0)
    created_utc = check.optional(check.string, "created_utc", created_utc)
    result = {
        "schema": SCHEMA,
        "benchmark": benchmark,
        "created_utc": created_utc or _utc_now(),
        "device": dev,
        "versions": {"ampere": __version__, "torch": dev.get("torch_version"), "cuda": dev.get("cuda_version"),
                     "driver": dev.get("driver_version"), "python": dev.get("python_version")},
        "parameters": parameters,
        "records": rows,
        "notes": notes_,
    }
    validate(result)
    return result


def validate(result: Any) -> dict[str, Any]:
    """Check a result against the schema; raise ``ValueError`` naming the first bad field."""
    if not isinstance(result, dict):
        raise TypeError(f"result must be a JSON object (dict), got {type(result).__name__}")
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
    validate(result)
    dev = result["device"]
    who = dev.get("spec_name") or dev.get("name") or dev.get("backend", "device")
    slug = re.sub(r"[^A-Za-z0-9.]+", "-", str(who)).strip("-").lower()
    day = result["created_utc"][:10].replace("-", "")
    return f"{result['benchmark']}-{slug}-{day}.json"


def save(result: dict[str, Any], path: str | os.PathLike[str]) -> Path:
    """Validate and write ``result`` atomically to ``path`` (a file, or a folder for the default name)."""
    validate(result)
    text = _path("path", path)
    path = Path(path)
    if path.is_dir() or text.endswith(("/", os.sep)):
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
    path = Path(_path("path", path))
    text = check.string("text", text, allow_empty=True)
    if path.is_dir() or not path.name or path.name in (".", ".."):
        raise ValueError(f"path {str(path)!r} is a folder; give a file name")
    if not path.parent.is_dir():
        raise ValueError(f"path {str(path)!r}: its folder {str(path.parent)!r} does not exist")
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
    """Read and validate one result file (a missing file raises ``FileNotFoundError``)."""
    path = _path("path", path)
    with open(path, encoding="utf-8") as fh:
        try:
            data = json.load(fh)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not valid JSON ({exc})") from None
    try:
        return validate(data)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def data_files(sub: str = "") -> list[tuple[str, Any]]:
    """(name, traversable) of the ``.json`` files in ``ampere/data/<sub>`` (empty when the folder is absent)."""
    sub = check.string("sub", sub, allow_empty=True)
    if any(part in ("..", ".") for part in sub.split("/")):
        raise ValueError(f"sub={sub!r} must be a folder inside ampere/data (no '.' or '..')")
    folder = resources.files("ampere").joinpath("data")
    for part in filter(None, sub.split("/")):
        folder = folder.joinpath(part)
    if not folder.is_dir():
        return []
    return sorted(((e.name, e) for e in folder.iterdir() if e.name.endswith(".json") and e.is_file()),
                  key=lambda t: t[0])


def _read_json(entry: Any, where: str) -> Any:
    with resources.as_file(entry) as p, open(p, encoding="utf-8") as fh:
        try:
            return json.load(fh)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}: not valid JSON ({exc})") from None


def recorded(benchmark: str | None = None, gpu: str | None = None) -> list[dict[str, Any]]:
    """Recorded results bundled with the package (``ampere/data/*.json``, whole files), optionally filtered.

    ``gpu`` matches the catalogue spec name (e.g. "H200-SXM-141GB") or, for GPUs outside the catalogue,
    the device name (any case). Sorted by benchmark, device and date. :func:`records` gives the same data as
    typed :class:`Record` rows, beside the published ones. Unknown names raise ``ValueError`` listing the known.
    """
    every = _recorded_files()
    benchmark = check.optional(check.one_of, "benchmark", benchmark, _benchmarks(every))
    gpu = check.optional(check.one_of, "gpu", gpu, _gpu_names(every), ignore_case=True)
    out = []
    for res in every:
        if benchmark is not None and res["benchmark"] != benchmark:
            continue
        names = {str(res["device"].get(k, "")).casefold() for k in ("spec_name", "name")}
        if gpu is not None and gpu.casefold() not in names:
            continue
        out.append(res)
    return sorted(out, key=lambda r: (r["benchmark"], r["device"].get("name", ""), r["created_utc"]))


def _recorded_files() -> list[dict[str, Any]]:
    out = []
    for name, entry in data_files():
        with resources.as_file(entry) as p:
            res = load(p)
        res["_file"] = name
        out.append(res)
    return out


def _benchmarks(recorded_: list[dict[str, Any]]) -> list[str]:
    """Every benchmark name the package knows: recorded, published, or one ``bench`` can record."""
    return sorted({*RECORDED_BENCHMARKS, *(r["benchmark"] for r in recorded_), *(r.benchmark for r in published())})


def _gpu_names(recorded_: list[dict[str, Any]]) -> list[str]:
    """Every GPU name a filter may use: the catalogue's, and those of recorded and published records."""
    from . import specs

    names = dict.fromkeys(specs.names())
    for res in recorded_:
        for key in ("spec_name", "name"):
            if res["device"].get(key):
                names.setdefault(str(res["device"][key]))
    for rec in published():
        names.setdefault(rec.gpu)
    return list(names)


def _frozen(d: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(d or {}))


@dataclass(frozen=True)
class Record:
    """One figure set the book can show beside a model: published by a source, or measured by the package.

    ``figures`` maps names that end with their unit (:data:`UNIT_SUFFIXES`) to numbers or lists of
    numbers; ``params`` says which configuration was measured; ``setup`` how (clocks, software).
    """

    kind: str                          # "measured" | "published"
    benchmark: str                     # "matmul", "stream", "l2-sweep", "all-reduce", ...
    gpu: str                           # catalogue name (ampere.specs) where known, else the device or system name
    figures: Mapping[str, Any]         # {"bf16_tflop_per_s": 250.0, ...}
    source: str                        # bib key (published) or result file name (measured)
    where: str = ""                    # table/figure/page/file in the source; for measured, the provenance
    params: Mapping[str, Any] = field(default_factory=dict)
    setup: Mapping[str, Any] = field(default_factory=dict)
    date: str = ""                     # ISO date (prefix) of the source or of the measurement
    note: str = ""
    id: str = ""

    def __post_init__(self) -> None:
        check.one_of("Record.kind", self.kind, KINDS)
        for name in ("benchmark", "gpu", "source"):
            check.string(f"Record.{name}", getattr(self, name))
        if not re.fullmatch(r"[a-z0-9][a-z0-9_.-]*", self.benchmark):
            raise ValueError(f"Record.benchmark={self.benchmark!r} must be lower-case letters, digits, '-', '_' "
                             "and '.' (e.g. 'matmul', 'all-reduce')")
        for name in ("where", "date", "note", "id"):
            check.string(f"Record.{name}", getattr(self, name), allow_empty=True)
        for name in ("params", "setup"):
            check.mapping(f"Record.{name}", getattr(self, name))
        if not isinstance(self.figures, Mapping) or not self.figures:
            raise ValueError(f"Record {self.id or self.benchmark!r}: figures must be a non-empty mapping of "
                             f"names to numbers, got {self.figures!r:.60}")
        for key, value in self.figures.items():
            if self.kind == "published" and not key.endswith(UNIT_SUFFIXES):
                raise ValueError(f"Record {self.id!r}: figures name {key!r} does not end with a unit; "
                                 f"allowed endings: {', '.join(UNIT_SUFFIXES)}")
            values = value if isinstance(value, (list, tuple)) else [value]
            if not values or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                                     for v in values):
                raise ValueError(f"Record {self.id!r}: figures[{key!r}] must be a finite number or a list of them")
        object.__setattr__(self, "figures", _frozen(self.figures))
        object.__setattr__(self, "params", _frozen(self.params))
        object.__setattr__(self, "setup", _frozen(self.setup))

    def label(self) -> str:
        """Where the numbers come from, for a table column or a legend: "published: bekman2024mle, MAMF
        table" or "recorded on NVIDIA H200 (sm90), 2026-12-02, torch 2.13.0"."""
        if self.kind == "measured":
            return self.where or f"recorded on {self.gpu}"
        return f"published: {self.source}" + (f", {self.where}" if self.where else "")

    def figure(self, name: str) -> Any:
        """One figure, with a clear error naming the ones this record has (:class:`FigureError`, both a
        ``KeyError`` and a ``ValueError``)."""
        name = check.string("name", name, allow_empty=True)
        if name not in self.figures:
            raise FigureError(f"name={name!r} is not a figure of record {self.id or self.benchmark!r}; it has "
                              f"{', '.join(self.figures)}")
        return self.figures[name]

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (the published-record schema above)."""
        def plain(v: Any) -> Any:
            return list(v) if isinstance(v, tuple) else v
        out = {"id": self.id, "benchmark": self.benchmark, "gpu": self.gpu,
               "figures": {k: plain(v) for k, v in self.figures.items()},
               "params": {k: plain(v) for k, v in self.params.items()}, "setup": dict(self.setup),
               "source": self.source, "where": self.where, "date": self.date, "note": self.note}
        if self.kind != "published":
            out["kind"] = self.kind
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], kind: str = "published") -> "Record":
        """Read one record of a published file (unknown fields are refused: they are typos)."""
        kind = check.one_of("kind", kind, KINDS)
        if not isinstance(d, Mapping):
            raise TypeError(f"d (a record) must be a JSON object, got {type(d).__name__}")
        known = {"id", "benchmark", "gpu", "figures", "params", "setup", "source", "where", "date", "note",
                 "kind"}
        extra = set(d) - known
        if extra:
            raise ValueError(f"record {d.get('id')!r} has unknown field(s) {sorted(extra)}; known: {sorted(known)}")
        missing = {"id", "benchmark", "gpu", "figures", "source"} - set(d)
        if missing:
            raise ValueError(f"record {d.get('id')!r} lacks field(s) {sorted(missing)}")
        def tup(v: Any) -> Any:
            return tuple(v) if isinstance(v, list) else v
        return cls(kind=d.get("kind", kind), benchmark=d["benchmark"], gpu=d["gpu"],
                   figures={k: tup(v) for k, v in d["figures"].items()},
                   params={k: tup(v) for k, v in (d.get("params") or {}).items()}, setup=d.get("setup") or {},
                   source=d["source"], where=d.get("where", ""), date=str(d.get("date", "")),
                   note=d.get("note", ""), id=d["id"])


def _published_records() -> list[Record]:
    out: list[Record] = []
    seen: dict[str, str] = {}
    for name, entry in data_files("published"):
        where = f"ampere/data/published/{name}"
        data = _read_json(entry, where)
        if not isinstance(data, dict) or data.get("schema") != PUBLISHED_SCHEMA:
            raise ValueError(f"{where}: field 'schema' must be {PUBLISHED_SCHEMA!r}")
        if not isinstance(data.get("records"), list):
            raise ValueError(f"{where}: field 'records' must be a list")
        for d in data["records"]:
            try:
                rec = Record.from_dict(d)
            except ValueError as exc:
                raise ValueError(f"{where}: {exc}") from None
            if rec.id in seen:
                raise ValueError(f"{where}: record id {rec.id!r} also in {seen[rec.id]}")
            seen[rec.id] = name
            out.append(rec)
    return out


_PUBLISHED_CACHE: list[Record] | None = None


def published() -> list[Record]:
    """Every published record of ``ampere/data/published/`` (read once per process; records are frozen)."""
    global _PUBLISHED_CACHE
    if _PUBLISHED_CACHE is None:
        _PUBLISHED_CACHE = _published_records()
    return list(_PUBLISHED_CACHE)


def _scalar(v: Any) -> bool:
    return isinstance(v, (str, int, float, bool)) or v is None


def measured_records(result: dict[str, Any]) -> list[Record]:
    """A recorded result as :class:`Record` rows, one per configuration.

    ``params`` holds the configuration's text, integer and boolean fields (and its ``params`` object);
    ``figures`` its float fields, its ``derived`` numbers and the median time of its measurement
    (``median_s``). Chapter modules that know their benchmark read the raw result for more.
    """
    validate(result)
    dev = result["device"]
    gpu = dev.get("spec_name") or dev.get("name") or dev.get("backend", "?")
    if dev.get("mig_instance"):
        gpu = f"{gpu} MIG {dev['mig_instance']}"
    label = provenance(result)
    out = []
    for i, rec in enumerate(result["records"]):
        params: dict[str, Any] = dict(rec.get("params") or {}) if isinstance(rec.get("params"), dict) else {}
        figures: dict[str, Any] = {}
        for key, value in rec.items():
            if key in ("params", "measurement", "derived"):
                continue
            if isinstance(value, float) and not isinstance(value, bool):
                figures[key] = value
            elif _scalar(value):
                params[key] = value
        derived = rec.get("derived")
        if isinstance(derived, dict):
            figures.update({k: v for k, v in derived.items() if isinstance(v, (int, float)) and not isinstance(v, bool)})
        meas = rec.get("measurement")
        if isinstance(meas, dict) and meas.get("samples_s"):
            samples = sorted(meas["samples_s"])
            figures["median_s"] = float(samples[len(samples) // 2] if len(samples) % 2 else
                                        (samples[len(samples) // 2 - 1] + samples[len(samples) // 2]) / 2)
        if not figures:
            continue
        out.append(Record(kind="measured", benchmark=result["benchmark"], gpu=str(gpu), figures=figures,
                          source=str(result.get("_file") or default_filename(result)), where=label,
                          params={k: v for k, v in params.items() if _scalar(v) or isinstance(v, (list, tuple))},
                          setup={k: v for k, v in result["versions"].items() if v is not None},
                          date=result["created_utc"][:10], id=f"{result.get('_file', result['benchmark'])}#{i}"))
    return out


def records(benchmark: str | None = None, gpu: str | None = None, kind: str | None = None) -> list[Record]:
    """Every figure set the package ships, as typed :class:`Record` rows: the one reading API.

    ``benchmark`` filters on the benchmark name, ``gpu`` on the catalogue name (or the device or system
    name), ``kind`` on ``"measured"`` (recorded by the package on a real GPU) or ``"published"``.
    Measured rows come first (the reader's own kind of evidence), then published ones, each sorted by
    benchmark, GPU and date. Results recorded on a CPU are never returned as measurements of a GPU.
    GPU names match in any case, like :func:`ampere.specs.get`; an unknown benchmark or GPU name raises
    ``ValueError`` listing the known ones (a misspelt filter is not an empty answer).
    """
    kind = check.optional(check.one_of, "kind", kind, KINDS)
    every = recorded()
    benchmark = check.optional(check.one_of, "benchmark", benchmark, _benchmarks(every))
    gpu = check.optional(check.one_of, "gpu", gpu, _gpu_names(every), ignore_case=True)
    out: list[Record] = []
    if kind in (None, "measured"):
        rows = [r for res in every if res["device"].get("backend") == "cuda"
                and (benchmark is None or res["benchmark"] == benchmark) for r in measured_records(res)]
        out += sorted(rows, key=lambda r: (r.benchmark, r.gpu, r.date))
    if kind in (None, "published"):
        rows = [r for r in published() if benchmark is None or r.benchmark == benchmark]
        out += sorted(rows, key=lambda r: (r.benchmark, r.gpu, r.date, r.id))
    if gpu is not None:
        key = gpu.casefold()
        out = [r for r in out if r.gpu.casefold() == key or r.gpu.casefold().startswith(key + " mig")]
    return out


_TABLE_CACHE: dict[str, dict[str, Any]] = {}


def table(name: str) -> dict[str, Any]:
    """A published table of ``ampere/data/tables/<name>.json``: ``{"name", "description", "source", "rows"}``.

    The module that reads it turns the rows into its own dataclasses (dicts stop at this boundary).
    """
    if not isinstance(name, str) or name not in _TABLE_CACHE:
        files = dict(data_files("tables"))
        name = check.one_of("name", name, [n[:-5] for n in files])
        where = f"ampere/data/tables/{name}.json"
        data = _read_json(files[f"{name}.json"], where)
        if not isinstance(data, dict) or data.get("schema") != TABLE_SCHEMA:
            raise ValueError(f"{where}: field 'schema' must be {TABLE_SCHEMA!r}")
        if data.get("name") != name or not isinstance(data.get("rows"), list):
            raise ValueError(f"{where}: needs 'name' = {name!r} and a list 'rows'")
        _TABLE_CACHE[name] = data
    data = _TABLE_CACHE[name]
    return {"name": data["name"], "description": data.get("description", ""), "source": data.get("source", ""),
            "rows": [dict(r) for r in data["rows"]]}


def provenance(result: dict[str, Any]) -> str:
    """"recorded on NVIDIA H200 (sm90), 2026-12-02, torch 2.13.0" for figure and table captions."""
    validate(result)
    dev = result["device"]
    cc = dev.get("compute_capability")
    who = dev.get("name", "?") + (f" (sm{cc[0]}{cc[1]})" if cc else "")
    return f"recorded on {who}, {result['created_utc'][:10]}, torch {result['versions'].get('torch')}"
