"""Sphinx extension of the book's site (``_config.yml``, ``local_extensions``): a site that serves every
asset itself, live calculators in the page, a landing page with content.

* **Assets** (``tools/site/vendor.py``, run before the build): MathJax, the Pyodide core and the package's
  wheel land in ``_vendor/`` of the site (``html_extra_path``, outside ``_static`` so that Jupyter Book
  does not inject them into every page); the MathJax script tag points there instead of a CDN.
* **Calculators**: a page whose body holds ``<div class="ampere-calc" data-calc="NAME"></div>`` gets the
  page script (``tools/site/static/ampere-live.js``), its worker and style, and the forms of the
  calculators it names (``ampere.live.describe``, written into the page as JSON). An unknown name stops
  the build. The browser runs the package's own code in Pyodide.
* **Script errors**: identical inline scripts that extensions register twice (sphinx-thebe's
  ``const THEBE_JS_URL``, a ``SyntaxError`` the second time) are written once.
* **Landing page**: ``index.html`` is the root page (``book/intro``) rebased to the site's root, not
  a redirect (sphinx-external-toc writes a redirect only where no ``index.html`` exists).
"""

from __future__ import annotations

import json
import posixpath
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import vendor  # noqa: E402  (tools/site/vendor.py, beside this file)

#: where the site serves the vendored files (the staged folder's ``_vendor``)
VENDOR_URL = "_vendor"
MATHJAX_FILE = "mathjax/tex-mml-chtml.js"
CALC_RE = re.compile(r'<div\s+class="ampere-calc"\s+data-calc="([^"]*)"')


def _stage(app: Any, config: Any) -> None:
    try:
        manifest = vendor.stage()
    except vendor.VendorError as exc:
        from sphinx.errors import ExtensionError

        raise ExtensionError(f"site assets: {exc}") from exc
    app.ampere_manifest = manifest
    config.html_extra_path = [*config.html_extra_path, str(vendor.EXTRA)]
    config.html_static_path = [*config.html_static_path, str(HERE / "static")]
    # a relative mathjax_path is taken under _static/; the page hook below points it at _vendor/
    config.mathjax_path = f"{VENDOR_URL}/{MATHJAX_FILE}"


def _javascript(filename: str | None, priority: int, attributes: dict[str, Any]) -> Any:
    from sphinx.builders.html._assets import _JavaScript

    return _JavaScript(filename, priority=priority, **attributes)


