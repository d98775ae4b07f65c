"""Tests of the ampere.interconnect package as a whole.

Chapter: NVLink, NVSwitch and collectives.
"""

from __future__ import annotations

import math

from ampere import interconnect as ic


def test_import_does_not_load_torch():
    import subprocess
    import sys
    code = "import sys, ampere.interconnect; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    assert math.isfinite(ic.A100_INTRA_LATENCY_S)
