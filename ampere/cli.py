"""Command line: ``python -m ampere info | bench | report | validate``.

Chapter: *Architecture of the GA100* introduces ``info`` and ``bench matmul``; each measuring chapter
adds its benchmark to ``BENCHES``; *The reference check* documents ``report``.

This module only dispatches. A benchmark entry point is a function ``main(argv: list[str]) -> int`` in
its chapter's module; it parses its own options, starting from :func:`ampere.benchcli.bench_parser` so
that every benchmark shares ``--out``, ``--quick``, ``--no-save`` and ``--device``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Any, Callable, Sequence

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


def _resolve(target: str) -> Callable[..., Any]:
    module, _, func = target.partition(":")
    return getattr(importlib.import_module(module), func)


def _cmd_info(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m ampere info", description="Probe this machine.")
    p.add_argument("--json", action="store_true", help="print the DeviceInfo as JSON")
    args = p.parse_args(argv)
    from . import device

    info = device.probe()
    print(json.dumps(info.to_dict(), indent=1) if args.json else info.summary())
    return 0


def _cmd_bench(argv: Sequence[str]) -> int:
    if not argv or argv[0] in ("-h", "--help", "--list"):
        print("usage: python -m ampere bench NAME [options]   (NAME --help for its options)\n\nbenchmarks:")
        for name, target in BENCHES.items():
            print(f"  {name:12s} {target}")
        return 0 if argv else 2
    name, rest = argv[0], list(argv[1:])
    if name not in BENCHES:
        print(f"error: unknown benchmark {name!r}; known: {', '.join(BENCHES)}", file=sys.stderr)
        return 2
    return int(_resolve(BENCHES[name])(rest) or 0)


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
        text, passed = _resolve(VALIDATIONS[name])()
        print(f"== {name}: {'PASS' if passed else 'FAIL'}\n{text}\n")
        ok &= bool(passed)
    return 0 if ok else 1


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    commands: dict[str, Callable[[Sequence[str]], int]] = {
        "info": _cmd_info, "bench": _cmd_bench, "validate": _cmd_validate,
        **{name: (lambda rest, t=target: int(_resolve(t)(rest) or 0)) for name, target in COMMANDS.items()},
    }
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m ampere {" + ",".join(commands) + "} [options]\n\n"
              "  info       probe this machine (GPU, capabilities, versions)\n"
              "  bench      run one benchmark and record its result (bench --list)\n"
              "  validate   check the package's models against published figures")
        for name in COMMANDS:
            print(f"  {name:10s} see python -m ampere {name} --help")
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    if cmd not in commands:
        print(f"error: unknown command {cmd!r}; known: {', '.join(commands)}", file=sys.stderr)
        return 2
    return commands[cmd](rest)
