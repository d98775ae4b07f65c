"""ampere.report, the package: importing it stays torch-free."""


def test_import_stays_torch_free():
    import subprocess
    import sys

    code = "import sys, ampere.report as r; r.select_probes(); r.variation_rows(); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "False", out.stderr
