#!/usr/bin/env python
"""Call every public function and class of ampere with bad input, each call in a forked child with a time
limit, and tabulate what came back.

    python tools/fuzz_api.py                     # the core modules (check, launch, cli, timing, results, ...)
    python tools/fuzz_api.py --all               # every module and package of ampere
    python tools/fuzz_api.py ampere.megatron     # some modules or packages
    python tools/fuzz_api.py --all --details     # and list every call that was not a clear refusal

For each public function, class (its constructor) and public method of a class it can build, the fuzzer
starts from a valid call (a hand-written baseline for the core, else the defaults plus guesses tried until
one call succeeds) and replaces one argument at a time with a bad value of the argument's kind: 0, -1,
NaN, inf, 10**12, a bool, a string, None, an unknown name, an empty list, a string instead of a list.
Outcomes, per call:

  clear     ValueError/TypeError whose message names the argument (or a CLI exit code != 0)
  unclear   ValueError/TypeError that does not name the argument
  other     any other exception type (AttributeError, ZeroDivisionError, OverflowError, KeyError, ...)
  hang      no answer within --timeout seconds (the child and its process group are killed)
  silent    returned an answer for an input of the wrong type or not finite (NaN, inf, a bool, a string
            for a number, None, a string instead of a list, ...): never valid
  triage    returned an answer for 0, -1, 10**12, "" or an unknown name: valid for some arguments, not
            for others; refuse it, or list it in ACCEPT (tools/fuzz_core.py) with the reason
  accepted  returned, and the input is valid for this argument (the default value, a catalogue GPU name
            in another case (the house rule), or listed in ACCEPT with the reason)

The goal is 0 hangs, 0 silent, 0 other and few unclear. ``--json`` writes every call's outcome.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import math
import os
import pickle
import re
import select
import signal
import sys
import tempfile
import time
import types
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzz_core import (ACCEPT, CORE, ENVIRONMENT, SKIP_ARGS, SKIP_CALLABLES, VALIDATORS,  # noqa: E402
                       core_baselines, method_baselines)


NAN, INF = float("nan"), float("inf")
HUGE = 10 ** 12

def _bad_values(value: Any, annotation: str) -> list[tuple[str, Any]]:
    """The bad values for an argument whose valid value is ``value`` (its default or the baseline's)."""
    numbers_ = [("zero", 0), ("negative", -1), ("nan", NAN), ("inf", INF), ("huge", HUGE), ("bool", True),
                ("string", "1"), ("none", None)]
    if isinstance(value, bool):
        return [("string", "false"), ("int", 1), ("none", None)]
    if isinstance(value, int):
        return [(k, v) for k, v in numbers_ if k not in ("nan", "inf")] + [("float", 2.5)]
    if isinstance(value, float):
        return [(k, float(v) if isinstance(v, int) and not isinstance(v, bool) else v) for k, v in numbers_]
    if isinstance(value, str):
        out = [("unknown", "NoSuchName"), ("empty", ""), ("int", 1), ("none", None)]
        if value and value.lower() != value:
            out.append(("unknown-case", value.lower()))
        return out
    if isinstance(value, (list, tuple)):
        out = [("empty", type(value)()), ("string-not-list", "abc"), ("none", None), ("int", 3)]
        if value and isinstance(value[0], str):
            out.append(("unknown-element", type(value)(["NoSuchName"])))
        elif value and isinstance(value[0], (int, float)) and not isinstance(value[0], bool):
            out += [("negative-element", type(value)([-1])), ("nan-element", type(value)([NAN]))]
        return out
    if isinstance(value, dict):
        return [("list", []), ("string", "x"), ("none", None)]
    if value is None:
        a = annotation.lower()
        if "int" in a or "float" in a:
            return [("negative", -1), ("nan", NAN), ("huge", HUGE), ("bool", True), ("string", "1")]
        if "str" in a:
            return [("unknown", "NoSuchName"), ("empty", ""), ("int", 1)]
        return [("int", -1), ("string", "NoSuchName"), ("object", object())]
    if callable(value):
        return [("int", 1), ("none", None), ("string", "x")]
    return [("none", None), ("int", 1), ("string", "x")]


#: guesses for required arguments outside the core, by argument name (tried in order)
GUESSES: dict[str, list[Any]] = {
    "gpu": ["A100-SXM4-80GB"], "spec": ["A100-SXM4-80GB"], "name": ["A100-SXM4-80GB", "bf16", "all_reduce"],
    "gpus": [["A100-SXM4-80GB"]], "precision": ["bf16"], "dtype": ["bf16"], "op": ["all_reduce"],
    "profile": ["1g.10gb"], "model": ["gpt3-175b", "A100-SXM4-80GB"], "size_bytes": [2 ** 20],
    "sizes_bytes": [[2 ** 20]], "world_size": [8], "n": [8], "m": [1024], "k": [1024], "nodes": [4],
}


def _guess(param: inspect.Parameter) -> list[Any]:
    if param.name in GUESSES:
        return GUESSES[param.name]
    a = str(param.annotation).lower()
    if "bool" in a:
        return [True]
    if "int" in a:
        return [8, 1024]
    if "float" in a:
        return [1.0, 1e9]
    if "str" in a:
        return ["A100-SXM4-80GB", "bf16"]
    if "sequence" in a or "list" in a:
        return [[1024], ["A100-SXM4-80GB"]]
    return []


# ----------------------------------------------------------------------------------------------------
# Running one call in a forked child
# ----------------------------------------------------------------------------------------------------

def _child(fn: Callable[..., Any], args: tuple, kwargs: dict[str, Any], wfd: int, cwd: str) -> None:
    os.setpgid(0, 0)
    os.chdir(tempfile.mkdtemp(dir=cwd))  # a fresh folder per call: no call sees another's files
    devnull = os.open(os.devnull, os.O_RDWR)
    stderr_r, stderr_w = os.pipe()
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    try:
        value = fn(*args, **kwargs)
        if isinstance(value, types.GeneratorType) or hasattr(value, "__enter__") and hasattr(value, "gen"):
            with value:  # a context manager validates on entry
                pass
        msg = ("return", type(value).__name__, str(value) if isinstance(value, int) else "")
    except SystemExit as exc:
        msg = ("exit", type(exc).__name__, str(exc.code))
    except BaseException as exc:  # noqa: BLE001 - that is the point
        kind = "raise-vt" if isinstance(exc, (ValueError, TypeError)) else "raise"
        if isinstance(exc, OSError) and not isinstance(exc, (ValueError, TypeError)):
            kind = "raise-os"
        msg = (kind, type(exc).__name__, str(exc)[:500])
    os.write(wfd, pickle.dumps(msg))
    os.close(wfd)
    os._exit(0)


def run_call(fn: Callable[..., Any], args: tuple, kwargs: dict[str, Any], timeout: float, cwd: str) -> tuple:
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        try:
            _child(fn, args, kwargs, wfd, cwd)
        finally:
            os._exit(1)
    os.close(wfd)
    data = b""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        ready, _, _ = select.select([rfd], [], [], left)
        if not ready:
            break
        chunk = os.read(rfd, 65536)
        if not chunk:
            break
        data += chunk
    os.close(rfd)
    hung = not data and time.monotonic() >= deadline
    for sig in (signal.SIGKILL,):
        try:
            os.killpg(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
    _, status = os.waitpid(pid, 0)
    if hung:
        return ("hang", "", f"no answer within {timeout:g} s")
    if not data:
        return ("crash", "", f"child died with status {status}")
    return pickle.loads(data)


def _names_field(message: str, field: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(field)}(?![A-Za-z0-9])", message, re.IGNORECASE) is not None


#: free-text arguments: any non-empty string is valid (an unknown name is not a mistake there)
FREE_TEXT = {"message", "label", "title", "what", "unit", "source", "where", "note", "id", "description", "summary", "text",
             "measures", "model_label", "real_label", "why", "date"}
#: path arguments: a missing file may raise FileNotFoundError (an OSError naming the path), and a new
#: file name ("NoSuchName") is a valid place to write
PATH_FIELDS = {"path", "out"}


#: bad values that are valid for some arguments (a count may be 0, a size 10**12, a name anything)
TRIAGE_KINDS = {"zero", "negative", "huge", "empty", "unknown", "unknown-case"}


def classify(qual: str, field: str, kind: str, result: tuple, is_main: bool, named: str | None = None,
             catalogue_name: bool = False) -> str:
    """The outcome of one call; ``field`` is the argument changed, ``named`` the name its message must say
    (a validator's ``name`` argument; else the argument itself)."""
    what, typ, msg = result
    named = named or field
    if what == "hang":
        return "hang"
    if what == "crash":
        return "other"
    if what == "exit":
        return "clear" if is_main and msg not in ("0", "None") else "other"
    if what == "raise-vt":
        return "clear" if _names_field(msg, named) else "unclear"
    if what == "raise-os" and field in PATH_FIELDS:
        return "clear"
    if what in ("raise", "raise-os"):
        return "accepted" if ENVIRONMENT.get(qual) == typ and kind in ("zero",) else "other"
    if is_main and typ == "int":
        return "clear" if msg != "0" else "silent"
    if (qual, field, kind) in ACCEPT or (qual, field, "*") in ACCEPT:
        return "accepted"
    if field in FREE_TEXT and kind in ("unknown", "unknown-case"):
        return "accepted"
    if kind == "unknown-case" and catalogue_name:
        return "accepted"  # catalogue GPU names match in any case everywhere
    return "triage" if kind in TRIAGE_KINDS else "silent"


# ----------------------------------------------------------------------------------------------------
# Targets
# ----------------------------------------------------------------------------------------------------

def _public(module_name: str) -> list[tuple[str, Any]]:
    module = importlib.import_module(module_name)
    out = []
    for name in getattr(module, "__all__", []):
        obj = getattr(module, name, None)
        if isinstance(obj, types.ModuleType) or not callable(obj):
            continue
        if (getattr(obj, "__module__", "") or "").split(".")[0] != "ampere":
            continue
        out.append((f"{obj.__module__}.{obj.__qualname__}", obj))
    return out


def _modules(selection: list[str]) -> list[str]:
    import ampere

    if selection == ["--all"]:
        return [f"ampere.{m}" for m in sorted(ampere._SUBMODULES)]
    return selection


def _kwargs_for(obj: Any, baseline: dict[str, Any] | None) -> tuple[dict[str, Any], list[inspect.Parameter]] | None:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    params = [p for p in sig.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
              and p.name != "self"]
    kwargs = dict(baseline or {})
    for p in params:
        if p.name not in kwargs and p.default is not inspect.Parameter.empty:
            kwargs.setdefault(p.name, p.default) if baseline is None else None
    return kwargs, params


def _find_baseline(obj: Any, params: list[inspect.Parameter], timeout: float, cwd: str) -> dict[str, Any] | None:
    required = [p for p in params if p.default is inspect.Parameter.empty]
    choices = [_guess(p) for p in required]
    if any(not c for c in choices):
        return None
    for attempt in range(3):
        kw = {p.name: c[min(attempt, len(c) - 1)] for p, c in zip(required, choices)}
        if run_call(obj, (), kw, timeout, cwd)[0] == "return":
            return kw
    return None


def _methods(cls: type, instance: Any, qual: str) -> list[tuple[str, Any]]:
    """Public methods defined on ``cls`` itself (classmethods too), bound to ``instance``."""
    out = []
    for name, member in vars(cls).items():
        if name.startswith("_") or isinstance(member, property):
            continue
        if isinstance(member, (types.FunctionType, classmethod, staticmethod)):
            out.append((f"{qual}.{name}", getattr(instance, name)))
    return out


def fuzz(modules: list[str], timeout: float, core_only_baselines: bool, progress: bool = False) -> list[dict[str, Any]]:
    tmp = Path(tempfile.mkdtemp(prefix="ampere-fuzz-"))
    baselines = {**core_baselines(tmp), **method_baselines(tmp)}
    rows: list[dict[str, Any]] = []
    seen: set[int] = set()
    targets: list[tuple[str, str, Any]] = []
    for module_name in modules:
        for qual, obj in _public(module_name):
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            targets.append((".".join(obj.__module__.split(".")[:2]), qual, obj))  # the defining module
    i = 0
    while i < len(targets):
        module_name, qual, obj = targets[i]
        i += 1
        if qual in SKIP_CALLABLES:
            rows.append({"module": module_name, "callable": qual, "field": "", "kind": "", "outcome": "skipped",
                         "detail": SKIP_CALLABLES[qual]})
            continue
        found = _kwargs_for(obj, None)
        if found is None:
            continue
        defaults, params = found
        if qual in baselines:
            base = baselines[qual]
        else:
            guessed = None if core_only_baselines else _find_baseline(obj, params, timeout, str(tmp))
            if guessed is None and any(p.default is inspect.Parameter.empty for p in params):
                rows.append({"module": module_name, "callable": qual, "field": "", "kind": "",
                             "outcome": "no-baseline", "detail": "no valid call found"})
                continue
            base = guessed or {}
        if isinstance(obj, type):
            try:
                instance = obj(**base)
            except Exception:
                instance = None
            if instance is not None:
                targets[i:i] = [(module_name, q, m) for q, m in _methods(obj, instance, qual)]
        rows += _fuzz_one(module_name, qual, obj, base, params, timeout, str(tmp))
        if progress:
            print(f"fuzz: {qual} ({len(rows)} calls so far)", file=sys.stderr, flush=True)
    return rows


def _fuzz_one(module_name: str, qual: str, obj: Any, base: dict[str, Any], params: list[inspect.Parameter],
              timeout: float, cwd: str) -> list[dict[str, Any]]:
    rows = []
    is_main = qual.endswith(".main") or qual.endswith("_main")
    for p in params:
        if (qual, p.name) in SKIP_ARGS:
            continue
        valid = base.get(p.name, p.default)
        if valid is inspect.Parameter.empty:
            continue
        for kind, bad in _bad_values(valid, str(p.annotation)):
            if p.default is not inspect.Parameter.empty and _same(bad, p.default):
                continue
            kwargs = {k: v for k, v in base.items()}
            kwargs[p.name] = bad
            result = run_call(obj, (), kwargs, timeout, cwd)
            # a validator's message names the field it was told (its ``name`` argument), not "value"
            field = base["name"] if (p.name == "value" and qual in VALIDATORS) else p.name
            outcome = classify(qual, p.name, kind, result, is_main, field,
                               catalogue_name=isinstance(valid, str) and valid in _catalogue())
            rows.append({"module": module_name, "callable": qual, "field": p.name, "kind": kind,
                         "outcome": outcome, "detail": f"{result[1]}: {result[2]}"[:300]})
    return rows


def _catalogue() -> list[str]:
    from ampere import specs

    return specs.names()


def _same(a: Any, b: Any) -> bool:
    try:
        return type(a) is type(b) and (a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b)))
    except Exception:
        return False


