#!/usr/bin/env python
"""Cut a release: check that the versions agree, build the wheel, check the PDF, publish on GitHub.

Called by .github/workflows/release.yml on a version tag (after `make pdf`), and by `make test` with
--dry-run, which does everything but publish: the same checks on every commit, so a tag never finds
them failing. README, "Cutting a release", gives the steps around it.

What must agree (``version_problems``): the version in pyproject.toml, ``ampere.__version__``, the
release the chapters' first cell installs (tools/notebook_conventions.py VERSION, and that cell in every
notebook), the latest entry of CHANGELOG.md (``## [X.Y.Z] - YYYY-MM-DD``, with a body and a link), and
the tag when one is given (``vX.Y.Z``).

Usage: tools/release.py [--dry-run] [--tag vX.Y.Z] [--dist DIR]
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from build_pdf import page_count, pdf_name  # noqa: E402
from notebook_conventions import BOOTSTRAP, RELEASE_TAG, VERSION  # noqa: E402

ENTRY = re.compile(r"^## \[(?P<version>[^\]]+)\](?: - (?P<date>\d{4}-\d{2}-\d{2}))?\s*$", re.M)
MIN_PAGES = 200


def pyproject_version(root: Path = ROOT) -> str:
    match = re.search(r'^version = "([^"]+)"', (root / "pyproject.toml").read_text(encoding="utf-8"), re.M)
    if not match:
        raise ValueError("pyproject.toml: no version = \"...\" line")
    return match.group(1)


def package_version(root: Path = ROOT) -> str:
    """ampere.__version__ as written in ampere/__init__.py (read, not imported: no editable install needed)."""
    match = re.search(r'^__version__ = "([^"]+)"', (root / "ampere" / "__init__.py").read_text(encoding="utf-8"),
                      re.M)
    if not match:
        raise ValueError("ampere/__init__.py: no __version__ = \"...\" line")
    return match.group(1)


def changelog_entry(text: str) -> tuple[str, str | None, str]:
    """(version, date, body) of the latest entry of a Keep a Changelog file ("Unreleased" counts)."""
    entries = list(ENTRY.finditer(text))
    if not entries:
        raise ValueError("CHANGELOG.md: no '## [X.Y.Z] - YYYY-MM-DD' entry")
    first = entries[0]
    end = entries[1].start() if len(entries) > 1 else len(text)
    body = text[first.end():end]
    body = re.split(r"^\[[^\]]+\]: ", body, flags=re.M)[0].strip()  # without the link definitions
    return first.group("version"), first.group("date"), body


def first_code_cell(path: Path) -> str:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return next(("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"), "")


def version_problems(root: Path = ROOT, tag: str | None = None) -> list[str]:
    """Everything that disagrees with the version in pyproject.toml (empty: ready to release)."""
    version = pyproject_version(root)
    found = []
    if package_version(root) != version:
        found.append(f"ampere.__version__ is {package_version(root)}, pyproject.toml says {version}")
    if VERSION != version or RELEASE_TAG != f"v{version}":
        found.append(f"tools/notebook_conventions.py installs {RELEASE_TAG}, pyproject.toml says {version}")
    if f"@v{version}\"" not in BOOTSTRAP:
        found.append(f"the bootstrap cell does not install the tag v{version}")
    for path in sorted((root / "book").glob("*.ipynb")):
        if first_code_cell(path) != BOOTSTRAP:
            pins = re.findall(r"@(v[\w.]+)", first_code_cell(path))
            found.append(f"{path.name}: first cell installs {pins or 'nothing'}, not v{version} "
                         "(run tools/set_bootstrap.py)")
    text = (root / "CHANGELOG.md").read_text(encoding="utf-8") if (root / "CHANGELOG.md").exists() else ""
    try:
        latest, date, body = changelog_entry(text)
    except ValueError as exc:
        return found + [str(exc)]
    if latest != version:
        found.append(f"CHANGELOG.md's latest entry is [{latest}], pyproject.toml says {version}")
    if not date:
        found.append(f"CHANGELOG.md: the entry [{latest}] has no date (## [{latest}] - YYYY-MM-DD)")
    if len(body) < 40:
        found.append(f"CHANGELOG.md: the entry [{latest}] says nothing about what changed")
    if not re.search(rf"^\[{re.escape(latest)}\]: https://", text, re.M):
        found.append(f"CHANGELOG.md: no link definition [{latest}]: https://... for the entry")
    if tag is not None and tag != f"v{version}":
        found.append(f"the tag {tag} is not v{version}")
    return found


def run(cmd: list[str]) -> None:
    print("+ " + shlex.join(cmd), flush=True)
    subprocess.run(cmd, check=True, cwd=ROOT)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="check and build, publish nothing")
    parser.add_argument("--tag", help="the tag being released (the workflow passes GITHUB_REF_NAME)")
    parser.add_argument("--dist", type=Path, default=ROOT / "_build" / "dist")
    args = parser.parse_args(argv)
    version = pyproject_version()
    problems = version_problems(tag=args.tag)
    for problem in problems:
        print(f"release: {problem}")
    if problems:
        return 1
    print(f"release: versions agree on {version} (pyproject, ampere.__version__, the chapters' first cell, "
          "CHANGELOG.md)" + (f", tag {args.tag}" if args.tag else ""))
    args.dist.mkdir(parents=True, exist_ok=True)
    for old in args.dist.glob("ampere_book-*.whl"):
        old.unlink()
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(args.dist), str(ROOT)])
    wheels = sorted(args.dist.glob(f"ampere_book-{version}-*.whl"))
    if len(wheels) != 1:
        print(f"release: expected one wheel ampere_book-{version}-*.whl in {args.dist}, found {wheels}")
        return 1
    pdf = ROOT / "_build" / "pdf" / pdf_name((ROOT / "_config.yml").read_text(encoding="utf-8"))
    if not pdf.exists():
        print(f"release: no {pdf.relative_to(ROOT)}: run `make pdf` first")
        return 1
    pages = page_count(pdf)
    if pages < MIN_PAGES:
        print(f"release: {pdf.name} has {pages} pages, fewer than {MIN_PAGES}")
        return 1
    notes = args.dist / "release-notes.md"
    _, date, body = changelog_entry((ROOT / "CHANGELOG.md").read_text(encoding="utf-8"))
    notes.write_text(f"{body}\n\nThe chapters' first cell installs this release on Colab "
                     f"(`ampere-book @ git+...@v{version}`). The PDF is the whole book ({pages} pages).\n",
                     encoding="utf-8")
    tag = args.tag or f"v{version}"
    publish = ["gh", "release", "create", tag, "--verify-tag", "--title", f"Ampere by Experiment {version}",
               "--notes-file", str(notes), str(wheels[0]), str(pdf)]
    print(f"release: assets {wheels[0].name} ({wheels[0].stat().st_size / 1e6:.1f} MB), {pdf.name} ({pages} pages, "
          f"{pdf.stat().st_size / 1e6:.1f} MB); notes from CHANGELOG.md [{version}] - {date}")
    if args.dry_run:
        print("release: dry run, would publish: " + shlex.join(publish))
        return 0
    run(publish)
    return 0


if __name__ == "__main__":
    sys.exit(main())
