"""Conventions every chapter notebook follows; shared by execute_notebooks.py and check_notebooks.py.

See CONTRIBUTING.md, "Writing a chapter".
"""

from __future__ import annotations

import nbformat

#: The release the notebooks of this version install on Colab: the package version (pyproject.toml), as
#: a git tag. tests/test_conventions.py and tools/release.py check that the notebooks' first cells, the
#: package and the changelog's latest entry agree; README, "Cutting a release", says how to bump it.
VERSION = "0.3.0"
RELEASE_TAG = f"v{VERSION}"

#: The first code cell of every chapter, character for character. On Colab it installs the companion
#: package at the release the notebook belongs to (``AMPERE_PIP_SPEC`` overrides it) and says what it
#: installed; elsewhere, when the package is missing, it prints the one ``pip install`` line to run. It
#: never does anything else. Change it with tools/set_bootstrap.py (only that cell of each notebook).
BOOTSTRAP = f'''# The companion package `ampere`: installed on Colab, or the line to install it elsewhere.
import importlib, importlib.metadata, importlib.util, os, subprocess, sys
_spec = os.environ.get("AMPERE_PIP_SPEC", "ampere-book @ "
                       "git+https://github.com/ampere-by-experiment/ampere-book@{RELEASE_TAG}")
if importlib.util.find_spec("ampere") is None:
    if "google.colab" in sys.modules:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", _spec], check=True)
        importlib.invalidate_caches()  # so that `import ampere` finds the new package in this kernel
        _from = "tag {RELEASE_TAG}" if _spec.endswith("@{RELEASE_TAG}") else _spec
        print(f"installed ampere-book {{importlib.metadata.version('ampere-book')}} from {{_from}}")
    else:
        print(f"This chapter needs the companion package. Install it with:\\n  pip install '{{_spec}}'")'''

BOOTSTRAP_TAGS = ["remove-input", "nbval-ignore-output"]

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
