"""Stage what the built site serves itself, so that it works offline and the browser tests see exactly
what a reader gets: MathJax, the Pyodide core, and the wheel of the ``ampere`` package built from this
checkout. ``make site-assets`` runs it; the site's Sphinx extension (``tools/site/ampere_site.py``) runs
it too before every build, so ``jupyter-book build`` alone also gets the assets.

* **npm packages**, pinned in ``tools/site/package.json`` and locked (with their sha512) in
  ``package-lock.json``: ``npm ci`` installs them into ``_build/site-assets/npm`` (it refuses a tarball
  whose hash differs from the lock); this script then checks the installed versions against the pins.
  Only what the pages load is copied: MathJax's ``tex-mml-chtml`` component with the fonts, TeX
  extensions and accessibility parts it loads on demand; Pyodide's core (the interpreter, the standard
  library, its lock file). No Pyodide package (NumPy included) is shipped: the calculators' models are
  pure Python (``tests/site/test_calculators.py`` checks that they never import NumPy).
* **the wheel** of the package (``pip wheel --no-deps``), rebuilt when a source file of the package
  changes (a hash of ``ampere/`` and ``pyproject.toml`` is kept beside it).

Everything lands in ``_build/site-assets/extra/_vendor/`` with a ``MANIFEST.json`` (versions, sizes,
sha256 of every file); Sphinx copies ``extra/`` into the site (``html_extra_path``).
Usage: ``python tools/site/vendor.py [--check]`` (``--check``: verify the staged files, install nothing).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
STAGE = ROOT / "_build" / "site-assets"
NPM_DIR = STAGE / "npm"
EXTRA = STAGE / "extra"
VENDOR = EXTRA / "_vendor"

#: npm package -> files and folders (relative to the package) the site serves
MATHJAX_FILES = ("LICENSE", "package.json", "es5/tex-mml-chtml.js", "es5/output/chtml/fonts/woff-v2",
                 "es5/input/tex/extensions", "es5/a11y", "es5/ui", "es5/sre")
PYODIDE_FILES = ("README.md", "package.json", "pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm",
                 "python_stdlib.zip", "pyodide-lock.json")
SHIPPED = {"mathjax": MATHJAX_FILES, "pyodide": PYODIDE_FILES}


class VendorError(RuntimeError):
    """A missing tool, a version that differs from its pin, or a file that failed its check."""


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def pins() -> dict[str, str]:
    """The exact versions of ``tools/site/package.json`` (a range there is an error: pins only)."""
    deps = json.loads((HERE / "package.json").read_text(encoding="utf-8"))["dependencies"]
    for name, version in deps.items():
        if not version[:1].isdigit():
            raise VendorError(f"tools/site/package.json: {name} is {version!r}; pin an exact version")
    return dict(deps)


def _run(cmd: list[str], cwd: Path) -> None:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode:
        raise VendorError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")


def install_npm() -> dict[str, str]:
    """``npm ci`` of the locked packages into ``_build/site-assets/npm`` (skipped when the installed lock is
    the committed one); returns the installed versions, checked against the pins."""
    want = pins()
    NPM_DIR.mkdir(parents=True, exist_ok=True)
    lock = (HERE / "package-lock.json").read_bytes()
    installed_lock = NPM_DIR / "node_modules" / ".package-lock.json"
    stamp = NPM_DIR / "installed.sha256"
    if not (installed_lock.exists() and stamp.exists() and stamp.read_text() == hashlib.sha256(lock).hexdigest()):
        if shutil.which("npm") is None:
            raise VendorError("npm is not installed: install Node.js and npm (Debian: apt-get install npm)")
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(HERE / name, NPM_DIR / name)
        _run(["npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--omit=optional"], NPM_DIR)
        stamp.write_text(hashlib.sha256(lock).hexdigest())
    got = {}
    for name, version in want.items():
        meta = NPM_DIR / "node_modules" / name / "package.json"
        got[name] = json.loads(meta.read_text(encoding="utf-8"))["version"] if meta.exists() else "missing"
        if got[name] != version:
            raise VendorError(f"npm package {name} is {got[name]}, pinned {version}: delete {NPM_DIR} and rerun")
    return got


def _source_hash() -> str:
    h = hashlib.sha256()
    files = sorted(p for p in (ROOT / "ampere").rglob("*") if p.is_file() and p.suffix in (".py", ".json"))
    for p in [*files, ROOT / "pyproject.toml", ROOT / "README.md", ROOT / "LICENSE"]:
        h.update(p.relative_to(ROOT).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def _setuptools_ok() -> bool:
    try:
        import setuptools
    except ImportError:
        return False
    major = setuptools.__version__.split(".")[0]
    return major.isdigit() and int(major) >= 77  # pyproject.toml's build requirement


def build_wheel() -> Path:
    """The package's wheel, built from this checkout when its sources changed since the last build."""
    out = STAGE / "wheel"
    key = _source_hash()
    stamp = out / "source.sha256"
    wheels = sorted(out.glob("ampere_book-*.whl"))
    if len(wheels) == 1 and stamp.exists() and stamp.read_text() == key:
        return wheels[0]
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    cmd = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(ROOT)]
    if _setuptools_ok():
        cmd.insert(4, "--no-build-isolation")  # fast path; else pip builds in an isolated env (slower)
    _run(cmd, ROOT)
    wheels = sorted(out.glob("ampere_book-*.whl"))
    if len(wheels) != 1:
        raise VendorError(f"pip wheel left {len(wheels)} wheels in {out}")
    stamp.write_text(key)
    return wheels[0]


