"""ampere.tables: one Markdown table format for the whole book."""

import pytest

from ampere.tables import markdown_table


def test_columns_formats_and_special_values():
    rows = [{"gpu": "A100", "tflops": 311.8728, "ok": True, "note": None},
            {"gpu": "a|b", "tflops": "n/a", "ok": False, "note": "two\nlines"}]
    text = markdown_table(rows, formats={"tflops": ".1f"})
    assert text.splitlines() == [
        "| gpu | tflops | ok | note |",
        "|---|---|---|---|",
        "| A100 | 311.9 | yes |  |",
        "| a\\|b | n/a | no | two lines |",
    ]
    assert markdown_table(rows, ["ok"]).splitlines()[2] == "| yes |"


def test_empty_rows_are_an_error():
    with pytest.raises(ValueError):
        markdown_table([])
    with pytest.raises(ValueError):
        markdown_table(iter(()))
