"""Tests of the ampere.cluster package as a whole.

Chapter: DGX A100 and the SuperPOD -- from one box to Selene.
"""

from __future__ import annotations


def test_import_does_not_pull_torch():
    import subprocess
    import sys
    code = "import sys, ampere.cluster; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
