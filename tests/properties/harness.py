"""The property-test harness: strategies for valid and invalid inputs, and the two assertions every public
function of ampere must satisfy.

* invalid input -> ``ValueError`` or ``TypeError`` whose message names the argument, within a time bound
  (:func:`rejects`; a hang fails fast through ``SIGALRM``, and any other exception type fails);
* valid input -> an answer of the documented type, finite where it is a number, within a time bound
  (:func:`answers`).

Every property test declares which public names it covers with :func:`covers`; tests/properties/
test_api_coverage.py lists the public API (the ``__all__`` of every module and package of ampere) and
fails when a public function or class has no property test, apart from the packages still pending.

Hypothesis settings come in profiles (tests/properties/conftest.py): ``ampere`` (the default, sized so the
whole folder runs in well under three minutes on two cores) and ``thorough`` (``HYPOTHESIS_PROFILE=thorough``).
"""

from __future__ import annotations

import contextlib
import math
import re
import signal
from typing import Any, Callable, Iterator

from hypothesis import strategies as st

#: every object a property test covers (functions and classes, by identity)
COVERED: dict[int, Any] = {}


def covers(*objects: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a test as the property test of ``objects`` (public functions or classes)."""
    for obj in objects:
        if not callable(obj):
            raise TypeError(f"covers() takes functions and classes, got {obj!r}")
        COVERED[id(obj)] = obj

    def mark(test: Callable[..., Any]) -> Callable[..., Any]:
        test.covers = objects  # type: ignore[attr-defined]
        return test

    return mark


# ---------------------------------------------------------------------------------------------------------
# Time bound
# ---------------------------------------------------------------------------------------------------------

class Hang(BaseException):
    """Raised by the alarm inside a call that ran past its time bound (a BaseException, so that an
    ``except Exception`` in the code under test cannot swallow it)."""


@contextlib.contextmanager
def within(seconds: float, what: str = "the call") -> Iterator[None]:
    """Fail with :class:`Hang` if the block runs longer than ``seconds`` (SIGALRM; main thread, POSIX)."""
    if not hasattr(signal, "setitimer"):
        yield
        return

    def alarm(signum: int, frame: Any) -> None:
        raise Hang(f"{what} ran past {seconds:g} s")

    before = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)


# ---------------------------------------------------------------------------------------------------------
# The two assertions
# ---------------------------------------------------------------------------------------------------------

def names_field(message: str, field: str) -> bool:
    """Does ``message`` name ``field`` (as a word: ``n`` in "n must be", ``timeout_s`` in "--timeout_s")?"""
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(field)}(?![A-Za-z0-9])", message, re.IGNORECASE) is not None


def _call_text(fn: Callable[..., Any], args: tuple, kwargs: dict[str, Any]) -> str:
    parts = [repr(a)[:60] for a in args] + [f"{k}={v!r}"[:60] for k, v in kwargs.items()]
    return f"{getattr(fn, '__qualname__', fn)}({', '.join(parts)})"


def rejects(fn: Callable[..., Any], field: str, /, *args: Any, within_s: float = 5.0, **kwargs: Any) -> Exception:
    """Assert that ``fn(*args, **kwargs)`` raises ValueError or TypeError naming ``field`` within ``within_s``."""
    call = _call_text(fn, args, kwargs)
    try:
        with within(within_s, call):
            value = fn(*args, **kwargs)
    except (ValueError, TypeError) as exc:
        assert names_field(str(exc), field), f"{call}: the message does not name {field!r}: {exc}"
        return exc
    except Hang as exc:
        raise AssertionError(f"{call}: no answer within {within_s:g} s (a hang)") from exc
    except Exception as exc:  # noqa: BLE001 - any other type is the failure this harness looks for
        raise AssertionError(f"{call}: {type(exc).__name__} instead of ValueError/TypeError: {exc}") from exc
    raise AssertionError(f"{call}: returned {value!r:.80} for invalid input (a silent answer)")


def finite_numbers(value: Any) -> bool:
    """True when every number in ``value`` (nested lists, tuples, dicts) is finite."""
    if isinstance(value, bool):
        return True
    if isinstance(value, (int, float)):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(finite_numbers(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(finite_numbers(v) for v in value)
    return True


def answers(fn: Callable[..., Any], /, *args: Any, type_: Any = object, within_s: float = 10.0,
            **kwargs: Any) -> Any:
    """Assert that ``fn(*args, **kwargs)`` returns a ``type_`` holding only finite numbers, within
    ``within_s``; return it."""
    call = _call_text(fn, args, kwargs)
    try:
        with within(within_s, call):
            value = fn(*args, **kwargs)
    except Hang as exc:
        raise AssertionError(f"{call}: no answer within {within_s:g} s (a hang)") from exc
    assert isinstance(value, type_), f"{call}: returned {type(value).__name__}, expected {type_}"
    assert finite_numbers(value), f"{call}: returned a non-finite number: {value!r:.200}"
    return value


def rejects_any(data: Any, fn: Callable[..., Any], valid: dict[str, Any], bad: dict[str, Any], *,
                field: Callable[[str], str] = lambda a: a, within_s: float = 5.0) -> None:
    """Draw one argument of ``bad`` (name -> strategy of invalid values) and one invalid value for it, call
    ``fn(**valid)`` with that argument replaced, and assert :func:`rejects` (``field(arg)`` is the name the
    message must say)."""
    arg = data.draw(st.sampled_from(sorted(bad)), label="argument")
    value = data.draw(bad[arg], label=f"invalid {arg}")
    rejects(fn, field(arg), within_s=within_s, **{**valid, arg: value})


# ---------------------------------------------------------------------------------------------------------
# Strategies: valid and invalid inputs
# ---------------------------------------------------------------------------------------------------------

NAN, INF = float("nan"), float("inf")
#: the bad numbers of the issue: zero, negative, NaN, inf, 10**12, bools, strings, None
BAD_NUMBER_EXAMPLES = [0, -1, -1.5, NAN, INF, -INF, 1e12, 10 ** 12, True, False, "1", "1.5", None]


def not_numbers() -> st.SearchStrategy[Any]:
    """Values that are not numbers at all: bools, strings, None, containers, objects."""
    return st.one_of(st.booleans(), st.text(max_size=4), st.none(), st.just([]), st.just({}),
                     st.builds(object), st.just(b"1"), st.just(1j))


def not_integers() -> st.SearchStrategy[Any]:
    """Values that are not integers: floats (even 2.0), and every non-number."""
    return st.one_of(st.floats(allow_nan=True, allow_infinity=True), not_numbers())


def bad_ints(lo: int = 1, hi: int | None = None) -> st.SearchStrategy[Any]:
    """Integers outside ``[lo, hi]`` (10**12 included when ``hi`` is given), and non-integers."""
    parts = [st.integers(max_value=lo - 1), not_integers()]
    if hi is not None:
        parts += [st.integers(min_value=hi + 1), st.just(10 ** 12)]
    return st.one_of(*parts)


def bad_floats(lo: float | None = 0.0, hi: float | None = None, *, strict: bool = True) -> st.SearchStrategy[Any]:
    """Numbers outside ``(lo, hi]`` (``[lo, hi]`` when not ``strict``), NaN, infinities, and non-numbers."""
    parts = [st.just(NAN), st.just(INF), st.just(-INF), not_numbers()]
    if lo is not None:
        parts.append(st.floats(max_value=lo, exclude_max=not strict, allow_nan=False, allow_infinity=False))
    if hi is not None:
        parts += [st.floats(min_value=hi, exclude_min=True, allow_nan=False, allow_infinity=False), st.just(1e12)]
    return st.one_of(*parts)


def bad_booleans() -> st.SearchStrategy[Any]:
    """Everything that is not ``True``/``False``: ``"false"``, 0, 1, None, ..."""
    return st.one_of(st.sampled_from(["false", "True", "yes", "", 0, 1, 0.0, None]), st.integers(), st.text(max_size=3))


def bad_names(allowed: Any) -> st.SearchStrategy[Any]:
    """Strings that are not in ``allowed`` (any case), and non-strings."""
    folded = {a.casefold() for a in allowed}
    return st.one_of(st.text(max_size=12).filter(lambda s: s.casefold() not in folded),
                     st.sampled_from(["NoSuchName", "", " "]), st.integers(), st.none(), st.just(["x"]))


def not_lists() -> st.SearchStrategy[Any]:
    """A string instead of a list, a number, None, a dict, a set."""
    return st.one_of(st.text(min_size=1, max_size=8), st.integers(), st.none(), st.just({"a": 1}), st.just({1, 2}))


def bad_strings(*, allow_empty: bool = False) -> st.SearchStrategy[Any]:
    """Non-strings (numbers, None, lists, bytes), and ``""`` where empty is not allowed."""
    parts = [st.integers(), st.floats(), st.none(), st.just(["x"]), st.just(b"x")]
    if not allow_empty:
        parts.append(st.just(""))
    return st.one_of(*parts)


def any_case(name: str) -> st.SearchStrategy[str]:
    """``name`` in a random mix of upper and lower case."""
    return st.lists(st.booleans(), min_size=len(name), max_size=len(name)).map(
        lambda flags: "".join(c.upper() if f else c.lower() for c, f in zip(name, flags)))


def catalogue_names(*, any_case_: bool = True) -> st.SearchStrategy[str]:
    """A catalogue GPU name of :mod:`ampere.specs`, in any case."""
    from ampere import specs

    base = st.sampled_from(specs.names())
    return base.flatmap(any_case) if any_case_ else base


def finite_floats(lo: float = -1e9, hi: float = 1e9) -> st.SearchStrategy[float]:
    return st.floats(min_value=lo, max_value=hi, allow_nan=False, allow_infinity=False)


def words() -> st.SearchStrategy[str]:
    """Short non-empty printable text (labels, titles)."""
    return st.text(st.characters(min_codepoint=32, max_codepoint=126), min_size=1, max_size=12)
