"""The report's progress bar: one line of plain text on stderr, no dependency.

Chapter: *The reference check* (book/reference-check.ipynb) runs the report; :func:`ampere.report.run`
draws this bar while its probes measure.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from .. import check


class Progress:
    """A one-line text progress bar: ``[#####-----] 3/8  42 s  matmul bf16 8192^3``.

    On a terminal the line is redrawn in place; otherwise (logs, notebooks, tests) one line per step.
    ``total`` steps (1 to a million), ``stream`` anything with ``write`` (default: stderr), ``width`` the
    bar's characters (4 to 200).
    """

    def __init__(self, total: int, stream: TextIO | None = None, width: int = 24) -> None:
        self.total = check.positive_int("total", total, maximum=1_000_000)
        self.done = 0
        self.stream = stream if stream is not None else sys.stderr
        if not callable(getattr(self.stream, "write", None)):
            raise TypeError(f"stream must be a text stream with write() (sys.stderr, io.StringIO()), got "
                            f"{stream!r:.60} ({type(stream).__name__})")
        self.width = check.bounded_int("width", width, 4, 200, why="characters of one line")
        self.t0 = time.monotonic()
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def line(self, text: str) -> str:
        """The bar and ``text``, as :meth:`update` writes it."""
        text = check.string("text", text, allow_empty=True, max_len=10_000)
        filled = round(self.width * min(self.done, self.total) / self.total)
        bar = "#" * filled + "-" * (self.width - filled)
        return f"[{bar}] {min(self.done, self.total)}/{self.total} {time.monotonic() - self.t0:5.0f} s  {text}"

    def update(self, text: str, advance: int = 0) -> None:
        """Move ``advance`` steps (0 to ``total``) and write the line with ``text``."""
        advance = check.nonneg_int("advance", advance, maximum=self.total)
        check.string("text", text, allow_empty=True, max_len=10_000)
        self.done += advance
        out = self.line(text)
        if self._tty:
            self.stream.write("\r" + out[:120].ljust(120))
        else:
            self.stream.write(out + "\n")
        self._flush()

    def _flush(self) -> None:
        if callable(getattr(self.stream, "flush", None)):
            self.stream.flush()

    def close(self, text: str = "done") -> None:
        """Fill the bar and write the last line."""
        check.string("text", text, allow_empty=True, max_len=10_000)
        self.done = self.total
        self.update(text)
        if self._tty:
            self.stream.write("\n")
            self._flush()
