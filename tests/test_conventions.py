"""The first cell of every chapter: what it does on Colab, elsewhere, and which release it installs."""

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


def test_release_tag_is_the_package_version():
    import ampere

    version = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    assert RELEASE_TAG == f"v{version}" == f"v{ampere.__version__}"
    assert "@main" not in BOOTSTRAP and f"@{RELEASE_TAG}" in BOOTSTRAP


def _run(monkeypatch, colab: bool, installed: bool) -> tuple[list, str]:
    calls: list = []
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: object() if installed else None)
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


def test_bootstrap_installs_the_release_on_colab(monkeypatch):
    calls, out = _run(monkeypatch, colab=True, installed=False)
    assert out == "" and len(calls) == 1 and calls[0][-1].endswith(f"@{RELEASE_TAG}")


def test_bootstrap_prints_the_install_line_elsewhere(monkeypatch):
    calls, out = _run(monkeypatch, colab=False, installed=False)
    assert calls == [] and f"pip install 'ampere-book @ git+https://" in out and out.strip().endswith(
        f"@{RELEASE_TAG}'")
