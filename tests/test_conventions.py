"""The first cell of every chapter: what it does on Colab, elsewhere, and which release it installs; the
release's versions agree (pyproject, ampere.__version__, the notebooks' pin, the changelog)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from notebook_conventions import BOOTSTRAP, RELEASE_TAG  # noqa: E402
import release  # noqa: E402


def test_release_tag_is_the_package_version():
    import ampere

    version = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    assert RELEASE_TAG == f"v{version}" == f"v{ampere.__version__}"
    assert "@main" not in BOOTSTRAP and f"@{RELEASE_TAG}" in BOOTSTRAP


def test_versions_agree_for_a_release():
    """The notebooks' pin, pyproject, ampere.__version__ and the changelog's latest entry: one version."""
    assert release.version_problems() == []
    latest, date, body = release.changelog_entry((ROOT / "CHANGELOG.md").read_text(encoding="utf-8"))
    assert latest == release.pyproject_version() and date and len(body) > 40


def _copy_release_files(tmp_path: Path) -> Path:
    for name in ("pyproject.toml", "CHANGELOG.md", "ampere/__init__.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text((ROOT / name).read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "book").mkdir()
    for nb in (ROOT / "book").glob("*.ipynb"):
        (tmp_path / "book" / nb.name).write_text(nb.read_text(encoding="utf-8"), encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("edit, expected", [
    (("pyproject.toml", 'version = "', 'version = "9.'), "ampere.__version__ is"),
    (("ampere/__init__.py", '__version__ = "', '__version__ = "9.'), "ampere.__version__ is"),
    (("CHANGELOG.md", "## [", "## [9.9.9] - 2027-01-01\n\nSomething that changed, said at some length.\n\n## ["),
     "latest entry is [9.9.9]"),
    (("book/tf32.ipynb", "@v", "@v9."), "tf32.ipynb: first cell installs"),
])
def test_version_problems_name_what_disagrees(tmp_path, edit, expected):
    root = _copy_release_files(tmp_path)
    name, old, new = edit
    path = root / name
    path.write_text(path.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")
    assert any(expected in p for p in release.version_problems(root)), release.version_problems(root)


def test_version_problems_check_the_tag_and_an_undated_entry(tmp_path):
    root = _copy_release_files(tmp_path)
    assert release.version_problems(root, tag=RELEASE_TAG) == []
    assert any("is not" in p for p in release.version_problems(root, tag="v0.0.1"))
    log = root / "CHANGELOG.md"
    version = release.pyproject_version(root)
    log.write_text(log.read_text().replace(f"## [{version}] - ", f"## [{version}]\n\nwas dated ", 1))
    assert any("has no date" in p for p in release.version_problems(root))


def _run(monkeypatch, colab: bool, installed: bool) -> tuple[list, str]:
    import importlib.metadata

    calls: list = []
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: object() if installed else None)
    monkeypatch.setattr(importlib.metadata, "version", lambda name: f"{name} as installed")
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: calls.append(a[0]))
    monkeypatch.delenv("AMPERE_PIP_SPEC", raising=False)
    if colab:
        monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    else:
        monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(BOOTSTRAP, {})
    return calls, out.getvalue()


@pytest.mark.parametrize("colab", [True, False])
def test_bootstrap_does_nothing_when_the_package_is_there(monkeypatch, colab):
    assert _run(monkeypatch, colab, installed=True) == ([], "")


def test_bootstrap_installs_the_release_on_colab_and_says_what(monkeypatch):
    calls, out = _run(monkeypatch, colab=True, installed=False)
    assert len(calls) == 1 and calls[0][-1].endswith(f"@{RELEASE_TAG}")
    assert out == f"installed ampere-book ampere-book as installed from tag {RELEASE_TAG}\n"


def test_bootstrap_names_an_overriding_spec(monkeypatch):
    monkeypatch.setenv("AMPERE_PIP_SPEC", "ampere-book==0.0.1")
    calls: list = []
    import contextlib
    import importlib.metadata
    import io

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "0.0.1")
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: calls.append(a[0]))
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(BOOTSTRAP, {})
    assert calls[0][-1] == "ampere-book==0.0.1"
    assert out.getvalue() == "installed ampere-book 0.0.1 from ampere-book==0.0.1\n"


def test_bootstrap_prints_the_install_line_elsewhere(monkeypatch):
    calls, out = _run(monkeypatch, colab=False, installed=False)
    assert calls == [] and f"pip install 'ampere-book @ git+https://" in out and out.strip().endswith(
        f"@{RELEASE_TAG}'")
