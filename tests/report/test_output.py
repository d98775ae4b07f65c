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


def test_the_report_files_are_written_as_one_set(tmp_path, monkeypatch):
    """A reader finds the old set or the new one, never a mix: an interruption between two writes leaves
    the old set whole (and no staging folder); a finished write replaces all three files."""
    import builtins

    folder = tmp_path / "report"
    old = {"report.json": "{\"old\": 1}", "report.html": "<p>old</p>", "report.txt": "old"}
    output.write_report_set(folder, old)
    real_open = builtins.open
    written = []

    def interrupted(path, *a, **kw):
        if str(path).endswith("report.html") and "new-" in str(path):
            raise KeyboardInterrupt  # the writer is stopped after report.json, before report.html
        written.append(str(path))
        return real_open(path, *a, **kw)

    monkeypatch.setattr(builtins, "open", interrupted)
    with pytest.raises(KeyboardInterrupt):
        output.write_report_set(folder, {"report.json": "{\"new\": 1}", "report.html": "<p>new</p>",
                                         "report.txt": "new"})
    monkeypatch.setattr(builtins, "open", real_open)
    assert any(w.endswith("report.json") for w in written)
    assert {p.name: p.read_text() for p in folder.iterdir()} == old
    assert os.listdir(tmp_path) == ["report"]  # the staging folder is gone
    # without an atomic exchange (another OS): two renames, still never a mix
    monkeypatch.setattr(output, "_exchange", lambda a, b: False)
    output.write_report_set(folder, {"report.json": "{}", "report.txt": "new"})
    assert sorted(os.listdir(folder)) == ["report.json", "report.txt"] and os.listdir(tmp_path) == ["report"]
    with pytest.raises(ValueError, match="not report files"):
        output.write_report_set(folder, {"notes.md": "x"})


def test_a_folder_with_other_files_is_refused_before_anything_runs(tmp_path):
    (tmp_path / "thesis.tex").write_text("mine")
    with pytest.raises(ValueError, match="thesis.tex"):
        output.check_output_folder(tmp_path)
    assert output.check_output_folder(tmp_path / "new") == tmp_path / "new"