OUTCOMES = ("clear", "accepted", "unclear", "other", "hang", "silent", "triage", "no-baseline", "skipped")


def table(rows: list[dict[str, Any]], by: str = "module") -> str:
    counts: dict[str, Counter] = defaultdict(Counter)
    for r in rows:
        counts[r[by]][r["outcome"]] += 1
    lines = [f"| {by} | calls | " + " | ".join(OUTCOMES) + " |", "|---|---:|" + "---:|" * len(OUTCOMES)]
    total: Counter = Counter()
    for key in sorted(counts):
        c = counts[key]
        total.update(c)
        calls = sum(v for k, v in c.items() if k not in ("no-baseline", "skipped"))
        lines.append(f"| {key} | {calls} | " + " | ".join(str(c.get(o, 0)) for o in OUTCOMES) + " |")
    calls = sum(v for k, v in total.items() if k not in ("no-baseline", "skipped"))
    lines.append(f"| **total** | {calls} | " + " | ".join(str(total.get(o, 0)) for o in OUTCOMES) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("modules", nargs="*", help="modules or packages (default: the core)")
    p.add_argument("--all", action="store_true", help="every module and package of ampere")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds per call (default 10)")
    p.add_argument("--details", action="store_true", help="list every unclear, other, hang and silent call")
    p.add_argument("--json", help="write every call's outcome to this file")
    p.add_argument("--by", choices=("module", "callable"), default="module")
    p.add_argument("--progress", action="store_true", help="name each callable on stderr as it is done")
    args = p.parse_args(argv)
    os.environ.setdefault("AMPERE_DEVICE", "cpu")
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    modules = _modules(["--all"]) if args.all else (args.modules or CORE)
    t0 = time.monotonic()
    rows = fuzz(modules, args.timeout, core_only_baselines=not (args.all or args.modules), progress=args.progress)
    print(table(rows, args.by))
    print(f"\n{len(rows)} rows, {time.monotonic() - t0:.0f} s")
    if args.details:
        for r in rows:
            if r["outcome"] in ("unclear", "other", "hang", "silent", "triage", "no-baseline"):
                print(f"{r['outcome']:8s} {r['callable']}({r['field']}={r['kind']}): {r['detail']}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    bad = sum(1 for r in rows if r["outcome"] in ("hang", "silent", "triage", "other"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
