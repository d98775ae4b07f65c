"""ampere.report.output: atomic output, the HTML page escapes device strings."""

import json
import os

import pytest

from ampere import results
from ampere.report import output

from .helpers import _info


def test_write_text_atomic_never_leaves_half_a_file(tmp_path, monkeypatch):
    path = tmp_path / "report.html"
    output.write_text_atomic(path, "old")

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(results.os, "replace", boom)  # os.replace as ampere.results calls it
    with pytest.raises(OSError):
        output.write_text_atomic(path, "new")
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["report.html"]


def test_rendered_html_escapes_device_strings(tmp_path):
    info = _info(name="<script>alert(1)</script>")
    res = results.make_result("report", info, {"elapsed_s": 1.0}, [], ["note <b>"])
    page = output.render_html(res, [], [], [], images=False)
    assert "<script>" not in page and "&lt;script&gt;" in page and "note &lt;b&gt;" in page
    assert json.loads(json.dumps(res))  # the result stays JSON
