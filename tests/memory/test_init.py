"""The memory package as a whole (ampere/memory/__init__.py): no torch."""



def test_no_torch_import():
    import subprocess
    import sys

    code = "import sys, ampere.memory; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
