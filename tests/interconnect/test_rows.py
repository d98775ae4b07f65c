"""Tests of ampere.interconnect.rows: the page's tables.

Chapter: NVLink, NVSwitch and collectives.
"""

from __future__ import annotations

from ampere import interconnect as ic


def _bib_keys():
    import re
    from pathlib import Path

    bib = (Path(__file__).resolve().parents[2] / "book" / "references.bib").read_text(encoding="utf-8")
    return set(re.findall(r"@\w+\{([^,]+),", bib))


def test_page_tables_name_sources_by_label_not_key():
    keys = _bib_keys()
    for rows in (ic.claims_rows(), ic.link_table(), ic.system_rows(), ic.crossover_rows(32)):
        for row in rows:
            for value in row.values():
                assert str(value) not in keys, value
    assert all(r["crossover, weak scaling"] for r in ic.crossover_rows(32))