def _page(app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    scripts = context.get("script_files")
    if not isinstance(scripts, list):
        return
    mathjax = f"_static/{VENDOR_URL}/{MATHJAX_FILE}"
    seen: set[str] = set()
    kept = []
    for js in scripts:
        filename = getattr(js, "filename", None)
        attributes = dict(getattr(js, "attributes", {}))
        body = attributes.get("body")
        if not filename and body:
            if body in seen:
                continue  # the same inline script registered twice
            seen.add(body)
        if filename == mathjax:
            js = _javascript(f"{VENDOR_URL}/{MATHJAX_FILE}", getattr(js, "priority", 500), attributes)
        kept.append(js)
    scripts[:] = kept

    names = list(dict.fromkeys(CALC_RE.findall(context.get("body", ""))))
    if names:
        _add_calculators(app, pagename, context, names)


def _add_calculators(app: Any, pagename: str, context: dict[str, Any], names: list[str]) -> None:
    from sphinx.errors import ExtensionError

    from ampere import live

    unknown = [n for n in names if n not in live.names()]
    if unknown:
        raise ExtensionError(f"{pagename}: unknown calculator(s) {unknown}; known: {', '.join(live.names())}")
    pathto = context["pathto"]
    manifest = app.ampere_manifest
    config = {
        "pyodide": pathto(f"{VENDOR_URL}/pyodide/", 1),
        "wheel": pathto(f"{VENDOR_URL}/wheels/{manifest['wheel']}", 1),
        "worker": pathto("_static/ampere-live-worker.js", 1),
        "calculators": {c["name"]: c for c in live.describe(names)},
    }
    for calc in config["calculators"].values():  # where the model is explained, from this page
        docname = f"book/{calc['chapter']}"
        calc["chapter_url"] = "" if docname == pagename else pathto(docname) + _anchor(app, docname, calc["section"])
    body = "window.AMPERE_LIVE = " + json.dumps(config, sort_keys=True).replace("</", "<\\/") + ";"
    app.builder.add_js_file(None, body=body, priority=900)
    app.builder.add_js_file("ampere-live.js", priority=901, defer="defer")
    app.builder.add_css_file("ampere-live.css", priority=900)


def _anchor(app: Any, docname: str, title: str) -> str:
    """``#id`` of the section of ``docname`` titled ``title`` ("" when the page or the section is missing)."""
    from docutils import nodes

    try:
        tree = app.env.get_doctree(docname)
    except Exception:  # noqa: BLE001  (a page outside the build: link to nothing more precise)
        return ""
    for section in tree.findall(nodes.section):
        if section.children and section[0].astext().strip() == title and section["ids"]:
            return "#" + section["ids"][0]
    return ""


_URL_ATTR = re.compile(r'(\s(?:href|src|action|data-content_root)=")([^"]*)(")')


def rebase(url: str, folder: str) -> str:
    """``url``, written in a page of ``folder``, as seen from the site's root (anchors, absolute URLs and
    ``data:`` left alone): ``../_static/x.js`` in ``book`` -> ``_static/x.js``."""
    if not url or url.startswith(("#", "/", "data:", "mailto:", "javascript:")) or "://" in url:
        return url
    path, rest = re.match(r"([^?#]*)(.*)", url, re.S).groups()
    if not path:
        return url
    new = posixpath.normpath(posixpath.join(folder, path))
    if path.endswith("/"):
        new = "./" if new == "." else new + "/"
    return new + rest


def landing_page(page_html: str, pagename: str) -> str:
    """The HTML of the root page ``pagename`` (``book/intro``) as ``index.html``: every relative URL rebased."""
    folder = posixpath.dirname(pagename)
    out = _URL_ATTR.sub(lambda m: m.group(1) + rebase(m.group(2), folder) + m.group(3), page_html)
    return out.replace(f"DOCUMENTATION_OPTIONS.pagename = '{pagename}';", "DOCUMENTATION_OPTIONS.pagename = 'index';")


def _landing(app: Any, exception: Exception | None) -> None:
    if exception is not None or app.builder.name != "html" or app.config.root_doc == "index":
        return
    root = app.config.root_doc
    page = Path(app.outdir) / f"{root}.html"
    if page.exists():
        (Path(app.outdir) / "index.html").write_text(landing_page(page.read_text(encoding="utf-8"), root),
                                                     encoding="utf-8")


def _outdated(app: Any, env: Any, added: set[str], changed: set[str], removed: set[str]) -> list[str]:
    """Pages that place calculators are rewritten when the calculators or the wheel changed (an
    incremental build would otherwise keep old forms beside a new wheel)."""
    from ampere import live

    key = json.dumps([live.describe(), app.ampere_manifest["wheel"],
                      app.ampere_manifest["files"].get(f"wheels/{app.ampere_manifest['wheel']}")], sort_keys=True)
    if getattr(env, "ampere_live_key", None) == key:
        return []
    env.ampere_live_key = key
    marker = 'class="ampere-calc"'
    return [doc for doc in env.found_docs
            if marker in Path(env.doc2path(doc)).read_text(encoding="utf-8", errors="replace")]


def setup(app: Any) -> dict[str, Any]:
    app.connect("config-inited", _stage)
    app.connect("env-get-outdated", _outdated)
    app.connect("html-page-context", _page, priority=900)
    # before sphinx-external-toc (priority 500), which writes a redirect where no index.html exists
    app.connect("build-finished", _landing, priority=400)
    app.add_css_file("ampere-book.css", priority=800)  # every page: wide tables and equations scroll
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
