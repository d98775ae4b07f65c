"""ampere.today as a whole: importing it (and running the calculator) never imports torch."""

import subprocess
import sys


def test_import_stays_torch_free():
    code = ("import sys, ampere.today as t; t.plan(t.Workload('7B', 'inference'), 'A100-SXM4-80GB'); "
            "t.claims_rows(); t.decode_points(); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "False", out.stderr