def _copy(src: Path, dst: Path) -> None:
    if src.is_dir():
        shutil.copytree(src, dst, dirs_exist_ok=True)
    else:
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)


def stage() -> dict:
    """Install, copy and record everything; returns the manifest (also written to ``MANIFEST.json``)."""
    versions = install_npm()
    wheel = build_wheel()
    shutil.rmtree(VENDOR, ignore_errors=True)
    for package, items in SHIPPED.items():
        for item in items:
            src = NPM_DIR / "node_modules" / package / item
            if not src.exists():
                raise VendorError(f"{package}@{versions[package]} has no {item}")
            # es5/ is MathJax's own layout; the site keeps it flat: _vendor/mathjax/tex-mml-chtml.js
            _copy(src, VENDOR / package / item.removeprefix("es5/"))
    _copy(wheel, VENDOR / "wheels" / wheel.name)
    files = {p.relative_to(VENDOR).as_posix(): {"bytes": p.stat().st_size, "sha256": _sha256(p)}
             for p in sorted(VENDOR.rglob("*")) if p.is_file()}
    manifest = {"npm": versions, "wheel": wheel.name, "files": files,
                "bytes": sum(f["bytes"] for f in files.values())}
    (VENDOR / "MANIFEST.json").write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")
    return manifest


def check(root: Path = VENDOR) -> dict:
    """Verify staged (or built: ``_build/html/_vendor``) files against their manifest; returns it."""
    manifest = json.loads((root / "MANIFEST.json").read_text(encoding="utf-8"))
    if manifest["npm"] != pins():
        raise VendorError(f"{root}: versions {manifest['npm']} differ from the pins {pins()}")
    for rel, meta in manifest["files"].items():
        p = root / rel
        if not p.is_file() or p.stat().st_size != meta["bytes"] or _sha256(p) != meta["sha256"]:
            raise VendorError(f"{p}: missing or different from its manifest")
    return manifest


def main(argv: list[str]) -> int:
    try:
        manifest = check() if argv[1:2] == ["--check"] else stage()
    except VendorError as exc:
        print(f"site assets: {exc}", file=sys.stderr)
        return 1
    print(f"site assets: {len(manifest['files'])} files, {manifest['bytes'] / 1e6:.1f} MB "
          f"({', '.join(f'{k} {v}' for k, v in manifest['npm'].items())}; {manifest['wheel']})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
