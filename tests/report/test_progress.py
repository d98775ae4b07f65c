"""ampere.report.progress: the plain-text progress bar."""

import io

from ampere.report import progress


def test_progress_bar_plain_text():
    s = io.StringIO()
    p = progress.Progress(4, stream=s, width=8)
    p.update("matmul", advance=2)
    p.close()
    lines = s.getvalue().splitlines()
    assert lines[0].startswith("[####----] 2/4") and lines[-1].startswith("[########] 4/4")
