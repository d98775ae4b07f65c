"""Tests of ampere/hbm/validation.py (the models against held-out published figures). Chapter: HBM and the
memory hierarchy."""

from __future__ import annotations

import sys

from ampere import hbm


def test_validate_models_passes():
    text, ok = hbm.validate_models()
    assert ok, text
    assert "ZeRO stage 3" in text and "L2 knee H200-SXM-141GB" in text and "L2 knee A100-SXM4-80GB" in text


def test_model_path_does_not_import_torch():
    import subprocess

    code = "import sys, ampere.hbm as h; h.decode_bound('70B', weights='int4'); h.validate_models(); " \
           "print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
