"""What every benchmark shares: its options, the output path (checked before anything is measured) and
the writing of its result.

Chapter: *Architecture of the GA100*, "Measure, model, record"; CONTRIBUTING.md, "Benchmarks and
recorded results". A benchmark is ``main(argv) -> int`` in its chapter module::

    p = benchcli.bench_parser("matmul", "Square matmul sweep ...")
    p.add_argument(...)                 # its own options
    args = p.parse_args(argv)           # exits 2 with a message on a bad --out, before measuring
    info = benchcli.probe(args)         # the device, honouring --device
    ...
    return benchcli.finish_bench(result, args, summary)

``--out`` is a folder when it exists or ends with ``/`` (the file is then named by
:func:`ampere.results.default_filename`), else a ``.json`` file. An existing file that is not a result of
the same benchmark is never overwritten. The check writes (and removes) a small file where the result will
go, creating the folder if needed, so ``--out /proc/x/`` fails before anything is measured, even as root.
A long step shows a :class:`Progress` line on stderr. ``--device cpu`` runs the whole code path on the CPU with tiny
sizes; such a result says ``backend: cpu`` and is refused by the package's own data folder.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Sequence

from . import check

__all__ = ["BenchParser", "bench_parser", "check_out", "finish_bench", "probe", "DEVICES", "Progress", "fail"]

DEVICES = ("auto", "cpu", "cuda")
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")


def _benchmark_name(name: str, value: Any) -> str:
    value = check.string(name, value)
    if not _NAME.fullmatch(value):
        raise ValueError(f"{name}={value!r} must be lower-case letters, digits, '-' and '_' (e.g. 'matmul')")
    return value


def _namespace(name: str, value: Any, *fields: str) -> argparse.Namespace:
    if not isinstance(value, argparse.Namespace) or any(not hasattr(value, f) for f in fields):
        raise TypeError(f"{name} must be the argparse.Namespace of bench_parser(...).parse_args(), "
                        f"got {value!r} ({type(value).__name__})")
    return value


def fail(message: str) -> int:
    """Print ``error: message`` on stderr (one line) and return 2, the exit code of a user error."""
    print(f"error: {check.string('message', message)}", file=sys.stderr, flush=True)
    return 2


class Progress:
    """``with Progress("bench collectives"):`` shows, on stderr, that a step longer than ``after_s`` is
    still running: one line after ``after_s`` seconds, then one every ``every_s`` seconds, and the time it
    took at the end. A step shorter than ``after_s`` prints nothing."""

    def __init__(self, label: str, *, after_s: float = 2.0, every_s: float = 10.0, stream: Any = None) -> None:
        self.label = check.string("label", label)
        self.after_s = check.real("after_s", after_s, minimum=0.0, maximum=3600.0)
        self.every_s = check.real("every_s", every_s, minimum=0.1, maximum=3600.0)
        self.stream = stream
        self._done = threading.Event()
        self._shown = False
        self._t0 = 0.0
        self._thread: threading.Thread | None = None

    def _say(self, text: str) -> None:
        stream = self.stream or sys.stderr
        try:
            print(text, file=stream, flush=True)
        except (OSError, ValueError):
            pass

    def _run(self) -> None:
        wait = self.after_s
        while not self._done.wait(wait):
            self._shown = True
            self._say(f"{self.label}: still running ({time.monotonic() - self._t0:.0f} s; Ctrl-C stops it)")
            wait = self.every_s

    def __enter__(self) -> "Progress":
        self._t0 = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="ampere-progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
        if self._shown and exc[0] is None:
            self._say(f"{self.label}: done in {time.monotonic() - self._t0:.0f} s")


def _package_data_folder() -> Path:
    return (Path(__file__).resolve().parent / "data").resolve()


def check_out(out: str | os.PathLike[str], benchmark: str) -> str:
    """The path a result of ``benchmark`` will be written to, or ``ValueError`` saying why it cannot be.

    A folder (existing, or a path ending with ``/``) is returned ending with the separator; the file name
    is chosen when the result exists. A file path must end with ``.json``; if it exists it must be a result of the same
    benchmark (a newer run replaces an older one, nothing else is ever overwritten).
    """
    if not isinstance(out, (str, os.PathLike)):
        raise TypeError(f"--out (out) must be a path, got {out!r} ({type(out).__name__})")
    benchmark = _benchmark_name("benchmark", benchmark)
    text = os.fspath(out)
    if not isinstance(text, str) or not text:
        raise ValueError("--out (out) is empty; give a folder (e.g. ampere/data/) or a .json file")
    path = Path(text)
    if path.is_dir() or text.endswith(("/", os.sep)):
        if path.exists() and not path.is_dir():
            raise ValueError(f"--out {text!r} ends with '/' but is a file")
        _try_writing(path, text)
        return text if text.endswith(("/", os.sep)) else text + os.sep
    if path.suffix != ".json":
        raise ValueError(f"--out {text!r} is neither an existing folder, a path ending with '/', nor a .json file")
    if path.exists():
        try:
            existing = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise ValueError(f"--out {text!r} exists and is not a result file: refusing to overwrite it") from None
        if not isinstance(existing, dict) or existing.get("benchmark") != benchmark:
            what = existing.get("benchmark") if isinstance(existing, dict) else None
            raise ValueError(f"--out {text!r} exists and holds {'a ' + repr(what) + ' result' if what else 'something else'}"
                             f", not a {benchmark!r} result: refusing to overwrite it")
    _try_writing(path.parent if str(path.parent) else Path("."), text)
    return text


def _try_writing(folder: Path, text: str) -> None:
    """Create ``folder`` if needed and write and remove a small file there: the only test that holds for
    every file system and user (root passes ``os.access`` on /proc, and /proc refuses the file)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe_file = tempfile.mkstemp(prefix=".ampere-out-check-", dir=folder)
        os.close(fd)
        os.unlink(probe_file)
    except OSError as exc:
        raise ValueError(f"--out {text!r} cannot be written: {exc.strerror or exc} "
                         f"({str(folder)!r}); choose another folder") from None


class BenchParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` that checks ``--out`` as soon as the options are parsed (before measuring)."""

    benchmark: str = ""

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]
        ns = super().parse_args(None if args is None else list(args), namespace)
        if not ns.no_save:
            try:
                ns.out = check_out(ns.out, self.benchmark)
            except ValueError as exc:
                self.error(str(exc))
        return ns


def bench_parser(name: str, description: str) -> BenchParser:
    """Argument parser with the options every benchmark shares: ``--out``, ``--quick``, ``--no-save``,
    ``--device``."""
    name = _benchmark_name("name", name)
    description = check.string("description", description, allow_empty=True)
    p = BenchParser(prog=f"python -m ampere bench {name}", description=description)
    p.benchmark = name
    p.add_argument("--out", default="./",
                   help="folder (existing, or ending with '/') or .json file for the result (default: ./)")
    p.add_argument("--quick", action="store_true", help="short mode: fewer sizes and samples")
    p.add_argument("--no-save", action="store_true", help="print the result, do not write a file")
    p.add_argument("--device", choices=DEVICES, default="auto",
                   help="auto: the GPU if there is one; cpu: run the whole code path on the CPU with tiny "
                        "sizes (a test of the code, not a measurement of a GPU)")
    return p


def probe(args: argparse.Namespace) -> Any:
    """``ampere.device.probe()`` for the device ``--device`` asks for (``cpu`` forces the CPU)."""
    from . import device

    _namespace("args", args)
    choice = check.one_of("--device (args.device)", getattr(args, "device", "auto"), DEVICES)
    if choice == "cpu":
        return device.probe(force="cpu")
    info = device.probe()
    if choice == "cuda" and info.backend != "cuda":
        print("error: --device cuda but no CUDA GPU is usable here "
              f"({info.label()}); use --device cpu to run the code path on the CPU", file=sys.stderr)
        raise SystemExit(2)
    return info


def finish_bench(result: dict[str, Any], args: argparse.Namespace, summary: str) -> int:
    """Print ``summary`` and save ``result`` unless ``--no-save``; return the exit code.

    A result measured on the CPU is never written into the package's own ``ampere/data`` (it would read as
    a GPU record there).
    """
    from . import results

    results.validate(result)
    _namespace("args", args, "no_save", "out")
    summary = check.string("summary", summary, allow_empty=True)
    print(summary)
    if args.no_save:
        return 0
    out = str(args.out)
    folder = Path(out) if (Path(out).is_dir() or out.endswith(("/", os.sep))) else Path(out).parent
    if result.get("device", {}).get("backend") != "cuda":
        try:
            inside = folder.resolve() == _package_data_folder()
        except OSError:
            inside = False
        if inside:
            print("error: a result measured without a GPU is not recorded in ampere/data (use --no-save or "
                  "another --out)", file=sys.stderr)
            return 2
    try:
        path = results.save(result, out)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"result written to {path}")
    return 0
