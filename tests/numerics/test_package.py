"""Tests of ampere.numerics as a whole: importing it loads no torch, public functions name the chapter, the
TF32 switch is the core one."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from ampere import numerics as N  # noqa: E402


def test_import_does_not_load_torch():
    code = "import sys, ampere.numerics; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_public_functions_name_the_chapter():
    checked = 0
    for name in N.__all__:
        obj = getattr(N, name)
        # defined in a file of the package (tf32_enabled and tf32_state are ampere.device's)
        if inspect.isfunction(obj) and obj.__module__.startswith(N.__name__ + "."):
            assert "TF32 and the precision formats" in " ".join((obj.__doc__ or "").split()), name
            checked += 1
    assert checked > 30  # the functions of the package's files, not an empty loop


def test_tf32_switch_is_the_core_one():
    from ampere import device

    assert N.tf32_enabled is device.tf32_enabled and N.tf32_state is device.tf32_state
    before = N.tf32_state()
    with N.tf32_enabled(True) as state:
        assert state["matmul"] in (True, "tf32")
    assert N.tf32_state() == before
