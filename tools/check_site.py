"""Read the built site as a reader would, and fail on what a reader should never see.

Run after ``jupyter-book build`` (``make test`` does): ``python tools/check_site.py [_build/html]``.
For every chapter page it fails on

* a hollow-measurement phrase ("no recorded result", "appears here once ...");
* a bibliography key in the text (keys belong in ``{cite}`` roles, which render as labels);
* a citation label shared by two works (``NVIDIA, 2020`` must name one document);
* an image without a numbered caption or without descriptive alt text;
* a raw dict / tuple / list repr in a cell output;
* a text output line, or a line of visible code, wider than 90 characters (the theme clips it at about 92);
* the build machine's report (torch version, CPU model, forced backend) outside a collapsed element.

And for the site as a whole (``check_self_contained``): ``index.html`` is a page with content, not a
redirect; no page loads a script, stylesheet or font from another host; no page writes the same inline
script twice (a ``const`` declared twice is a script error); every live calculator a page places is a
calculator of ``ampere.live`` and the page carries its form; the vendored files (``_vendor/``) match their
manifest and pins (``tools/site/vendor.py``).

Exit code 0 when every page passes, 1 otherwise (each problem printed as ``page: problem``).
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

HOLLOW = [re.compile(p, re.I) for p in (
    r"\bno (?:\w+ ){0,3}(?:results?|measurements?) (?:are |is )?recorded",
    r"\bnothing (?:is |was )?(?:recorded|measured)",
    r"appears? here once",
    r"once (?:results|a result) (?:are|is) recorded",
    r"\bno (?:\w+ ){0,2}measurement here\b",
    r"\bnot (?:yet )?recorded\b",
    r"could not be retrieved for this book",
    r"\bno recorded result",
    r"\bis recorded yet\b", r"appears? when this page runs", r"\bfills? in when\b", r"\bNo GPU here\b",
    r"\bnot measured here\b", r"\bno (?:\w+ ){0,2}results? (?:is|are) (?:recorded|available)",
)]
MACHINE = [re.compile(p) for p in (
    r"forced by AMPERE_DEVICE", r"torch \d+\.\d+\.\d+\+cpu", r"\bbackend (?:cpu|cuda)\b",
    r"Intel\(R\) Xeon\(R\) Processor",
)]
REPR = [re.compile(p) for p in (
    r"\{'[^']+': ", r"\(\('", r"\[\('", r"^\s*\{'", r"\bnp\.float64\(", r"\barray\(\[",
)]
HASHED_ALT = re.compile(r"^[0-9a-f]{16,}(\.\w+)?$")
MAX_LINE = 90  # what the book theme shows of a monospaced line at full width (measured in Chromium)


def _bib_keys() -> set[str]:
    text = (ROOT / "book" / "references.bib").read_text(encoding="utf-8")
    return set(re.findall(r"@\w+\s*\{\s*([^,\s]+)\s*,", text))


def _inside(tag, name: str) -> bool:
    return any(p.name == name for p in tag.parents)


def check_page(path: Path, keys: set[str], labels: dict[str, set[str]]) -> list[str]:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
    main = soup.find("main") or soup.find("article") or soup
    for junk in main.select("script, style, .headerlink"):
        junk.decompose()
    problems: list[str] = []

    # text a reader reads: prose and outputs (visible input code excluded: it is code, not text)
    reading = BeautifulSoup(str(main), "html.parser")
    for code in reading.select("div.cell_input, .highlight-python, .highlight-ipython3"):
        code.decompose()
    text = reading.get_text(" ")
    for pat in HOLLOW:
        for m in pat.finditer(text):
            problems.append(f"hollow-measurement phrase: {text[max(0, m.start() - 40):m.end() + 40]!r}")
    words = set(re.findall(r"[A-Za-z][\w-]*\d{4}[\w-]*|seed\d{3}", text))
    if re.search(r"\bSeed \d{3}\b", text):
        problems.append("bibliography key in text: a \"Seed NNN\" label")
    for key in sorted(words & keys):
        problems.append(f"bibliography key in text: {key!r}")

    # citations: label -> the entries it points to (collected over all pages)
    for a in main.select('a[href*="references.html#"]'):
        label = a.get_text(" ").strip()
        if label and re.search(r"\d{4}", label):
            labels[label].add(a["href"].split("#", 1)[1])

    # figures
    for img in main.find_all("img"):
        if img.find_parent(class_=re.compile("navbar|sidebar|header|launch|dropdown-menu")):
            continue
        src = img.get("src", "")
        if "_static" in src:
            continue
        alt = (img.get("alt") or "").strip()
        stem = Path(src).stem
        if not alt or HASHED_ALT.match(alt) or alt == stem or len(alt) < 12:
            problems.append(f"image without descriptive alt text: {src} (alt={alt!r})")
        fig = img.find_parent("figure")
        if fig is None or fig.find("figcaption") is None:
            problems.append(f"image without a caption: {src}")
        elif not fig.find("figcaption").find(class_="caption-number"):
            problems.append(f"image caption is not numbered: {src}")

    # visible input code (cells whose input is hidden behind a toggle scroll inside it: not counted)
    for cell in main.select("div.cell"):
        classes = set(cell.get("class") or [])
        if classes & {"tag_hide-input", "tag_hide-cell"}:
            continue
        for pre in cell.select("div.cell_input pre"):
            for line in pre.get_text().splitlines():
                if len(line) > MAX_LINE:
                    problems.append(f"code line of {len(line)} characters (scrolls off the page): {line[:70]!r}...")

    # outputs
    for out in main.select("div.cell_output"):
        for pre in out.find_all("pre"):
            body = pre.get_text()
            for line in body.splitlines():
                if len(line) > MAX_LINE:
                    problems.append(f"output line of {len(line)} characters: {line[:70]!r}...")
            for pat in REPR:
                m = pat.search(body)
                if m:
                    problems.append(f"raw repr in an output: {body[max(0, m.start() - 20):m.end() + 40]!r}")
                    break
    for el in main.find_all(string=True):
        s = str(el)
        if any(p.search(s) for p in MACHINE) and not _inside(el, "details"):
            if el.find_parent(class_=re.compile(r"cell_input|highlight-python|highlight-ipython3")):
                continue
            problems.append(f"build-machine report outside a collapsed element: {s.strip()[:80]!r}")
    return problems


EXTERNAL_ASSET = re.compile(r'<(?:script|img|iframe|source)\b[^>]*\bsrc="(?:https?:)?//[^"]*"'
                            r'|<link\b[^>]*\brel="(?:stylesheet|preload|modulepreload|icon)"[^>]*\bhref="(?:https?:)?//'
                            r'[^"]*"|url\(["\']?(?:https?:)?//', re.I)
INLINE_SCRIPT = re.compile(r"<script>(.+?)</script>", re.S)
CALC = re.compile(r'<div\s+class="ampere-calc"\s+data-calc="([^"]*)"')


def check_self_contained(site: Path) -> list[str]:
    """Problems of the site as a whole (see the module docstring), each as ``page: problem``."""
    sys.path.insert(0, str(ROOT / "tools" / "site"))
    import vendor

    from ampere import live

    problems: list[str] = []
    index = site / "index.html"
    text = index.read_text(encoding="utf-8") if index.exists() else ""
    if "<main" not in text or re.search(r'http-equiv="Refresh"', text, re.I):
        problems.append("index.html: not a page with content (a redirect?)")
    pages = [index, *sorted(site.glob("*.html")), *sorted((site / "book").glob("*.html"))]
    for page in dict.fromkeys(p for p in pages if p.exists()):
        html = page.read_text(encoding="utf-8")
        name = page.relative_to(site).as_posix()
        for m in EXTERNAL_ASSET.finditer(html):
            problems.append(f"{name}: loads an asset from another host: {m.group(0)[:100]!r}")
        bodies = [b.strip() for b in INLINE_SCRIPT.findall(html)]
        for body in sorted({b for b in bodies if bodies.count(b) > 1}):
            problems.append(f"{name}: the same inline script twice: {body[:80]!r}")
        placed = CALC.findall(html)
        for calc in placed:
            if calc not in live.names():
                problems.append(f"{name}: unknown calculator {calc!r}; known: {', '.join(live.names())}")
        if placed and "window.AMPERE_LIVE" not in html:
            problems.append(f"{name}: places calculators but carries no forms (window.AMPERE_LIVE)")
    try:
        vendor.check(site / "_vendor")
    except (vendor.VendorError, OSError, KeyError, ValueError) as exc:
        problems.append(f"_vendor: {exc}")
    return problems


def main(argv: list[str]) -> int:
    site = Path(argv[0]) if argv else ROOT / "_build" / "html"
    pages = sorted(p for p in (site / "book").glob("*.html"))
    if not pages:
        print(f"no pages under {site / 'book'}: build the site first", file=sys.stderr)
        return 1
    keys = _bib_keys()
    labels: dict[str, set[str]] = defaultdict(set)
    failed = 0
    for page in pages:
        problems = check_page(page, keys, labels)
        for p in problems:
            print(f"{page.name}: {p}")
        failed += bool(problems)
    for label, targets in sorted(labels.items()):
        if len(targets) > 1:
            print(f"citation label {label!r} names {len(targets)} works")
            failed += 1
    for problem in check_self_contained(site):
        print(problem)
        failed += 1
    print(f"site check: {len(pages)} pages, {'all passed' if not failed else f'{failed} with problems'}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
