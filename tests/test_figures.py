"""figures/make_figures.py: regenerating the static figures is one command, and the committed ones are current."""

import subprocess
import sys
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
EXPECTED = ("ga100-die.png", "roofline-a100.png", "capabilities.md")


def test_regeneration_produces_every_figure_and_matches_the_committed_table(tmp_path):
    out = subprocess.run([sys.executable, str(ROOT / "figures" / "make_figures.py"), "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    for name in EXPECTED:
        assert (tmp_path / name).exists(), name
        assert (ROOT / "figures" / name).exists(), f"figures/{name} is not committed (run make figures)"
    # the generated table is text: it must equal the committed copy exactly (stale otherwise)
    assert (tmp_path / "capabilities.md").read_text() == (ROOT / "figures" / "capabilities.md").read_text()
    # images: same pixel size as the committed ones (byte equality would depend on font versions)
    for name in EXPECTED[:2]:
        assert Image.open(tmp_path / name).size == Image.open(ROOT / "figures" / name).size, name
