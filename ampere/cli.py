"""Command line: ``python -m ampere info | bench | report | validate``.

Chapter: *Architecture of the GA100* introduces ``info`` and ``bench matmul``; each measuring chapter
adds its benchmark to ``BENCHES``; *The reference check* documents ``report``.

This module only dispatches. A benchmark entry point is a function ``main(argv: list[str]) -> int`` in
its chapter's module; it parses its own options, starting from :func:`ampere.benchcli.bench_parser` so
that every benchmark shares ``--out``, ``--quick``, ``--no-save`` and ``--device``.

What every command does the same way (CONTRIBUTING.md, "Errors"):

* a user error (a bad option, a ``ValueError``/``TypeError`` from the code it runs) is one line
  ``error: ...`` on stderr and exit code 2, never a traceback (``AMPERE_DEBUG=1`` shows it);
* Ctrl-C prints ``interrupted`` on stderr and exits with 130; spawned ranks ignore the terminal's SIGINT
  and are stopped by their parent;
* a line a benchmark prints that starts with ``error:`` goes to stderr, wherever it was printed;
* a command still running after two seconds says so on stderr (:class:`ampere.benchcli.Progress`).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import os
import sys
from typing import Any, Callable, Sequence

from . import check
from .benchcli import Progress

__all__ = ["BENCHES", "VALIDATIONS", "COMMANDS", "main"]

#: benchmark name -> "module:function" (function(argv) -> exit code)
BENCHES: dict[str, str] = {
    "matmul": "ampere.architecture:bench_main",
    "tf32": "ampere.numerics:bench_main",
    "hbm": "ampere.hbm:bench_main",
    "kernels": "ampere.kernels:bench_main",
    "sparsity": "ampere.sparsity:bench_main",
    "mig": "ampere.mig:bench_main",
    "collectives": "ampere.interconnect:bench_main",
    "megatron": "ampere.megatron:bench_main",
}

#: model validation name -> "module:function" (function() -> (text report, passed: bool))
VALIDATIONS: dict[str, str] = {
    "specs": "ampere.architecture:validate_datasheets",
    "hbm": "ampere.hbm:validate_models",
    "cluster": "ampere.cluster:validate",
    "megatron": "ampere.megatron:validate",
}

#: other sub-commands implemented by chapter modules
COMMANDS: dict[str, str] = {
    "report": "ampere.report:main",
}


class _ErrorsToStderr(io.TextIOBase):
    """A stdout that sends every line starting with ``error:`` to stderr (a benchmark's error message
    printed with a plain ``print``), and everything else to stdout."""

    def __init__(self, out: Any, err: Any) -> None:
        super().__init__()
        self.out, self.err, self.pending = out, err, ""

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return bool(getattr(self.out, "isatty", lambda: False)())

    def fileno(self) -> int:
        return self.out.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.out, "encoding", None) or "utf-8"

    def write(self, text: str) -> int:
        self.pending += text
        while "\n" in self.pending:
            line, self.pending = self.pending.split("\n", 1)
            (self.err if line.startswith("error:") else self.out).write(line + "\n")
        return len(text)

    def flush(self) -> None:
        if self.pending and not "error:".startswith(self.pending[:6]):
            self.out.write(self.pending)
            self.pending = ""
        self.out.flush()
        self.err.flush()

    def close_line(self) -> None:
        if self.pending:
            (self.err if self.pending.startswith("error:") else self.out).write(self.pending)
            self.pending = ""
        self.flush()


def _resolve(target: str) -> Callable[..., Any]:
    module, _, func = target.partition(":")
    return getattr(importlib.import_module(module), func)


def _cmd_info(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m ampere info", description="Probe this machine.")
    p.add_argument("--json", action="store_true", help="print the DeviceInfo as JSON")
    args = p.parse_args(argv)
    from . import device

    with Progress("info: probing the machine (importing torch, asking the driver)"):
        info = device.probe()
    print(json.dumps(info.to_dict(), indent=1) if args.json else info.summary())
    return 0


def _cmd_bench(argv: Sequence[str]) -> int:
    if not argv or argv[0] in ("-h", "--help", "--list"):
        text = ("usage: python -m ampere bench NAME [options]   (NAME --help for its options)\n\nbenchmarks:\n"
                + "\n".join(f"  {name:12s} {target}" for name, target in BENCHES.items()))
        print(text, file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    name, rest = argv[0], list(argv[1:])
    if name not in BENCHES:
        print(f"error: unknown benchmark {name!r}; known: {', '.join(BENCHES)}", file=sys.stderr)
        return 2
    entry = _resolve(BENCHES[name])
    stream = _ErrorsToStderr(sys.stdout, sys.stderr)
    try:
        with contextlib.redirect_stdout(stream), Progress(f"bench {name}"):
            return int(entry(rest) or 0)
    finally:
        stream.close_line()


def _cmd_validate(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m ampere validate",
                                description="Run the package's model validations against published figures.")
    p.add_argument("names", nargs="*", help=f"which validations (default: all of {', '.join(VALIDATIONS)})")
    args = p.parse_args(argv)
    unknown = [n for n in args.names if n not in VALIDATIONS]
    if unknown:
        print(f"error: unknown validation(s) {unknown}; known: {', '.join(VALIDATIONS)}", file=sys.stderr)
        return 2
    ok = True
    for name in args.names or list(VALIDATIONS):
        with Progress(f"validate {name}"):
            text, passed = _resolve(VALIDATIONS[name])()
        print(f"== {name}: {'PASS' if passed else 'FAIL'}\n{text}\n")
        ok &= bool(passed)
    return 0 if ok else 1


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit code (0 ok, 1 a failed check, 2 a user error, 130 Ctrl-C)."""
    argv = check.sequence("argv", sys.argv[1:] if argv is None else argv,
                          lambda name, word: check.string(name, word, allow_empty=True), min_len=0, max_len=10_000)
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr, flush=True)
        return 130
    except (ValueError, TypeError) as exc:
        if os.environ.get("AMPERE_DEBUG"):
            raise
        print(f"error: {_one_line(exc)}", file=sys.stderr, flush=True)
        return 2


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 400 else text[:397] + "..."


def _main(argv: list[str]) -> int:
    commands: dict[str, Callable[[Sequence[str]], int]] = {
        "info": _cmd_info, "bench": _cmd_bench, "validate": _cmd_validate,
        **{name: (lambda rest, t=target: int(_resolve(t)(rest) or 0)) for name, target in COMMANDS.items()},
    }
    if not argv or argv[0] in ("-h", "--help"):
        text = ("usage: python -m ampere {" + ",".join(commands) + "} [options]\n\n"
                "  info       probe this machine (GPU, capabilities, versions)\n"
                "  bench      run one benchmark and record its result (bench --list)\n"
                "  validate   check the package's models against published figures\n"
                + "".join(f"  {name:10s} see python -m ampere {name} --help\n" for name in COMMANDS)
                + "Ctrl-C stops any command (exit code 130); errors go to stderr (exit code 2).")
        print(text, file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    if cmd not in commands:
        print(f"error: unknown command {cmd!r}; known: {', '.join(commands)}", file=sys.stderr)
        return 2
    return commands[cmd](rest)
