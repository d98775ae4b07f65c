"""Conventions every chapter notebook follows; shared by execute_notebooks.py and check_notebooks.py.

See CONTRIBUTING.md, "Writing a chapter".
"""

from __future__ import annotations

import nbformat

#: The first code cell of every chapter, character for character. It installs the companion package on
#: Colab (and only there), then does nothing else.
BOOTSTRAP = '''# Colab only: install the companion package `ampere` (does nothing anywhere else).
import importlib.util, os, subprocess, sys
if "google.colab" in sys.modules and importlib.util.find_spec("ampere") is None:
    _spec = os.environ.get("AMPERE_PIP_SPEC",
                           "ampere-book @ git+https://github.com/ampere-by-experiment/ampere-book@main")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", _spec], check=True)'''

BOOTSTRAP_TAGS = ["hide-input", "nbval-ignore-output"]

#: Environment under which stored outputs are produced (the reference platform: CPU, one thread).
EXECUTION_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONHASHSEED": "0",
                 "AMPERE_DEVICE": "cpu"}

KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}


def normalize(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Kernelspec python3, no Colab/widget metadata, no execution timings, cell ids present."""
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    for key in ("colab", "accelerator", "widgets", "jupytext", "vscode"):
        nb.metadata.pop(key, None)
    lang = nb.metadata.get("language_info")
    if isinstance(lang, dict):  # keep the language, drop the exact interpreter version (noise in diffs)
        nb.metadata["language_info"] = {"name": lang.get("name", "python")}
    for cell in nb.cells:
        for key in ("execution", "colab", "outputId", "collapsed", "scrolled", "jupyter"):
            cell.metadata.pop(key, None)
        if cell.cell_type == "code":  # the kernel may split one print into several chunks: merge them
            merged = []
            for out in cell.outputs:
                if (merged and out.output_type == "stream" and merged[-1].output_type == "stream"
                        and merged[-1].name == out.name):
                    merged[-1].text += out.text
                else:
                    merged.append(out)
            cell.outputs = merged
        for out in cell.get("outputs", []):
            if "metadata" in out and isinstance(out.metadata, dict):
                out.metadata.pop("colab", None)
    _, nb = nbformat.validator.normalize(nb)
    return nbformat.from_dict(nb)
