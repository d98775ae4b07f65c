"""The built site in a real browser (Debian's Chromium driven by Playwright), served from 127.0.0.1 with
every other host refused: what a reader offline, behind a firewall or in an air-gapped lab gets.

* every page: no console error, no script error, no request to another host, every formula typeset by
  MathJax (no raw TeX, no MathJax error), and a landing page with content;
* every live calculator, opened cold (a fresh browser profile, nothing cached): its first answer, then
  each input changed as a reader would, then an input the model refuses; the page's answer must be what
  ``ampere.live`` gives in CPython for the same inputs, byte for byte.

Times (written to ``_build/browser-timings.json``), with the acceptance bounds of a 2-core machine:
first answer <= ``AMPERE_FIRST_ANSWER_S`` (default 20 s) from the start of navigation, re-run <=
``AMPERE_RERUN_S`` (default 1 s). CI shares its two cores with whatever else runs, so each time is
also measured as CPU time read from /proc, which does not grow with the machine's load: for the first
answer, every thread of the browser (an upper bound of the wall time on an idle machine, even with
everything on one core); for a re-run, the page's Python thread (Chromium's DedicatedWorker thread:
the run is single-threaded, so that is its wall time on an idle core). A time passes when either its
wall-clock or its CPU measure is within the bound; re-runs must also finish within 10 s of wall time.
A calculator may have a larger re-run bound, with its reason (``RERUN_OVER_S``; none now).

Runs when ``AMPERE_SITE_DIR`` names the built site (``make test`` does it; see conftest.py).
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import threading
import time
from pathlib import Path

import pytest

from ampere import live

SITE = Path(os.environ.get("AMPERE_SITE_DIR", "_build/html")).resolve()
CHROMIUM = os.environ.get("AMPERE_CHROMIUM", "/usr/bin/chromium")
FIRST_ANSWER_S = float(os.environ.get("AMPERE_FIRST_ANSWER_S", "20"))
RERUN_S = float(os.environ.get("AMPERE_RERUN_S", "1"))
TIMINGS = SITE.parent / "browser-timings.json"
#: as root Chromium needs --no-sandbox; the others stop its own background connections (which would be
#: requests to other hosts)
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
        "--disable-default-apps", "--disable-extensions"]
TRY_PAGE = "book/try-the-models.html"
RERUN_WALL_S = 10.0
#: re-run bounds above AMPERE_RERUN_S, each with its reason. None now: the layout search (megatron-layouts)
#: had 2 s while 60 % of it went to the argument checks of ampere.gemm.wave_efficiency; with the hot path
#: cached its re-runs take 0.06-0.27 s of CPU in CPython (0.43 s when the 2 s bound was set) and 0.13-0.48 s
#: of the worker's CPU in the browser with a load average of 5-6 on two cores (0.45-1.04 s before).
RERUN_OVER_S: dict[str, float] = {}


def _pages() -> list[str]:
    found = [SITE / "index.html", *SITE.glob("*.html"), *(SITE / "book").glob("*.html")]
    return sorted({p.relative_to(SITE).as_posix() for p in found if p.is_file()})


PAGES = _pages()


class _Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".wasm": "application/wasm",
                      ".mjs": "text/javascript", ".js": "text/javascript"}

    def log_message(self, *args):  # quiet
        pass


@pytest.fixture(scope="module")
def base():
    assert (SITE / "index.html").exists(), f"no built site at {SITE}: build it first (make book)"
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(SITE)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: make installs Debian's chromium"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


class Session:
    """A fresh browser profile (nothing cached) that records what a page asks for and what it logs."""

    def __init__(self, browser, base: str) -> None:
        self.base = base
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.outside: list[str] = []
        self.errors: list[str] = []
        self.context.on("request", self._request)
        self.context.on("response", lambda r: r.status >= 400 and self.errors.append(f"HTTP {r.status} {r.url}"))
        self.context.on("requestfailed", lambda r: self.errors.append(f"failed {r.url}: {r.failure}"))
        # refuse other hosts outright: nothing may wait on the network
        self.context.route(lambda url: not url.startswith(base), lambda route: route.abort())
        self.page = self.context.new_page()
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(f"console: {m.text}"))
        self.page.on("pageerror", lambda e: self.errors.append(f"script error: {e}"))

    def _request(self, request) -> None:
        url = request.url
        if not url.startswith((self.base, "data:", "blob:")):
            self.outside.append(url)

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def session(browser, base):
    s = Session(browser, base)
    yield s
    s.close()


MATH = """async () => {
  const nodes = Array.from(document.querySelectorAll("span.math, div.math"));
  if (!nodes.length) { return {count: 0, raw: 0, errors: 0}; }
  await window.MathJax.startup.promise;
  return {count: nodes.length,
          raw: nodes.filter((n) => !n.querySelector("mjx-container")).map((n) => n.textContent.slice(0, 60)),
          errors: document.querySelectorAll("mjx-merror").length};
}"""


@pytest.mark.parametrize("path", PAGES)
def test_page_loads_offline_without_errors_and_renders_math(session, path):
    page = session.page
    page.goto(session.base + path, wait_until="load")
    if page.locator("span.math, div.math").count():
        try:
            page.wait_for_function("window.MathJax && window.MathJax.startup && window.MathJax.startup.promise",
                                   timeout=30_000)
        except Exception:  # noqa: BLE001  (Playwright's TimeoutError: say why, with what the page logged)
            pytest.fail(f"MathJax never started on {path}: {session.errors} {session.outside}")
    math = page.evaluate(MATH)
    page.wait_for_load_state("networkidle", timeout=60_000)
    page.wait_for_timeout(300)  # late script errors
    assert session.errors == [], session.errors
    assert session.outside == [], f"requests to other hosts: {session.outside}"
    assert not math["raw"], f"{len(math['raw'])} of {math['count']} formulas not typeset: {math['raw'][:3]}"
    assert math["errors"] == 0, "MathJax reported TeX errors"
    assert page.locator("main h1").count() >= 1, "a page without a title (a redirect?)"


def test_landing_page_has_content_and_links_every_chapter(session):
    page = session.page
    page.goto(session.base, wait_until="load")
    assert page.url.rstrip("/") == session.base.rstrip("/"), f"the landing page redirected to {page.url}"
    text = page.locator("main").inner_text()
    assert "Ampere by Experiment" in page.title()
    links = set(page.eval_on_selector_all("main a[href]", "els => els.map(e => e.getAttribute('href'))"))
    for chapter in sorted((SITE / "book").glob("*.html")):
        if chapter.stem not in ("intro", "glossary", "references"):
            assert any(h.split("#")[0] == f"book/{chapter.name}" for h in links), f"no link to {chapter.name}"
    assert "Try the models" in text
    assert page.locator("main img").first.evaluate("img => img.complete && img.naturalWidth > 0")


# ---------------------------------------------------------------------------------------------------------
# The live calculators
# ---------------------------------------------------------------------------------------------------------

#: what a reader changes, in order: ("select", field, choice) or ("fill", field, text)
CHANGES = {
    "hbm-fits": [("select", "model", "llama2-13b"), ("select", "task", "QLoRA"), ("fill", "seq_len", "4096"),
                 ("select", "gpu", "A100-SXM4-40GB")],
    "megatron-layouts": [("select", "model", "39B"), ("fill", "gpus", "512"), ("fill", "tokens_b", "450"),
                         ("check", "calibrated", True)],
    "mig-planner": [("fill", "instances", "4g.40gb, 3g.40gb"), ("fill", "instances", "1g.10gb, 1g.10gb, 2g.20gb"),
                    ("select", "gpu", "H100-SXM5-80GB")],
    "superpod-sizer": [("fill", "nodes", "560"), ("select", "gpu", "A100-SXM4-40GB"), ("fill", "nodes", "20")],
    "today-plan": [("select", "model", "13B"), ("select", "weights", "int8"), ("fill", "batch", "8"),
                   ("select", "task", "qlora")],
}
#: an input the model refuses (the page shows the model's message)
INVALID = {
    "hbm-fits": ("fill", "seq_len", "-5"),
    "megatron-layouts": ("fill", "gpus", "1.5"),
    "mig-planner": ("fill", "instances", "7g.40gb, 1g.5gb"),
    "superpod-sizer": ("fill", "nodes", "0"),
    "today-plan": ("fill", "max_cards", "0"),
}


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                ppid = int((p / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(p.name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += children.get(pid, [])
    return out


def cpu_s(worker_only: bool) -> float | None:
    """CPU seconds used so far by the browsers this test process started: their Web Worker threads (where
    Python runs) or all their threads. None where /proc is missing."""
    if not Path("/proc/self/task").exists():
        return None
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in _descendants(os.getpid()):
        try:
            if (Path(f"/proc/{pid}/comm")).read_text().strip() not in ("chromium", "chrome"):
                continue
        except OSError:
            continue
        for task in Path(f"/proc/{pid}/task").glob("*"):
            try:
                if worker_only and (task / "comm").read_text().strip() != "DedicatedWorker":
                    continue
                fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            total += (int(fields[11]) + int(fields[12])) / tick  # utime + stime
    return total


def _delta(before: float | None, after: float | None) -> float | None:
    return None if before is None or after is None else round(after - before, 2)


def _section_of(name: str) -> str:
    html = (SITE / TRY_PAGE).read_text(encoding="utf-8")
    at = html.index(f'data-calc="{name}"')
    return re.findall(r'<section id="([^"]+)"', html[:at])[-1]


def _act(page, name: str, action: tuple) -> None:
    kind, field, value = action
    target = page.locator(f"#ampere-{name}-{field}")
    if kind == "select":
        target.select_option(label=value)
    elif kind == "check":
        target.set_checked(value)
    else:
        target.fill(value)
        target.dispatch_event("change")


def _wait_answer(page, el, runs: int, timeout_s: float) -> dict:
    page.wait_for_function(
        "([el, runs]) => el.dataset.state === 'failed' "
        "|| (Number(el.dataset.runs) > runs && ['ready', 'invalid'].includes(el.dataset.state))",
        arg=[el.element_handle(), runs], timeout=timeout_s * 1000)
    return el.evaluate("el => ({state: el.dataset.state, runs: Number(el.dataset.runs), "
                       "firstMs: Number(el.dataset.firstMs), runMs: Number(el.dataset.runMs), "
                       "pythonMs: Number(el.dataset.pythonMs), values: el.ampereValues, html: el.ampereHtml || null, "
                       "status: el.querySelector('.ampere-calc-status').textContent, "
                       "error: (el.querySelector('.ampere-calc-error') || {}).textContent || null})")


#: the page shows the answer's HTML itself (compared as the browser parses both)
SAME_DOM = ("(el, html) => { const d = document.createElement('div'); d.innerHTML = html; "
            "return d.innerHTML === el.querySelector('.ampere-calc-output').innerHTML; }")


def _record(name: str, timing: dict) -> None:
    data = json.loads(TIMINGS.read_text()) if TIMINGS.exists() else {}
    data[name] = timing
    TIMINGS.write_text(json.dumps(data, indent=1, sort_keys=True))


@pytest.mark.parametrize("name", live.names())
def test_calculator_answers_as_cpython_does(session, name):
    page = session.page
    t0, cpu0 = time.monotonic(), cpu_s(worker_only=False)
    page.goto(f"{session.base}{TRY_PAGE}#{_section_of(name)}", wait_until="load")
    el = page.locator(f'div.ampere-calc[data-calc="{name}"]')
    got = _wait_answer(page, el, 0, 120)
    assert got["state"] == "ready", got
    assert got["status"].startswith("Python started in your browser and " + live.get(name).call)
    first_s = got["firstMs"] / 1000
    timing = {"first_answer_s": round(first_s, 2), "first_answer_wall_s": round(time.monotonic() - t0, 2),
              "first_answer_browser_cpu_s": _delta(cpu0, cpu_s(worker_only=False)),
              "first_answer_worker_cpu_s": cpu_s(worker_only=True), "reruns_wall_s": [],
              "reruns_python_s": [], "reruns_worker_cpu_s": []}
    # a calculator below this one may have started too: let the worker finish before timing re-runs
    page.wait_for_function("() => Array.from(document.querySelectorAll('div.ampere-calc'))"
                           ".every((e) => !['loading', 'running'].includes(e.dataset.state))", timeout=120_000)
    assert got["html"] == live.run(name, got["values"]).html()
    assert got["values"] == live.get(name).values(), "the form did not start from the registry's defaults"
    assert el.evaluate(SAME_DOM, got["html"])

    for action in CHANGES[name]:
        runs = got["runs"]
        before = cpu_s(worker_only=True)
        _act(page, name, action)
        got = _wait_answer(page, el, runs, 60)
        after = cpu_s(worker_only=True)
        kind, field, value = action
        assert str(got["values"][field]) == str(value), (field, got["values"])
        assert got["state"] == "ready", (action, got["error"])
        assert got["html"] == live.run(name, got["values"]).html(), action
        assert el.evaluate(SAME_DOM, got["html"]), action
        timing["reruns_wall_s"].append(round(got["runMs"] / 1000, 3))
        timing["reruns_worker_cpu_s"].append(_delta(before, after))
        timing["reruns_python_s"].append(got["pythonMs"] / 1000)

    runs = got["runs"]
    _act(page, name, INVALID[name])
    got = _wait_answer(page, el, runs, 60)
    assert got["state"] == "invalid"
    assert got["error"] == json.loads(live.run_json(name, json.dumps(got["values"])))["error"]

    _record(name, timing)
    assert session.errors == [], session.errors
    assert session.outside == [], session.outside
    first_cpu = timing["first_answer_browser_cpu_s"]
    assert min(first_s, first_s if first_cpu is None else first_cpu) <= FIRST_ANSWER_S, \
        f"{name}: first answer after {first_s:.1f} s, {first_cpu} s of browser CPU (bound {FIRST_ANSWER_S} s)"
    bound = max(RERUN_S, RERUN_OVER_S.get(name, RERUN_S))
    for wall, cpu in zip(timing["reruns_wall_s"], timing["reruns_worker_cpu_s"]):
        assert min(wall, wall if cpu is None else cpu) <= bound, f"{name}: re-run over {bound} s: {timing}"
        assert wall <= RERUN_WALL_S, f"{name}: a re-run hung: {timing}"
