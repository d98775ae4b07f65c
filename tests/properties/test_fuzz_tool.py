"""tools/fuzz_api.py: its verdicts, and a quick run over two core modules (the whole core: run the tool)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

import fuzz_api  # noqa: E402


@pytest.mark.parametrize("result, outcome", [
    (("raise-vt", "ValueError", "n must be >= 1, got 0"), "clear"),
    (("raise-vt", "TypeError", "'int' object is not iterable"), "unclear"),
    (("raise", "AttributeError", "'int' object has no attribute 'x'"), "other"),
    (("hang", "", "no answer within 5 s"), "hang"),
    (("crash", "", "status 9"), "other"),
    (("return", "float", ""), "triage"),  # 0 may be valid for some argument: a person decides
])
def test_verdicts(result, outcome):
    assert fuzz_api.classify("ampere.x.f", "n", "zero", result, False) == outcome


def test_a_wrong_type_that_returns_is_silent_and_a_catalogue_name_in_any_case_is_accepted():
    assert fuzz_api.classify("ampere.x.f", "n", "nan", ("return", "float", ""), False) == "silent"
    assert fuzz_api.classify("ampere.x.f", "n", "string", ("return", "float", ""), False) == "silent"
    assert fuzz_api.classify("ampere.x.f", "gpu", "unknown-case", ("return", "float", ""), False,
                             catalogue_name=True) == "accepted"


def test_a_cli_exit_code_is_a_clear_refusal():
    assert fuzz_api.classify("ampere.cli.main", "argv", "empty", ("return", "int", "0"), True) == "silent"
    assert fuzz_api.classify("ampere.cli.main", "argv", "empty", ("return", "int", "2"), True) == "clear"
    assert fuzz_api.classify("ampere.cli.main", "argv", "empty", ("exit", "SystemExit", "2"), True) == "clear"


def test_a_documented_acceptance_is_not_silent():
    assert fuzz_api.classify("ampere.glue.glue", "value", "nan", ("return", "NoneType", ""), False) == "accepted"
    assert fuzz_api.classify("ampere.views.Point", "what", "unknown", ("return", "Point", ""), False) == "accepted"


def test_two_core_modules_have_no_bad_outcome():
    rows = fuzz_api.fuzz(["ampere.glue", "ampere.tables"], timeout=10.0, core_only_baselines=True)
    assert len(rows) > 20
    bad = [r for r in rows if r["outcome"] in ("unclear", "other", "hang", "silent", "triage")]
    assert bad == []
