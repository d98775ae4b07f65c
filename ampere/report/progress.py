"""The report's progress bar: one line of plain text on stderr, no dependency.

Chapter: *The reference check* (book/reference-check.ipynb) runs the report; :func:`ampere.report.run`
draws this bar while its probes measure.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

class Progress:
    """A one-line text progress bar: ``[#####-----] 3/8  42 s  matmul bf16 8192^3``.

    On a terminal the line is redrawn in place; otherwise (logs, notebooks, tests) one line per step.
    """

    def __init__(self, total: int, stream: TextIO | None = None, width: int = 24) -> None:
        self.total = max(int(total), 1)
        self.done = 0
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.t0 = time.monotonic()
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def line(self, text: str) -> str:
        filled = round(self.width * min(self.done, self.total) / self.total)
        bar = "#" * filled + "-" * (self.width - filled)
        return f"[{bar}] {min(self.done, self.total)}/{self.total} {time.monotonic() - self.t0:5.0f} s  {text}"

    def update(self, text: str, advance: int = 0) -> None:
        self.done += advance
        out = self.line(text)
        if self._tty:
            self.stream.write("\r" + out[:120].ljust(120))
        else:
            self.stream.write(out + "\n")
        self.stream.flush()

    def close(self, text: str = "done") -> None:
        self.done = self.total
        self.update(text)
        if self._tty:
            self.stream.write("\n")
            self.stream.flush()
