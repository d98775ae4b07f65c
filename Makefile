# Ampere by Experiment: build the book, run the tests. Two commands on a fresh machine:
#   make book   -> .venv with everything installed, site in _build/html
#   make test   -> unit tests, nbval on every chapter, the wheel, the PDF and the release dry run, then a
#                  warnings-as-errors site build
#   make pdf    -> the whole book as one PDF, _build/pdf/ampere-by-experiment.pdf (TeX from apt-get)
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# Without an NVIDIA GPU, install this torch first (on our CI machines it is a CPU build already on disk).
# With a GPU, requirements.txt's loose "torch>=2.1" keeps whatever CUDA build is there or installs one.
TORCH_CPU_SPEC ?= torch==2.13.0
# Extra pip arguments for that install, e.g. --index-url https://download.pytorch.org/whl/cpu elsewhere.
TORCH_PIP_ARGS ?=
# Deterministic stored outputs and nbval: one thread, fixed hash seed, never MPLBACKEND=Agg.
export OMP_NUM_THREADS := 1
export MKL_NUM_THREADS := 1
export PYTHONHASHSEED := 0
PYTEST_JOBS ?= 2

.PHONY: book test unit notebooks check-notebooks figures validate clean env wheel-check gpu-check check-site \
        site-assets browser-deps test-site pdf release-check

env: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then \
	  echo "NVIDIA GPU found: torch comes from requirements.txt"; \
	else \
	  $(PY) -m pip install -q "$(TORCH_CPU_SPEC)" $(TORCH_PIP_ARGS); \
	fi
	$(PY) -m pip install -q -r requirements.txt
	$(PY) -c "import matplotlib.pyplot"   # build the font cache now, not inside a checked cell
	touch $(STAMP)

book: $(STAMP) site-assets
	$(VENV)/bin/jupyter-book build -W -n --keep-going .
	@echo "site: _build/html/index.html (serve it: python -m http.server -d _build/html)"

# What the site serves itself (tools/site/vendor.py): MathJax and the Pyodide core from npm at the versions
# pinned and locked in tools/site/package*.json, and the package's wheel; the build copies them into the site.
site-assets: $(STAMP)
	command -v npm >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq --no-install-recommends npm; }
	$(PY) tools/site/vendor.py

# The browser the site's tests drive: Debian's Chromium, installed when missing (Playwright comes from
# requirements.txt and downloads no browser). Elsewhere point CHROMIUM at an installed Chrome or Chromium.
CHROMIUM ?= /usr/bin/chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
browser-deps:
	test -x $(CHROMIUM) || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq --no-install-recommends chromium; }

# The built site in Chromium: every page offline (no console error, no request to another host, math
# typeset) and every live calculator against CPython. Times: _build/browser-timings.json.
test-site: $(STAMP) browser-deps
	AMPERE_SITE_DIR=_build/html AMPERE_CHROMIUM=$(CHROMIUM) $(PY) -m pytest -q -p no:xdist tests/site/test_browser.py

test: $(STAMP)
	$(PY) tools/check_notebooks.py
	$(PY) -m pytest -q -n $(PYTEST_JOBS) --dist loadfile --durations=15 -m "not serial" tests book
	$(PY) -m pytest -q -p no:xdist -m serial tests
	tools/wheel_check.sh $(VENV)
	$(MAKE) --no-print-directory pdf
	$(PY) tools/release.py --dry-run
	$(MAKE) site-assets
	$(VENV)/bin/jupyter-book build -W -n --keep-going -q .
	$(PY) tools/check_site.py _build/html
	$(PY) tools/check_exercises.py --html _build/html --text-refs
	$(MAKE) test-site

# The whole book as one PDF for courses: TeX Live from apt-get where it is missing (about 400 MB, once),
# jupyter-book's LaTeX, xelatex; fails on an overfull box of 100 pt or more, undefined references, fewer
# than 200 pages or exercises not numbered per chapter. The site built after it links and serves it.
pdf: $(STAMP)
	tools/pdf/ensure_tex.sh
	$(PY) tools/build_pdf.py

# What the release workflow does on a tag, without publishing (README, "Cutting a release").
release-check: pdf
	$(PY) tools/release.py --dry-run

# Read the built site as a reader would (hollow sections, bib keys, captions, clipped outputs, reprs).
check-site:
	$(PY) tools/check_site.py _build/html

# On a borrowed GPU machine (no network: its Python already has torch and triton): every bench in quick mode,
# the report with --record, and as many GPU chapters under nbval as 420 s allow, all into one folder ($OUT or
# gpu-check-out/); commit the recorded results into ampere/data/ afterwards. Installs nothing; without a GPU it
# prints the plan (python tools/gpu_check.py --plan) and says why it stops.
gpu-check:
	PYTHONPATH=$(CURDIR) $(if $(wildcard $(PY)),$(PY),python3) tools/gpu_check.py --budget-s 420 --out "$${OUT:-gpu-check-out}/gpu-check"

# The Colab path: the built wheel in a fresh venv, run from outside the checkout (part of `make test`).
wheel-check: $(STAMP)
	tools/wheel_check.sh $(VENV)

unit: $(STAMP)
	$(PY) -m pytest -q -n $(PYTEST_JOBS) tests

# Re-execute every chapter on the CPU and store its outputs (run after editing a notebook or a module).
notebooks: $(STAMP)
	$(PY) tools/execute_notebooks.py book/*.ipynb

check-notebooks: $(STAMP)
	$(PY) tools/check_notebooks.py

figures: $(STAMP)
	$(PY) figures/make_figures.py

validate: $(STAMP)
	$(PY) -m ampere validate

clean:
	rm -rf _build
