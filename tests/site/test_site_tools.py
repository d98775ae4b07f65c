"""The site's build tools (tools/site, tools/check_site.py) on small inputs: exact pins, the landing page's
rebased URLs, and the self-contained checks catching what the reader must never get."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "site"))
sys.path.insert(0, str(ROOT / "tools"))

import ampere_site  # noqa: E402
import check_site  # noqa: E402
import vendor  # noqa: E402


def test_npm_packages_are_pinned_and_locked_at_the_pins():
    pins = vendor.pins()
    assert set(pins) == {"mathjax", "pyodide"}
    lock = json.loads((ROOT / "tools" / "site" / "package-lock.json").read_text())
    for name, version in pins.items():
        entry = lock["packages"][f"node_modules/{name}"]
        assert entry["version"] == version and entry["integrity"].startswith("sha512-")
    assert "resolved" not in json.dumps(lock), "the lock names no download host"


def test_a_version_range_is_refused(tmp_path, monkeypatch):
    (tmp_path / "package.json").write_text(json.dumps({"dependencies": {"pyodide": "^314.0.8"}}))
    monkeypatch.setattr(vendor, "HERE", tmp_path)
    with pytest.raises(vendor.VendorError, match="pin an exact version"):
        vendor.pins()


@pytest.mark.parametrize("url, expected", [
    ("../_static/x.js?v=1", "_static/x.js?v=1"), ("architecture.html", "book/architecture.html"),
    ("#who-it-is-for", "#who-it-is-for"), ("../", "./"), ("https://example.org/a", "https://example.org/a"),
    ("references.html#id5", "book/references.html#id5"), ("data:image/png;base64,AA", "data:image/png;base64,AA"),
    ("", ""), ("?q=1", "?q=1"),
])
def test_rebase_moves_relative_urls_to_the_root(url, expected):
    assert ampere_site.rebase(url, "book") == expected


def test_landing_page_is_the_root_page_rebased():
    page = ('<html data-content_root="../"><head><script src="../_static/a.js"></script>'
            "<script>DOCUMENTATION_OPTIONS.pagename = 'book/intro';</script></head>"
            '<body><a href="hbm.html#x">HBM</a><a href="#top">top</a><img src="../_images/d.png"></body></html>')
    out = ampere_site.landing_page(page, "book/intro")
    assert 'data-content_root="./"' in out and 'src="_static/a.js"' in out and 'href="book/hbm.html#x"' in out
    assert 'href="#top"' in out and 'src="_images/d.png"' in out and "pagename = 'index'" in out


def _site(tmp_path: Path, index: str, page: str) -> Path:
    (tmp_path / "book").mkdir()
    (tmp_path / "index.html").write_text(index)
    (tmp_path / "book" / "x.html").write_text(page)
    return tmp_path


def test_self_contained_check_finds_what_a_reader_must_not_get(tmp_path):
    page = ('<script defer="defer" src="https://cdn.example.org/mathjax/tex.js"></script>'
            "<script>const A = 1;</script><script>const A = 1;</script>"
            '<link rel="stylesheet" href="//fonts.example.org/f.css" />'
            '<div class="ampere-calc" data-calc="no-such-calc"></div>')
    site = _site(tmp_path, '<meta http-equiv="Refresh" content="0; url=book/intro.html" />', page)
    problems = "\n".join(check_site.check_self_contained(site))
    assert "index.html: not a page with content" in problems
    assert "cdn.example.org" in problems and "fonts.example.org" in problems
    assert "the same inline script twice: 'const A = 1;'" in problems
    assert "unknown calculator 'no-such-calc'" in problems and "carries no forms" in problems
    assert "_vendor:" in problems


def test_self_contained_check_passes_a_clean_site(tmp_path):
    site = _site(tmp_path, "<main><h1>Book</h1></main>",
                 '<script src="../_static/a.js"></script><a href="https://example.org">a link is not a request</a>')
    vendored = site / "_vendor"
    (vendored / "pyodide").mkdir(parents=True)
    (vendored / "pyodide" / "f.txt").write_text("x")
    files = {"pyodide/f.txt": {"bytes": 1, "sha256": vendor._sha256(vendored / "pyodide" / "f.txt")}}
    (vendored / "MANIFEST.json").write_text(json.dumps({"npm": vendor.pins(), "files": files, "wheel": "w"}))
    assert check_site.check_self_contained(site) == []
    (vendored / "pyodide" / "f.txt").write_text("y")
    assert "different from its manifest" in "".join(check_site.check_self_contained(site))
