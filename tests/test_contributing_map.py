"""CONTRIBUTING.md's map of each package names every file of the package, and nothing that is not there.

The map is the reader's way into the code (CONTRIBUTING.md, "The map of each package"): a file added
without a line in it is a room no one can find, a line left for a removed file sends a reader nowhere.
"""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIR = ROOT / "ampere"


def _map_rows() -> dict[str, str]:
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = text.split("### The map of each package", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        match = re.match(r"\|\s*`([a-z_]+)/`\s*\|(.*)\|\s*$", line)
        if match:
            rows[match.group(1)] = match.group(2)
    return rows


def _packages() -> list[str]:
    return sorted(p.name for p in PACKAGE_DIR.iterdir()
                  if p.is_dir() and (p / "__init__.py").exists() and p.name != "data")


def test_every_package_has_a_row():
    rows = _map_rows()
    assert sorted(rows) == _packages(), "CONTRIBUTING.md's map and the packages under ampere/ differ"


@pytest.mark.parametrize("package", _packages())
def test_the_row_names_every_file_and_only_files(package):
    row = _map_rows().get(package, "")
    files = {p.stem for p in (PACKAGE_DIR / package).glob("*.py") if p.stem != "__init__"}
    named = set(re.findall(r"`([a-z_0-9]+)`", row))
    missing = sorted(files - named)
    assert not missing, f"ampere/{package}/: give these files a line in CONTRIBUTING.md's map: {missing}"
    # a name in backquotes that is neither a file nor a public name of the package points nowhere
    import importlib
    module = importlib.import_module(f"ampere.{package}")
    public = set(getattr(module, "__all__", ()))
    stray = sorted(n for n in named - files if n not in public and not hasattr(module, n)
                   and not n.startswith(("bench", "python")))
    assert not stray, f"CONTRIBUTING.md's map of {package}/ names what is not there: {stray}"
